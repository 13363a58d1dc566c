/* One file over 700 lines: one review of one guard (no set-id bit, ever), and every
 * test uses the box, the policy files and the checks on disk of its first 180 lines. */
/* An outside review of the set-id guard: policy/guard.c's rule that fchmod
 * never gives S_ISUID or S_ISGID whatever a policy says, and B's masking of
 * the mode a name is made with inside a write grant (open O_CREAT or
 * O_TMPFILE, mknod).  Each test tries to get a set-id bit (or a mode change
 * the grants do not give) some other way, as root and as nobody, and
 * checks the file on disk afterwards, not only the answers.
 *
 * Tests that expect a refusal sandpit does not make today say so above
 * them: they fail on purpose until the hole is closed. */
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "policy_util.h"
#include "u_state.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

/* write grants need openat2; a forced legacy kernel has none (sandpit_start
 * refuses them) */
#define NEED_OPENAT2()                                        \
	do {                                                  \
		if (!suite_has_openat2())                     \
			SKIP(return, "write grants need openat2"); \
	} while (0)

#define NRES 64
#define NOBODY 65534
#define SET_ID (S_ISUID | S_ISGID)

struct box {
	char grant[64], rgrant[64], fgrant[96];
	long res[NRES]; /* each call's result, or -errno */
	int n;
};

static void note(struct box *b, long r)
{
	if (b->n < NRES)
		b->res[b->n++] = r < 0 ? -errno : r;
}
#define R(call) note(b, (long)(call))

static void rm_rf(const char *d)
{
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", d);
}

/* the user the child runs as: a suite not run by root stays its user */
static uid_t who(uid_t uid)
{
	return geteuid() ? geteuid() : uid;
}

/* a box shared with the child, its write grant made and owned by uid */
static struct box *new_box(struct __test_metadata *_metadata, uid_t uid)
{
	struct box *b = shared_page(sizeof(*b));
	if (!b)
		return NULL;
	strcpy(b->grant, "/tmp/sandpit-revg-XXXXXX");
	if (!mkdtemp(b->grant) || chown(b->grant, who(uid), who(uid)))
		return NULL;
	EXPECT_EQ(0, chmod(b->grant, 0755));
	return b;
}

/* a policy file: the default with `lines` in place of theirs, readable by
 * nobody; or, when minijail, `lines` alone */
static void policy_file(const char *lines, int minijail, char path[32])
{
	if (minijail) {
		strcpy(path, "/tmp/sandpit-policyXXXXXX");
		int fd = mkstemp(path);
		if (fd < 0 || write(fd, lines, strlen(lines)) != (ssize_t)strlen(lines) || close(fd))
			abort();
	} else {
		default_policy_with(lines, path);
	}
	if (chmod(path, 0644))
		abort();
}

/* --- fchmod under policies that allow it in every way the languages can say --- */

struct fchmod_policy {
	const char *text;
	int minijail;
	int plain_ok; /* the policy itself lets fchmod(fd, 0600) through */
};

/* what a minijail file must allow for the child to open, stat and exit
 * (exit_group by number: a minijail-only form, so the file is read as one) */
#define MJ_BASE                                                                          \
	"read: 1\nwrite: 1\nexit: 1\nrt_sigreturn: 1\n231: 1\nopenat: 1\nopen: 1\n" \
	"close: 1\nfstat: 1\nnewfstatat: 1\n"

/* A sandpit file may only say 'process' of fchmod (an allow, or a rule,
 * is refused at its line: policyfile_test); a minijail file's allow and
 * expressions become 'process', whose checks B makes */
static const struct fchmod_policy fchmod_policies[] = {
	{ "fchmod: process\n", 0, 1 },
	{ MJ_BASE "91: 1\n", 1, 1 }, /* fchmod by number */
	{ MJ_BASE "fchmod: 1\n", 1, 1 },
	{ MJ_BASE "fchmod: arg1 in ~04000 || arg1 in ~02000\n", 1, 1 },
	{ MJ_BASE "fchmod: arg1 == 04755 || arg1 == 04777\n", 1, 1 },
	{ MJ_BASE "fchmod: arg1 == 0 || arg1 & 06000\n", 1, 1 },
};

/* modes with a set-id bit, some with bits above the 16 the kernel keeps */
static const unsigned long set_id_modes[] = {
	04755, 02755, 06755, 04000, 02000, 0x100000000ul | 04755, 0xffffffff00000000ul | 02711,
	0xffffffffffffffff,
};
#define NSETID (sizeof(set_id_modes) / sizeof(set_id_modes[0]))

