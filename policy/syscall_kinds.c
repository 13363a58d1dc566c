/* What every system call's arguments are, and what it acts on besides
 * them: one entry for each call libseccomp knows for x86-64 (guard_test
 * fails when a libseccomp knows one more).  This is the data the guard
 * (policy/guard.c) is derived from, so that a call nobody thought of gets
 * the guard its arguments call for, or none is allowed at all: a pointer
 * whose content the kernel acts on needs B, a pid needs "itself", a
 * descriptor that is changed needs fd_free, a range that is changed needs
 * range_free, and effects on T, other processes or the system are never
 * carried out unless guard.c knows rules that make them safe.
 *
 * Names only: numbers come from libseccomp (DESIGN §5). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <seccomp.h>

#include "policy/policy.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#define I    SK_INT
#define F    SK_FD
#define FM   SK_FD_MOD
#define D    SK_DIRFD
#define P    SK_PATH
#define IN   SK_IN
#define OUT  SK_OUT
#define ST   SK_STRUCT
#define ST0  SK_STRUCT0
#define MASK SK_SIGMASK
#define A    SK_ADDR
#define VA   SK_VADDR
#define UA   SK_UADDR
#define PID  SK_PID
#define PID0 SK_PID0
#define PI   SK_PID_INFO
#define TID  SK_TID
#define CH   SK_CHILD
#define SIG  SK_SIG
#define Q    SK_QUERY
#define MO   SK_MODE
#define OF   SK_OFLAGS
#define AF   SK_ATFLAGS
#define HOW  SK_OHOW

#define CALLER SE_CALLER
#define OTHER  SE_OTHER
#define SYSTEM SE_SYSTEM
#define SPAWN  SE_SPAWN
#define EXEC   SE_EXEC
#define MUX    SE_MUX
#define PROC   SE_PROC
#define NOSYS  SE_NOSYS

#define C(name, effects, ...) { name, effects, { __VA_ARGS__ } }

/* In x86-64 number order.  An iovec, pollfd or fd_set is plain memory:
 * the kernel only moves data through the buffers it names, in P. */
