/* The busy group: what the sandbox costs on a machine whose CPUs are all
 * taken.  One busy loop per CPU this process may run on (a child that
 * spins at the bench's own priority) for the length of the group, and
 * under it a T call and two B calls (bench/calls.c) and two programs
 * (bench/programs.c), native, strict and filter in the same rounds.  On a
 * busy machine every task waits for a CPU; a sandboxed call that hands
 * over between U, T and B waits at each hand-over, so its ratio to native
 * here, beside the same row's on a quiet machine, is what a user on a
 * loaded machine pays. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/groups.h"

#define MAX_SPINNERS 64

static void spin(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives the bench */
	for (volatile unsigned long i = 0;; i++)
		;
}

int bench_busy(const struct bench_cfg *c)
{
	cpu_set_t set;
	int n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
	if (n > MAX_SPINNERS)
		n = MAX_SPINNERS;
	pid_t spinner[MAX_SPINNERS];
	int made = 0, rc = 0;
	fflush(NULL);
	for (; made < n; made++) {
		spinner[made] = fork();
		if (spinner[made] == 0)
			spin();
		if (spinner[made] < 0) {
			fprintf(stderr, "sandpit bench: busy: fork: %s\n", strerror(errno));
			rc = -1;
			break;
		}
	}
	if (!rc) {
		bench_progress(c, "busy: %d busy loops", made);
		rc |= bench_calls_busy(c);
		rc |= bench_programs_busy(c);
	}
	for (int i = 0; i < made; i++) {
		kill(spinner[i], SIGKILL);
		waitpid(spinner[i], NULL, 0);
	}
	return rc;
}
