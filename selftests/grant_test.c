/* A write grant is a working directory: the namespace calls the
 * trusted process makes inside one (mkdir, rmdir, unlink, rename, link,
 * symlink, truncate, chmod, utimensat, mknod of a FIFO, O_TMPFILE) answer
 * as natively, errors included; outside the grants they are refused with
 * nothing made, where a read grant lets the path be seen with the kernel's
 * own answer.  The rest of the grants' tests, by subject: grant_root_test
 * (a grant's own root, a grant through a symlink), grant_file_test (a file
 * grant is its data only), grant_race_test (a directory swapped for a
 * symlink during a call), grant_stat_test (the stats B answers itself). */
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
#include "grant_box.h"
#include "swap_race.h"
#include "u_state.h"

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
	R(make_file("f"));
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
	R(make_file("f"));
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
	R(make_file("f"));
	R(make_file("g"));
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
	R(make_file("f"));
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
	R(make_file("f"));
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

/* Owners and attributes by path, and creat, as tar -x, tar -c and cp -a
 * make them: B makes each on the object it resolved under the grant, and
 * the kernel decides with the program's credentials (owners: the ids the
 * file has, which any owner may set; attributes: whatever the file system
 * answers, natively the same). */
static int ops_owners(void *a)
{
	struct box *b = a;
	struct stat st;
	if (in_dir(b))
		return 1;
	umask(022);
	int fd = creat("c", 0640);
	R(fd >= 0 ? 0 : -1);
	R(write(fd, "creat", 5));
	close(fd);
	R(stat("c", &st));
	R(st.st_mode);
	R(st.st_size);
	fd = creat("c", 0600);                      /* truncates, keeps the mode */
	R(fd >= 0 ? 0 : -1);
	close(fd);
	R(stat("c", &st));
	R(st.st_mode);
	R(st.st_size);
	R(mkdir("d", 0755));
	R(symlink("c", "s"));
	uid_t u = getuid();
	gid_t g = getgid();
	R(chown("c", u, g));
	R(chown("c", (uid_t)-1, (gid_t)-1));
	R(chown("s", u, g));                        /* through the link */
	R(lchown("s", u, g));                       /* the link itself */
	R(fchownat(AT_FDCWD, "d", u, g, AT_SYMLINK_NOFOLLOW));
	R(fchownat(AT_FDCWD, "d", u, g, 0x8000));   /* EINVAL: an unknown flag */
	R(chown("nothing", u, g));                  /* ENOENT */
	int dfd = open("d", O_RDONLY | O_DIRECTORY);
	R(fchownat(dfd, "", u, g, AT_EMPTY_PATH));  /* the descriptor's own */
	close(dfd);
	R(setxattr("c", "user.sandpit", "v1", 2, 0));
	R(setxattr("d", "user.sandpit", "v2", 2, XATTR_CREATE));
	R(setxattr("d", "user.sandpit", "v3", 2, XATTR_CREATE)); /* EEXIST */
	R(lsetxattr("s", "user.sandpit", "v", 1, 0)); /* EPERM: a link */
	char v[8] = "";
	R(getxattr("d", "user.sandpit", v, sizeof(v)));
	R(v[0] + 256 * v[1]);
	R(removexattr("c", "user.sandpit"));
	R(removexattr("c", "user.sandpit"));       /* ENODATA */
	R(lremovexattr("d", "user.sandpit"));
	return 0;
}

TEST(owners_attributes_by_path_and_creat_inside_a_write_grant_answer_as_natively)
{
	NEED_OPENAT2();
	same_as_native(_metadata, ops_owners);
}

/* Attributes read through a descriptor and copied to another file, as
 * cp -a and tar copy user.* attributes and ACLs: flistxattr and fgetxattr
 * answer as natively (sizes, ERANGE, ENODATA, EBADF), and the copy made
 * with fsetxattr carries the same attributes (compared in the tree); then
 * the copy's mode and owner set on its descriptor, as gzip -k, xz and
 * install -m set them (the program's own ids: as root, another owner is
 * the kernel's EPERM without capabilities). */
