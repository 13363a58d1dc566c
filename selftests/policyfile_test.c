/* Policy files: the parser, what it refuses (each error with its exact
 * FILE:LINE:COL), the protections no file can remove, the built-in default
 * compiled from policy/default.policy, the BPF export, and a file used
 * through sandpit_start in both modes. */
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

/* --- helpers --- */

/* Parses `text` as t.policy; returns the policy or NULL, messages in m. */
static struct policy *parse(const char *text, struct msgs *m, int *rc)
{
	struct policy *p = (struct policy *)1;
	char err[512] = "";
	int r;

	memset(m, 0, sizeof(*m));
	r = policy_parse_text("t.policy", text, strlen(text), &p, collect, m, err, sizeof(err));
	if (rc)
		*rc = r;
	if (r == 0 && !p)
		abort();
	if (r < 0 && (p || strncmp(err, m->text, strlen(err)))) {
		fprintf(stderr, "a failed parse returned a policy, or err is not the first message\n");
		abort();
	}
	return r == 0 ? p : NULL;
}

/* The one error a text must give, exactly. */
#define EXPECT_ERROR(policy_text, message)                                             \
	do {                                                                           \
		struct msgs m_;                                                        \
		struct policy *p_ = parse(policy_text, &m_, NULL);                     \
		EXPECT_EQ(NULL, p_);                                                   \
		policy_free(p_);                                                       \
		EXPECT_EQ(1, m_.n) TH_LOG("%s", m_.text);                              \
		EXPECT_STREQ(message "\n", m_.text);                                   \
	} while (0)

static const struct policy_call *call(const struct policy *p, const char *name)
{
	return policy_call(p, nr_of(name));
}

static int has_rule(const struct policy_call *c, int op, int arg)
{
	for (int i = 0; i < c->nrules; i++)
		if (c->rules[i].op == op && c->rules[i].arg == arg)
			return 1;
	return 0;
}

struct tmp {
	char dir[64];
	char path[8][PATH_MAX];
	int n;
};

static void tmp_init(struct tmp *t)
{
	memset(t, 0, sizeof(*t));
	strcpy(t->dir, "/tmp/policyfile_test.XXXXXX");
	if (!mkdtemp(t->dir))
		abort();
}

