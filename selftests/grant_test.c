/* A write grant is a working directory: the namespace calls the
 * trusted process makes inside one (mkdir, rmdir, unlink, rename, link,
 * symlink, truncate, chmod, utimensat, mknod of a FIFO, O_TMPFILE) answer
 * as natively, errors included; outside the grants they are refused with
 * nothing made, where a read grant lets the path be seen with the kernel's
 * own answer; and no directory swapped for a symlink (or renamed away)
 * during a call leads it out of the grant. */
#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "swap_race.h"
#include "u_state.h"

#define NRES 64

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

/* write grants need openat2; a forced legacy kernel has none (sandpit_start
 * refuses them: api_write_grant_refused_without_openat2) */
#define NEED_OPENAT2()                                        \
	do {                                                  \
		if (!suite_has_openat2())                     \
			SKIP(return, "write grants need openat2"); \
	} while (0)

/* Shared with the sandboxed child. */
struct box {
	char grant[64], grant2[64], outside[64];
	long res[NRES]; /* each call's result, or -errno */
	int n;
};

static void note(struct box *b, long r)
{
	if (b->n < NRES)
		b->res[b->n++] = r < 0 ? -errno : r;
}
#define R(call) note(b, (long)(call))

static void make_dir(struct __test_metadata *_metadata, char *tmpl)
{
	ASSERT_NE(NULL, mkdtemp(tmpl));
}

static void rm_rf(const char *d)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", d);
}

/* fn natively in one directory, and sandboxed in another that is a write
 * grant: the same results, call by call, and the same tree after. */
static void same_as_native(struct __test_metadata *_metadata, int (*fn)(void *))
{
	struct box *nat = shared_page(sizeof(*nat)), *box = shared_page(sizeof(*box));
	ASSERT_NE(NULL, nat);
	ASSERT_NE(NULL, box);
	strcpy(nat->grant, "/tmp/sandpit-native-XXXXXX");
	strcpy(box->grant, "/tmp/sandpit-grant-XXXXXX");
	make_dir(_metadata, nat->grant);
	make_dir(_metadata, box->grant);
	pid_t p = fork();
	ASSERT_LE(0, p);
	if (p == 0)
		_exit(fn(nat));
	int st;
	ASSERT_EQ(p, waitpid(p, &st, 0));
	ASSERT_EQ(0, outcome(st));
	const char *w[] = { box->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	EXPECT_EQ(0, outcome(run_sandboxed_opts(fn, box, &o, 60)));
	EXPECT_EQ(nat->n, box->n);
	for (int i = 0; i < nat->n && i < box->n; i++) {
		long want = nat->res[i], got = box->res[i];
		EXPECT_EQ(want, got) TH_LOG("call %d: native %ld, sandboxed %ld", i, want, got);
	}
	static char a[16384], s[16384];
	a[0] = s[0] = '\0';
	tree_signature(nat->grant, "", a, sizeof(a));
	tree_signature(box->grant, "", s, sizeof(s));
	EXPECT_STREQ(a, s);
	EXPECT_LT(4, box->n);
	rm_rf(nat->grant);
	rm_rf(box->grant);
}

/* a box shared with the sandboxed child, and its write grant made */
static struct box *grant_box(struct __test_metadata *_metadata)
{
	struct box *box = shared_page(sizeof(*box));
	if (box) {
		strcpy(box->grant, "/tmp/sandpit-grant-XXXXXX");
		make_dir(_metadata, box->grant);
	}
	return box;
}

static int in_dir(struct box *b)
{
	return chdir(b->grant);
}

static int make(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	int r = write(fd, "data\n", 5) == 5 ? 0 : -1;
	close(fd);
	return r;
}

static int ops_mkdir_rmdir(void *a)
{
	struct box *b = a;
	if (in_dir(b))
		return 1;
	umask(027);
	R(mkdir("d", 0777));
	R(mkdir("d", 0777));        /* EEXIST */
	R(mkdir("d/", 0777));       /* EEXIST */
	R(mkdir("x/y", 0777));      /* ENOENT */
	R(mkdir("d/e", 01777));
	R(rmdir("d"));              /* ENOTEMPTY */
	R(rmdir("d/e"));
	R(rmdir("nothing"));        /* ENOENT */
	R(make("f"));
	R(mkdir("f/x", 0777));      /* ENOTDIR */
	R(rmdir("f"));              /* ENOTDIR */
	R(rmdir("d/."));            /* EINVAL */
	int dfd = open("d", O_RDONLY | O_DIRECTORY);
	R(mkdirat(dfd, "m", 0700));
	R(unlinkat(dfd, "m", AT_REMOVEDIR));
	R(mkdirat(dfd, "n", 0755));
	close(dfd);
	return 0;
}

TEST(mkdir_rmdir_inside_a_write_grant_answer_as_natively)
{
	NEED_OPENAT2();
	same_as_native(_metadata, ops_mkdir_rmdir);
}

/* A trailing slash asks for a directory: the opens and stats B checks
 * answer as the kernel does (CPython's test_shutil found B dropping it, so
 * that open("nx/", O_CREAT) made a file "nx" instead of failing EISDIR). */
static int ops_trailing_slash(void *a)
{
	struct box *b = a;
	struct stat st;
	if (in_dir(b))
		return 1;
	int fd = open("nx/", O_CREAT | O_WRONLY | O_TRUNC, 0644); /* EISDIR */
	R(fd < 0 ? fd : 0);
	R(make("f"));
	R(mkdir("d", 0755));
	R(symlink("d", "ld"));
	R(symlink("f", "lf"));
	fd = open("f/", O_RDONLY);                                 /* ENOTDIR */
	R(fd < 0 ? fd : 0);
	fd = open("lf/", O_WRONLY | O_CREAT, 0644);                /* EISDIR */
	R(fd < 0 ? fd : 0);
	R(stat("f/", &st));                                        /* ENOTDIR */
	R(lstat("lf/", &st));                                      /* ENOTDIR */
	R(access("f/", F_OK));                                     /* ENOTDIR */
	R(stat("d/", &st));
	R(lstat("ld/", &st));
	R(S_ISDIR(st.st_mode));
	fd = open("ld/", O_RDONLY | O_DIRECTORY);
	R(fd < 0 ? fd : 0);
	if (fd >= 0)
		close(fd);
	return 0;
}

TEST(opens_and_stats_with_a_trailing_slash_answer_as_natively)
{
	NEED_OPENAT2();
	same_as_native(_metadata, ops_trailing_slash);
}

static int ops_unlink_rename(void *a)
{
	struct box *b = a;
	if (in_dir(b))
		return 1;
	R(make("f"));
	R(make("g"));
	R(mkdir("d", 0755));
	R(rename("f", "h"));
	R(rename("f", "i"));                                          /* ENOENT */
	R(syscall(SYS_renameat2, AT_FDCWD, "h", AT_FDCWD, "g", RENAME_NOREPLACE)); /* EEXIST */
	R(truncate("h", 1));
	R(syscall(SYS_renameat2, AT_FDCWD, "h", AT_FDCWD, "g", RENAME_EXCHANGE));
	R(syscall(SYS_renameat2, AT_FDCWD, "g", AT_FDCWD, "d/g", RENAME_NOREPLACE));
	R(rename("d", "d/e"));                                        /* EINVAL */
	R(rename("h", "d"));                                          /* EISDIR */
	R(renameat(AT_FDCWD, "d", AT_FDCWD, "e"));
	R(unlink("e/g"));
	R(unlink("e/g"));                                             /* ENOENT */
	R(unlink("e"));                                               /* EISDIR */
	R(unlinkat(AT_FDCWD, "e", AT_REMOVEDIR));
	R(unlink("h/"));                                              /* ENOTDIR */
	return 0;
}

TEST(unlink_rename_inside_a_write_grant_answer_as_natively)
{
	NEED_OPENAT2();
	same_as_native(_metadata, ops_unlink_rename);
}

static int ops_links(void *a)
{
	struct box *b = a;
	char buf[64];
	if (in_dir(b))
		return 1;
	R(make("f"));
	R(symlink("only text, never followed", "s"));
	R(symlink("f", "s"));                       /* EEXIST */
	R(symlink("f", "t"));
	R(readlink("t", buf, sizeof(buf)));
	R(link("f", "l"));
	R(link("f", "l"));                          /* EEXIST */
	R(link("t", "lt"));                         /* the symlink itself */
	R(linkat(AT_FDCWD, "t", AT_FDCWD, "lf", AT_SYMLINK_FOLLOW));
	R(link("nothing", "x"));                    /* ENOENT */
	R(symlinkat("f", AT_FDCWD, "u"));
	R(unlink("t"));
	struct stat st;
	R(stat("f", &st));
	R(st.st_nlink);
	return 0;
}

TEST(symlink_link_inside_a_write_grant_answer_as_natively)
{
	NEED_OPENAT2();
	same_as_native(_metadata, ops_links);
}

static int ops_attrs(void *a)
{
	struct box *b = a;
	struct stat st;
	if (in_dir(b))
		return 1;
	umask(022);
	R(make("f"));
	R(mkdir("d", 0755));
	R(symlink("f", "s"));
	R(truncate("f", 100));
	R(truncate("s", 3));                        /* through the link */
	R(truncate("d", 0));                        /* EISDIR */
	R(truncate("f", -1));                       /* EINVAL */
	R(chmod("f", 0640));
	R(chmod("s", 0600));                        /* through the link */
	R(fchmodat(AT_FDCWD, "d", 0700, 0));
	R(chmod("nothing", 0600));                  /* ENOENT */
	struct timespec ts[2] = { { 1000000000, 0 }, { 1200000000, 500 } };
	R(utimensat(AT_FDCWD, "f", ts, 0));
	R(stat("f", &st));
	R(st.st_mtim.tv_sec);
	R(st.st_mtim.tv_nsec);
	ts[1].tv_sec = 1300000000;
	R(utimensat(AT_FDCWD, "s", ts, AT_SYMLINK_NOFOLLOW)); /* the link itself */
	R(lstat("s", &st));
	R(st.st_mtim.tv_sec);
	int fd = open("f", O_WRONLY);
	ts[1].tv_sec = 1400000000;
	R(futimens(fd, ts));
	close(fd);
	R(stat("f", &st));
	R(st.st_mtim.tv_sec);
	R(utimensat(AT_FDCWD, "f", NULL, 0));       /* touch: now */
	R(mknod("p", S_IFIFO | 0666, 0));
	R(mkfifo("p", 0600));                       /* EEXIST */
	R(mknod("r0", 0, 0));                       /* type 0: a regular file */
	R(mknod("r1", S_IFREG | 0640, 0));
	R(mknod("r0", 0644, 0));                    /* EEXIST */
	R(mknodat(AT_FDCWD, "r2", 0600, 0));
	fd = open(".", O_TMPFILE | O_RDWR, 0600);
	R(fd >= 0 ? 0 : -1);
	R(write(fd, "tmp", 3));
	close(fd);
	return 0;
}

TEST(truncate_chmod_utimensat_mknod_tmpfile_inside_a_write_grant_answer_as_natively)
{
	NEED_OPENAT2();
	same_as_native(_metadata, ops_attrs);
}

/* What a grant never lets U do, whatever the kernel would. */
static int ops_never(void *a)
{
	struct box *b = a;
	if (in_dir(b))
		return 1;
	R(make("f"));
	R(chmod("f", 04755));                              /* EPERM: set-uid */
	R(chmod("f", 02755));                              /* EPERM: set-gid */
	R(mknod("c", S_IFCHR | 0666, makedev(1, 3)));      /* EPERM: a device */
	R(mknod("r", S_IFBLK | 0666, makedev(7, 0)));      /* EPERM: a device */
	return 0;
}


TEST(set_id_bits_and_devices_refused_inside_a_write_grant)
{
	NEED_OPENAT2();
	struct box *box = grant_box(_metadata);
	ASSERT_NE(NULL, box);
	const char *w[] = { box->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(ops_never, box, &o, 60)));
	ASSERT_EQ(5, box->n);
	EXPECT_EQ(0, box->res[0]);
	EXPECT_EQ(-EPERM, box->res[1]);
	EXPECT_EQ(-EPERM, box->res[2]);
	EXPECT_EQ(-EPERM, box->res[3]);
	EXPECT_EQ(-EPERM, box->res[4]);
	char f[128], c[128], r[128];
	struct stat st;
	snprintf(f, sizeof(f), "%s/f", box->grant);
	snprintf(c, sizeof(c), "%s/c", box->grant);
	snprintf(r, sizeof(r), "%s/r", box->grant);
	ASSERT_EQ(0, stat(f, &st));
	EXPECT_EQ(0644u, st.st_mode & 07777);
	EXPECT_EQ(-1, lstat(c, &st));
	EXPECT_EQ(-1, lstat(r, &st));
	rm_rf(box->grant);
}


