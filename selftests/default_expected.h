/* What the built-in default policy must be, call by call: the C tables the
 * default was built from before policy/default.policy replaced them,
 * kept here as the expectation that policyfile_test compares the compiled
 * file against.  Change both together, on purpose. */
#ifndef SANDPIT_SELFTEST_DEFAULT_EXPECTED_H
#define SANDPIT_SELFTEST_DEFAULT_EXPECTED_H
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include "policy/policy.h"

#define N POLICY_NOARG
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* seccomp strict mode lets U make these itself */
static const char *const x_native_calls[] = { "read", "write", "exit", "rt_sigreturn" };

static const char *const x_allow_calls[] = {
	/* I/O on descriptors U already holds */
	"pread64", "pwrite64", "readv", "writev", "preadv", "pwritev", "preadv2", "pwritev2",
	"lseek", "fstat", "fstatfs", "fsync", "fdatasync",
	/* a held file's extended attributes, as fstat its other metadata */
	"fgetxattr", "flistxattr",
	/* files U already holds: locks, caching hints, write-back */
	"flock", "fadvise64", "readahead", "sync_file_range", "syncfs", "sync", "cachestat",
	/* who and where am I */
	"getpid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getgroups",
	"getresuid", "getresgid", "getpgrp", "getpgid", "getsid", "uname", "getcwd",
	"getrlimit", "getrusage", "times", "sysinfo", "getcpu", "sched_getaffinity",
	"sched_getparam", "sched_getscheduler", "sched_get_priority_max",
	"sched_get_priority_min", "sched_rr_get_interval", "getpriority", "ioprio_get",
	"sched_getattr", "capget", "get_thread_area",
	/* the process as a whole */
	"umask", "setsid",
	/* time */
	"clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
	"alarm", "setitimer", "getitimer", "rt_sigpending", "timerfd_create", "timerfd_settime",
	"timerfd_gettime", "timer_settime", "timer_gettime", "timer_getoverrun", "timer_delete",
	/* waiting and events; the descriptors they create are U's */
	"sched_yield", "poll", "ppoll", "select", "pselect6", "epoll_create",
	"epoll_create1", "epoll_wait", "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2",
	"pipe", "pipe2", "wait4", "waitid", "pause", "signalfd", "signalfd4", "inotify_init",
	"inotify_init1", "inotify_rm_watch",
	/* socketpair sockets */
	"getsockname", "getpeername", "getsockopt",
	/* memory: the kernel never places these over an existing mapping */
	"brk", "mincore", "getrandom", "restart_syscall", "exit_group",
	/* memory written back, pinned, placed or queried, never changed */
	"msync", "mlock", "mlock2", "munlock", "mlockall", "munlockall", "mbind",
	"set_mempolicy_home_node", "get_mempolicy", "memfd_create", "pkey_free",
};

#define FD_FREE(a) { .op = RULE_FD_FREE, .arg = (a), .arg2 = N, .carg = N, .err = EBADF }
#define RANGE_FREE(a, len) { .op = RULE_RANGE_FREE, .arg = (a), .arg2 = (len), .carg = N }
#define RANGE_FREE_IF(a, len, c, m) \
	{ .op = RULE_RANGE_FREE, .arg = (a), .arg2 = (len), .carg = (c), .cmask = (m) }
#define EQ(a, v) { .op = RULE_MASKED_EQ, .arg = (a), .arg2 = N, .carg = N, .mask = ~0ULL, .val = (v) }
#define EQ_IF(a, v, c, m) \
	{ .op = RULE_MASKED_EQ, .arg = (a), .arg2 = N, .carg = (c), .mask = ~0ULL, .val = (v), .cmask = (m) }
#define BITSET(a, base, bits) \
	{ .op = RULE_BITSET, .arg = (a), .arg2 = N, .carg = N, .mask = (bits), .val = (base) }
