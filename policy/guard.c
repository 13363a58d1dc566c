/* What no policy can take away: the rules sandpit puts on calls to keep U
 * away from its own memory, descriptors and threads (invariants 1, 3, 7),
 * the calls that are never carried out, those whose memory argument only B
 * can check, and how B checks them.  This is knowledge about system calls
 * and about sandpit, not policy: the policy (policy/default.policy, or a
 * user's file) says which calls a program may make; the compiler
 * (policy/parse.c) applies this table to every call a file names. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/sockios.h>
#include <pthread.h>
#include <seccomp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>

#include "policy/policy.h"

#define N POLICY_NOARG
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#endif
#ifndef F_SETOWN_EX
#define F_SETOWN_EX 15
#endif

/* Each guard rule names its errno, so that the call's own errno (a file's
 * choice) never changes what a guard answers. */
#define FD_FREE(a) { .op = RULE_FD_FREE, .arg = (a), .arg2 = N, .carg = N, .err = EBADF }
#define RANGE_FREE(a, len) \
	{ .op = RULE_RANGE_FREE, .arg = (a), .arg2 = (len), .carg = N, .err = EPERM }
#define RANGE_FREE_IF(a, len, c, m) \
	{ .op = RULE_RANGE_FREE, .arg = (a), .arg2 = (len), .carg = (c), .cmask = (m), .err = EPERM }
/* W^X: new code is mapped without PROT_EXEC, patched, then made executable
 * with mprotect (user/exec_patch.c); memory is never W and X at once */
#define NO_EXEC(a) { .op = RULE_MASK_ZERO, .arg = (a), .arg2 = N, .carg = N, .mask = PROT_EXEC, .err = EACCES }
#define NOT_WX(a) { .op = RULE_MASKED_NE, .arg = (a), .arg2 = N, .carg = N, \
		    .mask = PROT_WRITE | PROT_EXEC, .val = PROT_WRITE | PROT_EXEC, .err = EACCES }
/* the kernel reads these arguments as ints: compare the low half only */
#define NE(a, v, e) \
	{ .op = RULE_MASKED_NE, .arg = (a), .arg2 = N, .carg = N, .mask = 0xffffffffULL, .val = (v), .err = (e) }
#define NE_MASKED(a, m, v) \
	{ .op = RULE_MASKED_NE, .arg = (a), .arg2 = N, .carg = N, .mask = (m), .val = (v), .err = EPERM }
#define ZERO(a, m, e) { .op = RULE_MASK_ZERO, .arg = (a), .arg2 = N, .carg = N, .mask = (m), .err = (e) }
#define SELF_PID(a) { .op = RULE_SELF_PID, .arg = (a), .arg2 = N, .carg = N, .err = EPERM }
#define NOT_TID(a) { .op = RULE_NOT_TID, .arg = (a), .arg2 = N, .carg = N, .err = EPERM }

#define RULES(...) .rules = (const struct policy_rule[]){ __VA_ARGS__ }, \
	.nrules = NELEM(((const struct policy_rule[]){ __VA_ARGS__ }))

struct entry {
	const char *name;
	struct policy_guard g;
};

#define GUARD(name, w, ...) { name, { .kind = GUARD_RULES, .why = w, .restrict_arg = N, \
				      RULES(__VA_ARGS__) } }

static const char fd_why[] = "sandpit's descriptors are not U's";
static const char mem_why[] = "sandpit's pages are not U's";

/* How B checks a memory argument (enum policy_proc_kind) */
static const struct policy_proc_arg
	b_open = { PK_PATH, 0, N, 1, PA_OPEN, 0 }, b_openat = { PK_PATH, 1, 0, 2, PA_OPEN, 0 },
	b_stat = { PK_PATH, 0, N, N, PA_READ, 0 }, b_lstat = { PK_PATH, 0, N, N, PA_READ, 1 },
	b_fstatat = { PK_PATH, 1, 0, 3, PA_READ, 0 }, b_statx = { PK_PATH, 1, 0, 2, PA_READ, 0 },
	b_faccessat = { PK_PATH, 1, 0, N, PA_READ, 0 },
	b_faccessat2 = { PK_PATH, 1, 0, 3, PA_READ, 0 },
	b_readlink = { PK_PATH, 0, N, N, PA_READ, 1 },
	b_readlinkat = { PK_PATH, 1, 0, N, PA_READ, 1 },
	b_sigaction = { PK_SIGACTION, N, N, N, 0, 0 }, b_clone = { PK_CLONE, N, N, N, 0, 0 };

