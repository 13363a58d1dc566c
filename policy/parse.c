/* Policy files (format: docs/sandpit.policy.5): read, checked against what
 * no policy can take away (policy/guard.c), and compiled into the model.
 *
 * Reading and checking come first, for every line of every included file;
 * the model is built only when no line had an error, so a policy is
 * either returned whole or not at all. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/parse_lex.h"
#include "policy/parse_rule.h"

/* --- lines --- */

static int at_end(struct parser *ps, struct lexer *lx)
{
	return lx->t == T_END ? 0 : EXPECTED(ps, lx, "end of line");
}

/* NAME ':' ACTION */
static void syscall_line(struct parser *ps, struct lexer *lx)
{
	struct policy_rule rules[POLICY_MAX_RULES];
	struct where rat[POLICY_MAX_RULES], name_at = lx->at, act_at;
	struct line_call c = { .at = lx->at, .err = EPERM };
	char msg[256];
	int nr, action, n = 0;

	snprintf(c.name, sizeof(c.name), "%.*s", (int)(lx->len < MAX_NAME ? lx->len : MAX_NAME - 1),
		 lx->tok);
	nr = lx->len < MAX_NAME ? policy_syscall_nr(c.name, msg, sizeof(msg)) : -ENOENT;
	if (nr < 0) {
		if (lx->len >= MAX_NAME)
			snprintf(msg, sizeof(msg), "unknown system call '%.*s...'", 20, lx->tok);
		parse_report(ps, nr, &name_at, "%s", msg);
		return;
	}
	parse_next(lx);
	if (lx->t != T_COLON) {
		EXPECTED(ps, lx, "':' after the system call's name");
		return;
	}
	parse_next(lx);
	act_at = lx->at;
	if (parse_is_word(lx, "allow") || (lx->t == T_NUM && lx->len == 1 && *lx->tok == '1')) {
		action = A_ALLOW;
		parse_next(lx);
	} else if (parse_is_word(lx, "deny") || parse_is_word(lx, "return")) {
		action = A_DENY;
		if (parse_errno_spec(ps, lx, &c.err) < 0)
			return;
	} else if (parse_is_word(lx, "kill")) {
		action = A_KILL;
		c.err = 0;
		parse_next(lx);
	} else if (parse_is_word(lx, "process") || parse_is_word(lx, "emulate")) {
		action = parse_is_word(lx, "process") ? A_PROCESS : A_EMULATE;
		parse_next(lx);
	} else {
		action = A_TRAP;
		if (parse_is_word(lx, "trap"))
			parse_next(lx);
		if (lx->t != T_END && lx->t != T_SEMI) {
			if (lx->t != T_IDENT && lx->t != T_LPAREN) {
				EXPECTED(ps, lx,
					 "an action (allow, deny(ERRNO), kill, trap, process, "
					 "emulate) or an expression");
				return;
			}
			if (parse_arg_index(lx) < 0 && !parse_is_word(lx, "if") && !parse_is_word(lx, "fd_free") &&
			    !parse_is_word(lx, "range_free") && lx->t != T_LPAREN &&
			    (lx->len < 3 || memcmp(lx->tok, "arg", 3))) {
				EXPECTED(ps, lx,
					 "an action (allow, deny(ERRNO), kill, trap, process, "
					 "emulate) or an expression");
				return;
			}
			if (parse_expression(ps, lx, rules, &n, rat) < 0)
				return;
		}
		if (lx->t == T_SEMI) {
			parse_next(lx);
			if (!parse_is_word(lx, "deny") && !parse_is_word(lx, "return")) {
				EXPECTED(ps, lx, "deny(ERRNO) or return ERRNO after ';'");
				return;
			}
			if (parse_errno_spec(ps, lx, &c.err) < 0)
				return;
		}
	}
	if (at_end(ps, lx) < 0)
		return;
	if (ps->calls[nr]) {
		const struct where *w = &ps->calls[nr]->at;

		parse_report(ps, -EEXIST, &name_at, "'%s' is already given at %s:%d", c.name, w->file,
		       w->line);
		return;
	}
	if (parse_resolve(ps, &c, nr, action, &act_at, rules, n) < 0)
		return;
	if (!(ps->calls[nr] = malloc(sizeof(c)))) {
		parse_report(ps, -ENOMEM, &name_at, "out of memory");
		return;
	}
	*ps->calls[nr] = c;
	ps->given[ps->ngiven++] = nr;
}

