/* Policy files: the built-in default compiled from policy/default.policy,
 * and good files made into the model (actions, expressions, paths and
 * their denies, a refusal's explanation).  The rest, by subject:
 * policyfile_error_test (what the parser refuses, each error with its
 * exact FILE:LINE:COL, the protections no file can remove, @include, the
 * bounds), policyfile_export_test (the dump and the BPF export) and
 * policyfile_start_test (a file through sandpit_start in both modes, and
 * what strict mode cannot enforce). */
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

/* --- the built-in default --- */

static int same_call(struct __test_metadata *_metadata, int nr, const struct policy_call *got,
		     const struct policy_call *want)
{
	char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
	int ok = 1;

#define SAME(field)                                                                      \
	if (got->field != want->field) {                                                 \
		TH_LOG("%s (%d): " #field " is %lld, expected %lld", name ? name : "?", nr, \
		       (long long)got->field, (long long)want->field);                   \
		ok = 0;                                                                  \
	}
	SAME(mentioned);
	SAME(cls);
	if (want->cls == POLICY_DENY || want->cls == POLICY_EMU)
		SAME(err);
	SAME(nrules);
	for (int i = 0; ok && i < want->nrules; i++) {
		const struct policy_rule *g = &got->rules[i], *w = &want->rules[i];

		SAME(rules[i].op);
		SAME(rules[i].arg);
		SAME(rules[i].arg2);
		SAME(rules[i].carg);
		SAME(rules[i].mask);
		SAME(rules[i].val);
		SAME(rules[i].cmask);
		/* what the call answers when this rule fails */
		if ((g->err ? g->err : got->err) != (w->err ? w->err : want->err)) {
			TH_LOG("%s: rule %d fails with %d, expected %d", name, i,
			       g->err ? g->err : got->err, w->err ? w->err : want->err);
			ok = 0;
		}
	}
	if (want->cls == POLICY_PROCESS && memcmp(&got->proc, &want->proc, sizeof(want->proc))) {
		TH_LOG("%s: a different check in B", name);
		ok = 0;
	}
#undef SAME
	free(name);
	return ok;
}

TEST(default_policy_file_compiles_to_the_former_c_default_call_by_call)
{
	struct policy *got = default_policy(), *want = expected_default();
	int same = 1;

	for (int nr = 0; nr < POLICY_MAX_NR; nr++)
		same &= same_call(_metadata, nr, policy_call(got, nr), policy_call(want, nr));
	EXPECT_TRUE(same);
	ASSERT_EQ(policy_ngrants(want), policy_ngrants(got));
	for (size_t i = 0; i < policy_ngrants(want); i++) {
		EXPECT_STREQ(policy_grant_at(want, i)->path, policy_grant_at(got, i)->path);
		EXPECT_EQ(policy_grant_at(want, i)->writable, policy_grant_at(got, i)->writable);
		EXPECT_EQ(policy_grant_at(want, i)->exact, policy_grant_at(got, i)->exact);
	}
	policy_free(got);
	policy_free(want);
}

/* Nothing a program calls falls into `default:` by accident: the file has
 * a line for every number libseccomp knows for x86-64, and for every call
 * of the kinds table that libseccomp can name.  `mentioned` is set by a
 * line that names the call, never by `default:`. */
TEST(default_policy_names_every_call_libseccomp_knows)
{
	struct policy *p = default_policy();
	int known = 0, unnamed = 0;

	for (int nr = 0; nr < POLICY_MAX_NR; nr++) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);

		if (!name)
			continue;
		known++;
		if (!policy_call(p, nr)->mentioned) {
			TH_LOG("%s (%d) has no line in policy/default.policy", name, nr);
			unnamed++;
		}
		free(name);
	}
	for (size_t i = 0; i < syscall_kinds_count(); i++) {
		const char *name = syscall_kinds_at(i)->name;
		int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name);

		if (nr >= 0 && nr < POLICY_MAX_NR && !policy_call(p, nr)->mentioned) {
			TH_LOG("%s (kinds table) has no line in policy/default.policy", name);
			unnamed++;
		}
	}
	EXPECT_EQ(0, unnamed);
	/* libseccomp 2.5.4 knows 368 names for x86-64: a walk that finds few
	 * walked the wrong architecture or range */
	EXPECT_GE(known, 360);
	policy_free(p);
}