/* chmod refuses set-id bits; a name made with them in its mode must not
 * get them either.  Caps are dropped, so a write after would clear them,
 * but an empty set-uid file stays: whoever fills it later with
 * CAP_FSETID (root's cp, a build step outside the sandbox) keeps the bit. */
static const char *const made_names[] = { "o", "oat", "n", "n0", "sg", "t" };

static int ops_made_set_id(void *a)
{
	struct box *b = a;
	if (in_dir(b))
		return 1;
	umask(0);
	int fd;
	R(fd = open("o", O_CREAT | O_WRONLY | O_EXCL, 04755));
	close(fd);
	R(fd = openat(AT_FDCWD, "oat", O_CREAT | O_RDWR | O_EXCL, 06755));
	close(fd);
	R(mknod("n", S_IFREG | 04755, 0));
	R(mknod("n0", 06755, 0)); /* type 0: a regular file */
	R(fd = open("sg", O_CREAT | O_WRONLY | O_EXCL, 02775));
	close(fd);
	/* an unnamed file: its mode, as fstat reads it, then linked in */
	fd = open(".", O_TMPFILE | O_WRONLY, 04755);
	R(fd);
	struct stat st;
	R(fd >= 0 && fstat(fd, &st) == 0 ? (long)(st.st_mode & 07777) : -1);
	close(fd);
	return 0;
}

TEST(set_id_bits_never_come_with_a_name_made_inside_a_write_grant)
{
	NEED_OPENAT2();
	struct box *box = grant_box(_metadata);
	ASSERT_NE(NULL, box);
	const char *w[] = { box->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(ops_made_set_id, box, &o, 60)));
	/* every attempt was made */
	ASSERT_EQ(7, box->n);
	for (int i = 0; i < 5; i++) {
		char p[128];
		struct stat st;
		snprintf(p, sizeof(p), "%s/%s", box->grant, made_names[i]);
		/* refused as chmod is (EPERM, nothing made), or made without them */
		if (box->res[i] < 0) {
			EXPECT_EQ(-EPERM, box->res[i]) TH_LOG("%s", made_names[i]);
			EXPECT_EQ(-1, lstat(p, &st)) TH_LOG("%s made", made_names[i]);
		} else {
			ASSERT_EQ(0, lstat(p, &st)) TH_LOG("%s", made_names[i]);
			EXPECT_EQ(0u, st.st_mode & (S_ISUID | S_ISGID))
			TH_LOG("%s made with mode %o", made_names[i], st.st_mode & 07777);
		}
	}
	if (box->res[5] < 0) {
		EXPECT_EQ(-EPERM, box->res[5]);
	} else {
		EXPECT_EQ(0, box->res[6] & (S_ISUID | S_ISGID))
		TH_LOG("O_TMPFILE made with mode %lo", box->res[6]);
	}
	rm_rf(box->grant);
}
/* Outside the write grants: a path under a read grant gets the kernel's
 * answer where it does not depend on permission, else EACCES, and nothing
 * is made, removed or changed; a path under no grant is EACCES even where
 * it exists. */
static int ops_outside(void *a)
{
	struct box *b = a;
	char p[192], q[192];
#define AT(buf, dir, name) (snprintf(buf, sizeof(buf), "%s/%s", dir, name), buf)
	R(mkdir(AT(p, b->outside, "d"), 0755));                  /* EEXIST */
	R(mkdir(AT(p, b->outside, "new"), 0755));                /* EACCES */
	R(mkdir(AT(p, b->outside, "x/y"), 0755));                /* ENOENT */
	R(unlink(AT(p, b->outside, "f")));                       /* EACCES */
	R(unlink(AT(p, b->outside, "nothing")));                 /* ENOENT */
	R(rmdir(AT(p, b->outside, "d")));                        /* EACCES */
	R(rename(AT(p, b->outside, "f"), AT(q, b->grant, "f"))); /* EACCES */
	R(rename(AT(p, b->grant, "g"), AT(q, b->outside, "g"))); /* EACCES */
	R(link(AT(p, b->outside, "f"), AT(q, b->grant, "l")));   /* EACCES */
	R(symlink("x", AT(p, b->outside, "s")));                 /* EACCES */
	R(symlink("x", AT(p, b->outside, "f")));                 /* EEXIST */
	R(truncate(AT(p, b->outside, "f"), 0));                  /* EACCES */
	R(chmod(AT(p, b->outside, "f"), 0777));                  /* EACCES */
	R(utimensat(AT_FDCWD, AT(p, b->outside, "f"), NULL, 0)); /* EACCES */
	R(mkfifo(AT(p, b->outside, "p"), 0666));                 /* EACCES */
	R(mkdir("/tmp", 0755));                                  /* EACCES: not seen */
	R(mkdir(b->grant, 0755));                                /* EEXIST: the grant */
	int fd = open(AT(p, b->outside, "f"), O_RDONLY);
	R(futimens(fd, NULL));                                   /* EACCES: read only */
	close(fd);
	return 0;
}

TEST(outside_the_write_grants_refused_and_nothing_made)
{
	NEED_OPENAT2();
	struct box *box = grant_box(_metadata);
	ASSERT_NE(NULL, box);
	strcpy(box->outside, "/tmp/sandpit-outside-XXXXXX");
	make_dir(_metadata, box->outside);
	char p[192];
	ASSERT_EQ(0, mkdir(AT(p, box->outside, "d"), 0755));
	ASSERT_EQ(0, make(AT(p, box->outside, "f")));
	ASSERT_EQ(0, make(AT(p, box->grant, "g")));
	struct stat before, after;
	ASSERT_EQ(0, stat(AT(p, box->outside, "f"), &before));
	static char sig_before[4096], sig_after[4096];
	sig_before[0] = sig_after[0] = '\0';
	tree_signature(box->outside, "", sig_before, sizeof(sig_before));
	const char *w[] = { box->grant, NULL }, *r[] = { box->outside, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w, .allow_read = r };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(ops_outside, box, &o, 60)));
	static const long want[] = { -EEXIST, -EACCES, -ENOENT, -EACCES, -ENOENT, -EACCES,
				     -EACCES, -EACCES, -EACCES, -EACCES, -EEXIST, -EACCES,
				     -EACCES, -EACCES, -EACCES, -EACCES, -EEXIST, -EACCES };
	ASSERT_EQ((int)(sizeof(want) / sizeof(want[0])), box->n);
	for (int i = 0; i < box->n; i++) {
		int call = i;
		EXPECT_EQ(want[call], box->res[call]) TH_LOG("call %d", call);
	}
	tree_signature(box->outside, "", sig_after, sizeof(sig_after));
	EXPECT_STREQ(sig_before, sig_after);
	ASSERT_EQ(0, stat(AT(p, box->outside, "f"), &after));
	EXPECT_EQ(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
	EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
	EXPECT_EQ(0, access(AT(p, box->grant, "g"), F_OK)); /* not moved out */
	rm_rf(box->grant);
	rm_rf(box->outside);
}

static int ops_across(void *a)
{
	struct box *b = a;
	char p[192], q[192];
	R(rename(AT(p, b->grant, "f"), AT(q, b->grant2, "f")));  /* EXDEV */
	R(link(AT(p, b->grant, "f"), AT(q, b->grant2, "l")));    /* EXDEV */
	R(rename(AT(p, b->grant, "f"), AT(q, b->grant, "g")));   /* 0: one grant */
	return 0;
}

TEST(rename_and_link_across_write_grants_answer_exdev)
{
	NEED_OPENAT2();
	struct box *box = grant_box(_metadata);
	ASSERT_NE(NULL, box);
	strcpy(box->grant2, "/tmp/sandpit-grant2-XXXXXX");
	make_dir(_metadata, box->grant2);
	char p[192];
	ASSERT_EQ(0, make(AT(p, box->grant, "f")));
	const char *w[] = { box->grant, box->grant2, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(ops_across, box, &o, 60)));
	ASSERT_EQ(3, box->n);
	EXPECT_EQ(-EXDEV, box->res[0]);
	EXPECT_EQ(-EXDEV, box->res[1]);
	EXPECT_EQ(0, box->res[2]);
	EXPECT_EQ(-1, access(AT(p, box->grant2, "f"), F_OK));
	EXPECT_EQ(-1, access(AT(p, box->grant2, "l"), F_OK));
	rm_rf(box->grant);
	rm_rf(box->grant2);
}

/* A read grant lets U read what describes a file, as natively: statfs,
 * getxattr, lgetxattr, listxattr, llistxattr, readlink; outside the grants
 * they are EACCES. */
static int ops_read(void *a)
{
	struct box *b = a;
	char p[192], buf[256];
	struct statfs sfs;
	R(statfs(AT(p, b->grant, "f"), &sfs));
	R(sfs.f_type);
	R(getxattr(AT(p, b->grant, "f"), "user.sandpit", buf, sizeof(buf)));
	R(getxattr(AT(p, b->grant, "f"), "user.sandpit", NULL, 0));
	R(getxattr(AT(p, b->grant, "f"), "user.none", buf, sizeof(buf)));
	R(lgetxattr(AT(p, b->grant, "s"), "user.sandpit", buf, sizeof(buf)));
	R(listxattr(AT(p, b->grant, "f"), buf, sizeof(buf)));
	R(llistxattr(AT(p, b->grant, "s"), buf, sizeof(buf)));
	R(readlink(AT(p, b->grant, "s"), buf, sizeof(buf)));
	return 0;
}

