/* The policy model: per syscall a class, register rules and a memory-argument
 * description, plus the path grants.  Argument checking lives here; the back
 * ends (table.c, dump.c, later BPF) only read the model. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/policy.h"

/* What a policy learned of the paths on its grants' and denies' way while
 * it is built: a path that is no symbolic link, one that is, or a
 * directory listed whole (its entries then learned from their types, one
 * getdents for the forty denies under /etc rather than a readlink each). */
enum { KNOWN_PLAIN, KNOWN_LINK, KNOWN_LISTED };
struct known {
	char *path;
	int kind, misses; /* misses: children looked up that were not known */
};

struct policy {
	/* the calls the policy mentions, each its own allocation (NULL: not
	 * mentioned): a model of a few hundred calls touches a few pages, not
	 * the 450 KiB a table of every number would take */
	struct policy_call *calls[POLICY_MAX_NR];
	int dflt_cls, dflt_err; /* what unmentioned numbers below POLICY_DEFAULT_NR get */
	struct policy_call dflt_call;
	struct policy_grant *grants;
	size_t ngrants, grants_cap;
	size_t grants_sourced; /* grants before this one have their source set */
	char **files;          /* the names policy_set_source was given */
	size_t nfiles;
	struct policy_deny *denies;
	size_t ndenies, denies_cap;
	struct policy_connect connects[POLICY_MAX_CONNECT];
	size_t nconnects;
	struct known *known;   /* paths learned while it is built (real_path) */
	size_t nknown, known_cap;
};

static const struct policy_call unmentioned = { .cls = POLICY_DENY, .err = ENOSYS };

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

int policy_new(struct policy **out)
{
	struct policy *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->dflt_cls = POLICY_DENY;
	p->dflt_err = ENOSYS;
	p->dflt_call = unmentioned;
	*out = p;
	return 0;
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	for (int nr = 0; nr < POLICY_MAX_NR; nr++)
		free(p->calls[nr]);
	for (size_t i = 0; i < p->ngrants; i++)
		free(p->grants[i].path);
	free(p->grants);
	for (size_t i = 0; i < p->nfiles; i++)
		free(p->files[i]);
	free(p->files);
	for (size_t i = 0; i < p->ndenies; i++)
		free(p->denies[i].pattern);
	free(p->denies);
	for (size_t i = 0; i < p->nknown; i++)
		free(p->known[i].path);
	free(p->known);
	free(p);
}

int policy_add_connect(struct policy *p, const struct policy_connect *c)
{
	for (size_t i = 0; i < p->nconnects; i++)
		if (!memcmp(&p->connects[i], c, sizeof(*c)))
			return 0;
	if (p->nconnects == POLICY_MAX_CONNECT)
		return -E2BIG;
	p->connects[p->nconnects++] = *c;
	return 0;
}

size_t policy_nconnects(const struct policy *p)
{
	return p->nconnects;
}

const struct policy_connect *policy_connect_at(const struct policy *p, size_t i)
{
	return i < p->nconnects ? &p->connects[i] : NULL;
}

int policy_syscall_nr(const char *name, char *err, size_t errlen)
{
	int nr;

	if (!name || !*name)
		return fail(err, errlen, -EINVAL, "empty system call name");
	nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name);
	if (nr == __NR_SCMP_ERROR)
		return fail(err, errlen, -ENOENT, "unknown system call '%s'", name);
	if (nr < 0) /* a libseccomp pseudo-number: the call exists elsewhere */
		return fail(err, errlen, -EINVAL, "'%s' is not an x86-64 system call", name);
	if (nr >= POLICY_MAX_NR)
		return fail(err, errlen, -ERANGE, "system call '%s' (%d) is out of range", name, nr);
	return nr;
}

static int valid_errno(int e)
{
	return e > 0 && e < 4096;
}

static int valid_arg(int a)
{
	return a >= 0 && a < 6;
}

/* Seccomp strict mode lets U make these itself; nothing else can be native. */
int policy_strict_allows(int nr)
{
	static const char *const names[] = { "read", "write", "exit", "rt_sigreturn" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, names[i]) == nr)
			return 1;
	return 0;
}

