/* A policy file in force: used through sandpit_start in both modes, its
 * errors reported with nothing started, and what strict mode cannot
 * enforce refused for strict mode and enforced in filter mode. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kselftest_harness.h>

#include "policy/policy.h"
#include "policy/t_table.h"

#include "build_dir.h"
#include "default_expected.h"
#include "policy_util.h"
#include "sandbox_util.h"
#include "selftests/build_dir.h"
#include "policyfile_util.h"

/* --- a file through sandpit_start, in both modes --- */

extern const char sandpit_default_policy[];
extern const uint64_t sandpit_default_policy_len;

/* The default policy without the lines in `drop`, with `extra` added. */
static const char *default_with(struct tmp *t, const char *name, const char *const drop[],
				const char *extra)
{
	size_t n = (size_t)sandpit_default_policy_len;
	char *text = malloc(n + strlen(extra) + 1);
	const char *path;

	if (!text)
		abort();
	memcpy(text, sandpit_default_policy, n);
	text[n] = 0;
	for (; *drop; drop++) { /* whole lines */
		char line[128], *hit;

		snprintf(line, sizeof(line), "\n%s\n", *drop);
		hit = strstr(text, line);
		if (!hit)
			abort();
		hit++;
		memmove(hit, hit + strlen(line) - 1, strlen(hit + strlen(line) - 1) + 1);
	}
	strcat(text, extra);
	path = tmp_file(t, name, text);
	free(text);
	return path;
}

static int denied_and_allowed(void *arg)
{
	(void)arg;
	if (syscall(SYS_getppid) != -1 || errno != EXDEV)
		return 1;
	if (syscall(SYS_getpid) <= 0)
		return 2;
	if (syscall(SYS__sysctl, NULL) != -1 || errno != ENOTCONN) /* the file's default */
		return 3;
	if (syscall(SYS_uname, NULL) != -1 || errno != EFAULT) /* allowed: the kernel answers */
		return 4;
	return 0;
}

static int unmentioned_call(void *arg)
{
	(void)arg;
	syscall(SYS__sysctl, NULL);
	return 99;
}

/* Under ASan the sanitizer runtime's own calls would meet the sandbox
 * (make check-asan runs this file for the parser's sake). */
#ifdef __SANITIZE_ADDRESS__
#define NOT_UNDER_ASAN() SKIP(return, "the sandbox does not run under ASan")
#else
#define NOT_UNDER_ASAN() do { } while (0)
#endif

static void in_mode(struct __test_metadata *_metadata, const char *mode, const char *file)
{
	struct sandpit_options o = { .policy_file = file };
	int st;

	setenv("SANDPIT_MODE", mode, 1);
	st = run_sandboxed_opts(denied_and_allowed, NULL, &o, 20);
	EXPECT_EQ(0, outcome(st)) TH_LOG("%s mode", mode);
}

TEST(sandpit_start_enforces_a_policy_file_in_both_modes)
{
	/* the default names every call: _sysctl (in no kernel since 5.5) is
	 * left to the file's default */
	static const char *const drop[] = { "getppid: allow", "_sysctl: deny(ENOSYS)",
					    "default: deny(ENOSYS)", NULL };
	struct tmp t;

	NOT_UNDER_ASAN();
	tmp_init(&t);
	const char *file = default_with(&t, "p.policy", drop,
					"\ngetppid: deny(EXDEV)\ndefault: deny(ENOTCONN)\n");
	in_mode(_metadata, "strict", file);
	in_mode(_metadata, "filter", file);
	tmp_done(&t);
}

