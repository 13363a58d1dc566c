/* Why a call was refused, from the model: the policy line, the guard rule
 * or the default that decided it (docs/design/trusted-process.md, "--log=denials").  B and
 * the command use it; the back ends only pass on which rule refused. */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

static const char *guard_rule_name(int op)
{
	switch (op) {
	case RULE_FD_FREE:
		return "fd_free";
	case RULE_RANGE_FREE:
		return "range_free";
	case RULE_SELF_PID:
		return "self_pid";
	case RULE_U_TID:
		return "u_tid";
	default:
		return NULL;
	}
}

void policy_explain(const struct policy *p, int nr, int rule, struct policy_why *w)
{
	const struct policy_call *c = policy_call(p, nr);
	char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
	const char *n = name ? name : "?";
	const struct policy_guard *g = policy_guard(nr);

	w->builtin[0] = 0;
	if (!c->mentioned)
		snprintf(w->decided, sizeof(w->decided), "not in the policy: default");
	else if (rule >= 0 && rule < c->nguard) {
		const char *op = guard_rule_name(c->rules[rule].op);
		snprintf(w->decided, sizeof(w->decided), "guard: %s", op ? op : n);
	} else if (c->file)
		snprintf(w->decided, sizeof(w->decided), "%s:%d", c->file, c->line);
	else
		snprintf(w->decided, sizeof(w->decided), "policy: %s", n);
	if (c->mentioned && g && g->kind == GUARD_NEVER &&
	    (c->cls == POLICY_DENY || c->cls == POLICY_KILL))
		snprintf(w->builtin, sizeof(w->builtin), "never: %s", n);
	free(name);
}

int policy_rule_for_errno(const struct policy *p, int nr, int err_no)
{
	const struct policy_call *c = policy_call(p, nr);

	if (c->cls != POLICY_THREAD)
		return -1;
	for (int i = 0; i < c->nrules; i++)
		if ((c->rules[i].err ? c->rules[i].err : c->err) == err_no)
			return i;
	return -1;
}

int policy_grant_hint(const char *resolved, int access, char *hint, size_t n)
{
	if (access != PA_READ && access != PA_WRITE)
		return -ENOENT;
	snprintf(hint, n, "--allow-%s=%s", access == PA_WRITE ? "write" : "read", resolved);
	return 0;
}