/* Call nr's entry becomes *c (made on first mention). */
static int store_call(struct policy *p, int nr, const struct policy_call *c, const char *name,
		      char *err, size_t errlen)
{
	if (!p->calls[nr] && !(p->calls[nr] = malloc(sizeof(*c))))
		return fail(err, errlen, -ENOMEM, "%s: out of memory", name);
	*p->calls[nr] = *c;
	return 0;
}

int policy_load_call(struct policy *p, int nr, const struct policy_call *c)
{
	if (nr < 0 || nr >= POLICY_MAX_NR || p->calls[nr] || !c->mentioned || c->nrules < 0 ||
	    c->nrules > POLICY_MAX_RULES)
		return -EINVAL;
	struct policy_call copy = *c;
	copy.file = NULL;
	copy.line = copy.nguard = 0;
	return store_call(p, nr, &copy, "a call of the model", NULL, 0);
}

int policy_set(struct policy *p, const char *name, int cls, int errno_or_id, char *err,
	       size_t errlen)
{
	int nr = policy_syscall_nr(name, err, errlen);
	struct policy_call c = { .mentioned = 1, .cls = cls, .err = errno_or_id };

	if (nr < 0)
		return nr;
	switch (cls) {
	case POLICY_DENY:
	case POLICY_THREAD:
		if (!valid_errno(errno_or_id))
			return fail(err, errlen, -EINVAL, "%s: errno %d is out of range", name,
				    errno_or_id);
		break;
	case POLICY_ALLOW:
	case POLICY_KILL:
		if (errno_or_id)
			return fail(err, errlen, -EINVAL, "%s: allow and kill take no errno", name);
		break;
	case POLICY_NATIVE:
		if (errno_or_id)
			return fail(err, errlen, -EINVAL, "%s: native takes no errno", name);
		if (!policy_strict_allows(nr))
			return fail(err, errlen, -EINVAL,
				    "%s cannot be native: seccomp strict mode does not allow it", name);
		break;
	case POLICY_EMU:
		if (errno_or_id != POLICY_EMU_GETTID && errno_or_id != POLICY_EMU_ZERO &&
		    errno_or_id != POLICY_EMU_CLOSE_RANGE)
			return fail(err, errlen, -EINVAL, "%s: unknown emulation %d", name,
				    errno_or_id);
		break;
	case POLICY_PROCESS:
		return fail(err, errlen, -EINVAL, "%s: use policy_set_process for process class",
			    name);
	default:
		return fail(err, errlen, -EINVAL, "%s: unknown class %d", name, cls);
	}
	return store_call(p, nr, &c, name, err, errlen);
}

int policy_add_rule(struct policy *p, const char *name, const struct policy_rule *r,
		    char *err, size_t errlen)
{
	int nr = policy_syscall_nr(name, err, errlen);
	struct policy_call *c;

	if (nr < 0)
		return nr;
	c = p->calls[nr];
	if (!c || c->cls != POLICY_THREAD)
		return fail(err, errlen, -EINVAL, "%s: rules need the thread class", name);
	if (c->nrules >= POLICY_MAX_RULES)
		return fail(err, errlen, -E2BIG, "%s: more than %d rules", name, POLICY_MAX_RULES);
	if (r->op < RULE_MASK_ZERO || r->op > RULE_BITSET)
		return fail(err, errlen, -EINVAL, "%s: unknown rule op %d", name, r->op);
	if (!valid_arg(r->arg))
		return fail(err, errlen, -EINVAL, "%s: rule argument %d out of range", name, r->arg);
	if (r->op == RULE_RANGE_FREE ? !valid_arg(r->arg2) && r->arg2 != POLICY_NOARG
				    : r->arg2 != POLICY_NOARG)
		return fail(err, errlen, -EINVAL, "%s: bad length argument %d", name, r->arg2);
	if (r->carg != POLICY_NOARG && (!valid_arg(r->carg) || !r->cmask))
		return fail(err, errlen, -EINVAL, "%s: bad condition (arg %d, mask 0)", name,
			    r->carg);
	if (r->err && !valid_errno(r->err))
		return fail(err, errlen, -EINVAL, "%s: errno %d is out of range", name, r->err);
	c->rules[c->nrules++] = *r;
	return 0;
}

