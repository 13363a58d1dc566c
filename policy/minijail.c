/* minijail's .policy files, as they are (minijail0(5), SECCOMP_FILTER
 * SYNTAX; the compiled-policy parser's actions and @-statements), read into
 * sandpit's model, and sandpit's model written out in minijail's format.
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

#define MJ_MAX_LINE    65536 /* one logical line, continuations joined */
#define MJ_MAX_ATOMS   64    /* comparisons in one expression */
#define MJ_MAX_CNF     64    /* clauses after distributing || over && */
#define MJ_MAX_NEST    32    /* '(' and '~' inside one another: the parser recurses */
#define MJ_MAX_FILES   64    /* the file and what it includes (one level, as minijail) */
#define MJ_MAX_ERRORS  100

enum { OP_EQ = 1, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_AND, OP_IN, OP_TRUE, OP_FALSE };

struct atom {
	int arg, op;
	uint64_t v;
};

/* An expression in DNF: clause i is atoms [end[i-1], end[i]). */
struct dnf {
	int natoms, nclauses;
	struct atom atoms[MJ_MAX_ATOMS];
	int end[MJ_MAX_ATOMS];
};

struct origin {
	int file, line;
};

struct mj {
	const char *files[MJ_MAX_FILES];
	int nfiles;
	char *owned[MJ_MAX_FILES];
	/* the sandpit text being written, and where each of its lines came from */
	char *out;
	size_t outlen;
	FILE *f;
	struct origin *map;
	int nmap, mapcap;
	int seen[POLICY_MAX_NR]; /* line + 1 of the call's statement, for duplicates */
	int seen_file[POLICY_MAX_NR];
	int denylist, nstatements;
	int deny_err[POLICY_MAX_NR]; /* @denylist: errno + 1 */
	int dflt_given;
	int noted_frequency, noted_eperm;
	int nerrors, rc;
	policy_report_fn *report, *note;
	void *ctx;
	char *err;
	size_t errlen;
};

/* --- messages --- */

static void vmsg(struct mj *m, int is_error, int file, int line, const char *fmt, va_list ap)
{
	char msg[1024];
	int n = snprintf(msg, sizeof(msg), "%s:%d: %s", m->files[file], line,
			 is_error ? "" : "note: ");

	if (n < 0 || (size_t)n >= sizeof(msg))
		n = 0;
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	if (!is_error) {
		if (m->note)
			m->note(m->ctx, msg);
		return;
	}
	if (m->nerrors++ == 0) {
		m->rc = -EINVAL;
		if (m->err && m->errlen)
			snprintf(m->err, m->errlen, "%s", msg);
	}
	if (m->nerrors <= MJ_MAX_ERRORS && m->report)
		m->report(m->ctx, msg);
}

__attribute__((format(printf, 4, 5))) static void error(struct mj *m, int file, int line,
							 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(m, 1, file, line, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 4, 5))) static void note(struct mj *m, int file, int line,
							const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(m, 0, file, line, fmt, ap);
	va_end(ap);
}

