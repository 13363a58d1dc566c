/* compat — run-time probes for every kernel feature sandpit uses.
 *
 * Each feature is probed once, without side effects on the calling process,
 * and the answer is cached.  The two probes that need a child process
 * (user-dispatch, mseal), which sandpit_start does not ask about, run when
 * first asked rather than in compat_init.  $SANDPIT_KERNEL forces features
 * off so that the legacy paths run on a modern kernel:
 *   legacy          every feature but strict mode is off (a pre-3.5 kernel;
 *                   FSGSBASE too: no kernel before 5.9 has it)
 *   no-<feature>    that feature is off, e.g. no-tsync,no-kill-process
 * Tokens are comma-separated and combine.  A feature whose prerequisite is
 * off is off too (no-filter takes tsync with it).  An unknown token is an
 * error, never ignored. */
#ifndef SANDPIT_COMPAT_H
#define SANDPIT_COMPAT_H

#include <stddef.h>
#include <stdio.h>

/* In dependency order: a feature comes after the one it needs. */
enum compat_feature {
	COMPAT_STRICT,             /* seccomp strict mode */
	COMPAT_FILTER,             /* seccomp-bpf via prctl(PR_SET_SECCOMP) */
	COMPAT_SECCOMP_SYSCALL,    /* seccomp(2) */
	COMPAT_TSYNC,              /* SECCOMP_FILTER_FLAG_TSYNC */
	COMPAT_ACTIONS_AVAIL,      /* SECCOMP_GET_ACTION_AVAIL or the sysctl file */
	COMPAT_KILL_PROCESS,       /* SECCOMP_RET_KILL_PROCESS */
	COMPAT_RET_TRAP,           /* SECCOMP_RET_TRAP */
	COMPAT_RET_LOG,            /* SECCOMP_RET_LOG */
	COMPAT_USER_NOTIF,         /* SECCOMP_RET_USER_NOTIF */
	COMPAT_PIDFD,              /* pidfd_open(2) */
	COMPAT_PIDFD_THREAD,       /* pidfd_open(tid, PIDFD_THREAD) */
	COMPAT_PIDFD_GETFD,        /* pidfd_getfd(2) */
	COMPAT_USER_DISPATCH,      /* PR_SET_SYSCALL_USER_DISPATCH */
	COMPAT_LANDLOCK,           /* landlock_create_ruleset(2) */
	COMPAT_MEMFD_FUTURE_WRITE, /* memfd + F_SEAL_FUTURE_WRITE */
	COMPAT_OPENAT2,            /* openat2(2) */
	COMPAT_MSEAL,              /* mseal(2) */
	COMPAT_FUTEX_WAITV,        /* futex_waitv(2) */
	COMPAT_FSGSBASE,           /* the CPU and kernel let a thread wrfsbase (AT_HWCAP2) */
	COMPAT_FACCESSAT2,         /* faccessat2(2) with AT_EMPTY_PATH on an O_PATH descriptor */
	COMPAT_MM_MAP,             /* prctl(PR_SET_MM, PR_SET_MM_MAP): the program's argv in /proc/self/cmdline */
	COMPAT_ADDFD,              /* SECCOMP_IOCTL_NOTIF_ADDFD with SECCOMP_ADDFD_FLAG_SETFD (5.9) */
	COMPAT_NFEATURES,
};

enum compat_state {
	COMPAT_ABSENT,     /* the kernel does not have it */
	COMPAT_PRESENT,    /* the kernel has it and it is not forced off */
	COMPAT_FORCED_OFF, /* off by $SANDPIT_KERNEL (not probed) */
};

/* Parses $SANDPIT_KERNEL and runs the probes (but the lazy ones), once;
 * later calls return the first call's result.  0, or -EINVAL with a message
 * naming the bad token.  err may be NULL. */
int compat_init(char *err, size_t errlen);

/* These call compat_init() if nobody has; after a failed compat_init every
 * feature reads as absent. */
enum compat_state compat_state(enum compat_feature f);
int compat_has(enum compat_feature f); /* present and not forced off */
/* A lazy feature's state without its probe: forced off, absent because what
 * it needs is, or (not yet known) present; and what its user found by using
 * it, which then stands for the probe.  Start-up tries SECCOMP_ADDFD this
 * way (user/start/notifier.c) rather than pay a child process for it. */
enum compat_state compat_state_unprobed(enum compat_feature f);
void compat_learned(enum compat_feature f, int present);
int compat_landlock_abi(void);         /* Landlock ABI version, 0 without it */

/* The feature's stable short name ("tsync"), as used in no-<name>. */
const char *compat_name(enum compat_feature f);
/* What sandpit does without the feature, one short phrase. */
const char *compat_fallback(enum compat_feature f);

/* The table `sandpit probe` prints: which $SANDPIT_KERNEL was applied, then
 * one line a feature with its state and the fallback in use. */
void compat_print_table(FILE *f);

/* Test-only: forget the cached probes so that compat_init runs again. */
void compat_reset(void);

#endif
