/* B's path checks: paths resolved by the walk alone and with openat2's
 * shortcut, symlinks and magic links, grants matched by whole components,
 * and what B decides from the registers. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
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
#include <sys/wait.h>
#include <unistd.h>

#include <kselftest_harness.h>

#include "policy/policy.h"
#include "policy/rule_eval.h"
#include "policy/t_table.h"

#include "policy_util.h"

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

/* The aliases a policy keeps for grants and denies through symbolic links
 * are realpath's, whatever the policy already learned while it was built
 * (policy.c remembers the components it found to be no link): a plain
 * directory first, then a link beside and below it, a link to it, a
 * missing component, a wildcard under a link, a file that is a link */
TEST_F(tmpdir, aliases_through_links_are_realpaths_once_components_are_known)
{
	char a[PATH_MAX], l[PATH_MAX], f[PATH_MAX], fl[PATH_MAX], t[2 * PATH_MAX + 32],
		u[2 * PATH_MAX + 32];
	struct policy *p;

	ASSERT_EQ(0, mkdir(at(a, self->dir, "a"), 0700));
	ASSERT_EQ(0, mkdir(at(t, self->dir, "a/sub"), 0700));
	ASSERT_EQ(0, symlink("a", at(l, self->dir, "l")));
	ASSERT_EQ(0, close(open(at(f, self->dir, "a/key"), O_CREAT | O_WRONLY, 0600)));
	ASSERT_EQ(0, close(open(at(t, self->dir, "a/sub/other"), O_CREAT | O_WRONLY, 0600)));
	ASSERT_EQ(0, symlink(f, at(fl, self->dir, "a/sub/keylink")));
	ASSERT_EQ(0, policy_new(&p));
	/* the plain directory first: its components become known */
	snprintf(t, sizeof(t), "%s/sub/secret", a);
	ASSERT_EQ(0, policy_deny(p, t, NULL, 0));
	EXPECT_EQ(1u, policy_ndenies(p));
	/* then through the link: kept with its target */
	snprintf(t, sizeof(t), "%s/sub/other", l);
	snprintf(u, sizeof(u), "%s/sub/other", a);
	ASSERT_EQ(0, policy_deny(p, t, NULL, 0));
	EXPECT_TRUE(has_deny(p, t));
	EXPECT_TRUE(has_deny(p, u));
	/* a wildcard under the link: the directory part resolved */
	snprintf(t, sizeof(t), "%s/sub/*.pem", l);
	snprintf(u, sizeof(u), "%s/sub/*.pem", a);
	ASSERT_EQ(0, policy_deny(p, t, NULL, 0));
	EXPECT_TRUE(has_deny(p, u));
	/* a file that is itself a link, in a directory already known */
	size_t before = policy_ndenies(p);
	ASSERT_EQ(0, policy_deny(p, fl, NULL, 0));
	EXPECT_TRUE(has_deny(p, fl));
	EXPECT_TRUE(has_deny(p, f));
	EXPECT_EQ(before + 2, policy_ndenies(p));
	/* a missing component: nothing to resolve (realpath fails), the
	 * pattern alone, under the plain directory and through the link */
	snprintf(t, sizeof(t), "%s/none/x", a);
	before = policy_ndenies(p);
	ASSERT_EQ(0, policy_deny(p, t, NULL, 0));
	snprintf(t, sizeof(t), "%s/none/x", l);
	ASSERT_EQ(0, policy_deny(p, t, NULL, 0));
	EXPECT_EQ(before + 2, policy_ndenies(p));
	/* read grants: through the link both, a plain one once */
	ASSERT_EQ(0, policy_grant(p, l, 0, NULL, 0));
	EXPECT_TRUE(has_grant(p, l));
	EXPECT_TRUE(has_grant(p, a));
	before = policy_ngrants(p);
	snprintf(t, sizeof(t), "%s/sub", a);
	ASSERT_EQ(0, policy_grant(p, t, 0, NULL, 0));
	EXPECT_EQ(before + 1, policy_ngrants(p));
	policy_free(p);
}


static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* policy.c follows a link itself, from what it already knows, instead of
 * handing the path to realpath: absolute and relative targets, a chain
 * of links through a link, '.' and '..' in targets, a loop, a dangling
 * link, a file in the way, each asked twice (the second time from what
 * the first learned) and by a fresh policy in the other order */
