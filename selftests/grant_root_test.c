/* A grant's own root: a write grant's root and the roots of grants inside
 * it are never removed, renamed or replaced; a descriptor inside a write
 * grant is chmod-ed without a set-id bit; a write grant whose path goes
 * through a symlink is refused naming where it leads. */
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
	ASSERT_EQ(0, make_file(AT(p, box->grant, "f")));
	ASSERT_EQ(0, mkdir(AT(p, box->grant, "x"), 0755));
	ASSERT_EQ(0, mkdir(AT(p, box->grant2, "y"), 0755));
	ASSERT_EQ(0, make_file(AT(p, box->grant2, "g")));
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
	ASSERT_EQ(0, make_file(AT(ar, box->grant, "R")));
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

/* A descriptor of a file inside a write grant may be chmod-ed as its path
 * (B checks the file the descriptor holds), and never to a set-id bit */
static int ops_fchmod_set_id(void *a)
{
	struct box *b = a;
	if (in_dir(b))
		return 1;
	R(make_file("f"));
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
	ASSERT_EQ(0, make_file(AT(p, real, "f")));
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

TEST_HARNESS_MAIN
