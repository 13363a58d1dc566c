/* B's resolution of U's paths as the kernel will make it
 * (user/trusted/b_resolve.h): from P's working directory or one of its
 * descriptors, through the directory object itself where the kernel lets
 * B take it, else through /proc/P's links. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat/compat.h"
#include "policy/policy.h"
#include "user/trusted/b_resolve.h"
#include "user/trusted/b_state.h"

int b_proc_link(int s, char *out, size_t len, const char *what)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/%d/%s", (int)b_proc_of_slot(s)->pid, what);
	ssize_t n = readlink(link, out, len - 1);
	if (n < 0)
		return -errno;
	out[n] = 0;
	return out[0] == '/' ? 0 : -EACCES; /* sockets, pipes: no path to check */
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
static int resolve_from_dir_object(const struct b_proc *p, int dirfd, const char *name, int how,
				   char *out, int *fd, const char **leaf)
{
	if (!(how & PATH_OPENAT2) || p->pidfd < 0 || !compat_has(COMPAT_PIDFD_GETFD) ||
	    !path_name_beneath(name))
		return -EAGAIN;
	int dir = (int)syscall(SYS_pidfd_getfd, p->pidfd, dirfd, 0);
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

int b_resolve(int s, int dirfd, const char *path, int nofollow, char *out, int *fd,
	      const char **leaf)
{
	const struct b_proc *p = b_proc_of_slot(s);
	if (fd)
		*fd = -1;
	if (leaf)
		*leaf = "";
	char base[PATH_MAX];
	int r;
	int how = (nofollow ? PATH_NOFOLLOW : 0) | (compat_has(COMPAT_OPENAT2) ? PATH_OPENAT2 : 0) |
		  (p->exe_fd >= 0 ? PATH_OWN_EXE : 0);
	if (path[0] != '/' && dirfd != AT_FDCWD) {
		r = resolve_from_dir_object(p, dirfd, path, how, out, fd, leaf);
		if (r != -EAGAIN)
			return r;
	}
	if (path[0] == '/')
		r = 0, strcpy(base, "/");
	else if (dirfd == AT_FDCWD)
		r = b_proc_link(s, base, sizeof(base), "cwd");
	else {
		char what[32];
		snprintf(what, sizeof(what), "fd/%d", dirfd);
		r = b_proc_link(s, base, sizeof(base), what);
	}
	if (r < 0)
		return r == -ENOENT ? -EBADF : r;
	r = path_resolve_fd(p->pid, base, path, how, out, PATH_MAX, fd);
	/* A walk that fails tells what is where it failed: a file under which
	 * a name was asked (ENOTDIR), a link (ELOOP, a target too long), a
	 * name that is not there followed by '..' (ENOENT, where one that is
	 * resolves).  Outside what the program may see, that is EACCES, as
	 * any other name there */
	if ((r == -ENOENT || r == -ENOTDIR || r == -ELOOP || r == -ENAMETOOLONG) && out[0] == '/' &&
	    policy_check_path(b_cfg()->policy, p->pid, out, PA_READ) < 0 &&
	    policy_check_ancestor(b_cfg()->policy, p->pid, out) < 0)
		return -EACCES;
	return r;
}
