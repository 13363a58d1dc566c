/* What the policyfile_*_test binaries share: a text parsed as a policy
 * with its messages, the error a text must give, a call's entry in the
 * model, and a temporary directory of policy files. */
#ifndef SANDPIT_SELFTEST_POLICYFILE_UTIL_H
#define SANDPIT_SELFTEST_POLICYFILE_UTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "policy/policy.h"
#include "policy_util.h"


/* Parses `text` as t.policy; returns the policy or NULL, messages in m. */
static inline struct policy *policy_of_text(const char *text, struct msgs *m, int *rc)
{
	struct policy *p = (struct policy *)1;
	char err[512] = "";
	int r;

	memset(m, 0, sizeof(*m));
	r = policy_parse_text("t.policy", text, strlen(text), &p, collect, m, err, sizeof(err));
	if (rc)
		*rc = r;
	if (r == 0 && !p)
		abort();
	if (r < 0 && (p || strncmp(err, m->text, strlen(err)))) {
		fprintf(stderr, "a failed parse returned a policy, or err is not the first message\n");
		abort();
	}
	return r == 0 ? p : NULL;
}

/* The one error a text must give, exactly. */
#define EXPECT_ERROR(policy_text, message)                                             \
	do {                                                                           \
		struct msgs m_;                                                        \
		struct policy *p_ = policy_of_text(policy_text, &m_, NULL);                     \
		EXPECT_EQ(NULL, p_);                                                   \
		policy_free(p_);                                                       \
		EXPECT_EQ(1, m_.n) TH_LOG("%s", m_.text);                              \
		EXPECT_STREQ(message "\n", m_.text);                                   \
	} while (0)

static inline const struct policy_call *call(const struct policy *p, const char *name)
{
	return policy_call(p, nr_of(name));
}

static inline int has_rule(const struct policy_call *c, int op, int arg)
{
	for (int i = 0; i < c->nrules; i++)
		if (c->rules[i].op == op && c->rules[i].arg == arg)
			return 1;
	return 0;
}

struct tmp {
	char dir[64];
	char path[8][PATH_MAX];
	int n;
};

static inline void tmp_init(struct tmp *t)
{
	memset(t, 0, sizeof(*t));
	strcpy(t->dir, "/tmp/policyfile_test.XXXXXX");
	if (!mkdtemp(t->dir))
		abort();
}

static inline const char *tmp_file(struct tmp *t, const char *name, const char *text)
{
	char dir[sizeof(t->dir)], *path;
	FILE *f;

	if (t->n >= 8)
		abort();
	memcpy(dir, t->dir, sizeof(dir));
	path = t->path[t->n++];
	snprintf(path, PATH_MAX, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		abort();
	return path;
}

static inline void tmp_done(struct tmp *t)
{
	for (int i = 0; i < t->n; i++)
		unlink(t->path[i]);
	rmdir(t->dir);
}

#endif
