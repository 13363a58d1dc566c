/* Namespace calls inside write grants, made by B itself (path_op.h).
 *
 * Why B and not T: mkdir, unlink, rename and the others walk their path
 * again when they run, and none of them has openat2's RESOLVE_NO_SYMLINKS.
 * Handed to T as a resolved path, a directory U swaps for a symlink (or
 * renames away) after B's check would lead the call out of the grant.  B
 * instead opens the parent directory with one openat2 that refuses every
 * link (the resolved path has none, so a swap fails the open with ELOOP),
 * and makes the call on the last name relative to that descriptor, where
 * no later swap can move it: a name is acted on in the directory B checked
 * and nowhere else.  A swapped last name is never followed (the calls that
 * follow it natively are made on it with AT_SYMLINK_NOFOLLOW, O_NOFOLLOW or
 * through an O_PATH descriptor).  B has P's credentials (it is forked from
 * P); P's umask is read from /proc/P/status for the modes it creates. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "compat/compat.h"
#include "policy/policy.h"
#include "user/trusted/fs_base.h"
#include "user/trusted/b_read.h"
#include "user/trusted/b_refusal.h"
#include "user/trusted/b_resolve.h"
#include "user/trusted/b_state.h"
#include "user/trusted/path_op.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#define RENAME_EXCHANGE  2
#endif

#define N POLICY_NOARG

enum op { OP_MKDIR, OP_MKNOD, OP_UNLINK, OP_RENAME, OP_LINK, OP_SYMLINK, OP_TRUNCATE, OP_CHMOD,
	  OP_UTIMENS, OP_CHOWN, OP_SETXATTR, OP_REMOVEXATTR };

/* Where each call keeps its arguments: the (first) path and its directory,
 * the second path of rename and link (the new name), AT_* or RENAME_*
 * flags, the mode, length, times or symlink target; `fixed`: the flags the
 * call implies. */
static const struct op_call {
	int nr, op;
	int dirfd, path, dirfd2, path2, flags, val;
	int fixed;
} op_calls[] = {
	{ SYS_mkdir, OP_MKDIR, N, 0, N, N, N, 1, 0 },
	{ SYS_mkdirat, OP_MKDIR, 0, 1, N, N, N, 2, 0 },
	{ SYS_mknod, OP_MKNOD, N, 0, N, N, N, 1, 0 },
	{ SYS_mknodat, OP_MKNOD, 0, 1, N, N, N, 2, 0 },
	{ SYS_rmdir, OP_UNLINK, N, 0, N, N, N, N, AT_REMOVEDIR },
	{ SYS_unlink, OP_UNLINK, N, 0, N, N, N, N, 0 },
	{ SYS_unlinkat, OP_UNLINK, 0, 1, N, N, 2, N, 0 },
	{ SYS_rename, OP_RENAME, N, 0, N, 1, N, N, 0 },
	{ SYS_renameat, OP_RENAME, 0, 1, 2, 3, N, N, 0 },
	{ SYS_renameat2, OP_RENAME, 0, 1, 2, 3, 4, N, 0 },
	{ SYS_link, OP_LINK, N, 0, N, 1, N, N, 0 },
	{ SYS_linkat, OP_LINK, 0, 1, 2, 3, 4, N, 0 },
	{ SYS_symlink, OP_SYMLINK, N, 1, N, N, N, 0, 0 },
	{ SYS_symlinkat, OP_SYMLINK, 1, 2, N, N, N, 0, 0 },
	{ SYS_truncate, OP_TRUNCATE, N, 0, N, N, N, 1, 0 },
	{ SYS_chmod, OP_CHMOD, N, 0, N, N, N, 1, 0 },
	{ SYS_fchmodat, OP_CHMOD, 0, 1, N, N, N, 2, 0 },
	{ SYS_fchmodat2, OP_CHMOD, 0, 1, N, N, 3, 2, 0 },
	{ SYS_utimensat, OP_UTIMENS, 0, 1, N, N, 3, 2, 0 },
	/* the owner and group follow the owner (val + 1) */
	{ SYS_chown, OP_CHOWN, N, 0, N, N, N, 1, 0 },
	{ SYS_lchown, OP_CHOWN, N, 0, N, N, N, 1, AT_SYMLINK_NOFOLLOW },
	{ SYS_fchownat, OP_CHOWN, 0, 1, N, N, 4, 2, 0 },
	/* attributes: name args[1], value args[2], size args[3] (xattr_args) */
	{ SYS_setxattr, OP_SETXATTR, N, 0, N, N, 4, N, 0 },
	{ SYS_lsetxattr, OP_SETXATTR, N, 0, N, N, 4, N, AT_SYMLINK_NOFOLLOW },
	{ SYS_removexattr, OP_REMOVEXATTR, N, 0, N, N, N, N, 0 },
	{ SYS_lremovexattr, OP_REMOVEXATTR, N, 0, N, N, N, N, AT_SYMLINK_NOFOLLOW },
	/* on a descriptor only (no path): its object, B checks and changes */
	{ SYS_fchmod, OP_CHMOD, 0, N, N, N, N, 1, 0 },
	{ SYS_fchown, OP_CHOWN, 0, N, N, N, N, 1, 0 },
	{ SYS_fsetxattr, OP_SETXATTR, 0, N, N, N, 4, 2, 0 },
	{ SYS_fremovexattr, OP_REMOVEXATTR, 0, N, N, N, N, N, 0 },
};

