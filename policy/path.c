/* Path resolution, as B makes it for U's path arguments (see path.h).
 * A path is checked (policy/path_check.c) only after it has been made
 * absolute, normalised and resolved here: string prefixes of what U wrote
 * mean nothing. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "policy/path.h"

#define MAX_LINKS     40 /* as the kernel: then ELOOP */
#define PROC_ROOT_INO 1

long path_from_copy(const char *bytes, size_t cap, uint32_t len, char *buf, size_t max)
{
	if (len >= cap || len >= max || strnlen(bytes, cap) != len)
		return -1;
	memcpy(buf, bytes, len);
	buf[len] = 0;
	return len;
}

int path_normalise(const char *path, char *out, size_t outlen)
{
	size_t n = 0;
	const char *p = path, *q;

	if (!path || path[0] != '/')
		return -EINVAL;
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		for (q = p; *q && *q != '/'; q++)
			;
		if (q - p == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 0 && out[--n] != '/')
				;
		} else if (q - p != 1 || p[0] != '.') {
			if (n + 1 + (size_t)(q - p) + 1 > outlen)
				return -ENAMETOOLONG;
			out[n++] = '/';
			memcpy(out + n, p, q - p);
			n += q - p;
		}
		p = q;
	}
	if (n + 2 > outlen)
		return -ENAMETOOLONG;
	if (!n)
		out[n++] = '/';
	out[n] = '\0';
	return 0;
}

/* 0: not procfs, 1: the root of a procfs mount, 2: inside one. */
static int proc_dir(const char *dir)
{
	struct statfs sfs;
	struct stat st;

	if (statfs(dir, &sfs) < 0 || stat(dir, &st) < 0)
		return -errno;
	if (sfs.f_type != PROC_SUPER_MAGIC)
		return 0;
	return st.st_ino == PROC_ROOT_INO ? 1 : 2;
}

/* Whether an absolute path reaches something with no link on the way (the
 * last component excepted when it is not followed): then the walk below
 * would read no link, and one openat2 that refuses every link tells so
 * faster than a readlink per component.  So too where the openat2 finds a
 * component missing (ENOENT): it met no link before it (a link would have
 * been ELOOP first), and the walk, which keeps every name from a missing
 * one on as it is, would read the same text; unless a '..' follows
 * (the kernel cannot walk back out of what is not there: the walk says
 * so), and so only in a path without '..' (nor a name too long, which the
 * walk refuses even past a missing one).  Python's imports and ld.so's
 * search ask mostly for names that are not there: a readlink per
 * component each.  Any other doubt (a link, no openat2) answers no and
 * the walk decides. */
