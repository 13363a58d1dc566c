/* The calls the trusted process answers itself, from the object its check opened: statx, access
 * (faccessat, faccessat2) and readlink (readlinkat), beside the stat
 * family of grant_test.  Each answers as the kernel does, case by case
 * (results, errnos, the bytes written to the buffer, faults as EFAULT),
 * natively and sandboxed on the same tree, and the cases that reach a
 * file are seen to be answered by B (the verdict in the secure page).
 * And none of them answers about an object outside the grants when a
 * directory is swapped for a symlink out of the grant while B checks it
 * (invariant 2: the kernel walks the path once, from B's check). */
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "swap_race.h"
#include "u_state.h"

#define AT(buf, dir, name) (snprintf(buf, sizeof(buf), "%s/%s", dir, name), buf)

/* B answers access only where the kernel has faccessat2 (5.8+); the suite
 * forces it off with legacy */
static int suite_has_faccessat2(void)
{
	const char *k = getenv("SANDPIT_KERNEL");
	return !k || (strcmp(k, "legacy") && !strstr(k, "no-faccessat2"));
}

static void rm_rf(const char *d)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", d);
}

static int make(const char *path, mode_t mode)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
	if (fd < 0)
		return -1;
	int r = write(fd, "data\n", 5) == 5 ? 0 : -1;
	close(fd);
	return chmod(path, mode) || r;
}

static int sandboxed(void)
{
	return sandpit_mode() != SANDPIT_MODE_NONE;
}

/* the verdict of this thread's last request to B was B's own answer */
static int by_b(void)
{
	return state_of(my_mailbox())->sp->verdict == -SP_ANSWERED;
}

/* ------------------------------------------------- against native */

#define NCASE 24
#define LONG_TARGET 3500 /* longer than an answer's room (SP_ANSWER_MAX) */
struct cases {
	char dir[64];
	char *ro; /* a read-only page */
	long res[NCASE];
	int answered[NCASE];
	struct statx stx[NCASE];
	char buf[NCASE][64];
	char big[4096]; /* the long link's target, read back */
};

/* a tree: f (0644), x (0755), d/, lf -> f, ld -> d, lnx -> nx (dangling),
 * lt -> "target-of-lt", long -> LONG_TARGET bytes */
static void make_tree(struct __test_metadata *_metadata, char *dir)
{
	char p[128], target[LONG_TARGET + 1];
	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, make(AT(p, dir, "f"), 0644));
	ASSERT_EQ(0, make(AT(p, dir, "x"), 0755));
	ASSERT_EQ(0, mkdir(AT(p, dir, "d"), 0750));
	ASSERT_EQ(0, symlink("f", AT(p, dir, "lf")));
	ASSERT_EQ(0, symlink("d", AT(p, dir, "ld")));
	ASSERT_EQ(0, symlink("nx", AT(p, dir, "lnx")));
	ASSERT_EQ(0, symlink("target-of-lt", AT(p, dir, "lt")));
	memset(target, 'a', LONG_TARGET);
	target[LONG_TARGET] = '\0';
	ASSERT_EQ(0, symlink(target, AT(p, dir, "long")));
}

/* Each case i that one knows (NO_CASE: none) in t's tree, with a
 * descriptor of the tree (dfd) and of the link lt (lfd): its result, or
 * -errno, and whether B answered it; the buffers start filled */
#define NO_CASE LONG_MIN
static int run_cases(struct cases *t, long (*one)(struct cases *t, int i, int dfd, int lfd))
{
	if (chdir(t->dir))
		return 1;
	int dfd = open(".", O_RDONLY | O_DIRECTORY);
	int lfd = open("lt", O_PATH | O_NOFOLLOW);
	if (dfd < 0 || lfd < 0)
		return 2;
	for (int i = 0; i < NCASE; i++) {
		memset(&t->stx[i], 0xa5, sizeof(t->stx[i]));
		memset(t->buf[i], 'x', sizeof(t->buf[i]));
		errno = 0;
		long r = one(t, i, dfd, lfd);
		if (r == NO_CASE)
			continue;
		t->res[i] = r < 0 ? -errno : r;
		if (sandboxed())
			t->answered[i] = by_b();
	}
	return 0;
}