TEST(read_grants_allow_statfs_xattrs_and_readlink_as_natively)
{
	struct box *nat = shared_page(sizeof(*nat)), *box = shared_page(sizeof(*box));
	ASSERT_NE(NULL, nat);
	ASSERT_NE(NULL, box);
	strcpy(box->grant, "/tmp/sandpit-read-XXXXXX");
	make_dir(_metadata, box->grant);
	strcpy(nat->grant, box->grant);
	char p[192];
	ASSERT_EQ(0, make(AT(p, box->grant, "f")));
	setxattr(p, "user.sandpit", "value", 5, 0); /* where the file system has them */
	ASSERT_EQ(0, symlink("f", AT(p, box->grant, "s")));
	ASSERT_EQ(0, ops_read(nat));
	const char *r[] = { box->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = r };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(ops_read, box, &o, 60)));
	ASSERT_EQ(nat->n, box->n);
	for (int i = 0; i < nat->n; i++) {
		long want = nat->res[i], got = box->res[i];
		EXPECT_EQ(want, got) TH_LOG("call %d", i);
	}
	/* and outside every grant */
	box->n = 0;
	struct sandpit_options none = { .mode = suite_mode() };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(ops_read, box, &none, 60)));
	EXPECT_EQ(-EACCES, box->res[0]);
	EXPECT_EQ(-EACCES, box->res[2]);
	EXPECT_EQ(-EACCES, box->res[6]);
	EXPECT_EQ(-EACCES, box->res[8]);
	rm_rf(box->grant);
}

/* ---------------------------------------------- a grant's own root */

/* The review's attack: the program empties its write grant G, removes G
 * and puts a symlink to OUTSIDE in its place, so that the next run given
 * the same --allow-write=G writes into OUTSIDE; or renames G away, or
 * something onto it.  A grant's root is never U's: each of these is
 * refused, and G stays the directory it was (same inode). */
static int ops_root(void *a)
{
	struct box *b = a;
	char p[192], q[192];
	R(unlink(AT(p, b->grant, "f")));                                   /* 0: emptied */
	R(rmdir(AT(p, b->grant, "x")));                                    /* 0 */
	R(rmdir(b->grant));                                                /* EACCES */
	R(symlink(b->outside, b->grant));                                  /* EEXIST */
	R(rename(b->grant, AT(p, b->grant2, "moved")));                    /* EACCES */
	R(rename(AT(p, b->grant2, "y"), b->grant));                        /* EACCES */
	R(syscall(SYS_renameat2, AT_FDCWD, AT(p, b->grant2, "y"), AT_FDCWD, b->grant,
		  RENAME_EXCHANGE));                                         /* EACCES */
	R(mkdir(b->grant, 0755));                                          /* EEXIST */
	R(mknod(b->grant, S_IFIFO | 0600, 0));                             /* EEXIST */
	R(link(AT(p, b->grant2, "g"), b->grant));                          /* EEXIST */
	R(chdir(b->grant));                                                /* 0 */
	snprintf(q, sizeof(q), "../%s", strrchr(b->grant, '/') + 1);
	R(rmdir(q));                                                       /* EACCES */
	R(rmdir("."));                                                     /* EINVAL */
	R(unlinkat(AT_FDCWD, b->grant, AT_REMOVEDIR));                     /* EACCES */
	R(symlink(b->outside, b->grant2));                                 /* EEXIST */
	R(rmdir(b->grant2));                                               /* EACCES */
	return 0;
}

TEST(a_write_grants_root_is_never_removed_renamed_or_replaced)
{
	NEED_OPENAT2();
	struct box *box = grant_box(_metadata);
	ASSERT_NE(NULL, box);
	strcpy(box->grant2, "/tmp/sandpit-grant2-XXXXXX");
	strcpy(box->outside, "/tmp/sandpit-outside-XXXXXX");
	make_dir(_metadata, box->grant2);
	make_dir(_metadata, box->outside);
	char p[192];
	ASSERT_EQ(0, make(AT(p, box->grant, "f")));
	ASSERT_EQ(0, mkdir(AT(p, box->grant, "x"), 0755));
	ASSERT_EQ(0, mkdir(AT(p, box->grant2, "y"), 0755));
	ASSERT_EQ(0, make(AT(p, box->grant2, "g")));
	struct stat before, after;
	ASSERT_EQ(0, lstat(box->grant, &before));
	const char *w[] = { box->grant, box->grant2, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(ops_root, box, &o, 60)));
	static const long want[] = { 0,       0,       -EACCES, -EEXIST, -EACCES, -EACCES,
				     -EACCES, -EEXIST, -EEXIST, -EEXIST, 0,       -EACCES,
				     -EINVAL, -EACCES, -EEXIST, -EACCES };
	ASSERT_EQ((int)(sizeof(want) / sizeof(want[0])), box->n); /* every attempt made */
	for (int i = 0; i < box->n; i++) {
		EXPECT_EQ(want[i], box->res[i]) TH_LOG("call %d", i);
	}
	ASSERT_EQ(0, lstat(box->grant, &after));
	EXPECT_TRUE(S_ISDIR(after.st_mode));
	EXPECT_EQ(before.st_ino, after.st_ino);
	EXPECT_EQ(before.st_dev, after.st_dev);
	EXPECT_EQ(0, access(AT(p, box->grant2, "y"), F_OK));
	EXPECT_EQ(-1, access(AT(p, box->grant2, "moved"), F_OK));
	char sig[1024] = "";
	tree_signature(box->outside, "", sig, sizeof(sig));
	EXPECT_STREQ("", sig);
	rm_rf(box->grant);
	rm_rf(box->grant2);
	rm_rf(box->outside);
}

/* Grants inside a write grant A: A/B/C written, A/R a file read.  Their
 * roots and the directories above them (A/B) are not A's to remove,
 * rename, exchange or replace; below them, and elsewhere in A, names
 * change as before. */
static int ops_nested(void *a)
{
	struct box *b = a;
	char p[192], q[192];
	R(mkdir(AT(p, b->grant, "D"), 0755));                               /* 0 */
	R(rename(AT(p, b->grant, "B/C"), AT(q, b->grant, "D/C")));         /* EACCES */
	R(rmdir(AT(p, b->grant, "B/C")));                                   /* EACCES */
	R(rename(AT(p, b->grant, "B"), AT(q, b->grant, "E")));             /* EACCES */
	R(rmdir(AT(p, b->grant, "B")));                                     /* EACCES */
	R(rename(AT(p, b->grant, "D"), AT(q, b->grant, "B/C")));           /* EACCES */
	R(syscall(SYS_renameat2, AT_FDCWD, AT(p, b->grant, "D"), AT_FDCWD, AT(q, b->grant, "B"),
		  RENAME_EXCHANGE));                                          /* EACCES */
	R(symlink(b->outside, AT(p, b->grant, "B/C")));                    /* EEXIST */
	R(unlink(AT(p, b->grant, "R")));                                    /* EACCES */
	R(rename(AT(p, b->grant, "R"), AT(q, b->grant, "R2")));            /* EACCES */
	R(link(AT(p, b->grant, "R"), AT(q, b->grant, "R3")));              /* EACCES */
	R(rename(AT(p, b->grant, "D"), AT(q, b->grant, "F")));             /* 0 */
	R(mkdir(AT(p, b->grant, "B/C/n"), 0755));                           /* 0 */
	R(rename(AT(p, b->grant, "B/C/n"), AT(q, b->grant, "B/m")));       /* 0 */
	return 0;
}

TEST(roots_of_grants_inside_a_write_grant_and_the_directories_above_them_stay)
{
	NEED_OPENAT2();
	struct box *box = grant_box(_metadata);
	ASSERT_NE(NULL, box);
	strcpy(box->outside, "/tmp/sandpit-outside-XXXXXX");
	make_dir(_metadata, box->outside);
	char ab[192], abc[192], ar[192], p[192];
	ASSERT_EQ(0, mkdir(AT(ab, box->grant, "B"), 0755));
	ASSERT_EQ(0, mkdir(AT(abc, box->grant, "B/C"), 0755));
	ASSERT_EQ(0, make(AT(ar, box->grant, "R")));
	struct stat b0, c0, r0, st;
	ASSERT_EQ(0, lstat(ab, &b0));
	ASSERT_EQ(0, lstat(abc, &c0));
	ASSERT_EQ(0, lstat(ar, &r0));
	const char *w[] = { box->grant, abc, NULL }, *r[] = { ar, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w, .allow_read = r };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(ops_nested, box, &o, 60)));
	static const long want[] = { 0,       -EACCES, -EACCES, -EACCES, -EACCES, -EACCES, -EACCES,
				     -EEXIST, -EACCES, -EACCES, -EACCES, 0,       0,       0 };
	ASSERT_EQ((int)(sizeof(want) / sizeof(want[0])), box->n);
	for (int i = 0; i < box->n; i++) {
		EXPECT_EQ(want[i], box->res[i]) TH_LOG("call %d", i);
	}
	ASSERT_EQ(0, lstat(ab, &st));
	EXPECT_EQ(b0.st_ino, st.st_ino);
	ASSERT_EQ(0, lstat(abc, &st));
	EXPECT_EQ(c0.st_ino, st.st_ino);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	ASSERT_EQ(0, lstat(ar, &st));
	EXPECT_EQ(r0.st_ino, st.st_ino);
	EXPECT_EQ(1u, (unsigned)st.st_nlink);
	EXPECT_EQ(0, access(AT(p, box->grant, "F"), F_OK));
	EXPECT_EQ(0, access(AT(p, box->grant, "B/m"), F_OK));
	EXPECT_EQ(-1, access(AT(p, box->grant, "E"), F_OK));
	EXPECT_EQ(-1, access(AT(p, box->grant, "R2"), F_OK));
	rm_rf(box->grant);
	rm_rf(box->outside);
}

/* The next run: a write grant whose path goes through a symlink (one the
 * program could have left) is refused before anything is applied, the
 * message naming where it leads; from a policy file too, in every mode.
 * A read grant through one is kept (and also grants the target). */
struct started {
	long r, r2;
	int seccomp, mode;
	char err[512], err2[512];
	int n;
	long res[4];
};

static int start_and_tell(struct started *s, const struct sandpit_options *o)
{
	s->r = sandpit_start(o);
	snprintf(s->err, sizeof(s->err), "%s", sandpit_error());
	s->seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	s->mode = sandpit_mode();
	return 0;
}

static void start_told_in_child(struct __test_metadata *_metadata, struct started *s,
			   const struct sandpit_options *o)
{
	memset(s, 0, sizeof(*s));
	fflush(NULL);
	pid_t c = fork();
	ASSERT_LE(0, c);
	if (c == 0)
		_exit(start_and_tell(s, o));
	int st;
	ASSERT_EQ(c, waitpid(c, &st, 0));
	ASSERT_EQ(0, outcome(st));
}

extern const char sandpit_default_policy[];
extern const uint64_t sandpit_default_policy_len;

/* dir/name: the default policy's text and then `lines` */
static void policy_with(struct __test_metadata *_metadata, char *out, size_t n, const char *dir,
			const char *name, const char *lines)
{
	snprintf(out, n, "%s/%s", dir, name);
	FILE *f = fopen(out, "w");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1u, fwrite(sandpit_default_policy, sandpit_default_policy_len, 1, f));
	fprintf(f, "\n%s", lines);
	ASSERT_EQ(0, fclose(f));
}

