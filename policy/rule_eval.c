/* The register rules as the trusted thread runs them (policy/rule_eval.h):
 * each step below is a step of trusted_thread.S's .Lrules, in its order,
 * with its widths (32-bit descriptors, pids and tids; 64-bit the rest). */
#include <errno.h>

#include "policy/rule_eval.h"

/* ARG: argument i, or no argument at all for an index beyond 5 (a corrupt
 * table), which fails the rule */
static int arg(const uint64_t a[6], unsigned i, uint64_t *v)
{
	if (i > 5)
		return 0;
	*v = a[i];
	return 1;
}

/* .Lop_range_free: [v, v + len) rounded out to pages misses every range;
 * no length argument, or a length of 0, is one byte; a range that wraps
 * around fails */
static int range_free(uint64_t v, uint64_t len, const struct rule_world *w)
{
	uint64_t lo, hi;

	if (!len)
		len = 1;
	if (__builtin_add_overflow(v, len, &hi) || __builtin_add_overflow(hi, 0xfff, &hi))
		return RULE_FAIL;
	hi &= ~0xfffULL;
	lo = v & ~0xfffULL;
	if (!w->t_facts)
		return RULE_UNKNOWN;
	for (size_t i = 0; i < w->nranges; i++)
		if (lo < w->ranges[i].hi && hi > w->ranges[i].lo)
			return RULE_FAIL;
	return RULE_PASS;
}

/* .Lop_u_tid: a tid <= 0 is the kernel's to refuse (EINVAL); any other
 * must be one of the program's threads that B knows */
static int u_tid(uint64_t v, const struct rule_world *w)
{
	if ((int32_t)v <= 0)
		return RULE_PASS;
	if (!w->t_facts)
		return RULE_UNKNOWN;
	for (size_t i = 0; i < w->ntids; i++)
		if ((int32_t)v == w->tids[i])
			return RULE_PASS;
	return RULE_FAIL;
}

int tt_rule_check(const struct tt_rule *r, const uint64_t a[6], const struct rule_world *w)
{
	uint64_t v, c, len = 0, d;

	/* the condition first: it holds when (a[carg] & cmask) != 0 */
	if (r->carg != TT_NOARG) {
		if (!arg(a, r->carg, &c))
			return RULE_FAIL;
		if (!(c & r->cmask))
			return RULE_PASS;
	}
	if (!arg(a, r->arg, &v))
		return RULE_FAIL;
	switch (r->op) {
	case TR_MASK_ZERO: return (v & r->mask) == 0;
	case TR_MASKED_EQ: return (v & r->mask) == r->val;
	case TR_MASKED_NE: return (v & r->mask) != r->val;
	case TR_LE: return v <= r->val;
	case TR_BITSET:
		d = v - r->val;
		return d <= 63 && ((r->mask >> d) & 1);
	case TR_FD_FREE:
		return (int32_t)v < w->rt.fd_lo || (int32_t)v > w->rt.fd_hi;
	case TR_SELF_PID:
		return (uint32_t)v == (uint32_t)w->rt.pid;
	case TR_U_TID:
		return u_tid(v, w);
	case TR_RANGE_FREE:
		if (r->arg2 != TT_NOARG && !arg(a, r->arg2, &len))
			return RULE_FAIL;
		return range_free(v, len, w);
	default: /* an op T does not know fails */
		return RULE_FAIL;
	}
}

long tt_answer(const struct tt_table *t, long nr, const uint64_t a[6], const struct rule_world *w)
{
	const struct tt_entry *e;

	if (nr < 0 || nr >= TT_MAX_NR)
		return -ENOSYS;
	e = &t->entries[nr];
	switch (e->cls) {
	case TT_ALLOW: return TT_ANS_EXEC;
	case TT_PROCESS: return TT_ANS_B;
	case TT_EMU: return TT_ANS_EMU;
	case TT_KILL: return TT_ANS_KILL;
	case TT_DENY: return -e->err;
	case TT_THREAD: break;
	default: return -ENOSYS; /* TT_NATIVE never reaches T: U makes it */
	}
	if (e->first >= TT_MAX_RULES || e->first + e->nrules > TT_MAX_RULES)
		return -ENOSYS;
	for (int i = e->first; i < e->first + e->nrules; i++) {
		int ok = tt_rule_check(&t->rules[i], a, w);

		if (ok == RULE_UNKNOWN)
			return TT_ANS_UNKNOWN;
		if (ok == RULE_FAIL)
			return -t->rules[i].err;
	}
	return TT_ANS_EXEC;
}

int policy_rule_check(const struct policy_rule *r, int call_err, const uint64_t a[6],
		      const struct rule_world *w)
{
	struct tt_rule t;

	policy_table_rule(r, call_err, &t);
	return tt_rule_check(&t, a, w);
}

int policy_call_check(const struct policy_call *c, const uint64_t a[6], const struct rule_world *w,
		      int *err)
{
	for (int i = 0; i < c->nrules; i++) {
		struct tt_rule t;
		int ok;

		policy_table_rule(&c->rules[i], c->err, &t);
		ok = tt_rule_check(&t, a, w);
		if (ok == RULE_FAIL)
			*err = t.err;
		if (ok != RULE_PASS)
			return ok;
	}
	return RULE_PASS;
}

int rule_needs_t(int op)
{
	return op == RULE_RANGE_FREE || op == RULE_U_TID;
}
