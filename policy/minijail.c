/* minijail's .policy files, as they are (minijail0(5), SECCOMP_FILTER
 * SYNTAX; the compiled-policy parser's actions and @-statements), read into
 * sandpit's model (sandpit's model written out in minijail's format:
 * policy/minijail_export.c).
 *
 * Reading translates each minijail statement into one line of sandpit's own
 * format (sandpit.policy(5)) and compiles the result with policy/parse.c, so
 * that guard.c's rules, the process class and every check a sandpit file
 * gets apply unchanged; a message about a translated line is given back
 * with the minijail file's name and line.  What sandpit cannot honour
 * literally is translated by the one rule of sandpit.policy(5),
 * "MINIJAIL POLICIES", and each translation is reported as a note. */
#include <errno.h>
#include <limits.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "policy/minijail_expr.h"

/* One line of sandpit text, from (file, line) of the minijail text. */
__attribute__((format(printf, 4, 5))) static void emit(struct mj *m, int file, int line,
							const char *fmt, ...)
{
	va_list ap;

	if (m->nmap == m->mapcap) {
		int cap = m->mapcap ? 2 * m->mapcap : 256;
		struct origin *nm = realloc(m->map, cap * sizeof(*nm));
		if (!nm) {
			mj_error(m, file, line, "out of memory");
			return;
		}
		m->map = nm;
		m->mapcap = cap;
	}
	m->map[m->nmap++] = (struct origin){ file, line };
	va_start(ap, fmt);
	vfprintf(m->f, fmt, ap);
	va_end(ap);
	fputc('\n', m->f);
}

/* --- statements --- */

enum { ACT_ALLOW = 1, ACT_RETURN, ACT_KILL, ACT_KILL_THREAD, ACT_TRAP, ACT_LOG, ACT_NOTIFY,
       ACT_TRACE };

static int action(struct mj *m, struct origin at, struct lex *l, int *err_no)
{
	static const struct {
		const char *w;
		int act;
	} acts[] = { { "allow", ACT_ALLOW },	  { "kill", ACT_KILL },
		     { "kill-process", ACT_KILL }, { "kill-thread", ACT_KILL_THREAD },
		     { "trap", ACT_TRAP },	  { "log", ACT_LOG },
		     { "user-notify", ACT_NOTIFY }, { "trace", ACT_TRACE } };
	size_t n = mj_ident(l);
	uint64_t v;
	int r;

	if (mj_word_is(l->s, n, "return")) {
		l->s += n;
		if ((n = mj_ident(l)) && (r = policy_errno(l->s, n)) > 0) {
			l->s += n;
			*err_no = r;
			return ACT_RETURN;
		}
		if (n) {
			mj_error(m, at.file, at.line, "unknown errno '%.*s'", (int)n, l->s);
			return -1;
		}
		if ((r = mj_number(l, &v)) > 0 && v <= 4095) {
			*err_no = (int)v;
			return ACT_RETURN;
		}
		mj_error(m, at.file, at.line, "an errno expected after 'return'");
		return -1;
	}
	for (size_t i = 0; n && i < sizeof(acts) / sizeof(acts[0]); i++)
		if (mj_word_is(l->s, n, acts[i].w)) {
			l->s += n;
			return acts[i].act;
		}
	if (!n && (r = mj_number(l, &v)) > 0 && v == 1)
		return ACT_ALLOW;
	mj_error(m, at.file, at.line, "an action expected at '%.20s'", l->s);
	return -1;
}

/* An errno as sandpit's lines give it: its name where the C library has one. */
#define ERRNO_TEXT(e) errno_text(e, (char[16]){ 0 })
static const char *errno_text(int e, char buf[16])
{
	const char *s = strerrorname_np(e);

	if (s)
		return s;
	snprintf(buf, 16, "%d", e);
	return buf;
}