TEST(default_policy_gets_the_grants_on_top)
{
	const char *rd[] = { "/opt", NULL }, *wr[] = { "/tmp", NULL };
	struct policy *p;
	size_t n;

	p = default_policy();
	n = policy_ngrants(p);
	policy_free(p);
	ASSERT_EQ(0, policy_new_default(&p, rd, wr, NULL, 0));
	ASSERT_EQ(n + 2, policy_ngrants(p));
	EXPECT_STREQ("/opt", policy_grant_at(p, n)->path);
	EXPECT_EQ(0, policy_grant_at(p, n)->writable);
	EXPECT_STREQ("/tmp", policy_grant_at(p, n + 1)->path);
	EXPECT_EQ(1, policy_grant_at(p, n + 1)->writable);
	policy_free(p);
}

/* Debian's secrets under /etc that the default's denies cover, each
 * refused for reading and writing whatever grants it (a write grant of /
 * here), everything under a denied directory too; and their neighbours
 * that are no secret stay readable. */
TEST(default_policy_denies_debians_secrets_under_etc)
{
	static const char *const secrets[] = {
		"/etc/shadow", "/etc/ldap.secret",
		"/etc/rsyncd.secrets",                  /* rsync daemon's user passwords */
		"/etc/apt/auth.conf",                   /* apt's repository logins */
		"/etc/apt/auth.conf.d",
		"/etc/apt/auth.conf.d/private-repo.conf",
		"/etc/apt/auth.conf.dpkg-old",
		"/etc/exim4/passwd", "/etc/exim4/passwd.client",
		"/etc/ddclient.conf", "/etc/chrony/chrony.keys",
		"/etc/libvirt/secrets", "/etc/libvirt/secrets/0b7f.base64",
		"/etc/ceph/ceph.client.admin.keyring",
		"/etc/tinc/vpn/rsa_key.priv", "/etc/tinc/vpn/ed25519_key.priv",
	};
	static const char *const plain[] = {
		"/etc/apt/sources.list", "/etc/apt/apt.conf.d/70debconf", "/etc/apt/auth",
		"/etc/rsyncd.conf", "/etc/exim4/update-exim4.conf.conf", "/etc/chrony/chrony.conf",
		"/etc/ceph/ceph.conf", "/etc/tinc/vpn/tinc.conf", "/etc/tinc/vpn/hosts/other",
		"/etc/libvirt/qemu.conf",
	};
	const char *rd[] = { NULL }, *wr[] = { "/", NULL };
	struct policy *p;

	ASSERT_EQ(0, policy_new_default(&p, rd, wr, NULL, 0));
	for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++) {
		EXPECT_EQ(-EACCES, policy_check_path(p, getpid(), secrets[i], PA_READ))
		TH_LOG("%s", secrets[i]);
		EXPECT_EQ(-EACCES, policy_check_path(p, getpid(), secrets[i], PA_WRITE))
		TH_LOG("%s", secrets[i]);
		EXPECT_NE(NULL, policy_path_denied(p, getpid(), secrets[i])) TH_LOG("%s", secrets[i]);
	}
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		EXPECT_EQ(0, policy_check_path(p, getpid(), plain[i], PA_READ)) TH_LOG("%s", plain[i]);
	}
	policy_free(p);
}

/* --- good files --- */

