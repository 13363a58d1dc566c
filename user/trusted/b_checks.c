/* B's checks of one request's memory arguments: strings and links read from
 * P, a path resolved and checked against the grants (and opened beneath
 * them without links), a sigaction's handler kept out of sandpit's memory;
 * a refusal recorded for the denial log.  The slots, the servers that call
 * these and the watchers are in trusted_process.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <seccomp.h>

#include "compat/compat.h"
#include "policy/policy.h"
#include "user/trusted/denial_log.h"
#include "user/trusted/fs_base.h"
#include "user/trusted/b_checks.h"
#include "user/trusted/write_open.h"
#include "user/layout/slots.h"
#include "user/trusted/path_op.h"
#include "user/trusted/trusted_process.h"

#include "user/untrusted/runtime.h"


long b_read_mem(void *dst, uint64_t addr, size_t n)
{
	struct iovec local = { dst, n };
	struct iovec remote = { (void *)(uintptr_t)addr, n };
	return process_vm_readv(b_cfg()->pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

long b_read_string(char *buf, size_t max, uint64_t addr)
{
	size_t got = 0;
	while (got < max) {
		size_t chunk = 4096 - ((addr + got) & 4095);
		if (chunk > max - got)
			chunk = max - got;
		struct iovec local = { buf + got, chunk };
		struct iovec remote = { (void *)(uintptr_t)(addr + got), chunk };
		ssize_t n = process_vm_readv(b_cfg()->pid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			return -EFAULT;
		char *nul = memchr(buf + got, 0, (size_t)n);
		if (nul)
			return nul - buf;
		got += (size_t)n;
	}
	return -ENAMETOOLONG;
}

/* The path argument at addr of slot s's request: from the copy U's entry
 * sent with it (MB_PATH) when that copy is of this argument, else read
 * from P.  The mailbox is U's: one copy of it here, and only that copy is
 * looked at (its length against its bytes) and then checked in full like
 * any path (invariant 8); a forged copy is U's request, as a rewritten
 * argument would be. */
static long b_read_path(int s, char *buf, size_t max, uint64_t addr)
{
	struct mb_path copy;
	memcpy(&copy, (const void *)&b_cfg()->mb[s].path, sizeof(copy));
	b_copied();
	long n = addr && copy.addr == addr ?
			 path_from_copy(copy.bytes, sizeof(copy.bytes), copy.len, buf, max) :
			 -1;
	return n >= 0 ? n : b_read_string(buf, max, addr);
}

int b_proc_link(char *out, size_t len, const char *what)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/%d/%s", (int)b_cfg()->pid, what);
	ssize_t n = readlink(link, out, len - 1);
	if (n < 0)
		return -errno;
	out[n] = 0;
	return out[0] == '/' ? 0 : -EACCES; /* sockets, pipes: no path to check */
}

int b_in_protected(uint64_t a)
{
	const struct secure_page *sp = &b_cfg()->sp[0];
	for (uint64_t i = 0; i < sp->nranges && i < SM_MAX_RANGES; i++)
		if (a >= sp->ranges[i].lo && a < sp->ranges[i].hi)
			return 1;
	return 0;
}

/* The resolved path has no symlink in it.  An open goes to T as openat2
 * with RESOLVE_NO_SYMLINKS, so that a component swapped for a symlink after
 * the check (U may rename in a write grant) fails the open with ELOOP
 * instead of leading it out of the grant.  The path stays where
 * b_check_path put it; struct open_how follows it in S. */
static long open_beneath_no_links(struct secure_page *sp, size_t pathlen, long flags, long mode)
{
	size_t at = (pathlen + 7) & ~(size_t)7;
	struct open_how how = {
		.flags = (uint64_t)(uint32_t)flags,
		.mode = (flags & (O_CREAT | O_TMPFILE)) ? (uint64_t)mode : 0,
		.resolve = RESOLVE_NO_SYMLINKS,
	};
	if (at + sizeof(how) > SP_DATA_SIZE)
		return -ENAMETOOLONG;
	memcpy(sp->data + at, &how, sizeof(how));
	sp->nr = SYS_openat2;
	sp->args[0] = (uint64_t)(int64_t)AT_FDCWD;
	sp->args[1] = (uint64_t)(uintptr_t)sp->data;
	sp->args[2] = (uint64_t)(uintptr_t)(sp->data + at);
	sp->args[3] = sizeof(how);
	sp->args[4] = sp->args[5] = 0;
	return 0;
}