static const struct syscall_kinds table[] = {
	C("read", 0, F, OUT, I),
	C("write", 0, F, IN, I),
	C("open", 0, P, OF, I),
	C("close", 0, FM),
	C("stat", 0, P, OUT),
	C("fstat", 0, F, OUT),
	C("lstat", 0, P, OUT),
	C("poll", 0, OUT, I, I),
	C("lseek", 0, F, I, I),
	C("mmap", 0, A, I, I, I, FM, I),
	C("mprotect", 0, A, I, I),
	C("munmap", 0, A, I),
	/* the kernel never moves the break over another mapping, and shrinking
	 * it unmaps only the heap */
	C("brk", 0, I),
	/* the handler would run U's choice wherever it points (B checks it) */
	C("rt_sigaction", PROC, SIG, ST, OUT, I),
	C("rt_sigprocmask", CALLER, I, IN, OUT, I),
	/* U makes it itself (seccomp strict allows it) */
	C("rt_sigreturn", 0),
	C("ioctl", MUX, FM, I, I),
	C("pread64", 0, F, OUT, I, I),
	C("pwrite64", 0, F, IN, I, I),
	C("readv", 0, F, OUT, I),
	C("writev", 0, F, IN, I),
	C("access", 0, P, I),
	C("pipe", 0, OUT),
	C("select", 0, I, OUT, OUT, OUT, IN),
	C("sched_yield", 0),
	C("mremap", 0, A, I, I, I, A),
	C("msync", 0, VA, I, I),
	C("mincore", 0, VA, I, OUT),
	/* MADV_DONTNEED and others clear pages */
	C("madvise", 0, A, I, I),
	/* SysV IPC objects are shared with every process by key or id, with no
	 * path the grants could check */
	C("shmget", OTHER, I, I, I),
	C("shmat", OTHER, I, A, I),
	C("shmctl", OTHER | MUX, I, I, ST),
	C("dup", 0, FM),
	C("dup2", 0, FM, FM),
	C("pause", 0),
	C("nanosleep", 0, IN, OUT),
	C("getitimer", 0, I, OUT),
	C("alarm", PROC, I),
	C("setitimer", PROC, I, IN, OUT),
	C("getpid", 0),
	C("sendfile", 0, FM, FM, OUT, I),
	C("socket", 0, I, I, I),
	/* a socket address may name a path or another process's socket */
	C("connect", 0, F, ST, I),
	C("accept", 0, FM, OUT, OUT),
	C("sendto", 0, F, IN, I, I, ST0, I),
	C("recvfrom", 0, FM, OUT, I, I, OUT, OUT),
	/* SCM_RIGHTS in the control data */
	C("sendmsg", 0, F, ST, I),
	C("recvmsg", 0, FM, OUT, I),
	C("shutdown", 0, FM, I),
	C("bind", 0, F, ST, I),
	C("listen", 0, FM, I),
	C("getsockname", 0, F, OUT, OUT),
	C("getpeername", 0, F, OUT, OUT),
	C("socketpair", 0, I, I, I, OUT),
	C("setsockopt", 0, FM, I, I, IN, I),
	C("getsockopt", 0, F, I, I, OUT, OUT),
	C("clone", SPAWN, I, VA, OUT, OUT, I),
	C("fork", SPAWN),
	C("vfork", SPAWN),
	C("execve", EXEC, P, ST, ST),
	/* U makes it itself (seccomp strict allows it) */
	C("exit", 0, I),
	C("wait4", 0, CH, OUT, I, OUT),
	C("kill", 0, PID, SIG),
	C("uname", 0, OUT),
	C("semget", OTHER, I, I, I),
	C("semop", OTHER, I, IN, I),
	C("semctl", OTHER | MUX, I, I, I, ST),
	C("shmdt", OTHER, VA),
	C("msgget", OTHER, I, I),
	C("msgsnd", OTHER, I, IN, I, I),
	C("msgrcv", OTHER, I, OUT, I, I, I),
	C("msgctl", OTHER | MUX, I, I, ST),
	/* F_SETOWN, F_SETSIG, F_SETLEASE... */
	C("fcntl", MUX, FM, I, I),
	C("flock", 0, F, I),
	C("fsync", 0, F),
	C("fdatasync", 0, F),
	C("truncate", 0, P, I),
	C("ftruncate", 0, FM, I),
	C("getdents", 0, FM, OUT, I),
	C("getcwd", 0, OUT, I),
	C("chdir", PROC, P),
	C("fchdir", PROC, FM),
	C("rename", 0, P, P),
	C("mkdir", 0, P, I),
	C("rmdir", 0, P),
	C("creat", 0, P, I),
	C("link", 0, P, P),
	C("unlink", 0, P),
	C("symlink", 0, IN, P),
	C("readlink", 0, P, OUT, I),
	C("chmod", 0, P, I),
	C("fchmod", 0, F, MO),
	C("chown", 0, P, I, I),
	C("fchown", 0, F, I, I),
	C("lchown", 0, P, I, I),
	C("umask", PROC, I),
	C("gettimeofday", 0, OUT, OUT),
	C("getrlimit", 0, I, OUT),
	C("getrusage", 0, I, OUT),
	C("sysinfo", 0, OUT),
	C("times", 0, OUT),
	C("ptrace", OTHER | MUX, I, PID, VA, I),
	C("getuid", 0),
	C("syslog", SYSTEM | MUX, I, OUT, I),
	C("getgid", 0),
	/* credentials belong to the thread that changes them: T's */
	C("setuid", CALLER, I),
	C("setgid", CALLER, I),
	C("geteuid", 0),
	C("getegid", 0),
	/* 0, 0: P's own group (pgid 0 means the pid argument) */
	C("setpgid", 0, PID0, PID0),
	C("getppid", 0),
	C("getpgrp", 0),
	C("setsid", PROC),
	C("setreuid", CALLER, I, I),
	C("setregid", CALLER, I, I),
	C("getgroups", 0, I, OUT),
	C("setgroups", CALLER, I, IN),
	C("setresuid", CALLER, I, I, I),
	C("getresuid", 0, OUT, OUT, OUT),
	C("setresgid", CALLER, I, I, I),
	C("getresgid", 0, OUT, OUT, OUT),
	C("getpgid", 0, PI),
	C("setfsuid", CALLER, I),
	C("setfsgid", CALLER, I),
	C("getsid", 0, PI),
	/* the header's pid is only read about */
	C("capget", 0, IN, OUT),
	C("capset", CALLER, IN, IN),
	C("rt_sigpending", 0, OUT, I),
	/* it takes the signals pending for the thread that makes it: T's */
	C("rt_sigtimedwait", CALLER, IN, OUT, IN, I),
	C("rt_sigqueueinfo", 0, PID, SIG, IN),
	C("rt_sigsuspend", CALLER, IN, I),
	C("sigaltstack", CALLER, IN, OUT),
	C("utime", 0, P, IN),
	C("mknod", 0, P, I, I),
	C("uselib", 0, P),
	C("personality", CALLER, I),
	C("ustat", 0, I, OUT),
	C("statfs", 0, P, OUT),
	C("fstatfs", 0, F, OUT),
	C("sysfs", 0, I, IN, OUT),
	C("getpriority", 0, I, PI),
	/* `which` says whether `who` is a thread, a process group or a user */
	C("setpriority", OTHER | MUX, I, PID, I),
	C("sched_setparam", 0, PID, IN),
	C("sched_getparam", 0, PI, OUT),
	C("sched_setscheduler", 0, PID, I, IN),
	C("sched_getscheduler", 0, PI),
	C("sched_get_priority_max", 0, I),
	C("sched_get_priority_min", 0, I),
	C("sched_rr_get_interval", 0, PI, OUT),
	C("mlock", 0, VA, I),
	C("munlock", 0, VA, I),
	C("mlockall", PROC, I),
	C("munlockall", PROC),
	C("vhangup", SYSTEM),
	C("modify_ldt", CALLER, I, IN, I),
	C("pivot_root", SYSTEM, P, P),
	C("_sysctl", NOSYS, ST),
	/* PR_SET_SECCOMP, PR_SET_MM, ... on the calling thread */
	C("prctl", CALLER | MUX, I, I, I, I, I),
	C("arch_prctl", CALLER | MUX, I, I),
	C("adjtimex", SYSTEM, ST),
	C("setrlimit", PROC, I, IN),
	C("chroot", SYSTEM, P),
	C("sync", 0),
	C("acct", SYSTEM, P),
	C("settimeofday", SYSTEM, IN, IN),
	C("mount", SYSTEM, P, P, IN, I, IN),
	C("umount2", SYSTEM, P, I),
	C("swapon", SYSTEM, P, I),
	C("swapoff", SYSTEM, P),
	C("reboot", SYSTEM, I, I, I, IN),
	C("sethostname", SYSTEM, IN, I),
	C("setdomainname", SYSTEM, IN, I),
	C("iopl", SYSTEM | CALLER, I),
	C("ioperm", SYSTEM | CALLER, I, I, I),
	C("create_module", NOSYS),
	C("init_module", SYSTEM, IN, I, IN),
	C("delete_module", SYSTEM, IN, I),
	C("get_kernel_syms", NOSYS),
	C("query_module", NOSYS),
	C("quotactl", SYSTEM | MUX, I, P, I, ST),
	C("nfsservctl", NOSYS),
	C("getpmsg", NOSYS),
	C("putpmsg", NOSYS),
	C("afs_syscall", NOSYS),
	C("tuxcall", NOSYS),
	C("security", NOSYS),
	C("gettid", 0),
	C("readahead", 0, F, I, I),
	C("setxattr", 0, P, IN, IN, I, I),
	C("lsetxattr", 0, P, IN, IN, I, I),
	C("fsetxattr", 0, F, IN, IN, I, I),
	C("getxattr", 0, P, IN, OUT, I),
	C("lgetxattr", 0, P, IN, OUT, I),
	C("fgetxattr", 0, F, IN, OUT, I),
	C("listxattr", 0, P, OUT, I),
	C("llistxattr", 0, P, OUT, I),
	C("flistxattr", 0, F, OUT, I),
	C("removexattr", 0, P, IN),
	C("lremovexattr", 0, P, IN),
	C("fremovexattr", 0, F, IN),
	/* any thread of any process, and no rule can tell which */
	C("tkill", OTHER, PID, SIG),
	C("time", 0, OUT),
	/* FUTEX_WAKE rings B's doorbell; uaddr2 belongs to the requeue and
	 * wake-op commands, which the guard refuses */
	C("futex", MUX, UA, I, I, IN, I, I),
	C("sched_setaffinity", 0, PID, I, IN),
	C("sched_getaffinity", 0, PI, I, OUT),
	C("set_thread_area", CALLER, IN),
	C("io_setup", 0, I, OUT),
	C("io_destroy", 0, I),
	C("io_getevents", 0, I, I, I, OUT, IN),
	/* each iocb names a descriptor (any of sandpit's) and a buffer */
	C("io_submit", 0, I, I, ST),
	C("io_cancel", 0, I, ST, OUT),
	C("get_thread_area", 0, OUT),
	C("lookup_dcookie", SYSTEM, I, OUT, I),
	C("epoll_create", 0, I),
	C("epoll_ctl_old", NOSYS),
	C("epoll_wait_old", NOSYS),
	C("remap_file_pages", 0, A, I, I, I, I),
	C("getdents64", 0, FM, OUT, I),
	/* the kernel writes and wakes it when the caller, T, exits */
	C("set_tid_address", CALLER, ST),
	C("restart_syscall", 0),
	C("semtimedop", OTHER, I, IN, I, IN),
	C("fadvise64", 0, F, I, I, I),
	/* SIGEV_THREAD_ID would send its signal to any thread, T included */
	C("timer_create", 0, I, ST0, OUT),
	C("timer_settime", 0, I, I, IN, OUT),
	C("timer_gettime", 0, I, OUT),
	C("timer_getoverrun", 0, I),
	C("timer_delete", 0, I),
	C("clock_settime", SYSTEM, I, IN),
	C("clock_gettime", 0, I, OUT),
	C("clock_getres", 0, I, OUT),
	C("clock_nanosleep", 0, I, I, IN, OUT),
	C("exit_group", 0, I),
	C("epoll_wait", 0, F, OUT, I, I),
	C("epoll_ctl", 0, F, I, FM, IN),
	C("tgkill", 0, PID, TID, SIG),
	C("utimes", 0, P, IN),
	C("vserver", NOSYS),
	C("mbind", 0, VA, I, I, IN, I, I),
	C("set_mempolicy", CALLER, I, IN, I),
	C("get_mempolicy", 0, OUT, OUT, I, VA, I),
	/* message queues are named system-wide, outside the path grants */
	C("mq_open", OTHER, IN, I, I, IN),
	C("mq_unlink", OTHER, IN),
	C("mq_timedsend", 0, F, IN, I, I, IN),
	C("mq_timedreceive", 0, F, OUT, I, OUT, IN),
	C("mq_notify", 0, F, ST0),
	C("mq_getsetattr", 0, F, IN, OUT),
	C("kexec_load", SYSTEM, I, I, ST, I),
	C("waitid", 0, I, CH, OUT, I, OUT),
	/* keyrings are shared with the user's other processes */
	C("add_key", OTHER, IN, IN, IN, I, I),
	C("request_key", OTHER, IN, IN, IN, I),
	C("keyctl", OTHER | MUX, I, I, I, I, I),
	/* as setpriority: a thread, a process group or a user's every process */
	C("ioprio_set", OTHER | MUX, I, PID, I),
	C("ioprio_get", 0, I, PI),
	C("inotify_init", 0),
	C("inotify_add_watch", 0, F, P, I),
	C("inotify_rm_watch", 0, F, I),
	C("migrate_pages", OTHER, PID, I, IN, IN),
	C("openat", 0, D, P, OF, I),
	C("mkdirat", 0, D, P, I),
	C("mknodat", 0, D, P, I, I),
	C("fchownat", 0, D, P, I, I, AF),
	C("futimesat", 0, D, P, IN),
	C("newfstatat", 0, D, P, OUT, AF),
	C("unlinkat", 0, D, P, AF),
	C("renameat", 0, D, P, D, P),
	C("linkat", 0, D, P, D, P, AF),
	C("symlinkat", 0, IN, D, P),
	C("readlinkat", 0, D, P, OUT, I),
	C("fchmodat", 0, D, P, I),
	C("faccessat", 0, D, P, I),
	/* the mask sits in a struct { sigset, size } */
	C("pselect6", 0, I, OUT, OUT, OUT, IN, MASK),
	C("ppoll", 0, OUT, I, IN, MASK, I),
	C("unshare", CALLER, I),
	/* the kernel walks the list when the caller, T, exits */
	C("set_robust_list", CALLER, ST, I),
	/* another thread's list head, an address in its memory */
	C("get_robust_list", 0, PID, OUT, OUT),
	C("splice", 0, FM, IN, FM, IN, I, I),
	C("tee", 0, FM, FM, I, I),
	C("sync_file_range", 0, F, I, I, I),
	C("vmsplice", 0, FM, IN, I, I),
	C("move_pages", OTHER, PID, I, IN, IN, OUT, I),
	C("utimensat", 0, D, P, IN, AF),
	C("epoll_pwait", 0, F, OUT, I, I, MASK, I),
	C("signalfd", 0, F, IN, I),
	C("timerfd_create", 0, I, I),
	C("eventfd", 0, I),
	/* punching a hole in the secure page's memfd would fault T and B */
	C("fallocate", 0, FM, I, I, I),
	C("timerfd_settime", 0, F, I, IN, OUT),
	C("timerfd_gettime", 0, F, OUT),
	C("accept4", 0, FM, OUT, OUT, I),
	C("signalfd4", 0, F, IN, I, I),
	C("eventfd2", 0, I, I),
	C("epoll_create1", 0, I),
	C("dup3", 0, FM, FM, I),
	C("pipe2", 0, OUT, I),
	C("inotify_init1", 0, I),
	C("preadv", 0, F, OUT, I, I, I),
	C("pwritev", 0, F, IN, I, I, I),
	C("rt_tgsigqueueinfo", 0, PID, TID, SIG, IN),
	/* an event can stop or signal any thread, T included */
	C("perf_event_open", OTHER | CALLER, ST, PID, I, F, I),
	C("recvmmsg", 0, FM, OUT, I, I, IN),
	C("fanotify_init", SYSTEM, I, I),
	C("fanotify_mark", 0, F, I, I, D, P),
	/* setting a limit acts on the process arg0 names (reading does not) */
	C("prlimit64", PROC, PID0, I, Q, OUT),
	C("name_to_handle_at", 0, D, P, OUT, OUT, I),
	/* CAP_DAC_READ_SEARCH, checked before the descriptor */
	C("open_by_handle_at", SYSTEM, F, ST, I),
	C("clock_adjtime", SYSTEM, I, ST),
	C("syncfs", 0, F),
	C("sendmmsg", 0, F, ST, I, I),
	C("setns", CALLER, FM, I),
	C("getcpu", 0, OUT, OUT, OUT),
	C("process_vm_readv", OTHER, PID, OUT, I, IN, I, I),
	C("process_vm_writev", OTHER, PID, IN, I, IN, I, I),
	C("kcmp", OTHER, PID, PID, I, I, I),
	C("finit_module", SYSTEM, F, IN, I),
	C("sched_setattr", 0, PID, IN, I),
	C("sched_getattr", 0, PI, OUT, I, I),
	C("renameat2", 0, D, P, D, P, I),
	C("seccomp", CALLER | MUX, I, I, ST),
	C("getrandom", 0, OUT, I, I),
	C("memfd_create", 0, IN, I),
	C("kexec_file_load", SYSTEM, F, F, I, IN, I),
	C("bpf", SYSTEM | MUX, I, ST, I),
	C("execveat", EXEC, D, P, ST, ST, AF),
	/* its ioctls decide what faulting pages contain, T's faults included */
	C("userfaultfd", MUX, I),
	C("membarrier", 0, I, I, I),
	C("mlock2", 0, VA, I, I),
	C("copy_file_range", 0, FM, IN, FM, IN, I, I),
	C("preadv2", 0, F, OUT, I, I, I, I),
	C("pwritev2", 0, F, IN, I, I, I, I),
	C("pkey_mprotect", 0, A, I, I, I),
	/* it sets the new key's rights in the caller's PKRU: T's */
	C("pkey_alloc", CALLER, I, I),
	C("pkey_free", 0, I),
	C("statx", 0, D, P, AF, I, OUT),
	C("io_pgetevents", 0, I, I, I, OUT, IN, MASK),
	/* the kernel would run U's abort handler on the caller, T */
	C("rseq", CALLER, ST, I, I, I),
	C("pidfd_send_signal", OTHER, F, SIG, IN, I),
	/* the kernel's workers make whatever calls the ring asks for, unchecked */
	C("io_uring_setup", MUX, I, ST),
	C("io_uring_enter", MUX, F, I, I, I, IN, I),
	C("io_uring_register", MUX, F, I, ST, I),
	C("open_tree", SYSTEM, D, P, I),
	C("move_mount", SYSTEM, D, P, D, P, I),
	C("fsopen", SYSTEM, IN, I),
	C("fsconfig", SYSTEM, F, I, IN, IN, I),
	C("fsmount", SYSTEM, F, I, I),
	C("fspick", SYSTEM, D, P, I),
	C("pidfd_open", OTHER, PID, I),
	C("clone3", SPAWN, ST, I),
	/* every descriptor from arg0 to arg1, closed or unshared as flags say */
	C("close_range", MUX, FM, FM, I),
	C("openat2", 0, D, P, HOW, I),
	C("pidfd_getfd", OTHER, F, I, I),
	C("faccessat2", 0, D, P, I, AF),
	C("process_madvise", OTHER, F, IN, I, I, I),
	C("epoll_pwait2", 0, F, OUT, I, IN, MASK, I),
	C("mount_setattr", SYSTEM, D, P, I, ST, I),
	C("quotactl_fd", SYSTEM | MUX, F, I, I, ST),
	C("landlock_create_ruleset", 0, IN, I, I),
	/* the rule holds a descriptor */
	C("landlock_add_rule", 0, F, I, ST, I),
	C("landlock_restrict_self", CALLER, F, I),
	C("memfd_secret", 0, I),
	C("process_mrelease", OTHER, F, I),
	C("futex_waitv", 0, ST, I, I, IN, I),
	C("set_mempolicy_home_node", 0, VA, I, I, I),
	C("cachestat", 0, F, IN, OUT, I),
	C("fchmodat2", 0, D, P, I, AF),
	C("map_shadow_stack", 0, A, I, I),
	C("futex_wake", 0, UA, I, I, I),
	C("futex_wait", 0, VA, I, I, I, IN, I),
	C("futex_requeue", 0, ST, I, I, I),
	/* newer than this libseccomp, named by the guard */
	C("mseal", 0, A, I, I),
};

