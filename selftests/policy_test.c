/* The policy model, its T-table back end and its dump.  Rules are also
 * run through the rules' one definition (policy/rule_eval.c, what the
 * trusted thread runs) so that each test can name the call it expects
 * refused.  B's path checks and grants are policy_path_test. */
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

/* --- the dump --- */

TEST(the_dump_names_syscalls_by_name)
{
	struct policy *p = default_policy();
	char *buf = dump_of(p);

	EXPECT_TRUE(dump_line_has(buf, "getppid", "allow"));
	EXPECT_TRUE(dump_line_has(buf, "execve", "deny(EACCES)"));
	EXPECT_TRUE(dump_line_has(buf, "read", "native"));
	EXPECT_TRUE(dump_line_has(buf, "gettid", "emulate"));
	EXPECT_TRUE(dump_line_has(buf, "mmap", "if (arg3 & 0x10) range_free(arg0, arg1) else EPERM"));
	EXPECT_TRUE(dump_line_has(buf, "close", "fd_free(arg0) else EBADF"));
	EXPECT_TRUE(dump_line_has(buf, "ioctl", "arg1 in {0x5401, 0x5413, 0x541b, 0x5421} else ENOTTY"));
	EXPECT_TRUE(dump_line_has(buf, "openat", "path arg1, dirfd arg0, open flags arg2, access open"));
	EXPECT_TRUE(dump_line_has(buf, "rt_sigaction", "sigaction"));
	EXPECT_TRUE(dump_line_has(buf, "default", "deny(ENOSYS)"));
	EXPECT_NE(NULL, strstr(buf, "path read  /usr\n"));
	EXPECT_TRUE(dump_line_has(buf, "msgget", "deny(EACCES)"));
	free(buf);
	policy_free(p);

	/* a call no line names is not shown */
	ASSERT_EQ(0, policy_new(&p));
	ASSERT_EQ(0, policy_set(p, "getppid", POLICY_ALLOW, 0, NULL, 0));
	buf = dump_of(p);
	EXPECT_TRUE(dump_line_has(buf, "getppid", "allow"));
	EXPECT_FALSE(dump_line_has(buf, "msgget", ""));
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
