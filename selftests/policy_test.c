/* The policy model, its T-table back end, its dump, and B's path checks.
 * Rules are also run through the rules' one definition (policy/rule_eval.c,
 * what the trusted thread runs) so that each test can name the call it
 * expects refused. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <kselftest_harness.h>

#include "policy/policy.h"
#include "policy/rule_eval.h"
#include "policy/t_table.h"

#include "policy_util.h"

static struct tt_table *default_table(void)
{
	static struct tt_table t;
	struct policy *p = default_policy();
	char err[256] = "";

	if (policy_compile_table(p, &t, err, sizeof(err)) < 0) {
		fprintf(stderr, "policy_compile_table: %s\n", err);
		abort();
	}
	policy_free(p);
	return &t;
}

static const struct tt_entry *entry(const struct tt_table *t, const char *name)
{
	return &t->entries[nr_of(name)];
}

/* What T sees of the world in these tests. */
#define SELF_PID  1000
#define U_TID     1002 /* a thread of the program's that B knows */
#define T_TID     1001
#define SANDPIT_FD 900
#define PROT_LO   0x70000000ULL /* sandpit's protected pages */
#define PROT_HI   0x70004000ULL

/* What T answers (policy/rule_eval.c, the rules' one definition) in that
 * world: 0 if T executes the call, else -errno. */
static long tt_eval(const char *name, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
		    uint64_t a4, uint64_t a5)
{
	static const struct rule_range prot[] = { { PROT_LO, PROT_HI } };
	static const int32_t known[] = { SELF_PID, U_TID };
	static const struct rule_world world = {
		.rt = { .pid = SELF_PID, .fd_lo = SANDPIT_FD, .fd_hi = SANDPIT_FD },
		.t_facts = 1, .nranges = 1, .ranges = prot, .ntids = 2, .tids = known,
	};
	const uint64_t a[6] = { a0, a1, a2, a3, a4, a5 };

	return tt_answer(default_table(), nr_of(name), a, &world);
}

#define EVAL(name, ...) tt_eval(name, __VA_ARGS__)

/* --- names come from libseccomp --- */

TEST(getppid_is_allowed)
{
	const struct tt_entry *e = entry(default_table(), "getppid");

	ASSERT_EQ(110, nr_of("getppid"));
	EXPECT_EQ(TT_ALLOW, e->cls);
	EXPECT_EQ(0, e->nrules);
}

TEST(execve_is_denied_with_eacces)
{
	const struct tt_entry *e = entry(default_table(), "execve");

	EXPECT_EQ(TT_DENY, e->cls);
	EXPECT_EQ(EACCES, e->err);
	EXPECT_EQ(TT_DENY, entry(default_table(), "execveat")->cls);
	EXPECT_EQ(EACCES, entry(default_table(), "execveat")->err);
}

TEST(openat_goes_to_the_trusted_process)
{
	struct policy *p = default_policy();
	const struct policy_proc_arg *a = policy_proc_arg(p, nr_of("openat"));

	EXPECT_EQ(TT_PROCESS, entry(default_table(), "openat")->cls);
	ASSERT_NE(NULL, a);
	EXPECT_EQ(PK_PATH, a->kind);
	EXPECT_EQ(1, a->path_arg);
	EXPECT_EQ(0, a->dirfd_arg);
	EXPECT_EQ(2, a->flags_arg);
	EXPECT_EQ(PA_OPEN, a->access);
	EXPECT_EQ(PK_SIGACTION, policy_proc_arg(p, nr_of("rt_sigaction"))->kind);
	EXPECT_NULL(policy_proc_arg(p, nr_of("getppid")));
	policy_free(p);
}