int policy_set_process(struct policy *p, const char *name, const struct policy_proc_arg *a,
		       char *err, size_t errlen)
{
	int nr = policy_syscall_nr(name, err, errlen);
	struct policy_call c = { .mentioned = 1, .cls = POLICY_PROCESS, .err = EACCES };

	if (nr < 0)
		return nr;
	if (a->kind == PK_PATH || a->kind == PK_PATH_OP) {
		/* PK_PATH_OP without a path: a call on the descriptor dirfd_arg */
		if (!valid_arg(a->path_arg) &&
		    !(a->kind == PK_PATH_OP && a->path_arg == POLICY_NOARG && valid_arg(a->dirfd_arg)))
			return fail(err, errlen, -EINVAL, "%s: path argument %d out of range", name,
				    a->path_arg);
		if (a->dirfd_arg != POLICY_NOARG && !valid_arg(a->dirfd_arg))
			return fail(err, errlen, -EINVAL, "%s: dirfd argument %d out of range",
				    name, a->dirfd_arg);
		if (a->flags_arg != POLICY_NOARG && !valid_arg(a->flags_arg))
			return fail(err, errlen, -EINVAL, "%s: flags argument %d out of range",
				    name, a->flags_arg);
		if (a->access < PA_READ || a->access > PA_NEVER)
			return fail(err, errlen, -EINVAL, "%s: unknown access %d", name, a->access);
		if (a->access == PA_OPEN && a->flags_arg == POLICY_NOARG)
			return fail(err, errlen, -EINVAL, "%s: open access needs a flags argument",
				    name);
	} else if (a->kind != PK_SIGACTION && a->kind != PK_CLONE && a->kind != PK_RLIMIT &&
		   a->kind != PK_NET) {
		return fail(err, errlen, -EINVAL, "%s: unknown argument kind %d", name, a->kind);
	}
	c.proc = *a;
	return store_call(p, nr, &c, name, err, errlen);
}

static int add_grant(struct policy *p, const char *path, int writable, int exact)
{
	struct policy_grant *g;

	if (p->ngrants == p->grants_cap) {
		size_t cap = p->grants_cap ? 2 * p->grants_cap : 16;

		g = realloc(p->grants, cap * sizeof(*g));
		if (!g)
			return -ENOMEM;
		p->grants = g;
		p->grants_cap = cap;
	}
	g = &p->grants[p->ngrants];
	g->path = strdup(path);
	if (!g->path)
		return -ENOMEM;
	g->writable = writable;
	g->exact = exact;
	g->file = NULL;
	g->line = 0;
	p->ngrants++;
	return 0;
}

static int under_proc(const char *path)
{
	return !strncmp(path, "/proc", 5) && (path[5] == '/' || !path[5]);
}

int policy_grant_target(const char *path, char *out, size_t outlen)
{
	char norm[PATH_MAX];
	int rc;

	if (!path || path[0] != '/')
		return -EINVAL;
	if ((rc = path_normalise(path, norm, sizeof(norm))) < 0)
		return rc;
	if (under_proc(norm))
		return 0;
	/* component by component, a dangling link and a missing tail
	 * included: realpath would say nothing of either */
	if ((rc = path_resolve(getpid(), "/", norm, 0, out, outlen)) < 0)
		return rc;
	return strcmp(out, norm) != 0;
}

static struct known *known_find(struct policy *p, const char *path, size_t len)
{
	for (size_t k = 0; k < p->nknown; k++)
		if (!strncmp(p->known[k].path, path, len) && !p->known[k].path[len])
			return &p->known[k];
	return NULL;
}

