/* sandpit's descriptor block as a sandboxed test body sees it
 * (user/layout/slots.h). */
#ifndef SANDPIT_SELFTEST_BLOCK_UTIL_H
#define SANDPIT_SELFTEST_BLOCK_UTIL_H
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* the numbers in [lo, hi] that hold a descriptor, per /proc/self/fd */
static inline long held_in(long lo, long hi)
{
	DIR *d = opendir("/proc/self/fd");
	long n = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		long fd = e->d_name[0] == '.' ? -1 : atol(e->d_name);
		n += fd >= lo && fd <= hi;
	}
	if (d)
		closedir(d);
	return n;
}

/* a descriptor's file status flags as /proc/self/fdinfo shows them (octal),
 * -1 when it cannot be read */
static inline long fdinfo_flags(long fd)
{
	char p[64], buf[512];
	snprintf(p, sizeof(p), "/proc/self/fdinfo/%ld", fd);
	int f = open(p, O_RDONLY);
	if (f < 0)
		return -1;
	ssize_t n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *c = strstr(buf, "flags:");
	return c ? strtol(c + 6, NULL, 8) : -1;
}

/* the pid of process p's notifier N (a child of p named "sandpit-N",
 * sharing its memory and descriptor table, through which sandpit makes
 * each thread slot's eventfds when the slot is first used), 0 where it
 * has none (every slot's eventfds made at start-up).  Asked by the
 * sandboxed process of itself, or by a test of its sandboxed child */
static inline long notifier_pid_of(long p)
{
	char path[96];
	snprintf(path, sizeof(path), "/proc/%ld/task", p);
	DIR *d = opendir(path);
	long found = 0;
	struct dirent *e;
	while (d && !found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char kids[4096];
		snprintf(path, sizeof(path), "/proc/%ld/task/%.16s/children", p, e->d_name);
		int f = open(path, O_RDONLY);
		ssize_t n = f < 0 ? -1 : read(f, kids, sizeof(kids) - 1);
		if (f >= 0)
			close(f);
		kids[n > 0 ? n : 0] = 0;
		for (char *k = kids; *k && !found;) {
			long c = strtol(k, &k, 10);
			char name[32];
			snprintf(path, sizeof(path), "/proc/%ld/comm", c);
			int cf = c > 0 ? open(path, O_RDONLY) : -1;
			ssize_t m = cf < 0 ? -1 : read(cf, name, sizeof(name) - 1);
			if (cf >= 0)
				close(cf);
			/* inside the sandbox another process's /proc files are
			 * out of the grants; but fork is refused there, so a
			 * child of the sandboxed process's own is sandpit's */
			if (m > 0 ? (name[m] = 0, !strcmp(name, "sandpit-N\n"))
				  : c > 0 && p == getpid() && errno == EACCES)
				found = c;
			while (*k == ' ')
				k++;
			if (c <= 0)
				break;
		}
	}
	if (d)
		closedir(d);
	return found;
}

static inline long notifier_tid(void)
{
	return notifier_pid_of(getpid());
}

/* how many of the first nslots slots' numbers hold what the slot needs:
 * an eventfd each, T's (the first) never blocking, U's blocking */
static inline long slot_eventfds_ok(long lo, long nslots)
{
	long ok = 0;
	for (long s = 0; s < nslots; s++)
		for (int i = 0; i < 2; i++) {
			struct stat sb;
			long fd = lo + 2 + 2 * s + i, fl = fdinfo_flags(fd);
			ok += fstat((int)fd, &sb) == 0 && (sb.st_mode & S_IFMT) == 0 && fl >= 0 &&
			      !!(fl & O_NONBLOCK) == (i == 0);
		}
	return ok;
}

/* the numbers of [lo, hi] held once `slots` thread slots have been used:
 * all of them where they were made at start-up; else P's end of T<->B,
 * B's placeholder, /proc/self/maps and two for each slot used */
static inline long block_held_expected(long lo, long hi, long slots)
{
	return notifier_tid() ? 3 + 2 * slots : hi - lo + 1;
}
#endif