TEST(mmap_checks_the_range_only_with_map_fixed)
{
	const struct tt_table *t = default_table();
	const struct tt_entry *e = entry(t, "mmap");
	int found = 0;

	ASSERT_EQ(TT_THREAD, e->cls);
	for (int i = e->first; i < e->first + e->nrules; i++) {
		const struct tt_rule *r = &t->rules[i];

		if (r->op == TR_RANGE_FREE && r->arg == 0 && r->arg2 == 1 && r->carg == 3 &&
		    r->cmask == MAP_FIXED)
			found = 1;
	}
	EXPECT_TRUE(found);
	EXPECT_EQ(0, EVAL("mmap", PROT_LO, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	EXPECT_EQ(-EPERM, EVAL("mmap", PROT_LO, 4096, PROT_READ,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	EXPECT_EQ(-EPERM, EVAL("mmap", PROT_LO - 4096, 4097, PROT_READ,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	EXPECT_EQ(0, EVAL("mmap", PROT_HI, 4096, PROT_READ,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
}

TEST(mmap_of_a_sandpit_descriptor_is_refused)
{
	EXPECT_EQ(-EBADF, EVAL("mmap", 0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, SANDPIT_FD, 0));
}

TEST(mremap_cannot_move_onto_protected_pages)
{
	EXPECT_EQ(-EPERM, EVAL("mremap", PROT_LO, 4096, 8192, 0, 0, 0));
	EXPECT_EQ(-EPERM, EVAL("mremap", 0x10000000, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED,
			       PROT_LO, 0));
	EXPECT_EQ(0, EVAL("mremap", 0x10000000, 4096, 4096, MREMAP_MAYMOVE, PROT_LO, 0));
}

TEST(munmap_and_mprotect_of_protected_pages_are_refused)
{
	EXPECT_EQ(-EPERM, EVAL("munmap", PROT_LO + 4096, 1, 0, 0, 0, 0));
	EXPECT_EQ(-EPERM, EVAL("mprotect", PROT_LO, 4096, PROT_READ | PROT_WRITE, 0, 0, 0));
	EXPECT_EQ(-EPERM, EVAL("madvise", PROT_LO, 4096, MADV_DONTNEED, 0, 0, 0));
	EXPECT_EQ(0, EVAL("munmap", 0x10000000, 4096, 0, 0, 0, 0));
}

TEST(unknown_name_is_refused_with_a_message_naming_it)
{
	struct policy *p;
	char err[256] = "";

	ASSERT_EQ(0, policy_new(&p));
	EXPECT_EQ(-ENOENT, policy_set(p, "no_such_call", POLICY_ALLOW, 0, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "no_such_call"));
	err[0] = '\0';
	EXPECT_EQ(-EINVAL, policy_set(p, "socketcall", POLICY_ALLOW, 0, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "socketcall"));
	policy_free(p);
}

TEST(unmentioned_syscalls_are_denied_with_enosys)
{
	const struct tt_table *t = default_table();
	struct policy *p;
	struct tt_table empty;

	/* the default names every call libseccomp knows; 400 is a gap in the
	 * x86-64 numbers */
	EXPECT_EQ(TT_DENY, t->entries[400].cls);
	EXPECT_EQ(ENOSYS, t->entries[400].err);
	EXPECT_EQ(TT_DENY, t->entries[TT_MAX_NR - 1].cls);
	EXPECT_EQ(ENOSYS, t->entries[TT_MAX_NR - 1].err);
	ASSERT_EQ(0, policy_new(&p));
	ASSERT_EQ(0, policy_compile_table(p, &empty, NULL, 0));
	for (int nr = 0; nr < TT_MAX_NR; nr++) {
		ASSERT_EQ(TT_DENY, empty.entries[nr].cls);
		ASSERT_EQ(ENOSYS, empty.entries[nr].err);
	}
	EXPECT_EQ(TT_MAGIC, empty.magic);
	policy_free(p);
}

TEST(native_is_only_for_what_strict_mode_allows)
{
	struct policy *p;
	char err[256] = "";

	EXPECT_EQ(TT_NATIVE, entry(default_table(), "read")->cls);
	EXPECT_EQ(TT_NATIVE, entry(default_table(), "rt_sigreturn")->cls);
	ASSERT_EQ(0, policy_new(&p));
	EXPECT_EQ(-EINVAL, policy_set(p, "getpid", POLICY_NATIVE, 0, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "getpid"));
	EXPECT_EQ(0, policy_set(p, "write", POLICY_NATIVE, 0, NULL, 0));
	policy_free(p);
}

TEST(gettid_is_emulated)
{
	const struct tt_entry *e = entry(default_table(), "gettid");

	EXPECT_EQ(TT_EMU, e->cls);
	EXPECT_EQ(TE_GETTID, e->err);
}

TEST(kill_class_reaches_the_table)
{
	struct policy *p;
	struct tt_table t;

	ASSERT_EQ(0, policy_new(&p));
	ASSERT_EQ(0, policy_set(p, "ptrace", POLICY_KILL, 0, NULL, 0));
	ASSERT_EQ(0, policy_compile_table(p, &t, NULL, 0));
	EXPECT_EQ(TT_KILL, t.entries[nr_of("ptrace")].cls);
	policy_free(p);
}

TEST(rules_need_the_thread_class)
{
	struct policy *p;
	struct policy_rule r = { .op = RULE_FD_FREE, .arg = 0, .arg2 = POLICY_NOARG,
				 .carg = POLICY_NOARG };

	ASSERT_EQ(0, policy_new(&p));
	ASSERT_EQ(0, policy_set(p, "close", POLICY_ALLOW, 0, NULL, 0));
	EXPECT_EQ(-EINVAL, policy_add_rule(p, "close", &r, NULL, 0));
	ASSERT_EQ(0, policy_set(p, "close", POLICY_THREAD, EBADF, NULL, 0));
	EXPECT_EQ(0, policy_add_rule(p, "close", &r, NULL, 0));
	r.arg = 6;
	EXPECT_EQ(-EINVAL, policy_add_rule(p, "close", &r, NULL, 0));
	policy_free(p);
}

TEST(deny_needs_an_errno)
{
	struct policy *p;

	ASSERT_EQ(0, policy_new(&p));
	EXPECT_EQ(-EINVAL, policy_set(p, "execve", POLICY_DENY, 0, NULL, 0));
	EXPECT_EQ(-EINVAL, policy_set(p, "execve", POLICY_DENY, 4096, NULL, 0));
	EXPECT_EQ(-EINVAL, policy_set(p, "openat", POLICY_PROCESS, 0, NULL, 0));
	policy_free(p);
}

TEST(too_many_rules_for_the_table_is_an_error)
{
	struct policy *p;
	struct tt_table t;
	struct policy_rule r = { .op = RULE_FD_FREE, .arg2 = POLICY_NOARG, .carg = POLICY_NOARG };
	char err[256] = "";
	int calls = 0;

	ASSERT_EQ(0, policy_new(&p));
	for (int nr = 0; calls * POLICY_MAX_RULES <= TT_MAX_RULES; nr++) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);

		ASSERT_NE(NULL, name);
		ASSERT_EQ(0, policy_set(p, name, POLICY_THREAD, EPERM, NULL, 0));
		for (int i = 0; i < POLICY_MAX_RULES; i++)
			ASSERT_EQ(0, policy_add_rule(p, name, &r, NULL, 0));
		EXPECT_EQ(-E2BIG, policy_add_rule(p, name, &r, NULL, 0));
		free(name);
		calls++;
	}
	EXPECT_EQ(-E2BIG, policy_compile_table(p, &t, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "rules"));
	policy_free(p);
}

TEST(default_policy_names_each_syscall_once)
{
	/* policy_new_default refuses a name mentioned twice; it must build */
	struct policy *p = default_policy();

	policy_free(p);
}

/* --- register rules, as T would run them --- */

TEST(fcntl_allows_only_the_listed_commands)
{
	EXPECT_EQ(0, EVAL("fcntl", 3, F_GETFL, 0, 0, 0, 0));
	EXPECT_EQ(0, EVAL("fcntl", 3, F_SETLKW, 0, 0, 0, 0));
	EXPECT_EQ(0, EVAL("fcntl", 3, F_DUPFD_CLOEXEC, 10, 0, 0, 0));
	/* a pipe's size and a memfd's seals: U's own descriptors only */
	EXPECT_EQ(0, EVAL("fcntl", 3, F_SETPIPE_SZ, 65536, 0, 0, 0));
	EXPECT_EQ(0, EVAL("fcntl", 3, F_GETPIPE_SZ, 0, 0, 0, 0));
	EXPECT_EQ(0, EVAL("fcntl", 3, F_ADD_SEALS, F_SEAL_WRITE, 0, 0, 0));
	EXPECT_EQ(0, EVAL("fcntl", 3, F_GET_SEALS, 0, 0, 0, 0));
	EXPECT_EQ(-EBADF, EVAL("fcntl", SANDPIT_FD, F_ADD_SEALS, F_SEAL_WRITE, 0, 0, 0));
	EXPECT_EQ(-EBADF, EVAL("fcntl", SANDPIT_FD, F_SETPIPE_SZ, 4096, 0, 0, 0));
	/* and nothing else above F_SETLKW: the neighbours of the range */
	EXPECT_EQ(-EINVAL, EVAL("fcntl", 3, F_SETOWN, 0, 0, 0, 0));
	EXPECT_EQ(-EINVAL, EVAL("fcntl", 3, F_NOTIFY, 0, 0, 0, 0));
	EXPECT_EQ(-EINVAL, EVAL("fcntl", 3, F_DUPFD_CLOEXEC - 1, 0, 0, 0, 0));
	EXPECT_EQ(-EINVAL, EVAL("fcntl", 3, F_GET_SEALS + 1, 0, 0, 0, 0));
	EXPECT_EQ(-EINVAL, EVAL("fcntl", 3, (1ULL << 32) | F_ADD_SEALS, 0, 0, 0, 0));
	EXPECT_EQ(-EINVAL, EVAL("fcntl", 3, (1ULL << 32) | F_GETFL, 0, 0, 0, 0));
	EXPECT_EQ(-EBADF, EVAL("fcntl", SANDPIT_FD, F_GETFL, 0, 0, 0, 0));
}

TEST(ioctl_allows_only_tty_queries)
{
	EXPECT_EQ(0, EVAL("ioctl", 0, TCGETS, 0, 0, 0, 0));
	EXPECT_EQ(0, EVAL("ioctl", 0, TIOCGWINSZ, 0, 0, 0, 0));
	EXPECT_EQ(0, EVAL("ioctl", 0, FIONREAD, 0, 0, 0, 0));
	EXPECT_EQ(0, EVAL("ioctl", 0, FIONBIO, 0, 0, 0, 0));
	EXPECT_EQ(-ENOTTY, EVAL("ioctl", 0, TIOCSTI, 0, 0, 0, 0));
	EXPECT_EQ(-ENOTTY, EVAL("ioctl", 0, TCSETS, 0, 0, 0, 0));
	EXPECT_EQ(-ENOTTY, EVAL("ioctl", 0, (1ULL << 32) | TCGETS, 0, 0, 0, 0));
	EXPECT_EQ(-EBADF, EVAL("ioctl", SANDPIT_FD, TCGETS, 0, 0, 0, 0));
}

TEST(close_and_dup2_cannot_touch_sandpit_descriptors)
{
	EXPECT_EQ(-EBADF, EVAL("close", SANDPIT_FD, 0, 0, 0, 0, 0));
	EXPECT_EQ(0, EVAL("close", 3, 0, 0, 0, 0, 0));
	EXPECT_EQ(-EBADF, EVAL("dup2", 3, SANDPIT_FD, 0, 0, 0, 0));
	EXPECT_EQ(-EBADF, EVAL("dup3", SANDPIT_FD, 4, 0, 0, 0, 0));
	EXPECT_EQ(-EBADF, EVAL("dup", SANDPIT_FD, 0, 0, 0, 0, 0));
	EXPECT_EQ(0, EVAL("dup2", 3, 4, 0, 0, 0, 0));
	EXPECT_EQ(-EBADF, EVAL("fchdir", SANDPIT_FD, 0, 0, 0, 0, 0));
	EXPECT_EQ(-EBADF, EVAL("ftruncate", SANDPIT_FD, 0, 0, 0, 0, 0));
	EXPECT_EQ(-EBADF, EVAL("epoll_ctl", 5, EPOLL_CTL_ADD, SANDPIT_FD, 0x1000, 0, 0));
}

/* a thread-directed signal only to a thread B knows as a U: never a T,
 * nor a thread just made, nor a tid of no thread (ESRCH, as the kernel) */
TEST(signals_only_to_self_never_to_a_trusted_thread)
{
	EXPECT_EQ(0, EVAL("kill", SELF_PID, 15, 0, 0, 0, 0));
	EXPECT_EQ(-EPERM, EVAL("kill", 1, 9, 0, 0, 0, 0));
	EXPECT_EQ(-EPERM, EVAL("kill", 0, 9, 0, 0, 0, 0));
	EXPECT_EQ(-EPERM, EVAL("kill", (uint64_t)-1, 9, 0, 0, 0, 0));
	EXPECT_EQ(0, EVAL("tgkill", SELF_PID, SELF_PID, 10, 0, 0, 0));
	EXPECT_EQ(0, EVAL("tgkill", SELF_PID, U_TID, 10, 0, 0, 0));
	EXPECT_EQ(-ESRCH, EVAL("tgkill", SELF_PID, SELF_PID + 5, 10, 0, 0, 0));
	EXPECT_EQ(-ESRCH, EVAL("tgkill", SELF_PID, T_TID, 10, 0, 0, 0));
	/* tids <= 0: the kernel's EINVAL */
	EXPECT_EQ(0, EVAL("tgkill", SELF_PID, 0, 10, 0, 0, 0));
	EXPECT_EQ(0, EVAL("tgkill", SELF_PID, (uint32_t)-1, 10, 0, 0, 0));
	EXPECT_EQ(-EPERM, EVAL("tgkill", 1, 1, 10, 0, 0, 0));
	EXPECT_EQ(-EPERM, EVAL("tkill", T_TID, 10, 0, 0, 0, 0));
}

/* B compares a new limit with the one in force (progs_test) */
TEST(limits_go_to_the_trusted_process)
{
	struct policy *p = default_policy();
	EXPECT_EQ(TT_PROCESS, entry(default_table(), "prlimit64")->cls);
	EXPECT_EQ(TT_PROCESS, entry(default_table(), "setrlimit")->cls);
	EXPECT_EQ(PK_RLIMIT, policy_proc_arg(p, nr_of("prlimit64"))->kind);
	EXPECT_EQ(PK_RLIMIT, policy_proc_arg(p, nr_of("setrlimit"))->kind);
	policy_free(p);
}

TEST(prctl_allows_names_and_dumpable_only)
{
	EXPECT_EQ(0, EVAL("prctl", PR_SET_NAME, 0x1000, 0, 0, 0, 0));
	EXPECT_EQ(0, EVAL("prctl", PR_GET_NAME, 0x1000, 0, 0, 0, 0));
	EXPECT_EQ(0, EVAL("prctl", PR_GET_DUMPABLE, 0, 0, 0, 0, 0));
	EXPECT_EQ(-EPERM, EVAL("prctl", PR_SET_SECCOMP, 2, 0, 0, 0, 0));
	EXPECT_EQ(-EPERM, EVAL("prctl", PR_SET_DUMPABLE, 1, 0, 0, 0, 0));
	EXPECT_EQ(-EPERM, EVAL("prctl", PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0));
}

/* connect and sendmsg go to B, which decides from the connect grants
 * (net_test); socket of AF_UNIX only, until a grant (sandbox.c) */
TEST(only_af_unix_socketpairs_and_no_sockets)
{
	EXPECT_EQ(0, EVAL("socketpair", AF_UNIX, SOCK_STREAM, 0, 0x1000, 0, 0));
	EXPECT_EQ(-EACCES, EVAL("socketpair", AF_INET, SOCK_STREAM, 0, 0x1000, 0, 0));
	EXPECT_EQ(-EAFNOSUPPORT, EVAL("socket", AF_INET, SOCK_STREAM, 0, 0, 0, 0));
	EXPECT_EQ(-EAFNOSUPPORT, EVAL("socket", AF_NETLINK, SOCK_RAW, 0, 0, 0, 0));
	EXPECT_EQ(0, EVAL("socket", AF_UNIX, SOCK_STREAM, 0, 0, 0, 0));
	EXPECT_EQ(TT_ANS_B, EVAL("connect", 3, 0x1000, 16, 0, 0, 0));
	EXPECT_EQ(TT_ANS_B, EVAL("sendmsg", 3, 0x1000, 0, 0, 0, 0));
	EXPECT_EQ(-EACCES, EVAL("bind", 3, 0x1000, 16, 0, 0, 0));
	EXPECT_EQ(-EACCES, EVAL("sendto", 3, 0x1000, 1, 0, 0x2000, 16));
	EXPECT_EQ(0, EVAL("sendto", 3, 0x1000, 1, 0, 0, 0));
	EXPECT_EQ(-EACCES, EVAL("sendmmsg", 3, 0x1000, 1, 0, 0, 0));
}

TEST(clone3_is_enosys_so_libc_falls_back)
{
	EXPECT_EQ(-ENOSYS, EVAL("clone3", 0, 0, 0, 0, 0, 0));
	EXPECT_EQ(-EPERM, EVAL("ptrace", 0, 0, 0, 0, 0, 0));
	EXPECT_EQ(-EPERM, EVAL("process_vm_writev", 0, 0, 0, 0, 0, 0));
	EXPECT_EQ(-EPERM, EVAL("seccomp", 0, 0, 0, 0, 0, 0));
}

/* --- paths --- */

#define DISAGREE (-10000) /* no errno: fails whatever the test expects */

/* Every path test resolves both ways, by the walk alone and with openat2's
 * proof that no link is on the way; the two must agree. */
static int resolve(const char *cwd, const char *path, int flags, char *out)
{
	char fast[PATH_MAX];
	int r = path_resolve(getpid(), cwd, path, flags, out, PATH_MAX);
	int f = path_resolve(getpid(), cwd, path, flags | PATH_OPENAT2, fast, sizeof(fast));

	if (f != r || (r == 0 && strcmp(fast, out))) {
		fprintf(stderr, "%s: the walk gives %d \"%s\", openat2 %d \"%s\"\n", path, r,
			r ? "" : out, f, f ? "" : fast);
		return DISAGREE;
	}
	/* and from the directory object, as B resolves a name relative to a
	 * descriptor: where it decides, the walk's text */
	char dir[PATH_MAX], joined[PATH_MAX];
	int dfd = cwd && path[0] != '/' ? open(cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	int b = dfd >= 0 && realpath(cwd, dir) ? path_open_beneath(dfd, path, flags | PATH_OPENAT2)
					     : -EAGAIN;
	if (dfd >= 0)
		close(dfd);
	if (b >= 0)
		close(b);
	if (b != -EAGAIN &&
	    (r != 0 || path_join_beneath(dir, path, joined, sizeof(joined)) || strcmp(joined, out))) {
		fprintf(stderr, "%s: the walk gives %d \"%s\", the directory object %d\n", path, r,
			r ? "" : out, b);
		return DISAGREE;
	}
	return r;
}

static int kernel_has_openat2(void)
{
	return syscall(SYS_openat2, -1, "", NULL, 0) == -1 && errno != ENOSYS;
}

/* what B resolves from a directory object itself, and what it leaves to
 * the walk */
TEST(names_beneath_a_directory_object)
{
	char out[PATH_MAX], long_name[PATH_MAX + 8];

	EXPECT_EQ(1, path_name_beneath("f"));
	EXPECT_EQ(1, path_name_beneath("a/./b//c/"));
	EXPECT_EQ(1, path_name_beneath("..."));
	EXPECT_EQ(1, path_name_beneath("selfish/x"));
	EXPECT_EQ(0, path_name_beneath(""));
	EXPECT_EQ(0, path_name_beneath("/etc"));
	EXPECT_EQ(0, path_name_beneath(".."));
	EXPECT_EQ(0, path_name_beneath("a/../b"));
	EXPECT_EQ(0, path_name_beneath("a/.."));
	EXPECT_EQ(0, path_name_beneath("self"));
	EXPECT_EQ(0, path_name_beneath("x/thread-self/y"));
	memset(long_name, 'a', NAME_MAX + 1);
	long_name[NAME_MAX + 1] = 0;
	EXPECT_EQ(0, path_name_beneath(long_name));
	long_name[NAME_MAX] = 0;
	EXPECT_EQ(1, path_name_beneath(long_name));
	ASSERT_EQ(0, path_join_beneath("/usr", "lib//./x/", out, sizeof(out)));
	EXPECT_STREQ("/usr/lib/x", out);
	ASSERT_EQ(0, path_join_beneath("/", "etc", out, sizeof(out)));
	EXPECT_STREQ("/etc", out);
	ASSERT_EQ(0, path_join_beneath("/usr", ".", out, sizeof(out)));
	EXPECT_STREQ("/usr", out);
	EXPECT_EQ(-EINVAL, path_join_beneath("usr", "x", out, sizeof(out)));
	EXPECT_EQ(-EINVAL, path_join_beneath("/usr", "../etc", out, sizeof(out)));
	for (size_t i = 0; i < sizeof(long_name) - 1; i++)
		long_name[i] = i % 8 == 7 ? '/' : 'a';
	long_name[sizeof(long_name) - 1] = 0;
	EXPECT_EQ(-ENAMETOOLONG, path_join_beneath("/usr", long_name, out, sizeof(out)));

	int usr = open("/usr", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, usr);
	int fd = path_open_beneath(usr, "lib", PATH_OPENAT2);
	if (!kernel_has_openat2()) {
		EXPECT_EQ(-EAGAIN, fd);
	} else {
		ASSERT_LE(0, fd);
		close(fd);
		EXPECT_EQ(-ENOENT, path_open_beneath(usr, "no-such/x", PATH_OPENAT2));
		EXPECT_EQ(-EAGAIN, path_open_beneath(usr, "lib/../bin", PATH_OPENAT2));
		EXPECT_EQ(-EAGAIN, path_open_beneath(usr, "lib", 0)); /* no openat2 */
	}
	close(usr);
	/* a link anywhere on the way, or at the end of a name that follows it */
	char tmp[] = "/tmp/sandpit-beneath-XXXXXX", p[PATH_MAX];
	ASSERT_NE(NULL, mkdtemp(tmp));
	snprintf(p, sizeof(p), "%s/l", tmp);
	ASSERT_EQ(0, symlink("/etc", p));
	int t = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, t);
	EXPECT_EQ(-EAGAIN, path_open_beneath(t, "l/passwd", PATH_OPENAT2));
	EXPECT_EQ(-EAGAIN, path_open_beneath(t, "l", PATH_OPENAT2));
	fd = path_open_beneath(t, "l", PATH_OPENAT2 | PATH_NOFOLLOW);
	if (kernel_has_openat2()) {
		ASSERT_LE(0, fd);
		struct stat sb;
		ASSERT_EQ(0, fstat(fd, &sb));
		EXPECT_TRUE(S_ISLNK(sb.st_mode));
		close(fd);
	}
	close(t);
	unlink(p);
	rmdir(tmp);
}

TEST(dotdot_is_removed)
{
	char out[PATH_MAX];

	ASSERT_EQ(0, resolve(NULL, "/usr/../etc/passwd", 0, out));
	EXPECT_STREQ("/etc/passwd", out);
	ASSERT_EQ(0, resolve(NULL, "/../../etc/./passwd", 0, out));
	EXPECT_STREQ("/etc/passwd", out);
}

TEST(slashes_and_dots_are_removed)
{
	char out[PATH_MAX];

	ASSERT_EQ(0, resolve(NULL, "//usr///lib/./x", 0, out));
	EXPECT_STREQ("/usr/lib/x", out);
	ASSERT_EQ(0, resolve(NULL, "/", 0, out));
	EXPECT_STREQ("/", out);
	ASSERT_EQ(0, path_normalise("//a/./b/../c//", out, sizeof(out)));
	EXPECT_STREQ("/a/c", out);
}

TEST(relative_paths_join_the_cwd)
{
	char out[PATH_MAX];

	ASSERT_EQ(0, resolve("/usr", "share/../include/x.h", 0, out));
	EXPECT_STREQ("/usr/include/x.h", out);
	ASSERT_EQ(0, resolve("/usr", "../etc/passwd", 0, out));
	EXPECT_STREQ("/etc/passwd", out);
	EXPECT_EQ(-EINVAL, resolve(NULL, "etc/passwd", 0, out));
	EXPECT_EQ(-EINVAL, resolve("usr", "x", 0, out));
	EXPECT_EQ(-ENOENT, resolve("/usr", "", 0, out));
}

TEST(too_long_a_result_is_refused)
{
	char out[8];

	EXPECT_EQ(-ENAMETOOLONG, path_resolve(getpid(), NULL, "/usr/lib/x", 0, out, sizeof(out)));
}

FIXTURE(tmpdir)
{
	char dir[PATH_MAX];
	char path[PATH_MAX];
	char out[PATH_MAX];
};

FIXTURE_SETUP(tmpdir)
{
	char tmpl[] = "/tmp/policy_test.XXXXXX";

	ASSERT_NE(NULL, mkdtemp(tmpl));
	ASSERT_NE(NULL, realpath(tmpl, self->dir));
}

FIXTURE_TEARDOWN(tmpdir)
{
	static const char *const names[] = { "out", "loop1", "loop2", "rel", "file",
					     "sub/back", "sub", "w/link", "w" };
	char p[PATH_MAX];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", self->dir, names[i]) >= sizeof(p))
			continue;
		if (unlink(p) < 0)
			rmdir(p);
	}
	rmdir(self->dir);
}

static const char *at(char *buf, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
		abort();
	return buf;
}

TEST_F(tmpdir, symlink_out_of_a_write_grant_resolves_to_its_target_and_is_refused)
{
	char w[PATH_MAX], link[PATH_MAX];
	struct policy *p;

	ASSERT_EQ(0, mkdir(at(w, self->dir, "w"), 0700));
	ASSERT_EQ(0, symlink("/etc", at(link, self->dir, "w/link")));
	ASSERT_EQ(0, policy_new(&p));
	ASSERT_EQ(0, policy_grant(p, w, 1, NULL, 0));

	ASSERT_EQ(0, resolve(NULL, at(self->path, self->dir, "w/link/passwd"), 0, self->out));
	EXPECT_STREQ("/etc/passwd", self->out);
	EXPECT_EQ(-EACCES, policy_check_path(p, getpid(), self->out, PA_WRITE));
	EXPECT_EQ(-EACCES, policy_check_path(p, getpid(), self->out, PA_READ));

	ASSERT_EQ(0, resolve(w, "new-file", 0, self->out));
	EXPECT_STREQ(at(self->path, self->dir, "w/new-file"), self->out);
	EXPECT_EQ(0, policy_check_path(p, getpid(), self->out, PA_WRITE));
	policy_free(p);
}

TEST_F(tmpdir, a_write_grant_through_a_symlink_is_refused_naming_its_target)
{
	char w[PATH_MAX], link[PATH_MAX], text[2 * PATH_MAX], err[PATH_MAX + 256] = "";
	struct policy *p, *q = NULL;

	ASSERT_EQ(0, mkdir(at(w, self->dir, "w"), 0700));
	ASSERT_EQ(0, symlink(w, at(link, self->dir, "out")));
	ASSERT_EQ(0, policy_new(&p));
	EXPECT_EQ(-ELOOP, policy_grant(p, link, 1, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, w)) TH_LOG("%s", err);
	EXPECT_EQ(0u, policy_ngrants(p)); /* nothing kept */
	/* below the link too, and a tail that is not there yet */
	snprintf(text, sizeof(text), "%s/sub/new", link);
	EXPECT_EQ(-ELOOP, policy_grant(p, text, 1, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, w)) TH_LOG("%s", err);
	/* a read grant through it is kept, with its target */
	EXPECT_EQ(0, policy_grant(p, link, 0, NULL, 0));
	EXPECT_EQ(2u, policy_ngrants(p));
	EXPECT_EQ(1, policy_grant_target(link, self->out, sizeof(self->out)));
	EXPECT_STREQ(w, self->out);
	EXPECT_EQ(0, policy_grant_target(w, self->out, sizeof(self->out)));
	EXPECT_EQ(0, policy_grant(p, w, 1, NULL, 0));
	policy_free(p);
	/* from a policy file: its line, and the target */
	snprintf(text, sizeof(text), "path write %s\n", link);
	EXPECT_GT(0, policy_parse_text("w.policy", text, strlen(text), &q, NULL, NULL, err,
				       sizeof(err)));
	EXPECT_EQ(NULL, q);
	EXPECT_NE(NULL, strstr(err, "w.policy:1")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, w)) TH_LOG("%s", err);
}

TEST_F(tmpdir, a_dangling_symlink_in_a_write_grant_is_refused_too)
{
	char link[PATH_MAX], target[PATH_MAX], err[PATH_MAX + 256] = "";
	struct policy *p;

	ASSERT_EQ(0, symlink(at(target, self->dir, "file"), at(link, self->dir, "rel")));
	ASSERT_EQ(0, policy_new(&p));
	EXPECT_EQ(-ELOOP, policy_grant(p, link, 1, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, target)) TH_LOG("%s", err);
	EXPECT_EQ(0u, policy_ngrants(p));
	policy_free(p);
}

TEST_F(tmpdir, relative_symlinks_resolve_against_their_directory)
{
	char sub[PATH_MAX], link[PATH_MAX], expect[PATH_MAX];

	ASSERT_EQ(0, mkdir(at(sub, self->dir, "sub"), 0700));
	ASSERT_EQ(0, symlink("../file", at(link, self->dir, "sub/back")));
	ASSERT_EQ(0, resolve(sub, "back", 0, self->out));
	EXPECT_STREQ(at(expect, self->dir, "file"), self->out);
	/* "back/.." is the parent of the target, not of the link */
	ASSERT_EQ(0, symlink("/usr/lib", at(link, self->dir, "rel")));
	ASSERT_EQ(0, resolve(self->dir, "rel/../bin", 0, self->out));
	EXPECT_STREQ("/usr/bin", self->out);
}

TEST_F(tmpdir, symlink_loops_give_eloop)
{
	char a[PATH_MAX], b[PATH_MAX];

	ASSERT_EQ(0, symlink("loop2", at(a, self->dir, "loop1")));
	ASSERT_EQ(0, symlink("loop1", at(b, self->dir, "loop2")));
	EXPECT_EQ(-ELOOP, resolve(NULL, a, 0, self->out));
}

TEST_F(tmpdir, nofollow_keeps_the_last_link_but_not_inner_ones)
{
	char link[PATH_MAX];

	ASSERT_EQ(0, symlink("/etc/passwd", at(link, self->dir, "out")));
	ASSERT_EQ(0, resolve(NULL, link, PATH_NOFOLLOW, self->out));
	EXPECT_STREQ(link, self->out);
	ASSERT_EQ(0, resolve(NULL, link, 0, self->out));
	EXPECT_STREQ("/etc/passwd", self->out);
	/* a trailing slash asks for the directory: the link is followed */
	ASSERT_EQ(0, symlink("/usr", at(link, self->dir, "rel")));
	ASSERT_EQ(0, resolve(self->dir, "rel/", PATH_NOFOLLOW, self->out));
	EXPECT_STREQ("/usr", self->out);
}

TEST_F(tmpdir, a_missing_tail_is_kept_for_creation)
{
	char link[PATH_MAX];

	ASSERT_EQ(0, resolve(self->dir, "no/such/file", 0, self->out));
	EXPECT_STREQ(at(self->path, self->dir, "no/such/file"), self->out);
	EXPECT_EQ(-ENOENT, resolve(self->dir, "no/../file", 0, self->out));
	/* a dangling link creates its target */
	ASSERT_EQ(0, symlink("/nonexistent-dir/x", at(link, self->dir, "out")));
	ASSERT_EQ(0, resolve(NULL, link, 0, self->out));
	EXPECT_STREQ("/nonexistent-dir/x", self->out);
}

TEST_F(tmpdir, a_file_is_not_a_directory)
{
	char f[PATH_MAX];
	int fd = open(at(f, self->dir, "file"), O_CREAT | O_WRONLY, 0600);

	ASSERT_LE(0, fd);
	close(fd);
	EXPECT_EQ(-ENOTDIR, resolve(self->dir, "file/x", 0, self->out));
}

TEST(proc_self_means_the_sandboxed_process_not_b)
{
	char out[PATH_MAX], expect[64];
	pid_t pid = getppid(); /* any process but the resolver */

	ASSERT_EQ(0, path_resolve(pid, NULL, "/proc/self/status", 0, out, sizeof(out)));
	snprintf(expect, sizeof(expect), "/proc/%d/status", (int)pid);
	EXPECT_STREQ(expect, out);
	ASSERT_EQ(0, path_resolve(pid, NULL, "/proc/thread-self/stat", 0, out, sizeof(out)));
	snprintf(expect, sizeof(expect), "/proc/%d/stat", (int)pid);
	EXPECT_STREQ(expect, out);
	/* not followed, self still means P, with or without openat2's shortcut */
	ASSERT_EQ(0, path_resolve(pid, NULL, "/proc/self", PATH_NOFOLLOW | PATH_OPENAT2, out,
				  sizeof(out)));
	snprintf(expect, sizeof(expect), "/proc/%d", (int)pid);
	EXPECT_STREQ(expect, out);
	/* /proc/mounts is a link to self/mounts */
	ASSERT_EQ(0, path_resolve(pid, NULL, "/proc/mounts", 0, out, sizeof(out)));
	snprintf(expect, sizeof(expect), "/proc/%d/mounts", (int)pid);
	EXPECT_STREQ(expect, out);
}

/* Under PATH_OWN_EXE the walk stops at the exe link of the process it
 * resolves for (B answers for it under `sandpit run`): every spelling
 * ends at the link's text, anything under it is ENOTDIR, and only the
 * whole text of that process's link (or a thread's) is the link */
TEST(the_processs_own_exe_link_is_not_followed_under_path_own_exe)
{
	char out[PATH_MAX], expect[64], self_exe[PATH_MAX], path[96];
	pid_t pid = getpid();
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);

	ASSERT_LT(0, n);
	self_exe[n] = 0;
	snprintf(expect, sizeof(expect), "/proc/%d/exe", (int)pid);
	const char *names[] = { "/proc/self/exe", "/proc/thread-self/exe", "/proc/self/../self/exe",
				"//proc/./self//exe", expect };
	for (int i = 0; i < 5; i++)
		for (int f = 0; f < 4; f++) {
			int flags = PATH_OWN_EXE | (f & 1 ? PATH_NOFOLLOW : 0) | (f & 2 ? PATH_OPENAT2 : 0);
			ASSERT_EQ(0, path_resolve(pid, NULL, names[i], flags, out, sizeof(out)))
				TH_LOG("%s", names[i]);
			EXPECT_STREQ(expect, out);
		}
	/* without the flag, followed to this program as before */
	ASSERT_EQ(0, path_resolve(pid, NULL, "/proc/self/exe", 0, out, sizeof(out)));
	EXPECT_STREQ(self_exe, out);
	EXPECT_EQ(-ENOTDIR, path_resolve(pid, NULL, "/proc/self/exe/", PATH_OWN_EXE, out, sizeof(out)));
	EXPECT_EQ(-ENOTDIR, path_resolve(pid, NULL, "/proc/self/exe/x", PATH_OWN_EXE | PATH_NOFOLLOW,
					 out, sizeof(out)));
	EXPECT_EQ(-ENOTDIR, path_resolve(pid, NULL, "/proc/self/exe/..", PATH_OWN_EXE, out, sizeof(out)));

	EXPECT_EQ(1, path_proc_exe(pid, expect));
	snprintf(path, sizeof(path), "/proc/%d/task/%d/exe", (int)pid, (int)pid);
	EXPECT_EQ(1, path_proc_exe(pid, path));
	const char *not_it[] = { "/proc/%d/exex", "/proc/%d/exe/", "/proc/%d/ex", "/proc/0%d/exe",
				 "/proc/%d/task/0/exe", "/proc/%d/task/1/exe", "/proc/%d/fd/exe",
				 "/tmp/proc/%d/exe", "/proc/%d", "/proc/%d/cwd" };
	for (size_t i = 0; i < sizeof(not_it) / sizeof(not_it[0]); i++) {
		snprintf(path, sizeof(path), not_it[i], (int)pid);
		EXPECT_EQ(0, path_proc_exe(pid, path)) TH_LOG("%s", path);
	}
	EXPECT_EQ(0, path_proc_exe(pid, "/proc/1/exe"));
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)getppid());
	EXPECT_EQ(0, path_proc_exe(pid, path));
}

TEST(magic_links_to_objects_without_a_path_are_refused)
{
	char path[64], out[PATH_MAX];
	int fds[2], fd;

	ASSERT_EQ(0, pipe(fds));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[0]);
	EXPECT_EQ(-EACCES, resolve(NULL, path, 0, out));
	fd = memfd_create("policy_test", 0);
	ASSERT_LE(0, fd);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	EXPECT_EQ(-EACCES, resolve(NULL, path, 0, out));
	close(fd);
	close(fds[0]);
	close(fds[1]);
}