static long statx_(int dfd, const char *path, int flags, unsigned mask, void *buf)
{
	return syscall(SYS_statx, dfd, path, flags, mask, buf);
}

static long statx_case(struct cases *t, int i, int dfd, int lfd)
{
	struct statx *b = &t->stx[i];
	long r;
	switch (i) {
	case 0: r = statx_(AT_FDCWD, "f", 0, STATX_BASIC_STATS, b); break;
	case 1: r = statx_(AT_FDCWD, "lf", 0, STATX_BASIC_STATS, b); break;
	case 2: r = statx_(AT_FDCWD, "lf", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, b); break;
	case 3: r = statx_(dfd, "f", AT_STATX_DONT_SYNC, STATX_ALL, b); break;
	case 4: r = statx_(dfd, "d", AT_STATX_FORCE_SYNC | AT_NO_AUTOMOUNT, STATX_TYPE, b); break;
	case 5: r = statx_(AT_FDCWD, "d/", 0, STATX_BASIC_STATS | STATX_BTIME, b); break;
	case 6: r = statx_(AT_FDCWD, "f/", 0, STATX_BASIC_STATS, b); break;  /* ENOTDIR */
	case 7: r = statx_(AT_FDCWD, "nx", 0, STATX_BASIC_STATS, b); break;  /* ENOENT */
	case 8: r = statx_(AT_FDCWD, "lnx", 0, STATX_BASIC_STATS, b); break; /* ENOENT */
	case 9: r = statx_(AT_FDCWD, "lnx", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, b); break;
	case 10: r = statx_(AT_FDCWD, "f", 0, STATX__RESERVED, b); break;   /* EINVAL */
	case 11: r = statx_(AT_FDCWD, "nx", AT_STATX_FORCE_SYNC | AT_STATX_DONT_SYNC,
			    STATX_BASIC_STATS, b); break;                      /* EINVAL */
	case 12: r = statx_(AT_FDCWD, "nx", AT_REMOVEDIR, STATX_BASIC_STATS, b); break; /* EINVAL */
	case 13: r = statx_(AT_FDCWD, "f", 0, STATX_BASIC_STATS, NULL); break; /* EFAULT */
	case 14: r = statx_(AT_FDCWD, "f", 0, STATX_BASIC_STATS, t->ro); break; /* EFAULT */
	case 15: r = statx_(AT_FDCWD, "nx", 0, STATX_BASIC_STATS, NULL); break; /* ENOENT */
	case 16: r = statx_(AT_FDCWD, "d/../lf", 0, STATX_BASIC_STATS, b); break;
	case 17: r = statx_(dfd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, b); break; /* the fd's */
	case 18: r = statx_(AT_FDCWD, "ld/", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, b); break;
	case 19: r = statx_(AT_FDCWD, "", 0, STATX_BASIC_STATS, b); break;   /* ENOENT */
	case 20: r = statx_(dfd, NULL, AT_EMPTY_PATH, STATX_BASIC_STATS, b); break; /* 6.11+ */
	default: return NO_CASE;
	}
	return r;
}

static int statx_cases(void *a)
{
	return run_cases(a, statx_case);
}

/* fn natively, then sandboxed with a read grant on the same tree (made by
 * make_tree, then prep if given): the same results, case by case */
