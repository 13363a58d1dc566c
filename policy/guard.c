/* What no policy can take away: the rules sandpit puts on calls to keep U
 * away from its own memory, descriptors and threads (invariants 1, 3, 7),
 * the calls that are never carried out, those whose memory argument only B
 * can check, and how B checks them.  This is knowledge about system calls
 * and about sandpit, not policy: the policy (policy/default.policy, or a
 * user's file) says which calls a program may make; the compiler
 * (policy/parse.c) applies this table to every call a file names.
 *
 * Every call's guard is derived from what its arguments are
 * (policy/syscall_kinds.c), so that a call nobody listed here still gets
 * the guard its arguments call for, or is never carried out.  The entries
 * below only add what the kinds cannot say: which commands of a
 * multiplexer are safe, how B checks a call, the emulations, and a clearer
 * reason.  An entry that misses what the kinds ask for is made stricter
 * (and guard_test fails on it). */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/sockios.h>
#include <pthread.h>
#include <seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/prctl.h>

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
/* new code is mapped without PROT_EXEC, patched, then made executable with
 * mprotect (user/untrusted/exec_patch.c, which also makes a JIT's writable
 * and executable memory that way, unpatched) */
#define NO_EXEC(a) { .op = RULE_MASK_ZERO, .arg = (a), .arg2 = N, .carg = N, .mask = PROT_EXEC, .err = EACCES }
/* the kernel reads these arguments as ints: compare the low half only */
#define NE(a, v, e) \
	{ .op = RULE_MASKED_NE, .arg = (a), .arg2 = N, .carg = N, .mask = 0xffffffffULL, .val = (v), .err = (e) }
#define NE_MASKED(a, m, v) \
	{ .op = RULE_MASKED_NE, .arg = (a), .arg2 = N, .carg = N, .mask = (m), .val = (v), .err = EPERM }
#define ZERO(a, m, e) { .op = RULE_MASK_ZERO, .arg = (a), .arg2 = N, .carg = N, .mask = (m), .err = (e) }
#define SELF_PID(a) { .op = RULE_SELF_PID, .arg = (a), .arg2 = N, .carg = N, .err = EPERM }
/* a tid B does not know as a U is, to the program, no thread of its own:
 * ESRCH, as the kernel answers for a tid it has no thread for */
#define U_TID(a) { .op = RULE_U_TID, .arg = (a), .arg2 = N, .carg = N, .err = ESRCH }

#define RULES(...) .rules = (const struct policy_rule[]){ __VA_ARGS__ }, \
	.nrules = NELEM(((const struct policy_rule[]){ __VA_ARGS__ }))

struct entry {
	const char *name;
	struct policy_guard g;
};

/* an entry whose rules make the call's SE_* effects `e` safe */
#define COVERS(e) .covers = (e)

#define GUARD(name, w, ...) { name, { .kind = GUARD_RULES, .why = w, .restrict_arg = N, \
				      RULES(__VA_ARGS__) } }
#define GUARD_C(name, w, e, ...) { name, { .kind = GUARD_RULES, .why = w, .restrict_arg = N, \
					   COVERS(e), RULES(__VA_ARGS__) } }

static const char fd_why[] = "sandpit's descriptors are not U's";
static const char mem_why[] = "sandpit's pages are not U's";

/* How B checks a memory argument (enum policy_proc_kind).  Which argument
 * is the path, its directory and its flags, and whether the call opens
 * what it names (then PA_OPEN: the open flags decide), the kinds say
 * (syscall_path); these say only what B does with it. */