TEST(magic_links_to_files_resolve_to_the_file)
{
	char path[64], out[PATH_MAX];
	int fd = open("/etc/passwd", O_RDONLY);

	ASSERT_LE(0, fd);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ASSERT_EQ(0, resolve(NULL, path, 0, out));
	EXPECT_STREQ("/etc/passwd", out);
	ASSERT_EQ(0, resolve(NULL, "/proc/self/root/etc/passwd", 0, out));
	EXPECT_STREQ("/etc/passwd", out);
	close(fd);
}

/* --- grants --- */

TEST(grants_match_whole_components)
{
	struct policy *p;
	pid_t pid = getpid();

	ASSERT_EQ(0, policy_new(&p));
	ASSERT_EQ(0, policy_grant(p, "/usr", 0, NULL, 0));
	EXPECT_EQ(0, policy_check_path(p, pid, "/usr", PA_READ));
	EXPECT_EQ(0, policy_check_path(p, pid, "/usr/lib/x", PA_READ));
	EXPECT_EQ(-EACCES, policy_check_path(p, pid, "/usrx", PA_READ));
	EXPECT_EQ(-EACCES, policy_check_path(p, pid, "/us", PA_READ));
	EXPECT_EQ(-EACCES, policy_check_path(p, pid, "/", PA_READ));
	policy_free(p);
}