/* the caller of slot s's call in progress, as U's entry wrote it: only
 * shown, never decided on */
static uint64_t slot_caller(int s)
{
	const struct u_state *st = (const struct u_state *)b_cfg()->mb[s].u_state;
	return __atomic_load_n(&st->caller, __ATOMIC_RELAXED);
}

/* a path the policy refuses (deny: the `path deny` pattern that did, or
 * NULL), explained from B's own copies */
void b_path_denial(int s, const struct policy_proc_arg *pa, const struct secure_page *sp,
		   const char *path, const char *resolved, int access, const char *deny)
{
	struct denial d = { .nr = (int)sp->nr, .result = -EACCES, .rule = -1,
			    .caller = slot_caller(s), .pa = pa, .path = path,
			    .resolved = resolved, .access = access, .deny = deny };
	memcpy(d.args, sp->args, sizeof(d.args));
	denial_note(b_cfg(), &d);
}

void b_path_refused(int s, const struct policy_proc_arg *pa, const struct secure_page *sp,
		    const char *path, const char *resolved, const char *why)
{
	struct denial d = { .nr = (int)sp->nr, .result = -EACCES, .rule = -1,
			    .caller = slot_caller(s), .pa = pa, .path = path,
			    .resolved = resolved, .access = PA_WRITE, .why = why };
	memcpy(d.args, sp->args, sizeof(d.args));
	denial_note(b_cfg(), &d);
}

/* a refusal by one of B's own checks of a memory argument */
void b_denial(int s, const struct secure_page *sp, long r, const char *why)
{
	struct denial d = { .nr = (int)sp->nr, .result = r, .rule = -1,
			    .caller = slot_caller(s), .why = why };
	memcpy(d.args, sp->args, sizeof(d.args));
	denial_note(b_cfg(), &d);
}

/* a call the policy kills, which T sent before it kills P: the line that
 * names it, from B's one copy of T's request */
void b_killed(int s, const struct secure_page *sp)
{
	struct denial d = { .nr = (int)sp->nr, .result = 0, .rule = -1, .caller = slot_caller(s),
			    .killed = 1 };
	memcpy(d.args, sp->args, sizeof(d.args));
	denial_note(b_cfg(), &d);
}

/* A refusal U's entry or T made, reported by U (SANDPIT_NR_DENIED): one
 * copy of the report, checked for range, used to count and explain only */
long b_reported_denial(int s)
{
	const struct u_state *st = (const struct u_state *)b_cfg()->mb[s].u_state;
	struct u_denial u;
	memcpy(&u, (const void *)&st->denial, sizeof(u));
	b_copied();
	const struct policy_call *c = policy_call(b_cfg()->policy, (int)u.nr);
	struct denial d = { .nr = u.nr < POLICY_MAX_NR ? (int)u.nr : -1,
			    .result = u.result < 0 && u.result > -4096 ? (long)u.result : -EPERM,
			    .rule = u.rule >= 0 && u.rule < c->nrules ? (int)u.rule : -1,
			    .caller = u.caller };
	if (d.nr < 0)
		return -EINVAL;
	/* no rule said (T's word was overwritten by a handler's call): the
	 * errno's first rule, as for filter mode's SECCOMP_RET_ERRNO */
	if (d.rule < 0)
		d.rule = policy_rule_for_errno(b_cfg()->policy, d.nr, (int)-d.result);
	memcpy(d.args, u.args, sizeof(d.args));
	denial_note(b_cfg(), &d);
	return SP_V_ACK;
}

