// SPDX-License-Identifier: GPL-2.0
/* One file over 700 lines: one outside review's record of two changes,
 * the attacks of each sharing one box of files or one page of code.
 *
 * Outside review of two changes.
 *
 * Owners, attributes and creat by path, made by B on the object it
 * resolved under a write grant (user/trusted/path_op.c act, b_serve.c's
 * creat as open): nothing outside a directory write grant changes, never
 * a grant's root or what is above it, never a device, never through a
 * link swapped in after the check, the kernel deciding with the program's
 * credentials (root without capabilities here), no set-id bit kept or
 * given.
 *
 * The run-time patcher's bookkeeping (user/untrusted/exec_patch.c): what
 * it notes of a range follows the range, so a fetch from memory that is
 * not executable is the program's SIGSEGV, never a fault retried for ever
 * nor data made executable, and a program's signal handler that maps code
 * while its thread is inside a mapping call still has that code patched. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "grant_box.h"
#include "u_state.h"

#define P 4096UL

/* ============================================ change 1: calls by path */

/* Each call's expected answer, in the order the body makes them. */
enum {
	C_CHOWN_OUT, C_LCHOWN_OUT, C_FCHOWNAT_OUT, C_SETX_OUT, C_LSETX_OUT, C_REMX_OUT,
	C_LREMX_OUT, C_CREAT_OUT_NEW, C_CREAT_OUT_OLD, C_CHOWN_LINK_OUT, C_SETX_LINK_OUT,
	C_REMX_LINK_OUT, C_LCHOWN_LINK, C_LSETX_LINK, C_LREMX_LINK, C_CHOWN_DIRLINK,
	C_CREAT_LINK_OUT, C_CREAT_DIRLINK, C_CHOWN_ROOT, C_SETX_ROOT, C_REMX_ROOT,
	C_CHOWN_DOTDOT, C_CHOWN_SUB_DOTDOT2, C_CHOWN_DOT, C_FCHOWNAT_DIRFD_OUT,
	C_FCHOWNAT_EMPTY_OUT, C_FCHOWNAT_EMPTY_OPATH, C_FCHOWNAT_EMPTY_SANDPIT,
	C_FCHOWNAT_EMPTY_CWD, C_CHOWN_DEV, C_SETX_DEV, C_CHOWN_DEVLINK, C_CREAT_DEV,
	C_CHOWN_OTHER_IDS, C_CHOWN_OWN_IDS, C_CHOWN_SETID, C_LCHOWN_SETID, C_SETX_TRUSTED,
	C_SETX_SECURITY_CAP, C_SETX_HUGE, C_SETX_BAD_NAME, C_SETX_BAD_VALUE, C_SETX_EMPTY_NAME,
	C_SETX_LONG_NAME, C_CREAT_SETID, C_CREAT_NEW_SETID_MODE, C_SETX_IN, C_REMX_IN,
	C_CREAT_IN, C_FCHOWNAT_BADFLAG, C_OPEN_DEV, C_OPEN_NEW_SETID_MODE, C_FCHOWNAT_SUBFD_DOTDOT,
	C_FCHOWNAT_SUBFD_DOTDOT2, C_SETX_SUB_DOTDOT, C_N
};

static const struct {
	int call;
	long want; /* the result, or -errno */
	const char *what;
} expected[] = {
	{ C_CHOWN_OUT, -EACCES, "chown of a file outside" },
	{ C_LCHOWN_OUT, -EACCES, "lchown of a file outside" },
	{ C_FCHOWNAT_OUT, -EACCES, "fchownat of a file outside" },
	{ C_SETX_OUT, -EACCES, "setxattr of a file outside" },
	{ C_LSETX_OUT, -EACCES, "lsetxattr of a file outside" },
	{ C_REMX_OUT, -EACCES, "removexattr of a file outside" },
	{ C_LREMX_OUT, -EACCES, "lremovexattr of a file outside" },
	{ C_CREAT_OUT_NEW, -EACCES, "creat of a new file outside" },
	{ C_CREAT_OUT_OLD, -EACCES, "creat of a file outside" },
	{ C_CHOWN_LINK_OUT, -EACCES, "chown through a link in the grant to a file outside" },
	{ C_SETX_LINK_OUT, -EACCES, "setxattr through a link in the grant to a file outside" },
	{ C_REMX_LINK_OUT, -EACCES, "removexattr through a link in the grant to a file outside" },
	{ C_LCHOWN_LINK, 0, "lchown of the link itself in the grant" },
	{ C_LSETX_LINK, -EPERM, "lsetxattr user.* of a link (as natively)" },
	{ C_LREMX_LINK, -EPERM, "lremovexattr user.* of a link (as natively)" },
	{ C_CHOWN_DIRLINK, -EACCES, "chown through a directory link out" },
	{ C_CREAT_LINK_OUT, -EACCES, "creat through a link in the grant to a file outside" },
	{ C_CREAT_DIRLINK, -EACCES, "creat through a directory link out" },
	{ C_CHOWN_ROOT, -EACCES, "chown of the grant's root" },
	{ C_SETX_ROOT, -EACCES, "setxattr of the grant's root" },
	{ C_REMX_ROOT, -EACCES, "removexattr of the grant's root" },
	{ C_CHOWN_DOTDOT, -EACCES, "chown of GRANT/.." },
	{ C_CHOWN_SUB_DOTDOT2, -EACCES, "chown of GRANT/sub/../.." },
	{ C_CHOWN_DOT, -EACCES, "chown of . (the grant's root as cwd)" },
	{ C_FCHOWNAT_DIRFD_OUT, -EACCES, "fchownat from a descriptor of the outside directory" },
	{ C_FCHOWNAT_EMPTY_OUT, -EACCES, "fchownat AT_EMPTY_PATH on a descriptor of a file outside" },
	{ C_FCHOWNAT_EMPTY_OPATH, -EBADF, "fchownat AT_EMPTY_PATH on an O_PATH descriptor" },
	{ C_FCHOWNAT_EMPTY_SANDPIT, -EBADF, "fchownat AT_EMPTY_PATH on sandpit's descriptor" },
	{ C_FCHOWNAT_EMPTY_CWD, -EBADF, "fchownat AT_EMPTY_PATH on AT_FDCWD (the grant's root)" },
	{ C_CHOWN_DEV, -EACCES, "chown of a device node in the grant" },
	{ C_SETX_DEV, -EACCES, "setxattr of a device node in the grant" },
	{ C_CHOWN_DEVLINK, -EACCES, "chown through a link in the grant to /dev/null" },
	/* creat is that open: a device node in the grant opens for writing as
	 * by open (its metadata is never set: C_CHOWN_DEV, C_SETX_DEV) */
	{ C_CREAT_DEV, 3, "creat of a device node in the grant, as open" },
	{ C_OPEN_DEV, 3, "open(O_CREAT | O_WRONLY | O_TRUNC) of a device node in the grant" },
	{ C_CHOWN_OTHER_IDS, -EPERM, "chown to other ids, root without capabilities" },
	{ C_CHOWN_OWN_IDS, 0, "chown to the ids the file has" },
	{ C_CHOWN_SETID, 0, "chown of a set-id file in the grant (bits cleared)" },
	{ C_LCHOWN_SETID, 0, "lchown of a set-gid file in the grant (bits cleared)" },
	{ C_SETX_TRUSTED, -EPERM, "setxattr trusted.* without CAP_SYS_ADMIN" },
	{ C_SETX_SECURITY_CAP, -EPERM, "setxattr security.capability without CAP_SETFCAP" },
	{ C_SETX_HUGE, -E2BIG, "setxattr of a value over XATTR_SIZE_MAX" },
	{ C_SETX_BAD_NAME, -EFAULT, "setxattr with a bad name pointer" },
	{ C_SETX_BAD_VALUE, -EFAULT, "setxattr with a bad value pointer" },
	{ C_SETX_EMPTY_NAME, -ERANGE, "setxattr with an empty name" },
	{ C_SETX_LONG_NAME, -ERANGE, "setxattr with a name over XATTR_NAME_MAX" },
	{ C_CREAT_SETID, -EACCES, "creat of a set-id file in the grant" },
	/* made without its set-id bits, as by open (checked below) */
	{ C_CREAT_NEW_SETID_MODE, 3, "creat with a set-id mode" },
	{ C_OPEN_NEW_SETID_MODE, 3, "open(O_CREAT) with a set-id mode" },
	{ C_FCHOWNAT_SUBFD_DOTDOT, -EACCES, "fchownat(descriptor of GRANT/sub, \"..\")" },
	{ C_FCHOWNAT_SUBFD_DOTDOT2, -EACCES, "fchownat(descriptor of GRANT/sub, \"../..\")" },
	{ C_SETX_SUB_DOTDOT, -EACCES, "setxattr of GRANT/sub/.. (the grant's root)" },
	{ C_SETX_IN, 0, "setxattr user.* inside" },
	{ C_REMX_IN, 0, "removexattr user.* inside" },
	{ C_CREAT_IN, 3, "creat inside (a descriptor)" },
	{ C_FCHOWNAT_BADFLAG, -EINVAL, "fchownat with an unknown flag" },
};