TEST(actions_and_expressions_map_onto_the_model)
{
	struct msgs m;
	struct policy *p = policy_of_text("# a comment\n"
				 "\n"
				 "   getppid: allow   # trailing comment\n"
				 "getpid: 1\n"
				 "uname: deny(EPERM)\n"
				 "getuid: return ENOSYS\n"
				 "geteuid: deny(13)\n"
				 "getgid: kill\n"
				 "read: allow\n"
				 "gettid: emulate\n"
				 "openat: process\n"
				 "socket: arg0 == AF_UNIX && arg1 & ~(SOCK_CLOEXEC|SOCK_NONBLOCK) == SOCK_STREAM; deny(EACCES)\n"
				 "lseek: arg2 <= SEEK_END\n"
				 "pipe2: arg1 in O_CLOEXEC | O_NONBLOCK\n"
				 "getrandom: arg2 & GRND_RANDOM\n"
				 "clock_gettime: arg0 in {CLOCK_REALTIME, CLOCK_MONOTONIC, 0x6}\n"
				 "kill: trap arg0 == $pid && arg1 < 32\n"
				 "fcntl: if arg1 & ~7 then arg1 == F_DUPFD_CLOEXEC; return EINVAL\n"
				 "sched_yield: trap\n"
				 "default: kill\n",
				 &m, NULL);
	const struct policy_call *c;
	int cls, e;

	ASSERT_NE(NULL, p) TH_LOG("%s", m.text);
	EXPECT_EQ(POLICY_ALLOW, call(p, "getppid")->cls);
	EXPECT_EQ(POLICY_ALLOW, call(p, "getpid")->cls);
	EXPECT_EQ(POLICY_DENY, call(p, "uname")->cls);
	EXPECT_EQ(EPERM, call(p, "uname")->err);
	EXPECT_EQ(ENOSYS, call(p, "getuid")->err);
	EXPECT_EQ(EACCES, call(p, "geteuid")->err);
	EXPECT_EQ(POLICY_KILL, call(p, "getgid")->cls);
	EXPECT_EQ(POLICY_NATIVE, call(p, "read")->cls); /* strict mode allows it: U makes it */
	EXPECT_EQ(POLICY_EMU, call(p, "gettid")->cls);
	EXPECT_EQ(POLICY_EMU_GETTID, call(p, "gettid")->err);
	ASSERT_EQ(POLICY_PROCESS, call(p, "openat")->cls);
	EXPECT_EQ(1, call(p, "openat")->proc.path_arg);
	EXPECT_EQ(PA_OPEN, call(p, "openat")->proc.access);

	c = call(p, "socket");
	ASSERT_EQ(POLICY_THREAD, c->cls);
	EXPECT_EQ(EACCES, c->err);
	ASSERT_EQ(2, c->nrules);
	EXPECT_EQ(RULE_MASKED_EQ, c->rules[0].op);
	EXPECT_EQ(~0ULL, c->rules[0].mask);
	EXPECT_EQ((uint64_t)AF_UNIX, c->rules[0].val);
	EXPECT_EQ(RULE_MASKED_EQ, c->rules[1].op);
	EXPECT_EQ(1, c->rules[1].arg);
	EXPECT_EQ(~(uint64_t)(SOCK_CLOEXEC | SOCK_NONBLOCK), c->rules[1].mask);
	EXPECT_EQ((uint64_t)SOCK_STREAM, c->rules[1].val);

	c = call(p, "lseek");
	ASSERT_EQ(1, c->nrules);
	EXPECT_EQ(RULE_LE, c->rules[0].op);
	EXPECT_EQ((uint64_t)SEEK_END, c->rules[0].val);
	EXPECT_EQ(EPERM, c->err); /* no errno given */

	c = call(p, "pipe2"); /* minijail's "in": no bit outside the mask */
	ASSERT_EQ(1, c->nrules);
	EXPECT_EQ(RULE_MASK_ZERO, c->rules[0].op);
	EXPECT_EQ(~(uint64_t)(O_CLOEXEC | O_NONBLOCK), c->rules[0].mask);

	c = call(p, "getrandom"); /* minijail's "&": some bit set */
	ASSERT_EQ(1, c->nrules);
	EXPECT_EQ(RULE_MASKED_NE, c->rules[0].op);
	EXPECT_EQ((uint64_t)GRND_RANDOM, c->rules[0].mask);
	EXPECT_EQ(0ULL, c->rules[0].val);

	c = call(p, "clock_gettime");
	ASSERT_EQ(1, c->nrules);
	EXPECT_EQ(RULE_BITSET, c->rules[0].op);
	EXPECT_EQ(0ULL, c->rules[0].val);
	EXPECT_EQ(0x43ULL, c->rules[0].mask);

	c = call(p, "kill"); /* sandpit's SELF_PID guard is there, and not twice */
	ASSERT_EQ(2, c->nrules);
	EXPECT_EQ(RULE_SELF_PID, c->rules[0].op);
	EXPECT_EQ(RULE_LE, c->rules[1].op);
	EXPECT_EQ(31ULL, c->rules[1].val);

	c = call(p, "fcntl");
	ASSERT_EQ(POLICY_THREAD, c->cls);
	EXPECT_EQ(EINVAL, c->err);
	ASSERT_EQ(2, c->nrules); /* fd_free, and the file's rule; F_SETOWN is refused by it */
	EXPECT_EQ(RULE_FD_FREE, c->rules[0].op);
	EXPECT_EQ(RULE_MASKED_EQ, c->rules[1].op);
	EXPECT_EQ(1, c->rules[1].carg);
	EXPECT_EQ(~7ULL, c->rules[1].cmask);
	EXPECT_EQ((uint64_t)F_DUPFD_CLOEXEC, c->rules[1].val);

	EXPECT_EQ(POLICY_THREAD, call(p, "sched_yield")->cls);
	EXPECT_EQ(0, call(p, "sched_yield")->nrules);

	policy_get_default(p, &cls, &e);
	EXPECT_EQ(POLICY_KILL, cls);
	EXPECT_EQ(POLICY_KILL, call(p, "getpriority")->cls);
	EXPECT_EQ(0, call(p, "getpriority")->mentioned);
	/* numbers no x86-64 kernel has stay ENOSYS (the T table ends there) */
	EXPECT_EQ(POLICY_DENY, policy_call(p, POLICY_DEFAULT_NR)->cls);
	EXPECT_EQ(ENOSYS, policy_call(p, POLICY_DEFAULT_NR)->err);
	policy_free(p);
}