static int ops_fchmod(void *a)
{
	struct box *b = a;
	char p[96];
	snprintf(p, sizeof(p), "%s/f", b->grant);
	int fd = open(p, O_CREAT | O_RDWR | O_EXCL, 0644);
	R(fd);
	if (fd < 0)
		return 1;
	for (size_t i = 0; i < NSETID; i++)
		R(syscall(SYS_fchmod, fd, set_id_modes[i]));
	R(fchmod(fd, 0600));
	struct stat st;
	R(fstat(fd, &st) == 0 ? (long)(st.st_mode & 07777) : -1);
	close(fd);
	return 0;
}

static void fchmod_under(struct __test_metadata *_metadata, const struct fchmod_policy *fp,
			 uid_t uid)
{
	struct box *b = new_box(_metadata, uid);
	ASSERT_NE(NULL, b);
	char file[32];
	policy_file(fp->text, fp->minijail, file);
	const char *w[] = { b->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .policy_file = file, .allow_write = w };
	int st = run_sandboxed_as(uid, 0, 0, ops_fchmod, b, &o, 60);
	unlink(file);
	ASSERT_EQ(0, outcome(st)) TH_LOG("uid %d, policy:\n%s", uid, fp->text);
	/* every attempt reached the call */
	ASSERT_EQ((int)NSETID + 3, b->n) TH_LOG("uid %d, policy:\n%s", uid, fp->text);
	ASSERT_LE(0, b->res[0]);
	for (size_t i = 0; i < NSETID; i++) {
		EXPECT_EQ(-EPERM, b->res[1 + i])
		TH_LOG("uid %d, mode %#lx, policy:\n%s", uid, set_id_modes[i], fp->text);
	}
	EXPECT_EQ(fp->plain_ok ? 0 : -EPERM, b->res[NSETID + 1]) TH_LOG("%s", fp->text);
	EXPECT_EQ(fp->plain_ok ? 0600 : 0644, b->res[NSETID + 2]) TH_LOG("%s", fp->text);
	char p[96];
	struct stat s;
	snprintf(p, sizeof(p), "%s/f", b->grant);
	ASSERT_EQ(0, stat(p, &s));
	EXPECT_EQ(0u, s.st_mode & SET_ID) TH_LOG("made %o", s.st_mode & 07777);
	rm_rf(b->grant);
	munmap(b, sizeof(*b));
}

TEST(fchmod_gives_no_set_id_bit_under_any_policy_that_allows_it)
{
	NEED_OPENAT2();
	for (size_t i = 0; i < sizeof(fchmod_policies) / sizeof(fchmod_policies[0]); i++) {
		fchmod_under(_metadata, &fchmod_policies[i], 0);
		fchmod_under(_metadata, &fchmod_policies[i], NOBODY);
	}
}

/* --- every other way the default policy leaves to give a mode --- */

static const char *const made[] = { "o_hi", "oat_hi", "n", "nat", "d", "sgd", "t" };
#define NMADE (sizeof(made) / sizeof(made[0]))

