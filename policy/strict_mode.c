/* What strict mode can enforce of a policy.  Seccomp strict mode lets a
 * thread make read, write, exit and rt_sigreturn itself: a site the
 * patcher found asks sandpit's entry, but a site it missed, or a syscall
 * instruction hidden inside another instruction and reached by a jump,
 * goes straight to the kernel, which lets it through.  So of these four
 * calls strict mode can only enforce `allow`; a policy that says anything
 * else of one of them (a rule, a deny, a kill, or a default that reaches an
 * unnamed one) would be looser in strict mode than it reads, and is refused
 * for it (filter mode's BPF filter sees every such call). */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

static const char *const native_calls[] = { "read", "write", "exit", "rt_sigreturn" };

/* What the model says of the call, in the words of a policy line. */
static const char *what(const struct policy_call *c, char *buf, size_t n)
{
	const char *e;

	switch (c->cls) {
	case POLICY_DENY:
		if ((e = strerrorname_np(c->err)))
			snprintf(buf, n, "deny(%s)", e);
		else
			snprintf(buf, n, "deny(%d)", c->err);
		return buf;
	case POLICY_KILL:
		return "kill";
	case POLICY_THREAD:
		return c->nrules ? "a rule on its arguments" : "trap";
	default:
		return "anything but allow";
	}
}

int policy_strict_check(const struct policy *p, const char *name, policy_report_fn *notes,
			void *ctx, char *err, size_t errlen)
{
	int rc = 0;

	for (size_t i = 0; i < sizeof(native_calls) / sizeof(native_calls[0]); i++) {
		int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, native_calls[i]);
		const struct policy_call *c = nr >= 0 ? policy_call(p, nr) : NULL;
		char msg[720], where[300], act[32], body[400];

		if (!c || c->cls == POLICY_NATIVE || c->cls == POLICY_ALLOW)
			continue;
		if (c->file)
			snprintf(where, sizeof(where), "%s:%d", c->file, c->line);
		else
			snprintf(where, sizeof(where), "%s", name ? name : "policy");
		snprintf(body, sizeof(body),
			 "%s: %sstrict mode cannot enforce %s%s: seccomp strict mode lets the "
			 "program make %s itself; allow it, or use filter mode",
			 native_calls[i], c->mentioned ? "" : "no line names it, and ",
			 c->mentioned ? "" : "the default, ", what(c, act, sizeof(act)),
			 native_calls[i]);
		if (!rc && err && errlen)
			snprintf(err, errlen, "%s: %s", where, body);
		if (notes) {
			snprintf(msg, sizeof(msg), "%s: note: %s", where, body);
			notes(ctx, msg);
		}
		rc = -EOPNOTSUPP;
	}
	return rc;
}