/* A descriptor of a file inside a write grant may be chmod-ed as its path
 * (B checks the file the descriptor holds), and never to a set-id bit */
static int ops_fchmod_set_id(void *a)
{
	struct box *b = a;
	if (in_dir(b))
		return 1;
	R(make("f"));
	int fd = open("f", O_RDONLY);
	R(fd);
	R(fchmod(fd, 04755));
	R(fchmod(fd, 02711));
	R(fchmod(fd, 0600));
	close(fd);
	return 0;
}

TEST(fchmod_in_a_write_grant_gives_the_mode_but_no_set_id_bit)
{
	NEED_OPENAT2();
	struct box *box = grant_box(_metadata);
	ASSERT_NE(NULL, box);
	const char *w[] = { box->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(ops_fchmod_set_id, box, &o, 60)));
	ASSERT_EQ(5, box->n);
	EXPECT_EQ(-EPERM, box->res[2]);
	EXPECT_EQ(-EPERM, box->res[3]);
	EXPECT_EQ(0, box->res[4]);
	char f[160];
	struct stat st;
	ASSERT_EQ(0, stat(AT(f, box->grant, "f"), &st));
	EXPECT_EQ(0600u, st.st_mode & 07777);
	rm_rf(box->grant);
}

static int read_through_link(void *a)
{
	struct box *b = a;
	char p[192];
	int fd = open(AT(p, b->grant, "f"), O_RDONLY);
	R(fd < 0 ? -1 : 0);
	close(fd);
	return 0;
}

TEST(a_write_grant_through_a_symlink_is_refused_naming_where_it_leads)
{
	struct started *s = shared_page(sizeof(*s));
	struct box *box = shared_page(sizeof(*box));
	ASSERT_NE(NULL, s);
	ASSERT_NE(NULL, box);
	char dir[] = "/tmp/sandpit-link-XXXXXX", real[96], link[96], dangling[96], nowhere[96];
	char file[160], lines[400], p[192];
	make_dir(_metadata, dir);
	snprintf(real, sizeof(real), "%s/real", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(dangling, sizeof(dangling), "%s/dangling", dir);
	snprintf(nowhere, sizeof(nowhere), "%s/nowhere", dir);
	ASSERT_EQ(0, mkdir(real, 0755));
	ASSERT_EQ(0, make(AT(p, real, "f")));
	ASSERT_EQ(0, symlink(real, link));
	ASSERT_EQ(0, symlink(nowhere, dangling));
	int attempts = 0;

	/* --allow-write: before openat2 is asked about, the link is named */
	const char *w[] = { link, NULL }, *wd[] = { dangling, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	start_told_in_child(_metadata, s, &o);
	attempts++;
	if (suite_has_openat2()) {
		EXPECT_EQ(-ELOOP, s->r);
		EXPECT_NE(NULL, strstr(s->err, real)) TH_LOG("%s", s->err);
		EXPECT_NE(NULL, strstr(s->err, "symbolic link")) TH_LOG("%s", s->err);
	} else {
		EXPECT_EQ(-EOPNOTSUPP, s->r); /* no write grant at all without openat2 */
	}
	EXPECT_EQ(NULL, strchr(s->err, '\n'));
	EXPECT_EQ(0, s->seccomp); /* nothing applied */
	EXPECT_EQ(SANDPIT_MODE_NONE, s->mode);
	o.allow_write = wd;
	start_told_in_child(_metadata, s, &o);
	attempts++;
	if (suite_has_openat2()) {
		EXPECT_EQ(-ELOOP, s->r);
		EXPECT_NE(NULL, strstr(s->err, nowhere)) TH_LOG("%s", s->err);
	}
	EXPECT_EQ(0, s->seccomp);

	/* from a policy file: its line, and where the link leads */
	snprintf(lines, sizeof(lines), "path write %s\n", link);
	policy_with(_metadata, file, sizeof(file), dir, "link.policy", lines);
	struct sandpit_options of = { .mode = suite_mode(), .policy_file = file };
	start_told_in_child(_metadata, s, &of);
	attempts++;
	EXPECT_GT(0, s->r);
	EXPECT_NE(NULL, strstr(s->err, file)) TH_LOG("%s", s->err);
	EXPECT_NE(NULL, strstr(s->err, real)) TH_LOG("%s", s->err);
	EXPECT_EQ(0, s->seccomp);
	EXPECT_EQ(SANDPIT_MODE_NONE, s->mode);
	EXPECT_EQ(3, attempts);
	EXPECT_EQ(-1, access(AT(p, nowhere, ""), F_OK));

	/* a read grant through it: kept, and it reads what the link leads to */
	strcpy(box->grant, link);
	const char *r[] = { link, NULL };
	struct sandpit_options or = { .mode = suite_mode(), .allow_read = r };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(read_through_link, box, &or, 60)));
	ASSERT_EQ(1, box->n);
	EXPECT_EQ(0, box->res[0]);
	rm_rf(dir);
}

/* ------------------------------------ a file grant is its data only */

/* A file grant (`path write F`, --allow-write=F, the default policy's
 * /dev/null) lets U write the file, never set its mode, owner, times,
 * attributes or size: for /dev/null as root these are the whole machine's.
 * Every such call is EACCES and the file is as it was; opening for writing
 * (O_TRUNC included: a shell's `> /dev/null`) and writing still work.  The
 * real /dev/null is asked only what would change nothing if let through
 * (its own mode, no size, UTIME_OMIT both). */
struct meta {
	char dir[64], f[96], data[96], node[96];
	mode_t null_mode;
	long res[NRES];
	int n;
};
#define M(call) (m->n < NRES ? (void)(m->res[m->n++] = (call) < 0 ? -errno : 0) : (void)0)

static void meta_calls(struct meta *m, const char *path, int is_node)
{
	struct timespec ts[2] = { { 1000000000, 0 }, { 1100000000, 0 } };
	M(chmod(path, 0600));
	M(fchmodat(AT_FDCWD, path, 0600, 0));
	M(syscall(SYS_fchmodat2, AT_FDCWD, path, 0600, 0));
	M(utimensat(AT_FDCWD, path, ts, 0));
	M(utimensat(AT_FDCWD, path, NULL, 0));
	M(truncate(path, 0));
	M(syscall(SYS_chown, path, getuid(), getgid()));
	M(syscall(SYS_lchown, path, -1, -1));
	M(syscall(SYS_fchownat, AT_FDCWD, path, -1, -1, 0));
	M(syscall(SYS_utimes, path, NULL));
	M(syscall(SYS_utime, path, NULL));
	M(syscall(SYS_futimesat, AT_FDCWD, path, NULL));
	M(setxattr(path, "user.sandpit", "v", 1, 0));
	M(lsetxattr(path, "user.sandpit", "v", 1, 0));
	M(removexattr(path, "user.sandpit"));
	int fd = open(path, O_WRONLY | (is_node ? O_TRUNC : 0));
	M(fd);
	M(futimens(fd, ts));
	M(fchmod(fd, 0600));
	M(fchown(fd, -1, -1));
	M(fsetxattr(fd, "user.sandpit", "v", 1, 0));
	M(write(fd, "gone", 4) == 4 ? 0 : -1);
	close(fd);
}
#define META_CALLS 21
/* what meta_calls answers: EACCES, but for the opens and writes */
static long meta_want(int i)
{
	return i == 15 || i == 20 ? 0 : -EACCES;
}

static int ops_file_grant(void *a)
{
	struct meta *m = a;
	struct timespec omit[2] = { { 0, UTIME_OMIT }, { 0, UTIME_OMIT } };
	meta_calls(m, m->f, 0);
	if (m->node[0])
		meta_calls(m, m->node, 1);
	int fd = open(m->data, O_WRONLY | O_TRUNC);
	M(fd);
	M(write(fd, "new\n", 4) == 4 ? 0 : -1);
	close(fd);
	M(chmod("/dev/null", m->null_mode));
	M(truncate("/dev/null", 0));
	M(utimensat(AT_FDCWD, "/dev/null", omit, 0));
	M(syscall(SYS_chown, "/dev/null", -1, -1));
	fd = open("/dev/null", O_WRONLY | O_TRUNC);
	M(fd);
	M(write(fd, "x", 1) == 1 ? 0 : -1);
	close(fd);
	return 0;
}

static void expect_same_meta(struct __test_metadata *_metadata, const char *path,
			     const struct stat *a)
{
	struct stat b;
	char v[8];
	ASSERT_EQ(0, lstat(path, &b));
	EXPECT_EQ(a->st_ino, b.st_ino);
	EXPECT_EQ(a->st_mode, b.st_mode) TH_LOG("%s", path);
	EXPECT_EQ(a->st_uid, b.st_uid);
	EXPECT_EQ(a->st_gid, b.st_gid);
	EXPECT_EQ(a->st_rdev, b.st_rdev);
	EXPECT_EQ(a->st_mtim.tv_sec, b.st_mtim.tv_sec) TH_LOG("%s", path);
	EXPECT_EQ(a->st_mtim.tv_nsec, b.st_mtim.tv_nsec);
	EXPECT_EQ(a->st_atim.tv_sec, b.st_atim.tv_sec) TH_LOG("%s", path);
	EXPECT_EQ(a->st_atim.tv_nsec, b.st_atim.tv_nsec);
	EXPECT_EQ(a->st_ctim.tv_sec, b.st_ctim.tv_sec) TH_LOG("%s", path);
	EXPECT_EQ(a->st_ctim.tv_nsec, b.st_ctim.tv_nsec);
	EXPECT_EQ(a->st_size, b.st_size);
	EXPECT_EQ(-1, lgetxattr(path, "user.sandpit", v, sizeof(v)));
}

/* a file with fixed times, well in the past */
static void make_dated(struct __test_metadata *_metadata, const char *path, const char *text)
{
	struct timespec ts[2] = { { 900000000, 0 }, { 900000000, 0 } };
	ASSERT_EQ(0, make(path));
	if (text) {
		int fd = open(path, O_WRONLY | O_TRUNC);
		ASSERT_LE(0, fd);
		ASSERT_EQ((ssize_t)strlen(text), write(fd, text, strlen(text)));
		close(fd);
	}
	ASSERT_EQ(0, chmod(path, 0644));
	ASSERT_EQ(0, utimensat(AT_FDCWD, path, ts, 0));
}