static int ops_other_ways(void *a)
{
	struct box *b = a;
	char p[128], q[64];
	int dfd = open(b->grant, O_RDONLY | O_DIRECTORY);
	R(dfd);
	snprintf(p, sizeof(p), "%s/f", b->grant);
	int fd = open(p, O_CREAT | O_RDWR | O_EXCL, 0644);
	R(fd);
	/* chmod by path in every spelling: the name, a descriptor's magic
	 * link, the directory and "", with and without flags */
	R(chmod(p, 04755));
	R(syscall(SYS_fchmodat, AT_FDCWD, p, 02755));
	R(syscall(SYS_fchmodat, dfd, "f", 0x100000000ul | 06755));
	R(syscall(SYS_fchmodat2, dfd, "f", 04755, 0));
	R(syscall(SYS_fchmodat2, dfd, "f", 04755, AT_SYMLINK_NOFOLLOW));
	R(syscall(SYS_fchmodat2, fd, "", 04755, AT_EMPTY_PATH));
	snprintf(q, sizeof(q), "/proc/self/fd/%d", fd);
	R(chmod(q, 04755));
	R(syscall(SYS_fchmodat2, AT_FDCWD, q, 02755, 0));
	close(fd);
	/* names made with set-id in a mode register whose high half is set */
	snprintf(p, sizeof(p), "%s/o_hi", b->grant);
	R(fd = (int)syscall(SYS_open, p, O_CREAT | O_WRONLY | O_EXCL, 0xffffffff00004755ul));
	close(fd);
	R(fd = (int)syscall(SYS_openat, dfd, "oat_hi", O_CREAT | O_WRONLY | O_EXCL,
			    0x1000000000006755ul));
	close(fd);
	snprintf(p, sizeof(p), "%s/n", b->grant);
	R(syscall(SYS_mknod, p, 0xffff000000000000ul | S_IFREG | 04755, 0));
	R(syscall(SYS_mknodat, dfd, "nat", S_IFREG | 06755, 0));
	R(syscall(SYS_mkdirat, dfd, "d", 06755));
	R(syscall(SYS_mkdirat, dfd, "sgd", 02777));
	/* O_TMPFILE given a mode with high bits, then named by its magic link */
	fd = (int)syscall(SYS_openat, dfd, ".", O_TMPFILE | O_RDWR, 0xffffffffffffffff);
	R(fd);
	snprintf(q, sizeof(q), "/proc/self/fd/%d", fd);
	R(linkat(AT_FDCWD, q, dfd, "t", AT_SYMLINK_FOLLOW));
	struct stat st;
	R(fd >= 0 && fstat(fd, &st) == 0 ? (long)(st.st_mode & 07777) : -1);
	close(fd);
	close(dfd);
	return 0;
}

