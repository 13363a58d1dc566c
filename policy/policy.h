/* The policy: one model of what each system call may do, compiled into the
 * back ends (the T table, a libseccomp BPF filter), and the path checks B
 * makes for memory-argument calls.  Policies are written as text
 * (sandpit.policy(5)) and compiled by policy/parse.c; the built-in default
 * is policy/default.policy, compiled the same way.
 *
 * Syscalls are x86-64 numbers; names are resolved by libseccomp only.
 * Functions return 0 or a negative errno; those that take `err, errlen`
 * write one clear message there on failure (err may be NULL). */
#ifndef SANDPIT_POLICY_H
#define SANDPIT_POLICY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "policy/path.h"

#define POLICY_MAX_NR    1024 /* model covers numbers 0..POLICY_MAX_NR-1 */
#define POLICY_MAX_RULES 8    /* register rules per syscall */
#define POLICY_MAX_TOTAL_RULES 256 /* register rules in one policy, all calls together */
#define POLICY_NOARG     (-1)

enum policy_class {
	POLICY_DENY,    /* return -err */
	POLICY_ALLOW,   /* executed as it is */
	POLICY_THREAD,  /* register rules checked by T, then executed */
	POLICY_PROCESS, /* memory argument checked by B (see policy_proc_arg) */
	POLICY_KILL,    /* the process is killed */
	POLICY_EMU,     /* emulated by T; err is a POLICY_EMU_* id */
	POLICY_NATIVE,  /* U executes it itself: only calls seccomp strict allows */
};

#define POLICY_EMU_GETTID 1 /* U's tid, not T's */
#define POLICY_EMU_ZERO   2 /* succeed without doing anything (it would act on T) */
#define POLICY_EMU_CLOSE_RANGE 3 /* close_range on the numbers around sandpit's block */

/* Register rules: all of a call's rules must pass, in order; the first that
 * fails makes the call return -err.  a[i] is argument i (64 bits).  A rule
 * whose carg is not POLICY_NOARG applies only when (a[carg] & cmask) != 0. */
enum policy_rule_op {
	RULE_MASK_ZERO = 1, /* (a[arg] & mask) == 0 */
	RULE_MASKED_EQ,     /* (a[arg] & mask) == val */
	RULE_MASKED_NE,     /* (a[arg] & mask) != val */
	RULE_FD_FREE,       /* (int)a[arg] is not one of sandpit's descriptors */
	RULE_RANGE_FREE,    /* [a[arg], a[arg] + a[arg2]) touches no protected range;
			     * with arg2 POLICY_NOARG, the one address a[arg] */
	RULE_SELF_PID,      /* a[arg] == P's pid */
	RULE_U_TID,         /* (int)a[arg] <= 0, or the tid of a U that B knows */
	RULE_LE,            /* a[arg] <= val (unsigned) */
	RULE_BITSET,        /* d = a[arg] - val (mod 2^64): d < 64 && (mask >> d) & 1 */
};

struct policy_rule {
	int op;       /* enum policy_rule_op */
	int arg;      /* 0..5 */
	int arg2;     /* RULE_RANGE_FREE: the length argument (or POLICY_NOARG); else POLICY_NOARG */
	int carg;     /* condition argument or POLICY_NOARG */
	int err;      /* errno when the rule fails; 0: the call's err */
	uint64_t mask;
	uint64_t val;
	uint64_t cmask;
};

/* Access a path argument needs. */
enum policy_access {
	PA_READ = 1, /* under a read or write grant */
	PA_WRITE,    /* write, create or remove: under a write grant */
	PA_OPEN,     /* decided from the open flags (policy_open_access) */
	PA_NEVER,    /* always refused */
};