#define BITSET_IF(a, base, bits, c, m)                                                    \
	{ .op = RULE_BITSET, .arg = (a), .arg2 = N, .carg = (c), .mask = (bits), .val = (base), \
	  .cmask = (m) }
#define BIT(v, base) (1ULL << ((v) - (base)))
#define EQ_ERR(a, v, e) \
	{ .op = RULE_MASKED_EQ, .arg = (a), .arg2 = N, .carg = N, .mask = ~0ULL, .val = (v), .err = (e) }
#define NE_MASKED(a, m, v) { .op = RULE_MASKED_NE, .arg = (a), .arg2 = N, .carg = N, .mask = (m), .val = (v) }
/* mmap never maps executable memory (mprotect does, after the patcher) */
#define NO_EXEC(a) { .op = RULE_MASK_ZERO, .arg = (a), .arg2 = N, .carg = N, .mask = PROT_EXEC, .err = EACCES }
#define SELF_PID(a) { .op = RULE_SELF_PID, .arg = (a), .arg2 = N, .carg = N }
#define U_TID(a) { .op = RULE_U_TID, .arg = (a), .arg2 = N, .carg = N, .err = ESRCH }

/* fcntl commands 0..7 are F_DUPFD .. F_SETLKW; the others allowed are
 * F_DUPFD_CLOEXEC, F_SETPIPE_SZ, F_GETPIPE_SZ, F_ADD_SEALS, F_GET_SEALS
 * (1030..1034) */
_Static_assert(F_DUPFD == 0 && F_GETFD == 1 && F_SETFD == 2 && F_GETFL == 3 && F_SETFL == 4 &&
		       F_GETLK == 5 && F_SETLK == 6 && F_SETLKW == 7,
	       "fcntl command numbers");
_Static_assert(F_DUPFD_CLOEXEC == 1030 && F_SETPIPE_SZ == 1031 && F_GETPIPE_SZ == 1032 &&
		       F_ADD_SEALS == 1033 && F_GET_SEALS == 1034,
	       "fcntl command numbers above 1024");

