/* What a program linked with libsandpit may and may not do under the
 * default policy, as a checklist: prints one line per check and exits with
 * the number of checks that came out wrong.  Built and run by
 * selftests/library_test.c exactly as a user would:
 *     gcc checklist.c -Iinclude -Lbuild -lsandpit
 *     SANDPIT_MODE=strict ./a.out */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <sandpit.h>
#include "checklist.h"


static long raw3(long nr, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}

int main(void)
{
	pid_t ppid = getppid();
	struct timespec before;
	clock_gettime(CLOCK_REALTIME, &before);
	if (sandpit_start(NULL) < 0) {
		fprintf(stderr, "checklist: %s\n", sandpit_error());
		return 100;
	}
	check("sandpit_mode() is the mode asked for", sandpit_mode() == mode_asked());

	check("allowed: getppid()", getppid() == ppid);
	check("allowed: raw syscall getppid", raw3(SYS_getppid, 0, 0, 0) == ppid);
	FILE *f = fopen("/etc/passwd", "r");
	char line[256] = "";
	check("allowed: read /etc/passwd", f && fgets(line, sizeof(line), f) && strchr(line, ':'));
	if (f)
		fclose(f);
	struct stat sb;
	check("allowed: stat(/usr/bin/env)", stat("/usr/bin/env", &sb) == 0 && S_ISREG(sb.st_mode));
	char *m = malloc(1 << 20);
	if (m)
		memset(m, 1, 1 << 20);
	check("allowed: malloc(1 MiB)", m != NULL);
	free(m);
	struct timespec now;
	check("allowed: clock_gettime(CLOCK_REALTIME)",
	      clock_gettime(CLOCK_REALTIME, &now) == 0 && now.tv_sec >= before.tv_sec &&
		      now.tv_sec < before.tv_sec + 60);
	time_t t = time(NULL);
	check("allowed: time()", t >= before.tv_sec && t < before.tv_sec + 60);

	check("refused: create /tmp/sandpit-checklist",
	      open("/tmp/sandpit-checklist", O_CREAT | O_WRONLY, 0644) == -1 && errno == EACCES);
	check("refused: raw open(O_CREAT)",
	      raw3(SYS_open, (long)"/tmp/sandpit-checklist", O_CREAT | O_WRONLY, 0644) == -EACCES);
	char *argv[] = { "/bin/true", NULL };
	check("refused: execve(/bin/true)", execve("/bin/true", argv, NULL) == -1 && errno == EACCES);
	check("refused: socket(AF_INET)", socket(AF_INET, SOCK_STREAM, 0) == -1 && errno == EAFNOSUPPORT);
	printf("%d wrong\n", wrong);
	return wrong;
}
