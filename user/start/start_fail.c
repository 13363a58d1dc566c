/* How start-up fails (user/start/start.h): before T runs, an error for the
 * caller with its message (sandpit_error); after, the process killed,
 * never left to run unsandboxed (invariant 5). */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandpit.h"
#include "user/start/start.h"
#include "user/untrusted/runtime.h"

char start_errbuf[512];

int start_fail(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(start_errbuf, sizeof(start_errbuf), fmt, ap);
	va_end(ap);
	return err;
}

/* After T runs, backing out is no longer possible: never continue
 * unsandboxed (invariant 5). */
void __attribute__((noreturn)) start_die(const char *what, long err)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "sandpit: %s failed (%s); killing the process\n",
			 what, strerror((int)-err));
	sandpit_raw_syscall6(SYS_write, 2, (long)msg, n, 0, 0, 0);
	sandpit_raw_syscall6(SYS_kill, getpid(), SIGKILL, 0, 0, 0, 0);
	for (;;)
		;
}

const char *sandpit_error(void) { return start_errbuf; }