TEST(a_file_grant_covers_that_file_only)
{
	struct policy *p;

	ASSERT_EQ(0, policy_new(&p));
	ASSERT_EQ(0, policy_grant(p, "/dev/null", 0, NULL, 0));
	EXPECT_EQ(0, policy_check_path(p, getpid(), "/dev/null", PA_READ));
	EXPECT_EQ(-EACCES, policy_check_path(p, getpid(), "/dev/null/x", PA_READ));
	EXPECT_EQ(-EACCES, policy_check_path(p, getpid(), "/dev/nullx", PA_READ));
	policy_free(p);
}

TEST(unnormalised_paths_are_never_prefix_checked)
{
	struct policy *p;

	ASSERT_EQ(0, policy_new(&p));
	ASSERT_EQ(0, policy_grant(p, "/usr", 1, NULL, 0));
	EXPECT_EQ(-EINVAL, policy_check_path(p, getpid(), "/usr/../etc/passwd", PA_READ));
	EXPECT_EQ(-EINVAL, policy_check_path(p, getpid(), "/usr//lib", PA_READ));
	EXPECT_EQ(-EINVAL, policy_check_path(p, getpid(), "/usr/", PA_READ));
	EXPECT_EQ(-EINVAL, policy_check_path(p, getpid(), "usr/lib", PA_READ));
	EXPECT_EQ(-EINVAL, policy_check_path(p, getpid(), "/usr/lib", PA_OPEN));
	EXPECT_EQ(-EACCES, policy_check_path(p, getpid(), "/usr/lib", PA_NEVER));
	policy_free(p);
}