TEST(a_file_grant_gives_the_files_data_never_its_metadata)
{
	struct meta *m = shared_page(sizeof(*m));
	ASSERT_NE(NULL, m);
	strcpy(m->dir, "/tmp/sandpit-meta-XXXXXX");
	make_dir(_metadata, m->dir);
	snprintf(m->f, sizeof(m->f), "%s/f", m->dir);
	snprintf(m->data, sizeof(m->data), "%s/data", m->dir);
	make_dated(_metadata, m->f, "data\n");
	make_dated(_metadata, m->data, "old data\n");
	/* a scratch null device stands in for /dev/null, so that a broken
	 * build changes nothing of the machine's: made outside the sandbox,
	 * which takes root */
	if (mknod(AT(m->node, m->dir, "null"), S_IFCHR | 0666, makedev(1, 3)) == 0) {
		ASSERT_EQ(0, chmod(m->node, 0666));
	} else {
		m->node[0] = '\0';
	}
	struct stat f0, n0, null0;
	ASSERT_EQ(0, lstat(m->f, &f0));
	if (m->node[0]) {
		ASSERT_EQ(0, lstat(m->node, &n0));
	}
	ASSERT_EQ(0, stat("/dev/null", &null0));
	m->null_mode = null0.st_mode & 07777;
	char file[160], lines[400];
	snprintf(lines, sizeof(lines), "path write %s\npath write %s\n%s%s%s", m->f, m->data,
		 m->node[0] ? "path write " : "", m->node, m->node[0] ? "\n" : "");
	policy_with(_metadata, file, sizeof(file), m->dir, "file.policy", lines);
	struct sandpit_options o = { .mode = suite_mode(), .policy_file = file };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(ops_file_grant, m, &o, 60)));
	int calls = META_CALLS * (m->node[0] ? 2 : 1);
	ASSERT_EQ(calls + 2 + 6, m->n); /* every attempt made */
	for (int i = 0; i < calls; i++) {
		EXPECT_EQ(meta_want(i % META_CALLS), m->res[i]) TH_LOG("call %d", i);
	}
	static const long tail[] = { 0, 0, -EACCES, -EACCES, -EACCES, -EACCES, 0, 0 };
	for (int i = 0; i < 8; i++) {
		EXPECT_EQ(tail[i], m->res[calls + i]) TH_LOG("call %d", calls + i);
	}
	/* the regular file: written (times), nothing else */
	struct stat st;
	ASSERT_EQ(0, lstat(m->f, &st));
	EXPECT_EQ(f0.st_mode, st.st_mode);
	EXPECT_EQ(f0.st_uid, st.st_uid);
	EXPECT_EQ(f0.st_size, st.st_size); /* "data\n" written over: "gone\n" */
	EXPECT_EQ(f0.st_atim.tv_sec, st.st_atim.tv_sec);
	EXPECT_EQ(-1, lgetxattr(m->f, "user.sandpit", lines, sizeof(lines)));
	if (m->node[0])
		expect_same_meta(_metadata, m->node, &n0);
	else
		TH_LOG("not root: no device node to grant (mknod needs CAP_MKNOD)");
	struct stat null1;
	ASSERT_EQ(0, stat("/dev/null", &null1));
	EXPECT_EQ(null0.st_mode, null1.st_mode);
	EXPECT_EQ(null0.st_uid, null1.st_uid);
	ASSERT_EQ(0, lstat(m->data, &st));
	EXPECT_EQ(4, st.st_size); /* "new\n": opened with O_TRUNC and written */
	rm_rf(m->dir);
}

/* Strictly below a directory grant metadata is U's, as natively, but never
 * a device node's (whichever directory holds it: a grant of /dev would
 * hold /dev/sda), nor the grant's own root's. */
static int ops_dir_device(void *a)
{
	struct meta *m = a;
	struct timespec ts[2] = { { 1000000000, 0 }, { 1100000000, 0 } };
	M(chmod(m->node, 0600));                                    /* EACCES */
	M(fchmodat(AT_FDCWD, m->node, 0600, AT_SYMLINK_NOFOLLOW));  /* EACCES */
	M(utimensat(AT_FDCWD, m->node, ts, 0));                     /* EACCES */
	M(utimensat(AT_FDCWD, m->node, NULL, AT_SYMLINK_NOFOLLOW)); /* EACCES */
	M(truncate(m->node, 0));                                    /* EACCES */
	int fd = open(m->node, O_WRONLY | O_TRUNC);
	M(fd);                                                      /* 0 */
	M(futimens(fd, ts));                                        /* EACCES */
	M(write(fd, "gone", 4) == 4 ? 0 : -1);                      /* 0 */
	close(fd);
	M(chmod(m->f, 0600));                                       /* 0 */
	M(truncate(m->f, 2));                                       /* 0 */
	M(utimensat(AT_FDCWD, m->f, ts, 0));                        /* 0 */
	M(chmod(m->dir, 0700));                                     /* EACCES: the root */
	M(utimensat(AT_FDCWD, m->dir, ts, 0));                      /* EACCES */
	return 0;
}

TEST(a_device_node_below_a_directory_grant_keeps_its_metadata)
{
	NEED_OPENAT2();
	struct meta *m = shared_page(sizeof(*m));
	ASSERT_NE(NULL, m);
	strcpy(m->dir, "/tmp/sandpit-meta-XXXXXX");
	make_dir(_metadata, m->dir);
	if (mknod(AT(m->node, m->dir, "null"), S_IFCHR | 0666, makedev(1, 3)) < 0) {
		rm_rf(m->dir);
		SKIP(return, "making a device node takes root (CAP_MKNOD)");
	}
	ASSERT_EQ(0, chmod(m->node, 0666));
	snprintf(m->f, sizeof(m->f), "%s/f", m->dir);
	make_dated(_metadata, m->f, "data\n");
	struct stat n0, d0, st;
	ASSERT_EQ(0, lstat(m->node, &n0));
	ASSERT_EQ(0, lstat(m->dir, &d0));
	const char *w[] = { m->dir, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(ops_dir_device, m, &o, 60)));
	static const long want[] = { -EACCES, -EACCES, -EACCES, -EACCES, -EACCES, 0, -EACCES,
				     0,       0,       0,       0,       -EACCES, -EACCES };
	ASSERT_EQ((int)(sizeof(want) / sizeof(want[0])), m->n);
	for (int i = 0; i < m->n; i++) {
		EXPECT_EQ(want[i], m->res[i]) TH_LOG("call %d", i);
	}
	expect_same_meta(_metadata, m->node, &n0);
	ASSERT_EQ(0, lstat(m->dir, &st));
	EXPECT_EQ(d0.st_mode, st.st_mode);
	ASSERT_EQ(0, lstat(m->f, &st));
	EXPECT_EQ(0600u, st.st_mode & 07777);
	EXPECT_EQ(2, st.st_size);
	EXPECT_EQ(1100000000, st.st_mtim.tv_sec);
	rm_rf(m->dir);
}

/* The same, raced: a second process exchanges DIR/f, a regular file, with
 * DIR/null, a device node, again and again, while the sandboxed body sets
 * DIR/f's mode, times and size.  What B acts on is the object it checked:
 * some calls change the file, others meet the device and are refused, and
 * the device's metadata never changes. */
struct dev_race {
	struct meta m;
	volatile int stop;
	int calls, acted, refused, other;
};

static int dev_race_body(void *a)
{
	struct dev_race *r = a;
	struct timespec ts[2] = { { 1000000000, 0 }, { 1100000000, 0 } };
	time_t until = time(NULL) + 20;
	for (int i = 0; i < 3000 || ((!r->acted || !r->refused) && time(NULL) < until); i++) {
		long v = i % 3 == 0 ? chmod(r->m.f, i & 1 ? 0600 : 0640)
			 : i % 3 == 1 ? utimensat(AT_FDCWD, r->m.f, ts, 0)
				      : truncate(r->m.f, 1);
		r->calls++;
		if (v == 0)
			r->acted++;
		else if (errno == EACCES)
			r->refused++;
		else
			r->other++;
	}
	return 0;
}

TEST(race_a_device_node_exchanged_for_a_file_below_a_grant_never_gets_its_metadata_set)
{
	NEED_OPENAT2();
	struct dev_race *r = shared_page(sizeof(*r));
	ASSERT_NE(NULL, r);
	struct meta *m = &r->m;
	strcpy(m->dir, "/tmp/sandpit-meta-XXXXXX");
	make_dir(_metadata, m->dir);
	if (mknod(AT(m->node, m->dir, "null"), S_IFCHR | 0666, makedev(1, 3)) < 0) {
		rm_rf(m->dir);
		SKIP(return, "making a device node takes root (CAP_MKNOD)");
	}
	ASSERT_EQ(0, chmod(m->node, 0666));
	snprintf(m->f, sizeof(m->f), "%s/f", m->dir);
	make_dated(_metadata, m->f, "data\n");
	struct stat n0;
	ASSERT_EQ(0, lstat(m->node, &n0));
	pid_t swapper = swap_race_start(m->f, m->node, &r->stop);
	ASSERT_LE(0, swapper);
	const char *w[] = { m->dir, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	int st = run_sandboxed_opts(dev_race_body, r, &o, 120);
	r->stop = 1;
	waitpid(swapper, NULL, 0);
	EXPECT_EQ(0, outcome(st));
	/* whichever name it has now, the device is as it was */
	struct stat a, b, *dev = NULL;
	ASSERT_EQ(0, lstat(m->node, &a));
	ASSERT_EQ(0, lstat(m->f, &b));
	dev = S_ISCHR(a.st_mode) ? &a : &b;
	ASSERT_TRUE(S_ISCHR(dev->st_mode));
	EXPECT_EQ(n0.st_ino, dev->st_ino);
	EXPECT_EQ(n0.st_mode, dev->st_mode);
	EXPECT_EQ(n0.st_mtim.tv_sec, dev->st_mtim.tv_sec);
	EXPECT_EQ(n0.st_mtim.tv_nsec, dev->st_mtim.tv_nsec);
	EXPECT_EQ(n0.st_atim.tv_sec, dev->st_atim.tv_sec); /* (its ctime is the renames') */
	EXPECT_EQ(n0.st_atim.tv_nsec, dev->st_atim.tv_nsec);
	EXPECT_LE(3000, r->calls);
	EXPECT_LT(0, r->acted);   /* the file was reached */
	EXPECT_LT(0, r->refused); /* and so was the device, after the check */
	EXPECT_EQ(0, r->other);
	TH_LOG("of %d calls, %d acted on the file, %d met the device", r->calls, r->acted,
	       r->refused);
	rm_rf(m->dir);
}

/* ------------------------------------------------------------ races */

/* While the sandboxed body makes one call again and again on GRANT/d/...,
 * a second process swaps GRANT/d with GRANT/l, a symlink to OUTSIDE (one
 * atomic RENAME_EXCHANGE), or renames GRANT/d away and back.  Whatever B
 * checked, the call may act only inside the grant: OUTSIDE must end as it
 * began.  `reached` counts the calls that B answered: acted (`done`),
 * refused a path it resolved out of the grant (EACCES), or found the path
 * swapped between its check and the call (`raced`: ELOOP, ENOENT,
 * ENOTDIR; EEXIST where the race left a name behind). */
struct race {
	struct box b;
	volatile int stop;
	int calls, reached, done, refused, raced;
	int op;
	int rename_away;
};

enum { R_MKDIR, R_RMDIR, R_UNLINK, R_RENAME, R_LINK, R_SYMLINK, R_TRUNCATE, R_CHMOD, R_UTIMENS,
       R_MKNOD };

static long race_call(struct race *r, const char *x, const char *y)
{
	struct timespec ts[2] = { { 1, 0 }, { 1, 0 } };
	switch (r->op) {
	case R_MKDIR:
		return mkdir(y, 0755);
	case R_RMDIR:
		return mkdir(x, 0755), rmdir(x);
	case R_UNLINK:
		return make(x), unlink(x);
	case R_RENAME:
		return make(x), rename(x, y);
	case R_LINK:
		return link(x, y);
	case R_SYMLINK:
		return symlink("t", y);
	case R_TRUNCATE:
		return truncate(x, 0);
	case R_CHMOD:
		return chmod(x, 0600);
	case R_UTIMENS:
		return utimensat(AT_FDCWD, x, ts, 0);
	case R_MKNOD:
		return mknod(y, S_IFIFO | 0600, 0);
	}
	return -1;
}

static int race_body(void *a)
{
	struct race *r = a;
	char x[128], y[128];
	struct timespec now, end;
	int i;
	snprintf(x, sizeof(x), "%s/d/%s", r->b.grant, r->op == R_RMDIR ? "new" : "file");
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 20;
	/* 2000 calls, and on until one has acted (a swapper scheduled far
	 * more than this thread can refuse them all for a while), 20 s at most */
	for (i = 0;; i++) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (i >= 2000 && (r->done || now.tv_sec > end.tv_sec))
			break;
		/* a new name each time for the calls that make one: one made
		 * outside stays there to be found */
		snprintf(y, sizeof(y), "%s/d/new%d", r->b.grant, i);
		errno = 0;
		long v = race_call(r, x, y);
		if (v == 0)
			r->done++;
		else if (errno == EACCES)
			r->refused++;
		else if (errno == ELOOP || errno == ENOENT || errno == ENOTDIR || errno == EEXIST)
			r->raced++;
		else
			continue;
		r->reached++;
	}
	r->calls = i;
	r->stop = 1;
	return 0;
}

