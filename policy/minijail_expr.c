/* minijail's expressions (minijail0(5)): messages at a minijail FILE:LINE,
 * the tokens of a statement, an argument expression read into DNF, and its
 * translation into sandpit's conjunction of comparisons (what cannot be
 * said literally is translated by the rule of sandpit.policy(5), "MINIJAIL
 * POLICIES", and noted). */
#include <errno.h>
#include <limits.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy/policy.h"
#include "policy/minijail_expr.h"

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
	if (m->nerrors == MJ_MAX_ERRORS + 1)
		snprintf(msg, sizeof(msg), "%s:%d: too many errors, giving up", m->files[file], line);
	if (m->nerrors <= MJ_MAX_ERRORS + 1 && m->report)
		m->report(m->ctx, msg);
}

__attribute__((format(printf, 4, 5))) void mj_error(struct mj *m, int file, int line,
							 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(m, 1, file, line, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 4, 5))) void mj_note(struct mj *m, int file, int line,
							const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(m, 0, file, line, fmt, ap);
	va_end(ap);
}

void mj_skip(struct lex *l)
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
size_t mj_ident(struct lex *l)
{
	size_t n = 0;

	mj_skip(l);
	if (!is_ident((unsigned char)l->s[0], 1))
		return 0;
	while (is_ident((unsigned char)l->s[n], 0))
		n++;
	return n;
}

int mj_accept(struct lex *l, const char *tok)
{
	size_t n = strlen(tok);

	mj_skip(l);
	if (strncmp(l->s, tok, n))
		return 0;
	l->s += n;
	return 1;
}

int mj_word_is(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && !strncmp(s, w, n);
}

/* A number as C's strtoull(_, _, 0) reads it, the whole token; a leading
 * '-' gives the two's complement, as minijail's compiler reads it. */
int mj_number(struct lex *l, uint64_t *v)
{
	const char *d;
	char *end;

	mj_skip(l);
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
		mj_error(m, at.file, at.line, "constants nest more than %d deep", MJ_MAX_NEST);
		return -1;
	}
	if (mj_accept(l, "~"))
		neg = 1;
	if (mj_accept(l, "(")) {
		if (value(m, at, l, v) < 0)
			return -1;
		if (!mj_accept(l, ")")) {
			mj_error(m, at.file, at.line, "')' expected");
			return -1;
		}
	} else if ((r = mj_number(l, v)) != 0) {
		if (r < 0) {
			mj_error(m, at.file, at.line, "invalid number '%.20s'", l->s);
			return -1;
		}
	} else if ((n = mj_ident(l))) {
		if (policy_constant(l->s, n, v) < 0) {
			mj_error(m, at.file, at.line, "unknown constant '%.*s'", (int)n, l->s);
			return -1;
		}
		l->s += n;
	} else {
		mj_error(m, at.file, at.line, "a value expected at '%.20s'", l->s);
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
	while (!(mj_skip(l), l->s[0] == '|' && l->s[1] == '|') && mj_accept(l, "|")) {
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

	mj_skip(l);
	if (strncmp(l->s, "arg", 3) || l->s[3] < '0' || l->s[3] > '5' ||
	    is_ident((unsigned char)l->s[4], 0)) {
		mj_error(m, at.file, at.line, "an argument arg0..arg5 expected at '%.20s'", l->s);
		return -1;
	}
	a->arg = l->s[3] - '0';
	l->s += 4;
	a->op = 0;
	mj_skip(l);
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
		mj_error(m, at.file, at.line, "an operator (== != < <= > >= & in) expected at '%.20s'",
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
int mj_expression(struct mj *m, struct origin at, struct lex *l, struct dnf *d, int *always)
{
	struct atom a;
	int start = 0, dead = 0;

	d->natoms = d->nclauses = 0;
	*always = 0;
	for (;;) {
		if (d->natoms >= MJ_MAX_ATOMS) {
			mj_error(m, at.file, at.line, "more than %d comparisons in one expression",
			      MJ_MAX_ATOMS);
			return -1;
		}
		if (atom(m, at, l, &a) < 0)
			return -1;
		if (a.op == OP_FALSE)
			dead = 1;
		else if (a.op != OP_TRUE)
			d->atoms[d->natoms++] = a;
		if (mj_accept(l, "&&"))
			continue;
		if (dead)
			d->natoms = start;
		else if (d->natoms == start)
			*always = 1; /* a clause that always holds */
		else
			d->end[d->nclauses++] = d->natoms;
		start = d->natoms;
		dead = 0;
		if (!mj_accept(l, "||"))
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

const char *minijail_op_text(int op)
{
	static const char *const t[] = { [OP_EQ] = "==", [OP_NE] = "!=", [OP_LE] = "<=",
					 [OP_GE] = ">=", [OP_AND] = "&", [OP_IN] = "in" };
	return t[op];
}

/* The DNF as sandpit's && of comparisons: || is distributed over &&, and each
 * resulting clause must be one comparison sandpit has (put_alternatives). */
int mj_translate(struct mj *m, struct origin at, const struct dnf *d, char *out, size_t len)
{
	int pick[MJ_MAX_ATOMS] = { 0 }, ncnf = 1, k = 0;
	size_t used = 0;

	for (int c = 0; c < d->nclauses; c++) {
		int size = d->end[c] - (c ? d->end[c - 1] : 0);
		if (ncnf > MJ_MAX_CNF / size) {
			mj_error(m, at.file, at.line,
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
					      j ? " || " : "", alt[j].arg, minijail_op_text(alt[j].op),
					      (unsigned long long)alt[j].v);
			mj_error(m, at.file, at.line,
			      "sandpit cannot express '%s' (sandpit.policy(5), MINIJAIL POLICIES)",
			      why);
			return -1;
		}
		used += snprintf(out + used, used < len ? len - used : 0, "%s%s", k ? " && " : "",
				 one);
		if (used >= len) {
			mj_error(m, at.file, at.line, "expression too long");
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