static struct known *known_add(struct policy *p, const char *path, size_t len, int kind)
{
	if (p->nknown == p->known_cap) {
		size_t cap = p->known_cap ? 2 * p->known_cap : 64;
		struct known *more = realloc(p->known, cap * sizeof(*more));
		if (!more)
			return NULL;
		p->known = more;
		p->known_cap = cap;
	}
	char *c = strndup(path, len);
	if (!c)
		return NULL;
	p->known[p->nknown] = (struct known){ .path = c, .kind = kind };
	return &p->known[p->nknown++];
}

/* the entries of directory dir (known to be no link), each by its type.
 * An entry of unknown type (file systems that give no d_type) stays
 * unknown, and so the directory is not marked listed: a name missing from
 * a listed directory is taken to be missing, and that entry may be a link
 * (a deny through it would lose its alias).  0, or -1 where it cannot be
 * listed whole */
static int known_list(struct policy *p, struct known *dir)
{
	char path[PATH_MAX];
	DIR *d = opendir(dir->path);
	struct dirent *e;
	size_t dl = strcmp(dir->path, "/") ? strlen(dir->path) : 0, at = (size_t)(dir - p->known);
	int unknown = 0;

	if (!d)
		return -1;
	memcpy(path, dir->path, dl);
	while ((e = readdir(d))) {
		size_t el = strlen(e->d_name);
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || dl + 1 + el >= sizeof(path))
			continue;
		if (e->d_type == DT_UNKNOWN) {
			unknown = 1;
			continue;
		}
		path[dl] = '/';
		memcpy(path + dl + 1, e->d_name, el);
		if (!known_find(p, path, dl + 1 + el) &&
		    !known_add(p, path, dl + 1 + el, e->d_type == DT_LNK ? KNOWN_LINK : KNOWN_PLAIN))
			break;
	}
	closedir(d);
	if (e)
		return -1;
	if (unknown) {
		p->known[at].misses = INT_MIN / 2; /* not listed again: readlink a child */
		return -1;
	}
	p->known[at].kind = KNOWN_LISTED; /* by index: known_add may have moved it */
	return 0;
}

static int names_a_directory(const char *target)
{
	size_t n = strlen(target);
	return n && (target[n - 1] == '/' ||
		     (target[n - 1] == '.' && (n == 1 || target[n - 2] == '/')));
}

/* cur with its link, the component ending at cur[i], replaced by target,
 * normalised into cur again (raw: scratch of 2 * PATH_MAX); -1 where
 * realpath must decide: a target with '..', one ending in '/' or '.' (it
 * must name a directory: the kernel says ENOTDIR where it is a file, a
 * difference normalising would lose), or one too long */
static int follow_link(char *cur, size_t i, const char *target, char *raw)
{
	size_t dir = i;
	while (dir > 0 && cur[dir - 1] != '/')
		dir--; /* the link's directory: cur[0, dir) */
	int n = target[0] == '/'
			? snprintf(raw, 2 * PATH_MAX, "%s%s", target, cur + i)
			: snprintf(raw, 2 * PATH_MAX, "%.*s%s%s", (int)dir, cur, target, cur + i);
	if (strstr(target, "..") || names_a_directory(target) || n < 0 ||
	    (size_t)n >= 2 * PATH_MAX || path_normalise(raw, cur, PATH_MAX) < 0)
		return -1;
	return 0;
}

/* realpath(orig) for a normalised absolute path (no '.', '..' or '//'),
 * which is its own real path when no component is a symbolic link.  A
 * component not yet known is read (readlink), or, from the second such
 * child of one directory on, found in that directory's listing; a missing
 * one fails as in realpath.  A link is read and its target put in its
 * place (the components before it are real, so a target without '..' is
 * resolved the same way, from what is known, starting over from the
 * root); what follow_link refuses, or a 41st link, goes to realpath, as
 * does any doubt: realpath of the path first asked (orig), never of one
 * with links already replaced, whose realpath would count its links from
 * 0 again and resolve a chain the kernel ends at 40 (ELOOP).  A loop, not
 * a recursion: a policy is built on its caller's stack, which may be a
 * small thread's, and a chain of 40 links then takes no more of it than
 * one (the three buffers here). */
