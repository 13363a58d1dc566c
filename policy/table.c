/* Back end: the policy model compiled into the T table (policy/t_table.h). */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "policy/t_table.h"

/* the table has an entry for every number the model can give a default */
_Static_assert(TT_MAX_NR == POLICY_DEFAULT_NR, "T table and model disagree on the numbers");
_Static_assert(TT_MAX_RULES == POLICY_MAX_TOTAL_RULES, "T table and model disagree on how many rules a policy has");

static const unsigned char tt_class[] = {
	[POLICY_DENY] = TT_DENY,	 [POLICY_ALLOW] = TT_ALLOW, [POLICY_THREAD] = TT_THREAD,
	[POLICY_PROCESS] = TT_PROCESS, [POLICY_KILL] = TT_KILL,   [POLICY_EMU] = TT_EMU,
	[POLICY_NATIVE] = TT_NATIVE,
};

static const unsigned char tt_op[] = {
	[RULE_MASK_ZERO] = TR_MASK_ZERO,   [RULE_MASKED_EQ] = TR_MASKED_EQ,
	[RULE_MASKED_NE] = TR_MASKED_NE,   [RULE_FD_FREE] = TR_FD_FREE,
	[RULE_RANGE_FREE] = TR_RANGE_FREE, [RULE_SELF_PID] = TR_SELF_PID,
	[RULE_U_TID] = TR_U_TID,           [RULE_LE] = TR_LE,
	[RULE_BITSET] = TR_BITSET,
};

static int32_t tt_emu(int id)
{
	return id == POLICY_EMU_GETTID ? TE_GETTID : id == POLICY_EMU_ZERO ? TE_ZERO
	       : id == POLICY_EMU_CLOSE_RANGE ? TE_CLOSE_RANGE : 0;
}

static int fail(char *err, size_t errlen, int nr, int rc, const char *what)
{
	char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);

	if (err && errlen)
		snprintf(err, errlen, "%s (%d): %s", name ? name : "?", nr, what);
	free(name);
	return rc;
}

static uint8_t tt_arg(int a)
{
	return a == POLICY_NOARG ? TT_NOARG : (uint8_t)a;
}

void policy_table_rule(const struct policy_rule *r, int call_err, struct tt_rule *t)
{
	*t = (struct tt_rule){
		.op = r->op > 0 && (size_t)r->op < sizeof(tt_op) ? tt_op[r->op] : 0,
		.arg = tt_arg(r->arg),
		.arg2 = tt_arg(r->arg2),
		.carg = tt_arg(r->carg),
		.err = r->err ? r->err : call_err,
		.mask = r->mask,
		.val = r->val,
		.cmask = r->cmask,
	};
}

int policy_compile_table(const struct policy *p, struct tt_table *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->magic = TT_MAGIC;
	for (int nr = 0; nr < POLICY_MAX_NR; nr++) {
		const struct policy_call *c = policy_call(p, nr);
		struct tt_entry *e;

		if (nr >= TT_MAX_NR) {
			/* T denies these with ENOSYS; anything else cannot be expressed */
			if (c->cls != POLICY_DENY || c->err != ENOSYS)
				return fail(err, errlen, nr, -ERANGE, "number beyond the T table");
			continue;
		}
		e = &out->entries[nr];
		if (syscall_refusal_checks_fd(nr))
			out->fd_checked[nr / 8] |= (uint8_t)(1u << (nr % 8));
		e->cls = tt_class[c->cls];
		e->err = c->cls == POLICY_EMU ? tt_emu(c->err) : c->err;
		e->first = out->nrules;
		e->nrules = c->nrules;
		for (int i = 0; i < c->nrules; i++) {
			const struct policy_rule *r = &c->rules[i];
			struct tt_rule *t;

			if (out->nrules >= TT_MAX_RULES)
				return fail(err, errlen, nr, -E2BIG, "more rules than the T table holds");
			t = &out->rules[out->nrules++];
			policy_table_rule(r, c->err, t);
		}
	}
	return 0;
}