FIXTURE(race) {
	struct race *r;
};

FIXTURE_VARIANT(race) {
	int op;
	int rename_away;
};
FIXTURE_VARIANT_ADD(race, mkdir) { .op = R_MKDIR };
FIXTURE_VARIANT_ADD(race, rmdir) { .op = R_RMDIR };
FIXTURE_VARIANT_ADD(race, unlink) { .op = R_UNLINK };
FIXTURE_VARIANT_ADD(race, unlink_renamed_away) { .op = R_UNLINK, .rename_away = 1 };
FIXTURE_VARIANT_ADD(race, rename) { .op = R_RENAME };
FIXTURE_VARIANT_ADD(race, link) { .op = R_LINK };
FIXTURE_VARIANT_ADD(race, symlink) { .op = R_SYMLINK };
FIXTURE_VARIANT_ADD(race, truncate) { .op = R_TRUNCATE };
FIXTURE_VARIANT_ADD(race, chmod) { .op = R_CHMOD };
FIXTURE_VARIANT_ADD(race, utimensat) { .op = R_UTIMENS };
FIXTURE_VARIANT_ADD(race, mknod) { .op = R_MKNOD };

FIXTURE_SETUP(race)
{
	self->r = shared_page(sizeof(*self->r));
	ASSERT_NE(NULL, self->r);
}

FIXTURE_TEARDOWN(race)
{
}

