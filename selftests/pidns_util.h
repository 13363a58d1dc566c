/* A process with the same pid in a new pid namespace and in the one
 * above it, which still has the /proc of the one above (rev19_test,
 * rev20_test: the /proc check of sandpit_start). */
#ifndef SANDPIT_SELFTESTS_PIDNS_UTIL_H
#define SANDPIT_SELFTESTS_PIDNS_UTIL_H
#include <errno.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Called in a child of the test: a new pid namespace, its init, and from
 * it (clone3 set_tid) a process whose pid is the same in both, in which
 * this returns.  The others never return: they end with that process's
 * status, or 80 (unshare), 81 (fork), 82 (clone3 refused), 83 (no pid
 * free), 90 or 91 (a death by a signal). */
static inline void same_pid_in_a_new_pid_namespace(void)
{
	if (unshare(CLONE_NEWPID))
		_exit(80);
	pid_t init = fork(); /* the namespace's pid 1 */
	if (init < 0)
		_exit(81);
	if (init > 0) {
		int s;
		waitpid(init, &s, 0);
		_exit(WIFEXITED(s) ? WEXITSTATUS(s) : 90);
	}
	for (pid_t want = 20000 + (getppid() % 1000) * 7; want < 32700; want += 13) {
		pid_t tids[2] = { want, want };
		struct clone_args ca = { .exit_signal = SIGCHLD,
					 .set_tid = (uintptr_t)tids,
					 .set_tid_size = 2 };
		long q = syscall(SYS_clone3, &ca, sizeof(ca));
		if (q < 0 && (errno == EEXIST || errno == EBUSY))
			continue;
		if (q < 0)
			_exit(82);
		if (q == 0)
			return;
		int s;
		waitpid((pid_t)q, &s, 0);
		_exit(WIFEXITED(s) ? WEXITSTATUS(s) : 91);
	}
	_exit(83);
}
#endif
