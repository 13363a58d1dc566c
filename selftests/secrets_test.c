/* Secrets stay out, and root is not root inside.  The default
 * policy's `path deny` lines win over every grant (the policy's, and
 * allow_read/allow_write on top) and over every way of spelling or
 * reaching the path: B matches them against the path it resolved.  A
 * process that calls sandpit_start with capabilities has none left inside,
 * and B has none either.  Run in every mode (SANDPIT_MODE, SANDPIT_KERNEL).
 *
 * Root owns /etc/shadow, so only as root does a refusal prove anything
 * (anyone else is refused by the file's mode): those tests skip otherwise.
 * policyfile_test checks the pattern matching itself as anyone. */
#include <fcntl.h>
#include <linux/capability.h>
#include <limits.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "policy_util.h"

#define SHADOW "/etc/shadow"

/* What the sandboxed side saw, in a page shared with the test. */
struct seen {
	int attempts;		   /* calls that reached the sandbox */
	int refused;		   /* of those, refused with EACCES */
	int first_bad;		   /* 1 + the index of the first that was not */
	int first_errno;	   /* what that one got (0: it succeeded) */
	int controls_ok;	   /* calls that must succeed, and did */
	unsigned long long cap[6]; /* CapInh, CapPrm, CapEff, CapBnd, CapAmb, NoNewPrivs */
	int caps_read;
	unsigned uid;
};

#define NFIELDS 6
static const char *const cap_names[NFIELDS] = { "CapInh:", "CapPrm:", "CapEff:",
						"CapBnd:", "CapAmb:", "NoNewPrivs:" };

/* The five capability sets and no_new_privs of a /proc/PID/status; how
 * many were found. */
static int read_caps(const char *status_path, unsigned long long cap[NFIELDS])
{
	char line[256];
	int n = 0;
	FILE *f = fopen(status_path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		for (int i = 0; i < NFIELDS; i++)
			if (!strncmp(line, cap_names[i], strlen(cap_names[i]))) {
				cap[i] = strtoull(line + strlen(cap_names[i]), NULL, 16);
				n++;
			}
	fclose(f);
	return n;
}

/* Root, and holding capabilities to lose. */
static int root_with_caps(void)
{
	unsigned long long cap[NFIELDS];
	return geteuid() == 0 && read_caps("/proc/self/status", cap) == NFIELDS && cap[2] != 0;
}

#define NEED_ROOT()                                                                                \
	do {                                                                                       \
		if (!root_with_caps())                                                             \
			SKIP(return,                                                               \
				   "not root with capabilities: %s is unreadable natively, "       \
				   "so a refusal would prove nothing",                             \
				   SHADOW);                                                        \
		ASSERT_EQ(0, access(SHADOW, R_OK)) TH_LOG("root cannot read %s natively", SHADOW); \
	} while (0)

/* One attack: r is the call's result, errno its error.  Each must be
 * refused with EACCES. */
static void expect_eacces(struct seen *s, long r)
{
	int e = errno;
	s->attempts++;
	if (r == -1 && e == EACCES)
		s->refused++;
	else if (!s->first_bad) {
		s->first_bad = s->attempts;
		s->first_errno = r == -1 ? e : 0;
	}
}

static void check_seen(struct __test_metadata *_metadata, const struct seen *s, int attempts,
		       int controls)
{
	EXPECT_EQ(attempts, s->attempts) TH_LOG("not every attack reached the sandbox");
	EXPECT_EQ(s->attempts, s->refused)
	TH_LOG("attack %d: errno %d (0: it succeeded), not EACCES", s->first_bad, s->first_errno);
	EXPECT_EQ(controls, s->controls_ok) TH_LOG("a call the grants allow failed");
}

static int run(int (*fn)(void *), void *arg, const struct sandpit_options *o)
{
	return outcome(run_sandboxed_opts(fn, arg, o, 20));
}

/* ---- root is not root inside */

static int ready[2], go[2];

static int report_caps(void *arg)
{
	struct seen *s = arg;
	s->caps_read = read_caps("/proc/self/status", s->cap);
	s->uid = getuid();
	char c = 1;
	/* B is looked at while this process lives */
	if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
		return 3;
	return 0;
}

TEST(root_keeps_its_uid_and_no_capability_and_b_has_none)
{
	struct seen *s = shared_page(sizeof(*s));
	unsigned long long bcap[NFIELDS] = { 1, 1, 1, 1, 1, 0 };
	char path[64];

	if (!root_with_caps())
		SKIP(return, "not root with capabilities: nothing to drop");
	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	/* B is double-forked; as subreaper the test inherits it and finds it */
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	fflush(NULL);
	pid_t child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		if (sandpit_start(NULL) < 0) {
			fprintf(stderr, "sandpit_start: %s\n", sandpit_error());
			_exit(SANDBOX_START_FAILED);
		}
		_exit(report_caps(s));
	}
	char c;
	ASSERT_EQ(1, read(ready[0], &c, 1));
	pid_t b = 0;
	for (int i = 0; i < 100 && !b; i++)
		if (!(b = find_child_named("sandpit-B")))
			usleep(10000);
	ASSERT_LT(0, b);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)b);
	EXPECT_EQ(NFIELDS, read_caps(path, bcap));
	ASSERT_EQ(1, write(go[1], &c, 1));
	int st;
	ASSERT_EQ(child, waitpid(child, &st, 0));
	EXPECT_EQ(0, outcome(st));
	EXPECT_EQ(NFIELDS, s->caps_read);
	for (int i = 0; i < 5; i++) {
		EXPECT_EQ(0ULL, s->cap[i]) TH_LOG("inside: %s %llx", cap_names[i], s->cap[i]);
		if (i != 0 && i != 4) /* B's CapPrm, CapEff, CapBnd */
			EXPECT_EQ(0ULL, bcap[i]) TH_LOG("B: %s %llx", cap_names[i], bcap[i]);
	}
	EXPECT_EQ(1ULL, s->cap[5]); /* no_new_privs: an exec gives nothing back */
	EXPECT_EQ(1ULL, bcap[5]);
	EXPECT_EQ(0U, s->uid); /* root keeps its uid */
}