static char *real_path(struct policy *p, const char *orig, char *real)
{
	char cur[PATH_MAX], target[PATH_MAX], raw[2 * PATH_MAX];
	size_t n = strlen(orig);
	int links = 0;

	if (n >= PATH_MAX || orig[0] != '/')
		return realpath(orig, real);
	memcpy(cur, orig, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (cur[i] && cur[i] != '/')
			continue;
		char end = cur[i];
		ssize_t t;
		struct known *k = known_find(p, cur, i);
		if (k && k->kind == KNOWN_LINK) {
			cur[i] = 0; /* the head, cur[0, i), for readlink */
			t = readlink(cur, target, sizeof(target) - 1);
			cur[i] = end;
			if (t < 0)
				return realpath(orig, real);
		} else if (k) {
			continue;
		} else {
			size_t pl = i;
			while (pl > 1 && cur[pl - 1] != '/')
				pl--;
			struct known *parent = known_find(p, cur, pl > 1 ? pl - 1 : 1);
			if (parent && parent->kind == KNOWN_LISTED) {
				errno = ENOENT; /* not in the listing */
				return NULL;
			}
			if (parent && ++parent->misses >= 2 && known_list(p, parent) == 0) {
				i = pl - 1; /* this component again, from the listing */
				continue;
			}
			cur[i] = 0;
			t = readlink(cur, target, sizeof(target) - 1);
			cur[i] = end;
			if (t < 0) {
				if (errno == ENOENT || errno == ENOTDIR)
					return NULL; /* as realpath: a component is missing */
				if (errno != EINVAL || !known_add(p, cur, i, KNOWN_PLAIN))
					return realpath(orig, real);
				continue;
			}
			if (!known_add(p, cur, i, KNOWN_LINK))
				return realpath(orig, real);
		}
		target[t] = 0;
		if (links++ >= 40 || follow_link(cur, i, target, raw) < 0)
			return realpath(orig, real);
		n = strlen(cur);
		i = 0; /* the new path from its root: i++ makes it 1 */
	}
	memcpy(real, cur, n + 1);
	return real;
}

