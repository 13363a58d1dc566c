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

#include "policy/policy.h"

#define MAX_DEPTH   8        /* @include nesting */
#define MAX_NEST    32       /* '(', '-' and '~' inside one another: the parser recurses */
/* what one policy may read, @includes and all: fan-out is bounded too */
#define MAX_FILES   256
#define MAX_LINES   (2 << 20)
#define MAX_BYTES   (16 << 20)
#define MAX_ERRORS  100      /* reported per parse; then one "too many" */
#define MAX_FILE    (1 << 20)
#define MAX_NAME    64

enum action { A_ALLOW = 1, A_DENY, A_KILL, A_TRAP, A_PROCESS, A_EMULATE };

struct where {
	const char *file;
	int line, col;
};

/* One syscall's line, checked. */
struct line_call {
	int given;
	struct where at;
	char name[MAX_NAME];
	int cls, err, nrules;
	int nguard; /* the first nguard rules are sandpit's guards */
	struct policy_rule rules[POLICY_MAX_RULES];
	const struct policy_proc_arg *proc;
};

struct grant {
	struct where at;
	char *path;
	int writable;
	int deny; /* path deny PATTERN */
};

struct source {
	const char *name; /* as messages call it */
	dev_t dev;
	ino_t ino;
	int has_id;
	const struct source *parent;
};

struct parser {
	struct line_call calls[POLICY_MAX_NR];
	int given[POLICY_MAX_NR]; /* the numbers given, so that build reads only their pages */
	int ngiven;
	struct grant *grants;
	size_t ngrants, grants_cap;
	int dflt_given, dflt_cls, dflt_err;
	struct where dflt_at;
	char **names; /* file names, kept for the messages' sake */
	size_t nnames;
	int nerrors;
	int rc; /* first error's errno */
	size_t files, lines, bytes; /* read so far, against MAX_FILES, MAX_LINES, MAX_BYTES */
	int over;                   /* past one of them: nothing more is read */
	policy_report_fn *report;
	void *ctx;
	char *err;
	size_t errlen;
};

static void report(struct parser *ps, int rc, const struct where *at, const char *fmt, ...)
{
	char msg[512];
	int n;
	va_list ap;

	if (ps->nerrors == 0)
		ps->rc = rc;
	if (ps->nerrors++ > MAX_ERRORS)
		return;
	if (at->line > 0)
		n = snprintf(msg, sizeof(msg), "%s:%d:%d: ", at->file, at->line, at->col);
	else
		n = snprintf(msg, sizeof(msg), "%s: ", at->file);
	if (ps->nerrors > MAX_ERRORS) {
		snprintf(msg + n, sizeof(msg) - (size_t)n, "too many errors, giving up");
	} else {
		va_start(ap, fmt);
		vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
		va_end(ap);
	}
	if (ps->nerrors == 1 && ps->err && ps->errlen)
		snprintf(ps->err, ps->errlen, "%s", msg);
	if (ps->report)
		ps->report(ps->ctx, msg);
}

/* --- tokens --- */

enum tok {
	T_END, T_IDENT, T_NUM, T_VAR, /* $pid */
	T_COLON, T_LPAREN, T_RPAREN, T_LBRACE, T_RBRACE, T_COMMA, T_SEMI, T_OR, T_NOT, T_MINUS,
	T_AND, T_ANDAND, T_OROR, T_EQ, T_NE, T_LE, T_LT, T_GE, T_GT, T_BANG, T_BAD,
};

struct lexer {
	const char *s, *end; /* the line, without its newline */
	const char *line_start;
	struct where at;     /* of the current token */
	enum tok t;
	const char *tok;
	size_t len;
	uint64_t num;
	int num_bad;         /* a number that does not fit, or has junk */
	int nest;            /* parsing functions entered for '(', '-', '~' */
};