/* One path of the call. */
struct end {
	char path[PATH_MAX]; /* as U wrote it */
	char res[PATH_MAX];  /* resolved: absolute, normalised, no link on the way */
	char dir[PATH_MAX];  /* res's parent */
	const char *name;    /* res's last component (with U's trailing slash, see
			      * keep_slash) */
	char last[NAME_MAX + 2];
	int dfd;             /* dir, opened with no link on the way */
	int dot;             /* U's last component is "." or ".." */
	int slash;           /* U's path ends with a slash */
};

/* What the kernel answers for a path U may see (under a read grant) but
 * not change: SEEN_CREATE, a name the call makes (EEXIST if it is there);
 * SEEN_EXISTING, a name it needs (ENOENT if it is not). */
enum { SEEN_NONE, SEEN_CREATE, SEEN_EXISTING };

static long read_end(int s, const struct secure_page *sp, int dirfd_arg, int path_arg, int nofollow,
		     struct end *e)
{
	long n = b_read_string(s, e->path, sizeof(e->path), sp->args[path_arg]);
	if (n < 0)
		return n;
	if (n == 0)
		return -ENOENT;
	while (n > 1 && e->path[n - 1] == '/')
		n--, e->slash = 1;
	const char *last = e->path + n;
	while (last > e->path && last[-1] != '/')
		last--;
	e->dot = (e->path + n - last == 1 && last[0] == '.') ||
		 (e->path + n - last == 2 && last[0] == '.' && last[1] == '.');
	int dirfd = dirfd_arg == N ? AT_FDCWD : (int)sp->args[dirfd_arg];
	int r = b_resolve(s, dirfd, e->path, nofollow, e->res, NULL, NULL);
	if (r < 0)
		return r;
	char *slash = strrchr(e->res, '/');
	if (!slash[1])
		return -EBUSY; /* the root: never under a write grant anyway */
	e->name = slash + 1;
	if (strlen(e->name) > NAME_MAX)
		return -ENAMETOOLONG;
	size_t dl = slash == e->res ? 1 : (size_t)(slash - e->res);
	memcpy(e->dir, e->res, dl);
	e->dir[dl] = '\0';
	return 0;
}

/* U's trailing slash goes to the kernel with the name, which then answers
 * as natively (ENOTDIR for a file, ...).  Only for the calls that never
 * follow their last name, slash or not (the kernel looks it up in the
 * parent): never the old name of link, nor the calls that open it. */
static void keep_slash(struct end *e)
{
	if (!e->slash)
		return;
	snprintf(e->last, sizeof(e->last), "%s/", e->name);
	e->name = e->last;
}

/* The parent directory, opened so that no link on the way is followed */
static long open_parent(struct end *e)
{
	long fd = path_open_no_links(e->dir, O_DIRECTORY);
	if (fd < 0)
		return fd;
	e->dfd = (int)fd;
	return 0;
}

