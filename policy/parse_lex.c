/* Policy files, the smallest pieces: error messages (each with FILE:LINE:COL),
 * the tokens of one line, and the values in it (numbers, named constants,
 * '|', '-', '~', errnos). */
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

void parse_report(struct parser *ps, int rc, const struct where *at, const char *fmt, ...)
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

int parse_is_ident(int c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

void parse_next(struct lexer *lx)
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
	if (parse_is_ident(*p, 1) || (*p == '$' && p + 1 < lx->end && parse_is_ident(p[1], 1))) {
		const char *q = p + 1;

		while (q < lx->end && parse_is_ident(*q, 0))
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
		for (; q < lx->end && (isxdigit((unsigned char)*q) || parse_is_ident(*q, 0)); q++) {
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

int parse_is_word(const struct lexer *lx, const char *w)
{
	return lx->t == T_IDENT && lx->len == strlen(w) && !memcmp(lx->tok, w, lx->len);
}

/* What the token looks like in a message. */
const char *parse_shown(const struct lexer *lx, char *buf, size_t n)
{
	if (lx->t == T_END)
		return "end of line";
	snprintf(buf, n, "'%.*s'", (int)(lx->len > 40 ? 40 : lx->len), lx->tok);
	return buf;
}

/* --- values --- */

/* One more level of '(', '-' or '~': refused past MAX_NEST, so that no
 * line can recurse the parser off its stack. */
int parse_nest_in(struct parser *ps, struct lexer *lx)
{
	if (++lx->nest <= MAX_NEST)
		return 0;
	parse_report(ps, -EINVAL, &lx->at, "nested deeper than %d levels", MAX_NEST);
	return -1;
}

static int term_nested(struct parser *ps, struct lexer *lx, uint64_t *v);

static int term(struct parser *ps, struct lexer *lx, uint64_t *v)
{
	int r;

	if (lx->t != T_NOT && lx->t != T_MINUS && lx->t != T_LPAREN)
		return term_nested(ps, lx, v);
	r = parse_nest_in(ps, lx) < 0 ? -1 : term_nested(ps, lx, v);
	lx->nest--;
	return r;
}

static int term_nested(struct parser *ps, struct lexer *lx, uint64_t *v)
{
	if (lx->t == T_NOT || lx->t == T_MINUS) {
		enum tok op = lx->t;

		parse_next(lx);
		if (term(ps, lx, v) < 0)
			return -1;
		*v = op == T_NOT ? ~*v : -*v;
		return 0;
	}
	if (lx->t == T_LPAREN) {
		parse_next(lx);
		if (parse_constant(ps, lx, v) < 0)
			return -1;
		if (lx->t != T_RPAREN)
			return EXPECTED(ps, lx, "')'");
		parse_next(lx);
		return 0;
	}
	if (lx->t == T_NUM) {
		if (lx->num_bad) {
			parse_report(ps, -EINVAL, &lx->at, "bad number '%.*s'", (int)lx->len, lx->tok);
			return -1;
		}
		*v = lx->num;
		parse_next(lx);
		return 0;
	}
	if (lx->t == T_IDENT) {
		if (policy_constant(lx->tok, lx->len, v) < 0) {
			parse_report(ps, -EINVAL, &lx->at, "unknown constant '%.*s'", (int)lx->len, lx->tok);
			return -1;
		}
		parse_next(lx);
		return 0;
	}
	return EXPECTED(ps, lx, "a number or a constant");
}

/* term ('|' term)* */
int parse_constant(struct parser *ps, struct lexer *lx, uint64_t *v)
{
	uint64_t t;

	if (term(ps, lx, v) < 0)
		return -1;
	while (lx->t == T_OR) {
		parse_next(lx);
		if (term(ps, lx, &t) < 0)
			return -1;
		*v |= t;
	}
	return 0;
}

/* deny(ERRNO) or return ERRNO; the lexer is on 'deny' or 'return' */
int parse_errno_spec(struct parser *ps, struct lexer *lx, int *e)
{
	int paren = parse_is_word(lx, "deny");
	uint64_t v;

	parse_next(lx);
	if (paren) {
		if (lx->t != T_LPAREN)
			return EXPECTED(ps, lx, "'(' and an errno");
		parse_next(lx);
	}
	if (lx->t == T_IDENT) {
		*e = policy_errno(lx->tok, lx->len);
		if (*e < 0) {
			parse_report(ps, -EINVAL, &lx->at, "unknown errno '%.*s'", (int)lx->len, lx->tok);
			return -1;
		}
		parse_next(lx);
	} else if (lx->t == T_NUM) {
		struct where at = lx->at;

		if (term(ps, lx, &v) < 0)
			return -1;
		if (v < 1 || v > 4095) {
			parse_report(ps, -EINVAL, &at, "errno %llu is out of range (1..4095)",
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
		parse_next(lx);
	}
	return 0;
}