static const struct policy_proc_arg
	b_path = { PK_PATH, N, N, N, PA_READ, 0 },
	b_path_nofollow = { PK_PATH, N, N, N, PA_READ, 1 }, /* the last link is what it reads */
	b_sigaction = { PK_SIGACTION, N, N, N, 0, 0 }, b_clone = { PK_CLONE, N, N, N, 0, 0 },
	/* limits: B reads the new one once, and makes the change itself on P
	 * only when it lowers or keeps the limit the kernel reports */
	b_rlimit = { PK_RLIMIT, N, N, N, 0, 0 },
	/* sockets: the family, the address against the connect grants, the
	 * descriptors SCM_RIGHTS passes (user/trusted/b_net.c) */
	b_net = { PK_NET, N, N, N, 0, 0 },
	/* namespace calls B makes itself inside write grants (user/trusted/path_op.c) */
	b_op = { PK_PATH_OP, N, N, N, PA_WRITE, 1 },
	/* and the metadata calls on a descriptor, which B makes on the object
	 * it takes from P (arg0) */
	b_fd_op = { PK_PATH_OP, N, 0, N, PA_WRITE, 1 };

#define CHECK_B(name, b) { name, { .kind = GUARD_NEEDS_B, .proc = b, .restrict_arg = N, \
	.why = "its memory argument must be checked by the trusted process" } }