static void default_line(struct parser *ps, struct lexer *lx)
{
	struct where at = lx->at, act_at;
	int cls, e = 0;

	parse_next(lx);
	if (lx->t != T_COLON) {
		EXPECTED(ps, lx, "':' after 'default'");
		return;
	}
	parse_next(lx);
	act_at = lx->at;
	if (parse_is_word(lx, "kill")) {
		cls = POLICY_KILL;
		parse_next(lx);
	} else if (parse_is_word(lx, "deny") || parse_is_word(lx, "return")) {
		cls = POLICY_DENY;
		if (parse_errno_spec(ps, lx, &e) < 0)
			return;
	} else {
		char b[48];

		parse_report(ps, -EINVAL, &act_at,
		       "the default may only be deny(ERRNO) or kill, not %s: a call that no "
		       "line names is never carried out",
		       parse_shown(lx, b, sizeof(b)));
		return;
	}
	if (at_end(ps, lx) < 0)
		return;
	if (ps->dflt_given) {
		parse_report(ps, -EEXIST, &at, "the default is already given at %s:%d", ps->dflt_at.file,
		       ps->dflt_at.line);
		return;
	}
	ps->dflt_given = 1;
	ps->dflt_cls = cls;
	ps->dflt_err = e;
	ps->dflt_at = at;
}

/* The rest of the line as one word (a path), its end trimmed; a '#' after
 * white space starts a comment. */
static int word(struct parser *ps, struct lexer *lx, char *out, size_t outlen,
		struct where *at, const char *what)
{
	const char *p = lx->s, *q;
	size_t n;

	while (p < lx->end && (*p == ' ' || *p == '\t'))
		p++;
	at->file = lx->at.file;
	at->line = lx->at.line;
	at->col = (int)(p - lx->line_start) + 1;
	for (q = p; q < lx->end && *q != ' ' && *q != '\t' && *q != '\r'; q++)
		;
	n = (size_t)(q - p);
	if (!n) {
		parse_report(ps, -EINVAL, at, "expected %s", what);
		return -1;
	}
	if (n >= outlen) {
		parse_report(ps, -ENAMETOOLONG, at, "%s is too long", what);
		return -1;
	}
	memcpy(out, p, n);
	out[n] = 0;
	lx->s = q;
	parse_next(lx);
	if (lx->t != T_END) {
		parse_report(ps, -EINVAL, &lx->at, "expected end of line after %s (paths cannot hold "
					     "spaces)", what);
		return -1;
	}
	return 0;
}

/* path read|write PATH, path deny PATTERN (checked by policy_deny) */
static void path_line(struct parser *ps, struct lexer *lx)
{
	char path[PATH_MAX];
	struct where at;
	int writable, deny;

	parse_next(lx);
	if (!parse_is_word(lx, "read") && !parse_is_word(lx, "write") && !parse_is_word(lx, "deny")) {
		EXPECTED(ps, lx, "'read', 'write' or 'deny' after 'path'");
		return;
	}
	writable = parse_is_word(lx, "write");
	deny = parse_is_word(lx, "deny");
	if (word(ps, lx, path, sizeof(path), &at, deny ? "a path pattern" : "a path") < 0)
		return;
	if (path[0] != '/') {
		parse_report(ps, -EINVAL, &at, "'%s' is not an absolute path", path);
		return;
	}
	char norm[PATH_MAX];
	const char *why = deny ? policy_deny_pattern(path, norm, sizeof(norm)) : NULL;
	if (why) {
		parse_report(ps, -EINVAL, &at, "the pattern '%s' %s", path, why);
		return;
	}
	if (ps->ngrants == ps->grants_cap) {
		size_t cap = ps->grants_cap ? 2 * ps->grants_cap : 16;
		struct grant *g = realloc(ps->grants, cap * sizeof(*g));

		if (!g) {
			parse_report(ps, -ENOMEM, &at, "out of memory");
			return;
		}
		ps->grants = g;
		ps->grants_cap = cap;
	}
	ps->grants[ps->ngrants].path = strdup(path);
	if (!ps->grants[ps->ngrants].path) {
		parse_report(ps, -ENOMEM, &at, "out of memory");
		return;
	}
	ps->grants[ps->ngrants].at = at;
	ps->grants[ps->ngrants].writable = writable;
	ps->grants[ps->ngrants].deny = deny;
	ps->ngrants++;
}

