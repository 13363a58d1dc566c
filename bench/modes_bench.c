/* make bench: strict and filter mode against native, in the same run.
 * Each figure is the median of BATCHES batches; a batch times N calls with
 * one clock read at each end (in strict mode a clock read is itself an
 * emulated rdtscp, so it is kept out of the loop). */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sandpit.h>
#include "user/secure_mem.h"

#define BATCHES 15

enum { B_GETPPID, B_RAW_GETPPID, B_OPEN_CLOSE, B_STAT, B_READ_4K, B_THREAD, NBENCH };
static const char *names[NBENCH] = { "getppid (libc)", "getppid (raw syscall)", "open+close",
				     "stat", "read 4 KiB (pread)", "pthread create+join" };
static const int iters[NBENCH] = { 20000, 20000, 4000, 4000, 20000, 200 };

static void *nothing(void *a)
{
	return a;
}

struct results {
	double native[NBENCH]; /* the same process, before sandpit_start */
	double ns[NBENCH];
	double start_us;
	int ok;
};

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void one(int which, int n, int fd)
{
	struct stat sb;
	char buf[4096];
	for (int i = 0; i < n; i++) {
		switch (which) {
		case B_GETPPID:
			getppid();
			break;
		case B_RAW_GETPPID: {
			long r;
			__asm__ volatile("syscall" : "=a"(r) : "a"(SYS_getppid) : "rcx", "r11", "memory");
			break;
		}
		case B_OPEN_CLOSE:
			close(open("/etc/hostname", O_RDONLY));
			break;
		case B_STAT:
			stat("/etc/hostname", &sb);
			break;
		case B_READ_4K:
			if (pread(fd, buf, sizeof(buf), 0) < 0)
				return;
			break;
		case B_THREAD: {
			pthread_t t;
			if (pthread_create(&t, NULL, nothing, NULL) == 0)
				pthread_join(t, NULL);
			break;
		}
		}
	}
}

static void measure(double *out)
{
	int fd = open("/usr/bin/env", O_RDONLY);
	for (int b = 0; b < NBENCH; b++) {
		double v[BATCHES];
		one(b, iters[b] / 10, fd); /* warm up */
		for (int k = 0; k < BATCHES; k++) {
			double t0 = now_ns();
			one(b, iters[b], fd);
			v[k] = (now_ns() - t0) / iters[b];
		}
		qsort(v, BATCHES, sizeof(v[0]), cmp);
		out[b] = v[BATCHES / 2];
	}
	close(fd);
}

static int run(struct results *r, enum sandpit_mode mode, int one_cpu)
{
	memset(r, 0, sizeof(*r));
	fflush(NULL);
	pid_t p = fork();
	if (p == 0) {
		if (one_cpu) {
			cpu_set_t s;
			CPU_ZERO(&s);
			CPU_SET(0, &s);
			sched_setaffinity(0, sizeof(s), &s);
		}
		measure(r->native);
		if (mode != SANDPIT_MODE_NONE) {
			struct sandpit_options o = { .mode = mode };
			unsetenv("SANDPIT_MODE");
			double t0 = now_ns();
			if (sandpit_start(&o) < 0) {
				fprintf(stderr, "bench: %s\n", sandpit_error());
				_exit(1);
			}
			r->start_us = (now_ns() - t0) / 1000;
		}
		measure(r->ns);
		r->ok = 1;
		_exit(0);
	}
	int st;
	waitpid(p, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 && r->ok ? 0 : -1;
}

int main(void)
{
	struct results *nat = mmap(NULL, 4 * sizeof(*nat), PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct results *strict = nat + 1, *strict1 = nat + 2, *filter = nat + 3;
	if (nat == MAP_FAILED || run(nat, SANDPIT_MODE_NONE, 0) || run(strict, SANDPIT_MODE_STRICT, 0) ||
	    run(strict1, SANDPIT_MODE_STRICT, 1) || run(filter, SANDPIT_MODE_FILTER, 0)) {
		fprintf(stderr, "bench: a run failed\n");
		return 1;
	}
	printf("sandpit bench: strict and filter mode vs native, medians of %d batches;\n"
	       "each ratio is against native measured in the same process, before it entered\n"
	       "the sandbox\n",
	       BATCHES);
	printf("%-22s %10s %11s %7s %11s %7s %14s\n", "call", "native ns", "strict ns", "ratio",
	       "filter ns", "ratio", "strict 1CPU ns");
	for (int b = 0; b < NBENCH; b++)
		printf("%-22s %10.0f %11.0f %6.2fx %11.0f %6.2fx %14.0f\n", names[b], nat->ns[b],
		       strict->ns[b], strict->ns[b] / strict->native[b], filter->ns[b],
		       filter->ns[b] / filter->native[b], strict1->ns[b]);
	printf("%-22s %10s %11.0f %7s %11.0f\n", "sandpit_start (us)", "-", strict->start_us, "",
	       filter->start_us);
	printf("memory per sandboxed thread: T stack 0 B (T uses none) + S 8 KiB (2 pages)\n"
	       "  + T's alternate signal stack %d KiB\n", SM_ALT_SIZE / 1024);
	return 0;
}