enum policy_proc_kind {
	PK_PATH = 1,  /* a path, checked against the grants */
	PK_SIGACTION, /* rt_sigaction's struct, copied and checked by B */
	PK_CLONE,     /* a new thread: B checks the flags and prepares its slot */
	PK_PATH_OP,   /* a namespace call inside write grants that B makes itself
		       * (user/trusted/path_op.c); the fields name its first path */
	PK_RLIMIT,    /* setrlimit, prlimit64: the process's own limits, lowered or
		       * kept, never raised; B makes the change (user/trusted/b_rlimit.c) */
	PK_NET,       /* socket, connect, sendmsg: the family, the address against the
		       * connect grants, the descriptors SCM_RIGHTS passes
		       * (user/trusted/b_net.c) */
};

/* The memory argument of a process-class call. */
struct policy_proc_arg {
	int kind;      /* enum policy_proc_kind; the rest is for PK_PATH(_OP) */
	int path_arg;  /* argument holding the path pointer */
	int dirfd_arg; /* argument holding the directory fd; POLICY_NOARG: the cwd */
	int flags_arg; /* open(2) flags if access is PA_OPEN, else AT_* flags; or POLICY_NOARG */
	int access;    /* enum policy_access */
	int nofollow;  /* the last component is never followed (lstat, readlink) */
};

/* What the model says about one syscall.  Unmentioned numbers read as the
 * policy's default (policy_set_default), { POLICY_DENY, ENOSYS } unless set. */
struct policy_call {
	int mentioned;
	int cls;    /* enum policy_class */
	int err;    /* deny: the errno; thread: errno of rules that name none; emu: id */
	int nrules;
	struct policy_rule rules[POLICY_MAX_RULES];
	struct policy_proc_arg proc; /* POLICY_PROCESS only */
	/* where it was decided (policy_set_source): the file and line that name
	 * it, and how many of its first rules are sandpit's guards */
	const char *file; /* NULL: not from a policy file */
	int line, nguard;
};

struct policy_grant {
	char *path;   /* absolute and normalised */
	int writable; /* write implies read */
	int exact;    /* the grant is a file: it covers that path only */
	const char *file; /* the policy file that grants it, NULL: the command line */
	int line;
};

/* `path deny PATTERN`: the paths a pattern matches, and everything under
 * them, are refused whatever the grants say.  The pattern is absolute, its
 * '.' and '..' components refused, with fnmatch(3)'s wildcards inside one
 * component ('*', '?', '[...]', '\' quoting one character); it is matched
 * against the resolved path B checks. */
struct policy_deny {
	char *pattern;  /* normalised ("//" and a trailing '/' removed) */
	size_t literal; /* how many leading characters hold no wildcard */
};

struct policy;

/* Building a policy. */
int policy_new(struct policy **out);                  /* everything ENOSYS, no grants */
int policy_new_default(struct policy **out, const char *const *allow_read,
		       const char *const *allow_write, char *err, size_t errlen);
#define POLICY_DEFAULT_NAME "policy/default.policy"
/* The default's whole text parsed: what its build-time model is made from
 * (policy/model.h), and what policy_new_default falls back to without one. */
int policy_parse_default(struct policy **out, char *err, size_t errlen);
/* The default from its model: 0, < 0 an error, 1 no model in this build. */
int policy_default_model(struct policy **out, char *err, size_t errlen);
/* --allow-read and --allow-write's grants, added to a policy */
int policy_add_grants(struct policy *p, const char *const *allow_read,
		      const char *const *allow_write, char *err, size_t errlen);
/* A call's entry as the parser made it (the model's), for a number not
 * given yet; its source is set with policy_set_source. */
int policy_load_call(struct policy *p, int nr, const struct policy_call *c);
void policy_free(struct policy *p);

int policy_syscall_nr(const char *name, char *err, size_t errlen); /* x86-64 number */
int policy_set(struct policy *p, const char *name, int cls, int errno_or_id,
	       char *err, size_t errlen);             /* resets the call's rules */
int policy_add_rule(struct policy *p, const char *name, const struct policy_rule *r,
		    char *err, size_t errlen);        /* the call must be POLICY_THREAD */
int policy_set_process(struct policy *p, const char *name, const struct policy_proc_arg *a,
		       char *err, size_t errlen);
/* A grant of `path` (absolute).  A write grant whose path goes through a
 * symbolic link is refused, its message naming where it leads: U may have
 * left that link in an earlier run.  A read grant through one also grants
 * where it leads. */