static void parse_text(struct parser *ps, const struct source *src, const char *text,
		       size_t len, int depth);

static const char *keep_name(struct parser *ps, const char *name)
{
	char **n = realloc(ps->names, (ps->nnames + 1) * sizeof(*n));

	if (!n)
		return NULL;
	ps->names = n;
	n[ps->nnames] = strdup(name);
	return n[ps->nnames] ? n[ps->nnames++] : NULL;
}

/* Reads a whole regular file of at most MAX_FILE bytes. */
static int read_file(const char *path, char **text, size_t *len, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	size_t n = 0;
	char *buf;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	if (!S_ISREG(st->st_mode) || st->st_size > MAX_FILE) {
		close(fd);
		return !S_ISREG(st->st_mode) ? -EINVAL : -EFBIG;
	}
	buf = malloc(MAX_FILE + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r = read(fd, buf + n, MAX_FILE + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;

			close(fd);
			free(buf);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > MAX_FILE) {
			close(fd);
			free(buf);
			return -EFBIG;
		}
	}
	close(fd);
	*text = buf;
	*len = n;
	return 0;
}

static const char *file_error(int e)
{
	return e == -EINVAL ? "not a regular file" : e == -EFBIG ? "larger than 1 MiB" : strerror(-e);
}

/* "top.policy -> a.policy -> b.policy": how the parser came to src */
static void chain(const struct source *src, char *buf, size_t n)
{
	const struct source *v[MAX_DEPTH + 1];
	int k = 0;
	size_t off = 0;

	for (; src && k <= MAX_DEPTH; src = src->parent)
		v[k++] = src;
	buf[0] = 0;
	while (k-- > 0 && off < n)
		off += (size_t)snprintf(buf + off, n - off, "%s%s", v[k]->name, k ? " -> " : "");
}

/* Past the budget of files, lines or bytes: one error that names the
 * include chain, and nothing more is read. */
static int over_budget(struct parser *ps, const struct source *src, const struct where *at)
{
	char c[400];
	const char *what = ps->files > MAX_FILES ? "files" : ps->lines > MAX_LINES ? "lines" : "bytes";
	size_t max = ps->files > MAX_FILES ? MAX_FILES : ps->lines > MAX_LINES ? MAX_LINES : MAX_BYTES;

	if (ps->over)
		return 1;
	if (ps->files <= MAX_FILES && ps->lines <= MAX_LINES && ps->bytes <= MAX_BYTES)
		return 0;
	ps->over = 1;
	chain(src, c, sizeof(c));
	parse_report(ps, -E2BIG, at, "the policy and its includes read more than %zu %s (in %s)", max, what,
	       c);
	return 1;
}

/* @include FILE, relative to the including file's directory */
static void include_line(struct parser *ps, struct lexer *lx, const struct source *src,
			 int depth)
{
	char file[PATH_MAX], path[PATH_MAX];
	struct where at;
	struct stat st;
	struct source child;
	char *text;
	size_t len;
	int e;

	if (word(ps, lx, file, sizeof(file), &at, "a file to include") < 0)
		return;
	if (file[0] == '/') {
		snprintf(path, sizeof(path), "%s", file);
	} else {
		const char *slash = strrchr(src->name, '/');
		int dir = slash ? (int)(slash - src->name) : 0;

		if (snprintf(path, sizeof(path), "%.*s%s%s", dir, src->name, slash ? "/" : "",
			     file) >= (int)sizeof(path)) {
			parse_report(ps, -ENAMETOOLONG, &at, "cannot include '%s': name too long", file);
			return;
		}
	}
	ps->files++;
	if (over_budget(ps, src, &at))
		return;
	if (depth + 1 >= MAX_DEPTH) {
		parse_report(ps, -ELOOP, &at, "cannot include '%s': includes nest deeper than %d", path,
		       MAX_DEPTH);
		return;
	}
	e = read_file(path, &text, &len, &st);
	if (e < 0) {
		parse_report(ps, e, &at, "cannot include '%s': %s", path, file_error(e));
		return;
	}
	for (const struct source *s = src; s; s = s->parent)
		if (s->has_id && s->dev == st.st_dev && s->ino == st.st_ino) {
			parse_report(ps, -ELOOP, &at, "include cycle: '%s' is already being read", path);
			free(text);
			return;
		}
	child = (struct source){ .name = keep_name(ps, path), .dev = st.st_dev, .ino = st.st_ino,
				 .has_id = 1, .parent = src };
	ps->bytes += len;
	if (child.name && over_budget(ps, &child, &at)) {
		free(text);
		return;
	}
	if (!child.name) {
		parse_report(ps, -ENOMEM, &at, "out of memory");
		free(text);
		return;
	}
	parse_text(ps, &child, text, len, depth + 1);
	free(text);
}