static int ops_fd_attrs(void *a)
{
	struct box *b = a;
	static const unsigned char acl[] = {
		2, 0, 0, 0,                                    /* version 2 */
		1, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,            /* owner rw- */
		2, 0, 4, 0, 0xe8, 0x03, 0, 0,                  /* user 1000 r-- */
		4, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,            /* group r-- */
		16, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,           /* mask rw- */
		32, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,           /* other r-- */
	};
	char names[256], v[64];
	if (in_dir(b))
		return 1;
	umask(022);
	R(make_file("src"));
	R(mkdir("d", 0755));
	R(setxattr("src", "user.sandpit", "value", 5, 0));
	R(setxattr("src", "user.two", "2", 1, 0));
	R(setxattr("src", "system.posix_acl_access", acl, sizeof(acl), 0));
	int in = open("src", O_RDONLY), out = open("dst", O_WRONLY | O_CREAT | O_EXCL, 0600);
	int dir = open("d", O_RDONLY | O_DIRECTORY);
	R(in >= 0 && out >= 0 && dir >= 0 ? 0 : -1);
	long n = flistxattr(in, NULL, 0);           /* the size needed */
	R(n);
	R(flistxattr(in, names, 1));                /* ERANGE */
	R(flistxattr(in, names, sizeof(names)));
	R(flistxattr(dir, names, sizeof(names)));   /* none: 0 */
	R(fgetxattr(in, "user.sandpit", NULL, 0));  /* 5 */
	R(fgetxattr(in, "user.sandpit", v, 2));     /* ERANGE */
	R(fgetxattr(in, "user.none", v, sizeof(v))); /* ENODATA */
	/* the copy, name by name, as cp -a makes it */
	for (long k = 0; k > -1 && k < n; k += (long)strlen(names + k) + 1) {
		long len = fgetxattr(in, names + k, v, sizeof(v));
		R(len);
		R(v[0] + 256 * v[len > 1 ? len - 1 : 0]);
		R(fsetxattr(out, names + k, v, len > 0 ? (size_t)len : 0, 0));
	}
	R(fgetxattr(out, "user.two", v, sizeof(v)));
	/* then the mode and owner, by descriptor, as gzip -k and xz give them */
	struct stat st;
	R(fchmod(out, 0640));
	R(fchown(out, getuid(), getgid()));
	R(fchown(out, (uid_t)-1, getgid()));
	R(fremovexattr(out, "user.two"));
	R(fremovexattr(out, "user.two"));           /* ENODATA */
	R(fstat(out, &st));
	R(st.st_mode);
	close(out);
	R(fgetxattr(out, "user.two", v, sizeof(v))); /* EBADF: closed */
	R(flistxattr(out, names, sizeof(names)));   /* EBADF */
	close(in);
	close(dir);
	return 0;
}

TEST(attributes_read_through_a_descriptor_and_copied_answer_as_natively)
{
	NEED_OPENAT2();
	same_as_native(_metadata, ops_fd_attrs);
}

/* What a grant never lets U do, whatever the kernel would. */
static int ops_never(void *a)
{
	struct box *b = a;
	if (in_dir(b))
		return 1;
	R(make_file("f"));
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
	R(chown(AT(p, b->outside, "f"), getuid(), getgid()));    /* EACCES */
	R(lchown(AT(p, b->outside, "f"), getuid(), getgid()));   /* EACCES */
	R(setxattr(AT(p, b->outside, "f"), "user.x", "v", 1, 0)); /* EACCES */
	R(removexattr(AT(p, b->outside, "f"), "user.x"));        /* EACCES */
	R(creat(AT(p, b->outside, "new"), 0644));                 /* EACCES */
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
	ASSERT_EQ(0, make_file(AT(p, box->outside, "f")));
	ASSERT_EQ(0, make_file(AT(p, box->grant, "g")));
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
				     -EACCES, -EACCES, -EACCES, -EACCES, -EACCES, -EACCES,
				     -EACCES, -EACCES, -EACCES, -EEXIST, -EACCES };
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
	ASSERT_EQ(0, make_file(AT(p, box->grant, "f")));
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
	ASSERT_EQ(0, make_file(AT(p, box->grant, "f")));
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

TEST_HARNESS_MAIN