int policy_grant(struct policy *p, const char *path, int writable, char *err, size_t errlen);
/* Where an absolute grant path leads: 1 if it goes through a symbolic
 * link (`out` then holds the path it resolves to, a missing tail kept as
 * it is), 0 if not (nothing under /proc is resolved), or a negative errno
 * (not absolute, a loop, a component that cannot be read). */
int policy_grant_target(const char *path, char *out, size_t outlen);
/* path (absolute, normalised) with the longest head of it that exists
 * resolved as realpath would, the rest as it is, in out (PATH_MAX): where
 * B's resolution of the path ends.  0 or -errno */
int policy_resolve_existing(struct policy *p, const char *path, char *out);
int policy_deny(struct policy *p, const char *pattern, char *err, size_t errlen);
/* Checks a deny pattern and writes it normalised: absolute, no '.' or '..'
 * component, no "**", every '[' closed within its component, no '\' at
 * the end.  NULL, or what is wrong with it ("has a '.' or '..' component"). */
const char *policy_deny_pattern(const char *pattern, char *out, size_t outlen);
/* What unmentioned numbers get: POLICY_DENY with an errno, or POLICY_KILL.
 * Numbers from POLICY_DEFAULT_NR on exist in no x86-64 kernel (the back
 * ends cover at least these): they stay ENOSYS whatever the default. */
#define POLICY_DEFAULT_NR 512
int policy_set_default(struct policy *p, int cls, int err_no, char *err, size_t errlen);
void policy_get_default(const struct policy *p, int *cls, int *err_no);
/* Where a decision comes from, so that a refusal can be explained: the
 * line of a policy file that names call nr (nguard: how many of its first
 * rules sandpit's guard put there), nr POLICY_SRC_DEFAULT for the
 * `default:` line, POLICY_SRC_GRANTS for the grants added since the last
 * such call.  The name is kept by the policy. */
#define POLICY_SRC_DEFAULT (-1)
#define POLICY_SRC_GRANTS  (-2)
int policy_set_source(struct policy *p, int nr, const char *file, int line, int nguard);

/* What decided a refusal of call nr, in words a user can act on
 * (policy/explain.c): `rule` is the index of the register rule that
 * refused it (T's report), or -1 when the call itself is denied.  One of
 *   FILE:LINE              the policy line that names the call
 *   guard: NAME            a rule sandpit puts on every policy (fd_free, ...)
 *   not in the policy: default   the `default:` line (FILE:LINE in `where`)
 * and `builtin` says which built-in rule made the line a refusal
 * ("never: execve"), or is "". */
struct policy_why {
	char decided[160];
	char builtin[96];
};
void policy_explain(const struct policy *p, int nr, int rule, struct policy_why *w);
/* Filter mode's SECCOMP_RET_ERRNO carries no rule: the rule is found back
 * from (nr, errno) through the model, the first rule of the call that
 * returns that errno (-1: the call's own deny, or none). */
int policy_rule_for_errno(const struct policy *p, int nr, int err_no);
/* A path refusal: the grant that would allow it (its --allow-read= or
 * --allow-write= option in `hint`), 0, or -ENOENT when none may (never). */
int policy_grant_hint(const char *resolved, int access, char *hint, size_t n);

/* Reading it (back ends, B). */
const struct policy_call *policy_call(const struct policy *p, int nr);
const struct policy_proc_arg *policy_proc_arg(const struct policy *p, int nr); /* NULL unless process */
size_t policy_ngrants(const struct policy *p);
const struct policy_grant *policy_grant_at(const struct policy *p, size_t i);
size_t policy_ndenies(const struct policy *p);
const struct policy_deny *policy_deny_at(const struct policy *p, size_t i);

/* Connect grants (policy/net.c): an address and a port a socket of the
 * program may connect to, over TCP or UDP, IPv4 or IPv6.  Without one the
 * program has no network: `socket` of AF_INET and AF_INET6 is
 * EAFNOSUPPORT, as on a kernel without them.  B checks each connect's
 * address, from its own copy, against them (user/trusted/b_net.c). */