static void parse_line(struct parser *ps, const struct source *src, const char *line,
		       const char *end, int lineno, int depth)
{
	struct lexer lx = { .s = line, .end = end, .line_start = line,
			    .at = { .file = src->name, .line = lineno } };

	if (memchr(line, 0, (size_t)(end - line))) {
		lx.at.col = (int)((const char *)memchr(line, 0, (size_t)(end - line)) - line) + 1;
		parse_report(ps, -EINVAL, &lx.at, "NUL byte in the line");
		return;
	}
	parse_next(&lx);
	if (lx.t == T_END)
		return;
	if (lx.t == T_BAD && *lx.tok == '@') {
		struct where at = lx.at;
		const char *p = lx.s;

		while (p < end && parse_is_ident(*p, 0))
			p++;
		if (p - lx.s == 7 && !memcmp(lx.s, "include", 7)) {
			lx.s = p;
			include_line(ps, &lx, src, depth);
		} else {
			parse_report(ps, -EINVAL, &at, "unknown directive '@%.*s' (only @include)",
			       (int)(p - lx.s), lx.s);
		}
		return;
	}
	if (lx.t != T_IDENT) {
		EXPECTED(ps, &lx, "a system call's name, 'path', 'default' or '@include'");
		return;
	}
	if (parse_is_word(&lx, "path") && lx.s < end && (*lx.s == ' ' || *lx.s == '\t'))
		path_line(ps, &lx);
	else if (parse_is_word(&lx, "default"))
		default_line(ps, &lx);
	else
		syscall_line(ps, &lx);
}

static void parse_text(struct parser *ps, const struct source *src, const char *text,
		       size_t len, int depth)
{
	const char *p = text, *end = text + len;

	for (int lineno = 1; p < end && !ps->over; lineno++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;

		ps->lines++;
		if (over_budget(ps, src, &(struct where){ src->name, lineno, 1 }))
			break;
		parse_line(ps, src, p, e, lineno, depth);
		p = nl ? nl + 1 : end;
	}
}

/* --- the model --- */

