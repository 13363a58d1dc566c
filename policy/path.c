/* Path resolution and grant checks, as B makes them for U's path arguments.
 * A path is checked only after it has been made absolute, normalised and
 * resolved: string prefixes of what U wrote mean nothing. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "policy/policy.h"

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
 * faster than a readlink per component.  Any doubt (a link, a missing
 * component, no openat2) answers no and the walk decides. */
static int no_link_on_the_way(const char *abs, int follow_last, int *keep)
{
	/* the walk gives /proc/self and /proc/thread-self P's pid, even where
	 * they are the last component and not followed */
	for (const char *c = abs; *c;) {
		size_t n = strcspn(c, "/");
		if ((n == 4 && !memcmp(c, "self", 4)) || (n == 11 && !memcmp(c, "thread-self", 11)))
			return 0;
		c += n + (c[n] == '/');
	}
	struct open_how how = { .flags = O_PATH | O_CLOEXEC | (follow_last ? 0 : O_NOFOLLOW),
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	long fd = syscall(SYS_openat2, AT_FDCWD, abs, &how, sizeof(how));

	if (fd < 0)
		return 0;
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

int path_resolve(pid_t pid, const char *cwd, const char *path, int flags, char *out,
		 size_t outlen)
{
	return path_resolve_fd(pid, cwd, path, flags, out, outlen, NULL);
}

/* res holds the resolved prefix without a trailing slash ("" is the root). */
int path_resolve_fd(pid_t pid, const char *cwd, const char *path, int flags, char *out,
		    size_t outlen, int *fd)
{
	if (fd)
		*fd = -1;
	char res[PATH_MAX], link[PATH_MAX], pend[2 * PATH_MAX + 2], tmp[2 * PATH_MAX + 2];
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
		if (r < 0 && fd) {
			close(*fd);
			*fd = -1;
		}
		return r;
	}
	res[0] = '\0';
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
		if (rl + 1 + len >= sizeof(res))
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
				if ((size_t)snprintf(res + rl, sizeof(res) - rl, "/%d", (int)pid) >=
				    sizeof(res) - rl)
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

int policy_open_access(long flags)
{
	unsigned int f = (unsigned int)flags; /* the kernel takes an int */

	if ((f & O_ACCMODE) != O_RDONLY || (f & (O_CREAT | O_TRUNC | O_APPEND)) ||
	    (f & (O_TMPFILE & ~O_DIRECTORY)))
		return PA_WRITE;
	return PA_READ;
}

int policy_proc_access(const struct policy_proc_arg *a, const uint64_t args[6])
{
	if (!a || a->kind != PK_PATH)
		return PA_NEVER;
	if (a->access == PA_OPEN)
		return a->flags_arg == POLICY_NOARG ? PA_NEVER
						    : policy_open_access((long)args[a->flags_arg]);
	return a->access;
}

int policy_proc_follow(const struct policy_proc_arg *a, const uint64_t args[6])
{
	if (!a || a->nofollow)
		return 0;
	if (a->flags_arg == POLICY_NOARG)
		return 1;
	if (a->access == PA_OPEN)
		return !(args[a->flags_arg] & O_NOFOLLOW);
	return !(args[a->flags_arg] & AT_SYMLINK_NOFOLLOW);
}

static int all_digits(const char *s, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* Skips "/<digits>" at *s; 0 if it is not there. */
static int skip_pid(const char **s)
{
	const char *p = *s, *q;

	if (*p != '/')
		return 0;
	for (q = ++p; *q && *q != '/'; q++)
		;
	if (!all_digits(p, q - p))
		return 0;
	*s = q;
	return 1;
}

/* /proc/<n>/mem or /proc/<n>/task/<m>/mem: writing it writes a process's
 * memory, whatever the grants say (invariant 7). */
static int proc_mem(const char *path)
{
	const char *s = path + 5;

	if (strncmp(path, "/proc/", 6) || !skip_pid(&s))
		return 0;
	if (!strncmp(s, "/task", 5) && (s += 5, !skip_pid(&s)))
		return 0;
	return !strcmp(s, "/mem");
}

static int covers(const char *grant, int exact, const char *path)
{
	size_t n = strlen(grant);

	if (exact)
		return !strcmp(grant, path);
	if (n == 1) /* "/" */
		return 1;
	return !strncmp(grant, path, n) && (path[n] == '/' || !path[n]);
}

/* A grant or deny pattern naming /proc/self or /proc/thread-self means P:
 * the text with /proc/<pid> in their place, in buf, or gp as it is. */
static const char *for_pid(const char *gp, pid_t pid, char *buf, size_t len)
{
	const char *rest = NULL;

	if (!strncmp(gp, "/proc/self", 10) && (gp[10] == '/' || !gp[10]))
		rest = gp + 10;
	else if (!strncmp(gp, "/proc/thread-self", 17) && (gp[17] == '/' || !gp[17]))
		rest = gp + 17;
	if (!rest)
		return gp;
	if ((size_t)snprintf(buf, len, "/proc/%d%s", (int)pid, rest) >= len)
		return NULL;
	return buf;
}

/* A deny matches the path or a directory above it (FNM_LEADING_DIR); '*'
 * never crosses a '/' (FNM_PATHNAME); a leading dot is matched like any
 * character, so "*_key" also refuses ".x_key".  The literal head is
 * compared first: most paths differ there, and fnmatch is not called. */
const char *policy_path_denied(const struct policy *p, pid_t pid, const char *path)
{
	char buf[PATH_MAX];

	for (size_t i = 0; i < policy_ndenies(p); i++) {
		const struct policy_deny *d = policy_deny_at(p, i);
		/* only a /proc/... pattern can name /proc/self */
		const char *pat = d->pattern[1] == 'p' ? for_pid(d->pattern, pid, buf, sizeof(buf))
						       : d->pattern;
		if (!pat) /* cannot say: refuse */
			return d->pattern;
		size_t lit = pat == d->pattern ? d->literal : strcspn(pat, "*?[\\"), k = 0;
		/* byte by byte: most heads differ in their first few bytes, where
		 * a call to strncmp would cost more than the comparison */
		while (k < lit && pat[k] == path[k])
			k++;
		if (k < lit)
			continue;
		if (!strcmp(pat, "/") || fnmatch(pat, path, FNM_PATHNAME | FNM_LEADING_DIR) == 0)
			return d->pattern;
	}
	return NULL;
}

const char *policy_path_holds_denied(const struct policy *p, pid_t pid, const char *path)
{
	char buf[PATH_MAX], head[PATH_MAX];
	const char *d = policy_path_denied(p, pid, path);
	size_t n = 0;

	if (d)
		return d;
	for (const char *c = path; *c; c++)
		n += *c == '/' && c[1];
	for (size_t i = 0; i < policy_ndenies(p); i++) {
		const struct policy_deny *dn = policy_deny_at(p, i);
		const char *pat = dn->pattern[1] == 'p' ? for_pid(dn->pattern, pid, buf, sizeof(buf))
							: dn->pattern;
		size_t k = 0, comps = 0;

		if (!pat || !strcmp(path, "/"))
			return dn->pattern;
		/* the pattern's first n components, if it has more: what a path
		 * of n components must match to hold what the pattern matches */
		while (pat[k] && !(pat[k] == '/' && comps++ == n))
			k++;
		if (!pat[k] || k >= sizeof(head))
			continue;
		memcpy(head, pat, k);
		head[k] = 0;
		if (fnmatch(head, path, FNM_PATHNAME) == 0)
			return dn->pattern;
	}
	return NULL;
}

/* Whether path lies strictly below the directory grant (the grant's own
 * root excluded). */
static int below(const char *grant, const char *path)
{
	size_t n = strlen(grant);

	if (n == 1) /* "/" */
		return path[1] != '\0';
	return !strncmp(grant, path, n) && path[n] == '/';
}

/* Whether gr is a directory write grant that holds path strictly below its
 * root: where names may be made, changed and removed, and metadata set. */
static int grant_holds_below(const struct policy_grant *gr, pid_t pid, const char *path)
{
	char g[PATH_MAX];
	const char *gp;

	if (!gr->writable || gr->exact)
		return 0;
	gp = for_pid(gr->path, pid, g, sizeof(g));
	return gp && below(gp, path);
}

int policy_path_holds_grant(const struct policy *p, pid_t pid, const char *path)
{
	char g[PATH_MAX];
	size_t n = strlen(path);

	for (size_t i = 0; i < policy_ngrants(p); i++) {
		const char *gp = for_pid(policy_grant_at(p, i)->path, pid, g, sizeof(g));

		if (!gp) /* cannot say: refuse */
			return 1;
		if (!strcmp(gp, path) || n == 1 || (!strncmp(gp, path, n) && gp[n] == '/'))
			return 1;
	}
	return 0;
}

/* Whether grant gr gives `access` to the (checked) path. */
static int grant_covers(const struct policy_grant *gr, pid_t pid, const char *path, int access)
{
	char g[PATH_MAX];
	const char *gp = for_pid(gr->path, pid, g, sizeof(g));

	if (access == PA_WRITE && !gr->writable)
		return 0;
	return gp && covers(gp, gr->exact, path);
}

static int checkable(const char *path)
{
	char norm[PATH_MAX];

	return path && path_normalise(path, norm, sizeof(norm)) == 0 && !strcmp(norm, path);
}

int policy_check_path(const struct policy *p, pid_t pid, const char *path, int access)
{
	if (!checkable(path))
		return -EINVAL;
	if (access != PA_READ && access != PA_WRITE)
		return access == PA_NEVER ? -EACCES : -EINVAL;
	if (access == PA_WRITE && proc_mem(path))
		return -EACCES;
	/* a deny wins over every grant */
	if (policy_path_denied(p, pid, path))
		return -EACCES;
	for (size_t i = 0; i < policy_ngrants(p); i++)
		if (grant_covers(policy_grant_at(p, i), pid, path, access))
			return 0;
	return -EACCES;
}

int policy_check_ancestor(const struct policy *p, pid_t pid, const char *path)
{
	char g[PATH_MAX];
	size_t n;

	if (!checkable(path))
		return -EINVAL;
	if (policy_path_denied(p, pid, path))
		return -EACCES;
	n = strlen(path);
	for (size_t i = 0; i < policy_ngrants(p); i++) {
		const char *gp = for_pid(policy_grant_at(p, i)->path, pid, g, sizeof(g));

		if (gp && (n == 1 || (!strncmp(gp, path, n) && gp[n] == '/')))
			return 0;
	}
	return -EACCES;
}

/* A grant of a file (exact) lets U write the file, never remove, rename or
 * link it: names are made and changed only strictly below directory write
 * grants.  A grant's root, and every directory above one, is never made,
 * removed, renamed, replaced or linked: the next run resolves its grants
 * anew, and would follow a link U left where a granted directory was.  A
 * name that is denied, or a directory that holds what a deny matches, is
 * never made, removed, renamed or linked: moving /etc/ssh would take its
 * host keys out of their pattern's reach, a link would give a secret a
 * second name. */
int policy_check_namespace(const struct policy *p, pid_t pid, const char *a, const char *b)
{
	int in_a = 0, in_b = 0;

	if (!checkable(a) || (b && !checkable(b)))
		return -EINVAL;
	if (proc_mem(a) || (b && proc_mem(b)))
		return -EACCES;
	if (policy_path_holds_denied(p, pid, a) || (b && policy_path_holds_denied(p, pid, b)))
		return -EACCES;
	if (policy_path_holds_grant(p, pid, a) || (b && policy_path_holds_grant(p, pid, b)))
		return -EACCES;
	for (size_t i = 0; i < policy_ngrants(p); i++) {
		const struct policy_grant *gr = policy_grant_at(p, i);
		int ca = grant_holds_below(gr, pid, a);
		int cb = b && grant_holds_below(gr, pid, b);

		if (ca && (!b || cb))
			return 0;
		in_a |= ca;
		in_b |= cb;
	}
	return in_a && in_b ? -EXDEV : -EACCES;
}

/* A grant of a file is a grant of its data: its mode, owner, times,
 * attributes and size are the file's owner's, and for /dev/null the
 * machine's.  Metadata is set only strictly below a directory write grant
 * (where U may make names anyway); the caller also refuses device nodes
 * there, from the object it acts on. */
int policy_check_metadata(const struct policy *p, pid_t pid, const char *path)
{
	if (!checkable(path))
		return -EINVAL;
	if (proc_mem(path) || policy_path_denied(p, pid, path))
		return -EACCES;
	for (size_t i = 0; i < policy_ngrants(p); i++)
		if (grant_holds_below(policy_grant_at(p, i), pid, path))
			return 0;
	return -EACCES;
}
