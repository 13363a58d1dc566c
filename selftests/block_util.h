/* sandpit's descriptor block as a sandboxed test body sees it
 * (user/layout/slots.h). */
#ifndef SANDPIT_SELFTEST_BLOCK_UTIL_H
#define SANDPIT_SELFTEST_BLOCK_UTIL_H
#include <dirent.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

/* a file of /proc (or any) read whole into buf, NUL-ended: its length,
 * 0 when it cannot be read */
static inline ssize_t proc_read(const char *path, char *buf, size_t len)
{
	int f = open(path, O_RDONLY);
	ssize_t n = f < 0 ? -1 : read(f, buf, len - 1);
	if (f >= 0)
		close(f);
	buf[n > 0 ? n : 0] = 0;
	return n > 0 ? n : 0;
}

/* whether task t (a pid or a tid) lives: its /proc stat's state is not
 * a zombie's or a dead task's (whose descriptor table is gone, NULL, and
 * so "the same" as any other gone one for kcmp) */
static inline int task_lives(long t)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%ld/stat", t);
	proc_read(path, buf, sizeof(buf));
	char *r = strrchr(buf, ')');
	return r && r[1] == ' ' && r[2] && !strchr("ZXx", r[2]);
}

/* the pid of process p's notifier N (a process named "sandpit-N" sharing
 * p's memory and descriptor table, through which sandpit makes each thread
 * slot's eventfds when the slot is first used), 0 where p has none (every
 * slot's eventfds made at start-up).  N is no child of p's (an orphan), so
 * a test outside the sandbox finds it as a living process named so whose
 * descriptor table is that of a living thread of p's (kcmp: p's main
 * thread may have ended, and gone tables compare equal) */
static inline long notifier_pid_of(long p)
{
	char path[64], name[32];
	DIR *d = opendir("/proc");
	long found = 0;
	struct dirent *e;
	while (d && !found && (e = readdir(d))) {
		long c = atol(e->d_name);
		if (c <= 0 || c == p)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/comm", c);
		if (!proc_read(path, name, sizeof(name)) || strcmp(name, "sandpit-N\n") || !task_lives(c))
			continue;
		/* against each living thread of p's: threads come and go */
		snprintf(path, sizeof(path), "/proc/%ld/task", p);
		DIR *t = opendir(path);
		struct dirent *te;
		while (t && !found && (te = readdir(t))) {
			long tid = atol(te->d_name);
			if (tid > 0 && task_lives(tid) &&
			    syscall(SYS_kcmp, (pid_t)tid, (pid_t)c, KCMP_FILES, 0, 0) == 0)
				found = c;
		}
		if (t)
			closedir(t);
	}
	if (d)
		closedir(d);
	return found;
}

/* process c's parent as /proc/c/status says, -1 when unreadable */
static inline long proc_ppid(long c)
{
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/%ld/status", c);
	proc_read(path, buf, sizeof(buf));
	char *pp = strstr(buf, "\nPPid:");
	return pp ? strtol(pp + 7, NULL, 10) : -1;
}

/* the sandboxed process's own N, where it has one: inside the sandbox
 * other processes' /proc files are out of the grants (and kcmp refused),
 * but N's pid is in sandpit's memory (user/start/notifier.h), which the
 * program can read as any of P's memory */
extern int32_t sandpit_notifier_words[2];
static inline long notifier_tid(void)
{
	return __atomic_load_n(&sandpit_notifier_words[0], __ATOMIC_ACQUIRE);
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