struct meta {
	char grant[64], outside[64];
	long res[C_N];
	int made;
};

static void put(struct meta *m, int i, long r)
{
	m->res[i] = r < 0 ? -errno : r;
	if (r >= 0 && (i == C_CREAT_IN || i == C_CREAT_DEV || i == C_OPEN_DEV ||
		       i == C_CREAT_NEW_SETID_MODE || i == C_OPEN_NEW_SETID_MODE))
		m->res[i] = 3, close((int)r); /* a descriptor */
	else if (r >= 0 && (i == C_CREAT_OUT_NEW || i == C_CREAT_OUT_OLD || i == C_CREAT_LINK_OUT ||
			    i == C_CREAT_DIRLINK || i == C_CREAT_SETID))
		m->res[i] = 1000 + r; /* a descriptor where none was wanted */
	m->made++;
}

static int meta_body(void *arg)
{
	struct meta *m = arg;
	char p[256], q[256];
	const char *G = m->grant, *O = m->outside;
	const char v[] = "v";
#define IN(name) (snprintf(p, sizeof(p), "%s/%s", G, name), p)
#define OUT(name) (snprintf(q, sizeof(q), "%s/%s", O, name), q)
	put(m, C_CHOWN_OUT, chown(OUT("of"), 0, 0));
	put(m, C_LCHOWN_OUT, lchown(OUT("of"), 0, 0));
	put(m, C_FCHOWNAT_OUT, fchownat(AT_FDCWD, OUT("of"), 0, 0, 0));
	put(m, C_SETX_OUT, setxattr(OUT("of"), "user.x", v, 1, 0));
	put(m, C_LSETX_OUT, lsetxattr(OUT("of"), "user.x", v, 1, 0));
	put(m, C_REMX_OUT, removexattr(OUT("of"), "user.keep"));
	put(m, C_LREMX_OUT, lremovexattr(OUT("of"), "user.keep"));
	put(m, C_CREAT_OUT_NEW, creat(OUT("new"), 0644));
	put(m, C_CREAT_OUT_OLD, creat(OUT("of"), 0644));
	put(m, C_CHOWN_LINK_OUT, chown(IN("lo"), 0, 0));
	put(m, C_SETX_LINK_OUT, setxattr(IN("lo"), "user.x", v, 1, 0));
	put(m, C_REMX_LINK_OUT, removexattr(IN("lo"), "user.keep"));
	put(m, C_LCHOWN_LINK, lchown(IN("lo"), 0, 0));
	put(m, C_LSETX_LINK, lsetxattr(IN("lo"), "user.x", v, 1, 0));
	put(m, C_LREMX_LINK, lremovexattr(IN("lo"), "user.keep"));
	put(m, C_CHOWN_DIRLINK, chown(IN("ld/of"), 0, 0));
	put(m, C_CREAT_LINK_OUT, creat(IN("lo"), 0644));
	put(m, C_CREAT_DIRLINK, creat(IN("ld/new2"), 0644));
	put(m, C_CHOWN_ROOT, chown(G, 0, 0));
	put(m, C_SETX_ROOT, setxattr(G, "user.x", v, 1, 0));
	put(m, C_REMX_ROOT, removexattr(G, "user.keep"));
	put(m, C_CHOWN_DOTDOT, chown(IN(".."), 0, 0));
	put(m, C_CHOWN_SUB_DOTDOT2, chown(IN("sub/../.."), 0, 0));
	if (chdir(G))
		return 1;
	put(m, C_CHOWN_DOT, chown(".", 0, 0));
	int dfd = open(O, O_RDONLY | O_DIRECTORY);
	put(m, C_FCHOWNAT_DIRFD_OUT, dfd < 0 ? -1 : fchownat(dfd, "of", 0, 0, 0));
	int ofd = open(OUT("of"), O_RDONLY);
	put(m, C_FCHOWNAT_EMPTY_OUT, ofd < 0 ? -1 : fchownat(ofd, "", 0, 0, AT_EMPTY_PATH));
	int pfd = open(IN("f"), O_PATH);
	put(m, C_FCHOWNAT_EMPTY_OPATH, pfd < 0 ? -1 : fchownat(pfd, "", 0, 0, AT_EMPTY_PATH));
	const struct u_state *st = state_of(my_mailbox());
	put(m, C_FCHOWNAT_EMPTY_SANDPIT, fchownat((int)st->u_fd, "", 0, 0, AT_EMPTY_PATH));
	put(m, C_FCHOWNAT_EMPTY_CWD, fchownat(AT_FDCWD, "", 0, 0, AT_EMPTY_PATH));
	put(m, C_CHOWN_DEV, chown(IN("dev"), 0, 0));
	put(m, C_SETX_DEV, setxattr(IN("dev"), "user.x", v, 1, 0));
	put(m, C_CHOWN_DEVLINK, chown(IN("ldev"), 0, 0));
	put(m, C_CREAT_DEV, creat(IN("dev"), 0644));
	put(m, C_OPEN_DEV, open(IN("dev"), O_CREAT | O_WRONLY | O_TRUNC, 0644));
	put(m, C_CHOWN_OTHER_IDS, chown(IN("f"), 1000, 1000));
	put(m, C_CHOWN_OWN_IDS, chown(IN("f"), 0, 0));
	put(m, C_CHOWN_SETID, chown(IN("s"), 0, 0));
	put(m, C_LCHOWN_SETID, lchown(IN("g"), (uid_t)-1, 0));
	put(m, C_SETX_TRUSTED, setxattr(IN("f"), "trusted.x", v, 1, 0));
	/* VFS_CAP_REVISION_2, CAP_SETUID permitted and effective */
	const uint32_t cap[5] = { 0x02000001, 1u << 7, 0, 0, 0 };
	put(m, C_SETX_SECURITY_CAP, setxattr(IN("f"), "security.capability", cap, sizeof(cap), 0));
	put(m, C_SETX_HUGE, syscall(SYS_setxattr, IN("f"), "user.big", v, 65537, 0));
	put(m, C_SETX_BAD_NAME, setxattr(IN("f"), (const char *)8, v, 1, 0));
	put(m, C_SETX_BAD_VALUE, syscall(SYS_setxattr, IN("f"), "user.x", 8L, 16, 0));
	put(m, C_SETX_EMPTY_NAME, setxattr(IN("f"), "", v, 1, 0));
	static char longname[300];
	memset(longname, 'a', sizeof(longname) - 1);
	memcpy(longname, "user.", 5);
	put(m, C_SETX_LONG_NAME, setxattr(IN("f"), longname, v, 1, 0));
	put(m, C_CREAT_SETID, creat(IN("s2"), 0644));
	/* made in sub: the grant's root keeps its ctime */
	put(m, C_CREAT_NEW_SETID_MODE, creat(IN("sub/newsetid"), 06755));
	put(m, C_OPEN_NEW_SETID_MODE, open(IN("sub/opensetid"), O_CREAT | O_WRONLY | O_TRUNC, 06755));
	put(m, C_SETX_IN, setxattr(IN("f"), "user.x", v, 1, 0));
	put(m, C_REMX_IN, removexattr(IN("f"), "user.x"));
	put(m, C_CREAT_IN, creat(IN("sub/made"), 0644));
	int sfd = open(IN("sub"), O_RDONLY | O_DIRECTORY);
	put(m, C_FCHOWNAT_SUBFD_DOTDOT, sfd < 0 ? -1 : fchownat(sfd, "..", 0, 0, 0));
	put(m, C_FCHOWNAT_SUBFD_DOTDOT2, sfd < 0 ? -1 : fchownat(sfd, "../..", 0, 0, 0));
	put(m, C_SETX_SUB_DOTDOT, setxattr(IN("sub/.."), "user.x", v, 1, 0));
	put(m, C_FCHOWNAT_BADFLAG, fchownat(AT_FDCWD, IN("f"), 0, 0, 0x8000000));
	return 0;
#undef IN
#undef OUT
}