/* The kernel's name of a directory object, without /proc: this thread's
 * own working directory (its own fs_struct, unshare(CLONE_FS) once) moved
 * to it, getcwd, and back to the root (a descriptor of it: no lookup), so
 * that B keeps no file system busy.  getcwd fails for a directory that was
 * removed or is out of B's root (the kernel's "(unreachable)" text): then
 * the caller takes the slow way. */
static int dir_name(int dir, char *out, size_t len)
{
	static int root = -1; /* one for all of B's threads, which come and go */
	static __thread int own_fs; /* 1: unshared, -1: cannot */
	if (__atomic_load_n(&root, __ATOMIC_ACQUIRE) < 0) {
		int f = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), none = -1;
		if (f >= 0 && !__atomic_compare_exchange_n(&root, &none, f, 0, __ATOMIC_ACQ_REL,
							   __ATOMIC_ACQUIRE))
			close(f);
		if (f < 0)
			return -1;
	}
	if (!own_fs)
		own_fs = unshare(CLONE_FS) == 0 ? 1 : -1;
	if (own_fs < 0)
		return -1;
	int ok = fchdir(dir) == 0 && getcwd(out, len) && out[0] == '/';
	if (fchdir(root) < 0)
		own_fs = -1;
	return ok ? 0 : -1;
}

/* A name relative to P's descriptor dirfd, resolved from the directory
 * object itself as the kernel does: the object taken from P with
 * pidfd_getfd, the name opened from it by path_open_beneath (no link, no
 * way out), then the kernel's name of the directory (dir_name) joined with
 * the name is the text checked against the grants.  The text is where the
 * object is, after the open: the answer (the stat of that descriptor) is
 * about the object the text names.  Instead of a readlink of /proc/P/fd/N
 * and a second walk of the whole text from the root.  -EAGAIN: take the
 * slow way (no pidfd_getfd or openat2, ".." or /proc/self in the name, a
 * link on the way, a directory removed, any other error, so that every
 * answer but these is the slow way's). */
static int resolve_from_dir_object(int dirfd, const char *name, int how, char *out, int *fd,
				   const char **leaf)
{
	if (!(how & PATH_OPENAT2) || b_pidfd() < 0 || !compat_has(COMPAT_PIDFD_GETFD) ||
	    !path_name_beneath(name))
		return -EAGAIN;
	int dir = (int)syscall(SYS_pidfd_getfd, b_pidfd(), dirfd, 0);
	if (dir < 0)
		return errno == EBADF ? -EBADF : -EAGAIN;
	char text[PATH_MAX];
	/* one component, not followed (fts's fstatat(dir, name,
	 * AT_SYMLINK_NOFOLLOW): tar, find, du, rm -r): no link can be met on
	 * the way, so the answer is asked of the directory and the name
	 * themselves (*fd the directory, *leaf the name), without opening the
	 * name first */
	int at_dir = leaf && fd && (how & PATH_NOFOLLOW) && !strchr(name, '/');
	int f = at_dir ? -1 : path_open_beneath(dir, name, how);
	int r = f == -EAGAIN ? -EAGAIN : dir_name(dir, text, sizeof(text)) < 0 ? -EAGAIN :
					 path_join_beneath(text, name, out, PATH_MAX) < 0 ? -EAGAIN : 0;
	if (at_dir && r == 0) {
		*fd = dir;
		*leaf = name;
		return 0;
	}
	close(dir);
	if (f >= 0 && (r < 0 || !fd))
		close(f);
	else if (f >= 0)
		*fd = f;
	return r;
}

int b_resolve(int dirfd, const char *path, int nofollow, char *out, int *fd, const char **leaf)
{
	if (fd)
		*fd = -1;
	if (leaf)
		*leaf = "";
	char base[PATH_MAX];
	int r;
	int how = (nofollow ? PATH_NOFOLLOW : 0) | (compat_has(COMPAT_OPENAT2) ? PATH_OPENAT2 : 0);
	if (path[0] != '/' && dirfd != AT_FDCWD) {
		r = resolve_from_dir_object(dirfd, path, how, out, fd, leaf);
		if (r != -EAGAIN)
			return r;
	}
	if (path[0] == '/')
		r = 0, strcpy(base, "/");
	else if (dirfd == AT_FDCWD)
		r = b_proc_link(base, sizeof(base), "cwd");
	else {
		char what[32];
		snprintf(what, sizeof(what), "fd/%d", dirfd);
		r = b_proc_link(base, sizeof(base), what);
	}
	if (r < 0)
		return r == -ENOENT ? -EBADF : r;
	return path_resolve_fd(b_cfg()->pid, base, path, how, out, PATH_MAX, fd);
}

