/* Helpers shared by the policy model's tests and its BPF back end's. */
#ifndef SANDPIT_SELFTEST_POLICY_UTIL_H
#define SANDPIT_SELFTEST_POLICY_UTIL_H
#include <errno.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "policy/policy.h"


/* the parser's messages (policy_parse_*'s callback), one a line */
struct msgs {
	int n;
	char text[8192];
};

static inline void collect(void *ctx, const char *msg)
{
	struct msgs *m = ctx;
	size_t len = strlen(m->text);

	m->n++;
	snprintf(m->text + len, sizeof(m->text) - len, "%s\n", msg);
}

/* whether a policy keeps exactly this deny pattern, this grant path */
static inline int has_deny(const struct policy *p, const char *pattern)
{
	for (size_t i = 0; i < policy_ndenies(p); i++)
		if (!strcmp(policy_deny_at(p, i)->pattern, pattern))
			return 1;
	return 0;
}

static inline int has_grant(const struct policy *p, const char *path)
{
	for (size_t i = 0; i < policy_ngrants(p); i++)
		if (!strcmp(policy_grant_at(p, i)->path, path))
			return 1;
	return 0;
}

static inline int nr_of(const char *name)
{
	return seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name);
}

static inline struct policy *default_policy(void)
{
	struct policy *p = NULL;
	char err[256] = "";

	if (policy_new_default(&p, NULL, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "policy_new_default: %s\n", err);
		abort();
	}
	return p;
}

/* policy_dump's text, malloc'd */
static inline char *dump_of(const struct policy *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	policy_dump(p, f);
	fclose(f);
	return buf;
}

/* the dump's line for call `name` holds `what` */
static inline int dump_line_has(const char *dump, const char *name, const char *what)
{
	size_t n = strlen(name);

	for (const char *l = dump; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *end = strchr(l, '\n');

		if (!strncmp(l, name, n) && l[n] == ' ') {
			const char *hit = strstr(l, what);
			return hit && (!end || hit < end);
		}
	}
	return 0;
}

extern const char sandpit_default_policy[];
extern const uint64_t sandpit_default_policy_len;

/* The built-in default policy (policy/default.policy) with the lines of the
 * calls `lines` names taken out and `lines` (one call a line, each ending
 * in a newline) added, in a new temporary file whose path goes to path. */
static inline void default_policy_with(const char *lines, char path[32])
{
	size_t n = (size_t)sandpit_default_policy_len, len = 0;
	char *text = malloc(n + strlen(lines) + 2);
	const char *line = sandpit_default_policy;
	int fd;

	strcpy(path, "/tmp/sandpit-policyXXXXXX");
	fd = mkstemp(path);
	if (!text || fd < 0)
		abort();
	while (line < sandpit_default_policy + n) {
		const char *end = memchr(line, '\n', (size_t)(sandpit_default_policy + n - line));
		const char *colon = memchr(line, ':', (size_t)((end ? end : line) - line));
		size_t l = (end ? (size_t)(end - line) + 1 : strlen(line));
		int named = 0;

		/* a call named in `lines` as "NAME:" at the start of one of them */
		for (const char *m = lines; colon && *m && !named; m = strchr(m, '\n') + 1) {
			named = !strncmp(m, line, (size_t)(colon - line) + 1);
			if (!strchr(m, '\n'))
				break;
		}
		if (!named) {
			memcpy(text + len, line, l);
			len += l;
		}
		line += l;
	}
	if (len && text[len - 1] != '\n')
		text[len++] = '\n';
	strcpy(text + len, lines);
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd))
		abort();
	free(text);
}
/* What policy_resolve_existing must give, by realpath(3), the function
 * its real_path stands in for: realpath of the longest head of path that
 * resolves, the rest as written; -errno when not even "/" does */
static inline int realpath_reference(const char *path, char *out)
{
	char head[PATH_MAX], real[PATH_MAX];
	size_t cut = strlen(path);
	memcpy(head, path, cut + 1);
	while (!realpath(cut ? head : "/", real)) {
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
#endif
