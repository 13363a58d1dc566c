/* How U and T share the CPUs (user/start/start.h): how long U spins for
 * T's answer before it sleeps, and the CPUs T leaves U's for. */
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "user/start/start.h"
#include "user/untrusted/runtime.h"

#define SPIN_TARGET_NS 30000 /* about one blocking hand-off (DESIGN §9) */

unsigned start_spin(void)
{
	struct timespec a, b;
	const unsigned n = 250; /* ≈ 6 µs here, far above the clock's resolution */
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned i = 0; i < n; i++)
		cpu_relax();
	clock_gettime(CLOCK_MONOTONIC, &b);
	long ns = (b.tv_sec - a.tv_sec) * 1000000000L + b.tv_nsec - a.tv_nsec;
	if (ns <= 0)
		ns = 1;
	unsigned long it = (unsigned long)SPIN_TARGET_NS * n / (unsigned long)ns;
	return it < 100 ? 100 : it > 1000000 ? 1000000 : (unsigned)it;
}

/* The CPU masks T leaves U's CPU with (SM_CPU_ALL): in strict mode, where U
 * and T taking turns on one CPU costs a strict switch each way, and only
 * where the process may run on two CPUs or more, all of them below 64; else
 * T stays where the kernel puts it.  (In filter mode a shared CPU costs
 * ordinary switches, and T's leaving it cost 8 threads at once a fifth.) */
void start_cpu_masks(struct secure_page *sp, enum sandpit_mode mode)
{
	cpu_set_t set;
	uint64_t all = 0;

	sp->cpu_masks = 0;
	if (mode != SANDPIT_MODE_STRICT || sched_getaffinity(0, sizeof(set), &set) < 0 ||
	    CPU_COUNT(&set) < 2)
		return;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			if (c >= SM_CPU_ALL)
				return;
			all |= 1ull << c;
		}
	uint64_t *m = (uint64_t *)((char *)sp + (size_t)(SM_NSLOTS + SM_TID_PAGES) * SM_PAGE);
	for (int c = 0; c < SM_CPU_ALL; c++)
		m[c] = all & ~(1ull << c);
	m[SM_CPU_ALL] = all;
	sp->cpu_masks = (uint64_t)(uintptr_t)m;
}