/* Without CAP_SETPCAP the bounding set cannot shrink: the rest still
 * goes, no_new_privs keeps the bounding set from giving anything back */
static int caps_only(void *arg)
{
	struct seen *s = arg;
	s->caps_read = read_caps("/proc/self/status", s->cap);
	return 0;
}

TEST(without_cap_setpcap_the_other_sets_still_empty)
{
	struct seen *s = shared_page(sizeof(*s));
	unsigned long long before[NFIELDS];

	if (!root_with_caps())
		SKIP(return, "not root with capabilities: nothing to drop");
	ASSERT_NE(NULL, s);
	ASSERT_EQ(NFIELDS, read_caps("/proc/self/status", before));
	fflush(NULL);
	pid_t child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
		struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
		if (syscall(SYS_capget, &hdr, d) < 0)
			_exit(101);
		d[0].permitted &= ~(1u << CAP_SETPCAP);
		d[0].effective &= ~(1u << CAP_SETPCAP);
		d[0].inheritable = d[0].permitted & (1u << CAP_CHOWN);
		if (syscall(SYS_capset, &hdr, d) < 0 ||
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_CHOWN, 0, 0) < 0)
			_exit(102);
		if (sandpit_start(NULL) < 0) {
			fprintf(stderr, "sandpit_start: %s\n", sandpit_error());
			_exit(SANDBOX_START_FAILED);
		}
		_exit(caps_only(s));
	}
	int st;
	ASSERT_EQ(child, waitpid(child, &st, 0));
	ASSERT_EQ(0, outcome(st));
	ASSERT_EQ(NFIELDS, s->caps_read);
	EXPECT_EQ(0ULL, s->cap[0]);	 /* inheritable */
	EXPECT_EQ(0ULL, s->cap[1]);	 /* permitted */
	EXPECT_EQ(0ULL, s->cap[2]);	 /* effective */
	EXPECT_EQ(before[3], s->cap[3]); /* bounding: as it was */
	EXPECT_EQ(0ULL, s->cap[4]);	 /* ambient: CAP_CHOWN was raised, now gone */
	EXPECT_EQ(1ULL, s->cap[5]);
}

/* ---- secrets out */

static int read_shadow(void *arg)
{
	struct seen *s = arg;
	struct stat st;
	expect_eacces(s, open(SHADOW, O_RDONLY));
	expect_eacces(s, stat(SHADOW, &st));
	expect_eacces(s, access(SHADOW, R_OK));
	expect_eacces(s, open("/etc/ssl/private", O_RDONLY | O_DIRECTORY));
	int fd = open("/etc/passwd", O_RDONLY); /* /etc stays granted */
	s->controls_ok += fd >= 0;
	if (fd >= 0)
		close(fd);
	return 0;
}

TEST(default_policy_refuses_etc_shadow_with_eacces)
{
	struct seen *s = shared_page(sizeof(*s));

	NEED_ROOT();
	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, run(read_shadow, s, NULL));
	check_seen(_metadata, s, 4, 1);
}