TEST(write_implies_read_but_read_is_not_write)
{
	struct policy *p;

	ASSERT_EQ(0, policy_new(&p));
	ASSERT_EQ(0, policy_grant(p, "/var/tmp", 1, NULL, 0));
	ASSERT_EQ(0, policy_grant(p, "/usr", 0, NULL, 0));
	EXPECT_EQ(0, policy_check_path(p, getpid(), "/var/tmp/x", PA_READ));
	EXPECT_EQ(0, policy_check_path(p, getpid(), "/var/tmp/x", PA_WRITE));
	EXPECT_EQ(-EACCES, policy_check_path(p, getpid(), "/usr/x", PA_WRITE));
	policy_free(p);
}

TEST(a_grants_root_and_the_directories_above_it_are_never_namespace_targets)
{
	struct policy *p;
	pid_t pid = getpid();

	ASSERT_EQ(0, policy_new(&p));
	ASSERT_EQ(0, policy_grant(p, "/nonexistent/a", 1, NULL, 0));
	ASSERT_EQ(0, policy_grant(p, "/nonexistent/a/b/c", 1, NULL, 0));
	ASSERT_EQ(0, policy_grant(p, "/nonexistent/a/r", 0, NULL, 0));
	EXPECT_EQ(0, policy_check_namespace(p, pid, "/nonexistent/a/x", NULL));
	EXPECT_EQ(0, policy_check_namespace(p, pid, "/nonexistent/a/b/x", NULL));
	EXPECT_EQ(0, policy_check_namespace(p, pid, "/nonexistent/a/b/c/x", "/nonexistent/a/y"));
	/* the roots, of write and read grants alike, and what is above them */
	EXPECT_EQ(-EACCES, policy_check_namespace(p, pid, "/nonexistent/a", NULL));
	EXPECT_EQ(-EACCES, policy_check_namespace(p, pid, "/nonexistent/a/b/c", NULL));
	EXPECT_EQ(-EACCES, policy_check_namespace(p, pid, "/nonexistent/a/b", NULL));
	EXPECT_EQ(-EACCES, policy_check_namespace(p, pid, "/nonexistent/a/r", NULL));
	EXPECT_EQ(-EACCES, policy_check_namespace(p, pid, "/nonexistent/a/x", "/nonexistent/a/b"));
	EXPECT_EQ(-EACCES, policy_check_namespace(p, pid, "/nonexistent/a/b", "/nonexistent/a/x"));
	EXPECT_EQ(1, policy_path_holds_grant(p, pid, "/nonexistent"));
	EXPECT_EQ(1, policy_path_holds_grant(p, pid, "/"));
	EXPECT_EQ(0, policy_path_holds_grant(p, pid, "/nonexistent/a/bb"));
	EXPECT_EQ(0, policy_path_holds_grant(p, pid, "/nonexistent/a/r/x"));
	/* reads and writes of the roots themselves are as before */
	EXPECT_EQ(0, policy_check_path(p, pid, "/nonexistent/a", PA_WRITE));
	policy_free(p);
}