TEST_F(tmpdir, links_followed_from_what_is_known_resolve_as_realpath)
{
	static const char *const links[][2] = {
		{ "abs", NULL }, /* to dir/r, absolute (below) */
		{ "rel", "r" },
		{ "r/up", "../r/real" },
		{ "chain1", "chain2" },
		{ "chain2", "rel/real" },
		{ "r/real/selfdir", "." },
		{ "loopa", "loopb" },
		{ "loopb", "loopa" },
		{ "r/real/deep/fl", "../../real/deep/f" },
		{ "r/real/deep/slash", "/" },
		{ "dangling", "none/there" },
	};
	static const char *const asked[] = {
		"abs/real/deep/f", "rel/real/deep", "r/up/deep/f", "chain1/deep/f",
		"r/real/selfdir/deep/f", "loopa/x", "dangling", "dangling/x",
		"rel/real/deep/fl", "rel/real/deep/slash/tmp", "rel/missing/x",
		"abs/real/deep/f/x", "chain1", "rel", "r/real/deep/fl/x",
	};
	const size_t na = sizeof(asked) / sizeof(asked[0]);
	char t[PATH_MAX], u[PATH_MAX], want[PATH_MAX], got[PATH_MAX];
	struct policy *p, *q;

	ASSERT_EQ(0, mkdir(at(t, self->dir, "r"), 0700));
	ASSERT_EQ(0, mkdir(at(t, self->dir, "r/real"), 0700));
	ASSERT_EQ(0, mkdir(at(t, self->dir, "r/real/deep"), 0700));
	ASSERT_EQ(0, close(open(at(t, self->dir, "r/real/deep/f"), O_CREAT | O_WRONLY, 0600)));
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		ASSERT_EQ(0, symlink(links[i][1] ? links[i][1] : at(u, self->dir, "r"),
				     at(t, self->dir, links[i][0])));
	ASSERT_EQ(0, policy_new(&p));
	ASSERT_EQ(0, policy_new(&q));
	int compared = 0;
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < na; i++) {
			const char *name = asked[round == 2 ? na - 1 - i : i];
			at(t, self->dir, name);
			ASSERT_EQ(0, realpath_reference(t, want));
			ASSERT_EQ(0, policy_resolve_existing(round == 2 ? q : p, t, got));
			EXPECT_STREQ(want, got) TH_LOG("%s (round %d)", name, round);
			compared++;
		}
	}
	EXPECT_EQ(3 * (int)na, compared);
	policy_free(p);
	policy_free(q);
	nftw(self->dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	mkdir(self->dir, 0700); /* for the teardown's rmdir */
}

/* A policy is built on its caller's stack (sandpit_start is a library
 * call: the caller may be a thread with a small stack).  A grant through a
 * chain of links is followed a link at a time; on a 64 KiB stack with an
 * inaccessible region below it (a step past its end is a SIGSEGV, never a
 * write into other memory), painted to see how deep it went */
#define STACK_PAINT 0xa5
#define STACK_GUARD (1024 * 1024)

struct chain_grant {
	char path[PATH_MAX];  /* granted: a link at the head of a chain */
	char alias[PATH_MAX]; /* realpath's answer for it, "" where it fails */
	char below[PATH_MAX]; /* path/x, asked of policy_resolve_existing */
	char got[PATH_MAX];
	int ran, grant_rc, resolve_rc, has_alias;
	size_t ngrants;
};

static void *grant_through_chain(void *arg)
{
	struct chain_grant *g = arg;
	struct policy *p;

	if (policy_new(&p) < 0)
		return NULL;
	g->grant_rc = policy_grant(p, g->path, 0, NULL, 0);
	g->ngrants = policy_ngrants(p);
	g->has_alias = g->alias[0] && has_grant(p, g->alias);
	g->resolve_rc = policy_resolve_existing(p, g->below, g->got);
	policy_free(p);
	g->ran = 1;
	return NULL;
}

static void *do_nothing(void *arg)
{
	return arg;
}

/* fn(arg) on a thread whose stack is `size` bytes, painted first; the
 * bytes it touched, counted from the top (glibc's thread block, kept at
 * the top of a stack it is given, included) */
