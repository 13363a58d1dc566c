/* A resolved path checked against the policy's grants and denies, as B
 * checks U's path arguments (policy.h, "Path checks made by B"); the path
 * itself is made absolute, normalised and resolved first (policy/path.c). */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"

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
