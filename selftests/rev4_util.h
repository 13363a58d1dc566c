/* What the rev4_*_test binaries share: constants for close_range and the
 * user nobody, the skips for a kernel without openat2 and for a test that
 * needs root, and a check that sandpit still serves. */
#ifndef SANDPIT_SELFTEST_REV4_UTIL_H
#define SANDPIT_SELFTEST_REV4_UTIL_H
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sandbox_util.h"

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#define NOBODY 65534


static inline void rm_rf(const char *d)
{
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", d);
}

static inline void *thread_fn(void *a) { return a; }

/* sandpit still serves: a path T opens after B checks it, a stat B
 * answers, a new thread (a slot B hands out, its T, its eventfds) */
static inline int sandpit_works(void)
{
	int fd = open("/etc/passwd", O_RDONLY);
	char c;
	int ok = fd >= 0 && read(fd, &c, 1) == 1;
	if (fd >= 0)
		close(fd);
	struct stat sb;
	ok = ok && stat("/etc/passwd", &sb) == 0;
	pthread_t t;
	void *r = NULL;
	ok = ok && pthread_create(&t, NULL, thread_fn, (void *)7L) == 0 &&
	     pthread_join(t, &r) == 0 && r == (void *)7L;
	return ok;
}

/* the attacks that act as root and as nobody, with files of both: root's */
#define NEED_ROOT(uid)                                                                  \
	do {                                                                            \
		if ((uid) != 0 && geteuid() != 0)                                       \
			SKIP(return, "acting as another user and giving files to it needs root"); \
	} while (0)
#endif