/* The calls B answers itself, so that the kernel walks the path once, from the descriptor its resolution
 * opened (RESOLVE_NO_SYMLINKS, the last component not followed where the
 * call does not follow it; after a walk through links, the checked text
 * opened the same way), so that the kernel walks the path once and what
 * is answered is the object B checked: a directory swapped for a link
 * after the check fails (ELOOP) instead of leading T's second walk out of
 * the grants.  B has P's credentials (forked from P after its capabilities
 * were dropped). */
enum answer_kind {
	ANSWER_NONE,
	ANSWER_STAT,
	ANSWER_STATX,
	ANSWER_ACCESS,
	ANSWER_READLINK,
	ANSWER_XATTR,
};

static enum answer_kind answer_kind(long nr)
{
	switch (nr) {
	case SYS_stat:
	case SYS_lstat:
	case SYS_newfstatat:
		return ANSWER_STAT;
	case SYS_statx:
		return ANSWER_STATX;
	case SYS_access:
	case SYS_faccessat:
	case SYS_faccessat2:
		/* before 5.8 there is no asking about a descriptor: T's */
		return compat_has(COMPAT_FACCESSAT2) ? ANSWER_ACCESS : ANSWER_NONE;
	case SYS_readlink:
	case SYS_readlinkat:
		return ANSWER_READLINK;
	case SYS_getxattr:
	case SYS_lgetxattr:
		return ANSWER_XATTR;
	}
	return ANSWER_NONE;
}

#define STATX_SYNC_TYPE 0x6000 /* AT_STATX_SYNC_TYPE */
#define STATX_RESERVED_ 0x80000000u /* STATX__RESERVED */
#define S_IRWXO_ 7

/* The EINVALs the kernel gives before it looks at the path, which B's
 * resolution would otherwise turn into its own ENOENT or EACCES: for
 * access and readlink before the path is read (do_faccessat,
 * do_readlinkat), for statx after (getname first, then do_statx). */
static long einval_first(const struct secure_page *sp, int path_read)
{
	switch (sp->nr) {
	case SYS_access:
		return !path_read && (sp->args[1] & ~(uint64_t)S_IRWXO_ & 0xffffffffu) ? -EINVAL : 0;
	case SYS_faccessat:
		return !path_read && ((uint32_t)sp->args[2] & ~S_IRWXO_) ? -EINVAL : 0;
	case SYS_faccessat2:
		if (path_read)
			return 0;
		if ((uint32_t)sp->args[2] & ~S_IRWXO_)
			return -EINVAL;
		return ((uint32_t)sp->args[3] & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) ?
			       -EINVAL :
			       0;
	case SYS_readlink:
		return !path_read && (int)sp->args[2] <= 0 ? -EINVAL : 0;
	case SYS_readlinkat:
		return !path_read && (int)sp->args[3] <= 0 ? -EINVAL : 0;
	case SYS_statx: {
		uint32_t flags = (uint32_t)sp->args[2], mask = (uint32_t)sp->args[3];
		if (!path_read)
			return 0;
		if ((mask & STATX_RESERVED_) || (flags & STATX_SYNC_TYPE) == STATX_SYNC_TYPE)
			return -EINVAL;
		return (flags & ~(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH |
				  STATX_SYNC_TYPE)) ?
			       -EINVAL :
			       0;
	}
	}
	return 0;
}

/* the answer: the call's result and len bytes (already in a->bytes) for
 * its argument arg */
static long answered(struct sp_answer *a, long result, uint32_t len, uint32_t arg)
{
	a->result = result;
	a->len = len;
	a->arg = len ? arg : 0;
	return -SP_ANSWERED;
}