TEST(default_kill_kills_in_both_modes)
{
	static const char *const drop[] = { "_sysctl: deny(ENOSYS)", "default: deny(ENOSYS)", NULL };
	const char *modes[] = { "strict", "filter" };
	struct tmp t;

	NOT_UNDER_ASAN();
	tmp_init(&t);
	struct sandpit_options o = { .policy_file = default_with(&t, "k.policy", drop,
								 "\ndefault: kill\n") };
	for (int i = 0; i < 2; i++) {
		setenv("SANDPIT_MODE", modes[i], 1);
		int r = outcome(run_sandboxed_opts(unmentioned_call, NULL, &o, 20));
		EXPECT_TRUE(r == KILLED(SIGKILL) || r == KILLED(SIGSYS)) TH_LOG("%s: %d", modes[i], r);
	}
	tmp_done(&t);
}

TEST(sandpit_start_reports_the_files_error_and_starts_nothing)
{
	struct tmp t;
	char want[PATH_MAX + 64];

	tmp_init(&t);
	struct sandpit_options o = { .policy_file = tmp_file(&t, "bad.policy",
							     "getppid: allow\nopenat: allow\n") };
	EXPECT_EQ(-EPERM, sandpit_start(&o));
	snprintf(want, sizeof(want), "%s:2:9: openat: 'allow' refused", o.policy_file);
	EXPECT_EQ(0, strncmp(sandpit_error(), want, strlen(want))) TH_LOG("%s", sandpit_error());
	EXPECT_EQ((int)SANDPIT_MODE_NONE, (int)sandpit_mode());
	tmp_done(&t);
}

TEST(inv2_write_grants_of_a_file_need_openat2)
{
	struct tmp t;

	tmp_init(&t);
	struct sandpit_options o = { .policy_file = tmp_file(&t, "w.policy",
							     "getppid: allow\npath write /tmp\n") };
	setenv("SANDPIT_KERNEL", "no-openat2", 1);
	EXPECT_EQ(-EOPNOTSUPP, sandpit_start(&o));
	EXPECT_NE(NULL, strstr(sandpit_error(), "the write grant /tmp needs openat2"))
		TH_LOG("%s", sandpit_error());
	EXPECT_EQ((int)SANDPIT_MODE_NONE, (int)sandpit_mode());
	tmp_done(&t);
}

/* --- what strict mode cannot enforce --- */

/* policy_strict_check on a text: its return, the first message in err,
 * every note in notes */
static int strict_check(const char *text, char *err, size_t errlen, struct msgs *notes)
{
	struct msgs m;
	struct policy *p = policy_of_text(text, &m, NULL);
	int rc;

	if (!p)
		return -1000;
	memset(notes, 0, sizeof(*notes));
	err[0] = 0;
	rc = policy_strict_check(p, "t.policy", collect, notes, err, errlen);
	policy_free(p);
	return rc;
}

#define SEEN_BY_STRICT_MODE(text_, message_)                                           \
	do {                                                                         \
		char e_[512];                                                        \
		struct msgs n_;                                                      \
		EXPECT_EQ(-EOPNOTSUPP, strict_check(text_, e_, sizeof(e_), &n_));    \
		EXPECT_STREQ(message_, e_);                                         \
		EXPECT_EQ(1, n_.n) TH_LOG("%s", n_.text);                            \
	} while (0)

#define RW_ALLOWED "read: allow\nwrite: allow\nexit: allow\nrt_sigreturn: allow\n"
#define TAIL(call) ": seccomp strict mode lets the program make " call " itself; allow it, or use filter mode"

