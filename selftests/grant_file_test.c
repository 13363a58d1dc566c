/* A file grant is its data only: the file's mode, owner, times, attributes
 * and size are never set through it, nor those of a device node below a
 * directory grant, even raced against an exchange for a file. */
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
	ASSERT_EQ(0, make_file(path));
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

TEST_HARNESS_MAIN
