/* `sandpit run`'s plan cache: a warm run patches what a cold one does, a
 * damaged, swapped, stale, poisoned or foreign cache file is refused, and
 * the sandboxed program can neither write nor read the cache. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "selftests/build_dir.h"
#include "selftests/run_util.h"
#include "selftests/sandbox_util.h"
#include "selftests/kernel_probe.h"
#include "compat/compat.h"
#include "user/patch/plan_file.h"


/* ---- the plan cache ---- */

FIXTURE(plan_cache) {
	char dir[64], cache[96];
};
FIXTURE_VARIANT(plan_cache) {
	const char *mode;
};
FIXTURE_VARIANT_ADD(plan_cache, strict) { .mode = "strict" };
FIXTURE_VARIANT_ADD(plan_cache, filter) { .mode = "filter" };

FIXTURE_SETUP(plan_cache)
{
	SKIP_FILTER_VARIANT_WITHOUT_FILTER(variant->mode);
	strcpy(self->dir, "/tmp/sandpit-plans-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->cache, sizeof self->cache, "%s/cache", self->dir);
	ASSERT_EQ(0, setenv("SANDPIT_PLAN_CACHE", self->cache, 1));
}

FIXTURE_TEARDOWN(plan_cache)
{
	char cmd[128];
	unsetenv("SANDPIT_PLAN_CACHE");
	snprintf(cmd, sizeof cmd, "rm -rf %s", self->dir);
	EXPECT_EQ(0, system(cmd));
}

/* `sandpit run` of argv with SANDPIT_DEBUG=1: its stderr (which the
 * program's own line "planned-ok" goes to as well) */
static char *plan_run(const char *mode, char *const argv[], int *status)
{
	struct result r;
	want_stderr = 1;
	if (sandboxed(mode, NULL, argv, NULL, NULL, "SANDPIT_DEBUG=1", &r))
		r.status = -1, r.len = 0;
	want_stderr = 0;
	*status = r.status;
	return result_text(&r);
}

/* The patcher's site lines, each as (object, offset from the object's
 * first site, what became of it): the same in any two runs that patch the
 * same sites, wherever ASLR put the objects. */
static char *site_list(const char *err)
{
	size_t cap = strlen(err) + 1, len = 0;
	char *out = calloc(1, cap + 1);
	unsigned long prev = 0, first = 0;
	unsigned group = 0;
	for (const char *l = err; (l = strstr(l, "sandpit: patcher: syscall at 0x")); l++) {
		char *end;
		unsigned long a = strtoul(l + 31, &end, 16);
		const char *nl = strchr(end, '\n');
		if (!prev || a < prev || a - prev > (64UL << 20))
			group++, first = a;
		prev = a;
		int n = snprintf(out + len, cap - len, "%u+%lx%.*s\n", group, a - first,
				 (int)(nl ? nl - end : (long)strlen(end)), end);
		if (n < 0 || (size_t)n >= cap - len)
			break;
		len += n;
	}
	return out;
}

static char *file_state(const char *path);

static char *plan_sh_argv[] = { "/bin/sh", "-c", "echo planned-ok >&2", NULL };

/* A cold run computes and writes every plan (the libc ld.so maps inside
 * the sandbox by the parent, afterwards); a warm one takes every plan from
 * the cache, verified, and patches exactly the same sites. */
TEST_F(plan_cache, warm_run_patches_the_same_sites_as_a_cold_one)
{
	int st;
	char *cold = plan_run(variant->mode, plan_sh_argv, &st);
	EXPECT_EQ(0, st);
	EXPECT_NE(NULL, strstr(cold, "planned-ok"));
	EXPECT_NE(NULL, strstr(cold, "libc.so.6: plan computed: named for the parent")) TH_LOG("%s", cold);
	EXPECT_EQ(0, count(cold, "from cache"));
	char *warm = plan_run(variant->mode, plan_sh_argv, &st);
	EXPECT_EQ(0, st);
	EXPECT_NE(NULL, strstr(warm, "planned-ok"));
	EXPECT_EQ(0, count(warm, "plan computed")) TH_LOG("%s", warm);
	EXPECT_EQ(0, count(warm, "cache refused"));
	/* ld.so, sh, libc */
	EXPECT_EQ(3, count(warm, "plan from cache (verified)")) TH_LOG("%s", warm);
	char *a = site_list(cold), *b = site_list(warm);
	EXPECT_LT(100, count(a, "\n"));
	EXPECT_STREQ(a, b);
	free(a), free(b), free(cold), free(warm);
}

/* The same for a stripped static program, which the patcher otherwise
 * decodes linearly (sandpit bench's bench_static_true). */
TEST_F(plan_cache, warm_run_of_a_stripped_static_program_patches_the_same_sites)
{
	char prog[PATH_MAX];
	int st;
	snprintf(prog, sizeof prog, "%s/bench_static_true", bindir);
	char *argv[] = { prog, NULL };
	struct stat sb;
	ASSERT_EQ(0, stat(prog, &sb));
	if (time(NULL) < sb.st_ctime + 3)
		sleep(3); /* just built: too new to cache */
	char *cold = plan_run(variant->mode, argv, &st);
	ASSERT_EQ(0, st) TH_LOG("%s", cold);
	EXPECT_NE(NULL, strstr(cold, "bench_static_true: plan computed")) TH_LOG("%s", cold);
	EXPECT_LT(50, count(cold, "(linear)"));
	char *warm = plan_run(variant->mode, argv, &st);
	EXPECT_EQ(0, st);
	EXPECT_NE(NULL, strstr(warm, "bench_static_true: plan from cache (verified)")) TH_LOG("%s", warm);
	EXPECT_EQ(0, count(warm, "plan computed"));
	char *a = site_list(cold), *b = site_list(warm);
	EXPECT_STREQ(a, b);
	free(a), free(b), free(cold), free(warm);
}

static void for_each_plan(struct __test_metadata *_metadata, const char *cache,
			  char names[][256], int *n)
{
	char cmd[PATH_MAX];
	snprintf(cmd, sizeof cmd, "ls %s/*.plan", cache);
	FILE *p = popen(cmd, "r");
	ASSERT_NE(NULL, p);
	*n = 0;
	while (*n < 8 && fgets(names[*n], 256, p))
		names[*n][strcspn(names[*n], "\n")] = 0, (*n)++;
	pclose(p);
}

/* Cache files whose bytes are flipped, cut short, swapped for another
 * object's, or made symbolic links, are refused whole: the program runs
 * as before, and the sites patched are the cold run's. */
TEST_F(plan_cache, damaged_swapped_or_linked_cache_files_are_refused)
{
	static const char *how[] = { "flip", "truncate", "swap", "symlink" };
	char names[8][256], cmd[2048];
	int st, n;
	char *cold = plan_run(variant->mode, plan_sh_argv, &st), *want = site_list(cold);
	ASSERT_EQ(0, st);
	for_each_plan(_metadata, self->cache, names, &n);
	ASSERT_EQ(3, n);
	for (size_t h = 0; h < sizeof how / sizeof how[0]; h++) {
		/* a warm cache again, then every plan file spoiled the same way */
		free(plan_run(variant->mode, plan_sh_argv, &st));
		for (int i = 0; i < n; i++) {
			const char *other = names[(i + 1) % n];
			if (!strcmp(how[h], "flip"))
				snprintf(cmd, sizeof cmd, "printf '\\377' | dd of=%.200s bs=1 seek=120 conv=notrunc status=none", names[i]);
			else if (!strcmp(how[h], "truncate"))
				snprintf(cmd, sizeof cmd, "truncate -s 100 %.200s", names[i]);
			else if (!strcmp(how[h], "swap"))
				snprintf(cmd, sizeof cmd, "cp %.200s %.200s.other", other, names[i]);
			else
				snprintf(cmd, sizeof cmd, "cp %.200s %.200s.copy && ln -sf %.200s.copy %.200s", names[i], names[i], names[i], names[i]);
			ASSERT_EQ(0, system(cmd));
		}
		if (!strcmp(how[h], "swap"))
			for (int i = 0; i < n; i++) {
				snprintf(cmd, sizeof cmd, "mv %.200s.other %.200s", names[i], names[i]);
				ASSERT_EQ(0, system(cmd));
			}
		char *err = plan_run(variant->mode, plan_sh_argv, &st), *got = site_list(err);
		EXPECT_EQ(0, st) TH_LOG("%.200s", how[h]);
		EXPECT_NE(NULL, strstr(err, "planned-ok"));
		EXPECT_EQ(0, count(err, "from cache")) TH_LOG("%.200s: %.200s", how[h], err);
		EXPECT_EQ(3, count(err, "cache refused")) TH_LOG("%.200s: %.200s", how[h], err);
		if (!strcmp(how[h], "symlink")) {
			EXPECT_EQ(3, count(err, "cache refused: its file is a symbolic link"));
		} else if (!strcmp(how[h], "swap")) {
			EXPECT_EQ(3, count(err, "cache refused: it is for another file"));
		}
		EXPECT_STREQ(want, got) TH_LOG("%.200s", how[h]);
		free(err), free(got);
		/* the refused files were replaced: a plain warm run again */
		snprintf(cmd, sizeof cmd, "rm -f %.200s/*.copy", self->cache);
		ASSERT_EQ(0, system(cmd));
	}
	free(cold), free(want);
}

/* A plan for a file that has changed since (same inode, same size, one
 * byte different, even with its mtime put back) is not used. */
TEST_F(plan_cache, plan_for_a_changed_file_is_not_used)
{
	char prog[PATH_MAX], cmd[2 * PATH_MAX];
	int st;
	snprintf(prog, sizeof prog, "%s/sh", self->dir);
	snprintf(cmd, sizeof cmd, "cp /bin/sh %s", prog);
	ASSERT_EQ(0, system(cmd));
	char *argv[] = { prog, "-c", "echo planned-ok >&2", NULL };
	/* a file changed less than 2 s ago is planned but not cached */
	char *err = plan_run(variant->mode, argv, &st);
	EXPECT_EQ(0, st);
	EXPECT_NE(NULL, strstr(err, "cache not written: the file changed too recently")) TH_LOG("%s", err);
	free(err);
	sleep(3);
	free(plan_run(variant->mode, argv, &st));
	ASSERT_EQ(0, st);
	char *warm = plan_run(variant->mode, argv, &st);
	ASSERT_EQ(0, count(warm, "plan computed")) TH_LOG("%s", warm);
	free(warm);
	struct stat before, after;
	ASSERT_EQ(0, stat(prog, &before));
	/* the last byte: section headers, which nothing maps */
	int fd = open(prog, O_RDWR);
	ASSERT_LE(0, fd);
	unsigned char c;
	ASSERT_EQ(1, pread(fd, &c, 1, before.st_size - 1));
	c ^= 0x40;
	ASSERT_EQ(1, pwrite(fd, &c, 1, before.st_size - 1));
	struct timespec t[2] = { before.st_atim, before.st_mtim };
	ASSERT_EQ(0, futimens(fd, t));
	close(fd);
	ASSERT_EQ(0, stat(prog, &after));
	ASSERT_EQ(before.st_size, after.st_size);
	ASSERT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
	err = plan_run(variant->mode, argv, &st);
	EXPECT_EQ(0, st);
	EXPECT_NE(NULL, strstr(err, "planned-ok"));
	char want[PATH_MAX + 64];
	snprintf(want, sizeof want, "%s: cache refused: it is for another file, or the file has changed", prog);
	EXPECT_NE(NULL, strstr(err, want)) TH_LOG("%s", err);
	snprintf(want, sizeof want, "%s: plan computed", prog);
	EXPECT_NE(NULL, strstr(err, want));
	snprintf(want, sizeof want, "%s: plan from cache", prog);
	EXPECT_EQ(NULL, strstr(err, want));
	free(err);
}

/* A cache directory that is not the user's alone (group- or
 * world-writable, or another user's) is neither read nor written. */
TEST_F(plan_cache, directory_not_ours_alone_is_not_used)
{
	int st;
	char cmd[PATH_MAX];
	free(plan_run(variant->mode, plan_sh_argv, &st));
	ASSERT_EQ(0, st);
	for (int k = 0; k < 3; k++) {
		if (k == 2 && geteuid() != 0)
			break; /* only root can give it to another user */
		ASSERT_EQ(0, chmod(self->cache, k == 0 ? 0777 : k == 1 ? 0770 : 0700));
		if (k == 2)
			ASSERT_EQ(0, chown(self->cache, 65534, 65534));
		snprintf(cmd, sizeof cmd, "rm -f %s/*.needs", self->cache);
		ASSERT_EQ(0, system(cmd));
		char *err = plan_run(variant->mode, plan_sh_argv, &st);
		EXPECT_EQ(0, st);
		EXPECT_NE(NULL, strstr(err, "planned-ok"));
		EXPECT_EQ(0, count(err, "from cache")) TH_LOG("%d: %s", k, err);
		/* root has dropped its capabilities by the time it patches: another
		 * user's 0700 directory cannot even be opened then */
		if (k < 2) {
			EXPECT_LE(2, count(err, "the cache directory is not ours alone")) TH_LOG("%d: %s", k, err);
		}
		EXPECT_EQ(3, count(err, "plan computed")) TH_LOG("%d: %s", k, err);
		free(err);
		/* nothing was written there */
		snprintf(cmd, sizeof cmd, "test -z \"$(ls %s | grep needs)\"", self->cache);
		EXPECT_EQ(0, system(cmd));
	}
	ASSERT_EQ(0, chown(self->cache, geteuid(), getegid()));
	ASSERT_EQ(0, chmod(self->cache, 0700));
}

/* The list of what a program needs keeps every library a run used, not
 * only those it had to plan: python importing one extension, then another,
 * then the first again finds every plan in the cache the third time (the
 * list had lost libc and the first extension), and the parent plans
 * nothing the child took from the cache. */
TEST_F(plan_cache, every_library_a_run_used_stays_in_the_programs_list)
{
	char *json[] = { "/usr/bin/python3", "-S", "-c", "import _json", NULL };
	char *bz2[] = { "/usr/bin/python3", "-S", "-c", "import _bz2", NULL };
	int st;
	free(plan_run(variant->mode, json, &st));
	ASSERT_EQ(0, st);
	char *err = plan_run(variant->mode, bz2, &st);
	ASSERT_EQ(0, st);
	EXPECT_NE(NULL, strstr(err, "_bz2.cpython-311-x86_64-linux-gnu.so: plan computed")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "libc.so.6: plan from cache (verified)")) TH_LOG("%s", err);
	free(err);
	err = plan_run(variant->mode, json, &st);
	EXPECT_EQ(0, st);
	EXPECT_EQ(0, count(err, "plan computed")) TH_LOG("%s", err);
	EXPECT_EQ(0, count(err, "cache refused")) TH_LOG("%s", err);
	/* ld.so, python, libc, libm, libexpat, libz and _json: once each, in
	 * the child; the parent verified nothing again */
	EXPECT_EQ(1, count(err, "_json.cpython-311-x86_64-linux-gnu.so: plan from cache (verified)")) TH_LOG("%s", err);
	EXPECT_EQ(1, count(err, "libc.so.6: plan from cache (verified)")) TH_LOG("%s", err);
	free(err);
}