static const struct thread_call {
	const char *name;
	int err;
	struct policy_rule rules[POLICY_MAX_RULES];
} x_thread_calls[] = {
	/* never over sandpit's pages, never a mapping of sandpit's descriptors */
	/* new code is mapped without PROT_EXEC, patched, then made
	 * executable with mprotect (user/untrusted/exec_patch.c) */
	{ "mmap", EPERM, { FD_FREE(4), RANGE_FREE_IF(0, 1, 3, MAP_FIXED), NO_EXEC(2) } },
	{ "mprotect", EPERM, { RANGE_FREE(0, 1) } },
	{ "pkey_mprotect", EPERM, { RANGE_FREE(0, 1) } },
	{ "munmap", EPERM, { RANGE_FREE(0, 1) } },
	{ "madvise", EPERM, { RANGE_FREE(0, 1) } },
	{ "mremap", EPERM, { RANGE_FREE(0, 1), RANGE_FREE_IF(4, 2, 3, MREMAP_FIXED) } },
	{ "remap_file_pages", EPERM, { RANGE_FREE(0, 1) } },
	/* B's doorbell and T's verdict word are futexes in sandpit's pages:
	 * U may not wake them (only T may ring B), nor requeue onto them */
	{ "futex", EPERM,
	  { RANGE_FREE(0, N), NE_MASKED(1, 0x7f, FUTEX_REQUEUE), NE_MASKED(1, 0x7f, FUTEX_CMP_REQUEUE),
	    NE_MASKED(1, 0x7f, FUTEX_WAKE_OP), NE_MASKED(1, 0x7f, FUTEX_WAIT_REQUEUE_PI),
	    NE_MASKED(1, 0x7f, FUTEX_CMP_REQUEUE_PI) } },
	/* sandpit's descriptors are not U's to close, replace or change */
	{ "close", EBADF, { FD_FREE(0) } },
	{ "dup", EBADF, { FD_FREE(0) } },
	{ "dup2", EBADF, { FD_FREE(0), FD_FREE(1) } },
	{ "dup3", EBADF, { FD_FREE(0), FD_FREE(1) } },
	{ "fcntl", EINVAL,
	  { FD_FREE(0), BITSET_IF(1, F_DUPFD_CLOEXEC,
				  BIT(F_DUPFD_CLOEXEC, F_DUPFD_CLOEXEC) |
					  BIT(F_SETPIPE_SZ, F_DUPFD_CLOEXEC) |
					  BIT(F_GETPIPE_SZ, F_DUPFD_CLOEXEC) |
					  BIT(F_ADD_SEALS, F_DUPFD_CLOEXEC) |
					  BIT(F_GET_SEALS, F_DUPFD_CLOEXEC),
				  1, ~7ULL) } },
	{ "ioctl", ENOTTY,
	  { FD_FREE(0), BITSET(1, TCGETS,
			       BIT(TCGETS, TCGETS) | BIT(TIOCGWINSZ, TCGETS) |
				       BIT(FIONREAD, TCGETS) | BIT(FIONBIO, TCGETS)) } },
	{ "getdents64", EBADF, { FD_FREE(0) } },
	/* B reads P's cwd when it checks a relative path, and hands T absolute ones */
	{ "fchdir", EBADF, { FD_FREE(0) } },
	{ "ftruncate", EBADF, { FD_FREE(0) } },
	{ "fallocate", EBADF, { FD_FREE(0) } },
	{ "shutdown", EBADF, { FD_FREE(0) } },
	{ "recvfrom", EBADF, { FD_FREE(0) } },
	{ "recvmsg", EBADF, { FD_FREE(0) } },
	{ "epoll_ctl", EBADF, { FD_FREE(2) } },
	{ "getdents", EBADF, { FD_FREE(0) } },
	{ "recvmmsg", EBADF, { FD_FREE(0) } },
	/* data between U's descriptors */
	{ "sendfile", EBADF, { FD_FREE(0), FD_FREE(1) } },
	{ "splice", EBADF, { FD_FREE(0), FD_FREE(2) } },
	{ "tee", EBADF, { FD_FREE(0), FD_FREE(1) } },
	{ "vmsplice", EBADF, { FD_FREE(0) } },
	{ "copy_file_range", EBADF, { FD_FREE(0), FD_FREE(2) } },
	/* P's own process group; POSIX timers only with a NULL sigevent
	 * (SIGEV_THREAD_ID could name T) */
	{ "setpgid", EPERM, { EQ(0, 0), EQ(1, 0) } },
	{ "timer_create", EPERM, { EQ_ERR(1, 0, EPERM) } },
	/* barriers on P's own threads */
	{ "membarrier", EINVAL,
	  { BITSET(0, MEMBARRIER_CMD_QUERY,
		   BIT(MEMBARRIER_CMD_QUERY, 0) | BIT(MEMBARRIER_CMD_GLOBAL, 0) |
			   BIT(MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) |
			   BIT(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0)) } },
	/* an address would reach a named AF_UNIX socket outside */
	{ "sendto", EACCES, { EQ(4, 0) } },
	{ "socketpair", EACCES, { EQ(0, AF_UNIX) } },
	/* AF_UNIX only, until a connect grant makes it B's */
	{ "socket", EAFNOSUPPORT, { EQ(0, AF_UNIX) } },
	/* signals stay within P and never reach a trusted thread */
	{ "kill", EPERM, { SELF_PID(0) } },
	{ "tgkill", EPERM, { SELF_PID(0), U_TID(1) } },
	{ "prctl", EPERM,
	  { BITSET(0, 0, BIT(PR_GET_DUMPABLE, 0) | BIT(PR_SET_NAME, 0) | BIT(PR_GET_NAME, 0)) } },
};