/* What minijail allowed, as the narrowest line guard.c lets sandpit give. */
static void emit_allow(struct mj *m, struct origin at, const char *name, int nr, int had_expr)
{
	const char *why, *line = policy_guard_allow_line(nr, &why);

	if (why)
		mj_note(m, at.file, at.line, "%s: allowed by minijail, refused by sandpit (%s): %s",
		     name, why, line);
	else if (!strcmp(line, "process"))
		mj_note(m, at.file, at.line,
		     "%s: its memory argument is checked by the trusted process (process%s), "
		     "against the grants given on the command line", name,
		     had_expr ? "; the expression is not used" : "");
	else if (strcmp(line, "allow") && strcmp(line, "emulate"))
		mj_note(m, at.file, at.line, "%s: confined to the sandboxed process: %s", name, line);
	emit(m, at.file, at.line, "%s: %s", name, line);
}

static void statement(struct mj *m, struct origin at, struct lex *l)
{
	char name[64], *resolved = NULL, conj[4096];
	size_t n = mj_ident(l);
	int nr, act, err_no = 0, always = 0;
	uint64_t v;
	struct dnf d = { 0 };

	if (n) {
		if (n >= sizeof(name)) {
			mj_error(m, at.file, at.line, "system call name too long");
			return;
		}
		memcpy(name, l->s, n);
		name[n] = 0;
		l->s += n;
		nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name);
		if (nr < 0 || nr >= POLICY_MAX_NR) {
			/* newer than this libseccomp, another architecture's, or a typo:
			 * sandpit cannot name it, and it fails with ENOSYS */
			mj_note(m, at.file, at.line, "'%s' is not a system call libseccomp knows for "
						  "x86-64: its line is left out (it gets ENOSYS)", name);
			return;
		}
	} else if (mj_number(l, &v) > 0 && v < POLICY_MAX_NR &&
		   (resolved = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, (int)v))) {
		snprintf(name, sizeof(name), "%s", resolved);
		free(resolved);
		nr = (int)v;
	} else {
		mj_error(m, at.file, at.line, "a system call name or number expected at '%.20s'", l->s);
		return;
	}
	if (!mj_accept(l, ":")) {
		mj_error(m, at.file, at.line, "':' expected after '%s'", name);
		return;
	}
	if (m->seen[nr]) {
		mj_error(m, at.file, at.line, "'%s' given twice (first at %s:%d)", name,
		      m->files[m->seen_file[nr]], m->seen[nr]);
		return;
	}
	m->seen[nr] = at.line;
	m->seen_file[nr] = at.file;
	mj_skip(l);
	if (!strncmp(l->s, "arg", 3)) {
		if (mj_expression(m, at, l, &d, &always) < 0)
			return;
		act = ACT_ALLOW;
		if (mj_accept(l, ";")) {
			n = mj_ident(l);
			if (!mj_word_is(l->s, n, "return")) {
				mj_error(m, at.file, at.line,
				      "only '; return ERRNO' may follow an expression");
				return;
			}
			if (action(m, at, l, &err_no) < 0)
				return;
		}
	} else {
		if ((act = action(m, at, l, &err_no)) < 0)
			return;
		always = 1;
	}
	mj_skip(l);
	if (*l->s) {
		mj_error(m, at.file, at.line, "unexpected '%.20s'", l->s);
		return;
	}
	if (m->denylist) {
		if (act != ACT_RETURN || !always) {
			mj_error(m, at.file, at.line, "a @denylist policy may only give 'return ERRNO'");
			return;
		}
		/* what policy_set takes, said here at the line (as for the
		 * lines a policy without @denylist becomes) */
		if (err_no < 1 || err_no > 4095) {
			mj_error(m, at.file, at.line, "errno %d is out of range (1..4095)", err_no);
			return;
		}
		m->deny_err[nr] = err_no + 1;
		return;
	}
	switch (always ? act : 0) {
	case ACT_RETURN:
		emit(m, at.file, at.line, "%s: deny(%s)", name, ERRNO_TEXT(err_no));
		return;
	case ACT_KILL_THREAD:
	case ACT_TRAP:
		mj_note(m, at.file, at.line, "%s: %s becomes kill: sandpit kills the whole process", name,
		     act == ACT_TRAP ? "trap (SIGSYS, which sandpit keeps for itself)" : "kill-thread");
		/* fall through */
	case ACT_KILL:
		emit(m, at.file, at.line, "%s: kill", name);
		return;
	case ACT_NOTIFY:
	case ACT_TRACE:
		mj_note(m, at.file, at.line,
		     "%s: %s becomes deny(ENOSYS), what the kernel answers when no %s is attached",
		     name, act == ACT_NOTIFY ? "user-notify" : "trace",
		     act == ACT_NOTIFY ? "supervisor" : "tracer");
		emit(m, at.file, at.line, "%s: deny(ENOSYS)", name);
		return;
	case ACT_LOG:
		mj_note(m, at.file, at.line, "%s: log is allow: sandpit logs only what it refuses", name);
		/* fall through */
	case ACT_ALLOW:
		emit_allow(m, at, name, nr, 0);
		return;
	}
	/* an expression */
	const struct policy_guard *g = policy_guard(nr);
	if (g && (g->kind == GUARD_NEEDS_B || g->kind == GUARD_NEVER)) {
		emit_allow(m, at, name, nr, 1);
		return;
	}
	if (!err_no) {
		err_no = EPERM;
		if (!m->noted_eperm++)
			mj_note(m, at.file, at.line,
			     "a call that fails an expression without '; return' gets EPERM "
			     "(minijail kills the process); so on every such line");
	}
	if (d.nclauses == 0) {
		emit(m, at.file, at.line, "%s: deny(%s)", name, ERRNO_TEXT(err_no));
		return;
	}
	if (mj_translate(m, at, &d, conj, sizeof(conj)) == 0)
		emit(m, at.file, at.line, "%s: %s; deny(%s)", name, conj, ERRNO_TEXT(err_no));
}