static const char *tmp_file(struct tmp *t, const char *name, const char *text)
{
	char dir[sizeof(t->dir)], *path;
	FILE *f;

	if (t->n >= 8)
		abort();
	memcpy(dir, t->dir, sizeof(dir));
	path = t->path[t->n++];
	snprintf(path, PATH_MAX, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		abort();
	return path;
}

static void tmp_done(struct tmp *t)
{
	for (int i = 0; i < t->n; i++)
		unlink(t->path[i]);
	rmdir(t->dir);
}

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
	struct policy *p = parse("# a comment\n"
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
	struct policy *p = parse("path read /usr\npath write /tmp\n\tpath read /dev/null # c\n",
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
	struct policy *p = parse("path read /\npath write /tmp\npath deny /etc/shadow\n"
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
	struct policy *p = parse(text, &m, NULL);
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
	struct policy *p = parse("default: deny(EXDEV)\ngetppid: allow\n", &m, NULL);

	ASSERT_NE(NULL, p) TH_LOG("%s", m.text);
	ASSERT_EQ(0, policy_compile_table(p, &t, NULL, 0));
	EXPECT_EQ(TT_DENY, t.entries[nr_of("getpriority")].cls);
	EXPECT_EQ(EXDEV, t.entries[nr_of("getpriority")].err);
	EXPECT_EQ(TT_ALLOW, t.entries[nr_of("getppid")].cls);
	policy_free(p);
	p = parse("default: kill\n", &m, NULL);
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
	struct policy *p = parse("default: deny(EPERM)\n"
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

/* --- errors, each at its place --- */

TEST(unknown_system_call)
{
	EXPECT_ERROR("getppid: allow\n  opneat: allow\n",
		     "t.policy:2:3: unknown system call 'opneat'");
}

TEST(unknown_errno)
{
	EXPECT_ERROR("getppid: deny(EPREM)\n", "t.policy:1:15: unknown errno 'EPREM'");
	EXPECT_ERROR("getppid: return 0\n", "t.policy:1:17: errno 0 is out of range (1..4095)");
}

TEST(unknown_constant)
{
	EXPECT_ERROR("mmap: arg2 & (PROT_READ | PROT_EXECC) == 0\n",
		     "t.policy:1:27: unknown constant 'PROT_EXECC'");
}

TEST(bad_expressions)
{
	EXPECT_ERROR("lseek: arg2 = 1\n",
		     "t.policy:1:13: expected ==, !=, <=, <, &, or 'in' after arg2, found '='");
	EXPECT_ERROR("lseek: arg6 == 1\n",
		     "t.policy:1:8: no argument 'arg6': system calls have arg0..arg5");
	EXPECT_ERROR("lseek: arg2 == 1 || arg2 == 2\n",
		     "t.policy:1:18: '||' cannot be expressed; for values of one argument use "
		     "'argN in {a, b}'");
	EXPECT_ERROR("lseek: arg2 >= 1\n",
		     "t.policy:1:13: '>=' cannot be expressed: compare with ==, !=, <=, <, a mask, "
		     "or 'in'");
	EXPECT_ERROR("lseek: arg2 in {1, 100}\n",
		     "t.policy:1:16: the values of a set must lie within 64 of each other (0x1 and "
		     "0x64 do not)");
	EXPECT_ERROR("lseek: arg2 & 1 == 2\n",
		     "t.policy:1:17: 0x2 has bits outside the mask 0x1: always false");
	EXPECT_ERROR("lseek: arg2 == 1 && arg2 == 2\n",
		     "t.policy:1:21: contradicts the comparison at column 8: the call could never "
		     "pass; deny it instead");
	EXPECT_ERROR("lseek: alow\n",
		     "t.policy:1:8: expected an action (allow, deny(ERRNO), kill, trap, process, "
		     "emulate) or an expression, found 'alow'");
	EXPECT_ERROR("lseek allow\n",
		     "t.policy:1:7: expected ':' after the system call's name, found 'allow'");
	EXPECT_ERROR("lseek: arg2 == 1 junk\n", "t.policy:1:18: expected end of line, found 'junk'");
	EXPECT_ERROR("lseek: arg2 == 0x1g\n", "t.policy:1:16: bad number '0x1g'");
	EXPECT_ERROR("lseek: arg2 == 99999999999999999999\n",
		     "t.policy:1:16: bad number '99999999999999999999'");
	EXPECT_ERROR("lseek: arg2 == 1; deny(EPERM\n", "t.policy:1:29: expected ')', found end of line");
	EXPECT_ERROR("@inclde x\n", "t.policy:1:1: unknown directive '@inclde' (only @include)");
	EXPECT_ERROR("path read usr\n", "t.policy:1:11: 'usr' is not an absolute path");
	EXPECT_ERROR("path exec /usr\n",
		     "t.policy:1:6: expected 'read', 'write' or 'deny' after 'path', found 'exec'");
}

TEST(bad_path_deny_lines)
{
	EXPECT_ERROR("path deny\n", "t.policy:1:10: expected a path pattern");
	EXPECT_ERROR("path deny etc/shadow\n",
		     "t.policy:1:11: 'etc/shadow' is not an absolute path");
	EXPECT_ERROR(
		"getppid: allow\n path deny /etc/[ab\n",
		"t.policy:2:12: the pattern '/etc/[ab' has a '[' that no ']' closes in the same "
		"component");
	EXPECT_ERROR(
		"path deny /etc/[a/b]\n",
		"t.policy:1:11: the pattern '/etc/[a/b]' has a '[' that no ']' closes in the same "
		"component");
	EXPECT_ERROR(
		"path deny /etc/**/key\n",
		"t.policy:1:11: the pattern '/etc/**/key' has '**': '*' never matches '/', and a "
		"pattern denies everything under what it matches");
	EXPECT_ERROR("path deny /etc/../shadow\n",
		     "t.policy:1:11: the pattern '/etc/../shadow' has a '.' or '..' component");
	EXPECT_ERROR("path deny /etc/./shadow\n",
		     "t.policy:1:11: the pattern '/etc/./shadow' has a '.' or '..' component");
	EXPECT_ERROR("path deny /etc/x\\\n",
		     "t.policy:1:11: the pattern '/etc/x\\' ends in '\\', which quotes nothing");
	EXPECT_ERROR("path deny /etc/a\\/b\n",
		     "t.policy:1:11: the pattern '/etc/a\\/b' quotes a '/', which always separates "
		     "components");
	EXPECT_ERROR("path deny /etc/shadow extra\n",
		     "t.policy:1:23: expected end of line after a path pattern (paths cannot hold "
		     "spaces)");
}

TEST(duplicate_and_conflicting_lines)
{
	EXPECT_ERROR("getppid: allow\n\ngetppid: allow\n",
		     "t.policy:3:1: 'getppid' is already given at t.policy:1");
	EXPECT_ERROR("getppid: allow\ngetppid: deny(EPERM)\n",
		     "t.policy:2:1: 'getppid' is already given at t.policy:1");
	EXPECT_ERROR("default: kill\ndefault: deny(ENOSYS)\n",
		     "t.policy:2:1: the default is already given at t.policy:1");
	EXPECT_ERROR("default: allow\n",
		     "t.policy:1:10: the default may only be deny(ERRNO) or kill, not 'allow': a "
		     "call that no line names is never carried out");
}

TEST(memory_arguments_need_the_trusted_process)
{
	EXPECT_ERROR("openat: allow\n",
		     "t.policy:1:9: openat: 'allow' refused: its memory argument must be checked by "
		     "the trusted process; use 'process'");
	EXPECT_ERROR("rt_sigaction: trap\n",
		     "t.policy:1:15: rt_sigaction: 'trap' refused: its memory argument must be "
		     "checked by the trusted process; use 'process'");
	EXPECT_ERROR("openat: arg2 == 0\n",
		     "t.policy:1:9: openat: 'trap' refused: its memory argument must be checked by "
		     "the trusted process; use 'process'");
	EXPECT_ERROR("chown: allow\n",
		     "t.policy:1:8: chown: 'allow' refused: it takes a path, which only the trusted "
		     "process can check against the grants, and the trusted process has no check "
		     "for this call; deny it");
	/* a descriptor's file may be under a read grant: B checks it */
	EXPECT_ERROR("fchmod: allow\n",
		     "t.policy:1:9: fchmod: 'allow' refused: its descriptor may be of any file the "
		     "program opened, which only the trusted process can check against the write "
		     "grants; use 'process'");
	EXPECT_ERROR("fsetxattr: arg4 == 0\n",
		     "t.policy:1:12: fsetxattr: 'trap' refused: its descriptor may be of any file the "
		     "program opened, which only the trusted process can check against the write "
		     "grants; use 'process'");
	EXPECT_ERROR("chown: process\n",
		     "t.policy:1:8: chown: 'process' refused: the trusted process has no check for it");
	EXPECT_ERROR("getppid: process\n",
		     "t.policy:1:10: getppid: 'process' refused: the trusted process has no check "
		     "for it");
	EXPECT_ERROR("sendmsg: allow\n",
		     "t.policy:1:10: sendmsg: 'allow' refused: SCM_RIGHTS would hand U copies of "
		     "sandpit's descriptors, and its address may name a host no grant allows; use "
		     "'process'");
	EXPECT_ERROR("sendmmsg: allow\n",
		     "t.policy:1:11: sendmmsg: 'allow' refused: SCM_RIGHTS would hand U copies of "
		     "sandpit's descriptors, and the trusted process has no check for it; deny it");
}

TEST(inv7_calls_a_file_may_only_deny)
{
	EXPECT_ERROR("execve: allow\n",
		     "t.policy:1:9: execve: 'allow' refused, a policy may only deny or kill it: a new "
		     "program would run outside the sandbox (invariant 7)");
	EXPECT_ERROR("ptrace: trap\n",
		     "t.policy:1:9: ptrace: 'trap' refused, a policy may only deny or kill it: it "
		     "reaches other processes (B) or their memory (invariant 7)");
	EXPECT_ERROR("process_vm_writev: allow\n",
		     "t.policy:1:20: process_vm_writev: 'allow' refused, a policy may only deny or "
		     "kill it: it reaches other processes (B) or their memory (invariant 7)");
	EXPECT_ERROR("seccomp: allow\n",
		     "t.policy:1:10: seccomp: 'allow' refused, a policy may only deny or kill it: T "
		     "would install U's filter on itself (invariant 7)");
	/* close_range is never carried out as it is: T's emulation closes only
	 * the numbers around sandpit's descriptors */
	EXPECT_ERROR("close_range: allow\n",
		     "t.policy:1:14: close_range: 'allow' refused: it could close sandpit's "
		     "descriptors (invariant 3); T closes the numbers around them; use 'emulate'");
	{
		struct msgs m_;
		struct policy *p_ = parse("close_range: emulate\n", &m_, NULL);
		ASSERT_NE(NULL, p_) TH_LOG("%s", m_.text);
		EXPECT_EQ(POLICY_EMU, call(p_, "close_range")->cls);
		EXPECT_EQ(POLICY_EMU_CLOSE_RANGE, call(p_, "close_range")->err);
		policy_free(p_);
	}
	EXPECT_ERROR("close_range: trap\n",
		     "t.policy:1:14: close_range: 'trap' refused: it could close sandpit's "
		     "descriptors (invariant 3); T closes the numbers around them; use 'emulate'");
	EXPECT_ERROR("rseq: allow\n",
		     "t.policy:1:7: rseq: 'allow' refused: it would register T, and the kernel would "
		     "run U's abort handler in T (invariant 1); 'emulate' says yes without "
		     "registering; use 'emulate'");
	EXPECT_ERROR("getppid: emulate\n", "t.policy:1:10: getppid: sandpit has no emulation of it");
	EXPECT_ERROR("ioctl: allow\n",
		     "t.policy:1:8: ioctl: 'allow' refused: it would pass any arg1 unchecked; list "
		     "the values it may take (arg1 in {...})");

	/* deny and kill are always possible */
	struct msgs m;
	struct policy *p = parse("execve: deny(EPERM)\nptrace: kill\nopenat: deny(EACCES)\n", &m,
				 NULL);
	EXPECT_NE(NULL, p) TH_LOG("%s", m.text);
	policy_free(p);
}

TEST(every_error_is_reported_and_nothing_is_applied)
{
	struct msgs m;
	char err[512] = "";
	struct policy *p = (struct policy *)1;
	const char *text = "getppid: allow\n"
			   "bogus: allow\n"
			   "getpid: deny(EFOO)\n"
			   "getuid: allow\n"
			   "execve: allow\n";
	int rc;

	memset(&m, 0, sizeof(m));
	rc = policy_parse_text("t.policy", text, strlen(text), &p, collect, &m, err, sizeof(err));
	EXPECT_EQ(-ENOENT, rc); /* the first error's */
	EXPECT_EQ(NULL, p);
	EXPECT_EQ(3, m.n);
	EXPECT_STREQ("t.policy:2:1: unknown system call 'bogus'", err);
	EXPECT_NE(NULL, strstr(m.text, "t.policy:3:14: unknown errno 'EFOO'\n"));
	EXPECT_NE(NULL, strstr(m.text, "t.policy:5:9: execve: 'allow' refused"));
}

/* --- sandpit's protections --- */

TEST(inv3_protection_rules_cannot_be_removed)
{
	struct msgs m;
	struct policy *p = parse("close: allow\n"
				 "munmap: trap\n"
				 "mmap: arg2 & PROT_EXEC == 0; deny(EACCES)\n"
				 "dup2: arg1 <= 2\n"
				 "tgkill: allow\n"
				 "futex: arg1 & 0x7f == FUTEX_WAIT\n"
				 "prctl: allow\n"
				 "fcntl: allow\n"
				 "sendfile: allow\n"
				 "ioctl: arg1 == TCGETS\n",
				 &m, NULL);
	const struct policy_call *c;

	ASSERT_NE(NULL, p) TH_LOG("%s", m.text);
	c = call(p, "close"); /* allow of a guarded call: T checks the guard */
	EXPECT_EQ(POLICY_THREAD, c->cls);
	ASSERT_EQ(1, c->nrules);
	EXPECT_EQ(RULE_FD_FREE, c->rules[0].op);
	EXPECT_EQ(EBADF, c->rules[0].err);
	EXPECT_TRUE(has_rule(call(p, "munmap"), RULE_RANGE_FREE, 0));

	c = call(p, "mmap"); /* guards first, then the file's rule with the file's errno */
	ASSERT_EQ(3, c->nrules);
	EXPECT_EQ(RULE_FD_FREE, c->rules[0].op);
	EXPECT_EQ(4, c->rules[0].arg);
	EXPECT_EQ(RULE_RANGE_FREE, c->rules[1].op);
	EXPECT_EQ(EPERM, c->rules[1].err); /* not the file's EACCES */
	EXPECT_EQ(RULE_MASK_ZERO, c->rules[2].op);
	EXPECT_EQ(EACCES, c->err);

	c = call(p, "dup2");
	EXPECT_EQ(3, c->nrules);
	EXPECT_TRUE(has_rule(c, RULE_FD_FREE, 0));
	EXPECT_TRUE(has_rule(c, RULE_FD_FREE, 1));
	EXPECT_TRUE(has_rule(call(p, "tgkill"), RULE_SELF_PID, 0));
	EXPECT_TRUE(has_rule(call(p, "tgkill"), RULE_U_TID, 1));

	c = call(p, "futex"); /* the file's op excludes the requeues: only range_free is left */
	ASSERT_EQ(2, c->nrules);
	EXPECT_EQ(RULE_RANGE_FREE, c->rules[0].op);
	EXPECT_EQ(RULE_MASK_ZERO, c->rules[1].op);

	c = call(p, "prctl"); /* T must never install a filter on itself */
	ASSERT_EQ(4, c->nrules);
	EXPECT_EQ(RULE_MASKED_NE, c->rules[0].op);
	EXPECT_EQ((uint64_t)PR_SET_SECCOMP, c->rules[0].val);
	EXPECT_EQ(0xffffffffULL, c->rules[0].mask); /* the kernel reads an int */

	c = call(p, "fcntl"); /* an owner would send signals to B or T */
	ASSERT_EQ(3, c->nrules);
	EXPECT_EQ((uint64_t)F_SETOWN, c->rules[1].val);

	EXPECT_TRUE(has_rule(call(p, "sendfile"), RULE_FD_FREE, 0));
	EXPECT_TRUE(has_rule(call(p, "sendfile"), RULE_FD_FREE, 1));
	c = call(p, "ioctl"); /* TCGETS excludes the owner-setting requests */
	ASSERT_EQ(2, c->nrules);
	EXPECT_EQ(RULE_FD_FREE, c->rules[0].op);
	policy_free(p);
}

TEST(inv3_a_file_can_add_sandpits_checks_but_too_many_rules_is_an_error)
{
	struct msgs m;
	struct policy *p = parse("fstat: fd_free(arg0)\nmlock: range_free(arg0, arg1)\n", &m, NULL);

	ASSERT_NE(NULL, p) TH_LOG("%s", m.text);
	EXPECT_TRUE(has_rule(call(p, "fstat"), RULE_FD_FREE, 0));
	EXPECT_EQ(RULE_RANGE_FREE, call(p, "mlock")->rules[0].op);
	EXPECT_EQ(1, call(p, "mlock")->rules[0].arg2);
	policy_free(p);
	EXPECT_ERROR("futex: arg2 != 1 && arg2 != 2 && arg2 != 3\n",
		     "t.policy:1:8: futex: more than 8 rules, with the 6 sandpit adds to keep U "
		     "away from its memory and descriptors");
}

/* --- @include --- */

TEST(include_is_relative_to_the_including_file)
{
	struct tmp t;
	struct policy *p = NULL;
	struct msgs m = { 0 };
	char sub[PATH_MAX];

	tmp_init(&t);
	snprintf(sub, sizeof(sub), "%s/sub", t.dir);
	ASSERT_EQ(0, mkdir(sub, 0700));
	tmp_file(&t, "sub/common.policy", "getpid: allow\n@include ../leaf.policy\n");
	tmp_file(&t, "leaf.policy", "getuid: deny(EPERM)\n");
	const char *top = tmp_file(&t, "top.policy", "# top\n@include sub/common.policy\ngetppid: allow\n");
	EXPECT_EQ(0, policy_parse_file(top, &p, collect, &m, NULL, 0)) TH_LOG("%s", m.text);
	ASSERT_NE(NULL, p);
	EXPECT_EQ(POLICY_ALLOW, call(p, "getpid")->cls);
	EXPECT_EQ(POLICY_DENY, call(p, "getuid")->cls);
	EXPECT_EQ(POLICY_ALLOW, call(p, "getppid")->cls);
	policy_free(p);
	tmp_done(&t);
	rmdir(sub);
	rmdir(t.dir);
}

TEST(include_errors_name_the_included_file_and_line)
{
	struct tmp t;
	struct policy *p = NULL;
	struct msgs m = { 0 };
	char want[2 * PATH_MAX];

	tmp_init(&t);
	const char *inc = tmp_file(&t, "inc.policy", "getpid: allow\n  getpid: allow\n");
	const char *top = tmp_file(&t, "top.policy", "@include inc.policy\n");
	EXPECT_EQ(-EEXIST, policy_parse_file(top, &p, collect, &m, NULL, 0));
	EXPECT_EQ(NULL, p);
	snprintf(want, sizeof(want), "%s:2:3: 'getpid' is already given at %s:1\n", inc, inc);
	EXPECT_STREQ(want, m.text);

	memset(&m, 0, sizeof(m));
	top = tmp_file(&t, "missing.policy", "\n  @include nothere.policy\n");
	EXPECT_EQ(-ENOENT, policy_parse_file(top, &p, collect, &m, NULL, 0));
	snprintf(want, sizeof(want),
		 "%s:2:12: cannot include '%s/nothere.policy': No such file or directory\n", top,
		 t.dir);
	EXPECT_STREQ(want, m.text);

	memset(&m, 0, sizeof(m));
	top = tmp_file(&t, "dir.policy", "@include /tmp\n");
	EXPECT_EQ(-EINVAL, policy_parse_file(top, &p, collect, &m, NULL, 0));
	snprintf(want, sizeof(want), "%s:1:10: cannot include '/tmp': not a regular file\n", top);
	EXPECT_STREQ(want, m.text);
	tmp_done(&t);
}

TEST(include_cycles_are_errors_not_loops)
{
	struct tmp t;
	struct policy *p = NULL;
	struct msgs m = { 0 };
	char want[2 * PATH_MAX];

	tmp_init(&t);
	const char *a = tmp_file(&t, "a.policy", "getpid: allow\n@include b.policy\n");
	const char *b = tmp_file(&t, "b.policy", "getuid: allow\n@include a.policy\n");
	EXPECT_EQ(-ELOOP, policy_parse_file(a, &p, collect, &m, NULL, 0));
	EXPECT_EQ(NULL, p);
	snprintf(want, sizeof(want), "%s:2:10: include cycle: '%s/a.policy' is already being read\n",
		 b, t.dir);
	EXPECT_STREQ(want, m.text);

	memset(&m, 0, sizeof(m));
	const char *self = tmp_file(&t, "self.policy", "@include self.policy\n");
	EXPECT_EQ(-ELOOP, policy_parse_file(self, &p, collect, &m, NULL, 0));
	EXPECT_EQ(1, m.n);

	/* the same file twice, not nested, is no cycle: its lines are duplicates */
	memset(&m, 0, sizeof(m));
	tmp_file(&t, "leaf.policy", "getppid: allow\n");
	const char *twice = tmp_file(&t, "twice.policy", "@include leaf.policy\n@include leaf.policy\n");
	EXPECT_EQ(-EEXIST, policy_parse_file(twice, &p, collect, &m, NULL, 0));
	EXPECT_EQ(1, m.n);
	tmp_done(&t);
}

TEST(include_depth_is_limited)
{
	struct tmp t;
	struct policy *p = NULL;
	struct msgs m = { 0 };
	char name[32], text[64];

	tmp_init(&t);
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "d%d.policy", i);
		snprintf(text, sizeof(text), "@include d%d.policy\n", i + 1);
		tmp_file(&t, name, text);
	}
	EXPECT_EQ(-ELOOP, policy_parse_file(t.path[0], &p, collect, &m, NULL, 0));
	EXPECT_EQ(1, m.n);
	EXPECT_NE(NULL, strstr(m.text, "includes nest deeper than 8")) TH_LOG("%s", m.text);
	tmp_done(&t);
}

/* --- what the parser reads is bounded (invariant 9) --- */

struct deep {
	char *text;
	struct msgs m;
	int rc;
};

static void *parse_deep(void *arg)
{
	struct deep *d = arg;
	struct policy *p = NULL;

	memset(&d->m, 0, sizeof(d->m));
	d->rc = policy_parse_text("t.policy", d->text, strlen(d->text), &p, collect, &d->m, NULL, 0);
	policy_free(p);
	return NULL;
}

/* A 10 MB line of `prefix` then `unit` repeated, parsed on a 256 KiB
 * thread stack (what a program's thread may give sandpit_start). */
static void deep_line(struct __test_metadata *_metadata, const char *prefix, char unit,
		      const char *want)
{
	size_t n = 10 << 20, k = strlen(prefix);
	struct deep d = { .text = malloc(n + k + 1) };
	pthread_attr_t attr;
	pthread_t th;

	ASSERT_NE(NULL, d.text);
	memcpy(d.text, prefix, k);
	memset(d.text + k, unit, n);
	d.text[n + k] = 0;
	ASSERT_EQ(0, pthread_attr_init(&attr));
	ASSERT_EQ(0, pthread_attr_setstacksize(&attr, 256 << 10));
	ASSERT_EQ(0, pthread_create(&th, &attr, parse_deep, &d));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(-EINVAL, d.rc);
	EXPECT_EQ(1, d.m.n) TH_LOG("%.300s", d.m.text);
	EXPECT_STREQ(want, d.m.text);
	free(d.text);
}

TEST(inv9_a_10_mb_line_of_nesting_is_a_clean_error)
{
	deep_line(_metadata, "read: arg0 == ", '(', "t.policy:1:47: nested deeper than 32 levels\n");
	deep_line(_metadata, "read: arg0 == ", '-', "t.policy:1:47: nested deeper than 32 levels\n");
	deep_line(_metadata, "read: arg0 == ", '~', "t.policy:1:47: nested deeper than 32 levels\n");
	deep_line(_metadata, "read: ", '(', "t.policy:1:40: nested deeper than 32 levels\n");
	/* 32 levels are still fine */
	struct msgs m;
	struct policy *p = parse("read: arg0 == ((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))\n", &m, NULL);
	EXPECT_NE(NULL, p) TH_LOG("%s", m.text);
	policy_free(p);
}

TEST(inv9_include_bomb_stops_at_the_budget_and_names_the_chain)
{
	struct tmp t;
	struct policy *p = NULL;
	struct msgs m = { 0 };
	char name[32], text[2 * PATH_MAX + 8];

	/* 8 files, each including the next 10 times: 10^7 reads without a budget */
	tmp_init(&t);
	for (int i = 0; i < 8; i++) {
		text[0] = 0;
		for (int k = 0; k < 10 && i < 7; k++)
			snprintf(text + strlen(text), sizeof(text) - strlen(text),
				 "@include b%d.policy\n", i + 1);
		snprintf(name, sizeof(name), "b%d.policy", i);
		tmp_file(&t, name, i < 7 ? text : "# the leaf\n");
	}
	EXPECT_EQ(-E2BIG, policy_parse_file(t.path[0], &p, collect, &m, NULL, 0));
	EXPECT_EQ(NULL, p);
	EXPECT_EQ(1, m.n) TH_LOG("%s", m.text);
	EXPECT_NE(NULL, strstr(m.text, "read more than 256 files (in ")) TH_LOG("%s", m.text);
	snprintf(text, sizeof(text), "%s -> %s -> ", t.path[0], t.path[1]);
	EXPECT_NE(NULL, strstr(m.text, text)) TH_LOG("%s", m.text);
	tmp_done(&t);
}

/* 7 files each including the next twice, then a 1 MiB leaf read 64 times:
 * a leaf of one long comment passes the bytes budget, one of newlines the
 * lines budget first */
static void include_budget(struct __test_metadata *_metadata, char fill, const char *want)
{
	struct tmp t;
	struct policy *p = NULL;
	struct msgs m = { 0 };
	char name[32], text[64];
	char *leaf = malloc((1 << 20) + 1);

	ASSERT_NE(NULL, leaf);
	memset(leaf, fill, 1 << 20);
	leaf[0] = '#';
	leaf[(1 << 20) - 1] = '\n';
	leaf[1 << 20] = 0;
	tmp_init(&t);
	for (int i = 0; i < 7; i++) {
		snprintf(name, sizeof(name), "c%d.policy", i);
		snprintf(text, sizeof(text), "@include c%d.policy\n@include c%d.policy\n", i + 1, i + 1);
		tmp_file(&t, name, text);
	}
	tmp_file(&t, "c7.policy", leaf);
	free(leaf);
	EXPECT_EQ(-E2BIG, policy_parse_file(t.path[0], &p, collect, &m, NULL, 0));
	EXPECT_EQ(NULL, p);
	EXPECT_EQ(1, m.n) TH_LOG("%s", m.text);
	EXPECT_NE(NULL, strstr(m.text, want)) TH_LOG("%s", m.text);
	tmp_done(&t);
}

TEST(inv9_includes_stop_at_the_bytes_and_lines_budgets)
{
	include_budget(_metadata, 'x', "read more than 16777216 bytes");
	include_budget(_metadata, '\n', "read more than 2097152 lines");
}

TEST(a_missing_file_is_a_clear_error)
{
	struct policy *p = (struct policy *)1;
	char err[256];

	EXPECT_EQ(-ENOENT, policy_parse_file("/nonexistent/x.policy", &p, NULL, NULL, err,
					     sizeof(err)));
	EXPECT_EQ(NULL, p);
	EXPECT_STREQ("/nonexistent/x.policy: cannot read the policy: No such file or directory", err);
}

/* --- the dump: action, rule and path in each mode --- */

static int line_has(const char *dump, const char *name, const char *what)
{
	size_t n = strlen(name);

	for (const char *l = dump; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *end = strchr(l, '\n');

		if (!strncmp(l, name, n) && l[n] == ' ') {
			const char *hit = strstr(l, what);
			return hit && (!end || hit < end);
		}
	}
	return 0;
}

TEST(show_gives_each_calls_path_in_both_modes)
{
	struct policy *p = default_policy();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ASSERT_NE(NULL, f);
	policy_dump(p, f);
	fclose(f);
	EXPECT_TRUE(line_has(buf, "read", "allow          native  native"));
	EXPECT_TRUE(line_has(buf, "getppid", "allow          T       native"));
	EXPECT_TRUE(line_has(buf, "execve", "deny(EACCES)   errno   BPF errno"));
	EXPECT_TRUE(line_has(buf, "openat", "process        B       B"));
	EXPECT_TRUE(line_has(buf, "close", "trap           T       BPF+T"));
	EXPECT_TRUE(line_has(buf, "munmap", "trap           T       T"));
	EXPECT_TRUE(line_has(buf, "gettid", "emulate        T       T"));
	EXPECT_TRUE(line_has(buf, "default", "deny(ENOSYS)   errno   BPF errno"));
	free(buf);
	policy_free(p);
}

/* --- the BPF export, loaded by the kernel --- */

static const char bpf_policy[] = "default: deny(ENOSYS)\n"
				 "exit_group: allow\n"
				 "getpid: allow\n"
				 "getppid: deny(EXDEV)\n"
				 "getuid: arg0 == 7; deny(ENOTTY)\n"
				 "read: allow\nwrite: allow\nexit: allow\nrt_sigreturn: allow\n";

/* Loads the program in `fd` in a child under NO_NEW_PRIVS and tries the
 * policy's calls: 0 if each answered as the policy says. */
static int load_and_try(int fd)
{
	struct stat st;
	pid_t pid;
	int status;

	if (fstat(fd, &st) < 0 || st.st_size == 0 || st.st_size % 8)
		return 1;
	void *prog = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (prog == MAP_FAILED)
		return 2;
	struct sock_fprog fp = { .len = (unsigned short)(st.st_size / 8), .filter = prog };
	pid = fork();
	if (pid == 0) {
		pid_t me = (pid_t)syscall(SYS_getpid);

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp))
			syscall(SYS_exit_group, 10);
		if (syscall(SYS_getpid) != me)
			syscall(SYS_exit_group, 11);
		if (syscall(SYS_getppid) != -1 || errno != EXDEV)
			syscall(SYS_exit_group, 12);
		if (syscall(SYS_getpriority, 0, 0) != -1 || errno != ENOSYS)
			syscall(SYS_exit_group, 13);
		if (syscall(SYS_getuid, 1) != -1 || errno != ENOTTY)
			syscall(SYS_exit_group, 14);
		syscall(SYS_exit_group, 0);
	}
	munmap(prog, (size_t)st.st_size);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 3;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

TEST(export_bpf_is_accepted_by_the_kernel_and_enforces_the_file)
{
	struct msgs m;
	struct policy *p = parse(bpf_policy, &m, NULL);
	struct policy_runtime rt = { .pid = getpid(), .fd_lo = 1, .fd_hi = 0 };
	char err[256] = "";
	int fd = memfd_create("bpf", MFD_CLOEXEC);

	ASSERT_NE(NULL, p) TH_LOG("%s", m.text);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, policy_export_bpf(p, &rt, fd, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0, load_and_try(fd));
	close(fd);
	policy_free(p);
}

/* build/sandpit, next to build/selftests/ */
static int sandpit_cli(char *out, size_t n)
{
	if (!*bindir || (size_t)snprintf(out, n, "%s/sandpit", bindir) >= n)
		return -1;
	return access(out, X_OK);
}

TEST(cli_export_bpf_check_and_show)
{
	static char out[1 << 18], errs[1 << 14];
	char cli[PATH_MAX], want[PATH_MAX + 128];
	struct tmp t;
	int fd = memfd_create("out", MFD_CLOEXEC), efd = memfd_create("err", MFD_CLOEXEC);

	if (sandpit_cli(cli, sizeof(cli)) < 0)
		SKIP(return, "no sandpit command next to this test");
	tmp_init(&t);
	const char *good = tmp_file(&t, "good.policy", bpf_policy);
	const char *bad = tmp_file(&t, "bad.policy", "getppid: allow\nopenat: allow\nfoo: kill\n");

	EXPECT_EQ(0, run_cli(cli, (const char *[]){ cli, "policy", "export-bpf", good, NULL }, fd,
			     efd));
	EXPECT_EQ(0, load_and_try(fd));

	ASSERT_EQ(0, ftruncate(fd, 0));
	EXPECT_EQ(0, run_cli(cli, (const char *[]){ cli, "policy", "export-pfc", good, NULL }, fd,
			     efd));
	read_all(fd, out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "action ERRNO(18);")); /* getppid: EXDEV */

	ASSERT_EQ(0, ftruncate(fd, 0));
	EXPECT_EQ(0, run_cli(cli, (const char *[]){ cli, "policy", "check", good, NULL }, fd, efd));
	read_all(efd, errs, sizeof(errs));
	EXPECT_STREQ("", errs);

	/* a policy strict mode cannot enforce: accepted, with a note per line */
	const char *loose = tmp_file(&t, "loose.policy",
				     "default: kill\nread: allow\nwrite: arg0 == 1\nexit: allow\n");
	ASSERT_EQ(0, ftruncate(efd, 0));
	ASSERT_EQ(0, lseek(efd, 0, SEEK_SET));
	EXPECT_EQ(0, run_cli(cli, (const char *[]){ cli, "policy", "check", loose, NULL }, fd,
			     efd));
	read_all(efd, errs, sizeof(errs));
	snprintf(want, sizeof(want),
		 "%s:3: note: write: strict mode cannot enforce a rule on its arguments: seccomp "
		 "strict mode lets the program make write itself; allow it, or use filter mode\n"
		 "%s:1: note: rt_sigreturn: no line names it, and strict mode cannot enforce the "
		 "default, kill: seccomp strict mode lets the program make rt_sigreturn itself; "
		 "allow it, or use filter mode\n",
		 loose, loose);
	EXPECT_STREQ(want, errs);
	ASSERT_EQ(0, ftruncate(fd, 0));
	ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
	EXPECT_EQ(0, run_cli(cli, (const char *[]){ cli, "policy", "show", loose, NULL }, fd, efd));
	read_all(fd, out, sizeof(out));
	EXPECT_TRUE(line_has(out, "write", "refused")) TH_LOG("%s", out);
	EXPECT_FALSE(line_has(out, "read", "refused")) TH_LOG("%s", out);

	ASSERT_EQ(0, ftruncate(efd, 0));
	ASSERT_EQ(0, lseek(efd, 0, SEEK_SET));
	EXPECT_EQ(1, run_cli(cli, (const char *[]){ cli, "policy", "check", bad, NULL }, fd, efd));
	read_all(efd, errs, sizeof(errs));
	snprintf(want, sizeof(want), "%s:2:9: openat: 'allow' refused", bad);
	EXPECT_NE(NULL, strstr(errs, want)) TH_LOG("%s", errs);
	snprintf(want, sizeof(want), "%s:3:1: unknown system call 'foo'", bad);
	EXPECT_NE(NULL, strstr(errs, want)) TH_LOG("%s", errs);
	EXPECT_NE(NULL, strstr(errs, "2 errors")) TH_LOG("%s", errs);

	ASSERT_EQ(0, ftruncate(fd, 0));
	EXPECT_EQ(0, run_cli(cli, (const char *[]){ cli, "policy", "show", good, NULL }, fd, efd));
	read_all(fd, out, sizeof(out));
	EXPECT_TRUE(line_has(out, "getppid", "deny(EXDEV)")) TH_LOG("%s", out);
	EXPECT_TRUE(line_has(out, "getuid", "arg0 == 0x7 else ENOTTY")) TH_LOG("%s", out);
	close(fd);
	close(efd);
	tmp_done(&t);
}

/* sandpit policy check names the line of a bad deny; show lists denies */
TEST(cli_check_names_a_bad_deny_line_and_show_lists_denies)
{
	static char out[1 << 18], errs[1 << 14];
	char cli[PATH_MAX], want[PATH_MAX + 128];
	struct tmp t;
	int fd = memfd_create("out", MFD_CLOEXEC), efd = memfd_create("err", MFD_CLOEXEC);

	if (sandpit_cli(cli, sizeof(cli)) < 0)
		SKIP(return, "no sandpit command next to this test");
	tmp_init(&t);
	const char *bad = tmp_file(&t, "bad.policy",
				   "getppid: allow\npath read /etc\npath deny /etc/ssh/[*_key\n");
	const char *good = tmp_file(&t, "good.policy",
				    "getppid: allow\npath read /etc\npath deny /etc/ssh/*_key\n");

	EXPECT_EQ(1, run_cli(cli, (const char *[]){ cli, "policy", "check", bad, NULL }, fd, efd));
	read_all(efd, errs, sizeof(errs));
	snprintf(want, sizeof(want),
		 "%s:3:11: the pattern '/etc/ssh/[*_key' has a '[' that no ']' closes", bad);
	EXPECT_NE(NULL, strstr(errs, want)) TH_LOG("%s", errs);

	EXPECT_EQ(0, run_cli(cli, (const char *[]){ cli, "policy", "check", good, NULL }, fd, efd));
	EXPECT_EQ(0, run_cli(cli, (const char *[]){ cli, "policy", "show", good, NULL }, fd, efd));
	read_all(fd, out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "\npath deny  /etc/ssh/*_key\n")) TH_LOG("%s", out);
	close(fd);
	close(efd);
	tmp_done(&t);
}

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
	struct policy *p = parse(text, &m, NULL);
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