static const struct process_call {
	const char *name;
	struct policy_proc_arg a;
} x_process_calls[] = {
	{ "open", { PK_PATH, 0, N, 1, PA_OPEN, 0 } },
	{ "openat", { PK_PATH, 1, 0, 2, PA_OPEN, 0 } },
	{ "stat", { PK_PATH, 0, N, N, PA_READ, 0 } },
	{ "lstat", { PK_PATH, 0, N, N, PA_READ, 1 } },
	{ "newfstatat", { PK_PATH, 1, 0, 3, PA_READ, 0 } },
	{ "statx", { PK_PATH, 1, 0, 2, PA_READ, 0 } },
	{ "statfs", { PK_PATH, 0, N, N, PA_READ, 0 } },
	{ "access", { PK_PATH, 0, N, N, PA_READ, 0 } },
	{ "faccessat", { PK_PATH, 1, 0, N, PA_READ, 0 } },
	{ "faccessat2", { PK_PATH, 1, 0, 3, PA_READ, 0 } },
	{ "readlink", { PK_PATH, 0, N, N, PA_READ, 1 } },
	{ "readlinkat", { PK_PATH, 1, 0, N, PA_READ, 1 } },
	{ "chdir", { PK_PATH, 0, N, N, PA_READ, 0 } },
	{ "getxattr", { PK_PATH, 0, N, N, PA_READ, 0 } },
	{ "lgetxattr", { PK_PATH, 0, N, N, PA_READ, 1 } },
	{ "listxattr", { PK_PATH, 0, N, N, PA_READ, 0 } },
	{ "llistxattr", { PK_PATH, 0, N, N, PA_READ, 1 } },
	/* inside write grants, made by B itself */
	{ "mkdir", { PK_PATH_OP, 0, N, N, PA_WRITE, 1 } },
	{ "mkdirat", { PK_PATH_OP, 1, 0, N, PA_WRITE, 1 } },
	{ "mknod", { PK_PATH_OP, 0, N, N, PA_WRITE, 1 } },
	{ "mknodat", { PK_PATH_OP, 1, 0, N, PA_WRITE, 1 } },
	{ "unlink", { PK_PATH_OP, 0, N, N, PA_WRITE, 1 } },
	{ "unlinkat", { PK_PATH_OP, 1, 0, 2, PA_WRITE, 1 } },
	{ "rmdir", { PK_PATH_OP, 0, N, N, PA_WRITE, 1 } },
	{ "rename", { PK_PATH_OP, 0, N, N, PA_WRITE, 1 } },
	{ "renameat", { PK_PATH_OP, 1, 0, N, PA_WRITE, 1 } },
	{ "renameat2", { PK_PATH_OP, 1, 0, N, PA_WRITE, 1 } },
	{ "link", { PK_PATH_OP, 0, N, N, PA_WRITE, 1 } },
	{ "linkat", { PK_PATH_OP, 1, 0, 4, PA_WRITE, 1 } },
	{ "symlink", { PK_PATH_OP, 1, N, N, PA_WRITE, 1 } },
	{ "symlinkat", { PK_PATH_OP, 2, 1, N, PA_WRITE, 1 } },
	{ "chmod", { PK_PATH_OP, 0, N, N, PA_WRITE, 1 } },
	{ "fchmodat", { PK_PATH_OP, 1, 0, N, PA_WRITE, 1 } },
	{ "fchmodat2", { PK_PATH_OP, 1, 0, 3, PA_WRITE, 1 } },
	{ "truncate", { PK_PATH_OP, 0, N, N, PA_WRITE, 1 } },
	{ "utimensat", { PK_PATH_OP, 1, 0, 3, PA_WRITE, 1 } },
	/* a descriptor's file, as its path */
	{ "fchmod", { PK_PATH_OP, N, 0, N, PA_WRITE, 1 } },
	{ "fchown", { PK_PATH_OP, N, 0, N, PA_WRITE, 1 } },
	{ "fsetxattr", { PK_PATH_OP, N, 0, N, PA_WRITE, 1 } },
	{ "fremovexattr", { PK_PATH_OP, N, 0, N, PA_WRITE, 1 } },
	/* owners and attributes by path, as by descriptor; creat as its open */
	{ "chown", { PK_PATH_OP, 0, N, N, PA_WRITE, 1 } },
	{ "lchown", { PK_PATH_OP, 0, N, N, PA_WRITE, 1 } },
	{ "fchownat", { PK_PATH_OP, 1, 0, 4, PA_WRITE, 1 } },
	{ "setxattr", { PK_PATH_OP, 0, N, N, PA_WRITE, 1 } },
	{ "lsetxattr", { PK_PATH_OP, 0, N, N, PA_WRITE, 1 } },
	{ "removexattr", { PK_PATH_OP, 0, N, N, PA_WRITE, 1 } },
	{ "lremovexattr", { PK_PATH_OP, 0, N, N, PA_WRITE, 1 } },
	{ "creat", { PK_PATH, 0, N, N, PA_WRITE, 0 } },
	{ "rt_sigaction", { PK_SIGACTION, N, N, N, 0, 0 } },
	/* threads only, each with its own T (invariant 4); fork is EPERM */
	{ "clone", { PK_CLONE, N, N, N, 0, 0 } },
	/* the process's own limits, lowered or kept, never raised */
	{ "setrlimit", { PK_RLIMIT, N, N, N, 0, 0 } },
	{ "prlimit64", { PK_RLIMIT, N, N, N, 0, 0 } },
	/* the family, the address against the connect grants, SCM_RIGHTS,
	 * no source route */
	{ "connect", { PK_NET, N, N, N, 0, 0 } },
	{ "sendmsg", { PK_NET, N, N, N, 0, 0 } },
	{ "setsockopt", { PK_NET, N, N, N, 0, 0 } },
};