static int write_shadow(void *arg)
{
	struct seen *s = arg;
	expect_eacces(s, open(SHADOW, O_RDONLY));
	if (suite_has_openat2()) {
		expect_eacces(s, open(SHADOW, O_RDWR));
		expect_eacces(s, open(SHADOW, O_WRONLY | O_APPEND));
		expect_eacces(s, open("/etc/sudoers.d/x", O_WRONLY | O_CREAT, 0600));
	}
	int fd = open("/etc/passwd", O_RDONLY);
	s->controls_ok += fd >= 0;
	if (fd >= 0)
		close(fd);
	fd = open("/etc/hostname", O_RDONLY);
	s->controls_ok += fd >= 0;
	if (fd >= 0)
		close(fd);
	return 0;
}

TEST(deny_wins_over_allow_read_of_etc_and_grants_of_root)
{
	struct seen *s = shared_page(sizeof(*s));
	const char *rd[] = { "/etc", "/", NULL }, *wr[] = { "/", NULL };
	struct sandpit_options o = { .allow_read = rd,
				     .allow_write = suite_has_openat2() ? wr : NULL };

	NEED_ROOT();
	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, run(write_shadow, s, &o));
	check_seen(_metadata, s, suite_has_openat2() ? 4 : 1, 2);
	EXPECT_NE(0, access("/etc/sudoers.d/x", F_OK)); /* nothing created */
}

static int spellings(void *arg)
{
	struct seen *s = arg;
	static const char *const paths[] = {
		"/etc/../etc/shadow",
		"//etc/shadow",
		"/etc//shadow",
		"/./etc/./shadow",
		"/etc/ssl/../shadow",
		"/usr/../etc/shadow",
		"/etc/shadow/",
		"/proc/self/root/etc/shadow",
		"/proc/thread-self/root/etc/shadow",
		"/proc/self/cwd/shadow",
		"shadow",
		"./shadow",
		"../etc/shadow",
		"/etc/ssl/private/../../shadow",
	};
	char p[64];
	if (chdir("/etc") < 0)
		return 2;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		expect_eacces(s, open(paths[i], O_RDONLY));
	int etc = open("/etc", O_RDONLY | O_DIRECTORY);
	if (etc < 0)
		return 3;
	expect_eacces(s, openat(etc, "shadow", O_RDONLY));
	expect_eacces(s, openat(etc, "../etc/shadow", O_RDONLY));
	snprintf(p, sizeof(p), "/proc/self/fd/%d/shadow", etc);
	expect_eacces(s, open(p, O_RDONLY));
	snprintf(p, sizeof(p), "/dev/fd/%d/shadow", etc);
	expect_eacces(s, open(p, O_RDONLY));
	s->controls_ok += openat(etc, "passwd", O_RDONLY) >= 0;
	return 0;
}

TEST(deny_is_not_bypassed_by_dotdot_slashes_dirfds_or_proc_links)
{
	struct seen *s = shared_page(sizeof(*s));
	const char *rd[] = { "/", NULL };
	struct sandpit_options o = { .allow_read = rd };

	NEED_ROOT();
	ASSERT_NE(NULL, s);
	/* /dev/fd is udev's (a bare devtmpfs has none): without it the
	 * attack through it would end in ENOENT, proving nothing */
	ASSERT_EQ(0, access("/dev/fd/0", F_OK)) TH_LOG("no /dev/fd");
	ASSERT_EQ(0, run(spellings, s, &o));
	check_seen(_metadata, s, 18, 1);
}

struct links {
	struct seen *s;
	char dir[64];
};

static int through_links(void *arg)
{
	struct links *l = arg;
	struct seen *s = l->s;
	struct stat st;
	char p[128];
	static const char *const names[] = { "abs", "rel", "etc/shadow", "chain",
					     "etc/ssl/../shadow" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", l->dir, names[i]);
		expect_eacces(s, open(p, O_RDONLY));
		if (suite_has_openat2())
			expect_eacces(s, open(p, O_RDWR));
	}
	snprintf(p, sizeof(p), "%s/abs", l->dir);
	expect_eacces(s, stat(p, &st));
	s->controls_ok += lstat(p, &st) == 0 && S_ISLNK(st.st_mode); /* the link is granted */
	snprintf(p, sizeof(p), "%s/etc/passwd", l->dir);
	int fd = open(p, O_RDONLY);
	s->controls_ok += fd >= 0;
	return 0;
}