static void run_both(struct __test_metadata *_metadata, int (*fn)(void *),
		     int (*prep)(const char *dir), struct cases **nat_out, struct cases **box_out)
{
	struct cases *nat = shared_page(sizeof(*nat)), *box = shared_page(sizeof(*box));
	ASSERT_NE(NULL, nat);
	ASSERT_NE(NULL, box);
	char *ro = mmap(NULL, 4096, PROT_READ, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	strcpy(nat->dir, "/tmp/sandpit-answer-XXXXXX");
	make_tree(_metadata, nat->dir);
	if (prep && prep(nat->dir) < 0) {
		rm_rf(nat->dir);
		SKIP(return, "no user extended attributes on this file system");
	}
	memcpy(box->dir, nat->dir, sizeof(box->dir));
	nat->ro = box->ro = ro;
	ASSERT_EQ(0, run_native_then_sandboxed(fn, nat, box, box->dir));
	for (int i = 0; i < NCASE; i++) {
		EXPECT_EQ(nat->res[i], box->res[i]) TH_LOG("case %d", i);
	}
	*nat_out = nat;
	*box_out = box;
}

static void expect_answered(struct __test_metadata *_metadata, const struct cases *box,
			    const int *yes, size_t nyes, const int *no, size_t nno)
{
	for (size_t i = 0; i < nyes; i++) {
		EXPECT_EQ(1, box->answered[yes[i]]) TH_LOG("case %d answered by B", yes[i]);
	}
	for (size_t i = 0; i < nno; i++) {
		EXPECT_EQ(0, box->answered[no[i]]) TH_LOG("case %d not answered by B", no[i]);
	}
}

TEST(statx_answered_by_b_is_the_kernels)
{
	struct cases *nat = NULL, *box = NULL;
	run_both(_metadata, statx_cases, NULL, &nat, &box);
	if (!box)
		return; /* skipped, or failed */
	for (int i = 0; i < NCASE; i++) {
		struct statx *a = &nat->stx[i], *b = &box->stx[i];
		/* a readlink or a read between the runs may move an access time */
		memset(&a->stx_atime, 0, sizeof(a->stx_atime));
		memset(&b->stx_atime, 0, sizeof(b->stx_atime));
		EXPECT_EQ(0, memcmp(a, b, sizeof(*a))) {
			TH_LOG("case %d: the buffers differ (ino %llu/%llu mask %x/%x)", i,
			       (unsigned long long)a->stx_ino, (unsigned long long)b->stx_ino,
			       a->stx_mask, b->stx_mask);
		}
	}
	/* B answered every case that reached an object, and the bad buffers;
	 * the early EINVALs, the errors of the path and the descriptor's own
	 * call (17) are not answers */
	static const int yes[] = { 0, 1, 2, 3, 4, 5, 9, 13, 14, 16, 18 };
	static const int no[] = { 6, 7, 8, 10, 11, 12, 15, 17, 19, 20 };
	expect_answered(_metadata, box, yes, sizeof(yes) / sizeof(yes[0]), no,
			sizeof(no) / sizeof(no[0]));
	rm_rf(nat->dir);
}

static long faccessat2_(int dfd, const char *path, int mode, int flags)
{
	return syscall(SYS_faccessat2, dfd, path, mode, flags);
}

static long access_case(struct cases *t, int i, int dfd, int lfd)
{
	long r;
	switch (i) {
	case 0: r = access("f", R_OK); break;
	case 1: r = access("f", R_OK | W_OK); break;
	case 2: r = access("f", X_OK); break;          /* EACCES, as root too */
	case 3: r = access("x", X_OK); break;
	case 4: r = access("lf", F_OK); break;
	case 5: r = access("nx", F_OK); break;         /* ENOENT */
	case 6: r = access("f/", F_OK); break;         /* ENOTDIR */
	case 7: r = access("d/", X_OK); break;
	case 8: r = access("lnx", F_OK); break;        /* ENOENT */
	case 9: r = syscall(SYS_faccessat, dfd, "x", X_OK | R_OK); break;
	case 10: r = syscall(SYS_faccessat, dfd, "f", X_OK); break; /* EACCES */
	case 11: r = faccessat2_(AT_FDCWD, "lnx", F_OK, AT_SYMLINK_NOFOLLOW); break;
	case 12: r = faccessat2_(dfd, "x", X_OK, AT_EACCESS); break;
	case 13: r = faccessat2_(dfd, "f", X_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW); break;
	case 14: r = access("f", 8); break;            /* EINVAL */
	case 15: r = access("nx", 8); break;           /* EINVAL before ENOENT */
	case 16: r = faccessat2_(AT_FDCWD, "nx", F_OK, AT_REMOVEDIR); break; /* EINVAL */
	case 17: r = syscall(SYS_access, NULL, F_OK); break;  /* EFAULT */
	case 18: r = access("d/../x", X_OK); break;
	case 19: r = faccessat2_(dfd, "", R_OK, AT_EMPTY_PATH); break; /* the fd's */
	case 20: r = faccessat2_(AT_FDCWD, "lf", R_OK, AT_SYMLINK_NOFOLLOW); break;
	default: return NO_CASE;
	}
	return r;
}

static int access_cases(void *a)
{
	return run_cases(a, access_case);
}

TEST(access_answered_by_b_is_the_kernels)
{
	struct cases *nat = NULL, *box = NULL;
	run_both(_metadata, access_cases, NULL, &nat, &box);
	if (!box)
		return; /* skipped, or failed */
	static const int yes[] = { 0, 1, 2, 3, 4, 7, 9, 10, 11, 12, 13, 18, 20 };
	static const int no[] = { 5, 6, 8, 14, 15, 16, 17, 19 };
	if (suite_has_faccessat2()) {
		expect_answered(_metadata, box, yes, sizeof(yes) / sizeof(yes[0]), no,
				sizeof(no) / sizeof(no[0]));
	} else { /* T made them all */
		expect_answered(_metadata, box, NULL, 0, yes, sizeof(yes) / sizeof(yes[0]));
	}
	rm_rf(nat->dir);
}

static long readlink_case(struct cases *t, int i, int dfd, int lfd)
{
	char *b = t->buf[i];
	long r;
	switch (i) {
	case 0: r = readlink("lf", b, 64); break;
	case 1: r = readlink("lt", b, 64); break;
	case 2: r = readlink("lt", b, 5); break;     /* truncated, no NUL */
	case 3: r = readlink("lt", b, 1); break;
	case 4: r = readlink("f", b, 64); break;     /* EINVAL: not a link */
	case 5: r = readlink("d", b, 64); break;     /* EINVAL */
	case 6: r = readlink("nx", b, 64); break;    /* ENOENT */
	case 7: r = readlink("lnx", b, 64); break;   /* a dangling link is read */
	case 8: r = readlink("lf/", b, 64); break;   /* ENOTDIR: followed to a file */
	case 9: r = readlink("ld/", b, 64); break;   /* EINVAL: followed to a directory */
	case 10: r = readlinkat(dfd, "lt", b, 64); break;
	case 11: r = readlink("d/../lt", b, 64); break;
	case 12: r = syscall(SYS_readlink, "lf", b, 0); break;   /* EINVAL */
	case 13: r = syscall(SYS_readlink, "lf", b, -1); break;  /* EINVAL */
	case 14: r = syscall(SYS_readlink, "nx", b, 0); break;   /* EINVAL before ENOENT */
	case 15: r = syscall(SYS_readlink, "lf", NULL, 64); break;  /* EFAULT */
	case 16: r = syscall(SYS_readlink, "lf", t->ro, 64); break; /* EFAULT */
	case 17: r = syscall(SYS_readlink, "f", NULL, 64); break;   /* EINVAL */
	case 18: r = readlink("long", b, 64); break; /* truncated, answered */
	case 19: /* longer than B's room: T reads it */
		r = readlink("long", t->big, sizeof(t->big));
		break;
	case 20: r = readlinkat(dfd, "", b, 64); break; /* ENOENT: a directory fd */
	case 21: r = readlink("", b, 64); break;     /* ENOENT */
	case 22: r = readlinkat(lfd, "", b, 64); break; /* the O_PATH link's */
	default: return NO_CASE;
	}
	return r;
}

static int readlink_cases(void *a)
{
	return run_cases(a, readlink_case);
}

TEST(readlink_answered_by_b_is_the_kernels)
{
	struct cases *nat = NULL, *box = NULL;
	run_both(_metadata, readlink_cases, NULL, &nat, &box);
	if (!box)
		return; /* skipped, or failed */
	for (int i = 0; i < NCASE; i++) {
		EXPECT_EQ(0, memcmp(nat->buf[i], box->buf[i], sizeof(nat->buf[i])))
		TH_LOG("case %d: the buffers differ: %.64s / %.64s", i, nat->buf[i], box->buf[i]);
	}
	EXPECT_EQ(LONG_TARGET, box->res[19]);
	EXPECT_EQ(12, box->res[22]);
	EXPECT_EQ(0, memcmp(nat->big, box->big, LONG_TARGET));
	static const int yes[] = { 0, 1, 2, 3, 4, 5, 7, 9, 10, 11, 15, 16, 17, 18 };
	static const int no[] = { 6, 8, 12, 13, 14, 19, 20, 21, 22 };
	expect_answered(_metadata, box, yes, sizeof(yes) / sizeof(yes[0]), no,
			sizeof(no) / sizeof(no[0]));
	rm_rf(nat->dir);
}

#define BIG_VALUE 4000 /* longer than an answer's room */
static long xattr_case(struct cases *t, int i, int dfd, int lfd)
{
	static char longname[300];
	if (!longname[0]) {
		memset(longname, 'n', sizeof(longname) - 1);
		memcpy(longname, "user.", 5);
	}
	char *b = t->buf[i];
	long r;
	switch (i) {
	case 0: r = getxattr("f", "user.t", b, 64); break;
	case 1: r = getxattr("f", "user.t", NULL, 0); break;  /* the length */
	case 2: r = getxattr("f", "user.t", b, 2); break;     /* ERANGE */
	case 3: r = getxattr("f", "user.none", b, 64); break; /* ENODATA */
	case 4: r = getxattr("lf", "user.t", b, 64); break;   /* followed */
	case 5: r = lgetxattr("lf", "user.t", b, 64); break;  /* the link's: ENODATA */
	case 6: r = lgetxattr("lf", "system.posix_acl_access", b, 64); break; /* EOPNOTSUPP */
	case 7: r = getxattr("lf", "system.posix_acl_access", b, 64); break;  /* ENODATA */
	case 8: r = lgetxattr("f", "user.t", b, 64); break;
	case 9: r = getxattr("d/", "user.t", b, 64); break;  /* ENODATA */
	case 10: r = getxattr("f/", "user.t", b, 64); break; /* ENOTDIR */
	case 11: r = getxattr("nx", "user.t", b, 64); break; /* ENOENT */
	case 12: r = getxattr("lnx", "user.t", b, 64); break;  /* ENOENT */
	case 13: r = lgetxattr("lnx", "user.t", b, 64); break; /* ENODATA */
	case 14: r = getxattr("f", "", b, 64); break;        /* ERANGE */
	case 15: r = getxattr("f", longname, b, 64); break;  /* ERANGE */
	case 16: r = syscall(SYS_getxattr, "f", "user.t", NULL, 64); break;  /* EFAULT */
	case 17: r = syscall(SYS_getxattr, "f", "user.t", t->ro, 64); break; /* EFAULT */
	case 18: r = syscall(SYS_getxattr, "f", NULL, b, 64); break;         /* EFAULT */
	case 19: r = getxattr("f", "user.big", b, 64); break;   /* ERANGE, from B */
	case 20: /* longer than B's room: T reads it */
		r = getxattr("f", "user.big", t->big, sizeof(t->big));
		break;
	case 21: r = getxattr("f", "user.big", NULL, 0); break;
	case 22: r = getxattr("d/../f", "user.t", b, 64); break;
	default: return NO_CASE;
	}
	return r;
}

static int xattr_cases(void *a)
{
	return run_cases(a, xattr_case);
}

/* f gets user.t = "hello" and user.big, BIG_VALUE bytes */
static int set_xattrs(const char *dir)
{
	char p[128], big[BIG_VALUE];
	memset(big, 'v', sizeof(big));
	if (setxattr(AT(p, dir, "f"), "user.t", "hello", 5, 0) < 0)
		return -1;
	return setxattr(p, "user.big", big, sizeof(big), 0);
}

TEST(getxattr_answered_by_b_is_the_kernels)
{
	struct cases *nat = NULL, *box = NULL;
	run_both(_metadata, xattr_cases, set_xattrs, &nat, &box);
	if (!box)
		return; /* skipped, or failed */
	for (int i = 0; i < NCASE; i++) {
		EXPECT_EQ(0, memcmp(nat->buf[i], box->buf[i], sizeof(nat->buf[i])))
		TH_LOG("case %d: the buffers differ: %.64s / %.64s", i, nat->buf[i], box->buf[i]);
	}
	EXPECT_EQ(5, box->res[0]);
	EXPECT_EQ(BIG_VALUE, box->res[20]);
	EXPECT_EQ(0, memcmp(nat->big, box->big, BIG_VALUE));
	static const int yes[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 14, 16, 17, 19, 21, 22 };
	static const int no[] = { 10, 11, 12, 15, 18, 20 };
	expect_answered(_metadata, box, yes, sizeof(yes) / sizeof(yes[0]), no,
			sizeof(no) / sizeof(no[0]));
	rm_rf(nat->dir);
}

/* ----------------------------------------------------------- races */

/* While the sandboxed body asks about GRANT/d/file again and again, a
 * second process swaps GRANT/d with GRANT/l, a symlink to OUTSIDE (one
 * RENAME_EXCHANGE).  The inside and the outside object answer
 * differently: statx by inode; access(X_OK) is 0 only for the outside
 * file (0755; the inside one is 0644); readlink reads "inside" or
 * "outside", and getxattr(user.w) too.  Every call B answered (`reached`: the verdict in the secure
 * page) is about the object inside; the others are B's refusal of a path
 * it resolved out of the grant (EACCES) or the swap met between its check
 * and its open (ELOOP, ENOENT, ENOTDIR).  None is about the object
 * outside.  (When T made the call from the checked text, a swap after the
 * check made the kernel follow the new link out of the grant.) */
enum { Q_STATX, Q_ACCESS, Q_READLINK, Q_XATTR };

struct race {
	char grant[64], outside[64];
	int op;
	ino_t in_ino, out_ino;
	volatile int stop;
	int calls, reached;
	struct swap_tally t;
};

/* 1: about the inside object, 2: the outside one, 0: neither */
static int race_one(struct race *r, const char *x, int i, long *v)
{
	struct statx stx;
	char buf[16] = "";
	switch (r->op) {
	case Q_STATX:
		*v = statx_(AT_FDCWD, x, (i & 1) ? AT_SYMLINK_NOFOLLOW : 0, STATX_INO, &stx);
		return *v ? 0 : stx.stx_ino == r->in_ino ? 1 : stx.stx_ino == r->out_ino ? 2 : 0;
	case Q_ACCESS:
		*v = access(x, X_OK);
		return *v == 0 ? 2 : errno == EACCES && by_b() ? 1 : 0;
	case Q_READLINK:
	case Q_XATTR:
		*v = r->op == Q_XATTR ? getxattr(x, "user.w", buf, sizeof(buf) - 1) :
					readlink(x, buf, sizeof(buf) - 1);
		if (*v < 0)
			return 0;
		buf[*v] = '\0';
		return !strcmp(buf, "inside") ? 1 : !strcmp(buf, "outside") ? 2 : 0;
	}
	return 0;
}

static int race_body(void *a)
{
	struct race *r = a;
	char x[128];
	snprintf(x, sizeof(x), "%s/d/file", r->grant);
	time_t until = time(NULL) + 20;
	int i;
	for (i = 0; swap_race_more(&r->t, i, until); i++) {
		long v = -1;
		errno = 0;
		int about = race_one(r, x, i, &v);
		int err = errno;
		if (by_b())
			r->reached++;
		swap_tally_add(&r->t, about, v, err);
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
};
FIXTURE_VARIANT_ADD(race, statx) { .op = Q_STATX };
FIXTURE_VARIANT_ADD(race, access) { .op = Q_ACCESS };
FIXTURE_VARIANT_ADD(race, readlink) { .op = Q_READLINK };
FIXTURE_VARIANT_ADD(race, getxattr) { .op = Q_XATTR };

FIXTURE_SETUP(race)
{
	self->r = shared_page(sizeof(*self->r));
	ASSERT_NE(NULL, self->r);
}

FIXTURE_TEARDOWN(race)
{
}

static void make_object(struct __test_metadata *_metadata, int op, const char *path,
			const char *name, ino_t *ino)
{
	struct stat sb;
	if (op == Q_READLINK) {
		ASSERT_EQ(0, symlink(name, path));
	} else {
		ASSERT_EQ(0, make(path, strcmp(name, "inside") ? 0755 : 0644));
	}
	if (op == Q_XATTR && setxattr(path, "user.w", name, strlen(name), 0) < 0)
		SKIP(return, "no user extended attributes on this file system");
	ASSERT_EQ(0, lstat(path, &sb));
	*ino = sb.st_ino;
}

TEST_F(race, swapped_for_a_symlink_out_of_the_grant_never_answers_for_outside)
{
	struct race *r = self->r;
	if (variant->op == Q_ACCESS && !suite_has_faccessat2())
		SKIP(return, "without faccessat2 T makes access from the checked text "
			     "(docs/LIMITS.md)");
	r->op = variant->op;
	strcpy(r->grant, "/tmp/sandpit-grant-XXXXXX");
	strcpy(r->outside, "/tmp/sandpit-outside-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(r->grant));
	ASSERT_NE(NULL, mkdtemp(r->outside));
	char d[96], l[96], p[192];
	snprintf(d, sizeof(d), "%s/d", r->grant);
	snprintf(l, sizeof(l), "%s/l", r->grant);
	ASSERT_EQ(0, mkdir(d, 0755));
	make_object(_metadata, r->op, AT(p, d, "file"), "inside", &r->in_ino);
	make_object(_metadata, r->op, AT(p, r->outside, "file"), "outside", &r->out_ino);
	if (_metadata->skip) {
		rm_rf(r->grant);
		rm_rf(r->outside);
		return;
	}
	ASSERT_EQ(0, symlink(r->outside, l));
	pid_t swapper = swap_race_start(d, l, &r->stop);
	ASSERT_LE(0, swapper);
	const char *g[] = { r->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = g };
	int st = run_sandboxed_opts(race_body, r, &o, 120);
	r->stop = 1;
	waitpid(swapper, NULL, 0);
	TH_LOG("of %d calls, %d answered by B: %d inside, %d refused, %d met a swap, %d outside, "
	       "%d other",
	       r->calls, r->reached, r->t.inside, r->t.refused, r->t.raced, r->t.outside_seen, r->t.other);
	EXPECT_EQ(0, outcome(st));
	EXPECT_LE(3000, r->calls);
	EXPECT_EQ(0, r->t.outside_seen);
	EXPECT_EQ(0, r->t.other);
	EXPECT_LT(0, r->t.inside);
	EXPECT_EQ(r->t.inside, r->reached); /* every answer B made was about the inside */
	EXPECT_LT(0, r->t.refused + r->t.raced); /* the swap was met */
	rm_rf(r->grant);
	rm_rf(r->outside);
}

TEST_HARNESS_MAIN