static void parse_text(struct mj *m, int file, const char *text, size_t len, int depth);

static void include(struct mj *m, struct origin at, struct lex *l, int depth)
{
	char *text;
	size_t len, n;
	int rc;

	mj_skip(l);
	n = strcspn(l->s, " \t");
	if (!n || l->s[n]) {
		mj_error(m, at.file, at.line, "@include takes one path");
		return;
	}
	/* said once a file, with the chain that led there: a file of a
	 * hundred nested @includes is one mistake, not a hundred */
	if (depth) {
		struct origin from = m->included_at[at.file];
		/* a flag, not a count: a byte would wrap at the 257th */
		if (!m->nested_said[at.file]) {
			m->nested_said[at.file] = 1;
			mj_error(m, at.file, at.line,
				 "@include nested too deep (minijail includes one level): "
				 "%s:%d includes %s, which includes %.*s (said once a file)",
				 m->files[from.file], from.line, m->files[at.file], (int)n, l->s);
		}
		return;
	}
	if (m->nfiles >= MJ_MAX_FILES) {
		if (!m->files_said) {
			m->files_said = 1;
			mj_error(m, at.file, at.line, "more than %d files (said once)", MJ_MAX_FILES);
		}
		return;
	}
	char *path = strndup(l->s, n);
	if (!path) {
		mj_error(m, at.file, at.line, "out of memory");
		return;
	}
	/* as minijail: absolute, or relative to the working directory */
	rc = policy_read_file(path, &text, &len);
	if (rc < 0) {
		mj_error(m, at.file, at.line, "cannot include '%s': %s", path, policy_file_error(rc));
		free(path);
		return;
	}
	m->owned[m->nfiles] = path;
	m->files[m->nfiles] = path;
	m->included_at[m->nfiles] = at;
	parse_text(m, m->nfiles++, text, len, depth + 1);
	free(text);
}