TEST(a_file_grant_is_its_data_metadata_only_strictly_below_a_directory_grant)
{
	struct policy *p;
	pid_t pid = getpid();

	ASSERT_EQ(0, policy_new(&p));
	ASSERT_EQ(0, policy_grant(p, "/dev/null", 1, NULL, 0));
	ASSERT_EQ(0, policy_grant(p, "/nonexistent/w", 1, NULL, 0));
	ASSERT_EQ(0, policy_grant(p, "/nonexistent/r", 0, NULL, 0));
	EXPECT_EQ(0, policy_check_path(p, pid, "/dev/null", PA_WRITE));
	EXPECT_EQ(-EACCES, policy_check_metadata(p, pid, "/dev/null"));
	EXPECT_EQ(0, policy_check_metadata(p, pid, "/nonexistent/w/f"));
	EXPECT_EQ(-EACCES, policy_check_metadata(p, pid, "/nonexistent/w"));
	EXPECT_EQ(-EACCES, policy_check_metadata(p, pid, "/nonexistent/r/f"));
	EXPECT_EQ(-EACCES, policy_check_metadata(p, pid, "/nonexistent/wx"));
	EXPECT_EQ(-EINVAL, policy_check_metadata(p, pid, "/nonexistent/w/../f"));
	policy_free(p);
	/* the default policy's /dev/null: written, never changed otherwise */
	p = default_policy();
	EXPECT_EQ(0, policy_check_path(p, pid, "/dev/null", PA_WRITE));
	EXPECT_EQ(-EACCES, policy_check_metadata(p, pid, "/dev/null"));
	policy_free(p);
}