#define POLICY_MAX_CONNECT 64
struct policy_connect {
	int family;        /* AF_INET or AF_INET6 */
	uint16_t port;     /* host order, 1 .. 65535 */
	uint8_t addr[16];  /* network order: 4 bytes for AF_INET, 16 for AF_INET6 */
};
int policy_add_connect(struct policy *p, const struct policy_connect *c); /* 0, -E2BIG */
size_t policy_nconnects(const struct policy *p);
const struct policy_connect *policy_connect_at(const struct policy *p, size_t i);
/* --allow-connect=HOST:PORT's grants (ADDR:PORT, [ADDR6]:PORT, or
 * localhost:PORT for both loopbacks), added to a policy; nothing is
 * added when one is malformed, which err names */
int policy_add_connects(struct policy *p, const char *const *hostports, char *err, size_t errlen);
/* A socket address the program gave connect or sendmsg (len bytes, as
 * copied): 0 if a grant allows it, -EACCES if none does (and for every
 * address of a family no grant can name), -EINVAL if it is short.  An
 * IPv4 address mapped into IPv6 is the IPv4 address. */
int policy_check_connect(const struct policy *p, const void *sa, size_t len);
/* The address and port as text ("127.0.0.1:80", "[::1]:80"), for messages
 * and for the grant that would allow it */
void policy_connect_text(const void *sa, size_t len, char *out, size_t n);

/* Policy files (policy/policy_file.c chooses the format; sandpit's is
 * policy/parse.c, docs/sandpit.policy.5).  Every
 * problem found is reported as one line "FILE:LINE:COL: message" through
 * `report` (may be NULL), the first of them also in err.  On any problem no
 * policy is returned (nothing is half-applied): -EINVAL for errors in the
 * text, or the errno of a file that cannot be read.  `name` is what
 * messages call the text, and where its @include lines are resolved from. */
typedef void policy_report_fn(void *ctx, const char *msg);
int policy_parse_file(const char *path, struct policy **out, policy_report_fn *report,
		      void *ctx, char *err, size_t errlen);
int policy_parse_text(const char *name, const char *text, size_t len, struct policy **out,
		      policy_report_fn *report, void *ctx, char *err, size_t errlen);
/* A policy file with the allow_read/allow_write grants added, like
 * policy_new_default for the built-in one. */
int policy_new_file(struct policy **out, const char *path, const char *const *allow_read,
		    const char *const *allow_write, char *err, size_t errlen);

/* minijail's policy format (policy/minijail.c; sandpit.policy(5), MINIJAIL
 * POLICIES): each statement is translated into a line of sandpit's format
 * and compiled by policy_parse_text; errors are "FILE:LINE: message"
 * through `report`, what is translated rather than honoured literally is
 * "FILE:LINE: note: ..." through `notes` (either may be NULL). */
enum policy_format { POLICY_FORMAT_AUTO, POLICY_FORMAT_SANDPIT, POLICY_FORMAT_MINIJAIL };
int policy_parse_minijail(const char *name, const char *text, size_t len, struct policy **out,
			  policy_report_fn *report, policy_report_fn *notes, void *ctx, char *err,
			  size_t errlen);
int policy_parse_minijail_file(const char *path, struct policy **out, policy_report_fn *report,
			       policy_report_fn *notes, void *ctx, char *err, size_t errlen);
/* 1 if policy_parse_file reads this text as minijail's: the format set by
 * policy_set_file_format, or with POLICY_FORMAT_AUTO (the start), detected. */
int policy_text_is_minijail(const char *text, size_t len);
void policy_set_file_format(int format);
/* The policy in minijail's format; what minijail cannot express is said in
 * comments, and its line is the refusal.  0 or -errno. */
int policy_export_minijail(const struct policy *p, FILE *f);
/* How policy files are read (policy/parse.c): at most 1 MiB, a regular file;
 * 0 or -errno, and the words for that errno.  policy_read_file_stat also
 * gives the file's stat (its identity, for @include's loops). */