static const struct x_deny_calls {
	int err;
	const char *const *names;
} x_deny_calls[] = {
	{ EACCES, (const char *const[]){
		/* no exec; no socket named, no server */
		"execve", "execveat", "bind", "listen", "accept", "accept4",
		/* each message's length is written back */
		"sendmmsg",
		/* nothing else is changed: legacy forms */
		"utime", "utimes", "futimesat",
		/* a path the trusted process has no check for */
		"inotify_add_watch",
		/* SysV IPC and POSIX message queues: shared outside the grants */
		"shmget", "shmat", "shmctl", "semget", "semop", "semtimedop", "semctl", "msgget",
		"msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink", NULL } },
	{ EPERM, (const char *const[]){
		"ptrace", "process_vm_readv", "process_vm_writev", "seccomp", "kcmp",
		"pidfd_open", "pidfd_getfd", "process_madvise", "pidfd_send_signal",
		"process_mrelease", "migrate_pages", "move_pages", "get_robust_list",
		/* threads and processes: not yet */
		"fork", "vfork",
		/* they would act on T, not U */
		"arch_prctl", "set_tid_address", "set_robust_list",
		"rt_sigprocmask", "sigaltstack", "tkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
		"sched_setaffinity", "sched_setparam", "sched_setscheduler",
		"setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setfsuid",
		"setfsgid", "setgroups", "capset", "rt_sigsuspend", "rt_sigtimedwait",
		"set_thread_area", "set_mempolicy", "sched_setattr", "setpriority", "ioprio_set",
		/* paths that bypass the path checks */
		"open_by_handle_at", "name_to_handle_at",
		/* the system, not the process */
		"personality", "unshare", "setns", "mount", "umount2", "pivot_root", "chroot",
		"reboot", "kexec_load", "kexec_file_load", "init_module", "finit_module",
		"delete_module", "bpf", "perf_event_open", "io_uring_setup", "io_uring_enter",
		"io_uring_register", "userfaultfd", "modify_ldt", "iopl", "ioperm", "swapon",
		"swapoff", "acct", "syslog", "settimeofday", "clock_settime", "adjtimex",
		"clock_adjtime", "sethostname", "setdomainname", "quotactl", "keyctl", "add_key",
		"request_key", "fanotify_init", "fanotify_mark", "vhangup", "lookup_dcookie",
		"fsopen", "fsconfig", "fsmount", "fspick", "open_tree", "move_mount",
		"mount_setattr", "quotactl_fd", NULL } },
	{ EOPNOTSUPP, (const char *const[]){
		/* Landlock as when it is off at boot; shadow stacks as without the CPU's */
		"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
		"map_shadow_stack", NULL } },
	{ EINVAL, (const char *const[]){ "shmdt", NULL } },
	{ EBADF, (const char *const[]){
		/* no queue can be opened */
		"mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr", NULL } },
	{ ENOSPC, (const char *const[]){ "pkey_alloc", NULL } },
	{ ENOSYS, (const char *const[]){
		/* glibc then falls back to clone (invariant 4) */
		"clone3",
		/* its flags live in memory */
		"openat2",
		/* asynchronous I/O and futex2: callers fall back */
		"io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents",
		"futex_wait", "futex_wake", "futex_waitv", "futex_requeue", "memfd_secret",
		/* obsolete, or in no x86-64 kernel */
		"uselib", "ustat", "sysfs", "_sysctl", "create_module", "get_kernel_syms",
		"query_module", "nfsservctl", "getpmsg", "putpmsg", "afs_syscall", "tuxcall",
		"security", "vserver", "epoll_ctl_old", "epoll_wait_old", NULL } },
};