TEST_F(race, swapped_for_a_symlink_out_of_the_grant_never_acts_outside)
{
	struct race *r = self->r;
	struct box *b = &r->b;
	NEED_OPENAT2();
	r->op = variant->op;
	r->rename_away = variant->rename_away;
	strcpy(b->grant, "/tmp/sandpit-grant-XXXXXX");
	strcpy(b->outside, "/tmp/sandpit-outside-XXXXXX");
	make_dir(_metadata, b->grant);
	make_dir(_metadata, b->outside);
	char d[96], l[96], away[96], p[192];
	snprintf(d, sizeof(d), "%s/d", b->grant);
	snprintf(l, sizeof(l), "%s/l", b->grant);
	snprintf(away, sizeof(away), "%s/away", b->grant);
	ASSERT_EQ(0, mkdir(d, 0755));
	ASSERT_EQ(0, make(AT(p, d, "file")));
	ASSERT_EQ(0, make(AT(p, b->outside, "file")));
	ASSERT_EQ(0, chmod(p, 0644));
	ASSERT_EQ(0, symlink(b->outside, l));
	struct stat before, after;
	ASSERT_EQ(0, stat(p, &before));
	static char sig_before[4096], sig_after[4096];
	sig_before[0] = sig_after[0] = '\0';
	tree_signature(b->outside, "", sig_before, sizeof(sig_before));

	pid_t swapper = fork();
	ASSERT_LE(0, swapper);
	if (swapper == 0) {
		while (!r->stop) {
			if (r->rename_away) {
				/* d away, a symlink out in its place, then back */
				if (rename(d, away) == 0) {
					rename(l, d);
					rename(d, l);
					rename(away, d);
				}
			} else {
				syscall(SYS_renameat2, AT_FDCWD, d, AT_FDCWD, l, RENAME_EXCHANGE);
			}
		}
		_exit(0);
	}
	const char *w[] = { b->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	int st = run_sandboxed_opts(race_body, r, &o, 120);
	r->stop = 1;
	waitpid(swapper, NULL, 0);
	EXPECT_EQ(0, outcome(st));
	tree_signature(b->outside, "", sig_after, sizeof(sig_after));
	EXPECT_STREQ(sig_before, sig_after);
	ASSERT_EQ(0, stat(AT(p, b->outside, "file"), &after));
	EXPECT_EQ(5, after.st_size);
	EXPECT_EQ(0644u, after.st_mode & 07777);
	EXPECT_EQ(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
	EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
	EXPECT_LE(2000, r->calls);
	EXPECT_EQ(r->calls, r->reached); /* every call reached B and was answered */
	EXPECT_LT(0, r->done);       /* and some of them acted, inside */
	TH_LOG("of %d calls, %d acted inside the grant, %d were refused, %d met a swap after the "
	       "check",
	       r->calls, r->done, r->refused, r->raced);
	rm_rf(b->grant);
	rm_rf(b->outside);
}

/* ------------------------------------------- stats B answers itself */

/* stat, lstat and newfstatat are answered by B from the descriptor its
 * resolution opened (user/trusted/b_answer.c): the struct, errno and the writes to
 * the buffer are the kernel's, case by case, natively and sandboxed on the
 * same tree; `answered` says which calls B answered (the verdict in the
 * secure page), so that the cases are seen to take that way. */
#define NSTAT 13
struct stats {
	char dir[64];
	char *ro; /* a read-only page */
	long res[NSTAT];
	struct stat st[NSTAT];
	int answered[NSTAT];
};

static int stat_cases(void *a)
{
	struct stats *t = a;
	int sandboxed = sandpit_mode() != SANDPIT_MODE_NONE;
	if (chdir(t->dir))
		return 1;
	int dfd = open(".", O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return 2;
	char abs[128];
	snprintf(abs, sizeof(abs), "%s/f", t->dir);
	for (int i = 0; i < NSTAT; i++) {
		struct stat *sb = &t->st[i];
		long r = -1;
		errno = 0;
		switch (i) {
		case 0: r = stat("f", sb); break;
		case 1: r = lstat("f", sb); break;
		case 2: r = stat("lf", sb); break;  /* a link on the way: B's walk, then its open */
		case 3: r = lstat("lf", sb); break; /* the link itself */
		case 4: r = fstatat(dfd, "f", sb, 0); break;
		case 5: r = fstatat(dfd, "lf", sb, AT_SYMLINK_NOFOLLOW); break;
		case 6: r = stat("d/", sb); break;
		case 7: r = stat("f/", sb); break;  /* ENOTDIR */
		case 8: r = stat("nx", sb); break;  /* ENOENT */
		case 9: r = stat("d/../f", sb); break;
		case 10: r = stat(abs, sb); break;
		case 11: r = syscall(SYS_stat, "f", NULL); break;   /* EFAULT */
		case 12: r = syscall(SYS_stat, "f", t->ro); break;  /* EFAULT */
		}
		t->res[i] = r < 0 ? -errno : r;
		if (sandboxed)
			t->answered[i] = state_of(my_mailbox())->sp->verdict == -SP_ANSWERED;
	}
	return 0;
}

TEST(stats_answered_by_b_are_the_kernels)
{
	/* read grants only: B answers with or without openat2 */
	struct stats *nat = shared_page(sizeof(*nat)), *box = shared_page(sizeof(*box));
	ASSERT_NE(NULL, nat);
	ASSERT_NE(NULL, box);
	char *ro = mmap(NULL, 4096, PROT_READ, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	strcpy(nat->dir, "/tmp/sandpit-stat-XXXXXX");
	make_dir(_metadata, nat->dir);
	char p[128];
	ASSERT_EQ(0, make(AT(p, nat->dir, "f")));
	ASSERT_EQ(0, mkdir(AT(p, nat->dir, "d"), 0750));
	ASSERT_EQ(0, symlink("f", AT(p, nat->dir, "lf")));
	memcpy(box->dir, nat->dir, sizeof(box->dir));
	nat->ro = box->ro = ro;
	ASSERT_EQ(0, run_native_then_sandboxed(stat_cases, nat, box, box->dir));
	for (int i = 0; i < NSTAT; i++) {
		EXPECT_EQ(nat->res[i], box->res[i]) TH_LOG("case %d", i);
		if (nat->res[i] || box->res[i])
			continue;
		struct stat *a = &nat->st[i], *b = &box->st[i];
		EXPECT_EQ(a->st_dev, b->st_dev) TH_LOG("case %d", i);
		EXPECT_EQ(a->st_ino, b->st_ino) TH_LOG("case %d", i);
		EXPECT_EQ(a->st_mode, b->st_mode) TH_LOG("case %d", i);
		EXPECT_EQ(a->st_nlink, b->st_nlink) TH_LOG("case %d", i);
		EXPECT_EQ(a->st_uid, b->st_uid) TH_LOG("case %d", i);
		EXPECT_EQ(a->st_gid, b->st_gid) TH_LOG("case %d", i);
		EXPECT_EQ(a->st_rdev, b->st_rdev) TH_LOG("case %d", i);
		EXPECT_EQ(a->st_size, b->st_size) TH_LOG("case %d", i);
		EXPECT_EQ(a->st_blksize, b->st_blksize) TH_LOG("case %d", i);
		EXPECT_EQ(a->st_blocks, b->st_blocks) TH_LOG("case %d", i);
		EXPECT_EQ(0, memcmp(&a->st_mtim, &b->st_mtim, sizeof(a->st_mtim))) TH_LOG("case %d", i);
		EXPECT_EQ(0, memcmp(&a->st_ctim, &b->st_ctim, sizeof(a->st_ctim))) TH_LOG("case %d", i);
	}
	/* B answered every case that reached a file, and the bad buffers */
	static const int by_b[] = { 0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 12 };
	for (size_t i = 0; i < sizeof(by_b) / sizeof(by_b[0]); i++) {
		EXPECT_EQ(1, box->answered[by_b[i]]) TH_LOG("case %d", by_b[i]);
	}
	EXPECT_EQ(0, box->answered[7]);
	EXPECT_EQ(0, box->answered[8]);
	rm_rf(nat->dir);
}

/* The tree of a stat race (swap_race.h): GRANT/d/file and OUTSIDE/file,
 * their inodes in *in and *out, GRANT/l a link to OUTSIDE; d and l get the
 * names of GRANT/d and GRANT/l.  grant and outside hold 64 bytes. */
static void swap_tree(struct __test_metadata *_metadata, char *grant, char *outside, char d[96],
		      char l[96], ino_t *in, ino_t *out)
{
	char p[192];
	struct stat sb;
	strcpy(grant, "/tmp/sandpit-grant-XXXXXX");
	strcpy(outside, "/tmp/sandpit-outside-XXXXXX");
	make_dir(_metadata, grant);
	make_dir(_metadata, outside);
	snprintf(d, 96, "%s/d", grant);
	snprintf(l, 96, "%s/l", grant);
	ASSERT_EQ(0, mkdir(d, 0755));
	ASSERT_EQ(0, make(AT(p, d, "file")));
	ASSERT_EQ(0, stat(p, &sb));
	*in = sb.st_ino;
	ASSERT_EQ(0, make(AT(p, outside, "file")));
	ASSERT_EQ(0, stat(p, &sb));
	*out = sb.st_ino;
	ASSERT_EQ(0, symlink(outside, l));
}

/* While the sandboxed body stats GRANT/d/file again and again, a second
 * process swaps GRANT/d with a symlink to OUTSIDE (RENAME_EXCHANGE).  The
 * answer is about the file inside, or a refusal (EACCES: B resolved the
 * path out of the grant), or the swap met between B's check and its open
 * (ELOOP, ENOENT, ENOTDIR): never the file outside.  (When T made the
 * call from the checked text, a swap after the check made the kernel
 * follow the new link out of the grant.) */
struct stat_race {
	char grant[64], outside[64];
	ino_t in_ino, out_ino;
	volatile int stop;
	int calls;
	struct swap_tally t;
};

static int stat_race_body(void *a)
{
	struct stat_race *r = a;
	char x[128];
	snprintf(x, sizeof(x), "%s/d/file", r->grant);
	time_t until = time(NULL) + 20;
	int i;
	for (i = 0; swap_race_more(&r->t, i, until); i++) {
		struct stat sb;
		errno = 0;
		long v = (i & 1) ? lstat(x, &sb) : stat(x, &sb);
		swap_tally_add(&r->t, v ? 0 : sb.st_ino == r->in_ino ? 1 : sb.st_ino == r->out_ino ? 2 : 0,
			       v, errno);
	}
	r->calls = i;
	r->stop = 1;
	return 0;
}

TEST(race_stat_swapped_for_a_symlink_out_of_the_grant_never_answers_for_outside)
{
	/* read grants only: B answers with or without openat2 */
	struct stat_race *r = shared_page(sizeof(*r));
	ASSERT_NE(NULL, r);
	char d[96], l[96];
	swap_tree(_metadata, r->grant, r->outside, d, l, &r->in_ino, &r->out_ino);
	pid_t swapper = swap_race_start(d, l, &r->stop);
	ASSERT_LE(0, swapper);
	const char *g[] = { r->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = g };
	int st = run_sandboxed_opts(stat_race_body, r, &o, 120);
	r->stop = 1;
	waitpid(swapper, NULL, 0);
	TH_LOG("of %d stats, %d inside, %d refused, %d met a swap, %d outside, %d other", r->calls,
	       r->t.inside, r->t.refused, r->t.raced, r->t.outside_seen, r->t.other);
	EXPECT_EQ(0, outcome(st));
	EXPECT_LE(3000, r->calls);
	EXPECT_EQ(0, r->t.outside_seen);
	EXPECT_EQ(0, r->t.other);
	EXPECT_LT(0, r->t.inside);
	EXPECT_LT(0, r->t.refused + r->t.raced); /* the swap was met */
	rm_rf(r->grant);
	rm_rf(r->outside);
}

/* ------------------------------------ names relative to a directory fd */

/* B resolves a name relative to a descriptor from the directory object
 * itself (pidfd_getfd, openat2 from it without links, the kernel's name of
 * the directory as the text checked), and falls back to the text of
 * /proc/P/fd/N for the rest: every case answers as the kernel does, with
 * B's answer where the stat reached a file. */
#define NDIRFD 23
struct dirfd_stats {
	char dir[64];
	long res[NDIRFD];
	struct stat st[NDIRFD];
	int answered[NDIRFD];
};

static int dirfd_cases(void *a)
{
	struct dirfd_stats *t = a;
	int sandboxed = sandpit_mode() != SANDPIT_MODE_NONE;
	char p[128];
	int dfd = open(t->dir, O_RDONLY | O_DIRECTORY);
	int sub = open(AT(p, t->dir, "d"), O_RDONLY | O_DIRECTORY);
	int file = open(AT(p, t->dir, "f"), O_RDONLY);
	int closed = open(t->dir, O_RDONLY | O_DIRECTORY);
	int opath = open(AT(p, t->dir, "d"), O_PATH | O_DIRECTORY);
	if (dfd < 0 || sub < 0 || file < 0 || opath < 0 || closed < 0 || close(closed))
		return 1;
	for (int i = 0; i < NDIRFD; i++) {
		struct stat *sb = &t->st[i];
		long r = -1;
		errno = 0;
		switch (i) {
		case 0: r = fstatat(dfd, "f", sb, AT_SYMLINK_NOFOLLOW); break;
		case 1: r = fstatat(dfd, "f", sb, 0); break;
		case 2: r = fstatat(dfd, "d/g", sb, AT_SYMLINK_NOFOLLOW); break; /* two components */
		case 3: r = fstatat(dfd, "d/./g", sb, 0); break;
		case 4: r = fstatat(dfd, "lf", sb, 0); break;  /* a link: the walk */
		case 5: r = fstatat(dfd, "lf", sb, AT_SYMLINK_NOFOLLOW); break;
		case 6: r = fstatat(dfd, "ld/g", sb, AT_SYMLINK_NOFOLLOW); break; /* a link on the way */
		case 7: r = fstatat(dfd, "d/../f", sb, 0); break; /* ".." through a dirfd */
		case 8: r = fstatat(sub, "../f", sb, 0); break;
		case 9: r = fstatat(sub, ".", sb, 0); break;
		case 10: r = fstatat(dfd, "d/", sb, 0); break;
		case 11: r = fstatat(dfd, "f/", sb, 0); break;  /* ENOTDIR */
		case 12: r = fstatat(dfd, "nx", sb, 0); break;  /* ENOENT */
		case 13: r = fstatat(dfd, "nx/g", sb, 0); break; /* ENOENT */
		case 14: r = fstatat(file, "g", sb, 0); break;  /* a file as dirfd: ENOTDIR */
		case 15: r = fstatat(closed, "f", sb, 0); break; /* EBADF */
		case 16: r = fstatat(-5, "f", sb, 0); break;    /* EBADF */
		case 17: r = syscall(SYS_newfstatat, dfd, "f", NULL, 0); break; /* EFAULT */
		case 18: r = fstatat(opath, "g", sb, AT_SYMLINK_NOFOLLOW); break; /* an O_PATH dirfd */
		/* one component not followed: asked of the directory itself */
		case 19: r = fstatat(dfd, "nx", sb, AT_SYMLINK_NOFOLLOW); break; /* ENOENT */
		case 20: r = fstatat(dfd, "d", sb, AT_SYMLINK_NOFOLLOW); break;
		case 21: r = fstatat(sub, ".", sb, AT_SYMLINK_NOFOLLOW); break;
		case 22: r = syscall(SYS_newfstatat, dfd, "f", NULL, AT_SYMLINK_NOFOLLOW); break; /* EFAULT */
		}
		t->res[i] = r < 0 ? -errno : r;
		if (sandboxed)
			t->answered[i] = state_of(my_mailbox())->sp->verdict == -SP_ANSWERED;
	}
	return 0;
}

static void expect_same_stat(struct __test_metadata *_metadata, const struct stat *a,
			     const struct stat *b, int i)
{
	EXPECT_EQ(a->st_dev, b->st_dev) TH_LOG("case %d", i);
	EXPECT_EQ(a->st_ino, b->st_ino) TH_LOG("case %d", i);
	EXPECT_EQ(a->st_mode, b->st_mode) TH_LOG("case %d", i);
	EXPECT_EQ(a->st_nlink, b->st_nlink) TH_LOG("case %d", i);
	EXPECT_EQ(a->st_size, b->st_size) TH_LOG("case %d", i);
	EXPECT_EQ(0, memcmp(&a->st_mtim, &b->st_mtim, sizeof(a->st_mtim))) TH_LOG("case %d", i);
}

TEST(dirfd_stats_answer_as_natively)
{
	struct dirfd_stats *nat = shared_page(sizeof(*nat)), *box = shared_page(sizeof(*box));
	ASSERT_NE(NULL, nat);
	ASSERT_NE(NULL, box);
	strcpy(nat->dir, "/tmp/sandpit-dirfd-XXXXXX");
	make_dir(_metadata, nat->dir);
	char p[128];
	ASSERT_EQ(0, make(AT(p, nat->dir, "f")));
	ASSERT_EQ(0, mkdir(AT(p, nat->dir, "d"), 0750));
	ASSERT_EQ(0, make(AT(p, nat->dir, "d/g")));
	ASSERT_EQ(0, symlink("f", AT(p, nat->dir, "lf")));
	ASSERT_EQ(0, symlink("d", AT(p, nat->dir, "ld")));
	memcpy(box->dir, nat->dir, sizeof(box->dir));
	ASSERT_EQ(0, run_native_then_sandboxed(dirfd_cases, nat, box, box->dir));
	for (int i = 0; i < NDIRFD; i++) {
		EXPECT_EQ(nat->res[i], box->res[i]) TH_LOG("case %d", i);
		if (!nat->res[i] && !box->res[i])
			expect_same_stat(_metadata, &nat->st[i], &box->st[i], i);
	}
	EXPECT_EQ(-ENOTDIR, box->res[14]);
	EXPECT_EQ(-EBADF, box->res[15]);
	EXPECT_EQ(-EBADF, box->res[16]);
	/* B answered every case that reached a file, and the bad buffer */
	for (int i = 0; i <= 10; i++) {
		EXPECT_EQ(1, box->answered[i]) TH_LOG("case %d", i);
	}
	EXPECT_EQ(1, box->answered[17]);
	EXPECT_EQ(1, box->answered[18]);
	EXPECT_EQ(0, box->res[18]);
	EXPECT_EQ(-ENOENT, box->res[19]);
	for (int i = 20; i <= 22; i++) {
		EXPECT_EQ(1, box->answered[i]) TH_LOG("case %d", i);
	}
	EXPECT_EQ(-EFAULT, box->res[22]);
	rm_rf(nat->dir);
}

/* A descriptor of a directory outside the grants: a name under it is
 * refused (EACCES) whatever its text would look like, stat, open and
 * access alike, and ".." out of a granted directory too; the directory
 * above a grant (on the way to it) may be looked at, and the names under
 * it that lead into the grant are the grant's. */
struct dirfd_out {
	char grant[64], outside[64];
	int ofd, above; /* opened before the sandbox started */
	long res[12];
	ino_t ino[12];
};

static int dirfd_out_body(void *a)
{
	struct dirfd_out *t = a;
	struct stat sb;
	char name[96];
	const char *gname = strrchr(t->grant, '/') + 1;
	int gfd = open(t->grant, O_RDONLY | O_DIRECTORY);
	snprintf(name, sizeof(name), "%s/f", gname);
	long r[12] = { 0 };
	errno = 0;
	r[0] = fstatat(t->ofd, "f", &sb, 0) < 0 ? -errno : 0;
	r[1] = fstatat(t->ofd, "f", &sb, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	r[2] = fstatat(t->ofd, "d/f", &sb, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	r[3] = fstatat(t->ofd, ".", &sb, 0) < 0 ? -errno : 0;
	int fd = openat(t->ofd, "f", O_RDONLY);
	r[4] = fd < 0 ? -errno : 0;
	r[5] = faccessat(t->ofd, "f", R_OK, 0) < 0 ? -errno : 0;
	r[6] = gfd < 0 ? -errno : 0;
	snprintf(name, sizeof(name), "../%s/f", strrchr(t->outside, '/') + 1);
	r[7] = fstatat(gfd, name, &sb, 0) < 0 ? -errno : 0;
	/* the directory above the grant, and the grant through it */
	r[8] = fstatat(t->above, ".", &sb, 0) < 0 ? -errno : 0;
	snprintf(name, sizeof(name), "%s/f", gname);
	r[9] = fstatat(t->above, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	t->ino[9] = sb.st_ino;
	r[10] = fstatat(gfd, "f", &sb, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	t->ino[10] = sb.st_ino;
	memcpy(t->res, r, sizeof(r));
	return 0;
}

TEST(dirfd_outside_the_grants_refused_for_every_name)
{
	struct dirfd_out *t = shared_page(sizeof(*t));
	ASSERT_NE(NULL, t);
	char above[64] = "/tmp/sandpit-above-XXXXXX", p[192];
	make_dir(_metadata, above);
	snprintf(t->grant, sizeof(t->grant), "%s/g", above);
	snprintf(t->outside, sizeof(t->outside), "%s/o", above);
	ASSERT_EQ(0, mkdir(t->grant, 0755));
	ASSERT_EQ(0, mkdir(t->outside, 0755));
	ASSERT_EQ(0, make(AT(p, t->grant, "f")));
	ASSERT_EQ(0, make(AT(p, t->outside, "f")));
	ASSERT_EQ(0, mkdir(AT(p, t->outside, "d"), 0755));
	ASSERT_EQ(0, make(AT(p, t->outside, "d/f")));
	t->ofd = open(t->outside, O_RDONLY | O_DIRECTORY);
	t->above = open(above, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, t->ofd);
	ASSERT_LE(0, t->above);
	const char *g[] = { t->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = g };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(dirfd_out_body, t, &o, 60)));
	for (int i = 0; i <= 5; i++) {
		EXPECT_EQ(-EACCES, t->res[i]) TH_LOG("case %d", i);
	}
	EXPECT_EQ(0, t->res[6]);
	EXPECT_EQ(-EACCES, t->res[7]);
	EXPECT_EQ(0, t->res[8]);
	EXPECT_EQ(0, t->res[9]);
	EXPECT_EQ(0, t->res[10]);
	EXPECT_EQ(t->ino[10], t->ino[9]);
	close(t->ofd);
	close(t->above);
	rm_rf(above);
}

/* A directory renamed while the program holds a descriptor of it: names
 * under the descriptor are the renamed directory's, as natively (B checks
 * the directory's name as the kernel gives it now, not an old text); moved
 * out of the grants by someone outside the sandbox, they are refused; once
 * removed inside the grants, ENOENT as natively (outside: still refused). */
struct dirfd_moved {
	char grant[64], outside[64];
	volatile int phase;
	long res[8];
	ino_t ino[8];
};

static int wait_phase(struct dirfd_moved *t, int phase)
{
	struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < 20000 && t->phase != phase; i++)
		nanosleep(&ms, NULL);
	return t->phase == phase ? 0 : -1;
}

static int dirfd_moved_body(void *a)
{
	struct dirfd_moved *t = a;
	struct stat sb;
	char p[128];
	int dfd = open(AT(p, t->grant, "a"), O_RDONLY | O_DIRECTORY);
	int cfd = open(AT(p, t->grant, "c"), O_RDONLY | O_DIRECTORY);
	if (dfd < 0 || cfd < 0)
		return 1;
	t->phase = 1;
	if (wait_phase(t, 2)) /* a renamed to b inside the grant */
		return 2;
	t->res[0] = fstatat(dfd, "f", &sb, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	t->ino[0] = sb.st_ino;
	int fd = openat(dfd, "f", O_RDONLY);
	t->res[1] = fd < 0 ? -errno : read(fd, p, sizeof(p));
	if (fd >= 0)
		close(fd);
	t->res[2] = fstatat(dfd, "..", &sb, 0) < 0 ? -errno : 0;
	t->ino[2] = sb.st_ino;
	t->phase = 3;
	if (wait_phase(t, 4)) /* b moved out of the grant */
		return 3;
	t->res[3] = fstatat(dfd, "f", &sb, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	t->phase = 5;
	if (wait_phase(t, 6)) /* c removed inside the grant, b outside */
		return 4;
	t->res[4] = fstatat(cfd, "f", &sb, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	t->res[5] = fstatat(dfd, "f", &sb, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	return 0;
}

TEST(dirfd_of_a_renamed_directory_answers_for_where_it_is)
{
	struct dirfd_moved *t = shared_page(sizeof(*t));
	ASSERT_NE(NULL, t);
	strcpy(t->grant, "/tmp/sandpit-grant-XXXXXX");
	strcpy(t->outside, "/tmp/sandpit-outside-XXXXXX");
	make_dir(_metadata, t->grant);
	make_dir(_metadata, t->outside);
	char a[128], b[128], f[160], o[128];
	struct stat sb;
	char c[128];
	ASSERT_EQ(0, mkdir(AT(c, t->grant, "c"), 0755));
	ASSERT_EQ(0, make(AT(f, c, "f")));
	ASSERT_EQ(0, mkdir(AT(a, t->grant, "a"), 0755));
	ASSERT_EQ(0, make(AT(f, a, "f")));
	ASSERT_EQ(0, stat(f, &sb));
	ino_t fino = sb.st_ino;
	ASSERT_EQ(0, stat(t->grant, &sb));
	ino_t gino = sb.st_ino;
	AT(b, t->grant, "b");
	AT(o, t->outside, "b");
	pid_t pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		const char *g[] = { t->grant, NULL };
		struct sandpit_options opt = { .mode = suite_mode(), .allow_read = g };
		_exit(outcome(run_sandboxed_opts(dirfd_moved_body, t, &opt, 60)));
	}
	struct timespec ms = { 0, 1000000 };
	int step = 0;
	for (int i = 0; i < 60000 && step < 3; i++) {
		if (t->phase == 1 && step == 0) {
			ASSERT_EQ(0, rename(a, b));
			t->phase = 2, step = 1;
		} else if (t->phase == 3 && step == 1) {
			ASSERT_EQ(0, rename(b, o));
			t->phase = 4, step = 2;
		} else if (t->phase == 5 && step == 2) {
			AT(f, c, "f");
			ASSERT_EQ(0, unlink(f));
			ASSERT_EQ(0, rmdir(c));
			AT(f, o, "f");
			ASSERT_EQ(0, unlink(f));
			ASSERT_EQ(0, rmdir(o));
			t->phase = 6, step = 3;
		}
		nanosleep(&ms, NULL);
	}
	int st;
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(0, outcome(st));
	EXPECT_EQ(3, step);
	EXPECT_EQ(0, t->res[0]);
	EXPECT_EQ(fino, t->ino[0]);
	EXPECT_EQ(5, t->res[1]); /* "data\n" */
	EXPECT_EQ(0, t->res[2]);
	EXPECT_EQ(gino, t->ino[2]);
	EXPECT_EQ(-EACCES, t->res[3]);
	EXPECT_EQ(-ENOENT, t->res[4]);
	EXPECT_EQ(-EACCES, t->res[5]); /* it was last outside the grants */
	rm_rf(t->grant);
	rm_rf(t->outside);
}

/* While the sandboxed body stats names relative to directory descriptors
 * again and again, a second process swaps GRANT/d with a symlink to
 * OUTSIDE (RENAME_EXCHANGE): "d/file" from a descriptor of GRANT (a
 * component swapped), and "file" from a descriptor of the directory d
 * itself, opened before the swapping started (its name swapped: the object
 * stays inside).  Never an answer for the file outside; the swap was met. */
struct dirfd_race {
	char grant[64], outside[64];
	ino_t in_ino, out_ino;
	int gfd, dfd; /* opened before the sandbox started */
	volatile int stop;
	int calls, by_d_inside;
	struct swap_tally t;
};

static int dirfd_race_body(void *a)
{
	struct dirfd_race *r = a;
	time_t until = time(NULL) + 20;
	int i;
	for (i = 0; swap_race_more(&r->t, i, until); i++) {
		struct stat sb;
		errno = 0;
		int by_d = (i & 3) == 3;
		long v = by_d ? fstatat(r->dfd, "file", &sb, (i & 4) ? AT_SYMLINK_NOFOLLOW : 0) :
				fstatat(r->gfd, "d/file", &sb, (i & 1) ? AT_SYMLINK_NOFOLLOW : 0);
		int about = v ? 0 : sb.st_ino == r->in_ino ? 1 : sb.st_ino == r->out_ino ? 2 : 0;
		swap_tally_add(&r->t, about, v, errno);
		r->by_d_inside += by_d && about == 1;
	}
	r->calls = i;
	r->stop = 1;
	return 0;
}

TEST(race_dirfd_name_swapped_for_a_symlink_out_of_the_grant_never_answers_for_outside)
{
	struct dirfd_race *r = shared_page(sizeof(*r));
	ASSERT_NE(NULL, r);
	char d[96], l[96];
	swap_tree(_metadata, r->grant, r->outside, d, l, &r->in_ino, &r->out_ino);
	r->gfd = open(r->grant, O_RDONLY | O_DIRECTORY);
	r->dfd = open(d, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, r->gfd);
	ASSERT_LE(0, r->dfd);
	pid_t swapper = swap_race_start(d, l, &r->stop);
	ASSERT_LE(0, swapper);
	const char *g[] = { r->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = g };
	int st = run_sandboxed_opts(dirfd_race_body, r, &o, 120);
	r->stop = 1;
	waitpid(swapper, NULL, 0);
	TH_LOG("of %d stats, %d inside (%d through d's own fd), %d refused, %d met a swap, "
	       "%d outside, %d other",
	       r->calls, r->t.inside, r->by_d_inside, r->t.refused, r->t.raced, r->t.outside_seen, r->t.other);
	EXPECT_EQ(0, outcome(st));
	EXPECT_LE(3000, r->calls);
	EXPECT_EQ(0, r->t.outside_seen);
	EXPECT_EQ(0, r->t.other);
	EXPECT_LT(0, r->t.inside);
	EXPECT_LT(0, r->by_d_inside);
	EXPECT_LT(0, r->t.refused + r->t.raced); /* the swap was met */
	close(r->gfd);
	close(r->dfd);
	rm_rf(r->grant);
	rm_rf(r->outside);
}

TEST_HARNESS_MAIN