#define CHECK_FD(name) { name, { .kind = GUARD_NEEDS_B, .proc = &b_fd_op, .restrict_arg = N, \
	.why = "its descriptor may be of any file the program opened, which only the trusted " \
	       "process can check against the write grants" } }
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
	GUARD("mprotect", mem_why, RANGE_FREE(0, 1)),
	GUARD("pkey_mprotect", mem_why, RANGE_FREE(0, 1)),
	GUARD("munmap", mem_why, RANGE_FREE(0, 1)),
	GUARD("madvise", mem_why, RANGE_FREE(0, 1)),
	GUARD("mremap", mem_why, RANGE_FREE(0, 1), RANGE_FREE_IF(4, 2, 3, MREMAP_FIXED)),
	GUARD("remap_file_pages", mem_why, RANGE_FREE(0, 1)),
	GUARD("mseal", mem_why, RANGE_FREE(0, 1)),
	/* B's doorbell and T's verdict word are futexes in sandpit's pages:
	 * U may not wake them (only T may ring B), nor requeue onto them */
	GUARD_C("futex", mem_why, SE_MUX, RANGE_FREE(0, N), NE_MASKED(1, 0x7f, FUTEX_REQUEUE),
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
	GUARD_C("fcntl", fd_why, SE_MUX, FD_FREE(0), NE(1, F_SETOWN, EPERM), NE(1, F_SETOWN_EX, EPERM)),
	{ "ioctl", { .kind = GUARD_RULES, .why = fd_why, .restrict_arg = 1, COVERS(SE_MUX),
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
	/* 'allow' keeps it off sandpit's sockets; 'process' also refuses a
	 * source route (user/trusted/b_net.c) */
	{ "setsockopt", { .kind = GUARD_RULES, .why = fd_why, .proc = &b_net, .restrict_arg = N,
			  RULES(FD_FREE(0)) } },
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
	      U_TID(1)),
	GUARD("rt_sigqueueinfo", "signals stay within the process", SELF_PID(0)),
	GUARD("rt_tgsigqueueinfo", "signals stay within the process and never reach T",
	      SELF_PID(0), U_TID(1)),
	/* T executes prctl: these would act on T (its own seccomp filter,
	 * syscall user dispatch, its TSC) or on the address space's layout */
	GUARD_C("prctl", on_t, SE_CALLER | SE_MUX, NE(0, PR_SET_SECCOMP, EPERM), NE(0, PR_SET_MM, EPERM),
	      NE(0, PR_SET_SYSCALL_USER_DISPATCH, EPERM), NE(0, PR_SET_TSC, EPERM)),

	/* memory arguments that B checks */
	CHECK_B("open", &b_path),
	CHECK_B("openat", &b_path),
	CHECK_B("stat", &b_path),
	CHECK_B("lstat", &b_path_nofollow),
	CHECK_B("newfstatat", &b_path),
	CHECK_B("statx", &b_path),
	CHECK_B("statfs", &b_path),
	CHECK_B("access", &b_path),
	CHECK_B("faccessat", &b_path),
	CHECK_B("faccessat2", &b_path),
	CHECK_B("readlink", &b_path_nofollow),
	CHECK_B("readlinkat", &b_path_nofollow),
	CHECK_B("chdir", &b_path),
	/* a handler or restorer in sandpit's memory would run U's choice in T (invariant 1) */
	CHECK_B("rt_sigaction", &b_sigaction),
	/* threads only, each with its own T (invariant 4) */
	CHECK_B("clone", &b_clone),
	/* 'allow' and register rules as the kinds say (prlimit64 on P only);
	 * 'process' is B's check: lowered or kept, never raised, P only */
	{ "setrlimit", { .kind = GUARD_RULES, .proc = &b_rlimit, .restrict_arg = N } },
	{ "prlimit64", { .kind = GUARD_RULES, .proc = &b_rlimit, .restrict_arg = N } },
	/* 'allow' and register rules as a policy says; 'process': B decides
	 * the family from the connect grants */
	{ "socket", { .kind = GUARD_RULES, .proc = &b_net, .restrict_arg = N } },
	/* paths B has no check for */
	CHECK_B("truncate", &b_op), CHECK_B("mkdir", &b_op), CHECK_B("mkdirat", &b_op),
	CHECK_B("mknod", &b_op), CHECK_B("mknodat", &b_op), CHECK_B("rmdir", &b_op),
	CHECK_B("unlink", &b_op), CHECK_B("unlinkat", &b_op), CHECK_B("rename", &b_op),
	CHECK_B("renameat", &b_op), CHECK_B("renameat2", &b_op), CHECK_B("link", &b_op),
	CHECK_B("linkat", &b_op), CHECK_B("symlink", &b_op),
	CHECK_B("symlinkat", &b_op), CHECK_B("chmod", &b_op),
	CHECK_B("fchmodat", &b_op), CHECK_B("fchmodat2", &b_op), CHECK_B("utimensat", &b_op),
	/* a descriptor's file, whichever grant it was opened under: B checks it
	 * against the write grants as chmod's path */
	CHECK_FD("fchmod"), CHECK_FD("fchown"), CHECK_FD("fsetxattr"), CHECK_FD("fremovexattr"),
	/* owners by path, made by B on the object as chmod (the kernel decides
	 * with P's credentials); creat is open(O_CREAT | O_WRONLY | O_TRUNC) */
	CHECK_B("chown", &b_op), CHECK_B("lchown", &b_op), CHECK_B("fchownat", &b_op),
	CHECK_B("creat", &b_path),
	PATH("utime"), PATH("utimes"),
	CHECK_B("getxattr", &b_path), CHECK_B("lgetxattr", &b_path_nofollow),
	CHECK_B("listxattr", &b_path),
	CHECK_B("llistxattr", &b_path_nofollow),
	/* attributes by path, as by descriptor: on the object, under a write grant */
	CHECK_B("setxattr", &b_op), CHECK_B("lsetxattr", &b_op), CHECK_B("removexattr", &b_op),
	CHECK_B("lremovexattr", &b_op),
	PATH("futimesat"), PATH("openat2"), PATH("chroot"), PATH("pivot_root"), PATH("mount"),
	PATH("umount2"), PATH("swapon"), PATH("swapoff"), PATH("acct"), PATH("uselib"),
	PATH("inotify_add_watch"), PATH("fanotify_mark"), PATH("name_to_handle_at"),
	PATH("open_tree"), PATH("move_mount"), PATH("fspick"), PATH("mount_setattr"),
	PATH("quotactl"),
	{ "connect", { .kind = GUARD_NEEDS_B, .proc = &b_net, .restrict_arg = N,
		       .why = "its socket address may name a path outside the grants or a "
			      "host no grant allows" } },
	{ "bind", { .kind = GUARD_NEEDS_B, .restrict_arg = N,
		    .why = "its socket address may create a path outside the grants, and the "
			   "trusted process has no check for it" } },
	{ "sendmsg", { .kind = GUARD_NEEDS_B, .proc = &b_net, .restrict_arg = N,
		       .why = "SCM_RIGHTS would hand U copies of sandpit's descriptors, and its "
			      "address may name a host no grant allows" } },
	{ "sendmmsg", { .kind = GUARD_NEEDS_B, .restrict_arg = N,
			.why = "SCM_RIGHTS would hand U copies of sandpit's descriptors, and the "
			       "trusted process has no check for it" } },

	/* emulated */
	{ "gettid", { .kind = GUARD_EMU, .emu = POLICY_EMU_GETTID, .allow_emulates = 1,
		      .restrict_arg = N, .why = "T would answer with its own tid" } },
	{ "rseq", { .kind = GUARD_EMU, .emu = POLICY_EMU_ZERO, .restrict_arg = N,
		    .why = "it would register T, and the kernel would run U's abort handler in T "
			   "(invariant 1); 'emulate' says yes without registering" } },
	/* glibc's closefrom falls back to closing what /proc/self/fd lists,
	 * and starts again after each close: sandpit's would never go */
	{ "close_range", { .kind = GUARD_EMU, .emu = POLICY_EMU_CLOSE_RANGE, .restrict_arg = N,
			   .why = "it could close sandpit's descriptors (invariant 3); T closes "
				  "the numbers around them" } },

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

/* --- the guard of every call, derived from its kinds --- */

static const char unknown_why[] = "sandpit does not know what it does (it is not in "
				  "policy/syscall_kinds.c)";
static const char b_why[] = "a pointer argument holds what the kernel acts on (descriptors, "
			    "processes, addresses, handlers), and the trusted process has no check "
			    "for it";
static const char path_why[] = "it takes a path, which only the trusted process can check "
			       "against the grants, and the trusted process has no check for "
			       "this call";
static const char range_why[] = "it changes P's memory, and sandpit has no guard that keeps it "
				"off sandpit's own pages";
static const char tid_why[] = "it names a thread, which could be a trusted one, and sandpit has no "
			      "guard for it";

/* Why an effect is never carried out, most telling first. */
static const struct {
	unsigned effect;
	const char *why;
} effect_why[] = {
	{ SE_EXEC, "a new program would run outside the sandbox (invariant 7)" },
	{ SE_SPAWN, "the new task would run without its own T and seccomp state (invariant 4)" },
	{ SE_OTHER, "it reaches other processes (B), their memory, or what they share (invariant 7)" },
	{ SE_CALLER, on_t },
	{ SE_SYSTEM, "it acts on the system, not on the process" },
	{ SE_MUX, "what it does depends on a command, and sandpit has no guard for its commands" },
	{ SE_NOSYS, "no x86-64 kernel has it, so sandpit cannot know what it would do" },
};

/* Room for the guards: one per number libseccomp can name, and the rules
 * derived for them. */
#define MAX_GUARDS 512
#define MAX_DERIVED_RULES 256

static struct policy_guard guards[MAX_GUARDS];
static struct policy_proc_arg procs[MAX_GUARDS]; /* B's path checks, placed by the kinds */
static struct policy_rule derived_rules[MAX_DERIVED_RULES];
static size_t nguards, nderived;
static const struct policy_guard *by_nr[POLICY_MAX_NR];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const struct policy_guard never_unknown = { .kind = GUARD_NEVER, .why = unknown_why,
						   .restrict_arg = N, .query_arg = N };

static int has_op(const struct policy_guard *g, int op, int arg)
{
	for (int i = 0; i < g->nrules; i++)
		if (g->rules[i].op == op && g->rules[i].arg == arg)
			return 1;
	return 0;
}

/* a rule "arg == 0" (a NULL pointer) */
static int has_null(const struct policy_guard *g, int arg)
{
	for (int i = 0; i < g->nrules; i++)
		if (g->rules[i].op == RULE_MASKED_EQ && g->rules[i].arg == arg &&
		    g->rules[i].carg == N && g->rules[i].mask == ~0ULL && !g->rules[i].val)
			return 1;
	return 0;
}

/* An unconditional rule keeps every one of bits clear in argument arg. */
static int rules_clear_bits(const struct policy_rule *rules, int n, int arg, uint64_t bits)
{
	for (int i = 0; i < n; i++) {
		const struct policy_rule *r = &rules[i];

		if (r->arg == arg && r->carg == POLICY_NOARG && (r->mask & bits) == bits &&
		    ((r->op == RULE_MASKED_EQ && !(r->val & bits)) || r->op == RULE_MASK_ZERO))
			return 1;
	}
	return 0;
}

static void never(struct policy_guard *g, const char *why, int amended)
{
	*g = (struct policy_guard){ .kind = GUARD_NEVER, .why = why, .restrict_arg = N,
				    .query_arg = N, .amended = amended };
}

/* The guard of call k, from its kinds and guard.c's entry e (or NULL). */
static void derive(const struct syscall_kinds *k, const struct entry *e, struct policy_guard *g)
{
	struct policy_rule add[6];
	const char *refused = NULL;
	int nadd = 0, needs_b = 0, path = 0;
	unsigned never_effects;

	if (e) {
		*g = e->g;
		g->query_arg = N;
		g->self_args = g->self0_args = 0;
		/* these never pass U's call to the kernel as it is */
		if (g->kind != GUARD_RULES)
			return;
	} else {
		*g = (struct policy_guard){ .kind = GUARD_RULES, .restrict_arg = N, .query_arg = N };
	}
	never_effects = k->effects & SE_NEVER & ~g->covers;
	for (size_t i = 0; never_effects && i < NELEM(effect_why) && !refused; i++)
		if (never_effects & effect_why[i].effect)
			refused = effect_why[i].why;
	for (int a = 0; a < 6 && !refused; a++) {
		switch (k->arg[a]) {
		case SK_PATH:
			path = needs_b = 1;
			break;
		case SK_STRUCT:
		case SK_OHOW:
			needs_b = 1;
			break;
		case SK_STRUCT0: /* NULL only */
			if (!has_null(g, a))
				add[nadd++] = (struct policy_rule){ .op = RULE_MASKED_EQ, .arg = a,
								    .arg2 = N, .carg = N,
								    .mask = ~0ULL, .err = EPERM };
			break;
		case SK_MODE:
			if (!rules_clear_bits(g->rules, g->nrules, a, S_ISUID | S_ISGID))
				add[nadd++] = (struct policy_rule)ZERO(a, S_ISUID | S_ISGID, EPERM);
			break;
		case SK_FD_MOD:
			if (!has_op(g, RULE_FD_FREE, a))
				add[nadd++] = (struct policy_rule)FD_FREE(a);
			break;
		case SK_ADDR:
		case SK_UADDR:
			if (!has_op(g, RULE_RANGE_FREE, a))
				refused = range_why;
			break;
		case SK_TID:
			if (!has_op(g, RULE_U_TID, a))
				refused = tid_why;
			break;
		case SK_PID0:
			g->self0_args |= 1u << a;
			/* fall through */
		case SK_PID: /* the file must confine it, unless sandpit's rule does */
			if (!has_op(g, RULE_SELF_PID, a))
				g->self_args |= 1u << a;
			break;
		case SK_QUERY:
			g->query_arg = a;
			break;
		}
	}
	if (!refused && g->nrules + nadd > POLICY_MAX_RULES)
		refused = unknown_why;
	if (!refused && nadd && nderived + (size_t)(g->nrules + nadd) > MAX_DERIVED_RULES)
		refused = unknown_why;
	if (refused) {
		never(g, refused, e != NULL);
		return;
	}
	if (needs_b) {
		*g = (struct policy_guard){ .kind = GUARD_NEEDS_B, .why = path ? path_why : b_why,
					    .restrict_arg = N, .query_arg = N, .amended = e != NULL };
		return;
	}
	g->self0_args &= g->self_args;
	if (!g->self_args)
		g->query_arg = N;
	if (nadd) {
		/* guard.c's rules first, as they were */
		if (g->nrules) /* a call without rules has none to copy (and rules NULL) */
			memcpy(&derived_rules[nderived], g->rules, (size_t)g->nrules * sizeof(*g->rules));
		memcpy(&derived_rules[nderived + (size_t)g->nrules], add, (size_t)nadd * sizeof(*add));
		g->rules = &derived_rules[nderived];
		g->nrules += nadd;
		nderived += (size_t)g->nrules;
		g->amended = e != NULL;
	}
	if (!g->why)
		g->why = g->self_args ? "it acts on the process an argument names" : fd_why;
}

/* B's path check of call nr reads the arguments the kinds name. */
static void place_path(int nr, struct policy_guard *g, struct policy_proc_arg *out)
{
	struct syscall_path sp;

	if (g->kind != GUARD_NEEDS_B || !g->proc ||
	    (g->proc->kind != PK_PATH && g->proc->kind != PK_PATH_OP) || g->proc == &b_fd_op)
		return;
	if (syscall_path(nr, &sp) < 0) {
		never(g, unknown_why, 1); /* B would check a path the kinds do not know */
		return;
	}
	*out = *g->proc;
	out->path_arg = sp.path_arg;
	out->dirfd_arg = sp.dirfd_arg;
	out->flags_arg = sp.flags_kind == SK_OHOW ? POLICY_NOARG : sp.flags_arg;
	/* creat's open flags are implied (oflags): B checks it as that open
	 * (b_serve.c), a write for the model */
	out->access = sp.opens ? (sp.oflags ? PA_WRITE : PA_OPEN) : out->access;
	g->proc = out;
}

static void index_table(void)
{
	const struct entry *by_name[POLICY_MAX_NR] = { 0 };

	/* Names this libseccomp does not know cannot be named in a file either. */
	for (size_t i = 0; i < NELEM(table); i++) {
		int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, table[i].name);

		if (nr >= 0 && nr < POLICY_MAX_NR && !by_name[nr])
			by_name[nr] = &table[i];
	}
	for (int nr = 0; nr < POLICY_MAX_NR; nr++) {
		const struct syscall_kinds *k = syscall_kinds(nr);

		/* a call libseccomp knows and the kinds table does not is never
		 * made (numbers libseccomp does not know cannot be named) */
		if (!k || nguards >= MAX_GUARDS) {
			by_nr[nr] = &never_unknown;
			continue;
		}
		derive(k, by_name[nr], &guards[nguards]);
		place_path(nr, &guards[nguards], &procs[nguards]);
		if (guards[nguards].kind == GUARD_RULES && !guards[nguards].nrules &&
		    !guards[nguards].self_args && guards[nguards].restrict_arg == N &&
		    !by_name[nr])
			continue; /* nothing special */
		by_nr[nr] = &guards[nguards++];
	}
}

const struct policy_guard *policy_guard(int nr)
{
	pthread_once(&once, index_table);
	return nr >= 0 && nr < POLICY_MAX_NR ? by_nr[nr] : NULL;
}

const char *policy_guard_allow_line(int nr, const char **why)
{
	const struct policy_guard *g = policy_guard(nr);

	*why = NULL;
	if (!g)
		return "allow";
	switch (g->kind) {
	case GUARD_NEVER:
		*why = g->why;
		return "deny(EPERM)";
	case GUARD_NEEDS_B:
		if (g->proc)
			return "process";
		*why = g->why;
		return "deny(EACCES)";
	case GUARD_EMU:
		return "emulate";
	default:
		/* a call on a process must be confined to P, or the parser refuses it */
		if (g->self_args == 1)
			return "arg0 == $pid";
		if (g->self_args == 3)
			return "arg0 == $pid && arg1 == $pid";
		if (g->self_args) {
			*why = g->why;
			return "deny(EPERM)";
		}
		return "allow";
	}
}

/* --- what no policy can take away --- */

/* Whether rule r refuses every value v with (v & m) == g. */
static int refuses_all(const struct policy_rule *r, uint64_t m, uint64_t g)
{
	switch (r->op) {
	case RULE_BITSET:
		for (int d = 0; d < 64; d++)
			if ((r->mask >> d & 1) && ((r->val + (uint64_t)d) & m) == g)
				return 0;
		return 1;
	case RULE_MASKED_EQ: return ((r->val ^ g) & r->mask & m) != 0;
	case RULE_MASK_ZERO: return (g & r->mask & m) != 0;
	case RULE_MASKED_NE: return (r->mask & ~m) == 0 && (g & r->mask) == r->val;
	case RULE_LE: return g > r->val; /* g is the least such value */
	default: return 0;
	}
}

/* A guard "(a & m) != g" adds nothing when one of the file's rules already
 * refuses every value with (a & m) == g: then it is left out, and the
 * file's rule refuses those values (with the file's errno).  A conditional
 * rule counts when all those values meet its condition. */
int policy_guard_implied(const struct policy_rule *gd, const struct policy_rule *rules, int n)
{
	/* a guard "(a & m) == g" (a pointer that must be NULL): implied by a
	 * file's rule that fixes at least those bits to the same value */
	for (int i = 0; gd->op == RULE_MASKED_EQ && gd->carg == POLICY_NOARG && i < n; i++) {
		const struct policy_rule *r = &rules[i];

		if (r->arg == gd->arg && r->carg == POLICY_NOARG && r->op == RULE_MASKED_EQ &&
		    !(gd->mask & ~r->mask) && (r->val & gd->mask) == gd->val)
			return 1;
	}
	if (gd->op != RULE_MASKED_NE || gd->carg != POLICY_NOARG || (gd->val & ~gd->mask))
		return 0;
	for (int i = 0; i < n; i++) {
		const struct policy_rule *r = &rules[i];

		if (r->arg != gd->arg)
			continue;
		if (r->carg != POLICY_NOARG &&
		    (r->carg != gd->arg || !(gd->val & gd->mask & r->cmask)))
			continue;
		if (refuses_all(r, gd->mask, gd->val))
			return 1;
	}
	return 0;
}

/* An argument confined to listed values by an unconditional rule. */
int policy_rules_confine(const struct policy_rule *rules, int n, int arg)
{
	for (int i = 0; i < n; i++) {
		const struct policy_rule *r = &rules[i];

		if (r->arg != arg || r->carg != POLICY_NOARG)
			continue;
		if (r->op == RULE_BITSET ||
		    (r->op == RULE_MASKED_EQ && (r->mask & 0xffffffffULL) == 0xffffffffULL))
			return 1;
	}
	return 0;
}

/* An argument an unconditional rule confines to P: == $pid, or == 0 where
 * 0 means P (the kernel reads a pid as an int). */
int policy_rules_confine_to_self(const struct policy_rule *rules, int n, int arg, int zero_ok)
{
	for (int i = 0; i < n; i++) {
		const struct policy_rule *r = &rules[i];

		if (r->arg != arg || r->carg != POLICY_NOARG)
			continue;
		if (r->op == RULE_SELF_PID ||
		    (zero_ok && r->op == RULE_MASKED_EQ && (r->mask & 0xffffffffULL) == 0xffffffffULL &&
		     !(r->val & 0xffffffffULL)))
			return 1;
	}
	return 0;
}

/* An argument an unconditional rule makes 0 (NULL). */
int policy_rules_force_zero(const struct policy_rule *rules, int n, int arg)
{
	return rules_clear_bits(rules, n, arg, ~0ULL);
}