static void directive(struct mj *m, struct origin at, struct lex *l, int depth)
{
	size_t n;

	l->s++;
	n = mj_ident(l);
	if (mj_word_is(l->s, n, "include")) {
		l->s += n;
		include(m, at, l, depth);
	} else if (mj_word_is(l->s, n, "frequency")) {
		if (!m->noted_frequency++)
			mj_note(m, at.file, at.line, "@frequency is ignored (sandpit's filter does not "
						  "order calls by frequency)");
	} else if (mj_word_is(l->s, n, "denylist")) {
		l->s += n;
		mj_skip(l);
		if (*l->s || m->nstatements || depth)
			mj_error(m, at.file, at.line, "@denylist must be the first statement");
		else
			m->denylist = 1;
	} else if (mj_word_is(l->s, n, "default")) {
		int e = 0, act;
		l->s += n;
		act = action(m, at, l, &e);
		if (act < 0)
			return;
		mj_skip(l);
		if (*l->s || m->dflt_given++ || depth || m->denylist) {
			mj_error(m, at.file, at.line, "one @default, in the policy file itself (not a "
						   "@denylist), with one action");
			return;
		}
		m->dflt_line = m->nmap + 1;
		if (act == ACT_NOTIFY || act == ACT_RETURN || act == ACT_TRACE) {
			if (act != ACT_RETURN)
				mj_note(m, at.file, at.line, "@default: becomes deny(ENOSYS)");
			emit(m, at.file, at.line, "default: deny(%s)", ERRNO_TEXT(act == ACT_RETURN ? e : ENOSYS));
		} else if (act == ACT_KILL || act == ACT_KILL_THREAD || act == ACT_TRAP) {
			emit(m, at.file, at.line, "default: kill");
		} else {
			mj_error(m, at.file, at.line, "@default cannot allow");
		}
	} else {
		mj_error(m, at.file, at.line, "unknown statement '@%.*s'", (int)n, l->s);
	}
}

/* The lines of one file: '#' comments, '\' joins a line to the next. */
static void parse_text(struct mj *m, int file, const char *text, size_t len, int depth)
{
	char *buf = malloc(MJ_MAX_LINE + 1);
	size_t pos = 0;
	int line = 0;

	if (!buf) {
		mj_error(m, file, 1, "out of memory");
		return;
	}
	while (pos < len && m->nerrors <= MJ_MAX_ERRORS) {
		size_t k = 0;
		int first = line + 1, toolong = 0;

		for (;;) {
			const char *s = text + pos, *eol = memchr(s, '\n', len - pos);
			size_t n = eol ? (size_t)(eol - s) : len - pos;
			int cont;

			line++;
			pos += n + (eol != NULL);
			const char *hash = memchr(s, '#', n);
			if (hash)
				n = hash - s;
			if (memchr(s, 0, n) && !toolong) {
				mj_error(m, file, line, "a NUL byte");
				toolong = 2; /* said */
			}
			while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
				n--;
			cont = !hash && n && s[n - 1] == '\\';
			n -= cont;
			if (k + n > MJ_MAX_LINE)
				toolong |= 1;
			else {
				memcpy(buf + k, s, n);
				k += n;
			}
			if (!cont || pos >= len)
				break;
			if (k < MJ_MAX_LINE)
				buf[k++] = ' ';
		}
		buf[k] = 0;
		if (toolong) {
			if (toolong == 1)
				mj_error(m, file, first, "line longer than %d bytes", MJ_MAX_LINE);
			continue;
		}
		struct lex l = { buf, 0 };
		struct origin at = { file, first };
		mj_skip(&l);
		if (!*l.s)
			continue;
		if (*l.s == '@') {
			directive(m, at, &l, depth);
			continue;
		}
		m->nstatements++;
		statement(m, at, &l);
	}
	free(buf);
}

/* A message of policy/parse.c about the translated text: its line, as the
 * minijail file's FILE:LINE. */
struct relay {
	struct mj *m;
	const char *name;
	const char *gen;
};

static void relay(void *ctx, const char *msg)
{
	struct relay *r = ctx;
	size_t n = strlen(r->name);
	char *end;
	long line;

	if (strncmp(msg, r->name, n) || msg[n] != ':' ||
	    (line = strtol(msg + n + 1, &end, 10)) < 1 || line > r->m->nmap || *end != ':') {
		mj_error(r->m, 0, 0, "%s", msg);
		return;
	}
	const char *text = strchr(end + 1, ':');
	text = text ? text + 2 : end + 1;
	/* the sandpit line it became, for context */
	const char *g = r->gen;
	for (long i = 1; i < line && g; i++)
		if ((g = strchr(g, '\n')))
			g++;
	int glen = g ? (int)strcspn(g, "\n") : 0;
	struct origin o = r->m->map[line - 1];
	mj_error(r->m, o.file, o.line, "%s (as sandpit's '%.*s')", text, glen, g ? g : "");
}