static int is_ident(int c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

static void next(struct lexer *lx)
{
	const char *p = lx->s;

	while (p < lx->end && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++;
	lx->at.col = (int)(p - lx->line_start) + 1;
	lx->tok = p;
	lx->len = 1;
	if (p >= lx->end || *p == '#') {
		lx->t = T_END;
		lx->len = 0;
		lx->s = lx->end;
		return;
	}
	if (is_ident(*p, 1) || (*p == '$' && p + 1 < lx->end && is_ident(p[1], 1))) {
		const char *q = p + 1;

		while (q < lx->end && is_ident(*q, 0))
			q++;
		lx->t = *p == '$' ? T_VAR : T_IDENT;
		lx->len = (size_t)(q - p);
		lx->s = q;
		return;
	}
	if (*p >= '0' && *p <= '9') {
		const char *q = p;
		uint64_t v = 0;
		int base = 10, bad = 0;

		if (q + 1 < lx->end && q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
			base = 16;
			q += 2;
			bad = !(q < lx->end && isxdigit((unsigned char)*q));
		} else if (*q == '0') {
			base = 8;
		}
		for (; q < lx->end && (isxdigit((unsigned char)*q) || is_ident(*q, 0)); q++) {
			int d = *q >= '0' && *q <= '9'	 ? *q - '0'
				: *q >= 'a' && *q <= 'f' ? *q - 'a' + 10
				: *q >= 'A' && *q <= 'F' ? *q - 'A' + 10
							 : 99;

			if (d >= base || v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
				bad = 1;
			else
				v = v * (uint64_t)base + (uint64_t)d;
		}
		lx->t = T_NUM;
		lx->num = v;
		lx->num_bad = bad;
		lx->len = (size_t)(q - p);
		lx->s = q;
		return;
	}
	lx->s = p + 1;
#define TWO(c2, two, one)                      \
	if (p + 1 < lx->end && p[1] == (c2)) { \
		lx->s = p + 2;                 \
		lx->len = 2;                   \
		lx->t = two;                   \
	} else {                               \
		lx->t = one;                   \
	}                                      \
	return
	switch (*p) {
	case ':': lx->t = T_COLON; return;
	case '(': lx->t = T_LPAREN; return;
	case ')': lx->t = T_RPAREN; return;
	case '{': lx->t = T_LBRACE; return;
	case '}': lx->t = T_RBRACE; return;
	case ',': lx->t = T_COMMA; return;
	case ';': lx->t = T_SEMI; return;
	case '~': lx->t = T_NOT; return;
	case '-': lx->t = T_MINUS; return;
	case '&': TWO('&', T_ANDAND, T_AND);
	case '|': TWO('|', T_OROR, T_OR);
	case '=': TWO('=', T_EQ, T_BAD);
	case '!': TWO('=', T_NE, T_BANG);
	case '<': TWO('=', T_LE, T_LT);
	case '>': TWO('=', T_GE, T_GT);
	default: lx->t = T_BAD; return;
	}
#undef TWO
}

static int is_word(const struct lexer *lx, const char *w)
{
	return lx->t == T_IDENT && lx->len == strlen(w) && !memcmp(lx->tok, w, lx->len);
}

/* What the token looks like in a message. */
static const char *shown(const struct lexer *lx, char *buf, size_t n)
{
	if (lx->t == T_END)
		return "end of line";
	snprintf(buf, n, "'%.*s'", (int)(lx->len > 40 ? 40 : lx->len), lx->tok);
	return buf;
}

/* Each reports its own error and returns -1, else 0. */
#define EXPECTED(ps, lx, what)                                                          \
	({                                                                              \
		char b_[48];                                                            \
		report(ps, -EINVAL, &(lx)->at, "expected %s, found %s", what,          \
		       shown(lx, b_, sizeof(b_)));                                      \
		-1;                                                                     \
	})

/* --- values --- */

static int constant(struct parser *ps, struct lexer *lx, uint64_t *v);

/* One more level of '(', '-' or '~': refused past MAX_NEST, so that no
 * line can recurse the parser off its stack. */
static int nest_in(struct parser *ps, struct lexer *lx)
{
	if (++lx->nest <= MAX_NEST)
		return 0;
	report(ps, -EINVAL, &lx->at, "nested deeper than %d levels", MAX_NEST);
	return -1;
}

static int term_nested(struct parser *ps, struct lexer *lx, uint64_t *v);

static int term(struct parser *ps, struct lexer *lx, uint64_t *v)
{
	int r;

	if (lx->t != T_NOT && lx->t != T_MINUS && lx->t != T_LPAREN)
		return term_nested(ps, lx, v);
	r = nest_in(ps, lx) < 0 ? -1 : term_nested(ps, lx, v);
	lx->nest--;
	return r;
}

static int term_nested(struct parser *ps, struct lexer *lx, uint64_t *v)
{
	if (lx->t == T_NOT || lx->t == T_MINUS) {
		enum tok op = lx->t;

		next(lx);
		if (term(ps, lx, v) < 0)
			return -1;
		*v = op == T_NOT ? ~*v : -*v;
		return 0;
	}
	if (lx->t == T_LPAREN) {
		next(lx);
		if (constant(ps, lx, v) < 0)
			return -1;
		if (lx->t != T_RPAREN)
			return EXPECTED(ps, lx, "')'");
		next(lx);
		return 0;
	}
	if (lx->t == T_NUM) {
		if (lx->num_bad) {
			report(ps, -EINVAL, &lx->at, "bad number '%.*s'", (int)lx->len, lx->tok);
			return -1;
		}
		*v = lx->num;
		next(lx);
		return 0;
	}
	if (lx->t == T_IDENT) {
		if (policy_constant(lx->tok, lx->len, v) < 0) {
			report(ps, -EINVAL, &lx->at, "unknown constant '%.*s'", (int)lx->len, lx->tok);
			return -1;
		}
		next(lx);
		return 0;
	}
	return EXPECTED(ps, lx, "a number or a constant");
}

/* term ('|' term)* */
static int constant(struct parser *ps, struct lexer *lx, uint64_t *v)
{
	uint64_t t;

	if (term(ps, lx, v) < 0)
		return -1;
	while (lx->t == T_OR) {
		next(lx);
		if (term(ps, lx, &t) < 0)
			return -1;
		*v |= t;
	}
	return 0;
}

/* deny(ERRNO) or return ERRNO; the lexer is on 'deny' or 'return' */
static int errno_spec(struct parser *ps, struct lexer *lx, int *e)
{
	int paren = is_word(lx, "deny");
	uint64_t v;

	next(lx);
	if (paren) {
		if (lx->t != T_LPAREN)
			return EXPECTED(ps, lx, "'(' and an errno");
		next(lx);
	}
	if (lx->t == T_IDENT) {
		*e = policy_errno(lx->tok, lx->len);
		if (*e < 0) {
			report(ps, -EINVAL, &lx->at, "unknown errno '%.*s'", (int)lx->len, lx->tok);
			return -1;
		}
		next(lx);
	} else if (lx->t == T_NUM) {
		struct where at = lx->at;

		if (term(ps, lx, &v) < 0)
			return -1;
		if (v < 1 || v > 4095) {
			report(ps, -EINVAL, &at, "errno %llu is out of range (1..4095)",
			       (unsigned long long)v);
			return -1;
		}
		*e = (int)v;
	} else {
		return EXPECTED(ps, lx, "an errno (EPERM, ENOSYS, ...)");
	}
	if (paren) {
		if (lx->t != T_RPAREN)
			return EXPECTED(ps, lx, "')'");
		next(lx);
	}
	return 0;
}

/* --- expressions --- */

static int arg_index(const struct lexer *lx)
{
	if (lx->t == T_IDENT && lx->len == 4 && !memcmp(lx->tok, "arg", 3) && lx->tok[3] >= '0' &&
	    lx->tok[3] <= '5')
		return lx->tok[3] - '0';
	return -1;
}

static int want_arg(struct parser *ps, struct lexer *lx, int *a)
{
	*a = arg_index(lx);
	if (*a < 0) {
		if (lx->t == T_IDENT && lx->len >= 3 && !memcmp(lx->tok, "arg", 3)) {
			report(ps, -EINVAL, &lx->at, "no argument '%.*s': system calls have arg0..arg5",
			       (int)lx->len, lx->tok);
			return -1;
		}
		return EXPECTED(ps, lx, "an argument (arg0..arg5)");
	}
	next(lx);
	return 0;
}

static struct policy_rule rule(int op, int arg)
{
	return (struct policy_rule){ .op = op, .arg = arg, .arg2 = POLICY_NOARG,
				     .carg = POLICY_NOARG };
}

/* fd_free(argN) or range_free(argN[, argM]): sandpit's own checks, which
 * a file may put on calls that have none. */
static int check_call(struct parser *ps, struct lexer *lx, struct policy_rule *r)
{
	int range = is_word(lx, "range_free"), a;

	next(lx);
	if (lx->t != T_LPAREN)
		return EXPECTED(ps, lx, "'('");
	next(lx);
	if (want_arg(ps, lx, &a) < 0)
		return -1;
	*r = rule(range ? RULE_RANGE_FREE : RULE_FD_FREE, a);
	r->err = range ? 0 : EBADF;
	if (range && lx->t == T_COMMA) {
		next(lx);
		if (want_arg(ps, lx, &r->arg2) < 0)
			return -1;
	}
	if (lx->t != T_RPAREN)
		return EXPECTED(ps, lx, "')'");
	next(lx);
	return 0;
}

/* argN in {a, b, ...}: one RULE_BITSET, the values within 64 of each other */
static int value_set(struct parser *ps, struct lexer *lx, int a, struct policy_rule *r)
{
	uint64_t v[64], lo = UINT64_MAX;
	struct where at = lx->at;
	size_t n = 0;

	next(lx);
	for (;;) {
		uint64_t x;

		if (n == 64) {
			report(ps, -EINVAL, &lx->at, "more than 64 values in a set");
			return -1;
		}
		if (constant(ps, lx, &x) < 0)
			return -1;
		v[n++] = x;
		if (x < lo)
			lo = x;
		if (lx->t == T_RBRACE)
			break;
		if (lx->t != T_COMMA)
			return EXPECTED(ps, lx, "',' or '}'");
		next(lx);
	}
	next(lx);
	*r = rule(RULE_BITSET, a);
	/* small values count from 0, so that the set reads as it is written */
	for (size_t i = 0; i < n; i++)
		if (v[i] >= 64)
			break;
		else if (i == n - 1)
			lo = 0;
	r->val = lo;
	for (size_t i = 0; i < n; i++) {
		if (v[i] - lo >= 64) {
			report(ps, -EINVAL, &at,
			       "the values of a set must lie within 64 of each other (%#llx and %#llx "
			       "do not)",
			       (unsigned long long)lo, (unsigned long long)v[i]);
			return -1;
		}
		r->mask |= 1ULL << (v[i] - lo);
	}
	return 0;
}

/* argN OP ... */
static int comparison(struct parser *ps, struct lexer *lx, struct policy_rule *r)
{
	struct where at;
	uint64_t m, v;
	int a;
	char b[48];

	if (is_word(lx, "fd_free") || is_word(lx, "range_free"))
		return check_call(ps, lx, r);
	if (want_arg(ps, lx, &a) < 0)
		return -1;
	at = lx->at;
	switch (lx->t) {
	case T_EQ:
		next(lx);
		if (lx->t == T_VAR) {
			if (lx->len != 4 || memcmp(lx->tok, "$pid", 4)) {
				report(ps, -EINVAL, &lx->at, "unknown variable '%.*s' (only $pid)",
				       (int)lx->len, lx->tok);
				return -1;
			}
			next(lx);
			*r = rule(RULE_SELF_PID, a);
			return 0;
		}
		if (constant(ps, lx, &v) < 0)
			return -1;
		*r = rule(RULE_MASKED_EQ, a);
		r->mask = ~0ULL;
		r->val = v;
		return 0;
	case T_NE:
		next(lx);
		if (lx->t == T_VAR) {
			report(ps, -EINVAL, &lx->at, "'!= %.*s' cannot be expressed; only '== $pid'",
			       (int)lx->len, lx->tok);
			return -1;
		}
		if (constant(ps, lx, &v) < 0)
			return -1;
		*r = rule(RULE_MASKED_NE, a);
		r->mask = ~0ULL;
		r->val = v;
		return 0;
	case T_AND:
		next(lx);
		if (constant(ps, lx, &m) < 0)
			return -1;
		if (lx->t != T_EQ && lx->t != T_NE) {
			/* minijail's "argN & MASK": some bit of MASK is set */
			*r = rule(RULE_MASKED_NE, a);
			r->mask = m;
			return 0;
		}
		at = lx->at;
		int ne = lx->t == T_NE;
		next(lx);
		if (constant(ps, lx, &v) < 0)
			return -1;
		if (v & ~m) {
			report(ps, -EINVAL, &at, "%#llx has bits outside the mask %#llx: always %s",
			       (unsigned long long)v, (unsigned long long)m, ne ? "true" : "false");
			return -1;
		}
		*r = rule(ne ? RULE_MASKED_NE : v ? RULE_MASKED_EQ : RULE_MASK_ZERO, a);
		r->mask = m;
		r->val = v;
		return 0;
	case T_LE:
	case T_LT: {
		int lt = lx->t == T_LT;

		next(lx);
		if (constant(ps, lx, &v) < 0)
			return -1;
		if (lt && v == 0) {
			report(ps, -EINVAL, &at, "arg%d < 0 is never true (arguments are unsigned)", a);
			return -1;
		}
		*r = rule(RULE_LE, a);
		r->val = lt ? v - 1 : v;
		return 0;
	}
	case T_GE:
	case T_GT:
		report(ps, -EINVAL, &at,
		       "'%.*s' cannot be expressed: compare with ==, !=, <=, <, a mask, or 'in'",
		       (int)lx->len, lx->tok);
		return -1;
	case T_IDENT:
		if (is_word(lx, "in")) {
			next(lx);
			if (lx->t == T_LBRACE)
				return value_set(ps, lx, a, r);
			/* minijail's "argN in MASK": no bit outside MASK */
			if (constant(ps, lx, &m) < 0)
				return -1;
			*r = rule(RULE_MASK_ZERO, a);
			r->mask = ~m;
			return 0;
		}
		break;
	default:
		break;
	}
	report(ps, -EINVAL, &lx->at, "expected ==, !=, <=, <, &, or 'in' after arg%d, found %s",
	       a, shown(lx, b, sizeof(b)));
	return -1;
}

/* [if argM & MASK then] comparison */
static int condition(struct parser *ps, struct lexer *lx, struct policy_rule *r)
{
	uint64_t cmask;
	int carg;

	if (lx->t == T_LPAREN) {
		int e;

		next(lx);
		e = nest_in(ps, lx) < 0 ? -1 : condition(ps, lx, r);
		lx->nest--;
		if (e < 0)
			return -1;
		if (lx->t != T_RPAREN)
			return EXPECTED(ps, lx, "')'");
		next(lx);
		return 0;
	}
	if (!is_word(lx, "if"))
		return comparison(ps, lx, r);
	next(lx);
	if (want_arg(ps, lx, &carg) < 0)
		return -1;
	if (lx->t != T_AND)
		return EXPECTED(ps, lx, "'&' (a condition is 'if argN & MASK then ...')");
	next(lx);
	if (constant(ps, lx, &cmask) < 0)
		return -1;
	if (!cmask) {
		report(ps, -EINVAL, &lx->at, "a condition with mask 0 never holds");
		return -1;
	}
	if (!is_word(lx, "then"))
		return EXPECTED(ps, lx, "'then'");
	next(lx);
	if (comparison(ps, lx, r) < 0)
		return -1;
	r->carg = carg;
	r->cmask = cmask;
	return 0;
}

static int same_rule(const struct policy_rule *x, const struct policy_rule *y)
{
	return x->op == y->op && x->arg == y->arg && x->arg2 == y->arg2 && x->carg == y->carg &&
	       x->mask == y->mask && x->val == y->val && x->cmask == y->cmask;
}

/* Two unconditional comparisons of one argument that no value passes both. */
static int contradict(const struct policy_rule *x, const struct policy_rule *y)
{
	if (x->carg != POLICY_NOARG || y->carg != POLICY_NOARG || x->arg != y->arg)
		return 0;
	if (x->op == RULE_MASKED_EQ && y->op == RULE_MASKED_EQ)
		return ((x->val ^ y->val) & x->mask & y->mask) != 0;
	if (x->op == RULE_MASKED_EQ && y->op == RULE_MASK_ZERO)
		return (x->val & y->mask) != 0;
	if (x->op == RULE_MASK_ZERO && y->op == RULE_MASKED_EQ)
		return (y->val & x->mask) != 0;
	return 0;
}

/* cond ('&&' cond)* */
static int expression(struct parser *ps, struct lexer *lx, struct policy_rule *rules, int *n,
		      struct where *at)
{
	for (;;) {
		struct where here = lx->at;
		struct policy_rule r;

		if (condition(ps, lx, &r) < 0)
			return -1;
		for (int i = 0; i < *n; i++)
			if (contradict(&rules[i], &r)) {
				report(ps, -EINVAL, &here,
				       "contradicts the comparison at column %d: the call could "
				       "never pass; deny it instead",
				       at[i].col);
				return -1;
			}
		if (*n >= POLICY_MAX_RULES) {
			report(ps, -E2BIG, &here, "more than %d comparisons", POLICY_MAX_RULES);
			return -1;
		}
		at[*n] = here;
		rules[(*n)++] = r;
		if (lx->t == T_OROR) {
			report(ps, -EINVAL, &lx->at,
			       "'||' cannot be expressed; for values of one argument use "
			       "'argN in {a, b}'");
			return -1;
		}
		if (lx->t != T_ANDAND)
			return 0;
		next(lx);
	}
}

/* --- what no policy can take away --- */

/* Whether rule r refuses every value v with (v & m) == g. */
static int refuses_all(const struct policy_rule *r, uint64_t m, uint64_t g)
{
	switch (r->op) {
	case RULE_BITSET:
		for (int d = 0; d < 64; d++)
			if ((r->mask >> d & 1) && ((r->val + (uint64_t)d) & m) == g)
				return 0;
		return 1;
	case RULE_MASKED_EQ: return ((r->val ^ g) & r->mask & m) != 0;
	case RULE_MASK_ZERO: return (g & r->mask & m) != 0;
	case RULE_MASKED_NE: return (r->mask & ~m) == 0 && (g & r->mask) == r->val;
	case RULE_LE: return g > r->val; /* g is the least such value */
	default: return 0;
	}
}

/* A guard "(a & m) != g" adds nothing when one of the file's rules already
 * refuses every value with (a & m) == g: then it is left out, and the
 * file's rule refuses those values (with the file's errno).  A conditional
 * rule counts when all those values meet its condition. */
static int guard_implied(const struct policy_rule *gd, const struct policy_rule *rules, int n)
{
	/* a guard "(a & m) == g" (a pointer that must be NULL): implied by a
	 * file's rule that fixes at least those bits to the same value */
	for (int i = 0; gd->op == RULE_MASKED_EQ && gd->carg == POLICY_NOARG && i < n; i++) {
		const struct policy_rule *r = &rules[i];

		if (r->arg == gd->arg && r->carg == POLICY_NOARG && r->op == RULE_MASKED_EQ &&
		    !(gd->mask & ~r->mask) && (r->val & gd->mask) == gd->val)
			return 1;
	}
	if (gd->op != RULE_MASKED_NE || gd->carg != POLICY_NOARG || (gd->val & ~gd->mask))
		return 0;
	for (int i = 0; i < n; i++) {
		const struct policy_rule *r = &rules[i];

		if (r->arg != gd->arg)
			continue;
		if (r->carg != POLICY_NOARG &&
		    (r->carg != gd->arg || !(gd->val & gd->mask & r->cmask)))
			continue;
		if (refuses_all(r, gd->mask, gd->val))
			return 1;
	}
	return 0;
}

/* An argument confined to listed values by an unconditional rule. */
static int confined(const struct policy_rule *rules, int n, int arg)
{
	for (int i = 0; i < n; i++) {
		const struct policy_rule *r = &rules[i];

		if (r->arg != arg || r->carg != POLICY_NOARG)
			continue;
		if (r->op == RULE_BITSET ||
		    (r->op == RULE_MASKED_EQ && (r->mask & 0xffffffffULL) == 0xffffffffULL))
			return 1;
	}
	return 0;
}

/* An argument an unconditional rule confines to P: == $pid, or == 0 where
 * 0 means P (the kernel reads a pid as an int). */
static int confined_to_self(const struct policy_rule *rules, int n, int arg, int zero_ok)
{
	for (int i = 0; i < n; i++) {
		const struct policy_rule *r = &rules[i];

		if (r->arg != arg || r->carg != POLICY_NOARG)
			continue;
		if (r->op == RULE_SELF_PID ||
		    (zero_ok && r->op == RULE_MASKED_EQ && (r->mask & 0xffffffffULL) == 0xffffffffULL &&
		     !(r->val & 0xffffffffULL)))
			return 1;
	}
	return 0;
}

/* An argument an unconditional rule makes 0 (NULL). */
static int forced_zero(const struct policy_rule *rules, int n, int arg)
{
	for (int i = 0; i < n; i++) {
		const struct policy_rule *r = &rules[i];

		if (r->arg == arg && r->carg == POLICY_NOARG && r->mask == ~0ULL &&
		    ((r->op == RULE_MASKED_EQ && !r->val) || r->op == RULE_MASK_ZERO))
			return 1;
	}
	return 0;
}

static const char *const action_names[] = {
	[A_ALLOW] = "allow", [A_DENY] = "deny",	      [A_KILL] = "kill",
	[A_TRAP] = "trap",   [A_PROCESS] = "process", [A_EMULATE] = "emulate",
};

/* Turns the action a line asks for into the model's class, guards added,
 * or says why it cannot be. */
static int resolve(struct parser *ps, struct line_call *c, int nr, int action,
		   const struct where *at, struct policy_rule *rules, int n)
{
	const struct policy_guard *g = policy_guard(nr);
	const char *name = c->name, *what = action_names[action];

	if (action == A_DENY || action == A_KILL) {
		c->cls = action == A_DENY ? POLICY_DENY : POLICY_KILL;
		return 0;
	}
	if (g && g->kind == GUARD_NEVER) {
		report(ps, -EPERM, at, "%s: '%s' refused, a policy may only deny or kill it: %s",
		       name, what, g->why);
		return -1;
	}
	if (action == A_PROCESS) {
		if (!g || g->kind != GUARD_NEEDS_B || !g->proc) {
			report(ps, -EINVAL, at,
			       "%s: 'process' refused: the trusted process has no check for it", name);
			return -1;
		}
		c->cls = POLICY_PROCESS;
		c->proc = g->proc;
		return 0;
	}
	if (g && g->kind == GUARD_NEEDS_B) {
		report(ps, -EPERM, at, "%s: '%s' refused: %s; %s", name, what, g->why,
		       g->proc ? "use 'process'" : "deny it");
		return -1;
	}
	if (action == A_EMULATE || (g && g->kind == GUARD_EMU)) {
		if (!g || g->kind != GUARD_EMU) {
			report(ps, -EINVAL, at, "%s: sandpit has no emulation of it", name);
			return -1;
		}
		if (action != A_EMULATE && !(action == A_ALLOW && g->allow_emulates)) {
			report(ps, -EPERM, at, "%s: '%s' refused: %s; use 'emulate'", name, what,
			       g->why);
			return -1;
		}
		c->cls = POLICY_EMU;
		c->err = g->emu;
		return 0;
	}
	/* allow or trap: sandpit's guards first, then the file's rules */
	c->nrules = 0;
	if (g && g->kind == GUARD_RULES) {
		for (int i = 0; i < g->nrules; i++)
			if (!guard_implied(&g->rules[i], rules, n))
				c->rules[c->nrules++] = g->rules[i];
		c->nguard = c->nrules;
		for (int a = 0; a < 6; a++) {
			int zero_ok = (g->self0_args >> a) & 1;

			if (!((g->self_args >> a) & 1) || confined_to_self(rules, n, a, zero_ok) ||
			    (g->query_arg != POLICY_NOARG && forced_zero(rules, n, g->query_arg)))
				continue;
			char query[32] = "";

			if (g->query_arg != POLICY_NOARG)
				snprintf(query, sizeof(query), " or make it a query (arg%d == 0)",
					 g->query_arg);
			report(ps, -EPERM, at,
			       "%s: '%s' refused: it acts on the process arg%d names, which could "
			       "be B; confine it to P (arg%d == %s)%s",
			       name, what, a, a,
			       zero_ok ? "0" : "$pid; 0 would name the thread that makes the call, T",
			       query);
			return -1;
		}
		if (g->restrict_arg != POLICY_NOARG && !confined(rules, n, g->restrict_arg)) {
			report(ps, -EPERM, at,
			       "%s: '%s' refused: it would pass any arg%d unchecked; list the "
			       "values it may take (arg%d in {...})",
			       name, what, g->restrict_arg, g->restrict_arg);
			return -1;
		}
	}
	for (int i = 0; i < n; i++) {
		int dup = 0;

		for (int j = 0; j < c->nrules && !dup; j++)
			dup = same_rule(&c->rules[j], &rules[i]);
		if (dup)
			continue;
		if (c->nrules >= POLICY_MAX_RULES) {
			report(ps, -E2BIG, at,
			       "%s: more than %d rules, with the %d sandpit adds to keep U away "
			       "from its memory and descriptors",
			       name, POLICY_MAX_RULES, g ? g->nrules : 0);
			return -1;
		}
		c->rules[c->nrules++] = rules[i];
	}
	if (action == A_ALLOW && !c->nrules)
		c->cls = policy_strict_allows(nr) ? POLICY_NATIVE : POLICY_ALLOW;
	else
		c->cls = POLICY_THREAD;
	return 0;
}

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
	struct line_call c = { .given = 1, .at = lx->at, .err = EPERM };
	char msg[256];
	int nr, action, n = 0;

	snprintf(c.name, sizeof(c.name), "%.*s", (int)(lx->len < MAX_NAME ? lx->len : MAX_NAME - 1),
		 lx->tok);
	nr = lx->len < MAX_NAME ? policy_syscall_nr(c.name, msg, sizeof(msg)) : -ENOENT;
	if (nr < 0) {
		if (lx->len >= MAX_NAME)
			snprintf(msg, sizeof(msg), "unknown system call '%.*s...'", 20, lx->tok);
		report(ps, nr, &name_at, "%s", msg);
		return;
	}
	next(lx);
	if (lx->t != T_COLON) {
		EXPECTED(ps, lx, "':' after the system call's name");
		return;
	}
	next(lx);
	act_at = lx->at;
	if (is_word(lx, "allow") || (lx->t == T_NUM && lx->len == 1 && *lx->tok == '1')) {
		action = A_ALLOW;
		next(lx);
	} else if (is_word(lx, "deny") || is_word(lx, "return")) {
		action = A_DENY;
		if (errno_spec(ps, lx, &c.err) < 0)
			return;
	} else if (is_word(lx, "kill")) {
		action = A_KILL;
		c.err = 0;
		next(lx);
	} else if (is_word(lx, "process") || is_word(lx, "emulate")) {
		action = is_word(lx, "process") ? A_PROCESS : A_EMULATE;
		next(lx);
	} else {
		action = A_TRAP;
		if (is_word(lx, "trap"))
			next(lx);
		if (lx->t != T_END && lx->t != T_SEMI) {
			if (lx->t != T_IDENT && lx->t != T_LPAREN) {
				EXPECTED(ps, lx,
					 "an action (allow, deny(ERRNO), kill, trap, process, "
					 "emulate) or an expression");
				return;
			}
			if (arg_index(lx) < 0 && !is_word(lx, "if") && !is_word(lx, "fd_free") &&
			    !is_word(lx, "range_free") && lx->t != T_LPAREN &&
			    (lx->len < 3 || memcmp(lx->tok, "arg", 3))) {
				EXPECTED(ps, lx,
					 "an action (allow, deny(ERRNO), kill, trap, process, "
					 "emulate) or an expression");
				return;
			}
			if (expression(ps, lx, rules, &n, rat) < 0)
				return;
		}
		if (lx->t == T_SEMI) {
			next(lx);
			if (!is_word(lx, "deny") && !is_word(lx, "return")) {
				EXPECTED(ps, lx, "deny(ERRNO) or return ERRNO after ';'");
				return;
			}
			if (errno_spec(ps, lx, &c.err) < 0)
				return;
		}
	}
	if (at_end(ps, lx) < 0)
		return;
	if (ps->calls[nr].given) {
		const struct where *w = &ps->calls[nr].at;

		report(ps, -EEXIST, &name_at, "'%s' is already given at %s:%d", c.name, w->file,
		       w->line);
		return;
	}
	if (resolve(ps, &c, nr, action, &act_at, rules, n) < 0)
		return;
	ps->calls[nr] = c;
	ps->given[ps->ngiven++] = nr;
}

static void default_line(struct parser *ps, struct lexer *lx)
{
	struct where at = lx->at, act_at;
	int cls, e = 0;

	next(lx);
	if (lx->t != T_COLON) {
		EXPECTED(ps, lx, "':' after 'default'");
		return;
	}
	next(lx);
	act_at = lx->at;
	if (is_word(lx, "kill")) {
		cls = POLICY_KILL;
		next(lx);
	} else if (is_word(lx, "deny") || is_word(lx, "return")) {
		cls = POLICY_DENY;
		if (errno_spec(ps, lx, &e) < 0)
			return;
	} else {
		char b[48];

		report(ps, -EINVAL, &act_at,
		       "the default may only be deny(ERRNO) or kill, not %s: a call that no "
		       "line names is never carried out",
		       shown(lx, b, sizeof(b)));
		return;
	}
	if (at_end(ps, lx) < 0)
		return;
	if (ps->dflt_given) {
		report(ps, -EEXIST, &at, "the default is already given at %s:%d", ps->dflt_at.file,
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
		report(ps, -EINVAL, at, "expected %s", what);
		return -1;
	}
	if (n >= outlen) {
		report(ps, -ENAMETOOLONG, at, "%s is too long", what);
		return -1;
	}
	memcpy(out, p, n);
	out[n] = 0;
	lx->s = q;
	next(lx);
	if (lx->t != T_END) {
		report(ps, -EINVAL, &lx->at, "expected end of line after %s (paths cannot hold "
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

	next(lx);
	if (!is_word(lx, "read") && !is_word(lx, "write") && !is_word(lx, "deny")) {
		EXPECTED(ps, lx, "'read', 'write' or 'deny' after 'path'");
		return;
	}
	writable = is_word(lx, "write");
	deny = is_word(lx, "deny");
	if (word(ps, lx, path, sizeof(path), &at, deny ? "a path pattern" : "a path") < 0)
		return;
	if (path[0] != '/') {
		report(ps, -EINVAL, &at, "'%s' is not an absolute path", path);
		return;
	}
	char norm[PATH_MAX];
	const char *why = deny ? policy_deny_pattern(path, norm, sizeof(norm)) : NULL;
	if (why) {
		report(ps, -EINVAL, &at, "the pattern '%s' %s", path, why);
		return;
	}
	if (ps->ngrants == ps->grants_cap) {
		size_t cap = ps->grants_cap ? 2 * ps->grants_cap : 16;
		struct grant *g = realloc(ps->grants, cap * sizeof(*g));

		if (!g) {
			report(ps, -ENOMEM, &at, "out of memory");
			return;
		}
		ps->grants = g;
		ps->grants_cap = cap;
	}
	ps->grants[ps->ngrants].path = strdup(path);
	if (!ps->grants[ps->ngrants].path) {
		report(ps, -ENOMEM, &at, "out of memory");
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
	report(ps, -E2BIG, at, "the policy and its includes read more than %zu %s (in %s)", max, what,
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
			report(ps, -ENAMETOOLONG, &at, "cannot include '%s': name too long", file);
			return;
		}
	}
	ps->files++;
	if (over_budget(ps, src, &at))
		return;
	if (depth + 1 >= MAX_DEPTH) {
		report(ps, -ELOOP, &at, "cannot include '%s': includes nest deeper than %d", path,
		       MAX_DEPTH);
		return;
	}
	e = read_file(path, &text, &len, &st);
	if (e < 0) {
		report(ps, e, &at, "cannot include '%s': %s", path, file_error(e));
		return;
	}
	for (const struct source *s = src; s; s = s->parent)
		if (s->has_id && s->dev == st.st_dev && s->ino == st.st_ino) {
			report(ps, -ELOOP, &at, "include cycle: '%s' is already being read", path);
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
		report(ps, -ENOMEM, &at, "out of memory");
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
		report(ps, -EINVAL, &lx.at, "NUL byte in the line");
		return;
	}
	next(&lx);
	if (lx.t == T_END)
		return;
	if (lx.t == T_BAD && *lx.tok == '@') {
		struct where at = lx.at;
		const char *p = lx.s;

		while (p < end && is_ident(*p, 0))
			p++;
		if (p - lx.s == 7 && !memcmp(lx.s, "include", 7)) {
			lx.s = p;
			include_line(ps, &lx, src, depth);
		} else {
			report(ps, -EINVAL, &at, "unknown directive '@%.*s' (only @include)",
			       (int)(p - lx.s), lx.s);
		}
		return;
	}
	if (lx.t != T_IDENT) {
		EXPECTED(ps, &lx, "a system call's name, 'path', 'default' or '@include'");
		return;
	}
	if (is_word(&lx, "path") && lx.s < end && (*lx.s == ' ' || *lx.s == '\t'))
		path_line(ps, &lx);
	else if (is_word(&lx, "default"))
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
		report(ps, rc, &(struct where){ "policy", 0, 0 }, "out of memory");
		return rc;
	}
	qsort(ps->given, (size_t)ps->ngiven, sizeof(ps->given[0]), by_number);
	for (int k = 0; k < ps->ngiven; k++) {
		const struct line_call *c = &ps->calls[ps->given[k]];

		total += c->nrules;
		if (total > POLICY_MAX_TOTAL_RULES) {
			report(ps, -E2BIG, &c->at,
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
			report(ps, rc, &c->at, "%s", msg);
	}
	if (ps->dflt_given && (rc = policy_set_default(p, ps->dflt_cls, ps->dflt_err, msg,
						       sizeof(msg))) < 0)
		report(ps, rc, &ps->dflt_at, "%s", msg);
	else if (ps->dflt_given && policy_set_source(p, POLICY_SRC_DEFAULT, ps->dflt_at.file,
						     ps->dflt_at.line, 0) < 0)
		report(ps, -ENOMEM, &ps->dflt_at, "out of memory");
	for (size_t i = 0; i < ps->ngrants; i++)
		if ((rc = ps->grants[i].deny
				  ? policy_deny(p, ps->grants[i].path, msg, sizeof(msg))
				  : policy_grant(p, ps->grants[i].path, ps->grants[i].writable, msg,
						 sizeof(msg))) < 0 ||
		    (!ps->grants[i].deny &&
		     (rc = policy_set_source(p, POLICY_SRC_GRANTS, ps->grants[i].at.file,
					     ps->grants[i].at.line, 0)) < 0))
			report(ps, rc, &ps->grants[i].at, "%s", rc == -ENOMEM ? "out of memory" : msg);
	if (ps->nerrors) {
		policy_free(p);
		return ps->rc;
	}
	*out = p;
	return 0;
}

static void parser_free(struct parser *ps)
{
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

int policy_parse_file(const char *path, struct policy **out, policy_report_fn *rep, void *ctx,
		      char *err, size_t errlen)
{
	struct stat st;
	char *text;
	size_t len;
	int rc;

	*out = NULL;
	rc = read_file(path, &text, &len, &st);
	if (rc < 0) {
		char msg[PATH_MAX + 64];

		snprintf(msg, sizeof(msg), "%s: cannot read the policy: %s", path, file_error(rc));
		if (err && errlen)
			snprintf(err, errlen, "%s", msg);
		if (rep)
			rep(ctx, msg);
		return rc;
	}
	struct source src = { .name = path, .dev = st.st_dev, .ino = st.st_ino, .has_id = 1 };
	if (policy_text_is_minijail(text, len)) /* policy/minijail.c */
		rc = policy_parse_minijail(path, text, len, out, rep, NULL, ctx, err, errlen);
	else
		rc = parse(&src, text, len, out, rep, ctx, err, errlen);
	free(text);
	return rc;
}

int policy_read_file(const char *path, char **text, size_t *len)
{
	struct stat st;

	return read_file(path, text, len, &st);
}

const char *policy_file_error(int e)
{
	return file_error(e);
}

static int add_grants(struct policy *p, const char *const *allow_read,
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

int policy_new_file(struct policy **out, const char *path, const char *const *allow_read,
		    const char *const *allow_write, char *err, size_t errlen)
{
	int rc = policy_parse_file(path, out, NULL, NULL, err, errlen);

	if (rc == 0 && (rc = add_grants(*out, allow_read, allow_write, err, errlen)) < 0) {
		policy_free(*out);
		*out = NULL;
	}
	return rc;
}

/* The built-in default: policy/default.policy, embedded by
 * policy/default_policy.S. */
extern const char sandpit_default_policy[];
extern const uint64_t sandpit_default_policy_len;

int policy_new_default(struct policy **out, const char *const *allow_read,
		       const char *const *allow_write, char *err, size_t errlen)
{
	int rc = policy_parse_text("policy/default.policy", sandpit_default_policy,
				   (size_t)sandpit_default_policy_len,
				   out, NULL, NULL, err, errlen);

	if (rc == 0 && (rc = add_grants(*out, allow_read, allow_write, err, errlen)) < 0) {
		policy_free(*out);
		*out = NULL;
	}
	return rc;
}
