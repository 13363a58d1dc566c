/* What the core_*_test binaries share: a sandboxed run whose stderr is
 * kept, the counters a race shares with the test body, the mailbox under
 * attack, and a call that goes through T in either mode. */
#ifndef SANDPIT_SELFTEST_CORE_RACE_H
#define SANDPIT_SELFTEST_CORE_RACE_H
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sandbox_util.h"
#include "u_state.h"

/* Runs fn sandboxed with its stderr (and B's) in a file: the outcome, and
 * what sandpit said in msg. */
static inline int run_capture(int (*fn)(void *), void *arg, const struct sandpit_options *o, int timeout_s,
		       char *msg, size_t len)
{
	char tmpl[] = "/tmp/sandpit-core-errXXXXXX";
	int fd = mkstemp(tmpl);
	if (fd < 0)
		return -1;
	unlink(tmpl);
	fflush(NULL);
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		dup2(fd, 2);
		if (sandpit_start(o) < 0)
			_exit(SANDBOX_START_FAILED);
		_exit(fn(arg));
	}
	int st = 0, done = 0;
	for (int i = 0; i < timeout_s * suite_timeout_scale() * 100 && !done; i++) {
		done = waitpid(p, &st, WNOHANG) == p;
		if (!done)
			usleep(10000);
	}
	if (!done) {
		kill(p, SIGKILL);
		waitpid(p, &st, 0);
	}
	usleep(50000); /* B's last line */
	ssize_t n = pread(fd, msg, len - 1, 0);
	msg[n > 0 ? n : 0] = 0;
	close(fd);
	return done ? outcome(st) : -2;
}

/* counters shared with the test body outside the sandbox */
struct race {
	volatile long writes, landed, calls, bad, done, phase;
	volatile int victim_slot;
	volatile long snapshots, torn; /* the secure page as a reader sees it */
	volatile int pause, paused;
	volatile int stopped; /* the rewriter has left its loop */
};
static struct race *R;
static struct mailbox *volatile victim_mb;

/* a call that goes through T in either mode (T's range rule) */
static char t_page[4096] __attribute__((aligned(4096)));
static inline int call_via_t(void)
{
	return mprotect(t_page, sizeof(t_page), PROT_READ | PROT_WRITE);
}
#endif