/* the one list (*.needs) in the cache: its state (file_state), or "" */
static char *needs_state(struct __test_metadata *_metadata, const char *cache)
{
	char cmd[PATH_MAX], name[PATH_MAX] = "";
	snprintf(cmd, sizeof cmd, "ls %s/*.needs 2>/dev/null", cache);
	FILE *p = popen(cmd, "r");
	EXPECT_NE(NULL, p);
	if (p && fgets(name, sizeof name, p))
		name[strcspn(name, "\n")] = 0;
	EXPECT_EQ(NULL, p ? fgets(cmd, sizeof cmd, p) : NULL) TH_LOG("more than one list");
	if (p)
		pclose(p);
	return file_state(name);
}

/* A run whose every library was on its list, in the list's order, each
 * plan taken from what the child preloaded, leaves the list as it is (the
 * parent opens nothing); one that needed another library rewrites it. */
TEST_F(plan_cache, a_run_that_needed_what_its_list_says_leaves_the_list_alone)
{
	char *json[] = { "/usr/bin/python3", "-S", "-c", "import _json", NULL };
	char *bz2[] = { "/usr/bin/python3", "-S", "-c", "import _bz2", NULL };
	int st;
	free(plan_run(variant->mode, json, &st)); /* cold: the list made */
	ASSERT_EQ(0, st);
	free(plan_run(variant->mode, json, &st)); /* warm: every plan preloaded */
	ASSERT_EQ(0, st);
	char *before = needs_state(_metadata, self->cache);
	ASSERT_NE(0, before[0]);
	char *err = plan_run(variant->mode, json, &st);
	ASSERT_EQ(0, st);
	EXPECT_EQ(0, count(err, "plan computed")) TH_LOG("%s", err);
	char *after = needs_state(_metadata, self->cache);
	EXPECT_STREQ(before, after);
	free(err), free(after);
	/* another library: the list is written again, with it */
	err = plan_run(variant->mode, bz2, &st);
	ASSERT_EQ(0, st);
	after = needs_state(_metadata, self->cache);
	EXPECT_STRNE(before, after);
	EXPECT_NE(NULL, strstr(after, "_bz2.cpython-311-x86_64-linux-gnu.so")) TH_LOG("%s", after);
	free(err), free(before), free(after);
}