static void set_keep(struct __test_metadata *_metadata, const char *path)
{
	ASSERT_EQ(0, setxattr(path, "user.keep", "k", 1, 0));
}

static int has_xattr(const char *path, const char *name)
{
	char v[8];
	return lgetxattr(path, name, v, sizeof(v)) >= 0;
}

TEST(owners_attributes_and_creat_by_path_never_reach_outside_a_write_grant)
{
	NEED_OPENAT2();
	/* its files are root's and it attacks a device node in the grant,
	 * which only root can make */
	if (geteuid() != 0)
		SKIP(return, "needs root: the attacked files are root's, one a device node");
	struct meta *m = shared_page(sizeof(*m));
	ASSERT_NE(NULL, m);
	umask(022);
	strcpy(m->grant, "/tmp/sandpit-rev13-g-XXXXXX");
	strcpy(m->outside, "/tmp/sandpit-rev13-o-XXXXXX");
	make_dir(_metadata, m->grant);
	make_dir(_metadata, m->outside);
	char p[256], q[256];
	const char *G = m->grant, *O = m->outside;
	ASSERT_EQ(0, make_file(AT(q, O, "of")));
	ASSERT_EQ(0, chmod(q, 04755));
	set_keep(_metadata, q);
	set_keep(_metadata, G);
	ASSERT_EQ(0, make_file(AT(p, G, "f")));
	ASSERT_EQ(0, make_file(AT(p, G, "s")));
	ASSERT_EQ(0, chmod(p, 04755));
	ASSERT_EQ(0, make_file(AT(p, G, "s2")));
	ASSERT_EQ(0, chmod(p, 04755));
	ASSERT_EQ(0, make_file(AT(p, G, "g")));
	ASSERT_EQ(0, chmod(p, 02755));
	ASSERT_EQ(0, mkdir(AT(p, G, "sub"), 0755));
	ASSERT_EQ(0, symlink(AT(q, O, "of"), AT(p, G, "lo")));
	ASSERT_EQ(0, symlink(O, AT(p, G, "ld")));
	ASSERT_EQ(0, symlink("/dev/null", AT(p, G, "ldev")));
	ASSERT_EQ(0, mknod(AT(p, G, "dev"), S_IFCHR | 0666, makedev(1, 3)));
	struct stat of0, g0, dev0, parent0, of1, g1, dev1, parent1, s1, s21, gg1, st;
	ASSERT_EQ(0, stat(AT(q, O, "of"), &of0));
	ASSERT_EQ(0, stat(G, &g0));
	ASSERT_EQ(0, stat(AT(p, G, "dev"), &dev0));
	ASSERT_EQ(0, stat("/tmp", &parent0));
	usleep(20000); /* a change would show in ctime */

	const char *w[] = { G, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	EXPECT_EQ(0, outcome(run_sandboxed_opts(meta_body, m, &o, 60)));
	EXPECT_EQ(C_N, m->made);
	for (unsigned k = 0; k < sizeof(expected) / sizeof(expected[0]); k++) {
		const char *what = expected[k].what;
		EXPECT_EQ(expected[k].want, m->res[expected[k].call]) TH_LOG("%s", what);
	}

	/* outside: as it was */
	ASSERT_EQ(0, stat(AT(q, O, "of"), &of1));
	EXPECT_EQ(04755u, of1.st_mode & 07777);
	EXPECT_EQ(5, of1.st_size);
	EXPECT_EQ(of0.st_ctim.tv_sec, of1.st_ctim.tv_sec);
	EXPECT_EQ(of0.st_ctim.tv_nsec, of1.st_ctim.tv_nsec);
	EXPECT_TRUE(has_xattr(q, "user.keep"));
	EXPECT_FALSE(has_xattr(q, "user.x"));
	EXPECT_NE(0, access(AT(q, O, "new"), F_OK));
	EXPECT_NE(0, access(AT(q, O, "new2"), F_OK));
	/* the grant's root, its parent, the device: as they were */
	ASSERT_EQ(0, stat(G, &g1));
	EXPECT_EQ(g0.st_ctim.tv_sec, g1.st_ctim.tv_sec);
	EXPECT_EQ(g0.st_ctim.tv_nsec, g1.st_ctim.tv_nsec);
	EXPECT_TRUE(has_xattr(G, "user.keep"));
	EXPECT_FALSE(has_xattr(G, "user.x"));
	ASSERT_EQ(0, stat("/tmp", &parent1));
	EXPECT_EQ(parent0.st_mode, parent1.st_mode);
	EXPECT_EQ(parent0.st_uid, parent1.st_uid);
	ASSERT_EQ(0, stat(AT(p, G, "dev"), &dev1));
	EXPECT_EQ(dev0.st_ctim.tv_sec, dev1.st_ctim.tv_sec);
	EXPECT_EQ(dev0.st_ctim.tv_nsec, dev1.st_ctim.tv_nsec);
	EXPECT_FALSE(has_xattr(p, "user.x"));
	/* set-id: chown cleared them (no CAP_FSETID), creat refused the one
	 * there and gave none */
	ASSERT_EQ(0, stat(AT(p, G, "s"), &s1));
	EXPECT_EQ(0755u, s1.st_mode & 07777);
	ASSERT_EQ(0, stat(AT(p, G, "g"), &gg1));
	EXPECT_EQ(0755u, gg1.st_mode & 07777);
	ASSERT_EQ(0, stat(AT(p, G, "s2"), &s21));
	EXPECT_EQ(04755u, s21.st_mode & 07777);
	EXPECT_EQ(5, s21.st_size);
	ASSERT_EQ(0, stat(AT(p, G, "sub/newsetid"), &st));
	EXPECT_EQ(0755u, st.st_mode & 07777); /* umask 022 */
	ASSERT_EQ(0, stat(AT(p, G, "sub/opensetid"), &st));
	EXPECT_EQ(0755u, st.st_mode & 07777);
	ASSERT_EQ(0, stat(AT(p, G, "sub/made"), &st));
	EXPECT_EQ(0, st.st_size);
	EXPECT_FALSE(has_xattr(AT(p, G, "f"), "user.x"));
	EXPECT_FALSE(has_xattr(p, "trusted.x"));
	EXPECT_FALSE(has_xattr(p, "security.capability"));
	rm_rf(G);
	rm_rf(O);
}

/* `path deny` wins over the write grant: a denied directory inside it,
 * reached by name, through a link to it and through a link to a file in
 * it: every call EACCES, nothing in it changed. */
struct deny {
	char dir[64];
	long res[32];
	int n;
};

static int deny_body(void *a)
{
	struct deny *d = a;
	char s[128], f[128], l[128], lf[128], nw[128];
	snprintf(s, sizeof(s), "%s/secret", d->dir);
	snprintf(f, sizeof(f), "%s/secret/f", d->dir);
	snprintf(l, sizeof(l), "%s/l/f", d->dir);
	snprintf(lf, sizeof(lf), "%s/lf", d->dir);
	snprintf(nw, sizeof(nw), "%s/secret/new", d->dir);
	const char *paths[] = { s, f, l, lf };
	long r;
	for (int i = 0; i < 4; i++) {
		const char *p = paths[i];
#define D(call) (r = (call), d->res[d->n++] = r < 0 ? -errno : r)
		D(chown(p, 0, 0));
		D(fchownat(AT_FDCWD, p, 0, 0, 0));
		D(setxattr(p, "user.x", "v", 1, 0));
		D(removexattr(p, "user.keep"));
		if (i == 1 || i == 2) { /* the link forms on what is no link */
			D(lchown(p, 0, 0));
			D(lsetxattr(p, "user.x", "v", 1, 0));
			D(lremovexattr(p, "user.keep"));
		}
		if (i > 0) {
			D(creat(p, 0644));
		}
	}
	D(creat(nw, 0644));
#undef D
	return 0;
}

TEST(path_deny_inside_a_write_grant_wins_for_owners_attributes_and_creat)
{
	NEED_OPENAT2();
	struct deny *d = shared_page(sizeof(*d));
	ASSERT_NE(NULL, d);
	strcpy(d->dir, "/tmp/sandpit-rev13-d-XXXXXX");
	make_dir(_metadata, d->dir);
	char p[192], q[192], file[160], lines[300];
	ASSERT_EQ(0, mkdir(AT(p, d->dir, "secret"), 0755));
	ASSERT_EQ(0, make_file(AT(p, d->dir, "secret/f")));
	ASSERT_EQ(0, chmod(p, 04755));
	set_keep(_metadata, p);
	set_keep(_metadata, AT(p, d->dir, "secret"));
	ASSERT_EQ(0, symlink(AT(q, d->dir, "secret"), AT(p, d->dir, "l")));
	ASSERT_EQ(0, symlink(AT(q, d->dir, "secret/f"), AT(p, d->dir, "lf")));
	struct stat f0, s0, f1, s1;
	ASSERT_EQ(0, stat(AT(p, d->dir, "secret/f"), &f0));
	ASSERT_EQ(0, stat(AT(p, d->dir, "secret"), &s0));
	usleep(20000);
	snprintf(lines, sizeof(lines), "path write %s\npath deny %s/secret\n", d->dir, d->dir);
	policy_with(_metadata, file, sizeof(file), "/tmp", "sandpit-rev13-deny.policy", lines);
	struct sandpit_options o = { .mode = suite_mode(), .policy_file = file };
	EXPECT_EQ(0, outcome(run_sandboxed_opts(deny_body, d, &o, 60)));
	unlink(file);
	EXPECT_EQ(4 + 4 + 3 + 1 + 4 + 3 + 1 + 4 + 1 + 1, d->n);
	for (int k = 0; k < d->n; k++) {
		int call = k;
		EXPECT_EQ(-EACCES, d->res[k]) TH_LOG("call %d", call);
	}
	ASSERT_EQ(0, stat(AT(p, d->dir, "secret/f"), &f1));
	EXPECT_EQ(04755u, f1.st_mode & 07777);
	EXPECT_EQ(5, f1.st_size);
	EXPECT_EQ(f0.st_ctim.tv_sec, f1.st_ctim.tv_sec);
	EXPECT_EQ(f0.st_ctim.tv_nsec, f1.st_ctim.tv_nsec);
	EXPECT_TRUE(has_xattr(p, "user.keep"));
	EXPECT_FALSE(has_xattr(p, "user.x"));
	ASSERT_EQ(0, stat(AT(p, d->dir, "secret"), &s1));
	EXPECT_EQ(s0.st_ctim.tv_sec, s1.st_ctim.tv_sec);
	EXPECT_EQ(s0.st_ctim.tv_nsec, s1.st_ctim.tv_nsec);
	EXPECT_TRUE(has_xattr(p, "user.keep"));
	EXPECT_FALSE(has_xattr(p, "user.x"));
	EXPECT_NE(0, access(AT(p, d->dir, "secret/new"), F_OK));
	rm_rf(d->dir);
}

/* ---------------------------------------------------------------- races */

/* While the sandboxed body makes one call again and again on GRANT/d/file,
 * a second process swaps GRANT/d with GRANT/l, a link to OUTSIDE (or, with
 * `last`, GRANT/d/file with GRANT/d/lf, a link to OUTSIDE/file), by
 * RENAME_EXCHANGE.  OUTSIDE/file is set-uid (a chown clears it), has
 * user.keep and no user.x, 5 bytes: it must end so, its ctime unchanged.
 * `swaps` counts the exchanges made while the body ran, `reached` the
 * calls B answered: acted (`done`), refused (EACCES) or met the swap after
 * its check (ELOOP, ENOENT, ENOTDIR). */
struct race {
	char grant[64], outside[64];
	volatile int stop, started;
	volatile long swaps;
	int calls, reached, done, refused, raced, other, other_errno;
	int op, last;
};

enum { R_CHOWN, R_LCHOWN, R_FCHOWNAT, R_SETX, R_LSETX, R_REMX, R_LREMX, R_CREAT };

static long race_call(struct race *r, const char *x)
{
	long v;
	switch (r->op) {
	/* to the ids the files have (the test's own, root's or not), which
	 * the kernel lets their owner set: only the grants can refuse */
	case R_CHOWN:
		return chown(x, getuid(), getgid());
	case R_LCHOWN:
		return lchown(x, getuid(), getgid());
	case R_FCHOWNAT:
		return fchownat(AT_FDCWD, x, getuid(), getgid(), 0);
	case R_SETX:
		return setxattr(x, "user.x", "v", 1, 0);
	case R_LSETX:
		return lsetxattr(x, "user.x", "v", 1, 0);
	case R_REMX:
		/* put back what a success removed (inside only) */
		return v = removexattr(x, "user.keep"), setxattr(x, "user.keep", "k", 1, 0), v;
	case R_LREMX:
		return v = lremovexattr(x, "user.keep"), setxattr(x, "user.keep", "k", 1, 0), v;
	case R_CREAT:
		v = creat(x, 0644);
		if (v >= 0) {
			close((int)v);
			v = 0;
		}
		return v;
	}
	return -1;
}

static int race_body(void *a)
{
	struct race *r = a;
	char x[128];
	struct timespec now, end;
	int i;
	snprintf(x, sizeof(x), "%s/d/file", r->grant);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 20;
	r->started = 1;
	for (i = 0;; i++) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (i >= 2000 && ((r->done && r->refused + r->raced) || now.tv_sec > end.tv_sec))
			break;
		errno = 0;
		long v = race_call(r, x);
		if (v == 0)
			r->done++;
		else if (errno == EACCES)
			r->refused++;
		else if (errno == ELOOP || errno == ENOENT || errno == ENOTDIR)
			r->raced++;
		else if (errno == ENODATA && (r->op == R_REMX || r->op == R_LREMX))
			r->done++; /* the file inside, its attribute not yet put back
				    * (a swap between the two calls); outside has it */
		else if (errno == EPERM && (r->op == R_LSETX || r->op == R_LREMX))
			r->raced++; /* the link itself, as natively: user.* on a link */
		else {
			r->other++;
			r->other_errno = errno;
			continue;
		}
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
	int op, last;
};
FIXTURE_VARIANT_ADD(race, chown) { .op = R_CHOWN };
FIXTURE_VARIANT_ADD(race, lchown) { .op = R_LCHOWN };
FIXTURE_VARIANT_ADD(race, fchownat) { .op = R_FCHOWNAT };
FIXTURE_VARIANT_ADD(race, setxattr) { .op = R_SETX };
FIXTURE_VARIANT_ADD(race, lsetxattr) { .op = R_LSETX };
FIXTURE_VARIANT_ADD(race, removexattr) { .op = R_REMX };
FIXTURE_VARIANT_ADD(race, lremovexattr) { .op = R_LREMX };
FIXTURE_VARIANT_ADD(race, creat) { .op = R_CREAT };
FIXTURE_VARIANT_ADD(race, chown_last) { .op = R_CHOWN, .last = 1 };
FIXTURE_VARIANT_ADD(race, setxattr_last) { .op = R_SETX, .last = 1 };
FIXTURE_VARIANT_ADD(race, removexattr_last) { .op = R_REMX, .last = 1 };
FIXTURE_VARIANT_ADD(race, creat_last) { .op = R_CREAT, .last = 1 };

FIXTURE_SETUP(race)
{
	self->r = shared_page(sizeof(*self->r));
	ASSERT_NE(NULL, self->r);
}

FIXTURE_TEARDOWN(race)
{
}

TEST_F_TIMEOUT(race, swapped_for_a_link_out_never_changes_owner_attributes_or_bytes_outside, 150)
{
	struct race *r = self->r;
	NEED_OPENAT2();
	r->op = variant->op;
	r->last = variant->last;
	strcpy(r->grant, "/tmp/sandpit-rev13-g-XXXXXX");
	strcpy(r->outside, "/tmp/sandpit-rev13-o-XXXXXX");
	make_dir(_metadata, r->grant);
	make_dir(_metadata, r->outside);
	char d[96], l[96], f[128], lf[128], of[128];
	snprintf(d, sizeof(d), "%s/d", r->grant);
	snprintf(l, sizeof(l), "%s/l", r->grant);
	snprintf(f, sizeof(f), "%s/d/file", r->grant);
	snprintf(lf, sizeof(lf), "%s/d/lf", r->grant);
	snprintf(of, sizeof(of), "%s/file", r->outside);
	ASSERT_EQ(0, mkdir(d, 0755));
	ASSERT_EQ(0, make_file(f));
	set_keep(_metadata, f);
	ASSERT_EQ(0, make_file(of));
	ASSERT_EQ(0, chmod(of, 04755));
	set_keep(_metadata, of);
	ASSERT_EQ(0, symlink(r->outside, l));
	ASSERT_EQ(0, symlink(of, lf));
	struct stat before, after;
	ASSERT_EQ(0, stat(of, &before));
	static char sig_before[4096], sig_after[4096];
	sig_before[0] = sig_after[0] = '\0';
	tree_signature(r->outside, "", sig_before, sizeof(sig_before));
	usleep(20000);

	pid_t swapper = fork();
	ASSERT_LE(0, swapper);
	if (swapper == 0) {
		while (!r->stop) {
			long v = r->last ? syscall(SYS_renameat2, AT_FDCWD, f, AT_FDCWD, lf,
						   RENAME_EXCHANGE)
					 : syscall(SYS_renameat2, AT_FDCWD, d, AT_FDCWD, l,
						   RENAME_EXCHANGE);
			if (v == 0 && r->started)
				r->swaps++;
		}
		_exit(0);
	}
	const char *w[] = { r->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	int st = run_sandboxed_opts(race_body, r, &o, 120);
	r->stop = 1;
	waitpid(swapper, NULL, 0);
	EXPECT_EQ(0, outcome(st));
	tree_signature(r->outside, "", sig_after, sizeof(sig_after));
	EXPECT_STREQ(sig_before, sig_after);
	ASSERT_EQ(0, stat(of, &after));
	EXPECT_EQ(5, after.st_size);
	EXPECT_EQ(04755u, after.st_mode & 07777);
	EXPECT_EQ(before.st_ctim.tv_sec, after.st_ctim.tv_sec);
	EXPECT_EQ(before.st_ctim.tv_nsec, after.st_ctim.tv_nsec);
	EXPECT_TRUE(has_xattr(of, "user.keep"));
	EXPECT_FALSE(has_xattr(of, "user.x"));
	EXPECT_LE(2000, r->calls);
	EXPECT_EQ(0, r->other) TH_LOG("last other errno %d", r->other_errno);
	EXPECT_EQ(r->calls, r->reached);
	EXPECT_LT(0, r->done);                  /* some acted, inside */
	EXPECT_LT(0, r->refused + r->raced);    /* and some met the link */
	EXPECT_LT(1000, r->swaps);
	TH_LOG("%ld swaps; of %d calls, %d acted inside, %d refused, %d met a swap after the check",
	       r->swaps, r->calls, r->done, r->refused, r->raced);
	rm_rf(r->grant);
	rm_rf(r->outside);
}

/* ========================================== change 2: the run-time patcher */

struct shared {
	volatile long attempts, segv, handler_runs, in_window, bad, ran;
	char msg[256];
};
static struct shared *S;
static sigjmp_buf jb;

static void on_segv(int sig)
{
	(void)sig;
	S->segv++;
	siglongjmp(jb, 1);
}

static const uint8_t ret42[] = { 0xb8, 42, 0, 0, 0, 0xc3 }; /* mov $42, %eax; ret */
/* mov $SYS_getpid, %eax; syscall; ret: killed in strict mode unpatched */
static const uint8_t raw_munmap_code[] = { 0xb8, SYS_munmap, 0, 0, 0, 0x0f, 0x05, 0xc3 };
static const uint8_t raw_getpid_code[] = { 0xb8, SYS_getpid, 0, 0, 0, 0x0f, 0x05, 0xc3 };

/* A page made W+X (noted done), then a page of data moved over it by
 * mremap(MREMAP_FIXED): the page there is RW, not executable.  A call
 * there is SIGSEGV natively; a done note left behind would retry the
 * fault for ever (a hang: alarm's SIGALRM ends it). */
static int body_done_then_mremap(void *a)
{
	int native = a != NULL;
	uint8_t *d = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *s = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (d == MAP_FAILED || s == MAP_FAILED)
		return 1;
	if (mprotect(d, P, PROT_READ | PROT_WRITE | PROT_EXEC))
		return 2;
	memcpy(d, ret42, sizeof(ret42));
	if (((int (*)(void))d)() != 42)
		return 3; /* W+X runs as asked */
	memcpy(s, ret42, sizeof(ret42));
	if (mremap(s, P, P, MREMAP_MAYMOVE | MREMAP_FIXED, d) != d)
		return 4;
	struct sigaction sa = { .sa_handler = on_segv };
	sigaction(SIGSEGV, &sa, NULL);
	alarm(10);
	S->attempts++;
	if (sigsetjmp(jb, 1) == 0) {
		((int (*)(void))d)();
		S->ran++;
	}
	alarm(0);
	(void)native;
	return 0;
}

/* The same with code pending (mapped R|X, not yet fetched) where data is
 * moved: the data, RW, never becomes executable by the stale note. */
static int body_pending_then_mremap(void *a)
{
	(void)a;
	uint8_t *s = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *d = mmap(NULL, P, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (d == MAP_FAILED || s == MAP_FAILED)
		return 1;
	memcpy(s, ret42, sizeof(ret42));
	if (mremap(s, P, P, MREMAP_MAYMOVE | MREMAP_FIXED, d) != d)
		return 4;
	struct sigaction sa = { .sa_handler = on_segv };
	sigaction(SIGSEGV, &sa, NULL);
	alarm(10);
	S->attempts++;
	if (sigsetjmp(jb, 1) == 0) {
		((int (*)(void))d)();
		S->ran++;
	}
	alarm(0);
	return 0;
}

/* Code pending (made R|X, not yet fetched) moved by mremap: natively it
 * runs at its new place; there it is patched at its first fetch. */
static int body_pending_moved(void *a)
{
	(void)a;
	uint8_t *c = mmap(NULL, 2 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *to = mmap(NULL, 2 * P, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED || to == MAP_FAILED)
		return 1;
	memcpy(c, raw_getpid_code, 8);
	if (mprotect(c, 2 * P, PROT_READ | PROT_EXEC))
		return 2;
	if (mremap(c, 2 * P, 2 * P, MREMAP_MAYMOVE | MREMAP_FIXED, to) != to)
		return 3;
	struct sigaction sa = { .sa_handler = on_segv };
	sigaction(SIGSEGV, &sa, NULL);
	alarm(10);
	S->attempts++;
	if (sigsetjmp(jb, 1) == 0 && ((long (*)(void))to)() == getpid())
		S->ran++;
	alarm(0);
	return 0;
}

static int fork_native(int (*fn)(void *))
{
	pid_t p = fork();
	if (p == 0)
		_exit(fn((void *)1));
	int st;
	waitpid(p, &st, 0);
	return outcome(st);
}

TEST(a_page_moved_over_wx_memory_faults_as_natively_never_retried_for_ever)
{
	S = shared_page(sizeof(*S));
	ASSERT_NE(NULL, S);
	ASSERT_EQ(0, fork_native(body_done_then_mremap));
	ASSERT_EQ(1, S->segv); /* natively: SIGSEGV */
	ASSERT_EQ(0, S->ran);
	memset(S, 0, sizeof(*S));
	EXPECT_EQ(0, outcome(run_sandboxed(body_done_then_mremap, NULL)));
	EXPECT_EQ(1, S->attempts);
	EXPECT_EQ(1, S->segv);
	EXPECT_EQ(0, S->ran);
}

TEST(data_moved_over_pending_code_is_never_made_executable)
{
	S = shared_page(sizeof(*S));
	ASSERT_NE(NULL, S);
	ASSERT_EQ(0, fork_native(body_pending_then_mremap));
	ASSERT_EQ(1, S->segv);
	ASSERT_EQ(0, S->ran);
	memset(S, 0, sizeof(*S));
	EXPECT_EQ(0, outcome(run_sandboxed(body_pending_then_mremap, NULL)));
	EXPECT_EQ(1, S->attempts);
	EXPECT_EQ(1, S->segv);
	EXPECT_EQ(0, S->ran);
}

TEST(pending_code_moved_by_mremap_is_patched_and_runs_as_natively)
{
	S = shared_page(sizeof(*S));
	ASSERT_NE(NULL, S);
	ASSERT_EQ(0, fork_native(body_pending_moved));
	ASSERT_EQ(0, S->segv);
	ASSERT_EQ(1, S->ran);
	memset(S, 0, sizeof(*S));
	EXPECT_EQ(0, outcome(run_sandboxed(body_pending_moved, NULL)));
	EXPECT_EQ(1, S->attempts);
	EXPECT_EQ(0, S->segv);
	EXPECT_EQ(1, S->ran);
}

/* W+X memory (noted done) made RW again, or unmapped and mapped RW
 * again at the same address: a call there is SIGSEGV, as natively, never
 * a fault retried for ever on the old note. */
static int body_done_then_rw(void *a)
{
	int remap = a != NULL;
	uint8_t *d = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (d == MAP_FAILED || mprotect(d, P, PROT_READ | PROT_WRITE | PROT_EXEC))
		return 1;
	memcpy(d, ret42, sizeof(ret42));
	if (((int (*)(void))d)() != 42)
		return 2;
	if (remap) {
		if (munmap(d, P) ||
		    mmap(d, P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != d)
			return 3;
		memcpy(d, ret42, sizeof(ret42));
	} else if (mprotect(d, P, PROT_READ | PROT_WRITE)) {
		return 4;
	}
	struct sigaction sa = { .sa_handler = on_segv };
	sigaction(SIGSEGV, &sa, NULL);
	alarm(10);
	S->attempts++;
	if (sigsetjmp(jb, 1) == 0) {
		((int (*)(void))d)();
		S->ran++;
	}
	alarm(0);
	return 0;
}

TEST(wx_memory_made_rw_or_remapped_rw_faults_as_natively)
{
	S = shared_page(sizeof(*S));
	ASSERT_NE(NULL, S);
	for (long remap = 0; remap < 2; remap++) {
		memset(S, 0, sizeof(*S));
		EXPECT_EQ(0, outcome(run_sandboxed(body_done_then_rw, (void *)remap)));
		EXPECT_EQ(1, S->attempts);
		EXPECT_EQ(1, S->segv) TH_LOG("remap %ld", remap);
		EXPECT_EQ(0, S->ran);
	}
}

/* Four threads mapping code, running it (a quarter W+X) and unmapping
 * it, all at once, with a fast timer whose handler lands in their mapping
 * calls: every run returns what its code computes (a raw munmap(0, 0),
 * patched), nothing hangs (the run's timeout). */
#define NTHREADS 4
static void *mapper(void *arg)
{
	long k = (long)arg;
	for (int i = 0; i < 400; i++) {
		uint8_t *c = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c == MAP_FAILED) {
			__atomic_fetch_add(&S->bad, 1, __ATOMIC_SEQ_CST);
			continue;
		}
		/* W+X code is never patched (a raw call from it is strict
		 * mode's kill): it makes no call */
		int wx = (i + k) % 4 == 0;
		if (wx)
			memcpy(c, ret42, sizeof(ret42));
		else
			memcpy(c, raw_munmap_code, sizeof(raw_munmap_code));
		if (mprotect(c, P, PROT_READ | PROT_EXEC | (wx ? PROT_WRITE : 0)) ||
		    ((long (*)(long, long))c)(0, 0) != (wx ? 42 : -EINVAL))
			__atomic_fetch_add(&S->bad, 1, __ATOMIC_SEQ_CST);
		else if (!wx && !memchr(c, 0xe9, sizeof(raw_munmap_code)))
			__atomic_fetch_add(&S->bad, 1, __ATOMIC_SEQ_CST);
		__atomic_fetch_add(&S->ran, 1, __ATOMIC_SEQ_CST);
		munmap(c, P);
	}
	return NULL;
}

static void on_tick(int sig)
{
	(void)sig;
	__atomic_fetch_add(&S->handler_runs, 1, __ATOMIC_SEQ_CST);
}

static int body_threads_mapping(void *a)
{
	(void)a;
	struct sigaction sa = { .sa_handler = on_tick, .sa_flags = SA_RESTART };
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 500 }, { 0, 500 } };
	setitimer(ITIMER_REAL, &it, NULL);
	pthread_t t[NTHREADS];
	for (long k = 0; k < NTHREADS; k++)
		if (pthread_create(&t[k], NULL, mapper, (void *)k))
			return 1;
	for (int k = 0; k < NTHREADS; k++)
		pthread_join(t[k], NULL);
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	return 0;
}

FIXTURE(threads) {};
FIXTURE_SETUP(threads) {}
FIXTURE_TEARDOWN(threads) {}

TEST_F_TIMEOUT(threads, many_threads_mapping_code_at_once_under_signals_never_hang, 150)
{
	S = shared_page(sizeof(*S));
	ASSERT_NE(NULL, S);
	EXPECT_EQ(0, outcome(run_sandboxed_opts(body_threads_mapping, NULL, NULL, 120)));
	EXPECT_EQ(NTHREADS * 400, S->ran);
	EXPECT_EQ(0, S->bad);
	EXPECT_LT(0, S->handler_runs);
	TH_LOG("%ld runs, %ld handler runs", S->ran, S->handler_runs);
}

/* A program's signal handler that maps code and runs it, arriving (a fast
 * interval timer) while its thread is inside mprotect or mmap with
 * PROT_EXEC, which now hold the patcher's lock across the call: the
 * handler's code, a raw getpid, must still be patched (strict mode kills
 * a raw call from unpatched code) and run; nothing hangs.  in_window
 * counts the handler runs that interrupted the thread between its
 * setting a flag and its clearing it around the mapping call. */
static volatile int in_call;

static void on_alarm(int sig)
{
	(void)sig;
	S->handler_runs++;
	if (in_call)
		S->in_window++;
	uint8_t *c = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED) {
		S->bad++;
		return;
	}
	/* a raw munmap(0, 0) (EINVAL): a call filter mode's filter does not
	 * let through natively, so its site is patched in both modes */
	memcpy(c, raw_munmap_code, sizeof(raw_munmap_code));
	if (mprotect(c, P, PROT_READ | PROT_EXEC) || ((long (*)(long, long))c)(0, 0) != -EINVAL)
		S->bad++;
	else if (!memchr(c, 0xe9, sizeof(raw_munmap_code))) {
		S->bad++; /* ran unpatched (filter mode's net answered it) */
		if (!S->msg[0])
			snprintf(S->msg, sizeof(S->msg), "unpatched: %02x %02x %02x %02x %02x %02x", c[0],
				 c[1], c[2], c[3], c[4], c[5]);
	}
	munmap(c, P);
}

static int body_signal_in_call(void *a)
{
	(void)a;
	struct sigaction sa = { .sa_handler = on_alarm };
	sigaction(SIGALRM, &sa, NULL);
	/* slower than a handler's run (a patch at its first fetch) */
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	uint8_t *page = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	memcpy(page, ret42, sizeof(ret42));
	struct timespec end, now;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 10;
	for (long i = 0;; i++) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (i > 3000 && (S->in_window > 50 || now.tv_sec > end.tv_sec))
			break;
		S->attempts++;
		/* the patcher's lock is held across each call */
		in_call = 1;
		int r = mprotect(page, P, i % 64 != 63 ? PROT_READ : PROT_READ | PROT_EXEC);
		in_call = 0;
		if (r || (i % 64 == 63 && ((int (*)(void))page)() != 42))
			S->bad++;
		in_call = 1;
		r = mprotect(page, P, PROT_READ | PROT_WRITE);
		in_call = 0;
		if (r)
			S->bad++;
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	return 0;
}

FIXTURE(sig) {};
FIXTURE_SETUP(sig) {}
FIXTURE_TEARDOWN(sig) {}

TEST_F_TIMEOUT(sig, handler_mapping_code_inside_a_held_mapping_call_is_patched_and_never_hangs, 90)
{
	S = shared_page(sizeof(*S));
	ASSERT_NE(NULL, S);
	int st = run_sandboxed_opts(body_signal_in_call, NULL, NULL, 60);
	EXPECT_EQ(0, outcome(st));
	EXPECT_EQ(0, S->bad);
	EXPECT_LE(S->in_window, S->handler_runs);
	EXPECT_LT(20, S->in_window);
	TH_LOG("%s", S->msg);
	TH_LOG("%ld mapping calls, %ld handler runs, %ld inside a mapping call", S->attempts,
	       S->handler_runs, S->in_window);
}

TEST_HARNESS_MAIN