TEST(path_lines_become_grants)
{
	struct msgs m;
	struct policy *p = policy_of_text("path read /usr\npath write /tmp\n\tpath read /dev/null # c\n",
				 &m, NULL);

	ASSERT_NE(NULL, p) TH_LOG("%s", m.text);
	ASSERT_EQ(3UL, policy_ngrants(p));
	EXPECT_STREQ("/usr", policy_grant_at(p, 0)->path);
	EXPECT_EQ(0, policy_grant_at(p, 0)->writable);
	EXPECT_STREQ("/tmp", policy_grant_at(p, 1)->path);
	EXPECT_EQ(1, policy_grant_at(p, 1)->writable);
	EXPECT_STREQ("/dev/null", policy_grant_at(p, 2)->path);
	EXPECT_EQ(1, policy_grant_at(p, 2)->exact);
	EXPECT_EQ(0, policy_check_path(p, getpid(), "/tmp/x", PA_WRITE));
	EXPECT_EQ(-EACCES, policy_check_path(p, getpid(), "/usr/x", PA_WRITE));
	policy_free(p);
}

/* `path deny`: matched against resolved paths, a match and everything
 * under it refused, whatever the grants; '*' stays within a component */
TEST(path_deny_lines_win_over_every_grant)
{
	struct msgs m;
	struct policy *p = policy_of_text("path read /\npath write /tmp\npath deny /etc/shadow\n"
				 "path deny /etc/ssh/*_key\npath deny //etc//sudoers*/\n"
				 "path deny /tmp/s[0-9]\npath deny /proc/self/environ\n"
				 "path deny /etc/a\\*b\n",
				 &m, NULL);
	char environ_path[64];

	ASSERT_NE(NULL, p) TH_LOG("%s", m.text);
	ASSERT_EQ(6UL, policy_ndenies(p));
	EXPECT_STREQ("/etc/sudoers*", policy_deny_at(p, 2)->pattern);
	static const struct {
		const char *path;
		int access, want;
	} cases[] = {
		{ "/etc/shadow", PA_READ, -EACCES },
		{ "/etc/shadow/x", PA_READ, -EACCES }, /* under a match */
		{ "/etc/shadow-", PA_READ, 0 },
		{ "/etc/shado", PA_READ, 0 },
		{ "/etc/ssh/ssh_host_ed25519_key", PA_READ, -EACCES },
		{ "/etc/ssh/.hidden_key", PA_READ, -EACCES }, /* a leading dot too */
		{ "/etc/ssh/ssh_host_ed25519_key.pub", PA_READ, 0 },
		{ "/etc/ssh/sub/x_key", PA_READ, 0 }, /* '*' never crosses '/' */
		{ "/etc/sudoers", PA_READ, -EACCES },
		{ "/etc/sudoers.d/README", PA_READ, -EACCES },
		{ "/etc/passwd", PA_READ, 0 },
		{ "/tmp/s1", PA_WRITE, -EACCES }, /* over a write grant */
		{ "/tmp/s1/new", PA_WRITE, -EACCES },
		{ "/tmp/sx", PA_WRITE, 0 },
		{ "/etc/a*b", PA_READ, -EACCES }, /* quoted: only the '*' itself */
		{ "/etc/axb", PA_READ, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *path = cases[i].path;
		EXPECT_EQ(cases[i].want, policy_check_path(p, 4242, path, cases[i].access))
		TH_LOG("%s", path);
	}
	EXPECT_EQ(-EACCES, policy_check_path(p, 4242, "/proc/4242/environ", PA_READ));
	EXPECT_EQ(0, policy_check_path(p, 4242, "/proc/4243/environ", PA_READ));
	snprintf(environ_path, sizeof(environ_path), "/proc/%d/environ", 4242);
	EXPECT_STREQ("/proc/self/environ", policy_path_denied(p, 4242, environ_path));
	/* what holds a denied path may not be moved or removed either */
	EXPECT_STREQ("/etc/shadow", policy_path_holds_denied(p, 4242, "/etc"));
	EXPECT_STREQ("/etc/ssh/*_key", policy_path_holds_denied(p, 4242, "/etc/ssh"));
	EXPECT_STREQ("/etc/ssh/*_key", policy_path_holds_denied(p, 4242, "/etc/ssh/a_key"));
	EXPECT_STREQ("/tmp/s[0-9]", policy_path_holds_denied(p, 4242, "/tmp"));
	EXPECT_STREQ("/proc/self/environ", policy_path_holds_denied(p, 4242, "/proc/4242"));
	EXPECT_NE(NULL, policy_path_holds_denied(p, 4242, "/"));
	EXPECT_EQ(NULL, policy_path_holds_denied(p, 4242, "/etc/ssl"));
	EXPECT_EQ(NULL, policy_path_holds_denied(p, 4242, "/usr"));
	EXPECT_EQ(NULL, policy_path_holds_denied(p, 4242, "/tmp/sx"));
	EXPECT_EQ(NULL, policy_path_holds_denied(p, 4242, "/proc/4243"));
	policy_free(p);
}

/* B checks resolved paths: a deny through a symlinked directory is also
 * kept with the directory resolved, as grants are */
TEST(path_deny_through_a_symlink_also_denies_its_target)
{
	struct tmp t;
	char real[PATH_MAX], link[PATH_MAX], text[3 * PATH_MAX], want[PATH_MAX + 16];
	struct msgs m;

	tmp_init(&t);
	snprintf(real, sizeof(real), "%s/real", t.dir);
	snprintf(link, sizeof(link), "%s/link", t.dir);
	ASSERT_EQ(0, mkdir(real, 0700));
	ASSERT_EQ(0, symlink(real, link));
	snprintf(text, sizeof(text), "path read %s\npath deny %s/key*\n", t.dir, link);
	struct policy *p = policy_of_text(text, &m, NULL);
	ASSERT_NE(NULL, p) TH_LOG("%s", m.text);
	snprintf(want, sizeof(want), "%s/key1", real);
	EXPECT_EQ(-EACCES, policy_check_path(p, 1, want, PA_READ));
	snprintf(want, sizeof(want), "%s/other", real);
	EXPECT_EQ(0, policy_check_path(p, 1, want, PA_READ));
	policy_free(p);
	unlink(link);
	rmdir(real);
	tmp_done(&t);
}

TEST(default_deny_reaches_the_t_table)
{
	static struct tt_table t;
	struct msgs m;
	struct policy *p = policy_of_text("default: deny(EXDEV)\ngetppid: allow\n", &m, NULL);

	ASSERT_NE(NULL, p) TH_LOG("%s", m.text);
	ASSERT_EQ(0, policy_compile_table(p, &t, NULL, 0));
	EXPECT_EQ(TT_DENY, t.entries[nr_of("getpriority")].cls);
	EXPECT_EQ(EXDEV, t.entries[nr_of("getpriority")].err);
	EXPECT_EQ(TT_ALLOW, t.entries[nr_of("getppid")].cls);
	policy_free(p);
	p = policy_of_text("default: kill\n", &m, NULL);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, policy_compile_table(p, &t, NULL, 0));
	EXPECT_EQ(TT_KILL, t.entries[nr_of("getpriority")].cls);
	policy_free(p);
}