static const char *const x_default_read[] = {
	"/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/dev/zero", "/dev/urandom",
	"/proc/self", "/sys/devices/system/cpu",
};


/* The expected policy, through the model's own API (no guards, no parser). */
static inline struct policy *expected_default(void)
{
	struct policy *p;

	if (policy_new(&p) < 0)
		abort();
#define X_OK_(e) do { if ((e) < 0) abort(); } while (0)
	for (size_t i = 0; i < NELEM(x_native_calls); i++)
		X_OK_(policy_set(p, x_native_calls[i], POLICY_NATIVE, 0, NULL, 0));
	for (size_t i = 0; i < NELEM(x_allow_calls); i++)
		X_OK_(policy_set(p, x_allow_calls[i], POLICY_ALLOW, 0, NULL, 0));
	for (size_t i = 0; i < NELEM(x_thread_calls); i++) {
		const struct thread_call *t = &x_thread_calls[i];

		X_OK_(policy_set(p, t->name, POLICY_THREAD, t->err, NULL, 0));
		for (int j = 0; j < POLICY_MAX_RULES && t->rules[j].op; j++)
			X_OK_(policy_add_rule(p, t->name, &t->rules[j], NULL, 0));
	}
	for (size_t i = 0; i < NELEM(x_process_calls); i++)
		X_OK_(policy_set_process(p, x_process_calls[i].name, &x_process_calls[i].a, NULL, 0));
	X_OK_(policy_set(p, "rseq", POLICY_EMU, POLICY_EMU_ZERO, NULL, 0));
	X_OK_(policy_set(p, "gettid", POLICY_EMU, POLICY_EMU_GETTID, NULL, 0));
	X_OK_(policy_set(p, "close_range", POLICY_EMU, POLICY_EMU_CLOSE_RANGE, NULL, 0));
	for (size_t i = 0; i < NELEM(x_deny_calls); i++)
		for (const char *const *n = x_deny_calls[i].names; *n; n++)
			X_OK_(policy_set(p, *n, POLICY_DENY, x_deny_calls[i].err, NULL, 0));
	for (size_t i = 0; i < NELEM(x_default_read); i++)
		X_OK_(policy_grant(p, x_default_read[i], 0, NULL, 0));
	X_OK_(policy_grant(p, "/dev/null", 1, NULL, 0));
#undef X_OK_
	return p;
}

#undef N
#endif