/* readlink(path, buf, bufsiz), readlinkat(dirfd, path, buf, bufsiz): the
 * link B's descriptor holds (opened without following it), the kernel's
 * truncation to bufsiz; not a link is EINVAL as for the path.  A target
 * longer than the answer's room goes to T (0). */
static long answer_readlink(int fd, const struct secure_page *sp, struct sp_answer *a)
{
	int buf_arg = sp->nr == SYS_readlink ? 1 : 2;
	int size = (int)sp->args[buf_arg + 1]; /* > 0: einval_first */
	size_t ask = (size_t)size < SP_ANSWER_MAX ? (size_t)size : SP_ANSWER_MAX;
	ssize_t n = readlinkat(fd, "", (char *)a->bytes, ask);
	if (n < 0) {
		int err = errno;
		struct stat st;
		/* an empty path names the descriptor's object: ENOENT when it is
		 * no link, where the kernel says EINVAL for the path */
		if (err == ENOENT && fstat(fd, &st) == 0 && !S_ISLNK(st.st_mode))
			err = EINVAL;
		if (err == EBADF || err == EFAULT || err == ENOSYS)
			return 0; /* B's own call failed, not the program's: T's */
		return answered(a, -err, 0, 0);
	}
	if ((size_t)n == SP_ANSWER_MAX && (size_t)size > SP_ANSWER_MAX) {
		memset(a->bytes, 0, SP_ANSWER_MAX);
		return 0; /* maybe longer than the room: T makes the call */
	}
	return answered(a, n, (uint32_t)n, (uint32_t)buf_arg);
}

/* getxattr(path, name, value, size), lgetxattr: the attribute of B's
 * descriptor's object (the link itself for lgetxattr, opened without
 * following it).  The kernel has no xattr call on an O_PATH descriptor
 * (fgetxattr and getxattrat(AT_EMPTY_PATH) say EBADF, 6.18), but its magic
 * link in B's own /proc/self/fd is one: the walk jumps to the
 * descriptor's object and stops there, link or not, and nothing of U's
 * is on the way.  A value longer than the answer's room goes to T (0). */
static long answer_xattr(int fd, struct secure_page *sp, struct sp_answer *a)
{
	char name[256], proc[40];
	long n = b_read_string(name, sizeof(name), sp->args[1]);
	if (n < 0)
		return n == -ENAMETOOLONG ? -ERANGE : n; /* longer than XATTR_NAME_MAX */
	size_t size = (size_t)sp->args[3];
	size_t ask = size < SP_ANSWER_MAX ? size : SP_ANSWER_MAX;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	ssize_t r = getxattr(proc, name, ask ? a->bytes : NULL, ask);
	if (r < 0) {
		int err = errno;
		if ((err == ERANGE && size > SP_ANSWER_MAX) || err == ENOENT || err == EBADF ||
		    err == ENOSYS)
			return 0; /* longer than the room, or no /proc here: T's */
		return answered(a, -err, 0, 0);
	}
	return answered(a, r, size ? (uint32_t)r : 0, 2);
}

/* The answer about the object B checked: fd's own (leaf ""), or, for a
 * stat or statx of one component not followed, fd's entry leaf (fd the
 * directory: b_resolve). */
