/* `sandpit profile`, second half: from what the profiler saw to a policy
 * file (sandpit.policy(5)).  Each call the program made gets the default
 * policy's rule if the default has one, else the narrowest action the
 * file format and policy/guard.c allow it; each path it used becomes a
 * grant, collapsed to whole system directories and to parent directories. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "loader/profile.h"
#include "policy/policy.h"

/* policy/default.policy, embedded by policy/default_policy.S */
extern const char sandpit_default_policy[];
extern const uint64_t sandpit_default_policy_len;

/* Directories granted whole for reading when a program reads anything under
 * them: the system's programs, libraries and configuration. */
static const char *const system_dirs[] = { "/usr", "/lib", "/lib64", "/lib32", "/libx32",
					   "/bin", "/sbin", "/etc" };

static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

static int depth(const char *path)
{
	int d = 0;
	for (const char *p = path; *p; p++)
		d += *p == '/' && p[1];
	return d;
}

static int add_grant(struct profile_record *r, const char *path, int write)
{
	for (size_t i = 0; i < r->ngrants; i++)
		if (!strcmp(r->grants[i].path, path)) {
			r->grants[i].write |= write;
			return 0;
		}
	if (r->ngrants == r->cap_grants) {
		size_t cap = r->cap_grants ? 2 * r->cap_grants : 64;
		struct profile_grant *g = realloc(r->grants, cap * sizeof(*g));
		if (!g)
			return -ENOMEM;
		r->grants = g;
		r->cap_grants = cap;
	}
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	r->grants[r->ngrants++] = (struct profile_grant){ copy, write };
	return 0;
}

/* The directory a file's grant goes to, or NULL if that directory is too
 * wide to grant for one file (/, a top-level directory, the home). */
static const char *parent_grant(const char *path, char *buf, size_t len)
{
	const char *home = getenv("HOME");
	char *slash;

	if (snprintf(buf, len, "%s", path) >= (int)len || !(slash = strrchr(buf, '/')))
		return NULL;
	*slash = 0;
	if (depth(buf) < 2 || (home && home[0] == '/' && !strcmp(buf, home)))
		return NULL;
	return buf;
}

int profile_add_access(struct profile_record *r, const char *abs, int write, int create, int dir,
		       int failed)
{
	char buf[PATH_MAX];
	struct stat st;
	const char *g;

	/* /proc/self is the sandboxed process; the rest of /proc and /dev,
	 * /sys, file by file */
	if (under(abs, "/proc/self"))
		return write ? add_grant(r, abs, 1) : add_grant(r, "/proc/self", 0);
	if (under(abs, "/sys/devices/system/cpu") && !write)
		return add_grant(r, "/sys/devices/system/cpu", 0);
	if (under(abs, "/proc") || under(abs, "/dev") || under(abs, "/sys"))
		return add_grant(r, abs, write);
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		if (under(abs, system_dirs[i])) {
			if (!write)
				return add_grant(r, system_dirs[i], 0);
			break;
		}
	if (!strcmp(abs, "/")) {
		/* a grant of / would cover everything: the program's look at it
		 * (glibc stat-s / to notice a chroot) fails in the sandbox */
		r->looked_at_root = 1;
		return 0;
	}
	if (!write) {
		/* a path that was not there: just it, so that the program
		 * finds it missing as it did, not refused */
		if (failed && lstat(abs, &st) < 0)
			return add_grant(r, abs, 0);
		if (dir || (!stat(abs, &st) && S_ISDIR(st.st_mode)))
			return add_grant(r, abs, 0);
		g = parent_grant(abs, buf, sizeof(buf));
		return add_grant(r, g ? g : abs, 0);
	}
	/* writes: where the program may create, the directory; else the file */
	g = create ? parent_grant(abs, buf, sizeof(buf)) : NULL;
	return add_grant(r, g ? g : abs, 1);
}

