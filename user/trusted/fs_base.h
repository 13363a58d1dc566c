/* Setting another thread's FS base (strict mode on a CPU without FSGSBASE).
 *
 * A U in strict mode cannot call arch_prctl, cannot use wrfsbase without
 * FSGSBASE, and T is another thread: arch_prctl acts on its caller.  B, a
 * separate process that P named as its ptracer (Yama), stops the U by
 * ptrace, reads or writes fs_base in its user area and lets it go.  Runs in
 * B; no state. */
#ifndef SANDPIT_FS_BASE_H
#define SANDPIT_FS_BASE_H
#include <stdint.h>
#include <sys/types.h>

/* Stops thread `tid` of process `pid` (PTRACE_SEIZE + PTRACE_INTERRUPT),
 * checks while it is stopped that it is a thread of pid in seccomp mode
 * `seccomp_mode` (1: strict, so never a trusted thread; -1: any), then
 * writes *val into fs_base (set) or reads fs_base into *val, and detaches,
 * handing back a signal that arrived meanwhile.  0 or -errno: -EPERM for a
 * thread that is not the one asked for, or a base the kernel refuses. */
int fs_base_ptrace(pid_t pid, pid_t tid, int seccomp_mode, int set, uint64_t *val);

/* A numeric field of /proc/TID/status (e.g. "Seccomp:", or "Umask:",
 * read as the octal number it is written as), the kernel's word on a
 * thread of pid: -1 if there is no such thread or its Tgid (in the same
 * read) is not pid, -2 if the kernel has no such field.  Used by B. */
int task_status(pid_t pid, pid_t tid, const char *field);

/* The kernel's TASK_SIZE_MAX: one past the highest FS base it accepts
 * (4- or 5-level paging, found by a hint mapping above 47 bits). */
uint64_t fs_base_task_size(void);
#endif