#define CHECK_B(name, b) { name, { .kind = GUARD_NEEDS_B, .proc = b, .restrict_arg = N, \
	.why = "its memory argument must be checked by the trusted process" } }
#define PATH(name) { name, { .kind = GUARD_NEEDS_B, .restrict_arg = N, \
	.why = "it takes a path, which only the trusted process can check against the grants, " \
	       "and the trusted process has no check for this call" } }
#define NEVER(name, w) { name, { .kind = GUARD_NEVER, .why = w, .restrict_arg = N } }

static const char on_t[] = "it would act on the trusted thread, not on U";
static const char other[] = "it reaches other processes (B) or their memory (invariant 7)";

static const struct entry table[] = {
	/* memory management never over sandpit's pages, never a mapping of
	 * sandpit's descriptors (invariant 3) */
	GUARD("mmap", mem_why, FD_FREE(4), RANGE_FREE_IF(0, 1, 3, MAP_FIXED), NO_EXEC(2)),
	GUARD("mprotect", mem_why, RANGE_FREE(0, 1), NOT_WX(2)),
	GUARD("pkey_mprotect", mem_why, RANGE_FREE(0, 1), NOT_WX(2)),
	GUARD("munmap", mem_why, RANGE_FREE(0, 1)),
	GUARD("madvise", mem_why, RANGE_FREE(0, 1)),
	GUARD("mremap", mem_why, RANGE_FREE(0, 1), RANGE_FREE_IF(4, 2, 3, MREMAP_FIXED)),
	GUARD("remap_file_pages", mem_why, RANGE_FREE(0, 1)),
	GUARD("mseal", mem_why, RANGE_FREE(0, 1)),
	GUARD("shmat", mem_why, ZERO(2, SHM_REMAP, EINVAL)),
	/* B's doorbell and T's verdict word are futexes in sandpit's pages:
	 * U may not wake them (only T may ring B), nor requeue onto them */
	GUARD("futex", mem_why, RANGE_FREE(0, N), NE_MASKED(1, 0x7f, FUTEX_REQUEUE),
	      NE_MASKED(1, 0x7f, FUTEX_CMP_REQUEUE), NE_MASKED(1, 0x7f, FUTEX_WAKE_OP),
	      NE_MASKED(1, 0x7f, FUTEX_WAIT_REQUEUE_PI), NE_MASKED(1, 0x7f, FUTEX_CMP_REQUEUE_PI)),
	GUARD("futex_wake", mem_why, RANGE_FREE(0, N)),
	NEVER("futex_requeue", "its futexes are in memory, where they could name sandpit's"),
	/* sandpit's descriptors are not U's to close, replace or change */
	GUARD("close", fd_why, FD_FREE(0)),
	GUARD("dup", fd_why, FD_FREE(0)),
	GUARD("dup2", fd_why, FD_FREE(0), FD_FREE(1)),
	GUARD("dup3", fd_why, FD_FREE(0), FD_FREE(1)),
	/* an owner would send sandpit's signals to B or T (invariant 7) */
	GUARD("fcntl", fd_why, FD_FREE(0), NE(1, F_SETOWN, EPERM), NE(1, F_SETOWN_EX, EPERM)),
	{ "ioctl", { .kind = GUARD_RULES, .why = fd_why, .restrict_arg = 1,
		     RULES(FD_FREE(0), NE(1, FIOSETOWN, EPERM), NE(1, SIOCSPGRP, EPERM)) } },
	GUARD("getdents64", fd_why, FD_FREE(0)),
	/* B reads P's cwd when it checks a relative path */
	GUARD("fchdir", fd_why, FD_FREE(0)),
	GUARD("ftruncate", fd_why, FD_FREE(0)),
	GUARD("fallocate", fd_why, FD_FREE(0)),
	GUARD("shutdown", fd_why, FD_FREE(0)),
	GUARD("recvfrom", fd_why, FD_FREE(0)),
	GUARD("recvmsg", fd_why, FD_FREE(0)),
	GUARD("recvmmsg", fd_why, FD_FREE(0)),
	GUARD("epoll_ctl", fd_why, FD_FREE(2)),
	GUARD("setsockopt", fd_why, FD_FREE(0)),
	GUARD("listen", fd_why, FD_FREE(0)),
	GUARD("accept", fd_why, FD_FREE(0)),
	GUARD("accept4", fd_why, FD_FREE(0)),
	GUARD("sendfile", fd_why, FD_FREE(0), FD_FREE(1)),
	GUARD("splice", fd_why, FD_FREE(0), FD_FREE(2)),
	GUARD("tee", fd_why, FD_FREE(0), FD_FREE(1)),
	GUARD("copy_file_range", fd_why, FD_FREE(0), FD_FREE(2)),
	GUARD("vmsplice", fd_why, FD_FREE(0)),
	/* signals stay within P and never reach a trusted thread (invariant 7) */
	GUARD("kill", "signals stay within the process", SELF_PID(0)),
	GUARD("tgkill", "signals stay within the process and never reach T", SELF_PID(0),
	      NOT_TID(1)),
	GUARD("rt_sigqueueinfo", "signals stay within the process", SELF_PID(0)),
	GUARD("rt_tgsigqueueinfo", "signals stay within the process and never reach T",
	      SELF_PID(0), NOT_TID(1)),
	/* T executes prctl: these would act on T (its own seccomp filter,
	 * syscall user dispatch, its TSC) or on the address space's layout */
	GUARD("prctl", on_t, NE(0, PR_SET_SECCOMP, EPERM), NE(0, PR_SET_MM, EPERM),
	      NE(0, PR_SET_SYSCALL_USER_DISPATCH, EPERM), NE(0, PR_SET_TSC, EPERM)),

	/* memory arguments that B checks */
	CHECK_B("open", &b_open),
	CHECK_B("openat", &b_openat),
	CHECK_B("stat", &b_stat),
	CHECK_B("lstat", &b_lstat),
	CHECK_B("newfstatat", &b_fstatat),
	CHECK_B("statx", &b_statx),
	CHECK_B("statfs", &b_stat),
	CHECK_B("access", &b_stat),
	CHECK_B("faccessat", &b_faccessat),
	CHECK_B("faccessat2", &b_faccessat2),
	CHECK_B("readlink", &b_readlink),
	CHECK_B("readlinkat", &b_readlinkat),
	CHECK_B("chdir", &b_stat),
	/* a handler or restorer in sandpit's memory would run U's choice in T (invariant 1) */
	CHECK_B("rt_sigaction", &b_sigaction),
	/* threads only, each with its own T (invariant 4) */
	CHECK_B("clone", &b_clone),
	/* paths B has no check for */
	PATH("creat"), PATH("truncate"), PATH("mkdir"), PATH("mkdirat"), PATH("mknod"),
	PATH("mknodat"), PATH("rmdir"), PATH("unlink"), PATH("unlinkat"), PATH("rename"),
	PATH("renameat"), PATH("renameat2"), PATH("link"), PATH("linkat"), PATH("symlink"),
	PATH("symlinkat"), PATH("chmod"), PATH("fchmodat"), PATH("fchmodat2"), PATH("chown"),
	PATH("lchown"), PATH("fchownat"), PATH("utime"), PATH("utimes"), PATH("utimensat"),
	PATH("futimesat"), PATH("setxattr"), PATH("lsetxattr"), PATH("getxattr"),
	PATH("lgetxattr"), PATH("listxattr"), PATH("llistxattr"), PATH("removexattr"),
	PATH("lremovexattr"), PATH("openat2"), PATH("chroot"), PATH("pivot_root"), PATH("mount"),
	PATH("umount2"), PATH("swapon"), PATH("swapoff"), PATH("acct"), PATH("uselib"),
	PATH("inotify_add_watch"), PATH("fanotify_mark"), PATH("name_to_handle_at"),
	PATH("open_tree"), PATH("move_mount"), PATH("fspick"), PATH("mount_setattr"),
	PATH("quotactl"),
	{ "connect", { .kind = GUARD_NEEDS_B, .restrict_arg = N,
		       .why = "its socket address may name a path outside the grants, and the "
			      "trusted process has no check for it" } },
	{ "bind", { .kind = GUARD_NEEDS_B, .restrict_arg = N,
		    .why = "its socket address may create a path outside the grants, and the "
			   "trusted process has no check for it" } },
	{ "sendmsg", { .kind = GUARD_NEEDS_B, .restrict_arg = N,
		       .why = "SCM_RIGHTS would hand U copies of sandpit's descriptors, and the "
			      "trusted process has no check for it" } },
	{ "sendmmsg", { .kind = GUARD_NEEDS_B, .restrict_arg = N,
			.why = "SCM_RIGHTS would hand U copies of sandpit's descriptors, and the "
			       "trusted process has no check for it" } },

	/* emulated */
	{ "gettid", { .kind = GUARD_EMU, .emu = POLICY_EMU_GETTID, .allow_emulates = 1,
		      .restrict_arg = N, .why = "T would answer with its own tid" } },
	{ "rseq", { .kind = GUARD_EMU, .emu = POLICY_EMU_ZERO, .restrict_arg = N,
		    .why = "it would register T, and the kernel would run U's abort handler in T "
			   "(invariant 1); 'emulate' says yes without registering" } },

	/* never carried out */
	NEVER("execve", "a new program would run outside the sandbox (invariant 7)"),
	NEVER("execveat", "a new program would run outside the sandbox (invariant 7)"),
	NEVER("ptrace", other),
	NEVER("process_vm_readv", other),
	NEVER("process_vm_writev", other),
	NEVER("process_madvise", other),
	NEVER("pidfd_open", other),
	NEVER("pidfd_getfd", other),
	NEVER("pidfd_send_signal", other),
	NEVER("kcmp", other),
	NEVER("migrate_pages", other),
	NEVER("move_pages", other),
	NEVER("tkill", "it could signal B's threads or T, and no rule can tell (invariant 7)"),
	NEVER("seccomp", "T would install U's filter on itself (invariant 7)"),
	NEVER("fork", "the child would run without its own T and seccomp state (invariant 4)"),
	NEVER("vfork", "the child would run without its own T and seccomp state (invariant 4)"),
	NEVER("clone3", "its flags live in memory; it must fail so that libc uses clone (invariant 4)"),
	NEVER("close_range", "it could close sandpit's descriptors (invariant 3)"),
	NEVER("io_uring_setup", "the kernel's io_uring workers make calls nobody checks"),
	NEVER("io_uring_enter", "the kernel's io_uring workers make calls nobody checks"),
	NEVER("io_uring_register", "the kernel's io_uring workers make calls nobody checks"),
	NEVER("userfaultfd", "U would decide what sandpit's pages contain when T faults"),
	NEVER("modify_ldt", "the descriptor table is shared with T"),
	NEVER("open_by_handle_at", "its file handle bypasses the path checks"),
	NEVER("perf_event_open", "an event could stop or signal T (a breakpoint's SIGTRAP cannot "
				 "be blocked)"),
	NEVER("bpf", "programs and maps are beyond what sandpit can check"),
	NEVER("arch_prctl", on_t),
	NEVER("set_tid_address", on_t),
	NEVER("set_robust_list", on_t),
	NEVER("rt_sigprocmask", on_t),
	NEVER("sigaltstack", on_t),
	NEVER("rt_sigsuspend", on_t),
	NEVER("unshare", on_t),
	NEVER("setns", on_t),
};

static const struct policy_guard *by_nr[POLICY_MAX_NR];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Names this libseccomp does not know cannot be named in a file either. */
static void index_table(void)
{
	for (size_t i = 0; i < NELEM(table); i++) {
		int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, table[i].name);

		if (nr >= 0 && nr < POLICY_MAX_NR && !by_nr[nr])
			by_nr[nr] = &table[i].g;
	}
}

const struct policy_guard *policy_guard(int nr)
{
	pthread_once(&once, index_table);
	return nr >= 0 && nr < POLICY_MAX_NR ? by_nr[nr] : NULL;
}