int profile_add_exec(struct profile_record *r, const char *path)
{
	for (size_t i = 0; i < r->nexecs; i++)
		if (!strcmp(r->execs[i], path))
			return 0;
	char **e = realloc(r->execs, (r->nexecs + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	r->execs = e;
	if (!(e[r->nexecs] = strdup(path)))
		return -ENOMEM;
	r->nexecs++;
	return 0;
}

void profile_record_free(struct profile_record *r)
{
	for (size_t i = 0; i < r->ngrants; i++)
		free(r->grants[i].path);
	for (size_t i = 0; i < r->nexecs; i++)
		free(r->execs[i]);
	free(r->grants);
	free(r->execs);
}

/* --- calls --- */

/* Calls sandpit makes on the program's behalf, which the program never
 * makes natively: the first needs the second in the policy. */
static const struct {
	const char *seen, *needs;
} implied[] = {
	{ "clone3", "clone" },           /* ENOSYS: glibc falls back to clone */
	{ "rt_sigprocmask", "rt_sigreturn" }, /* answered in a fault's frame (sandpit_ask_self) */
	{ "sigaltstack", "tgkill" },     /* an armed stack's change: U signals itself (SANDPIT_SIG) */
	{ "sigaltstack", "rt_sigreturn" },
	{ "rt_sigaction", "rt_sigreturn" },
};

/* always there: how a program and its threads end, how a handler returns,
 * and read and write, which strict mode refuses to leave to the default
 * (seccomp strict lets the program make them itself).  sandpit's run-time
 * patcher reads /proc/self/maps on a descriptor of its own, and needs
 * neither openat nor a grant of /proc/self. */
static const char *const always[] = { "exit", "exit_group", "rt_sigreturn", "read", "write" };
#define NALWAYS (sizeof(always) / sizeof(always[0]))

struct line {
	char *name, *rule;
};

/* The default policy's "name: rule" lines. */
static int default_rules(struct line **out, size_t *n)
{
	const char *p = sandpit_default_policy, *end = p + sandpit_default_policy_len;
	struct line *v = NULL;
	size_t cnt = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', end - p);
		if (!eol)
			eol = end;
		const char *c = memchr(p, ':', eol - p);
		if (*p != '#' && *p != '@' && c && strncmp(p, "default:", 8)) {
			const char *rule = c + 1, *rend = eol;
			while (rule < rend && (*rule == ' ' || *rule == '\t'))
				rule++;
			/* the line's reason, a comment, is not part of the rule */
			for (const char *h = rule; h < rend; h++)
				if (*h == '#') {
					rend = h;
					break;
				}
			while (rend > rule && (rend[-1] == ' ' || rend[-1] == '\t' || rend[-1] == '\r'))
				rend--;
			struct line *nv = realloc(v, (cnt + 1) * sizeof(*v));
			if (!nv)
				goto nomem;
			v = nv;
			v[cnt].name = strndup(p, c - p);
			v[cnt].rule = strndup(rule, rend - rule);
			if (!v[cnt].name || !v[cnt].rule) {
				cnt++;
				goto nomem;
			}
			cnt++;
		}
		p = eol + 1;
	}
	*out = v;
	*n = cnt;
	return 0;
nomem:
	for (size_t i = 0; i < cnt; i++) {
		free(v[i].name);
		free(v[i].rule);
	}
	free(v);
	return -ENOMEM;
}

static const char *find_rule(const struct line *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return v[i].rule;
	return NULL;
}

enum group {
	G_DEFAULT,   /* the default policy's rule, which lets the call happen */
	G_NEW,       /* not in the default policy: allowed, with sandpit's rules */
	G_PROCESS,   /* a memory argument the trusted process checks */
	G_IMPLIED,   /* sandpit makes it for the program */
	G_ENTRY,     /* sandpit's runtime answers it itself */
	G_DENIED,    /* the program made it, and the default policy refuses it */
	G_REFUSED,   /* the program made it, and no policy may let it */
	G_NGROUPS,
};

static const char *const group_title[G_NGROUPS] = {
	"calls the program made, with the default policy's rule",
	"calls the program made that the default policy does not name: allowed\n"
	"# (sandpit keeps its own rules on them; `sandpit policy show` prints them)",
	"calls the program made with a path or memory argument: the trusted\n"
	"# process checks it (paths against the grants below)",
	"calls sandpit makes for the program instead of one it made",
	"calls sandpit's runtime answers itself, whatever their line says (arch_prctl:\n"
	"# ARCH_SET_FS and ARCH_GET_FS); the lines are the default policy's",
	"calls the program made that the default policy refuses, refused here too\n"
	"# (the program will see them fail; allow them only if it needs them)",
	"calls the program made that sandpit refuses whatever the policy says;\n"
	"# the program will see these fail",
};

struct call {
	int nr, group;
	uint64_t count;
	const char *rule; /* the default's, or NULL */
	char *name;
	const char *why;  /* why it is refused */
};

/* the calls the sandboxed side answers before it looks at the policy
 * (user/untrusted/u_entry.c) */
static const char *const entry_calls[] = { "set_tid_address", "rt_sigprocmask", "sigaltstack",
					   "pause", "rt_sigsuspend", "arch_prctl" };

static int answered_by_entry(const char *name)
{
	for (size_t i = 0; i < sizeof(entry_calls) / sizeof(entry_calls[0]); i++)
		if (!strcmp(name, entry_calls[i]))
			return 1;
	return 0;
}

static int is_deny(const char *rule)
{
	return !strncmp(rule, "deny(", 5) || !strncmp(rule, "return ", 7) || !strcmp(rule, "kill");
}

/* What a call the default policy does not name becomes: the narrowest line
 * guard.c lets it have. */
static const char *own_rule(int nr, const char **why, int *group)
{
	const char *rule = policy_guard_allow_line(nr, why);

	*group = *why ? G_REFUSED : !strcmp(rule, "process") ? G_PROCESS : G_NEW;
	return rule;
}

static int grant_cmp(const void *a, const void *b)
{
	return strcmp(((const struct profile_grant *)a)->path,
		      ((const struct profile_grant *)b)->path);
}

/* Drops the grants another one covers: a directory covers what lies under
 * it, a write grant what a read grant would. */
static void collapse_grants(struct profile_record *r)
{
	size_t n = 0;

	qsort(r->grants, r->ngrants, sizeof(*r->grants), grant_cmp);
	for (size_t i = 0; i < r->ngrants; i++) {
		struct profile_grant *g = &r->grants[i];
		int covered = 0;
		for (size_t j = 0; j < r->ngrants && !covered; j++) {
			const struct profile_grant *h = &r->grants[j];
			struct stat st;
			if (j == i || !h->path || (g->write && !h->write))
				continue;
			if (!strcmp(g->path, h->path))
				covered = j < i; /* the first of two equal ones stays */
			else
				covered = under(g->path, h->path) &&
					  (stat(h->path, &st) < 0 || S_ISDIR(st.st_mode));
		}
		if (covered) {
			free(g->path);
			g->path = NULL;
		}
	}
	for (size_t i = 0; i < r->ngrants; i++)
		if (r->grants[i].path)
			r->grants[n++] = r->grants[i];
	r->ngrants = n;
}

static int call_index(struct call *calls, int ncalls, int nr)
{
	for (int i = 0; i < ncalls; i++)
		if (calls[i].nr == nr)
			return i;
	return -1;
}

int profile_write_policy(struct profile_record *r, FILE *f)
{
	struct line *dflt;
	size_t ndflt;
	struct call calls[PROF_NR_SLOTS];
	int ncalls = 0, rc = default_rules(&dflt, &ndflt);

	if (rc < 0)
		return rc;
	/* the calls seen, then what sandpit needs for them */
	for (int nr = 0; nr < PROF_NR_SLOTS; nr++)
		if (r->calls[nr])
			calls[ncalls++] = (struct call){ .nr = nr, .count = r->calls[nr], .group = -1 };
	for (size_t i = 0; i < sizeof(implied) / sizeof(implied[0]) + NALWAYS; i++) {
		const char *seen = i < NALWAYS ? NULL : implied[i - NALWAYS].seen;
		const char *needs = i < NALWAYS ? always[i] : implied[i - NALWAYS].needs;
		int s = seen ? seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, seen) : 0;
		int n = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, needs);
		if (n < 0 || n >= PROF_NR_SLOTS || (seen && (s < 0 || !r->calls[s])))
			continue;
		if (call_index(calls, ncalls, n) < 0)
			calls[ncalls++] = (struct call){ .nr = n, .group = G_IMPLIED };
	}

	for (int i = 0; i < ncalls; i++) {
		struct call *c = &calls[i];
		int group;
		c->name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, c->nr);
		if (!c->name)
			continue;
		c->rule = find_rule(dflt, ndflt, c->name);
		const struct policy_guard *g = policy_guard(c->nr);
		if (c->rule) {
			group = G_DEFAULT;
			if (is_deny(c->rule)) {
				int never = g && (g->kind == GUARD_NEVER ||
						  (g->kind == GUARD_NEEDS_B && !g->proc));
				group = never ? G_REFUSED : G_DENIED;
				c->why = never ? g->why : NULL;
			} else if (!strcmp(c->rule, "process")) {
				group = G_PROCESS;
			}
		} else {
			c->rule = own_rule(c->nr, &c->why, &group);
		}
		if (answered_by_entry(c->name))
			group = G_ENTRY;
		if (c->group < 0)
			c->group = group;
		else if (group == G_REFUSED || group == G_DENIED)
			c->group = group;
	}

	fprintf(f, "# sandpit policy written by `sandpit profile` for:\n#  ");
	for (char *const *a = r->argv; *a; a++)
		fprintf(f, " %s", *a);
	fprintf(f, "\n# The calls and paths it used when it was profiled; review before use.\n"
		   "# The format is sandpit.policy(5).\n\n"
		   "# a call that no line names\n"
		   "default: deny(ENOSYS)\n");
	for (int grp = 0; grp < G_NGROUPS; grp++) {
		int any = 0;
		for (int i = 0; i < ncalls; i++) {
			const struct call *c = &calls[i];
			if (!c->name || c->group != grp)
				continue;
			if (!any++)
				fprintf(f, "\n# %s\n", group_title[grp]);
			if (grp == G_REFUSED)
				fprintf(f, "# %s: %s\n", c->name, c->why);
			fprintf(f, "%s: %s\n", c->name, c->rule);
		}
	}
	for (size_t i = 0; i < r->nexecs; i++)
		fprintf(f, "%s# it tried to run %s, which no sandboxed program can\n",
			i ? "" : "\n", r->execs[i]);
	if (r->calls_beyond)
		fprintf(f, "\n# %llu calls with numbers beyond %d (x32 or int $0x80) were made:\n"
			   "# the sandbox kills them\n",
			(unsigned long long)r->calls_beyond, PROF_NR_SLOTS - 1);

	collapse_grants(r);
	if (r->looked_at_root)
		fprintf(f, "\n# it also looked at / itself, which is not granted: a grant of /\n"
			   "# would cover every file\n");
	if (r->ngrants)
		fprintf(f, "\n# paths the program used: system directories whole, others by\n"
			   "# directory; write grants only where it opened for writing\n");
	for (size_t i = 0; i < r->ngrants; i++)
		fprintf(f, "path %s %s\n", r->grants[i].write ? "write" : "read", r->grants[i].path);
	/* the grants above may cover what the default denies (all of /etc):
	 * its denies come along, as it words them */
	fprintf(f, "\n# the default policy's denies: secrets stay out whatever is granted\n");
	for (const char *p = sandpit_default_policy, *end = p + sandpit_default_policy_len;
	     p < end;) {
		const char *eol = memchr(p, '\n', end - p);
		if (!eol)
			eol = end;
		if (eol - p > 10 && !strncmp(p, "path deny ", 10))
			fprintf(f, "%.*s\n", (int)(eol - p), p);
		p = eol + 1;
	}
	if (r->lost_events || r->lost_tasks || r->unreadable_paths || r->unresolved_paths)
		fprintf(f, "\n# INCOMPLETE: %llu events lost, %llu tasks untraced, %llu paths unreadable,\n"
			   "# %llu relative paths unresolved: grants may be missing\n",
			(unsigned long long)r->lost_events, (unsigned long long)r->lost_tasks,
			(unsigned long long)r->unreadable_paths,
			(unsigned long long)r->unresolved_paths);

	for (int i = 0; i < ncalls; i++)
		free(calls[i].name);
	for (size_t i = 0; i < ndflt; i++) {
		free(dflt[i].name);
		free(dflt[i].rule);
	}
	free(dflt);
	return ferror(f) ? -EIO : 0;
}