static void other_ways_as(struct __test_metadata *_metadata, uid_t uid)
{
	struct box *b = new_box(_metadata, uid);
	ASSERT_NE(NULL, b);
	const char *w[] = { b->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	ASSERT_EQ(0, outcome(run_sandboxed_as(uid, 0, 0, ops_other_ways, b, &o, 60))) TH_LOG("uid %d", uid);
	ASSERT_EQ(19, b->n) TH_LOG("uid %d", uid);
	ASSERT_LE(0, b->res[0]);
	ASSERT_LE(0, b->res[1]);
	/* every chmod spelling: refused, whatever the reason */
	for (int i = 2; i < 10; i++) {
		EXPECT_GT(0, b->res[i]) TH_LOG("uid %d, chmod %d gave %ld", uid, i - 2, b->res[i]);
	}
	EXPECT_EQ(-EPERM, b->res[2]);
	EXPECT_EQ(-EPERM, b->res[3]);
	EXPECT_EQ(-EPERM, b->res[4]);
	EXPECT_EQ(-EPERM, b->res[5]);
	char p[128];
	struct stat st;
	snprintf(p, sizeof(p), "%s/f", b->grant);
	ASSERT_EQ(0, stat(p, &st));
	EXPECT_EQ(0644u, st.st_mode & 07777);
	/* whatever was made carries no set-id bit */
	for (size_t i = 0; i < NMADE; i++) {
		snprintf(p, sizeof(p), "%s/%s", b->grant, made[i]);
		if (lstat(p, &st) == 0) {
			EXPECT_EQ(0u, st.st_mode & SET_ID)
			TH_LOG("uid %d: %s made %o", uid, made[i], st.st_mode & 07777);
		}
	}
	EXPECT_EQ(0, b->res[18] < 0 ? 0 : b->res[18] & SET_ID) TH_LOG("O_TMPFILE %lo", b->res[18]);
	rm_rf(b->grant);
	munmap(b, sizeof(*b));
}

TEST(no_other_call_of_the_default_policy_gives_a_set_id_bit)
{
	NEED_OPENAT2();
	other_ways_as(_metadata, 0);
	other_ways_as(_metadata, NOBODY);
}

/* --- file capabilities: the set-uid bit's twin, in an extended attribute --- */

/* a version-2 security.capability value: cap_setuid permitted and effective */
static const unsigned char setuid_cap[20] = {
	0x01, 0x00, 0x00, 0x02, /* VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE */
	0x80, 0x00, 0x00, 0x00, /* permitted: bit 7, CAP_SETUID */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static int ops_file_caps(void *a)
{
	struct box *b = a;
	char p[96];
	snprintf(p, sizeof(p), "%s/c", b->grant);
	int fd = open(p, O_CREAT | O_RDWR | O_EXCL, 0755);
	R(fd);
	R(fsetxattr(fd, "security.capability", setuid_cap, sizeof(setuid_cap), 0));
	R(fsetxattr(fd, "user.ok", "x", 1, 0)); /* the policy's allow, in force */
	close(fd);
	return 0;
}

/* A policy that allows fsetxattr gets no guard for its name: what keeps a
 * file capability out is only that sandpit dropped CAP_SETFCAP. */
TEST(a_policy_allowing_fsetxattr_gives_no_file_capability)
{
	NEED_OPENAT2();
	struct box *b = new_box(_metadata, 0);
	ASSERT_NE(NULL, b);
	char file[32];
	policy_file("fsetxattr: process\n", 0, file);
	const char *w[] = { b->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .policy_file = file, .allow_write = w };
	ASSERT_EQ(0, outcome(run_sandboxed_as(0, 0, 0, ops_file_caps, b, &o, 60)));
	unlink(file);
	ASSERT_EQ(3, b->n);
	ASSERT_LE(0, b->res[0]);
	EXPECT_EQ(-EPERM, b->res[1]);
	char p[96], v[64];
	snprintf(p, sizeof(p), "%s/c", b->grant);
	EXPECT_EQ(-1, getxattr(p, "security.capability", v, sizeof(v)));
	/* user xattrs may be off on this file system: then the call said so */
	EXPECT_TRUE(b->res[2] == 0 || b->res[2] == -EOPNOTSUPP) TH_LOG("user.ok: %ld", b->res[2]);
	rm_rf(b->grant);
	munmap(b, sizeof(*b));
}

/* --- a descriptor's mode outside the write grants --- */

/* system.posix_acl_access giving nobody rwx, the rest as 0644 */
static const unsigned char acl_nobody_rwx[] = {
	2, 0, 0, 0,                     /* POSIX_ACL_XATTR_VERSION */
	0x01, 0, 6, 0, 0xff, 0xff, 0xff, 0xff, /* ACL_USER_OBJ rw- */
	0x02, 0, 7, 0, 0xfe, 0xff, 0, 0, /* ACL_USER 65534 rwx */
	0x04, 0, 4, 0, 0xff, 0xff, 0xff, 0xff, /* ACL_GROUP_OBJ r-- */
	0x10, 0, 7, 0, 0xff, 0xff, 0xff, 0xff, /* ACL_MASK rwx */
	0x20, 0, 4, 0, 0xff, 0xff, 0xff, 0xff, /* ACL_OTHER r-- */
};

static int ops_mode_outside(void *a)
{
	struct box *b = a;
	char p[128];
	snprintf(p, sizeof(p), "%s/r", b->rgrant);
	int fd = open(p, O_RDONLY);
	R(fd);
	R(futimens(fd, NULL)); /* B's check of a descriptor's file: EACCES */
	R(fchmod(fd, 0666));
	close(fd);
	fd = open(b->fgrant, O_RDWR);
	R(fd);
	R(fchmod(fd, 0666)); /* a file grant is its data, never its mode */
	close(fd);
	snprintf(p, sizeof(p), "%s/a", b->rgrant);
	fd = open(p, O_RDONLY);
	R(fd);
	R(fsetxattr(fd, "system.posix_acl_access", acl_nobody_rwx, sizeof(acl_nobody_rwx), 0));
	close(fd);
	return 0;
}

/* Fails on main: the guard's only rule on fchmod is "no set-id bit", so a
 * policy that allows fchmod (or fsetxattr) lets the program change the
 * mode (or ACL) of any file it may open: a read grant's file (root owns
 * /etc's, which the default policy grants for reading) made world
 * writable, a file grant's mode changed.  futimens on the same
 * descriptor is refused (B checks its file against the write grants);
 * fchmod and fsetxattr have no such check. */
TEST(a_policy_allowing_fchmod_changes_no_mode_outside_the_write_grants)
{
	NEED_OPENAT2();
	struct box *b = new_box(_metadata, 0);
	ASSERT_NE(NULL, b);
	strcpy(b->rgrant, "/tmp/sandpit-revg-r-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(b->rgrant));
	ASSERT_EQ(0, chmod(b->rgrant, 0755));
	char r[128], acl[128];
	snprintf(r, sizeof(r), "%s/r", b->rgrant);
	snprintf(acl, sizeof(acl), "%s/a", b->rgrant);
	snprintf(b->fgrant, sizeof(b->fgrant), "%s/fg", b->grant);
	int fd;
	const char *files[] = { r, acl, b->fgrant };
	for (int i = 0; i < 3; i++) {
		ASSERT_LE(0, fd = open(files[i], O_CREAT | O_WRONLY | O_EXCL, 0644));
		close(fd);
	}
	char file[32];
	policy_file("fchmod: process\nfsetxattr: process\n", 0, file);
	/* the file grant alone (its directory is no grant) */
	const char *rd[] = { b->rgrant, NULL }, *w[] = { b->fgrant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .policy_file = file,
				     .allow_read = rd, .allow_write = w };
	ASSERT_EQ(0, outcome(run_sandboxed_as(0, 0, 0, ops_mode_outside, b, &o, 60)));
	unlink(file);
	ASSERT_EQ(7, b->n);
	ASSERT_LE(0, b->res[0]);
	EXPECT_EQ(-EACCES, b->res[1]);
	EXPECT_GT(0, b->res[2]) TH_LOG("fchmod of a read grant's file: %ld", b->res[2]);
	ASSERT_LE(0, b->res[3]);
	EXPECT_GT(0, b->res[4]) TH_LOG("fchmod of a file grant: %ld", b->res[4]);
	ASSERT_LE(0, b->res[5]);
	EXPECT_GT(0, b->res[6]) TH_LOG("ACL on a read grant's file: %ld", b->res[6]);
	struct stat st;
	char v[128];
	ASSERT_EQ(0, stat(r, &st));
	EXPECT_EQ(0644u, st.st_mode & 07777);
	ASSERT_EQ(0, stat(b->fgrant, &st));
	EXPECT_EQ(0644u, st.st_mode & 07777);
	EXPECT_EQ(-1, getxattr(acl, "system.posix_acl_access", v, sizeof(v)))
	TH_LOG("%s got an ACL", acl);
	rm_rf(b->rgrant);
	rm_rf(b->grant);
	munmap(b, sizeof(*b));
}

/* --- a set-id file already there: its bit kept, its content the program's --- */

static int ops_rewrite_set_id(void *a)
{
	struct box *b = a;
	char p[128], q[128];
	/* a set-uid file of a read grant, linked into the write grant by
	 * name and by its descriptor's magic link */
	snprintf(p, sizeof(p), "%s/s", b->rgrant);
	snprintf(q, sizeof(q), "%s/ln", b->grant);
	R(link(p, q));
	int fd = open(p, O_RDONLY);
	R(fd);
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	snprintf(q, sizeof(q), "%s/ln2", b->grant);
	R(linkat(AT_FDCWD, p, AT_FDCWD, q, AT_SYMLINK_FOLLOW));
	close(fd);
	/* the set-uid file inside the write grant, rewritten through a
	 * shared mapping: the kernel clears the bit on write(2), not here */
	snprintf(p, sizeof(p), "%s/s", b->grant);
	fd = open(p, O_RDWR);
	R(fd);
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	R(m == MAP_FAILED ? -1 : 0);
	if (m != MAP_FAILED) {
		memcpy(m, "#!/bin/sh\nid\n", 14);
		R(msync(m, 4096, MS_SYNC));
		munmap(m, 4096);
	}
	close(fd);
	return 0;
}

/* Fails on main: a write grant that holds a set-id file (put there from
 * outside: the program cannot make one) lets the program put its own
 * bytes in it while the bit stays, through a shared mapping, which the
 * kernel does not clear the bit for (write(2) would).  That is a set-id
 * program of the program's making, as a set-id bit given would be.  Found
 * by: a 04755 file in the grant, open O_RDWR, mmap MAP_SHARED, memcpy. */
TEST(a_set_id_file_in_a_write_grant_never_takes_the_programs_bytes_with_its_bit)
{
	NEED_OPENAT2();
	struct box *b = new_box(_metadata, 0);
	ASSERT_NE(NULL, b);
	strcpy(b->rgrant, "/tmp/sandpit-revg-r-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(b->rgrant));
	ASSERT_EQ(0, chmod(b->rgrant, 0755));
	char p[128], q[128];
	static char body[4096];
	memset(body, 'A', sizeof(body));
	const char *dirs[] = { b->rgrant, b->grant };
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/s", dirs[i]);
		int fd = open(p, O_CREAT | O_WRONLY | O_EXCL, 0755);
		ASSERT_LE(0, fd);
		ASSERT_EQ((ssize_t)sizeof(body), write(fd, body, sizeof(body)));
		ASSERT_EQ(0, fchmod(fd, 04755));
		close(fd);
	}
	const char *rd[] = { b->rgrant, NULL }, *w[] = { b->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = rd, .allow_write = w };
	ASSERT_EQ(0, outcome(run_sandboxed_as(0, 0, 0, ops_rewrite_set_id, b, &o, 60)));
	ASSERT_LE(4, b->n);
	EXPECT_GT(0, b->res[0]) TH_LOG("link of a read grant's set-uid file into the write grant");
	ASSERT_LE(0, b->res[1]);
	EXPECT_GT(0, b->res[2]) TH_LOG("linkat of its magic link into the write grant");
	snprintf(q, sizeof(q), "%s/ln", b->grant);
	struct stat st;
	EXPECT_EQ(-1, lstat(q, &st));
	snprintf(q, sizeof(q), "%s/ln2", b->grant);
	EXPECT_EQ(-1, lstat(q, &st));
	/* the rewrite: refused somewhere on the way, or the bit is gone */
	snprintf(p, sizeof(p), "%s/s", b->grant);
	ASSERT_EQ(0, stat(p, &st));
	int fd = open(p, O_RDONLY);
	ASSERT_LE(0, fd);
	char head[2];
	ASSERT_EQ(2, read(fd, head, 2));
	close(fd);
	int rewritten = head[0] == '#' && head[1] == '!';
	EXPECT_FALSE(rewritten && (st.st_mode & S_ISUID))
	TH_LOG("%d attempts (link %ld, linkat %ld); the program's bytes in a %o file", b->n,
	       b->res[0], b->res[2], st.st_mode & 07777);
	rm_rf(b->rgrant);
	rm_rf(b->grant);
	munmap(b, sizeof(*b));
}

static int ops_open_set_gid_no_exec(void *a)
{
	struct box *b = a;
	char p[128];
	snprintf(p, sizeof(p), "%s/g", b->grant);
	static const int how[] = { O_WRONLY, O_RDWR, O_WRONLY | O_TRUNC, O_RDWR | O_APPEND };
	for (unsigned i = 0; i < sizeof(how) / sizeof(how[0]); i++) {
		int fd = open(p, how[i]);
		R(fd < 0 ? -errno : fd);
		if (fd >= 0)
			close(fd);
	}
	int fd = open(p, O_RDONLY); /* reading it stays allowed */
	R(fd < 0 ? -errno : 0);
	if (fd >= 0)
		close(fd);
	return 0;
}

/* A set-gid file without group execute is no set-gid program today, but
 * an ACL giving its group execute (or a chmod from outside) makes it one
 * with the bytes the program put in: any set-id bit keeps a file from
 * being opened for writing, as root and as nobody, in both modes. */
TEST(a_set_gid_file_without_group_execute_is_never_opened_for_writing)
{
	NEED_OPENAT2();
	static const uid_t as[] = { 0, NOBODY };
	for (int u = 0; u < 2; u++) {
		struct box *b = new_box(_metadata, as[u]);
		ASSERT_NE(NULL, b);
		char p[128];
		snprintf(p, sizeof(p), "%s/g", b->grant);
		int fd = open(p, O_CREAT | O_WRONLY | O_EXCL, 0644);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, fchown(fd, who(as[u]), who(as[u])));
		ASSERT_EQ(0, fchmod(fd, 02644));
		close(fd);
		const char *w[] = { b->grant, NULL };
		struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
		ASSERT_EQ(0, outcome(run_sandboxed_as(as[u], 0, 0, ops_open_set_gid_no_exec, b, &o, 60)));
		ASSERT_EQ(5, b->n);
		for (int k = 0; k < 4; k++) {
			EXPECT_EQ(-EACCES, b->res[k]);
		}
		EXPECT_EQ(0, b->res[4]) TH_LOG("uid %d: a read open of it", (int)as[u]);
		struct stat st;
		ASSERT_EQ(0, stat(p, &st));
		EXPECT_EQ(02644u, (unsigned)(st.st_mode & 07777));
		TH_LOG("uid %d: %d opens made, write opens %ld %ld %ld %ld", (int)as[u], b->n,
		       b->res[0], b->res[1], b->res[2], b->res[3]);
		rm_rf(b->grant);
		munmap(b, sizeof(*b));
	}
}

/* --- calls newer than the tables: setxattrat and its kin (6.13) --- */

struct xattr_args_v0 {
	uint64_t value;
	uint32_t size, flags;
};

static int ops_newer_calls(void *a)
{
	struct box *b = a;
	char p[128];
	struct xattr_args_v0 xa = { (uintptr_t)acl_nobody_rwx, sizeof(acl_nobody_rwx), 0 };
	struct xattr_args_v0 cap = { (uintptr_t)setuid_cap, sizeof(setuid_cap), 0 };
	const char *dirs[] = { b->grant, b->rgrant };
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/f", dirs[i]);
		R(syscall(463, AT_FDCWD, p, 0, "system.posix_acl_access", &xa, sizeof(xa)));
		R(syscall(463, AT_FDCWD, p, 0, "security.capability", &cap, sizeof(cap)));
		R(syscall(463, AT_FDCWD, p, 0, "user.rg", &xa, sizeof(xa)));
		int fd = open(p, O_RDONLY);
		R(fd);
		R(syscall(463, fd, "", AT_EMPTY_PATH, "user.rg", &xa, sizeof(xa)));
		close(fd);
	}
	return 0;
}

/* The kinds table does not know setxattrat (463): it is never made,
 * whatever its target, in both modes. */
TEST(setxattrat_which_the_tables_do_not_know_is_never_made)
{
	NEED_OPENAT2();
	struct box *b = new_box(_metadata, 0);
	ASSERT_NE(NULL, b);
	strcpy(b->rgrant, "/tmp/sandpit-revg-r-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(b->rgrant));
	ASSERT_EQ(0, chmod(b->rgrant, 0755));
	char p[2][128];
	const char *dirs[] = { b->grant, b->rgrant };
	for (int i = 0; i < 2; i++) {
		snprintf(p[i], sizeof(p[i]), "%s/f", dirs[i]);
		int fd = open(p[i], O_CREAT | O_WRONLY | O_EXCL, 0755);
		ASSERT_LE(0, fd);
		close(fd);
	}
	const char *rd[] = { b->rgrant, NULL }, *w[] = { b->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = rd, .allow_write = w };
	ASSERT_EQ(0, outcome(run_sandboxed_as(0, 0, 0, ops_newer_calls, b, &o, 60)));
	ASSERT_EQ(10, b->n);
	for (int i = 0; i < 10; i++) {
		if (i == 3 || i == 8) {
			ASSERT_LE(0, b->res[i]);
		} else {
			EXPECT_EQ(-ENOSYS, b->res[i]) TH_LOG("call %d", i);
		}
	}
	char v[128];
	for (int i = 0; i < 2; i++) {
		EXPECT_EQ(-1, getxattr(p[i], "system.posix_acl_access", v, sizeof(v)));
		EXPECT_EQ(-1, getxattr(p[i], "security.capability", v, sizeof(v)));
		EXPECT_EQ(-1, getxattr(p[i], "user.rg", v, sizeof(v)));
	}
	rm_rf(b->rgrant);
	rm_rf(b->grant);
	munmap(b, sizeof(*b));
}

/* --- fchmod's mode rewritten in the mailbox while T checks it --- */

struct mode_race {
	volatile long writes, calls, landed, set_seen, bad, done, stopped;
	volatile int fd;
	char grant[64];
};
static struct mode_race *MR;
static struct mailbox *volatile mode_victim;

/* the victim's request, once it is in the mailbox, made fchmod(fd, 04755) */
static void *rewrite_mode(void *a)
{
	(void)a;
	while (!mode_victim)
		;
	struct mailbox *mb = mode_victim;
	uint64_t args[6] = { (uint64_t)MR->fd, 04755 };
	while (!MR->done) {
		mb->payload.nr = SYS_fchmod;
		memcpy(mb->payload.args, args, sizeof(args));
		mb->nr = SYS_fchmod;
		memcpy(mb->args, args, sizeof(args));
		MR->writes++;
	}
	MR->stopped = 1;
	return NULL;
}

static int body_mode_race(void *a)
{
	(void)a;
	char p[96];
	snprintf(p, sizeof(p), "%s/f", MR->grant);
	MR->fd = open(p, O_RDWR);
	if (MR->fd < 0)
		return 1;
	pthread_t w;
	mode_victim = my_mailbox();
	if (pthread_create(&w, NULL, rewrite_mode, NULL))
		return 2;
	/* 20000 calls, and on until a rewrite has landed (20 s at most) */
	time_t until = time(NULL) + 20;
	for (long i = 0; i < 20000 || (!MR->landed && time(NULL) < until); i++) {
		long r = syscall(SYS_fchmod, MR->fd, 0600);
		MR->calls++;
		if (r < 0 && errno == EPERM)
			MR->landed++; /* T checked the rewritten mode, and refused it */
		else if (r < 0)
			MR->bad++;
		struct stat st;
		/* a stat rewritten into the fchmod fails: only a success counts */
		if (syscall(SYS_fstat, MR->fd, &st) == 0 && (st.st_mode & SET_ID))
			MR->set_seen++;
	}
	MR->done = 1;
	while (!MR->stopped)
		;
	pthread_join(w, NULL);
	return 0;
}

/* T loads a request once: a mode rewritten after its check is never the
 * one the kernel gets.  A policy that allows fchmod; another thread turns
 * every request of the victim's into fchmod(fd, 04755). */
TEST(race_fchmod_mode_rewritten_in_the_mailbox_never_gives_a_set_id_bit)
{
	NEED_OPENAT2();
	MR = shared_page(sizeof(*MR));
	ASSERT_NE(NULL, MR);
	strcpy(MR->grant, "/tmp/sandpit-revg-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(MR->grant));
	char p[96];
	snprintf(p, sizeof(p), "%s/f", MR->grant);
	int fd = open(p, O_CREAT | O_WRONLY | O_EXCL, 0644);
	ASSERT_LE(0, fd);
	close(fd);
	char file[32];
	policy_file("fchmod: process\n", 0, file);
	const char *w[] = { MR->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .policy_file = file, .allow_write = w };
	int r = outcome(run_sandboxed_opts(body_mode_race, NULL, &o, 60));
	unlink(file);
	TH_LOG("outcome %d, rewrites %ld, calls %ld, refused %ld, other errors %ld, set-id seen %ld",
	       r, MR->writes, MR->calls, MR->landed, MR->bad, MR->set_seen);
	EXPECT_EQ(0, r);
	EXPECT_LT(0, MR->writes);
	EXPECT_LT(0, MR->landed);
	EXPECT_EQ(0, MR->set_seen);
	struct stat st;
	ASSERT_EQ(0, stat(p, &st));
	EXPECT_EQ(0u, st.st_mode & SET_ID) TH_LOG("left %o", st.st_mode & 07777);
	rm_rf(MR->grant);
}

/* --- a set-gid write grant: what the kernel passes on, and what it may not --- */

static int ops_in_set_gid_dir(void *a)
{
	struct box *b = a;
	char p[128];
	int fd;
	snprintf(p, sizeof(p), "%s/o", b->grant);
	R(fd = open(p, O_CREAT | O_WRONLY | O_EXCL, 02755));
	close(fd);
	snprintf(p, sizeof(p), "%s/n", b->grant);
	R(mknod(p, S_IFREG | 02755, 0));
	snprintf(p, sizeof(p), "%s/d", b->grant);
	R(mkdir(p, 0755));
	snprintf(p, sizeof(p), "%s/d/o", b->grant);
	R(fd = open(p, O_CREAT | O_WRONLY | O_EXCL, 06777));
	close(fd);
	return 0;
}

/* Files made in a set-gid directory get its group, never its bit (B's
 * mask); a directory made there inherits S_ISGID from the kernel, as
 * natively: a set-gid directory runs nothing, so that is no set-id bit
 * given (THREATS.md's "never given" reads as: on no file). */
TEST(names_made_in_a_set_gid_write_grant_are_files_without_set_id_bits)
{
	NEED_OPENAT2();
	for (int u = 0; u < 2; u++) {
		uid_t uid = u ? NOBODY : 0;
		struct box *b = new_box(_metadata, uid);
		ASSERT_NE(NULL, b);
		ASSERT_EQ(0, chmod(b->grant, 02777));
		const char *w[] = { b->grant, NULL };
		struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
		ASSERT_EQ(0, outcome(run_sandboxed_as(uid, 0, 0, ops_in_set_gid_dir, b, &o, 60)));
		ASSERT_EQ(4, b->n);
		const char *names[] = { "o", "n", "d/o" };
		for (int i = 0; i < 3; i++) {
			char p[128];
			struct stat st;
			snprintf(p, sizeof(p), "%s/%s", b->grant, names[i]);
			ASSERT_EQ(0, lstat(p, &st)) TH_LOG("uid %d: %s", uid, names[i]);
			EXPECT_TRUE(S_ISREG(st.st_mode));
			EXPECT_EQ(0u, st.st_mode & SET_ID)
			TH_LOG("uid %d: %s made %o", uid, names[i], st.st_mode & 07777);
		}
		rm_rf(b->grant);
		munmap(b, sizeof(*b));
	}
}

TEST_HARNESS_MAIN
