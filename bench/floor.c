/* The hand-off floor: what a call through B costs before sandpit checks
 * anything.  Three parties with the hand-offs of DESIGN §2 and §9 as
 * sandpit makes them, and nothing else: U (a thread) writes a request and
 * spins; T (a second thread, on another CPU) spins for it, rings a second
 * process with FUTEX_WAKE, gives it the CPU with sched_yield and then
 * waits on a sequence word; the second process's server (on T's CPU, where
 * sandpit's follow T) bumps the word and wakes T if it sleeps; T answers U.
 * No path, no check, no system call made for U: each round trip is two
 * switches between processes on one CPU and the calls that make them.
 * And the least of any call through T: a word's round trip between the
 * two CPUs.
 * `sandpit bench` measures both in each round of the per-call group, so
 * that the T and B rows can be read against what this machine's CPUs and
 * switches cost at the same time (the host's state moves them between
 * runs).  Needs two CPUs: without, no rows. */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/groups.h"

#define FLOOR_BATCHES 8
#define T_YIELDS 2000 /* as T's B_YIELDS: yields before it sleeps on the word */

struct floor_shm {
	_Atomic uint64_t req, res; /* U's request, T's answer (U's cache line) */
	char pad0[48];
	_Atomic uint32_t bell, seq, t_wait; /* T's ring, the server's answer */
	_Atomic int stop;
	char pad1[48];
	double batch_ns;
	double v[FLOOR_BATCHES], echo[FLOOR_BATCHES];
	char err[128];
};

static long futex(_Atomic uint32_t *w, int op, uint32_t v)
{
	return syscall(SYS_futex, w, op, v, NULL, NULL, 0);
}

static int pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return sched_setaffinity(0, sizeof(s), &s);
}

static void cpu_pause(void)
{
	__asm__ volatile("pause" ::: "memory");
}

/* the second process: acts on a FUTEX_WAKE on the bell, as B does */
static void server(struct floor_shm *f)
{
	uint32_t seen = atomic_load(&f->bell);
	while (!atomic_load(&f->stop)) {
		if (atomic_load(&f->bell) == seen) {
			futex(&f->bell, FUTEX_WAIT, seen);
			continue;
		}
		seen = atomic_load(&f->bell);
		atomic_fetch_add(&f->seq, 1);
		if (atomic_load(&f->t_wait))
			futex(&f->seq, FUTEX_WAKE, 1);
	}
	_exit(0);
}

static void *t_thread(void *a)
{
	struct floor_shm *f = a;
	uint64_t seen = 0;
	for (;;) {
		uint64_t r;
		while ((r = atomic_load(&f->req)) == seen)
			cpu_pause();
		if (r == UINT64_MAX)
			return NULL;
		seen = r;
		uint32_t s = atomic_load(&f->seq);
		atomic_fetch_add(&f->bell, 1);
		futex(&f->bell, FUTEX_WAKE, 1);
		for (int y = 0; atomic_load(&f->seq) == s;) {
			if (++y < T_YIELDS) {
				sched_yield();
				continue;
			}
			atomic_store(&f->t_wait, 1);
			if (atomic_load(&f->seq) == s)
				futex(&f->seq, FUTEX_WAIT, s);
			atomic_store(&f->t_wait, 0);
		}
		atomic_store(&f->res, r);
	}
}

/* the other end of a word's round trip between two CPUs: what a T that
 * spins on another CPU answers with, at the least */
static void *echo_thread(void *a)
{
	struct floor_shm *f = a;
	uint64_t r = 0;
	while (r != UINT64_MAX) {
		while ((r = atomic_load(&f->req)) == atomic_load(&f->res))
			cpu_pause();
		atomic_store(&f->res, r);
	}
	return NULL;
}

/* U's side: n round trips, through whichever thread answers */
static void round_trips(long n, void *arg)
{
	struct floor_shm *f = arg;
	uint64_t r = atomic_load(&f->req);
	for (long i = 0; i < n; i++) {
		atomic_store(&f->req, ++r);
		while (atomic_load(&f->res) != r)
			cpu_pause();
	}
}

/* batches of round trips from CPU first to `answer`, a thread on CPU last */
static int measure(struct floor_shm *f, void *(*answer)(void *), int first, int last, double *out)
{
	pthread_t t;
	atomic_store(&f->req, 0);
	atomic_store(&f->res, 0);
	if (pin(last) < 0 || pthread_create(&t, NULL, answer, f) || pin(first) < 0)
		return 1;
	bench_batches(round_trips, f, f->batch_ns, FLOOR_BATCHES, out);
	atomic_store(&f->req, UINT64_MAX);
	pthread_join(t, NULL);
	return 0;
}

static int floor_child(void *arg)
{
	struct floor_shm *f = arg;
	cpu_set_t all;
	int first = -1, last = -1;
	if (sched_getaffinity(0, sizeof(all), &all) < 0)
		return 1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all)) {
			first = first < 0 ? c : first;
			last = c;
		}
	if (first == last)
		return BENCH_UNAVAILABLE; /* no second CPU for T */
	/* the server and T on one CPU, U on another */
	if (pin(last) < 0) {
		snprintf(f->err, sizeof(f->err), "sched_setaffinity: %s", strerror(errno));
		return 1;
	}
	pid_t s = fork();
	if (s < 0)
		return 1;
	if (s == 0)
		server(f);
	int rc = measure(f, echo_thread, first, last, f->echo) ||
		 measure(f, t_thread, first, last, f->v);
	atomic_store(&f->stop, 1);
	atomic_fetch_add(&f->bell, 1);
	futex(&f->bell, FUTEX_WAKE, 1);
	waitpid(s, NULL, 0);
	return rc;
}

int bench_floor_round(const struct bench_cfg *c)
{
	struct floor_shm *f = bench_shared(sizeof(*f));
	f->batch_ns = c->batch_ns;
	int rc = bench_child(floor_child, f, "floor child", NULL);
	if (rc && rc != BENCH_UNAVAILABLE && f->err[0])
		fprintf(stderr, "sandpit bench: floor: %s\n", f->err);
	for (int b = 0; !rc && b < FLOOR_BATCHES; b++) {
		bench_add(bench_row("floor", BENCH_FLOOR_CPUS_ROW, "floor", BENCH_NS,
				    "one thread writes a word and spins until a thread spinning on "
				    "another CPU writes it back: the least a call through a T on "
				    "another CPU costs"),
			  f->echo[b]);
		bench_add(bench_row("floor", BENCH_FLOOR_ROW, "floor", BENCH_NS,
				    "U spins; T on another CPU rings a second process (on T's CPU) "
				    "with FUTEX_WAKE, yields, takes its answer from a shared word; "
				    "nothing checked, no call made for U"),
			  f->v[b]);
	}
	munmap(f, sizeof(*f));
	return rc == BENCH_UNAVAILABLE ? 0 : rc;
}