static long answer(enum answer_kind kind, int fd, const char *leaf, struct secure_page *sp)
{
	struct sp_answer *a = (struct sp_answer *)sp->data; /* zeroed: B's `out` */
	switch (kind) {
	case ANSWER_STAT: {
		struct stat kst;
		_Static_assert(sizeof(kst) == SP_ANSWER_STAT, "the kernel's struct stat");
		/* fstat of an O_PATH descriptor is stat of its object */
		if (syscall(SYS_newfstatat, fd, leaf, &kst, *leaf ? AT_SYMLINK_NOFOLLOW : AT_EMPTY_PATH) < 0)
			return 0; /* T makes the call */
		memcpy(a->bytes, &kst, sizeof(kst));
		return answered(a, 0, sizeof(kst), sp->nr == SYS_newfstatat ? 2 : 1);
	}
	case ANSWER_STATX: {
		struct statx stx;
		_Static_assert(sizeof(stx) == SP_ANSWER_STATX, "the kernel's struct statx");
		/* the sync flags and AT_NO_AUTOMOUNT as the program asked; the
		 * object is the descriptor's */
		int flags = (*leaf ? AT_SYMLINK_NOFOLLOW : AT_EMPTY_PATH) |
			    ((int)sp->args[2] & (STATX_SYNC_TYPE | AT_NO_AUTOMOUNT));
		if (syscall(SYS_statx, fd, leaf, flags, (unsigned)sp->args[3], &stx) < 0)
			return errno == EACCES || errno == ENOMEM || errno == EIO ? -errno : 0;
		memcpy(a->bytes, &stx, sizeof(stx));
		return answered(a, 0, sizeof(stx), 4);
	}
	case ANSWER_ACCESS: {
		long mode = (long)(uint32_t)sp->args[sp->nr == SYS_access ? 1 : 2];
		int flags = sp->nr == SYS_faccessat2 ? (int)sp->args[3] & AT_EACCESS : 0;
		long r = syscall(SYS_faccessat2, fd, "", mode, AT_EMPTY_PATH | flags);
		if (r < 0 && (errno == ENOSYS || errno == EINVAL))
			return 0; /* the kernel cannot ask about a descriptor: T's */
		return answered(a, r < 0 ? -errno : 0, 0, 0);
	}
	case ANSWER_READLINK:
		return answer_readlink(fd, sp, a);
	case ANSWER_XATTR:
		return answer_xattr(fd, sp, a);
	case ANSWER_NONE:
		break;
	}
	return 0;
}

/* A call on the descriptor itself, with no path to check: fstatat(fd, "",
 * AT_EMPTY_PATH) and its friends, readlinkat(fd, "") (the link an O_PATH
 * descriptor holds; ENOENT for any other); with a NULL path and
 * AT_EMPTY_PATH, what the kernel makes of it (the descriptor from 6.11,
 * EFAULT before) */
static int on_the_descriptor(const struct policy_proc_arg *pa, const struct secure_page *sp,
			     int access)
{
	if (pa->access == PA_OPEN || access != PA_READ)
		return 0;
	if (sp->nr == SYS_readlinkat)
		return 1;
	return pa->flags_arg >= 0 && (sp->args[pa->flags_arg] & AT_EMPTY_PATH);
}

static const char setid_why[] = "a set-id file is never opened for writing";

/* A path argument: copy, resolve as the kernel will, check, and hand T the
 * resolved absolute path in S so the kernel reads exactly what was checked. */