TEST(deny_is_not_bypassed_by_a_symlink_in_a_write_grant)
{
	struct links *l = shared_page(sizeof(*l));
	char p[128], cmd[128];

	NEED_ROOT();
	ASSERT_NE(NULL, l);
	l->s = shared_page(sizeof(*l->s));
	ASSERT_NE(NULL, l->s);
	strcpy(l->dir, "/tmp/secrets_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(l->dir));
	const char *targets[][2] = { { "abs", SHADOW },
				     { "rel", "../../etc/shadow" },
				     { "etc", "/etc" },
				     { "chain", "abs" } };
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", l->dir, targets[i][0]);
		ASSERT_EQ(0, symlink(targets[i][1], p));
	}
	const char *grant[] = { l->dir, NULL };
	/* without openat2 write grants are refused: the same as a read grant */
	struct sandpit_options o = { .allow_read = suite_has_openat2() ? NULL : grant,
				     .allow_write = suite_has_openat2() ? grant : NULL };
	EXPECT_EQ(0, run(through_links, l, &o));
	check_seen(_metadata, l->s, suite_has_openat2() ? 11 : 6, 2);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", l->dir);
	EXPECT_EQ(0, system(cmd));
}

/* ---- a deny inside a write grant: no namespace call moves, links or
 * removes a denied name, or a directory that holds one */

struct ns {
	struct seen s;
	char dir[64];
};

static int namespace_calls(void *arg)
{
	struct ns *n = arg;
	char a[128], b[128];
#define P(buf, name) (snprintf(buf, sizeof(buf), "%s/%s", n->dir, name), buf)
	expect_eacces(&n->s, rename(P(a, "keys"), P(b, "moved")));
	expect_eacces(&n->s, rename(P(a, "secret"), P(b, "s2")));
	expect_eacces(&n->s, link(P(a, "secret"), P(b, "s3")));
	expect_eacces(&n->s, link(P(a, "keys/host_key"), P(b, "k2")));
	expect_eacces(&n->s, unlink(P(a, "secret")));
	expect_eacces(&n->s, unlink(P(a, "keys/host_key")));
	expect_eacces(&n->s, syscall(SYS_renameat2, AT_FDCWD, P(a, "keys"), AT_FDCWD,
				     P(b, "other"), RENAME_EXCHANGE));
	expect_eacces(&n->s, rename(P(a, "other"), P(b, "keys")));
	expect_eacces(&n->s, rmdir(P(a, "keys")));
	expect_eacces(&n->s, symlink("x", P(a, "keys/new_key")));
	expect_eacces(&n->s, mkdir(P(a, "keys/dir_key"), 0700));
	expect_eacces(&n->s, rename(P(a, "keys/ok"), P(b, "keys/ok_key")));
	/* the grant still works for what no deny touches */
	n->s.controls_ok += rename(P(a, "keys/ok"), P(b, "ok2")) == 0;
	n->s.controls_ok += mkdir(P(a, "newdir"), 0700) == 0;
#undef P
	return 0;
}

TEST(deny_holds_against_namespace_calls_inside_a_write_grant)
{
	struct ns *n = shared_page(sizeof(*n));
	char p[128], pol[32], lines[256];
	struct stat st;

	if (!suite_has_openat2())
		SKIP(return, "write grants need openat2");
	ASSERT_NE(NULL, n);
	strcpy(n->dir, "/tmp/secrets_ns.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(n->dir));
	static const char *const made[] = { "keys/", "other/", "keys/host_key", "keys/ok",
					    "secret" };
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", n->dir, made[i]);
		if (p[strlen(p) - 1] == '/') {
			ASSERT_EQ(0, mkdir(p, 0700));
		} else {
			ASSERT_EQ(0, close(open(p, O_CREAT | O_WRONLY, 0600)));
		}
	}
	snprintf(lines, sizeof(lines), "path deny %s/keys/*_key\npath deny %s/secret\n", n->dir,
		 n->dir);
	default_policy_with(lines, pol);
	const char *grant[] = { n->dir, NULL };
	struct sandpit_options o = { .policy_file = pol, .allow_write = grant };
	EXPECT_EQ(0, run(namespace_calls, n, &o));
	check_seen(_metadata, &n->s, 12, 2);
	/* nothing protected moved, and no second name was made */
	static const char *const kept[] = { "keys/host_key", "secret", "other" };
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", n->dir, kept[i]);
		EXPECT_EQ(0, lstat(p, &st)) TH_LOG("%s is gone", p);
	}
	static const char *const never[] = { "moved", "s2", "s3", "k2", "keys/new_key",
					     "keys/dir_key", "keys/ok_key" };
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", n->dir, never[i]);
		EXPECT_NE(0, lstat(p, &st)) TH_LOG("%s was made", p);
	}
	unlink(pol);
	snprintf(p, sizeof(p), "rm -rf %s", n->dir);
	EXPECT_EQ(0, system(p));
}

TEST_HARNESS_MAIN