/* The sandboxed program cannot write the cache: no grant reaches it, and
 * what is there after a run is what sandpit wrote (plans and lists). */
TEST_F(plan_cache, the_sandbox_cannot_write_the_cache)
{
	int st;
	char cmd[PATH_MAX], script[PATH_MAX];
	free(plan_run(variant->mode, plan_sh_argv, &st));
	ASSERT_EQ(0, st);
	char names[8][256];
	int n;
	for_each_plan(_metadata, self->cache, names, &n);
	ASSERT_EQ(3, n);
	snprintf(script, sizeof script,
		 "echo x > %.200s/evil.plan || echo refused >&2; for f in %.200s %.200s %.200s; do echo x >> $f || echo refused >&2; done",
		 self->cache, names[0], names[1], names[2]);
	char *argv[] = { "/bin/sh", "-c", script, NULL };
	char *err = plan_run(variant->mode, argv, &st);
	EXPECT_EQ(4, count(err, "refused\n")) TH_LOG("%s", err);
	free(err);
	snprintf(cmd, sizeof cmd, "test ! -e %s/evil.plan", self->cache);
	EXPECT_EQ(0, system(cmd));
	/* and every plan there is still whole: a warm run uses them all */
	err = plan_run(variant->mode, plan_sh_argv, &st);
	EXPECT_EQ(3, count(err, "plan from cache (verified)")) TH_LOG("%s", err);
	free(err);
	snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s | grep -v -e '\\.plan$' -e '\\.needs$')\"", self->cache);
	EXPECT_EQ(0, system(cmd));
}