long b_check_path(int s, const struct policy_proc_arg *pa, struct secure_page *sp)
{
	char path[PATH_MAX], resolved[PATH_MAX];
	long n = einval_first(sp, 0);
	if (n < 0)
		return n;
	if (!sp->args[pa->path_arg] && sp->nr != SYS_readlinkat &&
	    on_the_descriptor(pa, sp, policy_proc_access(pa, sp->args)))
		return einval_first(sp, 1); /* T makes it with the NULL path, as asked */
	n = b_read_path(s, path, sizeof(path), sp->args[pa->path_arg]);
	if (n < 0)
		return n;
	long bad = einval_first(sp, 1);
	if (bad < 0)
		return bad;
	int dirfd = pa->dirfd_arg >= 0 ? (int)sp->args[pa->dirfd_arg] : AT_FDCWD;
	long flags = pa->flags_arg >= 0 ? (long)sp->args[pa->flags_arg] : 0;
	int access = policy_proc_access(pa, sp->args);
	if (access == PA_NEVER) {
		b_path_denial(s, pa, sp, path, NULL, access, NULL);
		return -EACCES;
	}

	if (n == 0) {
		if (on_the_descriptor(pa, sp, access)) {
			sp->data[0] = 0;
			sp->args[pa->path_arg] = (uint64_t)(uintptr_t)sp->data;
			return 0;
		}
		return -ENOENT;
	}
	enum answer_kind kind = answer_kind((long)sp->nr);
	int fd = -1;
	const char *leaf = "";
	int r = b_resolve(dirfd, path, !policy_proc_follow(pa, sp->args), resolved,
			  kind != ANSWER_NONE ? &fd : NULL,
			  kind == ANSWER_STAT || kind == ANSWER_STATX ? &leaf : NULL);
	if (r < 0)
		return r;
	r = policy_check_path(b_cfg()->policy, b_cfg()->pid, resolved, access);
	/* the directories on the way to a grant may be looked at, as a program
	 * that resolves its paths by hand does (sqlite, rm -r's "/") */
	if (r == -EACCES && pa->access == PA_READ &&
	    policy_check_ancestor(b_cfg()->policy, b_cfg()->pid, resolved) == 0)
		r = 0;
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		if (r == -EACCES)
			b_path_denial(s, pa, sp, path, resolved, access,
				      policy_path_denied(b_cfg()->policy, b_cfg()->pid, resolved));
		return r;
	}
	/* U's trailing slash asks the kernel for a directory (EISDIR for a
	 * create, ENOTDIR for a file): resolving drops it, the kernel gets it
	 * back.  The name is the one checked; it has no link left to follow. */
	size_t len = strlen(resolved) + 1;
	if (path[n - 1] == '/' && len > 2) {
		if (len >= sizeof(resolved)) {
			if (fd >= 0)
				close(fd);
			return -ENAMETOOLONG;
		}
		resolved[len - 1] = '/';
		resolved[len++] = '\0';
	}
	if (kind != ANSWER_NONE) {
		/* resolved by the walk (a link on the way), or no openat2: the
		 * checked text, opened without links, so that a link swapped in
		 * since fails (ELOOP) rather than leading the answer out of the
		 * grants */
		if (fd < 0) {
			long o = path_open_no_links(resolved,
						    policy_proc_follow(pa, sp->args) ? 0 : O_NOFOLLOW);
			if (o < 0)
				return o;
			fd = (int)o;
		}
		long v = answer(kind, fd, leaf, sp);
		close(fd);
		if (v)
			return v;
	} else if (fd >= 0) {
		close(fd);
	}
	if (len > SP_DATA_SIZE)
		return -ENAMETOOLONG;
	memcpy(sp->data, resolved, len);
	sp->args[pa->path_arg] = (uint64_t)(uintptr_t)sp->data;
	if (pa->dirfd_arg >= 0)
		sp->args[pa->dirfd_arg] = (uint64_t)(int64_t)AT_FDCWD;
	if (pa->access == PA_OPEN) {
		/* a name made here never carries a set-id bit: chmod may not
		 * give one (path_op.c), so neither may the mode it is made with */
		if (flags & (O_CREAT | O_TMPFILE))
			sp->args[pa->flags_arg + 1] &= ACCESSPERMS | S_ISVTX;
		/* nor does a set-id file that is there take the program's bytes:
		 * stores through a shared mapping keep its bit, where write(2)
		 * would clear it */
		int writes = (flags & O_ACCMODE) != O_RDONLY || (flags & (O_TRUNC | O_CREAT));
		if (writes && compat_has(COMPAT_OPENAT2) && !(flags & (O_PATH | __O_TMPFILE))) {
			/* decided on the file B opens, and that file handed over:
			 * a name checked and opened again by T could be swapped
			 * in between (user/trusted/write_open.c) */
			const char *why;
			int fd = b_write_open(s, resolved, flags, (long)sp->args[pa->flags_arg + 1], &why);
			if (fd >= 0)
				return b_hand_over(sp, fd, flags);
			if (fd == -EACCES && why)
				b_path_refused(s, pa, sp, path, resolved, why);
			return fd;
		}
		struct stat st;
		if (writes && fstatat(AT_FDCWD, resolved, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && B_SETID(st.st_mode)) {
			b_path_refused(s, pa, sp, path, resolved, setid_why);
			return -EACCES;
		}
		if (compat_has(COMPAT_OPENAT2))
			return open_beneath_no_links(sp, len, flags,
						     (long)sp->args[pa->flags_arg + 1]);
	}
	if (sp->nr == SYS_getxattr || sp->nr == SYS_lgetxattr) {
		/* the attribute's name is memory the kernel reads: B's copy too */
		char *name = (char *)sp->data + len;
		n = b_read_string(name, SP_DATA_SIZE - len < 256 ? SP_DATA_SIZE - len : 256, sp->args[1]);
		if (n < 0)
			return n == -ENAMETOOLONG ? -ERANGE : n;
		sp->args[1] = (uint64_t)(uintptr_t)name;
	}
	return 0;
}