static size_t on_small_stack(size_t size, void *(*fn)(void *), void *arg)
{
	char *m = mmap(NULL, STACK_GUARD + size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_attr_t attr;
	pthread_t t;
	size_t used = size;

	if (m == MAP_FAILED || mprotect(m, STACK_GUARD, PROT_NONE) < 0)
		abort();
	memset(m + STACK_GUARD, STACK_PAINT, size);
	if (pthread_attr_init(&attr) || pthread_attr_setstack(&attr, m + STACK_GUARD, size) ||
	    pthread_create(&t, &attr, fn, arg) || pthread_join(t, NULL))
		abort();
	pthread_attr_destroy(&attr);
	for (const unsigned char *c = (unsigned char *)m + STACK_GUARD; used && *c == STACK_PAINT;
	     c++)
		used--;
	munmap(m, STACK_GUARD + size);
	return used;
}

TEST(a_grant_through_forty_links_resolves_on_a_small_thread_stack)
{
	/* n0 -> d, n1 -> n0, ...: n0 is one link, n39 forty, n40 forty-one */
	static const int heads[] = { 0, 39, 40 };
	char dir[] = "/tmp/policy_stack.XXXXXX", real[PATH_MAX], t[PATH_MAX];
	struct chain_grant g;
	size_t used[3], size = 64 * 1024;
	long min = sysconf(_SC_THREAD_STACK_MIN);

	if (min > 0 && (size_t)min > size)
		size = (size_t)min;
	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_NE(NULL, realpath(dir, real));
	ASSERT_EQ(0, mkdir(at(t, real, "d"), 0700));
	for (int i = 0; i <= 40; i++) {
		char name[16], target[16];
		snprintf(name, sizeof(name), "n%d", i);
		snprintf(target, sizeof(target), i ? "n%d" : "d", i - 1);
		ASSERT_EQ(0, symlink(target, at(t, real, name)));
	}
	on_small_stack(size, do_nothing, NULL);
	size_t idle = on_small_stack(size, do_nothing, NULL);
	/* each twice, measured the second time: the first call of a function
	 * binds it (the dynamic linker's frame, a few KiB) */
	for (int k = 0; k < 6; k++) {
		int h = heads[k % 3];
		memset(&g, 0, sizeof(g));
		snprintf(t, sizeof(t), "n%d", h);
		at(g.path, real, t);
		at(g.below, g.path, "x");
		int rerr = realpath(g.path, g.alias) ? 0 : errno;
		if (rerr)
			g.alias[0] = 0;
		EXPECT_EQ(h < 40 ? 0 : ELOOP, rerr) TH_LOG("realpath of n%d", h);
		EXPECT_STREQ(h < 40 ? at(t, real, "d") : "", g.alias);
		used[k % 3] = on_small_stack(size, grant_through_chain, &g);
		ASSERT_EQ(1, g.ran);
		EXPECT_EQ(0, g.grant_rc);
		/* the link and, where realpath has an answer, that answer */
		EXPECT_EQ(h < 40 ? 2u : 1u, g.ngrants) TH_LOG("n%d", h);
		EXPECT_EQ(h < 40, g.has_alias) TH_LOG("n%d", h);
		ASSERT_EQ(0, g.resolve_rc);
		ASSERT_EQ(0, realpath_reference(g.below, t));
		EXPECT_STREQ(t, g.got);
		if (k >= 3)
			TH_LOG("n%d (%d links): %zu of %zu stack bytes, %zu for a thread that "
			       "does nothing", h, h + 1, used[k % 3], size, idle);
	}
	/* forty links take what one does: the same buffers, reused, not a
	 * frame a link (recursion took some 20 KiB a link) */
	EXPECT_GE(used[0] + 1024, used[1]);
	nftw(real, remove_one, 16, FTW_DEPTH | FTW_PHYS);
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

/* A name that is not there, with no link before it, is resolved from
 * openat2's ENOENT alone: no readlink per component (Python's imports and
 * ld.so's search ask mostly for such names).  Proved in a child whose
 * readlinks fail (EPERM, a seccomp filter): the shortcut's text comes
 * back, while a link on the way, a '..' or the walk alone still read
 * links there and so fail.  Both ways agree on each (resolve). */
TEST_F(tmpdir, a_missing_name_without_a_link_before_it_needs_no_readlink)
{
	char sub[PATH_MAX], rel[PATH_MAX], p[PATH_MAX], longname[NAME_MAX + 2];
	if (!kernel_has_openat2())
		SKIP(return, "no openat2");
	ASSERT_EQ(0, mkdir(at(sub, self->dir, "sub"), 0755));
	ASSERT_EQ(0, symlink("sub", at(rel, self->dir, "rel")));
	memset(longname, 'n', NAME_MAX + 1);
	longname[NAME_MAX + 1] = 0;

	ASSERT_EQ(0, resolve(self->dir, "sub/missing/x", 0, self->out));
	EXPECT_STREQ(at(p, self->dir, "sub/missing/x"), self->out);
	ASSERT_EQ(0, resolve(self->dir, "rel/missing", 0, self->out));
	EXPECT_STREQ(at(p, self->dir, "sub/missing"), self->out);
	EXPECT_EQ(-ENOENT, resolve(self->dir, "sub/missing/../x", 0, self->out));
	snprintf(p, sizeof(p), "sub/missing/%s", longname);
	EXPECT_EQ(-ENAMETOOLONG, resolve(self->dir, p, 0, self->out));

	pid_t c = fork();
	ASSERT_LE(0, c);
	if (c == 0) {
		scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
		if (!f || seccomp_rule_add(f, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(readlink), 0) ||
		    seccomp_rule_add(f, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(readlinkat), 0) ||
		    seccomp_load(f))
			_exit(100);
		char out[PATH_MAX], want[PATH_MAX];
		int bad = 0;
		at(want, self->dir, "sub/missing/x");
		/* the shortcut: the text, no readlink */
		if (path_resolve(getpid(), self->dir, "sub/missing/x", PATH_OPENAT2, out, sizeof(out)) ||
		    strcmp(out, want))
			bad |= 1;
		/* the walk alone reads links: refused here */
		if (path_resolve(getpid(), self->dir, "sub/missing/x", 0, out, sizeof(out)) != -EPERM)
			bad |= 2;
		/* a link on the way: openat2 says ELOOP, and the walk reads it */
		if (path_resolve(getpid(), self->dir, "rel/missing", PATH_OPENAT2, out, sizeof(out)) !=
		    -EPERM)
			bad |= 4;
		/* a '..': the walk decides */
		if (path_resolve(getpid(), self->dir, "sub/missing/../x", PATH_OPENAT2, out,
				 sizeof(out)) != -EPERM)
			bad |= 8;
		_exit(bad);
	}
	int st;
	ASSERT_EQ(c, waitpid(c, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	rmdir(sub);
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

TEST_HARNESS_MAIN
