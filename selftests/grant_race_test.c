/* No directory swapped for a symlink (or renamed away) during a namespace
 * call leads the call out of its write grant: one fixture variant per call. */
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
		return make_file(x), unlink(x);
	case R_RENAME:
		return make_file(x), rename(x, y);
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
	ASSERT_EQ(0, make_file(AT(p, d, "file")));
	ASSERT_EQ(0, make_file(AT(p, b->outside, "file")));
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

TEST_HARNESS_MAIN