/* the sa_flags the kernel keeps (and reports) on x86-64: the others it
 * clears, so that a program can tell which it has */
#define UAPI_SA_FLAGS                                                                        \
	(SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | 0x800 /* SA_EXPOSE_TAGBITS */ | SA_ONSTACK | \
	 SA_RESTART | SA_NODEFER | SA_RESETHAND | SANDPIT_SA_RESTORER)

/* rt_sigaction(sig, act, oact, size).  The struct is copied and checked:
 * no handler or restorer in sandpit's protected memory (invariant 1).  For
 * a caught signal the program's handler goes into the handler table and the
 * kernel gets sandpit's entry (sandpit_signal_entry, u_signal.c), so that
 * sandpit can tell pause and sigsuspend that a handler ran.  The signals
 * sandpit keeps (SANDPIT_KEPT_SIGNALS) are only recorded, whatever the
 * action: the kernel keeps sandpit's handler (DESIGN §6), which calls the
 * program's for the program's own signals; a query of one is answered by
 * U from the table.  What is recorded is what the kernel would report. */
long b_check_sigaction(struct secure_page *sp)
{
	struct k_sigaction act;
	int sig = (int)sp->args[0];
	if (sp->args[3] != 8 || sig < 1 || sig >= SIGTAB_N)
		return -EINVAL;
	int kept = (SANDPIT_KEPT_SIGNALS & SANDPIT_SIGBIT(sig)) != 0;
	if (!sp->args[1])
		return kept ? SP_V_ACK : 0;
	if (b_read_mem(&act, sp->args[1], sizeof(act)))
		return -EFAULT;
	if ((act.handler > 1 && b_in_protected(act.handler)) ||
	    ((act.flags & SANDPIT_SA_RESTORER) && b_in_protected(act.restorer)))
		return -EPERM;
	act.flags &= UAPI_SA_FLAGS;
	act.mask &= ~(SANDPIT_SIGBIT(SIGKILL) | SANDPIT_SIGBIT(SIGSTOP));
	struct k_sigaction *rec = &b_cfg()->sigtab->act[sig];
	if (kept) {
		*rec = act;
		return SP_V_ACK;
	}
	if (act.handler > 1 && sig != SIGKILL && sig != SIGSTOP) {
		*rec = act;
		act.handler = (uint64_t)(uintptr_t)sandpit_signal_entry;
		act.flags |= SA_SIGINFO | SANDPIT_SA_RESTORER;
		/* SA_RESETHAND is U's to apply, at delivery (u_signal.c): the
		 * kernel's reset would come when the signal lands, and one put
		 * off lands before it is delivered */
		act.flags &= ~(uint64_t)SA_RESETHAND;
		act.restorer = (uint64_t)(uintptr_t)sandpit_restorer;
		/* the kept ones stay unblocked for real; the handler's mask for
		 * them is the program's view (u_signal.c) */
		act.mask &= ~SANDPIT_KEPT_SIGNALS;
	} else {
		memset(rec, 0, sizeof(*rec));
		/* SIG_IGN is recorded: a signal put off before it was set is
		 * then discarded at delivery, as the kernel discards a pending
		 * one (u_signal.c), where SIG_DFL is the default action */
		if (act.handler == (uint64_t)(uintptr_t)SIG_IGN)
			rec->handler = act.handler;
	}
	memcpy(sp->data, &act, sizeof(act));
	sp->args[1] = (uint64_t)(uintptr_t)sp->data;
	return 0;
}