/* An absolute path in which B's resolution found no link, opened O_PATH
 * so that none is followed on the way, nor at its end unless the call
 * follows it there: one openat2, or where the kernel has none a walk from
 * the root with O_NOFOLLOW at every step.  A link swapped in since B's
 * check fails (ELOOP; ENOTDIR where a directory was needed). */
long path_open_no_links(const char *path, int oflags)
{
	long fd;
	if (compat_has(COMPAT_OPENAT2)) {
		struct open_how how = { .flags = O_PATH | O_CLOEXEC | (uint64_t)oflags,
					.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
		fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
		return fd < 0 ? -errno : fd;
	}
	if (path[0] != '/')
		return -EINVAL;
	char comp[NAME_MAX + 1];
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (const char *c = path + 1; fd >= 0 && *c;) {
		size_t n = strcspn(c, "/");
		if (n > NAME_MAX) {
			close((int)fd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, c, n);
		comp[n] = '\0';
		c += n;
		int last = !c[strspn(c, "/")];
		int dir = !last || *c == '/' || (oflags & O_DIRECTORY);
		int next = openat((int)fd, comp,
				  O_PATH | O_NOFOLLOW | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
		int err = errno;
		close((int)fd);
		fd = next;
		errno = err;
		c += strspn(c, "/");
	}
	if (fd < 0)
		return -errno;
	struct stat st;
	if (!(oflags & O_NOFOLLOW) && fstat((int)fd, &st) == 0 && S_ISLNK(st.st_mode)) {
		close((int)fd);
		return -ELOOP;
	}
	return fd;
}

/* The policy refuses e.  Where U may see the path (a read grant) and the
 * kernel's answer does not depend on permission, that answer; else EACCES. */
static long refused(const struct b_proc *p, const struct end *e, int seen)
{
	struct stat st;
	if (seen == SEEN_NONE || policy_check_path(b_cfg()->policy, p->pid, e->res, PA_READ) < 0)
		return -EACCES;
	if (lstat(e->res, &st) == 0)
		return seen == SEEN_CREATE ? -EEXIST : -EACCES;
	if (errno != ENOENT)
		return errno == ENOTDIR ? -ENOTDIR : -EACCES;
	if (seen == SEEN_EXISTING)
		return -ENOENT;
	if (lstat(e->dir, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? -errno : -EACCES;
	return S_ISDIR(st.st_mode) ? -EACCES : -ENOTDIR;
}

mode_t path_p_umask(int s)
{
	pid_t pid = b_proc_of_slot(s)->pid;
	int m = task_status(pid, pid, "Umask:");
	return m < 0 ? 077 : (mode_t)m & 0777; /* a kernel before 4.7: the strictest */
}

static const char device_why[] = "a device node's metadata",
		  root_why[] = "a grant's root, or a directory above one",
		  file_why[] = "a file grant is of its data, not its metadata";

/* Why no grant added would let a metadata call on path (refused by
 * policy_check_metadata) through: a grant's root, or a file under a file
 * grant; NULL where one would. */
static const char *metadata_refusal(const struct b_proc *p, const char *path)
{
	if (policy_path_denied(b_cfg()->policy, p->pid, path))
		return NULL; /* the deny says it */
	if (policy_path_holds_grant(b_cfg()->policy, p->pid, path))
		return root_why;
	if (policy_check_path(b_cfg()->policy, p->pid, path, PA_WRITE) == 0)
		return file_why;
	return NULL;
}

/* P's descriptor fd was opened O_PATH: the calls on the descriptor
 * itself refuse it (EBADF), as they do natively */
static int path_only(pid_t pid, int fd)
{
	char info[64], buf[256];
	snprintf(info, sizeof(info), "/proc/%d/fdinfo/%d", (int)pid, fd);
	int f = open(info, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return 0; /* the object's own open below says what is wrong */
	ssize_t n = read(f, buf, sizeof(buf) - 1);
	close(f);
	buf[n > 0 ? n : 0] = '\0';
	const char *fl = strstr(buf, "flags:");
	return fl && (strtoul(fl + 6, NULL, 8) & O_PATH);
}

/* An attribute call's name (args[1]) and, for a set, its value (args[2],
 * args[3] bytes): B's copies (the same places in the path and descriptor
 * forms).  0, or -errno as the kernel would answer; *value is malloc'ed. */
struct xattr_args {
	char name[XATTR_NAME_MAX + 1];
	void *value;
	size_t size;
};

static long read_xattr_args(int s, const struct secure_page *sp, int op, struct xattr_args *x)
{
	x->value = NULL;
	x->size = 0;
	if (op != OP_SETXATTR && op != OP_REMOVEXATTR)
		return 0;
	long n = b_read_string(s, x->name, sizeof(x->name), sp->args[1]);
	if (n < 0)
		return n == -ENAMETOOLONG ? -ERANGE : n;
	if (n == 0)
		return -ERANGE;
	x->size = op == OP_SETXATTR ? (size_t)sp->args[3] : 0;
	if (x->size > XATTR_SIZE_MAX)
		return -E2BIG;
	if (x->size) {
		x->value = malloc(x->size);
		if (!x->value)
			return -ENOMEM;
		if (b_read_mem(s, x->value, sp->args[2], x->size)) {
			free(x->value);
			x->value = NULL;
			return -EFAULT;
		}
	}
	return 0;
}

/* The metadata calls on a descriptor (fchmod, fchown, fsetxattr,
 * fremovexattr, futimens): B takes the object itself through P's
 * /proc/P/fd/N, so that a dup2 over N after the check cannot change what
 * is acted on, checks the path of what it holds as chmod's, and makes the
 * change on what it holds: done here, never by T on U's number. */
static long meta_fd(int s, const struct policy_proc_arg *pa, const struct secure_page *sp, int op,
		    uint64_t val, uint64_t val2, const struct timespec *tsp)
{
	const struct b_proc *p = b_proc_of_slot(s);
	char link[64], path[PATH_MAX];
	int fd = (int)sp->args[0];
	if (fd == AT_FDCWD)
		return op == OP_UTIMENS ? -EFAULT : -EBADF;
	if (fd >= p->fd_lo && fd <= p->fd_hi)
		return -EBADF; /* sandpit's, as if not open (invariant 3) */
	if (op != OP_UTIMENS && path_only(p->pid, fd))
		return -EBADF;
	struct xattr_args x;
	long xr = read_xattr_args(s, sp, op, &x);
	if (xr < 0)
		return xr;
	void *value = x.value;
	snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)p->pid, fd);
	int mine = open(link, O_PATH | O_CLOEXEC);
	if (mine < 0) {
		free(value);
		return errno == ENOENT ? -EBADF : -errno;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", mine);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	long r = n > 0 ? 0 : -EACCES;
	struct stat st;
	const char *why = NULL;
	if (n > 0) {
		path[n] = '\0';
		r = path[0] == '/' ? policy_check_metadata(b_cfg()->policy, p->pid, path) : -EACCES;
		if (r == -EINVAL)
			r = -EACCES;
		else if (r == -EACCES)
			why = metadata_refusal(p, path);
	}
	if (r == 0 && (fstat(mine, &st) < 0 || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
		r = -EACCES, why = device_why; /* its metadata are the machine's */
	if (why)
		b_path_refused(s, pa, sp, path, path, why);
	else if (r == -EACCES)
		b_path_denial(s, pa, sp, n > 0 ? path : "", NULL, PA_WRITE,
			      n > 0 ? policy_path_denied(b_cfg()->policy, p->pid, path) : NULL);
	if (r == 0) {
		int done;
		switch (op) {
		case OP_CHMOD:
			done = chmod(link, (mode_t)val & 07777);
			break;
		case OP_CHOWN:
			done = chown(link, (uid_t)val, (gid_t)val2);
			break;
		case OP_SETXATTR:
			done = setxattr(link, x.name, value, x.size, (int)sp->args[4]);
			break;
		case OP_REMOVEXATTR:
			done = removexattr(link, x.name);
			break;
		default:
			done = utimensat(AT_FDCWD, link, tsp, 0);
			break;
		}
		r = done < 0 ? -errno : SP_V_ACK;
	}
	close(mine);
	free(value);
	return r;
}

/* The object a metadata call acts on, held (O_PATH) so that what is
 * checked here is what is changed: a name swapped since cannot move the
 * call.  Never a device node (EACCES, *device set): its mode, owner, times
 * and size are the machine's, whichever directory holds it.  A link found
 * where the call follows its last name was swapped in since B resolved it
 * (ELOOP); where it does not follow it (link_ok), the link itself. */
static int held(const struct end *a, int link_ok, struct stat *st, int *device)
{
	int fd = openat(a->dfd, a->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int err = fstat(fd, st) < 0 ? errno : 0;
	if (!err && (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)))
		err = EACCES, *device = 1;
	else if (!err && S_ISLNK(st->st_mode) && !link_ok)
		err = ELOOP;
	if (err) {
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

static long act(int s, const struct op_call *c, const struct secure_page *sp, struct end *a,
		struct end *b, uint64_t flags, uint64_t val, uint64_t val2,
		const struct timespec *tsp, const struct xattr_args *x, int *device)
{
	char target[PATH_MAX], proc[64];
	struct stat st;
	long r;
	int fd;

	switch (c->op) {
	case OP_MKDIR:
		return mkdirat(a->dfd, a->name, (mode_t)val & 07777 & ~path_p_umask(s));
	case OP_MKNOD:
		/* a FIFO, or a regular file (type 0 is one, as natively), never
		 * with a set-id bit (as OP_CHMOD) */
		return mknodat(a->dfd, a->name,
			       (((mode_t)val & S_IFMT) == S_IFIFO ? S_IFIFO : S_IFREG) |
				       ((mode_t)val & (ACCESSPERMS | S_ISVTX) & ~path_p_umask(s)),
			       0);
	case OP_UNLINK:
		return unlinkat(a->dfd, a->name, (int)flags);
	case OP_RENAME:
		return syscall(SYS_renameat2, a->dfd, a->name, b->dfd, b->name, (unsigned)flags);
	case OP_LINK:
		return linkat(a->dfd, a->name, b->dfd, b->name, 0);
	case OP_SYMLINK:
		r = b_read_string(s, target, sizeof(target), sp->args[c->val]);
		if (r < 0)
			return errno = (int)-r, -1;
		if (r == 0)
			return errno = ENOENT, -1;
		return symlinkat(target, a->dfd, a->name);
	case OP_TRUNCATE:
		/* as truncate(2): EISDIR for a directory, EINVAL for what is not
		 * a regular file, and only then opened for writing (through the
		 * held object: no device or FIFO is ever opened here) */
		if ((fd = held(a, 0, &st, device)) < 0)
			return -1;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		r = S_ISDIR(st.st_mode) ? (errno = EISDIR, -1)
		    : !S_ISREG(st.st_mode) ? (errno = EINVAL, -1)
					    : open(proc, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		close(fd);
		if (r < 0)
			return -1;
		fd = (int)r;
		r = ftruncate(fd, (off_t)val);
		close(fd);
		return r;
	case OP_CHMOD:
		if ((fd = held(a, 1, &st, device)) < 0)
			return -1;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (S_ISLNK(st.st_mode)) /* asked for, or swapped in since the check */
			r = (errno = (flags & AT_SYMLINK_NOFOLLOW) ? EOPNOTSUPP : ELOOP, -1);
		else
			r = chmod(proc, (mode_t)val & 07777);
		close(fd);
		return r;
	case OP_SETXATTR:
	case OP_REMOVEXATTR:
		/* on the object held, through its magic link (which the call
		 * follows to the object); a link itself takes no attribute of
		 * the program's (user.* on a link is EPERM natively too) */
		if ((fd = held(a, 1, &st, device)) < 0)
			return -1;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (S_ISLNK(st.st_mode))
			r = (errno = c->op == OP_SETXATTR && sp->nr == SYS_lsetxattr ? EPERM
				     : sp->nr == SYS_lremovexattr ? EPERM : ELOOP, -1);
		else if (c->op == OP_SETXATTR)
			r = setxattr(proc, x->name, x->value, x->size, (int)flags);
		else
			r = removexattr(proc, x->name);
		close(fd);
		return r;
	case OP_CHOWN:
		/* on the object held: the kernel decides with B's credentials,
		 * which are P's (no capability), as it would for the program */
		if ((fd = held(a, 1, &st, device)) < 0)
			return -1;
		if (S_ISLNK(st.st_mode) && !(flags & AT_SYMLINK_NOFOLLOW))
			r = (errno = ELOOP, -1); /* swapped in since the check */
		else
			r = fchownat(fd, "", (uid_t)val, (gid_t)val2, AT_EMPTY_PATH);
		close(fd);
		return r;
	case OP_UTIMENS:
		/* the held object's magic link: the walk jumps to it and stops
		 * there, a link included (AT_SYMLINK_NOFOLLOW's) */
		if ((fd = held(a, !!(flags & AT_SYMLINK_NOFOLLOW), &st, device)) < 0)
			return -1;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		r = utimensat(AT_FDCWD, proc, tsp, 0);
		close(fd);
		return r;
	}
	return errno = ENOSYS, -1;
}

long path_op(int s, const struct policy_proc_arg *pa, struct secure_page *sp)
{
	const struct b_proc *p = b_proc_of_slot(s);
	const struct op_call *c = NULL;
	for (size_t i = 0; i < sizeof(op_calls) / sizeof(op_calls[0]); i++)
		if (op_calls[i].nr == (int)sp->nr)
			c = &op_calls[i];
	if (!c)
		return -ENOSYS;
	uint64_t flags = c->flags == N ? (uint64_t)c->fixed : sp->args[c->flags];
	uint64_t val = c->val == N ? 0 : sp->args[c->val];
	int nofollow = 1, seen_a = SEEN_EXISTING, seen_b = SEEN_NONE;
	struct timespec ts[2], *tsp = NULL;

	switch (c->op) {
	case OP_MKDIR:
	case OP_SYMLINK:
		seen_a = SEEN_CREATE;
		break;
	case OP_MKNOD:
		if (((mode_t)val & S_IFMT) != S_IFIFO && ((mode_t)val & S_IFMT) != S_IFREG &&
		    ((mode_t)val & S_IFMT) != 0)
			return -EPERM; /* no devices: as the kernel without CAP_MKNOD */
		seen_a = SEEN_CREATE;
		break;
	case OP_UNLINK:
		if (flags & ~(uint64_t)AT_REMOVEDIR)
			return -EINVAL;
		break;
	case OP_RENAME:
		if (flags & ~(uint64_t)(RENAME_NOREPLACE | RENAME_EXCHANGE))
			return -EINVAL;
		break;
	case OP_LINK:
		if (flags & AT_EMPTY_PATH)
			return -EACCES; /* a descriptor's file: its path was never checked */
		if (flags & ~(uint64_t)AT_SYMLINK_FOLLOW)
			return -EINVAL;
		nofollow = !(flags & AT_SYMLINK_FOLLOW);
		seen_b = SEEN_CREATE;
		break;
	case OP_TRUNCATE:
		nofollow = 0;
		break;
	case OP_CHMOD:
		if (flags & ~(uint64_t)AT_SYMLINK_NOFOLLOW)
			return -EINVAL;
		if (val & (S_ISUID | S_ISGID))
			return -EPERM; /* no set-id bits inside the sandbox */
		nofollow = !!(flags & AT_SYMLINK_NOFOLLOW);
		break;
	case OP_UTIMENS:
		if (flags & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
			return -EINVAL;
		if (val) {
			long r = b_read_mem(s, ts, val, 2 * sizeof(*ts));
			if (r < 0)
				return r;
			tsp = ts;
		}
		nofollow = !!(flags & AT_SYMLINK_NOFOLLOW);
		if (c->path != N && !sp->args[c->path])
			return meta_fd(s, pa, sp, OP_UTIMENS, 0, 0, tsp);
		break;
	case OP_CHOWN:
		if (flags & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
			return -EINVAL;
		nofollow = !!(flags & AT_SYMLINK_NOFOLLOW);
		break;
	case OP_REMOVEXATTR:
		nofollow = sp->nr == SYS_lremovexattr;
		break;
	case OP_SETXATTR:
		if (flags & ~(uint64_t)(XATTR_CREATE | XATTR_REPLACE))
			return -EINVAL;
		nofollow = sp->nr == SYS_lsetxattr;
		break;
	}
	uint64_t val2 = c->val == N ? 0 : sp->args[c->val + 1]; /* chown's group */
	if (c->path == N)
		return meta_fd(s, pa, sp, c->op, val, val2, tsp);

	struct end *e = calloc(2, sizeof(*e)); /* 24 KiB: off B's 64 KiB stacks */
	if (!e)
		return -ENOMEM;
	struct end *a = &e[0], *b = c->path2 == N ? NULL : &e[1];
	e[0].dfd = e[1].dfd = -1;
	long r = read_end(s, sp, c->dirfd, c->path, nofollow, a);
	if (r == -ENOENT && (c->op == OP_UTIMENS || c->op == OP_CHOWN) && (flags & AT_EMPTY_PATH) &&
	    !a->path[0]) {
		free(e);
		return meta_fd(s, pa, sp, c->op, val, val2, tsp);
	}
	if (r == 0 && b)
		r = read_end(s, sp, c->dirfd2, c->path2, 1, b);
	if (r < 0)
		goto out;
	/* "." and "..": never made, removed or renamed (as the kernel) */
	if ((a->dot || (b && b->dot)) && c->op != OP_TRUNCATE && c->op != OP_CHMOD &&
	    c->op != OP_UTIMENS && c->op != OP_CHOWN && c->op != OP_SETXATTR &&
	    c->op != OP_REMOVEXATTR) {
		r = seen_a == SEEN_CREATE ? -EEXIST : c->op == OP_RENAME ? -EBUSY : -EINVAL;
		goto out;
	}
	int meta = c->op == OP_TRUNCATE || c->op == OP_CHMOD || c->op == OP_UTIMENS ||
		   c->op == OP_CHOWN || c->op == OP_SETXATTR || c->op == OP_REMOVEXATTR;
	if (meta)
		r = policy_check_metadata(b_cfg()->policy, p->pid, a->res);
	else
		r = policy_check_namespace(b_cfg()->policy, p->pid, a->res, b ? b->res : NULL);
	if (r == -EACCES) {
		int a_in = !meta &&
			   policy_check_namespace(b_cfg()->policy, p->pid, a->res, NULL) == 0;
		struct end *bad = a_in ? b : a;
		r = refused(p, bad, a_in ? seen_b : seen_a);
		/* where no grant added would let it through, the log says why
		 * instead of naming one */
		const char *deny = policy_path_holds_denied(b_cfg()->policy, p->pid, bad->res);
		const char *why = deny ? NULL
			: meta ? metadata_refusal(p, a->res)
			: policy_path_holds_grant(b_cfg()->policy, p->pid, bad->res) ? root_why
										    : NULL;
		if (r == -EACCES && why)
			b_path_refused(s, pa, sp, bad->path, bad->res, why);
		else if (r == -EACCES)
			b_path_denial(s, pa, sp, bad->path, bad->res, PA_WRITE, deny);
	}
	if (r < 0)
		goto out;
	if (c->op != OP_LINK && !meta)
		keep_slash(a);
	if (b)
		keep_slash(b);
	r = open_parent(a);
	if (r == 0 && b)
		r = open_parent(b);
	int device = 0;
	struct xattr_args x = { .value = NULL };
	if (r == 0)
		r = read_xattr_args(s, sp, c->op, &x);
	if (r == 0)
		r = act(s, c, sp, a, b, flags, val, val2, tsp, &x, &device) < 0 ? -errno : SP_V_ACK;
	free(x.value);
	if (device)
		b_path_refused(s, pa, sp, a->path, a->res, device_why);
out:
	if (a->dfd >= 0)
		close(a->dfd);
	if (b && b->dfd >= 0)
		close(b->dfd);
	free(e);
	return r;
}