/* The cache as a program would find it that may write all of HOME (an
 * ordinary --allow-write): HOME is a directory of the test's, the cache
 * is the default one under it.  The fixture's SANDPIT_PLAN_CACHE and the
 * caller's XDG_CACHE_HOME go (each test runs in a process of its own). */
static void home_cache(struct __test_metadata *_metadata, const char *dir, char *home,
		       size_t n, char *cache, size_t m)
{
	snprintf(home, n, "%s/home", dir);
	snprintf(cache, m, "%s/.cache/sandpit/plans", home);
	ASSERT_EQ(0, mkdir(home, 0700));
	ASSERT_EQ(0, setenv("HOME", home, 1));
	unsetenv("XDG_CACHE_HOME");
	unsetenv("SANDPIT_PLAN_CACHE");
}

/* what a cache file is: its inode, size, times and bytes */
static char *file_state(const char *path)
{
	struct stat st;
	char *out = calloc(1, PLAN_MAX_FILE + 256);
	int fd = open(path, O_RDONLY), n = 0;
	if (fd >= 0 && !fstat(fd, &st)) {
		n = snprintf(out, 256, "%lu %ld %ld.%ld %o\n", (unsigned long)st.st_ino, (long)st.st_size,
			     (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_mode);
		ssize_t r = read(fd, out + n, PLAN_MAX_FILE);
		for (ssize_t i = 0; i < r; i++) /* bytes as text: compared with strcmp */
			out[n + i] = out[n + i] ? out[n + i] : '.';
	}
	if (fd >= 0)
		close(fd);
	return out;
}

/* The attacker has --allow-write=HOME: it tries to write, create, rename,
 * unlink, link, symlink over and read the cache's directory and a plan,
 * directly, through a link of its own, and from a descriptor of .cache.
 * Every attempt reaches B and is refused with EACCES (a deny beats every
 * grant, on the resolved path), and the plans are as sandpit wrote them. */
TEST_F(plan_cache, a_program_that_may_write_home_can_neither_change_nor_read_the_cache)
{
	static const char *const kinds[] = { "attack_dyn", "attack_static" };
	char home[128], cache[192], grant[160], prog[PATH_MAX + 32], path[512];
	char names[8][256];
	int st, n;
	if (!suite_has_openat2())
		SKIP(return, "write grants need openat2");
	home_cache(_metadata, self->dir, home, sizeof home, cache, sizeof cache);
	snprintf(grant, sizeof grant, "--allow-write=%s", home);
	free(plan_run(variant->mode, plan_sh_argv, &st));
	ASSERT_EQ(0, st);
	for_each_plan(_metadata, cache, names, &n);
	ASSERT_EQ(3, n);
	char *before[3];
	for (int i = 0; i < 3; i++)
		before[i] = file_state(names[i]);
	for (int k = 0; k < 2; k++) {
		struct result r;
		const char *extra[] = { grant, NULL };
		snprintf(prog, sizeof prog, "%s/selftests/%s", bindir, kinds[k]);
		char *argv[] = { prog, "plan-cache", cache, strrchr(names[k], '/') + 1, NULL };
		snprintf(path, sizeof path, "%s/alias", home);
		unlink(path);
		ASSERT_EQ(0, sandboxed(variant->mode, extra, argv, NULL, NULL, NULL, &r));
		result_text(&r);
		int tries = count(r.out, "plan-cache: "), refused = count(r.out, ": EACCES\n");
		EXPECT_EQ(0, r.status) TH_LOG("%s: %s", kinds[k], r.out);
		ASSERT_LT(0, tries) TH_LOG("%s: %s", kinds[k], r.out);
		EXPECT_EQ(21, tries) TH_LOG("%s: %s", kinds[k], r.out);
		EXPECT_EQ(tries, refused) TH_LOG("%s: %s", kinds[k], r.out);
		free(r.out);
	}
	for (int i = 0; i < 3; i++) {
		char *now = file_state(names[i]);
		EXPECT_STREQ(before[i], now) TH_LOG("%s", names[i]);
		free(now), free(before[i]);
	}
	static const char *const never[] = { "%s/.cache/sandpit/plans/new.plan",
					     "%s/.cache/sandpit/moved", "%s/.cache/sandpit/plans" };
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof path, never[i], home);
		EXPECT_EQ(i == 2 ? 0 : -1, access(path, F_OK)) TH_LOG("%s", path);
	}
	/* and a warm run takes every plan, whole */
	char *err = plan_run(variant->mode, plan_sh_argv, &st);
	EXPECT_EQ(0, st);
	EXPECT_EQ(3, count(err, "plan from cache (verified)")) TH_LOG("%s", err);
	free(err);
}