struct stat;
int policy_read_file(const char *path, char **text, size_t *len);
int policy_read_file_stat(const char *path, char **text, size_t *len, struct stat *st);
const char *policy_file_error(int e);
/* sandpit's format, the text of the file path read with st: what
 * policy_parse_file calls when the text is not minijail's. */
int policy_parse_sandpit_file(const char *path, const struct stat *st, const char *text,
			      size_t len, struct policy **out, policy_report_fn *report, void *ctx,
			      char *err, size_t errlen);

/* Names a policy file may use (policy/constants.c): argument constants
 * (PROT_READ, O_CREAT, AT_FDCWD, ...) from the system headers, errnos from
 * the C library.  0 / the errno, or -ENOENT. */
int policy_constant(const char *name, size_t len, uint64_t *value);
int policy_errno(const char *name, size_t len);

/* What each system call's arguments are and what it acts on
 * (policy/syscall_kinds.c): the facts the guard is derived from, one entry
 * per call libseccomp knows for x86-64, so that no call is left out. */
enum syscall_arg_kind {
	SK_NONE = 0,  /* no such argument */
	SK_INT,       /* a number, flags, size, id, mode, clock: harmless by itself */
	SK_FD,        /* a descriptor data goes through or is asked about, as read and
		       * write do (seccomp strict lets U make those natively anyway) */
	SK_FD_MOD,    /* a descriptor the call closes, replaces, reconfigures, or whose
		       * state (flags, owner, size, offset, queued data) it changes: fd_free */
	SK_DIRFD,     /* the directory of a path argument (B resolves it with the path) */
	SK_PATH,      /* a path: only B can check it against the grants */
	SK_IN,        /* memory the kernel reads as plain values (bytes, times, limits) */
	SK_OUT,       /* memory the kernel writes results into */
	SK_STRUCT,    /* memory whose content the kernel acts on: descriptors, pids,
		       * addresses, handlers, socket addresses, or kept for later: only B */
	SK_STRUCT0,   /* SK_STRUCT that may be NULL, which makes it harmless: guard "== 0" */
	SK_SIGMASK,   /* a signal mask for the calling thread while the call waits; T
		       * never hands U's to the kernel: it would apply to T (invariant 1) */
	SK_ADDR,      /* P's memory the call maps over, unmaps, re-protects or clears: range_free */
	SK_VADDR,     /* P's memory the call only pins, queries or advises, never changes */
	SK_UADDR,     /* a futex word the call may wake: range_free (B's doorbell) */
	SK_PID,       /* a process or thread the call acts on (0: the calling thread, T) */
	SK_PID0,      /* a process the call acts on, 0 meaning P itself */
	SK_PID_INFO,  /* a process or thread the call only reads public facts about */
	SK_TID,       /* a thread of P the call signals: never a trusted thread */
	SK_CHILD,     /* a child of P's to wait for */
	SK_SIG,       /* a signal number */
	SK_QUERY,     /* new values; NULL makes the call a query that acts on nothing */
	SK_MODE,      /* a file mode given to a descriptor's file: never a set-id bit, as
		       * B refuses chmod's and drops a created name's (guard: & 06000 == 0) */
	/* numbers that say how a path argument is used, harmless by themselves */
	SK_OFLAGS,    /* open(2) flags: for reading, writing, creating */
	SK_ATFLAGS,   /* AT_* flags (AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH, ...) */
	SK_OHOW,      /* openat2's struct open_how, open(2) flags first: an SK_STRUCT */
};

/* What a call acts on besides its arguments. */
#define SE_CALLER 0x01u /* the calling thread's own state: T's, when T makes the call */
#define SE_OTHER  0x02u /* other processes, their memory, or objects shared with them
			 * outside the path grants (SysV IPC, keys, message queues) */