TEST(strict_mode_cannot_enforce_anything_but_allow_of_the_calls_it_lets_through)
{
	char err[512];
	struct msgs n;

	SEEN_BY_STRICT_MODE("read: allow\nwrite: arg0 == 1\nexit: allow\nrt_sigreturn: allow\n",
			    "t.policy:2: write: strict mode cannot enforce a rule on its arguments"
			    TAIL("write"));
	SEEN_BY_STRICT_MODE("read: deny(EPERM)\nwrite: allow\nexit: allow\nrt_sigreturn: allow\n",
			    "t.policy:1: read: strict mode cannot enforce deny(EPERM)" TAIL("read"));
	SEEN_BY_STRICT_MODE("read: allow\nwrite: allow\nexit: kill\nrt_sigreturn: allow\n",
			    "t.policy:3: exit: strict mode cannot enforce kill" TAIL("exit"));
	SEEN_BY_STRICT_MODE("read: allow\nwrite: allow\nexit: allow\nrt_sigreturn: trap\n",
			    "t.policy:4: rt_sigreturn: strict mode cannot enforce trap"
			    TAIL("rt_sigreturn"));
	/* the default never allows: it cannot stand for one of them */
	SEEN_BY_STRICT_MODE("default: kill\nread: allow\nwrite: allow\nexit: allow\n",
			    "t.policy:1: rt_sigreturn: no line names it, and strict mode cannot "
			    "enforce the default, kill" TAIL("rt_sigreturn"));
	SEEN_BY_STRICT_MODE("read: allow\nexit: allow\nrt_sigreturn: allow\n",
			    "t.policy: write: no line names it, and strict mode cannot enforce the "
			    "default, deny(ENOSYS)" TAIL("write"));
	/* every line is noted, the first is the error */
	EXPECT_EQ(-EOPNOTSUPP, strict_check("write: deny(EIO)\nread: arg0 == 0\nexit: allow\n"
					    "rt_sigreturn: allow\n",
					    err, sizeof(err), &n));
	EXPECT_EQ(0, strncmp(err, "t.policy:2: read:", 17)) TH_LOG("%s", err);
	EXPECT_EQ(2, n.n);
	EXPECT_NE(NULL, strstr(n.text, "t.policy:2: note: read: strict mode cannot enforce a rule"));
	EXPECT_NE(NULL, strstr(n.text, "t.policy:1: note: write: strict mode cannot enforce "
				       "deny(EIO)"));
	/* plain allow of the four, and the built-in default, are strict mode's */
	EXPECT_EQ(0, strict_check(RW_ALLOWED "default: kill\n", err, sizeof(err), &n));
	EXPECT_EQ(0, n.n);
	struct policy *p = default_policy();
	EXPECT_EQ(0, policy_strict_check(p, "default", NULL, NULL, err, sizeof(err)));
	policy_free(p);
}

/* the line of `path` that starts with `text`, or -1 */
static int line_of(const char *path, const char *text)
{
	char buf[256];
	FILE *f = fopen(path, "r");
	int line = 0, found = -1;

	while (f && found < 0 && fgets(buf, sizeof(buf), f))
		if (++line, !strncmp(buf, text, strlen(text)))
			found = line;
	if (f)
		fclose(f);
	return found;
}

/* The sandboxed side: a write to fd 1 (a pipe), and writes to fd 2 through
 * libc (a patched site) and through code the patcher cannot patch (a
 * missed site, straight to the kernel).  Counts the attempts that came
 * back from the call; 0 if each had the rule's outcome. */
struct rw_attack {
	int attempts;
	long libc2, missed2, missed1;
};

static int write_rule_body(void *arg)
{
	struct rw_attack *a = arg;
	int p[2];
	char c;

	if (pipe(p) || dup2(p[1], 1) != 1)
		return 1;
	missed_fn f = missed_code(SYS_write);
	if (!f)
		return 2;
	a->libc2 = write(2, "leak\n", 5) < 0 ? -errno : 5;
	a->attempts++;
	a->missed2 = f(2, (long)"leak\n", 5);
	a->attempts++;
	a->missed1 = f(1, (long)"x", 1);
	a->attempts++;
	if (write(1, "y", 1) != 1 || read(p[0], &c, 1) != 1 || c != 'x' || read(p[0], &c, 1) != 1 ||
	    c != 'y')
		return 3;
	return a->libc2 == -EPERM && a->missed2 == -EPERM && a->missed1 == 1 ? 0 : 4;
}

/* `write: arg0 == 1`: strict mode (asked for, or auto's on a legacy
 * kernel) lets a missed write to fd 2 through to the kernel, so it refuses
 * the policy, with its line, and starts nothing; filter mode's filter
 * refuses that write (EPERM, the rule's errno) at a patched and at a missed
 * site alike, and lets the write to fd 1 through. */