/* Before sandpit has made the cache's directory (the cache off for this
 * run, HOME without .cache), the program cannot make it, or a link in
 * its place; and a link or a directory another may write, planted there
 * from outside (as an older sandpit let a program do), is not used: no
 * plan is read or written through it. */
TEST_F(plan_cache, the_cache_directory_is_made_by_sandpit_alone_and_never_through_a_link)
{
	char home[128], cache[192], grant[160], prog[PATH_MAX + 32], path[512], cmd[2048];
	int st;
	if (!suite_has_openat2())
		SKIP(return, "write grants need openat2");
	/* a cache of good plans elsewhere, to plant */
	free(plan_run(variant->mode, plan_sh_argv, &st));
	ASSERT_EQ(0, st);
	home_cache(_metadata, self->dir, home, sizeof home, cache, sizeof cache);
	ASSERT_EQ(0, setenv("SANDPIT_PLAN_CACHE", "off", 1));
	snprintf(grant, sizeof grant, "--allow-write=%s", home);
	snprintf(prog, sizeof prog, "%s/selftests/attack_dyn", bindir);
	char *argv[] = { prog, "plan-cache-make", home, NULL };
	const char *extra[] = { grant, NULL };
	struct result r;
	ASSERT_EQ(0, sandboxed(variant->mode, extra, argv, NULL, NULL, NULL, &r));
	result_text(&r);
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.out);
	ASSERT_LT(0, count(r.out, "plan-cache: ")) TH_LOG("%s", r.out);
	EXPECT_EQ(3, count(r.out, "plan-cache: ")) TH_LOG("%s", r.out);
	EXPECT_EQ(3, count(r.out, ": EACCES\n")) TH_LOG("%s", r.out);
	free(r.out);
	snprintf(path, sizeof path, "%s/.cache", home);
	EXPECT_EQ(-1, access(path, F_OK));
	unsetenv("SANDPIT_PLAN_CACHE");
	/* sandpit/ a link; plans/ a link; sandpit/ writable by the group */
	static const char *const plant[] = {
		"mkdir -p %1$s/.cache %1$s/elsewhere && cp -a %2$s %1$s/elsewhere/plans && chmod 700 %1$s/elsewhere && ln -s %1$s/elsewhere %1$s/.cache/sandpit",
		"rm %1$s/.cache/sandpit && mkdir -m 700 %1$s/.cache/sandpit && ln -s %1$s/elsewhere/plans %1$s/.cache/sandpit/plans",
		"rm %1$s/.cache/sandpit/plans && mv %1$s/elsewhere/plans %1$s/.cache/sandpit/plans && chmod 770 %1$s/.cache/sandpit",
	};
	static const char *const why[] = { "the cache directory is a symbolic link",
					   "the cache directory is a symbolic link",
					   "the cache directory is not ours alone" };
	for (int i = 0; i < 3; i++) {
		snprintf(cmd, sizeof cmd, plant[i], home, self->cache);
		ASSERT_EQ(0, system(cmd)) TH_LOG("%s", cmd);
		snprintf(cmd, sizeof cmd, "ls -A %s/elsewhere/plans %s/.cache/sandpit/plans 2>/dev/null | wc -l > %s/count.%d",
			 home, home, self->dir, i);
		ASSERT_EQ(0, system(cmd));
		char *err = plan_run(variant->mode, plan_sh_argv, &st);
		EXPECT_EQ(0, st);
		EXPECT_NE(NULL, strstr(err, "planned-ok"));
		EXPECT_LE(1, count(err, why[i])) TH_LOG("%d: %s", i, err);
		EXPECT_EQ(0, count(err, "from cache")) TH_LOG("%d: %s", i, err);
		free(err);
		/* nothing written there either */
		snprintf(cmd, sizeof cmd, "ls -A %s/elsewhere/plans %s/.cache/sandpit/plans 2>/dev/null | wc -l | cmp -s - %s/count.%d",
			 home, home, self->dir, i);
		EXPECT_EQ(0, system(cmd)) TH_LOG("%d", i);
	}
}