#define SE_SYSTEM 0x04u /* the system: time, mounts, modules, devices (privileged) */
#define SE_SPAWN  0x08u /* creates a process or thread */
#define SE_EXEC   0x10u /* runs a new program */
#define SE_MUX    0x20u /* what it does depends on a command argument */
#define SE_PROC   0x40u /* P as a whole (limits, cwd, session, timers): P alone */
#define SE_NOSYS  0x80u /* no x86-64 kernel implements it: nothing to know about it */
/* effects no argument rule can make safe unless guard.c says how */
#define SE_NEVER  (SE_CALLER | SE_OTHER | SE_SYSTEM | SE_SPAWN | SE_EXEC | SE_MUX | SE_NOSYS)

struct syscall_kinds {
	const char *name;   /* libseccomp's name */
	unsigned effects;   /* SE_* */
	unsigned char arg[6]; /* enum syscall_arg_kind */
};

const struct syscall_kinds *syscall_kinds(int nr); /* NULL: the table does not know it */
/* 1 when the kernel looks nr's first argument up as a descriptor before
 * anything else, so that a refusal of the call on a descriptor that is not
 * open (or is sandpit's) says EBADF, as the kernel would: the first
 * argument is SK_FD or SK_FD_MOD, and the call is not the system's (whose
 * capability check comes first) nor close_range (whose arguments bound a
 * range, open or not). */
int syscall_refusal_checks_fd(int nr);
size_t syscall_kinds_count(void);
const struct syscall_kinds *syscall_kinds_at(size_t i);
/* How a call uses its (first) path argument: the one source B's checks
 * (policy/guard.c), the profiler's BPF program (a header generated from it
 * at build time by policy/tools/gen_profiler_paths.c) and `sandpit
 * profile` take it from. */
struct syscall_path {
	int path_arg;      /* argument holding the path pointer */
	int dirfd_arg;     /* its directory; POLICY_NOARG: the cwd */
	int flags_arg;     /* its flags (flags_kind), or POLICY_NOARG */
	int flags_kind;    /* SK_OFLAGS, SK_ATFLAGS, SK_OHOW, or 0 */
	int opens;         /* it opens or creates the file: open(2) flags say how */
	long oflags;       /* open(2) flags the call implies without a flags argument (creat) */
};
/* 0, or -ENOENT if the call has no path argument. */
int syscall_path(int nr, struct syscall_path *out);

/* What no policy can take away (policy/guard.c), derived for every call
 * from its syscall_kinds: guard.c's own entries only add what the kinds
 * cannot say (which commands are safe, how B checks a call) and must meet
 * everything the kinds ask for.  The compiler applies these to every call
 * a file names; the model's own API does not. */
enum policy_guard_kind {
	GUARD_RULES = 1, /* allow/trap: `rules` always come first (allow -> trap) */
	GUARD_NEVER,     /* only deny or kill: it would break an invariant */
	GUARD_NEEDS_B,   /* a memory argument only B can check: process (if `proc`), deny, kill */
	GUARD_EMU,       /* emulate (or deny, kill); allow only if `allow_emulates` */
};

struct policy_guard {
	int kind;                            /* enum policy_guard_kind */
	const char *why;                     /* why, for messages */
	int nrules;
	const struct policy_rule *rules;     /* GUARD_RULES: prepended to the call's rules */
	const struct policy_proc_arg *proc;  /* GUARD_NEEDS_B: how B checks it, NULL: no check */
	int emu;                             /* GUARD_EMU: POLICY_EMU_* */
	int allow_emulates;                  /* GUARD_EMU: `allow` means emulate */
	int restrict_arg;                    /* GUARD_RULES: an argument a rule must confine to
					      * listed values, or POLICY_NOARG */
	unsigned self_args;                  /* GUARD_RULES: bit i: the file must confine arg i
					      * to P (== $pid) ... */
	unsigned self0_args;                 /* ... or, for these, == 0 (P itself) ... */
	int query_arg;                       /* ... unless it makes this argument 0 (a query);
					      * POLICY_NOARG: no such argument */
	unsigned covers;                     /* SE_* effects guard.c's rules make safe */
	int amended;                         /* guard.c's entry missed what the kinds ask for,
					      * and was made stricter (a bug guard_test finds) */
};