static int no_link_on_the_way(const char *abs, int follow_last, int *keep)
{
	int odd = 0; /* a '..', or a name the walk finds too long wherever it is */
	/* the walk gives /proc/self and /proc/thread-self P's pid, even where
	 * they are the last component and not followed */
	for (const char *c = abs; *c;) {
		size_t n = strcspn(c, "/");
		if ((n == 4 && !memcmp(c, "self", 4)) || (n == 11 && !memcmp(c, "thread-self", 11)))
			return 0;
		odd |= (n == 2 && !memcmp(c, "..", 2)) || n > NAME_MAX;
		c += n + (c[n] == '/');
	}
	struct open_how how = { .flags = O_PATH | O_CLOEXEC | (follow_last ? 0 : O_NOFOLLOW),
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	long fd = syscall(SYS_openat2, AT_FDCWD, abs, &how, sizeof(how));

	if (fd < 0)
		return errno == ENOENT && !odd;
	if (keep)
		*keep = (int)fd;
	else
		close((int)fd);
	return 1;
}

int path_name_beneath(const char *name)
{
	if (!name || !*name || name[0] == '/')
		return 0;
	for (const char *c = name; *c;) {
		size_t n = strcspn(c, "/");
		if ((n == 2 && !memcmp(c, "..", 2)) || (n == 4 && !memcmp(c, "self", 4)) ||
		    (n == 11 && !memcmp(c, "thread-self", 11)) || n > NAME_MAX)
			return 0;
		c += n;
		while (*c == '/')
			c++;
	}
	return 1;
}

int path_open_beneath(int dir, const char *name, int flags)
{
	if (!(flags & PATH_OPENAT2) || !path_name_beneath(name))
		return -EAGAIN;
	struct open_how how = { .flags = O_PATH | O_CLOEXEC | (flags & PATH_NOFOLLOW ? O_NOFOLLOW : 0),
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
					   RESOLVE_BENEATH };
	long fd = syscall(SYS_openat2, dir, name, &how, sizeof(how));
	if (fd >= 0)
		return (int)fd;
	return errno == ENOENT ? -ENOENT : -EAGAIN;
}

int path_join_beneath(const char *dir, const char *name, char *out, size_t outlen)
{
	char pend[2 * PATH_MAX + 2];

	if (!dir || dir[0] != '/' || !path_name_beneath(name))
		return -EINVAL;
	if ((size_t)snprintf(pend, sizeof(pend), "%s/%s", dir, name) >= sizeof(pend))
		return -ENAMETOOLONG;
	return path_normalise(pend, out, outlen);
}

/* "<n>" (n bytes at c) is pid (me, as text) or one of its threads: procfs
 * has /proc/<pid>/task/<n> for each, and spells no number with a leading
 * zero */
static int thread_of(const char *me, const char *c, size_t n)
{
	if (!n || n > 10 || c[0] == '0')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (c[i] < '0' || c[i] > '9')
			return 0;
	if (n == strlen(me) && !memcmp(c, me, n))
		return 1;
	char task[64];
	struct stat st;
	snprintf(task, sizeof(task), "/proc/%s/task/%.*s", me, (int)n, c);
	return stat(task, &st) == 0;
}

int path_proc_exe(pid_t pid, const char *abs)
{
	char me[16];
	snprintf(me, sizeof(me), "%d", (int)pid);
	if (strncmp(abs, "/proc/", 6))
		return 0;
	const char *c = abs + 6;
	size_t n = strcspn(c, "/");
	if (!thread_of(me, c, n))
		return 0;
	c += n;
	if (!strncmp(c, "/task/", 6)) {
		c += 6;
		n = strcspn(c, "/");
		if (!thread_of(me, c, n))
			return 0;
		c += n;
	}
	return !strcmp(c, "/exe") && proc_dir("/proc") == 1;
}

int path_resolve(pid_t pid, const char *cwd, const char *path, int flags, char *out,
		 size_t outlen)
{
	return path_resolve_fd(pid, cwd, path, flags, out, outlen, NULL);
}

static int resolve_walk(pid_t pid, const char *cwd, const char *path, int flags, char *out,
			size_t outlen, int *fd, char *res);

int path_resolve_fd(pid_t pid, const char *cwd, const char *path, int flags, char *out,
		    size_t outlen, int *fd)
{
	char res[PATH_MAX];
	if (fd)
		*fd = -1;
	res[0] = '\0';
	int r = resolve_walk(pid, cwd, path, flags, out, outlen, fd, res);
	if (r < 0 && outlen)
		snprintf(out, outlen, "%s", strlen(res) < outlen ? res : "");
	return r;
}

/* res holds the resolved prefix without a trailing slash ("" is the root);
 * the caller's, so that a failure can say where it happened. */
static int resolve_walk(pid_t pid, const char *cwd, const char *path, int flags, char *out,
			size_t outlen, int *fd, char *res)
{
	char link[PATH_MAX], pend[2 * PATH_MAX + 2], tmp[2 * PATH_MAX + 2];
	const char *p, *q;
	int links = 0, missing = 0, follow_last = !(flags & PATH_NOFOLLOW);
	size_t rl, len;

	if (!path || !*path)
		return -ENOENT;
	if (path[0] == '/') {
		if (strlen(path) >= sizeof(pend))
			return -ENAMETOOLONG;
		strcpy(pend, path);
	} else {
		if (!cwd || cwd[0] != '/')
			return -EINVAL;
		if ((size_t)snprintf(pend, sizeof(pend), "%s/%s", cwd, path) >= sizeof(pend))
			return -ENAMETOOLONG;
	}
	if ((flags & PATH_OPENAT2) && no_link_on_the_way(pend, follow_last, fd)) {
		int r = path_normalise(pend, out, outlen);
		if (r < 0 && fd && *fd >= 0) {
			close(*fd);
			*fd = -1;
		}
		return r;
	}
	p = pend;
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		for (q = p; *q && *q != '/'; q++)
			;
		len = q - p;
		if (len == 1 && p[0] == '.') {
			p = q;
			continue;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			/* the kernel cannot walk back out of a directory that is not there */
			if (missing)
				return -ENOENT;
			char *slash = strrchr(res, '/');
			if (slash)
				*slash = '\0';
			p = q;
			continue;
		}
		if (len > NAME_MAX)
			return -ENAMETOOLONG;
		rl = strlen(res);
		if (rl + 1 + len >= PATH_MAX)
			return -ENAMETOOLONG;
		res[rl] = '/';
		memcpy(res + rl + 1, p, len);
		res[rl + 1 + len] = '\0';
		p = q;
		if (missing)
			continue;

		/* In B, /proc/self would be B; U means P. */
		if ((len == 4 && !memcmp(res + rl + 1, "self", 4)) ||
		    (len == 11 && !memcmp(res + rl + 1, "thread-self", 11))) {
			res[rl] = '\0';
			int pd = proc_dir(rl ? res : "/");
			res[rl] = '/';
			if (pd < 0)
				return pd;
			if (pd == 1) {
				if ((size_t)snprintf(res + rl, PATH_MAX - rl, "/%d", (int)pid) >=
				    PATH_MAX - rl)
					return -ENAMETOOLONG;
				continue;
			}
		}
		if (!*p && !follow_last)
			continue;

		ssize_t n = readlink(res, link, sizeof(link));
		if (n < 0) {
			if (errno == EINVAL) /* not a symlink */
				continue;
			if (errno == ENOENT) { /* kept as it is, for creation */
				missing = 1;
				continue;
			}
			return -errno;
		}
		if ((size_t)n >= sizeof(link))
			return -ENAMETOOLONG;
		link[n] = '\0';
		if (++links > MAX_LINKS)
			return -ELOOP;

		/* The program's own exe link is B's to answer (path.h) */
		if ((flags & PATH_OWN_EXE) && path_proc_exe(pid, res)) {
			if (*p)
				return -ENOTDIR;
			break;
		}
		/* A magic link (/proc/<n>/fd/N, cwd, exe, map_files/...) opens the
		 * object itself, which its text only describes: follow it only when
		 * the text is a path that exists. */
		res[rl] = '\0';
		int pd = proc_dir(rl ? res : "/");
		if (pd < 0)
			return pd;
		if (pd == 2) {
			struct stat st;
			if (link[0] != '/' || stat(link, &st) < 0)
				return -EACCES;
		}
		if (link[0] == '/')
			res[0] = '\0';
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s%s", link, p) >= sizeof(tmp))
			return -ENAMETOOLONG;
		strcpy(pend, tmp);
		p = pend;
	}
	rl = strlen(res);
	if (rl + 2 > outlen)
		return -ENAMETOOLONG;
	strcpy(out, rl ? res : "/");
	return 0;
}
