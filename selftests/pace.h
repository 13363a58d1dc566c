/* Pacing for the storm and interruption tests: no sleeps sized by guess,
 * no assert on a time.
 *
 * pace_cost_ns: the cheapest of a few rounds of a step (a signal raised
 * and handled, say), after a warm-up: what the step costs on this machine
 * now, busy or quiet.  pace_period_us: a storm's period from that cost,
 * four of them (at least 50 us), so that the storm lands often but leaves
 * the program three quarters of its time and never starves the machine.
 *
 * wait_blocked_in: until some thread of a process is asleep in a given
 * system call, as /proc/PID/task/TID/syscall says (the call's number and
 * its arguments while the thread sleeps in it, "running" otherwise).  A
 * sandboxed thread's call is made by its trusted thread, another task of
 * the same process: so every task is looked at, and arg0 (the descriptor,
 * say) tells the call from sandpit's own waits (U waits for T in a read
 * of its eventfd).  Where the file cannot be read (another user's task),
 * /proc/PID/task/TID/wchan says only that a task sleeps: then any
 * sleeping task counts. */
#ifndef SELFTESTS_PACE_H
#define SELFTESTS_PACE_H

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline long pace_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* the cheapest of 20 rounds of `per` steps, each step's cost in ns */
static inline long pace_cost_ns(void (*step)(void *), void *arg, int per)
{
	long best = 1000000000L;
	for (int i = 0; i < per; i++)
		step(arg); /* warm-up: a T that slept answers its first calls late */
	for (int r = 0; r < 20; r++) {
		long t0 = pace_now_ns();
		for (int i = 0; i < per; i++)
			step(arg);
		long c = (pace_now_ns() - t0) / per;
		if (c < best)
			best = c;
	}
	return best;
}

static inline long pace_period_us(long cost_ns)
{
	long p = 4 * cost_ns / 1000;
	return p < 50 ? 50 : p;
}

/* 1: task tid of pid sleeps in call nr with first argument arg0 (any if
 * arg0 == -1); 0: not (yet); -1: its syscall file cannot be read */
static inline int pace_task_in(pid_t pid, const char *tid, long nr, long arg0)
{
	char path[384], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/task/%s/syscall", (int)pid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		/* no syscall file for us: a task asleep somewhere counts */
		snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", (int)pid, tid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		return n > 0 && !(n == 1 && buf[0] == '0') ? 1 : -1;
	}
	buf[n] = 0;
	char *end;
	long got = strtol(buf, &end, 10);
	if (end == buf || got != nr)
		return 0;
	if (arg0 == -1)
		return 1;
	return strtoul(end, NULL, 16) == (unsigned long)arg0;
}

/* some task of pid asleep in call nr (first argument arg0, or any if -1) */
static inline int pace_blocked_in(pid_t pid, long nr, long arg0)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	struct dirent *e;
	int found = 0;
	while (d && !found && (e = readdir(d)))
		if (e->d_name[0] != '.')
			found = pace_task_in(pid, e->d_name, nr, arg0) == 1;
	if (d)
		closedir(d);
	return found;
}

/* whether this process may see where pid's tasks sleep (B is not
 * dumpable: a suite run by another user than root may not) */
static inline int pace_can_look(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char c;
	int ok = read(fd, &c, 1) == 1;
	close(fd);
	return ok;
}

/* wait until some task of pid sleeps in call nr (arg0 as above), yielding
 * between looks; gives up when *stop becomes non-zero (the call ended) or
 * after `tries` looks.  1 when seen asleep. */
static inline int wait_blocked_in(pid_t pid, long nr, long arg0, const volatile int *stop,
				  long tries)
{
	for (long i = 0; i < tries; i++) {
		if (pace_blocked_in(pid, nr, arg0))
			return 1;
		if (stop && *stop)
			return 0;
		if (i < 100)
			sched_yield();
		else
			usleep(1000);
	}
	return 0;
}

#endif