const struct policy_guard *policy_guard(int nr); /* NULL: nothing special */
/* The narrowest line a file may give a call it wants to let happen: "allow",
 * "process", "emulate", a rule confining its pid to P, or, with the reason
 * in *why, the refusal ("deny(EPERM)", "deny(EACCES)") no policy can lift. */
const char *policy_guard_allow_line(int nr, const char **why);
int policy_strict_allows(int nr);                /* seccomp strict lets U make it itself */
/* Whether strict mode can enforce the policy (policy/strict_mode.c): of
 * the calls seccomp strict lets U make itself, where a site the patcher
 * missed goes straight to the kernel, it can enforce only `allow`.  0, or
 * -EOPNOTSUPP with "FILE:LINE: message" in err for the first line (or the
 * default) that says more, and "FILE:LINE: note: message" through `notes`
 * (may be NULL) for each; `name` stands for the policy where no line does
 * (a default that was not written). */
int policy_strict_check(const struct policy *p, const char *name, policy_report_fn *notes,
			void *ctx, char *err, size_t errlen);
/* What a file's rules (rules[0..n-1]) already say, so that a guard can be
 * left out or a line refused: guard gd adds nothing to them; an
 * unconditional rule confines arg to listed values; to P ($pid, or 0 where
 * zero_ok); makes arg 0 (NULL). */
int policy_guard_implied(const struct policy_rule *gd, const struct policy_rule *rules, int n);
int policy_rules_confine(const struct policy_rule *rules, int n, int arg);
int policy_rules_confine_to_self(const struct policy_rule *rules, int n, int arg, int zero_ok);
int policy_rules_force_zero(const struct policy_rule *rules, int n, int arg);

/* Back ends. */
struct tt_table; /* policy/t_table.h: the format of T's table */
struct tt_rule;
int policy_compile_table(const struct policy *p, struct tt_table *out, char *err, size_t errlen);
/* One rule as the T table holds it (its errno: the rule's, else call_err);
 * policy/rule_eval.h says what it means. */
void policy_table_rule(const struct policy_rule *r, int call_err, struct tt_rule *t);
void policy_dump(const struct policy *p, FILE *f); /* every mentioned call: its action, its
						    * rules, and its path in each mode */

/* Path checks made by B. */
int policy_open_access(long flags);                   /* PA_READ or PA_WRITE */
int policy_proc_access(const struct policy_proc_arg *a, const uint64_t args[6]); /* PA_READ/WRITE/NEVER */
int policy_proc_follow(const struct policy_proc_arg *a, const uint64_t args[6]); /* 1: follow the last link */

/* `path` must be absolute, normalised and resolved (path_resolve's output);
 * /proc/self in a grant or a deny means /proc/<pid>.  0, -EACCES (a deny
 * matches, or no grant covers it), or -EINVAL for a path that is not
 * normalised. */
int policy_check_path(const struct policy *p, pid_t pid, const char *path, int access);
/* The deny pattern that refuses `path` (as policy_check_path takes it), or NULL. */
const char *policy_path_denied(const struct policy *p, pid_t pid, const char *path);
/* The same, or the pattern that refuses something under `path`: renaming,
 * linking or removing `path` would move what the pattern protects (rename
 * /etc/ssh away, and its host keys leave the pattern's reach), so namespace
 * calls must refuse such a path as their source. */
const char *policy_path_holds_denied(const struct policy *p, pid_t pid, const char *path);

/* 0 if `path` (checked as above) is a directory on the way to a grant ("/"
 * always): U may look at it (stat, access, chdir), never open it; else
 * -EACCES. */
int policy_check_ancestor(const struct policy *p, pid_t pid, const char *path);

/* For a namespace call B makes (user/trusted/path_op.c): 0 if one write grant of a
 * directory holds `a` and `b` (NULL: a alone) strictly below its root,
 * -EXDEV if two different ones do (as rename across mounts), -EACCES
 * otherwise, and always for a grant's root or a directory above one
 * (policy_path_holds_grant). */