static int by_number(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int build(struct parser *ps, struct policy **out)
{
	struct policy *p;
	char msg[256];
	int rc, total = 0;

	if ((rc = policy_new(&p)) < 0) {
		parse_report(ps, rc, &(struct where){ "policy", 0, 0 }, "out of memory");
		return rc;
	}
	qsort(ps->given, (size_t)ps->ngiven, sizeof(ps->given[0]), by_number);
	for (int k = 0; k < ps->ngiven; k++) {
		const struct line_call *c = ps->calls[ps->given[k]];

		total += c->nrules;
		if (total > POLICY_MAX_TOTAL_RULES) {
			parse_report(ps, -E2BIG, &c->at,
			       "%s: the policy has more than %d rules in all, more than the trusted "
			       "thread's table holds",
			       c->name, POLICY_MAX_TOTAL_RULES);
			break;
		}
		if (c->cls == POLICY_PROCESS)
			rc = policy_set_process(p, c->name, c->proc, msg, sizeof(msg));
		else
			rc = policy_set(p, c->name, c->cls,
					c->cls == POLICY_ALLOW || c->cls == POLICY_KILL ||
							c->cls == POLICY_NATIVE
						? 0
						: c->err,
					msg, sizeof(msg));
		for (int i = 0; rc == 0 && i < c->nrules; i++)
			rc = policy_add_rule(p, c->name, &c->rules[i], msg, sizeof(msg));
		if (rc == 0 && (rc = policy_set_source(p, ps->given[k], c->at.file, c->at.line,
						       c->nguard)) < 0)
			snprintf(msg, sizeof(msg), "out of memory");
		if (rc < 0)
			parse_report(ps, rc, &c->at, "%s", msg);
	}
	if (ps->dflt_given && (rc = policy_set_default(p, ps->dflt_cls, ps->dflt_err, msg,
						       sizeof(msg))) < 0)
		parse_report(ps, rc, &ps->dflt_at, "%s", msg);
	else if (ps->dflt_given && policy_set_source(p, POLICY_SRC_DEFAULT, ps->dflt_at.file,
						     ps->dflt_at.line, 0) < 0)
		parse_report(ps, -ENOMEM, &ps->dflt_at, "out of memory");
	for (size_t i = 0; i < ps->ngrants; i++)
		if ((rc = ps->grants[i].deny
				  ? policy_deny(p, ps->grants[i].path, msg, sizeof(msg))
				  : policy_grant(p, ps->grants[i].path, ps->grants[i].writable, msg,
						 sizeof(msg))) < 0 ||
		    (!ps->grants[i].deny &&
		     (rc = policy_set_source(p, POLICY_SRC_GRANTS, ps->grants[i].at.file,
					     ps->grants[i].at.line, 0)) < 0))
			parse_report(ps, rc, &ps->grants[i].at, "%s", rc == -ENOMEM ? "out of memory" : msg);
	if (ps->nerrors) {
		policy_free(p);
		return ps->rc;
	}
	*out = p;
	return 0;
}

static void parser_free(struct parser *ps)
{
	for (int k = 0; k < ps->ngiven; k++)
		free(ps->calls[ps->given[k]]);
	for (size_t i = 0; i < ps->ngrants; i++)
		free(ps->grants[i].path);
	free(ps->grants);
	for (size_t i = 0; i < ps->nnames; i++)
		free(ps->names[i]);
	free(ps->names);
	free(ps);
}

static int parse(const struct source *src, const char *text, size_t len, struct policy **out,
		 policy_report_fn *rep, void *ctx, char *err, size_t errlen)
{
	struct parser *ps = calloc(1, sizeof(*ps));
	int rc;

	*out = NULL;
	if (!ps) {
		if (err && errlen)
			snprintf(err, errlen, "%s: out of memory", src->name);
		return -ENOMEM;
	}
	ps->report = rep;
	ps->ctx = ctx;
	ps->err = err;
	ps->errlen = errlen;
	ps->files = 1;
	ps->bytes = len;
	parse_text(ps, src, text, len, 0);
	rc = ps->nerrors ? ps->rc : build(ps, out);
	parser_free(ps);
	return rc < 0 ? rc : 0;
}

int policy_parse_text(const char *name, const char *text, size_t len, struct policy **out,
		      policy_report_fn *report, void *ctx, char *err, size_t errlen)
{
	struct source src = { .name = name ? name : "<policy>" };

	return parse(&src, text ? text : "", text ? len : 0, out, report, ctx, err, errlen);
}

int policy_parse_sandpit_file(const char *path, const struct stat *st, const char *text,
			      size_t len, struct policy **out, policy_report_fn *rep, void *ctx,
			      char *err, size_t errlen)
{
	struct source src = { .name = path, .dev = st->st_dev, .ino = st->st_ino, .has_id = 1 };

	return parse(&src, text, len, out, rep, ctx, err, errlen);
}

int policy_read_file(const char *path, char **text, size_t *len)
{
	struct stat st;

	return read_file(path, text, len, &st);
}

int policy_read_file_stat(const char *path, char **text, size_t *len, struct stat *st)
{
	return read_file(path, text, len, st);
}

const char *policy_file_error(int e)
{
	return file_error(e);
}

int policy_add_grants(struct policy *p, const char *const *allow_read,
		      const char *const *allow_write, char *err, size_t errlen)
{
	int rc;

	for (; allow_read && *allow_read; allow_read++)
		if ((rc = policy_grant(p, *allow_read, 0, err, errlen)) < 0)
			return rc;
	for (; allow_write && *allow_write; allow_write++)
		if ((rc = policy_grant(p, *allow_write, 1, err, errlen)) < 0)
			return rc;
	return 0;
}

/* The built-in default: policy/default.policy, embedded by
 * policy/default_policy.S. */
extern const char sandpit_default_policy[];
extern const uint64_t sandpit_default_policy_len;

int policy_parse_default(struct policy **out, char *err, size_t errlen)
{
	return policy_parse_text(POLICY_DEFAULT_NAME, sandpit_default_policy,
				 (size_t)sandpit_default_policy_len, out, NULL, NULL, err, errlen);
}
