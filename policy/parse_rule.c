/* Policy files, one line's meaning: its register rules (comparisons, value
 * sets, conditions, '&&') and the action it asks for, turned into the
 * model's class with the guards no policy can take away (policy/guard.c)
 * added or the line refused. */
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

#include "policy/parse_rule.h"

/* --- expressions --- */

int parse_arg_index(const struct lexer *lx)
{
	if (lx->t == T_IDENT && lx->len == 4 && !memcmp(lx->tok, "arg", 3) && lx->tok[3] >= '0' &&
	    lx->tok[3] <= '5')
		return lx->tok[3] - '0';
	return -1;
}

static int want_arg(struct parser *ps, struct lexer *lx, int *a)
{
	*a = parse_arg_index(lx);
	if (*a < 0) {
		if (lx->t == T_IDENT && lx->len >= 3 && !memcmp(lx->tok, "arg", 3)) {
			parse_report(ps, -EINVAL, &lx->at, "no argument '%.*s': system calls have arg0..arg5",
			       (int)lx->len, lx->tok);
			return -1;
		}
		return EXPECTED(ps, lx, "an argument (arg0..arg5)");
	}
	parse_next(lx);
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
	int range = parse_is_word(lx, "range_free"), a;

	parse_next(lx);
	if (lx->t != T_LPAREN)
		return EXPECTED(ps, lx, "'('");
	parse_next(lx);
	if (want_arg(ps, lx, &a) < 0)
		return -1;
	*r = rule(range ? RULE_RANGE_FREE : RULE_FD_FREE, a);
	r->err = range ? 0 : EBADF;
	if (range && lx->t == T_COMMA) {
		parse_next(lx);
		if (want_arg(ps, lx, &r->arg2) < 0)
			return -1;
	}
	if (lx->t != T_RPAREN)
		return EXPECTED(ps, lx, "')'");
	parse_next(lx);
	return 0;
}