/* The compiled policy's lines named as the minijail file's, not the
 * translation's: what --log=denials and strict mode's refusal quote.  The
 * default no line gave (minijail's kill) has no line. */
static int minijail_sources(struct mj *m, struct policy *p)
{
	for (int nr = 0; nr < POLICY_MAX_NR; nr++) {
		const struct policy_call *c = policy_call(p, nr);

		if (!c->mentioned || !c->file || c->line < 1 || c->line > m->nmap)
			continue;
		struct origin o = m->map[c->line - 1];
		if (policy_set_source(p, nr, m->files[o.file], o.line, c->nguard) < 0)
			return -ENOMEM;
	}
	if (m->dflt_line < 1 || m->dflt_line > m->nmap)
		return 0;
	struct origin o = m->map[m->dflt_line - 1];
	return policy_set_source(p, POLICY_SRC_DEFAULT, m->dflt_given ? m->files[o.file] : NULL,
				 m->dflt_given ? o.line : 0, 0);
}

int policy_parse_minijail(const char *name, const char *text, size_t len, struct policy **out,
			  policy_report_fn *report, policy_report_fn *notes, void *ctx, char *err,
			  size_t errlen)
{
	struct mj *m = calloc(1, sizeof(*m));
	int rc;

	*out = NULL;
	if (!m || !(m->f = open_memstream(&m->out, &m->outlen))) {
		free(m);
		if (err && errlen)
			snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	m->files[m->nfiles++] = name ? name : "<policy>";
	m->report = report;
	m->note = notes;
	m->ctx = ctx;
	m->err = err;
	m->errlen = errlen;
	parse_text(m, 0, text ? text : "", text ? len : 0, 0);
	if (!m->dflt_given && !m->denylist) {
		m->dflt_line = m->nmap + 1;
		emit(m, 0, 1, "default: kill"); /* minijail kills what no line names */
	}
	fclose(m->f);
	if (m->nerrors) {
		rc = m->rc;
	} else if (m->denylist) {
		/* what no line names gets the default policy's line */
		mj_note(m, 0, 1, "@denylist: calls no line names get sandpit's default policy, "
			      "which never allows all");
		rc = policy_new_default(out, NULL, NULL, err, errlen);
		for (int nr = 0; rc == 0 && nr < POLICY_MAX_NR; nr++) {
			char *s = m->deny_err[nr] ? seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr)
						  : NULL;
			if (s)
				rc = policy_set(*out, s, POLICY_DENY, m->deny_err[nr] - 1, err, errlen);
			if (s && rc == 0 &&
			    (rc = policy_set_source(*out, nr, m->files[m->seen_file[nr]], m->seen[nr],
						    0)) < 0)
				snprintf(err, errlen, "out of memory");
			free(s);
		}
		if (rc < 0) { /* never half-applied, never refused without a word */
			mj_error(m, 0, 1, "%s", err[0] ? err : "the @denylist policy was refused");
			rc = m->rc;
		}
	} else {
		struct relay r = { m, m->files[0], m->out };
		rc = policy_parse_text(m->files[0], m->out, m->outlen, out, relay, &r, NULL, 0);
		if (rc == 0 && (rc = minijail_sources(m, *out)) < 0)
			mj_error(m, 0, 1, "out of memory");
		if (rc < 0 && !m->nerrors)
			mj_error(m, 0, 1, "the translated policy was refused");
		if (rc < 0)
			rc = m->rc;
	}
	if (rc < 0 && *out) {
		policy_free(*out);
		*out = NULL;
	}
	for (int i = 0; i < m->nfiles; i++)
		free(m->owned[i]);
	free(m->out);
	free(m->map);
	free(m);
	return rc < 0 ? rc : 0;
}
