/* The stats B answers itself from the descriptor its resolution opened,
 * by path and relative to a directory descriptor: the kernel's answers
 * case by case, none for outside the grants, and none for outside when
 * the path or the name is swapped for a symlink during the call. */
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
	ASSERT_EQ(0, make_file(AT(p, nat->dir, "f")));
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
	ASSERT_EQ(0, make_file(AT(p, d, "file")));
	ASSERT_EQ(0, stat(p, &sb));
	*in = sb.st_ino;
	ASSERT_EQ(0, make_file(AT(p, outside, "file")));
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
	ASSERT_EQ(0, make_file(AT(p, nat->dir, "f")));
	ASSERT_EQ(0, mkdir(AT(p, nat->dir, "d"), 0750));
	ASSERT_EQ(0, make_file(AT(p, nat->dir, "d/g")));
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
	ASSERT_EQ(0, make_file(AT(p, t->grant, "f")));
	ASSERT_EQ(0, make_file(AT(p, t->outside, "f")));
	ASSERT_EQ(0, mkdir(AT(p, t->outside, "d"), 0755));
	ASSERT_EQ(0, make_file(AT(p, t->outside, "d/f")));
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
	ASSERT_EQ(0, make_file(AT(f, c, "f")));
	ASSERT_EQ(0, mkdir(AT(a, t->grant, "a"), 0755));
	ASSERT_EQ(0, make_file(AT(f, a, "f")));
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
