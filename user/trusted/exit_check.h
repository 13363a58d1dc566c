/* B's check that a thread which asked to exit can only end by exit
 * (invariant 5).  A U's end is no alarm once B has accepted its exit; so B
 * accepts it only when the kernel shows the thread where nothing of the
 * program's can run in it again: blocked in sandpit_exit_wait's read (at
 * sandpit_exit_site) with every signal blocked.  Whatever any thread wrote
 * into any mailbox, a thread the kernel then kills for a forbidden call
 * was never accepted.  Runs in B; no state. */
#ifndef SANDPIT_EXIT_CHECK_H
#define SANDPIT_EXIT_CHECK_H
#include <stdint.h>
#include <sys/types.h>

/* Thread `tid` of process `pid`, as the kernel shows it in
 * /proc/TID/status and /proc/TID/syscall: 1 if it is blocked in read with
 * its instruction pointer at `site` and every signal blocked but SIGKILL
 * and SIGSTOP, and it did not run between the reads that say so; 0 if not
 * (yet); -ESRCH if there is no such thread of pid; another -errno if the
 * kernel does not show B the thread's call. */
int exit_check_waits_at(pid_t pid, pid_t tid, uintptr_t site);

/* The same look for another of sandpit's waits: 1 if thread `tid` of
 * process `pid` is off its CPU (blocked, or stopped) in call `nr` (or in
 * restart_syscall, which resumes it after a stop) with its first argument
 * `arg0` and its instruction pointer at `site`; 0 if not (yet); -ESRCH if
 * there is no such thread of pid; another -errno if the kernel does not
 * show B the thread's call. */
int exit_check_call_at(pid_t pid, pid_t tid, uintptr_t site, long nr, unsigned long arg0);
#endif