TEST(grants_must_be_absolute)
{
	struct policy *p;
	char err[256] = "";

	ASSERT_EQ(0, policy_new(&p));
	EXPECT_EQ(-EINVAL, policy_grant(p, "usr", 0, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "usr"));
	policy_free(p);
}

TEST(allow_read_and_allow_write_lists_become_grants)
{
	const char *const rd[] = { "/opt/data", NULL };
	const char *const wr[] = { "/var/tmp/out", NULL };
	struct policy *p;
	pid_t pid = getpid();

	ASSERT_EQ(0, policy_new_default(&p, rd, wr, NULL, 0));
	EXPECT_EQ(0, policy_check_path(p, pid, "/opt/data/x", PA_READ));
	EXPECT_EQ(-EACCES, policy_check_path(p, pid, "/opt/data/x", PA_WRITE));
	EXPECT_EQ(0, policy_check_path(p, pid, "/var/tmp/out/y", PA_WRITE));
	EXPECT_EQ(-EACCES, policy_check_path(p, pid, "/var/tmp/y", PA_READ));
	EXPECT_EQ(-EACCES, policy_check_path(p, pid, "/opt/datax", PA_READ));
	policy_free(p);
}

TEST(default_grants_are_read_only)
{
	struct policy *p = default_policy();
	pid_t pid = getpid();

	EXPECT_EQ(0, policy_check_path(p, pid, "/etc/passwd", PA_READ));
	EXPECT_EQ(-EACCES, policy_check_path(p, pid, "/etc/passwd", PA_WRITE));
	EXPECT_EQ(-EACCES, policy_check_path(p, pid, "/usr/bin/x", PA_WRITE));
	EXPECT_EQ(-EACCES, policy_check_path(p, pid, "/home", PA_READ));
	EXPECT_EQ(-EACCES, policy_check_path(p, pid, "/tmp/x", PA_READ));
	EXPECT_EQ(0, policy_check_path(p, pid, "/sys/devices/system/cpu/online", PA_READ));
	EXPECT_EQ(-EACCES, policy_check_path(p, pid, "/sys/kernel", PA_READ));
	EXPECT_EQ(0, policy_check_path(p, pid, "/dev/null", PA_WRITE));
	EXPECT_EQ(-EACCES, policy_check_path(p, pid, "/dev/zero", PA_WRITE));
	policy_free(p);
}

TEST(default_grants_cover_symlinked_system_dirs)
{
	struct policy *p = default_policy();
	char out[PATH_MAX];

	/* /lib64 is a link into /usr on merged-/usr systems; either way it is readable */
	ASSERT_EQ(0, resolve(NULL, "/lib64/ld-linux-x86-64.so.2", 0, out));
	EXPECT_EQ(0, policy_check_path(p, getpid(), out, PA_READ));
	policy_free(p);
}

TEST(proc_self_grant_means_the_sandboxed_pid_only)
{
	struct policy *p = default_policy();
	char path[64];
	pid_t pid = getppid();

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	EXPECT_EQ(0, policy_check_path(p, pid, path, PA_READ));
	EXPECT_EQ(-EACCES, policy_check_path(p, pid + 1, path, PA_READ));
	EXPECT_EQ(-EACCES, policy_check_path(p, pid, "/proc/1/status", PA_READ));
	EXPECT_EQ(-EACCES, policy_check_path(p, pid, "/proc/self/status", PA_READ));
	policy_free(p);
}

TEST(proc_mem_is_never_writable)
{
	struct policy *p;

	ASSERT_EQ(0, policy_new(&p));
	ASSERT_EQ(0, policy_grant(p, "/proc", 1, NULL, 0));
	EXPECT_EQ(-EACCES, policy_check_path(p, 42, "/proc/42/mem", PA_WRITE));
	EXPECT_EQ(-EACCES, policy_check_path(p, 42, "/proc/43/task/44/mem", PA_WRITE));
	EXPECT_EQ(0, policy_check_path(p, 42, "/proc/42/mem", PA_READ));
	EXPECT_EQ(0, policy_check_path(p, 42, "/proc/42/memx", PA_WRITE));
	policy_free(p);
}

/* --- what B decides from the registers --- */

TEST(open_access_comes_from_the_flags)
{
	EXPECT_EQ(PA_READ, policy_open_access(O_RDONLY));
	EXPECT_EQ(PA_READ, policy_open_access(O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW));
	EXPECT_EQ(PA_WRITE, policy_open_access(O_WRONLY));
	EXPECT_EQ(PA_WRITE, policy_open_access(O_RDWR));
	EXPECT_EQ(PA_WRITE, policy_open_access(O_ACCMODE));
	EXPECT_EQ(PA_WRITE, policy_open_access(O_RDONLY | O_CREAT));
	EXPECT_EQ(PA_WRITE, policy_open_access(O_RDONLY | O_TRUNC));
	EXPECT_EQ(PA_WRITE, policy_open_access(O_RDONLY | O_APPEND));
	EXPECT_EQ(PA_WRITE, policy_open_access(O_TMPFILE | O_RDWR));
	EXPECT_EQ(PA_WRITE, policy_open_access(O_TMPFILE & ~O_DIRECTORY));
	/* the kernel reads an int: high bits do not hide a write */
	EXPECT_EQ(PA_WRITE, policy_open_access((1L << 40) | O_WRONLY));
}