/* A refusal is explained by what decided it: the file's line,
 * sandpit's guard rule, the `default:` line, or a built-in "never". */
TEST(a_refusal_is_explained_by_its_line_its_guard_or_the_default)
{
	struct msgs m;
	struct policy_why w;
	struct policy *p = policy_of_text("default: deny(EPERM)\n"
				 "getppid: allow\n"
				 "socket: deny(EACCES)\n"
				 "dup2: arg1 <= 100; deny(EINVAL)\n"
				 "execve: deny(EACCES)\n"
				 "path read /usr\n",
				 &m, NULL);

	ASSERT_NE(NULL, p) TH_LOG("%s", m.text);
	policy_explain(p, nr_of("socket"), -1, &w);
	EXPECT_STREQ("t.policy:3", w.decided);
	EXPECT_STREQ("", w.builtin);

	/* dup2's new descriptor gets sandpit's fd_free first, then the file's rule */
	const struct policy_call *c = policy_call(p, nr_of("dup2"));
	ASSERT_LE(1, c->nguard);
	ASSERT_EQ(c->nguard + 1, c->nrules);
	EXPECT_EQ(RULE_FD_FREE, c->rules[0].op);
	EXPECT_EQ(RULE_LE, c->rules[c->nguard].op);
	policy_explain(p, nr_of("dup2"), 0, &w);
	EXPECT_STREQ("guard: fd_free", w.decided);
	policy_explain(p, nr_of("dup2"), c->nguard, &w);
	EXPECT_STREQ("t.policy:4", w.decided);
	/* filter mode's ERRNO carries no rule: found back through the model */
	EXPECT_EQ(c->nguard, policy_rule_for_errno(p, nr_of("dup2"), EINVAL));
	EXPECT_EQ(-1, policy_rule_for_errno(p, nr_of("socket"), EACCES));

	policy_explain(p, nr_of("getpriority"), -1, &w);
	EXPECT_STREQ("not in the policy: default", w.decided);
	EXPECT_STREQ("t.policy", policy_call(p, nr_of("getpriority"))->file);
	EXPECT_EQ(1, policy_call(p, nr_of("getpriority"))->line);

	policy_explain(p, nr_of("execve"), -1, &w);
	EXPECT_STREQ("t.policy:5", w.decided);
	EXPECT_STREQ("never: execve", w.builtin);

	/* a file's grant has its line; one from the command line none */
	EXPECT_STREQ("t.policy", policy_grant_at(p, 0)->file);
	EXPECT_EQ(6, policy_grant_at(p, 0)->line);
	ASSERT_EQ(0, policy_grant(p, "/opt", 0, NULL, 0));
	EXPECT_EQ(NULL, policy_grant_at(p, policy_ngrants(p) - 1)->file);

	char hint[64];
	EXPECT_EQ(0, policy_grant_hint("/home/u", PA_READ, hint, sizeof(hint)));
	EXPECT_STREQ("--allow-read=/home/u", hint);
	EXPECT_EQ(0, policy_grant_hint("/tmp/out", PA_WRITE, hint, sizeof(hint)));
	EXPECT_STREQ("--allow-write=/tmp/out", hint);
	EXPECT_EQ(-ENOENT, policy_grant_hint("/proc/1/mem", PA_NEVER, hint, sizeof(hint)));
	policy_free(p);
}

TEST_HARNESS_MAIN