/* Rewrites the plan file `name` as an attacker who could write the cache
 * would (an older sandpit let a program with --allow-write=$HOME): the
 * same key, a valid checksum, and each record
 *   "native":    left unpatched, as if no window fitted,
 *   "sigreturn": left native, as an rt_sigreturn,
 *   "none":      gone (every syscall left out),
 *   "number":    its window kept, its number one the filter allows
 *                (getppid), so that filter mode would leave it native.
 * *had: how many records it had. */
static void poison_plan(struct __test_metadata *_metadata, const char *name, const char *how,
			unsigned *had)
{
	static uint8_t buf[PLAN_MAX_FILE], out[PLAN_MAX_FILE];
	static const uint8_t syscall_bytes[2] = { 0x0f, 0x05 };
	struct plan_file f;
	struct plan_rec r;
	const char *why;
	int fd = open(name, O_RDWR);
	ASSERT_LE(0, fd);
	ssize_t n = read(fd, buf, sizeof buf);
	ASSERT_LT(0, n);
	ASSERT_EQ(0, plan_file_parse(buf, (size_t)n, &f, &why)) TH_LOG("%s: %s", name, why);
	*had = f.n_rec;
	uint8_t *p = plan_file_begin(out, &f.key, strcmp(how, "none") ? f.n_rec : 0);
	for (const uint8_t *pos = f.rec; strcmp(how, "none") && plan_file_next(&f, &pos, &r);) {
		struct plan_rec w = r;
		if (!strcmp(how, "number")) {
			if (r.status == PLAN_FIT)
				w.nr = 110; /* getppid */
		} else {
			w = (struct plan_rec){ .off = r.off, .nr = strcmp(how, "sigreturn") ? r.nr : 15,
					       .after = 2, .method = r.method, .bytes = syscall_bytes,
					       .status = strcmp(how, "sigreturn") ? PLAN_SKIP_OTHER
										 : PLAN_NATIVE_SIGRETURN };
		}
		p = plan_file_put(p, &w);
	}
	p = plan_file_end(out, p);
	ASSERT_EQ(0, plan_file_parse(out, (size_t)(p - out), &f, &why)) TH_LOG("%s", why);
	ASSERT_EQ(p - out, pwrite(fd, out, (size_t)(p - out), 0));
	ASSERT_EQ(0, ftruncate(fd, p - out));
	close(fd);
}