TEST(process_calls_say_which_access_and_whether_to_follow)
{
	struct policy *p = default_policy();
	const struct policy_proc_arg *openat = policy_proc_arg(p, nr_of("openat"));
	const struct policy_proc_arg *lstat = policy_proc_arg(p, nr_of("lstat"));
	const struct policy_proc_arg *fstatat = policy_proc_arg(p, nr_of("newfstatat"));
	uint64_t a[6] = { AT_FDCWD, 0x1000, O_WRONLY | O_NOFOLLOW, 0, 0, 0 };

	EXPECT_EQ(PA_WRITE, policy_proc_access(openat, a));
	EXPECT_EQ(0, policy_proc_follow(openat, a));
	a[2] = O_RDONLY;
	EXPECT_EQ(PA_READ, policy_proc_access(openat, a));
	EXPECT_EQ(1, policy_proc_follow(openat, a));
	EXPECT_EQ(0, policy_proc_follow(lstat, a));
	a[3] = AT_SYMLINK_NOFOLLOW;
	EXPECT_EQ(0, policy_proc_follow(fstatat, a));
	EXPECT_EQ(PA_READ, policy_proc_access(fstatat, a));
	EXPECT_EQ(PA_NEVER, policy_proc_access(policy_proc_arg(p, nr_of("rt_sigaction")), a));
	policy_free(p);
}

/* --- the dump --- */

static int has_line(const char *dump, const char *name, const char *what)
{
	for (const char *l = dump; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t n = strlen(name);
		const char *end = strchr(l, '\n');

		if (!strncmp(l, name, n) && l[n] == ' ') {
			const char *hit = strstr(l, what);
			return hit && (!end || hit < end);
		}
	}
	return 0;
}

TEST(the_dump_names_syscalls_by_name)
{
	struct policy *p = default_policy();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ASSERT_NE(NULL, f);
	policy_dump(p, f);
	fclose(f);
	EXPECT_TRUE(has_line(buf, "getppid", "allow"));
	EXPECT_TRUE(has_line(buf, "execve", "deny(EACCES)"));
	EXPECT_TRUE(has_line(buf, "read", "native"));
	EXPECT_TRUE(has_line(buf, "gettid", "emulate"));
	EXPECT_TRUE(has_line(buf, "mmap", "if (arg3 & 0x10) range_free(arg0, arg1) else EPERM"));
	EXPECT_TRUE(has_line(buf, "close", "fd_free(arg0) else EBADF"));
	EXPECT_TRUE(has_line(buf, "ioctl", "arg1 in {0x5401, 0x5413, 0x541b, 0x5421} else ENOTTY"));
	EXPECT_TRUE(has_line(buf, "openat", "path arg1, dirfd arg0, open flags arg2, access open"));
	EXPECT_TRUE(has_line(buf, "rt_sigaction", "sigaction"));
	EXPECT_TRUE(has_line(buf, "default", "deny(ENOSYS)"));
	EXPECT_NE(NULL, strstr(buf, "path read  /usr\n"));
	EXPECT_TRUE(has_line(buf, "msgget", "deny(EACCES)"));
	free(buf);
	policy_free(p);

	/* a call no line names is not shown */
	ASSERT_EQ(0, policy_new(&p));
	ASSERT_EQ(0, policy_set(p, "getppid", POLICY_ALLOW, 0, NULL, 0));
	buf = NULL;
	f = open_memstream(&buf, &len);
	ASSERT_NE(NULL, f);
	policy_dump(p, f);
	fclose(f);
	EXPECT_TRUE(has_line(buf, "getppid", "allow"));
	EXPECT_FALSE(has_line(buf, "msgget", ""));
	free(buf);
	policy_free(p);
}

/* The default policy from its build-time model (policy/model.h) is the one
 * its whole text makes: every call's entry and source, the default, the
 * grants and denies, the T table and the filter.  And the model is there:
 * policy_new_default does not fall back to parsing. */
static int same_text(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static long filter_bytes(const struct policy *p, char *buf, size_t cap)
{
	int fd = memfd_create("model", 0);
	char err[256];
	if (fd < 0 || policy_bpf_write_template(p, 100, 200, 0, fd, err, sizeof(err)) < 0)
		return -1;
	long n = pread(fd, buf, cap, 0);
	close(fd);
	return n;
}

TEST(default_policy_from_its_model_is_the_one_its_text_makes)
{
	struct policy *m, *t;
	char err[512] = "";
	ASSERT_EQ(0, policy_default_model(&m, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, policy_parse_default(&t, err, sizeof(err))) TH_LOG("%s", err);
	int mentioned = 0, rules = 0;
	for (int nr = 0; nr < POLICY_MAX_NR; nr++) {
		const struct policy_call *a = policy_call(m, nr), *b = policy_call(t, nr);
		EXPECT_EQ(b->mentioned, a->mentioned) TH_LOG("%d", nr);
		EXPECT_EQ(b->cls, a->cls) TH_LOG("%d", nr);
		EXPECT_EQ(b->err, a->err) TH_LOG("%d", nr);
		ASSERT_EQ(b->nrules, a->nrules) TH_LOG("%d", nr);
		EXPECT_EQ(0, memcmp(b->rules, a->rules, (size_t)b->nrules * sizeof(b->rules[0])))
			TH_LOG("%d", nr);
		EXPECT_EQ(0, memcmp(&b->proc, &a->proc, sizeof(b->proc))) TH_LOG("%d", nr);
		EXPECT_TRUE(same_text(b->file, a->file)) TH_LOG("%d", nr);
		EXPECT_EQ(b->line, a->line) TH_LOG("%d", nr);
		EXPECT_EQ(b->nguard, a->nguard) TH_LOG("%d", nr);
		mentioned += b->mentioned;
		rules += b->nrules;
	}
	TH_LOG("%d calls, %d rules, %zu grants, %zu denies", mentioned, rules, policy_ngrants(t),
	       policy_ndenies(t));
	EXPECT_LT(300, mentioned);
	int ca, ea, cb, eb;
	policy_get_default(m, &ca, &ea);
	policy_get_default(t, &cb, &eb);
	EXPECT_EQ(cb, ca);
	EXPECT_EQ(eb, ea);
	ASSERT_EQ(policy_ngrants(t), policy_ngrants(m));
	EXPECT_LT(0u, policy_ngrants(t));
	for (size_t i = 0; i < policy_ngrants(t); i++) {
		const struct policy_grant *a = policy_grant_at(m, i), *b = policy_grant_at(t, i);
		EXPECT_STREQ(b->path, a->path);
		EXPECT_EQ(b->writable, a->writable);
		EXPECT_EQ(b->exact, a->exact);
		EXPECT_TRUE(same_text(b->file, a->file));
		EXPECT_EQ(b->line, a->line);
	}
	ASSERT_EQ(policy_ndenies(t), policy_ndenies(m));
	EXPECT_LT(0u, policy_ndenies(t));
	for (size_t i = 0; i < policy_ndenies(t); i++) {
		EXPECT_STREQ(policy_deny_at(t, i)->pattern, policy_deny_at(m, i)->pattern);
		EXPECT_EQ(policy_deny_at(t, i)->literal, policy_deny_at(m, i)->literal);
	}
	static struct tt_table ta, tb;
	ASSERT_EQ(0, policy_compile_table(m, &ta, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, policy_compile_table(t, &tb, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0, memcmp(&ta, &tb, sizeof(ta)));
	static char fa[1 << 16], fb[1 << 16];
	long na = filter_bytes(m, fa, sizeof(fa)), nb = filter_bytes(t, fb, sizeof(fb));
	ASSERT_LT(0, nb);
	ASSERT_EQ(nb, na);
	EXPECT_EQ(0, memcmp(fa, fb, (size_t)nb));
	policy_free(m);
	policy_free(t);
}

TEST_HARNESS_MAIN
