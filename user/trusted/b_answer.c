/* The calls B answers itself (user/trusted/b_answer.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "compat/compat.h"
#include "user/trusted/b_answer.h"
#include "user/layout/secure_mem.h"
#include "user/trusted/b_read.h"

enum answer_kind b_answer_kind(long nr)
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
	case SYS_statfs:
		return ANSWER_STATFS;
	case SYS_listxattr:
	case SYS_llistxattr:
		return ANSWER_LISTXATTR;
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
long b_einval_first(const struct secure_page *sp, int path_read)
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

long b_answered(struct secure_page *sp, long result, const void *bytes, uint32_t len, uint32_t arg)
{
	struct sp_answer *a = (struct sp_answer *)sp->data;
	if (len > SP_ANSWER_MAX)
		return -EIO;
	if (len)
		memmove(a->bytes, bytes, len);
	return answered(a, result, len, arg);
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
static long answer_xattr(int s, int fd, struct secure_page *sp, struct sp_answer *a)
{
	char name[256], proc[40];
	long n = b_read_string(s, name, sizeof(name), sp->args[1]);
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

/* listxattr(path, list, size), llistxattr: as getxattr, the names of B's
 * descriptor's object through B's own /proc/self/fd; a list longer than
 * the answer's room goes to T (0), as a long getxattr value does */
static long answer_listxattr(int fd, struct secure_page *sp, struct sp_answer *a)
{
	char proc[40];
	size_t size = (size_t)sp->args[2];
	size_t ask = size < SP_ANSWER_MAX ? size : SP_ANSWER_MAX;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	ssize_t r = listxattr(proc, ask ? (char *)a->bytes : NULL, ask);
	if (r < 0) {
		int err = errno;
		if ((err == ERANGE && size > SP_ANSWER_MAX) || err == ENOENT || err == EBADF ||
		    err == ENOSYS)
			return 0; /* longer than the room, or no /proc here: T's */
		return answered(a, -err, 0, 0);
	}
	return answered(a, r, size ? (uint32_t)r : 0, 1);
}

/* The answer about the object B checked: fd's own (leaf ""), or, for a
 * stat or statx of one component not followed, fd's entry leaf (fd the
 * directory: b_resolve). */
long b_answer(int s, enum answer_kind kind, int fd, const char *leaf, struct secure_page *sp)
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
		return answer_xattr(s, fd, sp, a);
	case ANSWER_STATFS: {
		/* fstatfs takes an O_PATH descriptor: the file system of the
		 * object B checked, not of where T's walk of the text would go */
		struct statfs sfs;
		_Static_assert(sizeof(sfs) == 120, "the kernel's struct statfs");
		if (fstatfs(fd, &sfs) < 0)
			return errno == EBADF || errno == ENOSYS ? 0 : -errno;
		memcpy(a->bytes, &sfs, sizeof(sfs));
		return answered(a, 0, sizeof(sfs), 1);
	}
	case ANSWER_LISTXATTR:
		return answer_listxattr(fd, sp, a);
	case ANSWER_NONE:
		break;
	}
	return 0;
}