static const struct syscall_kinds *by_nr[POLICY_MAX_NR];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void index_table(void)
{
	for (size_t i = 0; i < NELEM(table); i++) {
		int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, table[i].name);

		if (nr >= 0 && nr < POLICY_MAX_NR && !by_nr[nr])
			by_nr[nr] = &table[i];
	}
}

const struct syscall_kinds *syscall_kinds(int nr)
{
	pthread_once(&once, index_table);
	return nr >= 0 && nr < POLICY_MAX_NR ? by_nr[nr] : NULL;
}

int syscall_refusal_checks_fd(int nr)
{
	const struct syscall_kinds *k = syscall_kinds(nr);

	return k && (k->arg[0] == SK_FD || k->arg[0] == SK_FD_MOD) && !(k->effects & SE_SYSTEM) &&
	       nr != SCMP_SYS(close_range);
}

size_t syscall_kinds_count(void)
{
	return NELEM(table);
}

const struct syscall_kinds *syscall_kinds_at(size_t i)
{
	return i < NELEM(table) ? &table[i] : NULL;
}

int syscall_path(int nr, struct syscall_path *out)
{
	const struct syscall_kinds *k = syscall_kinds(nr);
	int i = 0;

	while (k && i < 6 && k->arg[i] != SK_PATH)
		i++;
	if (!k || i == 6)
		return -ENOENT;
	*out = (struct syscall_path){ .path_arg = i, .flags_arg = POLICY_NOARG };
	out->dirfd_arg = i > 0 && k->arg[i - 1] == SK_DIRFD ? i - 1 : POLICY_NOARG;
	/* its flags: the first after the path (linkat's are the second path's too) */
	for (int a = i + 1; a < 6 && out->flags_arg == POLICY_NOARG; a++)
		if (k->arg[a] == SK_OFLAGS || k->arg[a] == SK_ATFLAGS || k->arg[a] == SK_OHOW) {
			out->flags_arg = a;
			out->flags_kind = k->arg[a];
		}
	out->opens = out->flags_kind == SK_OFLAGS || out->flags_kind == SK_OHOW;
	/* creat(path, mode) is open(path, O_CREAT | O_WRONLY | O_TRUNC, mode) */
	if (nr == SCMP_SYS(creat)) {
		out->opens = 1;
		out->oflags = O_CREAT | O_WRONLY | O_TRUNC;
	}
	return 0;
}