/* argN in {a, b, ...}: one RULE_BITSET, the values within 64 of each other */
static int value_set(struct parser *ps, struct lexer *lx, int a, struct policy_rule *r)
{
	uint64_t v[64], lo = UINT64_MAX;
	struct where at = lx->at;
	size_t n = 0;

	parse_next(lx);
	for (;;) {
		uint64_t x;

		if (n == 64) {
			parse_report(ps, -EINVAL, &lx->at, "more than 64 values in a set");
			return -1;
		}
		if (parse_constant(ps, lx, &x) < 0)
			return -1;
		v[n++] = x;
		if (x < lo)
			lo = x;
		if (lx->t == T_RBRACE)
			break;
		if (lx->t != T_COMMA)
			return EXPECTED(ps, lx, "',' or '}'");
		parse_next(lx);
	}
	parse_next(lx);
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
			parse_report(ps, -EINVAL, &at,
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

	if (parse_is_word(lx, "fd_free") || parse_is_word(lx, "range_free"))
		return check_call(ps, lx, r);
	if (want_arg(ps, lx, &a) < 0)
		return -1;
	at = lx->at;
	switch (lx->t) {
	case T_EQ:
		parse_next(lx);
		if (lx->t == T_VAR) {
			if (lx->len != 4 || memcmp(lx->tok, "$pid", 4)) {
				parse_report(ps, -EINVAL, &lx->at, "unknown variable '%.*s' (only $pid)",
				       (int)lx->len, lx->tok);
				return -1;
			}
			parse_next(lx);
			*r = rule(RULE_SELF_PID, a);
			return 0;
		}
		if (parse_constant(ps, lx, &v) < 0)
			return -1;
		*r = rule(RULE_MASKED_EQ, a);
		r->mask = ~0ULL;
		r->val = v;
		return 0;
	case T_NE:
		parse_next(lx);
		if (lx->t == T_VAR) {
			parse_report(ps, -EINVAL, &lx->at, "'!= %.*s' cannot be expressed; only '== $pid'",
			       (int)lx->len, lx->tok);
			return -1;
		}
		if (parse_constant(ps, lx, &v) < 0)
			return -1;
		*r = rule(RULE_MASKED_NE, a);
		r->mask = ~0ULL;
		r->val = v;
		return 0;
	case T_AND:
		parse_next(lx);
		if (parse_constant(ps, lx, &m) < 0)
			return -1;
		if (lx->t != T_EQ && lx->t != T_NE) {
			/* minijail's "argN & MASK": some bit of MASK is set */
			*r = rule(RULE_MASKED_NE, a);
			r->mask = m;
			return 0;
		}
		at = lx->at;
		int ne = lx->t == T_NE;
		parse_next(lx);
		if (parse_constant(ps, lx, &v) < 0)
			return -1;
		if (v & ~m) {
			parse_report(ps, -EINVAL, &at, "%#llx has bits outside the mask %#llx: always %s",
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

		parse_next(lx);
		if (parse_constant(ps, lx, &v) < 0)
			return -1;
		if (lt && v == 0) {
			parse_report(ps, -EINVAL, &at, "arg%d < 0 is never true (arguments are unsigned)", a);
			return -1;
		}
		*r = rule(RULE_LE, a);
		r->val = lt ? v - 1 : v;
		return 0;
	}
	case T_GE:
	case T_GT:
		parse_report(ps, -EINVAL, &at,
		       "'%.*s' cannot be expressed: compare with ==, !=, <=, <, a mask, or 'in'",
		       (int)lx->len, lx->tok);
		return -1;
	case T_IDENT:
		if (parse_is_word(lx, "in")) {
			parse_next(lx);
			if (lx->t == T_LBRACE)
				return value_set(ps, lx, a, r);
			/* minijail's "argN in MASK": no bit outside MASK */
			if (parse_constant(ps, lx, &m) < 0)
				return -1;
			*r = rule(RULE_MASK_ZERO, a);
			r->mask = ~m;
			return 0;
		}
		break;
	default:
		break;
	}
	parse_report(ps, -EINVAL, &lx->at, "expected ==, !=, <=, <, &, or 'in' after arg%d, found %s",
	       a, parse_shown(lx, b, sizeof(b)));
	return -1;
}

/* [if argM & MASK then] comparison */
static int condition(struct parser *ps, struct lexer *lx, struct policy_rule *r)
{
	uint64_t cmask;
	int carg;

	if (lx->t == T_LPAREN) {
		int e;

		parse_next(lx);
		e = parse_nest_in(ps, lx) < 0 ? -1 : condition(ps, lx, r);
		lx->nest--;
		if (e < 0)
			return -1;
		if (lx->t != T_RPAREN)
			return EXPECTED(ps, lx, "')'");
		parse_next(lx);
		return 0;
	}
	if (!parse_is_word(lx, "if"))
		return comparison(ps, lx, r);
	parse_next(lx);
	if (want_arg(ps, lx, &carg) < 0)
		return -1;
	if (lx->t != T_AND)
		return EXPECTED(ps, lx, "'&' (a condition is 'if argN & MASK then ...')");
	parse_next(lx);
	if (parse_constant(ps, lx, &cmask) < 0)
		return -1;
	if (!cmask) {
		parse_report(ps, -EINVAL, &lx->at, "a condition with mask 0 never holds");
		return -1;
	}
	if (!parse_is_word(lx, "then"))
		return EXPECTED(ps, lx, "'then'");
	parse_next(lx);
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
int parse_expression(struct parser *ps, struct lexer *lx, struct policy_rule *rules, int *n,
		      struct where *at)
{
	for (;;) {
		struct where here = lx->at;
		struct policy_rule r;

		if (condition(ps, lx, &r) < 0)
			return -1;
		for (int i = 0; i < *n; i++)
			if (contradict(&rules[i], &r)) {
				parse_report(ps, -EINVAL, &here,
				       "contradicts the comparison at column %d: the call could "
				       "never pass; deny it instead",
				       at[i].col);
				return -1;
			}
		if (*n >= POLICY_MAX_RULES) {
			parse_report(ps, -E2BIG, &here, "more than %d comparisons", POLICY_MAX_RULES);
			return -1;
		}
		at[*n] = here;
		rules[(*n)++] = r;
		if (lx->t == T_OROR) {
			parse_report(ps, -EINVAL, &lx->at,
			       "'||' cannot be expressed; for values of one argument use "
			       "'argN in {a, b}'");
			return -1;
		}
		if (lx->t != T_ANDAND)
			return 0;
		parse_next(lx);
	}
}


static const char *const action_names[] = {
	[A_ALLOW] = "allow", [A_DENY] = "deny",	      [A_KILL] = "kill",
	[A_TRAP] = "trap",   [A_PROCESS] = "process", [A_EMULATE] = "emulate",
};

/* Turns the action a line asks for into the model's class, guards added,
 * or says why it cannot be. */
int parse_resolve(struct parser *ps, struct line_call *c, int nr, int action,
		   const struct where *at, struct policy_rule *rules, int n)
{
	const struct policy_guard *g = policy_guard(nr);
	const char *name = c->name, *what = action_names[action];

	if (action == A_DENY || action == A_KILL) {
		c->cls = action == A_DENY ? POLICY_DENY : POLICY_KILL;
		return 0;
	}
	if (g && g->kind == GUARD_NEVER) {
		parse_report(ps, -EPERM, at, "%s: '%s' refused, a policy may only deny or kill it: %s",
		       name, what, g->why);
		return -1;
	}
	if (action == A_PROCESS) {
		if (!g || (g->kind != GUARD_NEEDS_B && g->kind != GUARD_RULES) || !g->proc) {
			parse_report(ps, -EINVAL, at,
			       "%s: 'process' refused: the trusted process has no check for it", name);
			return -1;
		}
		c->cls = POLICY_PROCESS;
		c->proc = g->proc;
		return 0;
	}
	if (g && g->kind == GUARD_NEEDS_B) {
		parse_report(ps, -EPERM, at, "%s: '%s' refused: %s; %s", name, what, g->why,
		       g->proc ? "use 'process'" : "deny it");
		return -1;
	}
	if (action == A_EMULATE || (g && g->kind == GUARD_EMU)) {
		if (!g || g->kind != GUARD_EMU) {
			parse_report(ps, -EINVAL, at, "%s: sandpit has no emulation of it", name);
			return -1;
		}
		if (action != A_EMULATE && !(action == A_ALLOW && g->allow_emulates)) {
			parse_report(ps, -EPERM, at, "%s: '%s' refused: %s; use 'emulate'", name, what,
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
			if (!policy_guard_implied(&g->rules[i], rules, n))
				c->rules[c->nrules++] = g->rules[i];
		c->nguard = c->nrules;
		for (int a = 0; a < 6; a++) {
			int zero_ok = (g->self0_args >> a) & 1;

			if (!((g->self_args >> a) & 1) || policy_rules_confine_to_self(rules, n, a, zero_ok) ||
			    (g->query_arg != POLICY_NOARG && policy_rules_force_zero(rules, n, g->query_arg)))
				continue;
			char query[32] = "";

			if (g->query_arg != POLICY_NOARG)
				snprintf(query, sizeof(query), " or make it a query (arg%d == 0)",
					 g->query_arg);
			parse_report(ps, -EPERM, at,
			       "%s: '%s' refused: it acts on the process arg%d names, which could "
			       "be B; confine it to P (arg%d == %s)%s",
			       name, what, a, a,
			       zero_ok ? "0" : "$pid; 0 would name the thread that makes the call, T",
			       query);
			return -1;
		}
		if (g->restrict_arg != POLICY_NOARG && !policy_rules_confine(rules, n, g->restrict_arg)) {
			parse_report(ps, -EPERM, at,
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
			parse_report(ps, -E2BIG, at,
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