int policy_resolve_existing(struct policy *p, const char *path, char *out)
{
	char head[PATH_MAX], real[PATH_MAX];
	size_t cut = strlen(path);

	if (cut >= sizeof(head) || path[0] != '/')
		return -ENAMETOOLONG;
	memcpy(head, path, cut + 1);
	/* a head that cannot be read (EACCES) is cut too: B goes no further */
	while (!real_path(p, cut ? head : "/", real)) {
		if (!cut)
			return -errno;
		char *slash = strrchr(head, '/');
		cut = slash ? (size_t)(slash - head) : 0;
		head[cut] = 0;
	}
	if ((size_t)snprintf(out, PATH_MAX, "%s%s", strcmp(real, "/") ? real : "", path + cut) >=
	    PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

/* A read grant is kept as written (normalised) and, when it names an
 * existing path through a symlink, also as its target: path_resolve hands
 * the checks resolved paths, so /lib must also grant /usr/lib.  A write
 * grant through a symlink is refused: the program may have made that link
 * in an earlier run, where the grant was a directory it could replace (it
 * no longer can: policy_check_namespace), and would be given what it
 * points to.  Nothing under /proc is resolved here: /proc/self would mean
 * this process, not P. */
int policy_grant(struct policy *p, const char *path, int writable, char *err, size_t errlen)
{
	char norm[PATH_MAX], real[PATH_MAX];
	struct stat st;
	int exact, rc;

	if (!path || path[0] != '/')
		return fail(err, errlen, -EINVAL, "grant '%s' is not an absolute path",
			    path ? path : "");
	rc = path_normalise(path, norm, sizeof(norm));
	if (rc < 0)
		return fail(err, errlen, rc, "grant '%s': %s", path, strerror(-rc));
	if (writable && !under_proc(norm)) {
		rc = policy_grant_target(norm, real, sizeof(real));
		if (rc == 1)
			return fail(err, errlen, -ELOOP,
				    "write grant '%s' goes through a symbolic link to '%s': a write "
				    "grant never follows one; grant '%s' if that is meant",
				    path, real, real);
		if (rc < 0)
			return fail(err, errlen, rc, "write grant '%s': cannot tell where it leads: %s",
				    path, strerror(-rc));
	}
	if (under_proc(norm)) {
		rc = add_grant(p, norm, writable, 0);
	} else {
		exact = !stat(norm, &st) && !S_ISDIR(st.st_mode);
		rc = add_grant(p, norm, writable, exact);
		if (rc == 0 && !writable && real_path(p, norm, real) && strcmp(real, norm))
			rc = add_grant(p, real, writable, exact);
	}
	return rc < 0 ? fail(err, errlen, rc, "grant '%s': %s", path, strerror(-rc)) : 0;
}

static int add_deny(struct policy *p, const char *pattern)
{
	struct policy_deny *d;

	for (size_t i = 0; i < p->ndenies; i++)
		if (!strcmp(p->denies[i].pattern, pattern))
			return 0;
	if (p->ndenies == p->denies_cap) {
		size_t cap = p->denies_cap ? 2 * p->denies_cap : 16;

		d = realloc(p->denies, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		p->denies = d;
		p->denies_cap = cap;
	}
	d = &p->denies[p->ndenies];
	d->pattern = strdup(pattern);
	if (!d->pattern)
		return -ENOMEM;
	d->literal = strcspn(pattern, "*?[\\");
	p->ndenies++;
	return 0;
}

/* No '.' or '..' component: the path a pattern is matched against has
 * none, so such a pattern would never match; "**" would only mean '*'. */
const char *policy_deny_pattern(const char *pattern, char *out, size_t outlen)
{
	const char *s = pattern;
	size_t n = 0;

	if (s[0] != '/')
		return "is not an absolute path";
	while (*s) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		size_t len = 0;
		while (s[len] && s[len] != '/') {
			if (s[len] == '\\') {
				if (!s[++len])
					return "ends in '\\', which quotes nothing";
				if (s[len] == '/')
					return "quotes a '/', which always separates components";
			} else if (s[len] == '*' && s[len + 1] == '*') {
				return "has '**': '*' never matches '/', and a pattern denies "
				       "everything under what it matches";
			} else if (s[len] == '[') {
				size_t k = len + 1;
				if (s[k] == '!' || s[k] == '^')
					k++;
				if (s[k] == ']')
					k++;
				while (s[k] && s[k] != ']' && s[k] != '/')
					k++;
				if (s[k] != ']')
					return "has a '[' that no ']' closes in the same component";
				len = k;
			}
			len++;
		}
		if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
			return "has a '.' or '..' component";
		if (n + 1 + len + 1 > outlen)
			return "is too long";
		out[n++] = '/';
		memcpy(out + n, s, len);
		n += len;
		s += len;
	}
	if (!n)
		out[n++] = '/';
	out[n] = 0;
	return NULL;
}

/* As for grants, a pattern whose directory part leads through a symlink is
 * also kept with that part resolved (wildcards in the target quoted), since
 * B checks resolved paths: a deny of /usr/lib/ssl/private must also refuse
 * /etc/ssl/private, where it leads, and a deny of a file not made yet
 * under a link refuses it where it will be made (the longest head that
 * exists resolved, the rest as written).  Nothing under /proc is
 * resolved. */
int policy_deny(struct policy *p, const char *pattern, char *err, size_t errlen)
{
	char norm[PATH_MAX], dir[PATH_MAX], real[PATH_MAX], alias[2 * PATH_MAX];
	const char *why;
	int rc;

	if (!pattern)
		return fail(err, errlen, -EINVAL, "deny: no pattern");
	if ((why = policy_deny_pattern(pattern, norm, sizeof(norm))))
		return fail(err, errlen, -EINVAL, "deny '%s' %s", pattern, why);
	rc = add_deny(p, norm);
	if (rc == 0 && !under_proc(norm)) {
		size_t lit = strcspn(norm, "*?[\\"), cut = lit;
		if (norm[lit])
			while (cut > 0 && norm[cut] != '/')
				cut--;
		memcpy(dir, norm, cut);
		dir[cut] = 0;
		if (cut && !policy_resolve_existing(p, dir, real) && strcmp(real, dir)) {
			size_t n = 0;
			for (const char *c = real; *c && n + 3 < sizeof(alias); c++) {
				if (strchr("*?[\\", *c))
					alias[n++] = '\\';
				alias[n++] = *c;
			}
			if ((size_t)snprintf(alias + n, sizeof(alias) - n, "%s", norm + cut) <
				    sizeof(alias) - n &&
			    strlen(alias) < PATH_MAX)
				rc = add_deny(p, alias);
		}
	}
	return rc < 0 ? fail(err, errlen, rc, "deny '%s': %s", pattern, strerror(-rc)) : 0;
}

int policy_set_default(struct policy *p, int cls, int err_no, char *err, size_t errlen)
{
	if (cls == POLICY_DENY && !valid_errno(err_no))
		return fail(err, errlen, -EINVAL, "default: errno %d is out of range", err_no);
	if (cls != POLICY_DENY && (cls != POLICY_KILL || err_no))
		return fail(err, errlen, -EINVAL, "default: only deny(errno) or kill");
	p->dflt_cls = cls;
	p->dflt_err = err_no;
	p->dflt_call = (struct policy_call){ .cls = cls, .err = err_no };
	return 0;
}

static const char *keep_file(struct policy *p, const char *file)
{
	for (size_t i = p->nfiles; i-- > 0;)
		if (!strcmp(p->files[i], file))
			return p->files[i];
	char **f = realloc(p->files, (p->nfiles + 1) * sizeof(*f));
	if (!f)
		return NULL;
	p->files = f;
	f[p->nfiles] = strdup(file);
	return f[p->nfiles] ? f[p->nfiles++] : NULL;
}

int policy_set_source(struct policy *p, int nr, const char *file, int line, int nguard)
{
	const char *f = file ? keep_file(p, file) : NULL;
	if (file && !f)
		return -ENOMEM;
	if (nr == POLICY_SRC_GRANTS) {
		for (; p->grants_sourced < p->ngrants; p->grants_sourced++) {
			p->grants[p->grants_sourced].file = f;
			p->grants[p->grants_sourced].line = line;
		}
		return 0;
	}
	struct policy_call *c = nr == POLICY_SRC_DEFAULT ? &p->dflt_call
			      : nr >= 0 && nr < POLICY_MAX_NR ? p->calls[nr]
							       : NULL;
	if (!c || nguard < 0 || nguard > c->nrules)
		return -EINVAL;
	c->file = f;
	c->line = line;
	c->nguard = nguard;
	return 0;
}

void policy_get_default(const struct policy *p, int *cls, int *err_no)
{
	*cls = p->dflt_cls;
	*err_no = p->dflt_err;
}

const struct policy_call *policy_call(const struct policy *p, int nr)
{
	if (nr < 0 || nr >= POLICY_MAX_NR)
		return &unmentioned;
	if (p->calls[nr])
		return p->calls[nr];
	return nr < POLICY_DEFAULT_NR ? &p->dflt_call : &unmentioned;
}

const struct policy_proc_arg *policy_proc_arg(const struct policy *p, int nr)
{
	const struct policy_call *c = policy_call(p, nr);

	return c->cls == POLICY_PROCESS ? &c->proc : NULL;
}

size_t policy_ngrants(const struct policy *p)
{
	return p->ngrants;
}

const struct policy_grant *policy_grant_at(const struct policy *p, size_t i)
{
	return i < p->ngrants ? &p->grants[i] : NULL;
}

size_t policy_ndenies(const struct policy *p)
{
	return p->ndenies;
}

const struct policy_deny *policy_deny_at(const struct policy *p, size_t i)
{
	return i < p->ndenies ? &p->denies[i] : NULL;
}
