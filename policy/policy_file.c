/* Policy files: which format a file is in, and the entry points that read
 * one (policy.h, "Policy files").  This file chooses between the two
 * parsers and stands above both: sandpit's format (policy/parse.c) and
 * minijail's (policy/minijail.c, which translates into sandpit's and
 * parses that). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "policy/policy.h"

static int forced_format = POLICY_FORMAT_AUTO;

void policy_set_file_format(int format)
{
	forced_format = format;
}

/* Minijail's, if some line uses what only minijail has and none what only
 * sandpit has (sandpit.policy(5), MINIJAIL POLICIES). */
int policy_text_is_minijail(const char *text, size_t len)
{
	static const char *const mj_only[] = { "||", ">", "@frequency", "@denylist", "@default",
					       "kill-process", "kill-thread", "user-notify",
					       ": log", ": trace", "\\\n" };
	static const char *const sp_only[] = { "deny(", "$pid", " then ", "fd_free(",
					       "range_free(", "{", ": process", ": emulate" };
	int mj = 0, sp = 0;
	const char *p = text, *end = text + len;

	if (forced_format != POLICY_FORMAT_AUTO)
		return forced_format == POLICY_FORMAT_MINIJAIL;
	while (p < end) {
		const char *eol = memchr(p, '\n', end - p);
		size_t n = eol ? (size_t)(eol - p) + 1 : (size_t)(end - p);
		const char *hash = memchr(p, '#', n);
		size_t code = hash ? (size_t)(hash - p) : n;
		char line[512];

		snprintf(line, sizeof(line), "%.*s", (int)(code < sizeof(line) - 1 ? code : sizeof(line) - 1), p);
		for (size_t i = 0; i < sizeof(mj_only) / sizeof(mj_only[0]); i++)
			mj |= strstr(line, mj_only[i]) != NULL;
		for (size_t i = 0; i < sizeof(sp_only) / sizeof(sp_only[0]); i++)
			sp |= strstr(line, sp_only[i]) != NULL;
		sp |= !strncmp(line, "path ", 5) || !strncmp(line, "default:", 8);
		mj |= line[0] >= '0' && line[0] <= '9'; /* a call by number */
		p += n;
	}
	return mj && !sp;
}

int policy_parse_minijail_file(const char *path, struct policy **out, policy_report_fn *report,
			       policy_report_fn *notes, void *ctx, char *err, size_t errlen)
{
	char *text;
	size_t len;
	int rc = policy_read_file(path, &text, &len);

	*out = NULL;
	if (rc < 0) {
		char msg[PATH_MAX + 64];
		snprintf(msg, sizeof(msg), "%s: cannot read the policy: %s", path,
			 policy_file_error(rc));
		if (err && errlen)
			snprintf(err, errlen, "%s", msg);
		if (report)
			report(ctx, msg);
		return rc;
	}
	rc = policy_parse_minijail(path, text, len, out, report, notes, ctx, err, errlen);
	free(text);
	return rc;
}

int policy_parse_file(const char *path, struct policy **out, policy_report_fn *rep, void *ctx,
		      char *err, size_t errlen)
{
	struct stat st;
	char *text;
	size_t len;
	int rc;

	*out = NULL;
	rc = policy_read_file_stat(path, &text, &len, &st);
	if (rc < 0) {
		char msg[PATH_MAX + 64];

		snprintf(msg, sizeof(msg), "%s: cannot read the policy: %s", path, policy_file_error(rc));
		if (err && errlen)
			snprintf(err, errlen, "%s", msg);
		if (rep)
			rep(ctx, msg);
		return rc;
	}
	if (policy_text_is_minijail(text, len))
		rc = policy_parse_minijail(path, text, len, out, rep, NULL, ctx, err, errlen);
	else
		rc = policy_parse_sandpit_file(path, &st, text, len, out, rep, ctx, err, errlen);
	free(text);
	return rc;
}

int policy_new_file(struct policy **out, const char *path, const char *const *allow_read,
		    const char *const *allow_write, char *err, size_t errlen)
{
	int rc = policy_parse_file(path, out, NULL, NULL, err, errlen);

	if (rc == 0 && (rc = policy_add_grants(*out, allow_read, allow_write, err, errlen)) < 0) {
		policy_free(*out);
		*out = NULL;
	}
	return rc;
}