TEST(write_rule_is_refused_for_strict_mode_and_enforced_in_filter_mode)
{
	static const char *const drop[] = { "write: allow", NULL };
	struct rw_attack *a = shared_page(sizeof(*a));
	char want[PATH_MAX + 64];
	struct tmp t;

	NOT_UNDER_ASAN();
	ASSERT_NE(NULL, a);
	tmp_init(&t);
	struct sandpit_options o = { .policy_file = default_with(&t, "w.policy", drop,
								 "write: arg0 == 1\n") };
	int line = line_of(o.policy_file, "write: arg0 == 1");
	ASSERT_LT(0, line);
	snprintf(want, sizeof(want), "%s:%d: write: strict mode cannot enforce a rule on its "
		 "arguments" TAIL("write"), o.policy_file, line);
	strict_refuses_filter_enforces(_metadata, &o, want, write_rule_body, a, sizeof(*a), 3);
	tmp_done(&t);
}

static int read_rule_body(void *arg)
{
	struct rw_attack *a = arg;
	int p[2];
	char c = 0;

	if (pipe(p) || write(p[1], "zz", 2) != 2)
		return 1;
	missed_fn f = missed_code(SYS_read);
	if (!f)
		return 2;
	a->libc2 = read(p[0], &c, 1) < 0 ? -errno : c;
	a->attempts++;
	a->missed2 = f(p[0], (long)&c, 1);
	a->attempts++;
	return a->libc2 == -EPERM && a->missed2 == -EPERM ? 0 : 4;
}

/* The same for a rule on read (which sandpit's own code in the program
 * also makes, on its descriptors, to wait for T: filter mode lets those
 * through, and the program still runs). */
TEST(read_rule_is_refused_for_strict_mode_and_enforced_in_filter_mode)
{
	static const char *const drop[] = { "read: allow", NULL };
	struct rw_attack *a = shared_page(sizeof(*a));
	char want[PATH_MAX + 64];
	struct tmp t;

	NOT_UNDER_ASAN();
	ASSERT_NE(NULL, a);
	tmp_init(&t);
	struct sandpit_options o = { .policy_file = default_with(&t, "r.policy", drop,
								 "read: arg0 <= 2\n") };
	int line = line_of(o.policy_file, "read: arg0 <= 2");
	ASSERT_LT(0, line);
	snprintf(want, sizeof(want), "%s:%d: read: strict mode cannot enforce a rule on its "
		 "arguments" TAIL("read"), o.policy_file, line);
	strict_refuses_filter_enforces(_metadata, &o, want, read_rule_body, a, sizeof(*a), 2);
	tmp_done(&t);
}

static int plain_rw_body(void *arg)
{
	(void)arg;
	int p[2];
	char c;

	if (pipe(p) || write(p[1], "q", 1) != 1 || read(p[0], &c, 1) != 1 || c != 'q')
		return 1;
	return 0;
}

/* A file that names read, write, exit and rt_sigreturn with plain allow
 * (and nothing else of theirs) starts in every mode. */
TEST(plain_allow_of_read_and_write_starts_in_every_mode)
{
	static const char *const drop[] = { "read: allow", "write: allow", "exit: allow",
					    "rt_sigreturn: allow", NULL };
	struct tmp t;

	NOT_UNDER_ASAN();
	tmp_init(&t);
	struct sandpit_options o = { .policy_file = default_with(&t, "a.policy", drop,
								 RW_ALLOWED) };
	for (int i = 0; i < NMODE_CASES; i++) {
		set_mode(mode_case(i));
		EXPECT_EQ(0, outcome(run_sandboxed_opts(plain_rw_body, NULL, &o, 20)))
		TH_LOG("%s mode", mode_case(i)->mode);
	}
	unsetenv("SANDPIT_KERNEL");
	tmp_done(&t);
}

TEST_HARNESS_MAIN