/* A plan rewritten with a valid checksum to leave every site native (or
 * to leave them all out, or to give them numbers the filter allows) is
 * checked against the code it describes and refused, in every mode: the
 * program runs as it does natively, patched as on a cold run, in strict
 * mode too, where the sites left native would have killed it. */
TEST_F(plan_cache, a_plan_poisoned_to_leave_every_site_native_is_refused)
{
	static const char *const how[] = { "native", "sigreturn", "none", "number" };
	static const char *const why[] = { "cache refused: a site it leaves unpatched is one the planner patches",
					   "cache refused: a site it leaves native is no rt_sigreturn",
					   "cache refused: it leaves out a syscall of the code",
					   "cache refused: a site it leaves native has another number" };
	char names[8][256];
	int st, n;
	char *cold = plan_run(variant->mode, plan_sh_argv, &st), *want = site_list(cold);
	ASSERT_EQ(0, st);
	for_each_plan(_metadata, self->cache, names, &n);
	ASSERT_EQ(3, n);
	for (size_t h = 0; h < sizeof how / sizeof how[0]; h++) {
		unsigned had, with_sites = 0;
		for (int i = 0; i < n; i++) {
			poison_plan(_metadata, names[i], how[h], &had);
			with_sites += had > 0;
		}
		/* ld.so and libc (sh makes no system call of its own) */
		ASSERT_EQ(2u, with_sites);
		char *err = plan_run(variant->mode, plan_sh_argv, &st), *got = site_list(err);
		EXPECT_EQ(0, st) TH_LOG("%s: %s", how[h], err);
		EXPECT_NE(NULL, strstr(err, "planned-ok")) TH_LOG("%s", how[h]);
		EXPECT_STREQ(want, got) TH_LOG("%s", how[h]);
		/* ld.so's refused by sandpit_start, libc's inside the sandbox and
		 * again by the parent before it plans libc afresh; sh's kept */
		char ld[256], libc[256];
		snprintf(ld, sizeof ld, "ld-linux-x86-64.so.2: %s", why[h]);
		snprintf(libc, sizeof libc, "libc.so.6: %s", why[h]);
		EXPECT_EQ(1, count(err, ld)) TH_LOG("%s: %s", how[h], err);
		EXPECT_LE(1, count(err, libc)) TH_LOG("%s: %s", how[h], err);
		EXPECT_EQ(count(err, "cache refused"), count(err, why[h])) TH_LOG("%s: %s", how[h], err);
		EXPECT_EQ(1, count(err, "plan from cache (verified)")) TH_LOG("%s: %s", how[h], err);
		free(err), free(got);
	}
	/* each refused plan was replaced by a good one */
	char *err = plan_run(variant->mode, plan_sh_argv, &st);
	EXPECT_EQ(0, st);
	EXPECT_EQ(3, count(err, "plan from cache (verified)")) TH_LOG("%s", err);
	free(err), free(cold), free(want);
}

TEST_HARNESS_MAIN