/* One line of sandpit text, from (file, line) of the minijail text. */
__attribute__((format(printf, 4, 5))) static void emit(struct mj *m, int file, int line,
							const char *fmt, ...)
{
	va_list ap;

	if (m->nmap == m->mapcap) {
		int cap = m->mapcap ? 2 * m->mapcap : 256;
		struct origin *nm = realloc(m->map, cap * sizeof(*nm));
		if (!nm) {
			error(m, file, line, "out of memory");
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

/* --- tokens --- */

struct lex {
	const char *s;
	int nest;
};

static void skip(struct lex *l)
{
	while (*l->s == ' ' || *l->s == '\t' || *l->s == '\r')
		l->s++;
}

static int is_ident(int c, int first)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (!first && ((c >= '0' && c <= '9') || c == '-'));
}

/* An identifier (minijail's may hold '-', as kill-process); its length. */
static size_t ident(struct lex *l)
{
	size_t n = 0;

	skip(l);
	if (!is_ident((unsigned char)l->s[0], 1))
		return 0;
	while (is_ident((unsigned char)l->s[n], 0))
		n++;
	return n;
}

static int accept(struct lex *l, const char *tok)
{
	size_t n = strlen(tok);

	skip(l);
	if (strncmp(l->s, tok, n))
		return 0;
	l->s += n;
	return 1;
}

static int word_is(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && !strncmp(s, w, n);
}

/* A number as C's strtoull(_, _, 0) reads it, the whole token; a leading
 * '-' gives the two's complement, as minijail's compiler reads it. */
static int number(struct lex *l, uint64_t *v)
{
	const char *d;
	char *end;

	skip(l);
	d = l->s + (l->s[0] == '-');
	if (d[0] < '0' || d[0] > '9')
		return 0;
	errno = 0;
	*v = strtoull(l->s, &end, 0);
	if (errno || is_ident((unsigned char)*end, 0))
		return -1;
	l->s = end;
	return 1;
}

static int value(struct mj *m, struct origin at, struct lex *l, uint64_t *v);

/* constant = ['~'] ( '(' value ')' | number | NAME ) */
static int constant(struct mj *m, struct origin at, struct lex *l, uint64_t *v)
{
	int neg = 0, r;
	size_t n;

	if (++l->nest > MJ_MAX_NEST) {
		error(m, at.file, at.line, "constants nest more than %d deep", MJ_MAX_NEST);
		return -1;
	}
	if (accept(l, "~"))
		neg = 1;
	if (accept(l, "(")) {
		if (value(m, at, l, v) < 0)
			return -1;
		if (!accept(l, ")")) {
			error(m, at.file, at.line, "')' expected");
			return -1;
		}
	} else if ((r = number(l, v)) != 0) {
		if (r < 0) {
			error(m, at.file, at.line, "invalid number '%.20s'", l->s);
			return -1;
		}
	} else if ((n = ident(l))) {
		if (policy_constant(l->s, n, v) < 0) {
			error(m, at.file, at.line, "unknown constant '%.*s'", (int)n, l->s);
			return -1;
		}
		l->s += n;
	} else {
		error(m, at.file, at.line, "a value expected at '%.20s'", l->s);
		return -1;
	}
	if (neg)
		*v = ~*v;
	l->nest--;
	return 0;
}

/* value = constant { '|' constant } */
static int value(struct mj *m, struct origin at, struct lex *l, uint64_t *v)
{
	uint64_t w;

	if (constant(m, at, l, v) < 0)
		return -1;
	while (!(skip(l), l->s[0] == '|' && l->s[1] == '|') && accept(l, "|")) {
		if (constant(m, at, l, &w) < 0)
			return -1;
		*v |= w;
	}
	return 0;
}

/* atom = argN OP value; normalised so that < and > disappear and what is
 * always true or false says so. */
static int atom(struct mj *m, struct origin at, struct lex *l, struct atom *a)
{
	static const struct {
		const char *tok;
		int op;
	} ops[] = { { "==", OP_EQ }, { "!=", OP_NE }, { "<=", OP_LE }, { ">=", OP_GE },
		    { "<", OP_LT },  { ">", OP_GT },  { "&", OP_AND } };
	size_t i;

	skip(l);
	if (strncmp(l->s, "arg", 3) || l->s[3] < '0' || l->s[3] > '5' ||
	    is_ident((unsigned char)l->s[4], 0)) {
		error(m, at.file, at.line, "an argument arg0..arg5 expected at '%.20s'", l->s);
		return -1;
	}
	a->arg = l->s[3] - '0';
	l->s += 4;
	a->op = 0;
	skip(l);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(l->s, ops[i].tok, strlen(ops[i].tok)) &&
		    !(ops[i].op == OP_AND && l->s[1] == '&')) {
			a->op = ops[i].op;
			l->s += strlen(ops[i].tok);
			break;
		}
	if (!a->op && !strncmp(l->s, "in", 2) && !is_ident((unsigned char)l->s[2], 0)) {
		a->op = OP_IN;
		l->s += 2;
	}
	if (!a->op) {
		error(m, at.file, at.line, "an operator (== != < <= > >= & in) expected at '%.20s'",
		      l->s);
		return -1;
	}
	if (value(m, at, l, &a->v) < 0)
		return -1;
	switch (a->op) {
	case OP_LT:
		a->op = a->v ? OP_LE : OP_FALSE;
		a->v--;
		break;
	case OP_GT:
		a->op = a->v == UINT64_MAX ? OP_FALSE : OP_GE;
		a->v++;
		break;
	case OP_LE:
		if (a->v == UINT64_MAX)
			a->op = OP_TRUE;
		break;
	case OP_AND:
		if (!a->v)
			a->op = OP_FALSE;
		break;
	case OP_IN:
		if (a->v == UINT64_MAX)
			a->op = OP_TRUE;
		break;
	}
	if (a->op == OP_GE && a->v == 0)
		a->op = OP_TRUE;
	return 0;
}

/* argument-expression = clause { '||' clause }, clause = atom { '&&' atom };
 * clauses that can never hold are dropped, atoms that always hold too. */
static int expression(struct mj *m, struct origin at, struct lex *l, struct dnf *d, int *always)
{
	struct atom a;
	int start = 0, dead = 0;

	d->natoms = d->nclauses = 0;
	*always = 0;
	for (;;) {
		if (d->natoms >= MJ_MAX_ATOMS) {
			error(m, at.file, at.line, "more than %d comparisons in one expression",
			      MJ_MAX_ATOMS);
			return -1;
		}
		if (atom(m, at, l, &a) < 0)
			return -1;
		if (a.op == OP_FALSE)
			dead = 1;
		else if (a.op != OP_TRUE)
			d->atoms[d->natoms++] = a;
		if (accept(l, "&&"))
			continue;
		if (dead)
			d->natoms = start;
		else if (d->natoms == start)
			*always = 1; /* a clause that always holds */
		else
			d->end[d->nclauses++] = d->natoms;
		start = d->natoms;
		dead = 0;
		if (!accept(l, "||"))
			return 0;
	}
}

/* --- the translation of an expression into sandpit's conjunction --- */

static int single_bit(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* The atom is "(a[arg] & *mask) == 0". */
static int zero_test(const struct atom *a, uint64_t *mask)
{
	if (a->op == OP_IN) {
		*mask = ~a->v;
		return 1;
	}
	if ((a->op == OP_EQ || a->op == OP_LE) && a->v == 0) {
		*mask = UINT64_MAX;
		return 1;
	}
	return 0;
}

static int put_atom(const struct atom *a, char *out, size_t n)
{
	static const char *const sym[] = { [OP_EQ] = "==", [OP_NE] = "!=", [OP_LE] = "<=",
					   [OP_AND] = "&", [OP_IN] = "in" };

	if (a->op == OP_GE) {
		uint64_t high = ~(a->v - 1); /* the bits of a value >= v, v a power of two */
		if (!single_bit(a->v))
			return -1; /* >= needs a mask: only powers of two have one */
		return snprintf(out, n, "arg%d & %#llx != 0", a->arg, (unsigned long long)high) >=
		       (int)n ? -1 : 0;
	}
	return snprintf(out, n, "arg%d %s %#llx", a->arg, sym[a->op],
			(unsigned long long)a->v) >= (int)n ? -1 : 0;
}

/* One clause of the CNF (atoms that alternate) as one comparison of
 * sandpit's; -1 if it has none. */
static int put_alternatives(const struct atom *a, int n, char *out, size_t len, int cond_ok)
{
	uint64_t lo = UINT64_MAX, hi = 0, bits = 0, mask;
	int i, same = 1, eq = 1, zb = 1;

	if (n == 1)
		return put_atom(&a[0], out, len);
	for (i = 0; i < n; i++) {
		same &= a[i].arg == a[0].arg;
		eq &= a[i].op == OP_EQ;
		if (a[i].v < lo)
			lo = a[i].v;
		if (a[i].v > hi)
			hi = a[i].v;
		if (zero_test(&a[i], &mask) && single_bit(mask) && !(bits & mask))
			bits |= mask;
		else
			zb = 0;
	}
	/* argN == x || argN == y: one set, within 64 of each other */
	if (same && eq && hi - lo < 64) {
		size_t k = snprintf(out, len, "arg%d in {", a[0].arg);
		for (i = 0; i < n && k < len; i++)
			k += snprintf(out + k, len - k, "%s%#llx", i ? ", " : "",
				      (unsigned long long)a[i].v);
		return k + 2 > len ? -1 : (strcat(out, "}"), 0);
	}
	/* (argN & b1) == 0 || (argN & b2) == 0, single bits: not all of them set */
	if (same && zb)
		return snprintf(out, len, "arg%d & %#llx != %#llx", a[0].arg,
				(unsigned long long)bits, (unsigned long long)bits) >= (int)len ? -1 : 0;
	/* (argM & c) == 0 || R: R applies when some bit of c is set */
	for (i = 0; cond_ok && i < n; i++) {
		struct atom rest[MJ_MAX_CNF];
		char r[256];
		int k = 0;

		if (!zero_test(&a[i], &mask))
			continue;
		for (int j = 0; j < n; j++)
			if (j != i)
				rest[k++] = a[j];
		if (put_alternatives(rest, k, r, sizeof(r), 0) == 0)
			return snprintf(out, len, "if arg%d & %#llx then %s", a[i].arg,
					(unsigned long long)mask, r) >= (int)len ? -1 : 0;
	}
	return -1;
}

static const char *op_text(int op)
{
	static const char *const t[] = { [OP_EQ] = "==", [OP_NE] = "!=", [OP_LE] = "<=",
					 [OP_GE] = ">=", [OP_AND] = "&", [OP_IN] = "in" };
	return t[op];
}

/* The DNF as sandpit's && of comparisons: || is distributed over &&, and each
 * resulting clause must be one comparison sandpit has (put_alternatives). */
static int translate(struct mj *m, struct origin at, const struct dnf *d, char *out, size_t len)
{
	int pick[MJ_MAX_ATOMS] = { 0 }, ncnf = 1, k = 0;
	size_t used = 0;

	for (int c = 0; c < d->nclauses; c++) {
		int size = d->end[c] - (c ? d->end[c - 1] : 0);
		if (ncnf > MJ_MAX_CNF / size) {
			error(m, at.file, at.line,
			      "sandpit cannot express this expression: distributing its || over && "
			      "gives more than %d clauses", MJ_MAX_CNF);
			return -1;
		}
		ncnf *= size;
	}
	out[0] = 0;
	for (k = 0; k < ncnf; k++) {
		struct atom alt[MJ_MAX_ATOMS];
		char one[512];
		int n = 0;

		for (int c = 0; c < d->nclauses; c++) {
			const struct atom *a = &d->atoms[(c ? d->end[c - 1] : 0) + pick[c]];
			int dup = 0;
			for (int j = 0; j < n; j++)
				dup |= alt[j].arg == a->arg && alt[j].op == a->op && alt[j].v == a->v;
			if (!dup)
				alt[n++] = *a;
		}
		if (put_alternatives(alt, n, one, sizeof(one), 1) < 0) {
			char why[512];
			size_t w = 0;
			for (int j = 0; j < n && w < sizeof(why); j++)
				w += snprintf(why + w, sizeof(why) - w, "%sarg%d %s %#llx",
					      j ? " || " : "", alt[j].arg, op_text(alt[j].op),
					      (unsigned long long)alt[j].v);
			error(m, at.file, at.line,
			      "sandpit cannot express '%s' (sandpit.policy(5), MINIJAIL POLICIES)",
			      why);
			return -1;
		}
		used += snprintf(out + used, used < len ? len - used : 0, "%s%s", k ? " && " : "",
				 one);
		if (used >= len) {
			error(m, at.file, at.line, "expression too long");
			return -1;
		}
		/* next combination */
		for (int c = 0; c < d->nclauses; c++) {
			int size = d->end[c] - (c ? d->end[c - 1] : 0);
			if (++pick[c] < size)
				break;
			pick[c] = 0;
		}
	}
	return 0;
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
	size_t n = ident(l);
	uint64_t v;
	int r;

	if (word_is(l->s, n, "return")) {
		l->s += n;
		if ((n = ident(l)) && (r = policy_errno(l->s, n)) > 0) {
			l->s += n;
			*err_no = r;
			return ACT_RETURN;
		}
		if (n) {
			error(m, at.file, at.line, "unknown errno '%.*s'", (int)n, l->s);
			return -1;
		}
		if ((r = number(l, &v)) > 0 && v <= 4095) {
			*err_no = (int)v;
			return ACT_RETURN;
		}
		error(m, at.file, at.line, "an errno expected after 'return'");
		return -1;
	}
	for (size_t i = 0; n && i < sizeof(acts) / sizeof(acts[0]); i++)
		if (word_is(l->s, n, acts[i].w)) {
			l->s += n;
			return acts[i].act;
		}
	if (!n && (r = number(l, &v)) > 0 && v == 1)
		return ACT_ALLOW;
	error(m, at.file, at.line, "an action expected at '%.20s'", l->s);
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
		note(m, at.file, at.line, "%s: allowed by minijail, refused by sandpit (%s): %s",
		     name, why, line);
	else if (!strcmp(line, "process"))
		note(m, at.file, at.line,
		     "%s: its memory argument is checked by the trusted process (process%s), "
		     "against the grants given on the command line", name,
		     had_expr ? "; the expression is not used" : "");
	else if (strcmp(line, "allow") && strcmp(line, "emulate"))
		note(m, at.file, at.line, "%s: confined to the sandboxed process: %s", name, line);
	emit(m, at.file, at.line, "%s: %s", name, line);
}

static void statement(struct mj *m, struct origin at, struct lex *l)
{
	char name[64], *resolved = NULL, conj[4096];
	size_t n = ident(l);
	int nr, act, err_no = 0, always = 0;
	uint64_t v;
	struct dnf d = { 0 };

	if (n) {
		if (n >= sizeof(name)) {
			error(m, at.file, at.line, "system call name too long");
			return;
		}
		memcpy(name, l->s, n);
		name[n] = 0;
		l->s += n;
		nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name);
		if (nr < 0 || nr >= POLICY_MAX_NR) {
			/* newer than this libseccomp, another architecture's, or a typo:
			 * sandpit cannot name it, and it fails with ENOSYS */
			note(m, at.file, at.line, "'%s' is not a system call libseccomp knows for "
						  "x86-64: its line is left out (it gets ENOSYS)", name);
			return;
		}
	} else if (number(l, &v) > 0 && v < POLICY_MAX_NR &&
		   (resolved = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, (int)v))) {
		snprintf(name, sizeof(name), "%s", resolved);
		free(resolved);
		nr = (int)v;
	} else {
		error(m, at.file, at.line, "a system call name or number expected at '%.20s'", l->s);
		return;
	}
	if (!accept(l, ":")) {
		error(m, at.file, at.line, "':' expected after '%s'", name);
		return;
	}
	if (m->seen[nr]) {
		error(m, at.file, at.line, "'%s' given twice (first at %s:%d)", name,
		      m->files[m->seen_file[nr]], m->seen[nr]);
		return;
	}
	m->seen[nr] = at.line;
	m->seen_file[nr] = at.file;
	skip(l);
	if (!strncmp(l->s, "arg", 3)) {
		if (expression(m, at, l, &d, &always) < 0)
			return;
		act = ACT_ALLOW;
		if (accept(l, ";")) {
			n = ident(l);
			if (!word_is(l->s, n, "return")) {
				error(m, at.file, at.line,
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
	skip(l);
	if (*l->s) {
		error(m, at.file, at.line, "unexpected '%.20s'", l->s);
		return;
	}
	if (m->denylist) {
		if (act != ACT_RETURN || !always) {
			error(m, at.file, at.line, "a @denylist policy may only give 'return ERRNO'");
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
		note(m, at.file, at.line, "%s: %s becomes kill: sandpit kills the whole process", name,
		     act == ACT_TRAP ? "trap (SIGSYS, which sandpit keeps for itself)" : "kill-thread");
		/* fall through */
	case ACT_KILL:
		emit(m, at.file, at.line, "%s: kill", name);
		return;
	case ACT_NOTIFY:
	case ACT_TRACE:
		note(m, at.file, at.line,
		     "%s: %s becomes deny(ENOSYS), what the kernel answers when no %s is attached",
		     name, act == ACT_NOTIFY ? "user-notify" : "trace",
		     act == ACT_NOTIFY ? "supervisor" : "tracer");
		emit(m, at.file, at.line, "%s: deny(ENOSYS)", name);
		return;
	case ACT_LOG:
		note(m, at.file, at.line, "%s: log is allow: sandpit logs only what it refuses", name);
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
			note(m, at.file, at.line,
			     "a call that fails an expression without '; return' gets EPERM "
			     "(minijail kills the process); so on every such line");
	}
	if (d.nclauses == 0) {
		emit(m, at.file, at.line, "%s: deny(%s)", name, ERRNO_TEXT(err_no));
		return;
	}
	if (translate(m, at, &d, conj, sizeof(conj)) == 0)
		emit(m, at.file, at.line, "%s: %s; deny(%s)", name, conj, ERRNO_TEXT(err_no));
}

static void parse_text(struct mj *m, int file, const char *text, size_t len, int depth);

static void include(struct mj *m, struct origin at, struct lex *l, int depth)
{
	char *text;
	size_t len, n;
	int rc;

	skip(l);
	n = strcspn(l->s, " \t");
	if (!n || l->s[n]) {
		error(m, at.file, at.line, "@include takes one path");
		return;
	}
	if (depth) {
		error(m, at.file, at.line, "@include nested too deep (minijail includes one level)");
		return;
	}
	if (m->nfiles >= MJ_MAX_FILES) {
		error(m, at.file, at.line, "more than %d files", MJ_MAX_FILES);
		return;
	}
	char *path = strndup(l->s, n);
	if (!path) {
		error(m, at.file, at.line, "out of memory");
		return;
	}
	/* as minijail: absolute, or relative to the working directory */
	rc = policy_read_file(path, &text, &len);
	if (rc < 0) {
		error(m, at.file, at.line, "cannot include '%s': %s", path, policy_file_error(rc));
		free(path);
		return;
	}
	m->owned[m->nfiles] = path;
	m->files[m->nfiles] = path;
	parse_text(m, m->nfiles++, text, len, depth + 1);
	free(text);
}

static void directive(struct mj *m, struct origin at, struct lex *l, int depth)
{
	size_t n;

	l->s++;
	n = ident(l);
	if (word_is(l->s, n, "include")) {
		l->s += n;
		include(m, at, l, depth);
	} else if (word_is(l->s, n, "frequency")) {
		if (!m->noted_frequency++)
			note(m, at.file, at.line, "@frequency is ignored (sandpit's filter does not "
						  "order calls by frequency)");
	} else if (word_is(l->s, n, "denylist")) {
		l->s += n;
		skip(l);
		if (*l->s || m->nstatements || depth)
			error(m, at.file, at.line, "@denylist must be the first statement");
		else
			m->denylist = 1;
	} else if (word_is(l->s, n, "default")) {
		int e = 0, act;
		l->s += n;
		act = action(m, at, l, &e);
		if (act < 0)
			return;
		skip(l);
		if (*l->s || m->dflt_given++ || depth || m->denylist) {
			error(m, at.file, at.line, "one @default, in the policy file itself (not a "
						   "@denylist), with one action");
			return;
		}
		if (act == ACT_NOTIFY || act == ACT_RETURN || act == ACT_TRACE) {
			if (act != ACT_RETURN)
				note(m, at.file, at.line, "@default: becomes deny(ENOSYS)");
			emit(m, at.file, at.line, "default: deny(%s)", ERRNO_TEXT(act == ACT_RETURN ? e : ENOSYS));
		} else if (act == ACT_KILL || act == ACT_KILL_THREAD || act == ACT_TRAP) {
			emit(m, at.file, at.line, "default: kill");
		} else {
			error(m, at.file, at.line, "@default cannot allow");
		}
	} else {
		error(m, at.file, at.line, "unknown statement '@%.*s'", (int)n, l->s);
	}
}

/* The lines of one file: '#' comments, '\' joins a line to the next. */
static void parse_text(struct mj *m, int file, const char *text, size_t len, int depth)
{
	char *buf = malloc(MJ_MAX_LINE + 1);
	size_t pos = 0;
	int line = 0;

	if (!buf) {
		error(m, file, 1, "out of memory");
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
				error(m, file, line, "a NUL byte");
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
				error(m, file, first, "line longer than %d bytes", MJ_MAX_LINE);
			continue;
		}
		struct lex l = { buf, 0 };
		struct origin at = { file, first };
		skip(&l);
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
		error(r->m, 0, 0, "%s", msg);
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
	error(r->m, o.file, o.line, "%s (as sandpit's '%.*s')", text, glen, g ? g : "");
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
	if (!m->dflt_given && !m->denylist)
		emit(m, 0, 1, "default: kill"); /* minijail kills what no line names */
	fclose(m->f);
	if (m->nerrors > MJ_MAX_ERRORS && report) {
		char msg[256];
		snprintf(msg, sizeof(msg), "%s: too many errors (%d)", m->files[0], m->nerrors);
		report(ctx, msg);
	}
	if (m->nerrors) {
		rc = m->rc;
	} else if (m->denylist) {
		/* what no line names gets the default policy's line */
		note(m, 0, 1, "@denylist: calls no line names get sandpit's default policy, "
			      "which never allows all");
		rc = policy_new_default(out, NULL, NULL, err, errlen);
		for (int nr = 0; rc == 0 && nr < POLICY_MAX_NR; nr++) {
			char *s = m->deny_err[nr] ? seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr)
						  : NULL;
			if (s)
				rc = policy_set(*out, s, POLICY_DENY, m->deny_err[nr] - 1, err, errlen);
			free(s);
		}
	} else {
		struct relay r = { m, m->files[0], m->out };
		rc = policy_parse_text(m->files[0], m->out, m->outlen, out, relay, &r, NULL, 0);
		if (rc < 0 && !m->nerrors)
			error(m, 0, 1, "the translated policy was refused");
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

/* --- which format a file is in --- */

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

/* --- sandpit's model in minijail's format --- */

#define EX_MAX_ALT 64 /* atoms in one clause, clauses in the result */

struct ex_clause {
	int n;
	struct atom a[EX_MAX_ALT];
};

struct ex {
	int n;
	struct ex_clause c[POLICY_MAX_RULES * 65];
};

static int ex_add(struct ex *e, int carg, uint64_t cmask, const struct atom *alts, int n)
{
	struct ex_clause *c = &e->c[e->n];

	if (e->n >= (int)(sizeof(e->c) / sizeof(e->c[0])) || n + 1 > EX_MAX_ALT)
		return -1;
	c->n = 0;
	if (carg != POLICY_NOARG) /* "if a[carg] & cmask then R" is "(a[carg] & cmask) == 0 || R" */
		c->a[c->n++] = (struct atom){ carg, OP_IN, ~cmask };
	memcpy(c->a + c->n, alts, n * sizeof(*alts));
	c->n += n;
	e->n++;
	return 0;
}

/* A register rule as clauses of minijail atoms: 0, 1 if it is one of
 * sandpit's own checks (nothing to say outside sandpit), -1 if minijail
 * cannot say it. */
static int ex_rule(struct ex *e, const struct policy_rule *r)
{
	struct atom alt[EX_MAX_ALT];
	uint64_t m = r->mask, v = r->val;
	int n = 0, rc = 0;

	switch (r->op) {
	case RULE_FD_FREE:
	case RULE_RANGE_FREE:
	case RULE_NOT_TID:
		return 1;
	case RULE_MASK_ZERO:
		alt[n++] = (struct atom){ r->arg, OP_IN, ~m };
		return ex_add(e, r->carg, r->cmask, alt, n);
	case RULE_LE:
		alt[n++] = (struct atom){ r->arg, OP_LE, v };
		return ex_add(e, r->carg, r->cmask, alt, n);
	case RULE_MASKED_EQ: /* the bits of v set, the rest of m clear */
		if (v & ~m)
			return -1;
		if (m == UINT64_MAX) {
			alt[0] = (struct atom){ r->arg, OP_EQ, v };
			return ex_add(e, r->carg, r->cmask, alt, 1);
		}
		if (m & ~v) {
			alt[0] = (struct atom){ r->arg, OP_IN, ~(m & ~v) };
			rc |= ex_add(e, r->carg, r->cmask, alt, 1);
		}
		for (int b = 0; b < 64; b++)
			if (v >> b & 1) {
				alt[0] = (struct atom){ r->arg, OP_AND, 1ULL << b };
				rc |= ex_add(e, r->carg, r->cmask, alt, 1);
			}
		return rc;
	case RULE_MASKED_NE: /* some bit of m outside v set, or some bit of v clear */
		if (v & ~m)
			return 0; /* always holds */
		if (m == UINT64_MAX) {
			alt[n++] = (struct atom){ r->arg, OP_NE, v };
		} else {
			if (m & ~v)
				alt[n++] = (struct atom){ r->arg, OP_AND, m & ~v };
			for (int b = 0; b < 64 && n < EX_MAX_ALT - 1; b++)
				if (v >> b & 1)
					alt[n++] = (struct atom){ r->arg, OP_IN, ~(1ULL << b) };
		}
		return ex_add(e, r->carg, r->cmask, alt, n);
	case RULE_BITSET:
		for (int b = 0; b < 64; b++)
			if (r->mask >> b & 1)
				alt[n++] = (struct atom){ r->arg, OP_EQ, v + b };
		return ex_add(e, r->carg, r->cmask, alt, n);
	default: /* RULE_SELF_PID: minijail cannot name the sandboxed process */
		return -1;
	}
}

static void ex_errno(FILE *f, int e)
{
	const char *s = strerrorname_np(e);

	if (s)
		fputs(s, f);
	else
		fprintf(f, "%d", e);
}

static void ex_atom(FILE *f, const struct atom *a)
{
	fprintf(f, "arg%d %s %#llx", a->arg, op_text(a->op), (unsigned long long)a->v);
}

/* One of the rules guard.c puts on every policy for the call, because of
 * what sandpit's own threads and descriptors are (a futex op that could ring
 * B, an fcntl owner that would signal it, ...): nothing to say outside
 * sandpit.  Not $pid: confining a call to the process means something
 * under minijail too. */
static int guard_rule(int nr, const struct policy_rule *r)
{
	const struct policy_guard *g = policy_guard(nr);

	for (int i = 0; g && g->kind == GUARD_RULES && i < g->nrules; i++) {
		const struct policy_rule *q = &g->rules[i];
		if (q->op == r->op && q->arg == r->arg && q->arg2 == r->arg2 && q->carg == r->carg &&
		    q->mask == r->mask && q->val == r->val && q->cmask == r->cmask &&
		    r->op != RULE_SELF_PID)
			return 1;
	}
	return 0;
}

/* The call's rules as one DNF (|| distributed over &&), or a comment and
 * the refusal. */
static void ex_thread(FILE *f, int nr, const char *name, const struct policy_call *c)
{
	static struct ex e;
	int pick[sizeof(e.c) / sizeof(e.c[0])] = { 0 }, own = 0, bad = 0;
	long ndnf = 1;

	e.n = 0;
	for (int i = 0; i < c->nrules; i++) {
		int r = guard_rule(nr, &c->rules[i]) ? 1 : ex_rule(&e, &c->rules[i]);
		own |= r == 1;
		bad |= r < 0;
		if (r != 1 && c->rules[i].err && c->rules[i].err != c->err)
			fprintf(f, "# %s: sandpit returns ", name), ex_errno(f, c->rules[i].err),
				fprintf(f, " when rule %d fails; minijail, one errno for all\n", i + 1);
	}
	for (int i = 0; !bad && i < e.n; i++)
		if ((ndnf *= e.c[i].n) > EX_MAX_ALT)
			bad = 1;
	if (own)
		fprintf(f, "# %s: sandpit's own checks (that the call leaves its descriptors, "
			   "pages and threads alone) are left out\n", name);
	if (bad) {
		fprintf(f, "# %s: sandpit's rules (see sandpit policy show) cannot be said in "
			   "minijail's expressions; refused here\n%s: return ", name, name);
		ex_errno(f, c->err ? c->err : EPERM);
		fputc('\n', f);
		return;
	}
	if (e.n == 0) {
		fprintf(f, "%s: allow\n", name);
		return;
	}
	fprintf(f, "%s: ", name);
	for (long k = 0; k < ndnf; k++) {
		fputs(k ? " || " : "", f);
		for (int i = 0; i < e.n; i++) {
			fputs(i ? " && " : "", f);
			ex_atom(f, &e.c[i].a[pick[i]]);
		}
		for (int i = 0; i < e.n; i++) {
			if (++pick[i] < e.c[i].n)
				break;
			pick[i] = 0;
		}
	}
	fputs("; return ", f);
	ex_errno(f, c->err ? c->err : EPERM);
	fputc('\n', f);
}

int policy_export_minijail(const struct policy *p, FILE *f)
{
	int dcls, derr;

	policy_get_default(p, &dcls, &derr);
	fprintf(f, "# sandpit policy export-minijail: this policy in minijail's format.\n"
		   "# What minijail cannot express is said in comments.\n");
	if (policy_ngrants(p))
		fprintf(f, "# The path grants, which a seccomp filter cannot check (minijail's mount\n"
			   "# namespace, -b and -k, can):\n");
	for (size_t i = 0; i < policy_ngrants(p); i++)
		fprintf(f, "#   path %s %s\n", policy_grant_at(p, i)->writable ? "write" : "read",
			policy_grant_at(p, i)->path);
	if (dcls == POLICY_KILL)
		fprintf(f, "# calls no line names kill the process, as in minijail\n");
	else
		fprintf(f, "# calls no line names fail with errno %d; each is listed\n", derr);
	for (int nr = 0; nr < POLICY_DEFAULT_NR; nr++) {
		const struct policy_call *c = policy_call(p, nr);
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);

		if (!name || (!c->mentioned && dcls == POLICY_KILL)) {
			free(name);
			continue;
		}
		switch (c->cls) {
		case POLICY_ALLOW:
		case POLICY_NATIVE:
			fprintf(f, "%s: allow\n", name);
			break;
		case POLICY_DENY:
			fprintf(f, "%s: return ", name);
			ex_errno(f, c->err);
			fputc('\n', f);
			break;
		case POLICY_KILL:
			fprintf(f, "%s: kill\n", name);
			break;
		case POLICY_EMU:
			fprintf(f, "# %s: sandpit answers it itself (%s); minijail lets it be made\n"
				   "%s: allow\n", name,
				c->err == POLICY_EMU_GETTID ? "the caller's tid" : "success, doing nothing",
				name);
			break;
		case POLICY_PROCESS:
			fprintf(f, "# %s: sandpit's trusted process checks its %s; a seccomp filter "
				   "cannot read memory\n%s: allow\n", name,
				c->proc.kind == PK_PATH ? "path against the grants" :
				c->proc.kind == PK_CLONE ? "flags (threads of the process only)" :
				"structure", name);
			break;
		default:
			ex_thread(f, nr, name, c);
			break;
		}
		free(name);
	}
	return fflush(f) ? -errno : 0;
}