int policy_check_namespace(const struct policy *p, pid_t pid, const char *a, const char *b);
/* 1 if `path` is the root of a grant (any: read or write, file or
 * directory) or a directory above one: never U's to remove, rename,
 * replace or make; else 0. */
int policy_path_holds_grant(const struct policy *p, pid_t pid, const char *path);
/* For a call that sets metadata (mode, times, size; user/trusted/path_op.c): 0 if
 * a directory write grant holds `path` strictly below its root, else
 * -EACCES (a file grant is a grant of the file's data only), -EINVAL for a
 * path that is not normalised. */
int policy_check_metadata(const struct policy *p, pid_t pid, const char *path);

/* BPF back end (policy/bpf.c): the filter U runs under in filter mode, built
 * by libseccomp.  Default action SCMP_ACT_TRAP (U's SIGSYS handler sends the
 * call to T, like a patched site); allow/native -> ALLOW; deny, unmentioned
 * numbers included -> ERRNO; kill -> KILL_PROCESS; emu/process -> TRAP;
 * thread -> ALLOW or the failing rule's ERRNO where BPF can decide exactly,
 * else TRAP.  Other architectures (int $0x80) and x32 numbers are killed. */
typedef void *scmp_filter_ctx; /* as <seccomp.h> */

/* What only start-up knows. */
struct policy_runtime {
	pid_t pid;        /* P's pid (RULE_SELF_PID) */
	int fd_lo, fd_hi; /* sandpit's descriptors, [fd_lo, fd_hi] (RULE_FD_FREE); lo > hi: none */
	/* What U's runtime itself needs of the filter, whatever the policy
	 * says (docs/design/filter-mode.md, "sandpit's own calls"): write on own_tb (P's
	 * end of T<->B) and on own_t + 2i (T's eventfds), read on own_t + 1 +
	 * 2i (U's), i < own_n, and exit and rt_sigreturn.  own_n 0: none (an
	 * exported or tested program); at start-up, the descriptor block's. */
	int own_tb, own_t, own_n;
};

#define POLICY_BPF_NO_KILL_PROCESS 1u /* kernel lacks RET_KILL_PROCESS: kill the thread */
#define POLICY_BPF_TRAP_DENY 2u /* denials trap to the entry (which logs them) instead of ERRNO */

/* Builds the filter (not loaded; the caller sets no_new_privs, loads it with
 * seccomp_load and releases it with seccomp_release).  0 or -errno. */
int policy_compile_bpf(const struct policy *p, const struct policy_runtime *rt, uint32_t flags,
		       scmp_filter_ctx *out, char *err, size_t errlen);
int policy_export_bpf(const struct policy *p, const struct policy_runtime *rt, int fd, char *err,
		      size_t errlen); /* the raw program, struct sock_filter[] */
int policy_export_pfc(const struct policy *p, const struct policy_runtime *rt, int fd, char *err,
		      size_t errlen); /* libseccomp's readable pseudo code */

/* A filter compiled ahead of time (at build time, for the default policy):
 * libseccomp needs ~10 ms to build and export the program, and only P's pid
 * changes from run to run.  A template is the program for one fd range and
 * one set of flags, with the places that hold the pid; it is found by
 * compiling for two pids and comparing.  Layout: this header, then
 * slot[nslots], then the struct sock_filter program[ninsn]. */
#define POLICY_BPF_TEMPLATE_MAGIC 0x53504254u /* "SPBT" */
struct policy_bpf_template {
	uint32_t magic, flags;
	int32_t fd_lo, fd_hi;
	uint32_t ninsn, nslots;
};

/* Writes the template to fd.  0 or -errno with a message. */
int policy_bpf_write_template(const struct policy *p, int fd_lo, int fd_hi, uint32_t flags, int fd,
			      char *err, size_t errlen);
/* Finds the template for (fd_lo, fd_hi, flags) in the concatenated
 * templates [blob, blob + len) and writes its program for pid to fd:
 * 0, -ENOENT if there is none for these values, or -errno. */
int policy_bpf_from_template(const void *blob, size_t len, pid_t pid, int fd_lo, int fd_hi,
			     uint32_t flags, int fd);

#endif
