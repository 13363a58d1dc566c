/* Back end: the policy as text, one line per mentioned syscall (like
 * libseccomp's PFC output), for `sandpit policy show` and for review. */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

static void put_errno(FILE *f, int e)
{
	const char *name = strerrorname_np(e);

	if (name)
		fputs(name, f);
	else
		fprintf(f, "%d", e);
}

static void put_rule(FILE *f, const struct policy_rule *r, int deflt)
{
	unsigned long long mask = r->mask, val = r->val;

	if (r->carg != POLICY_NOARG)
		fprintf(f, "if (arg%d & %#llx) ", r->carg, (unsigned long long)r->cmask);
	switch (r->op) {
	case RULE_MASK_ZERO:
		fprintf(f, "(arg%d & %#llx) == 0", r->arg, mask);
		break;
	case RULE_MASKED_EQ:
	case RULE_MASKED_NE: {
		const char *cmp = r->op == RULE_MASKED_EQ ? "==" : "!=";
		if (mask == ~0ULL)
			fprintf(f, "arg%d %s %#llx", r->arg, cmp, val);
		else
			fprintf(f, "(arg%d & %#llx) %s %#llx", r->arg, mask, cmp, val);
		break;
	}
	case RULE_FD_FREE:
		fprintf(f, "fd_free(arg%d)", r->arg);
		break;
	case RULE_RANGE_FREE:
		fprintf(f, "range_free(arg%d, arg%d)", r->arg, r->arg2);
		break;
	case RULE_SELF_PID:
		fprintf(f, "arg%d == self_pid", r->arg);
		break;
	case RULE_NOT_TID:
		fprintf(f, "arg%d != trusted_tid", r->arg);
		break;
	case RULE_LE:
		fprintf(f, "arg%d <= %#llx", r->arg, val);
		break;
	case RULE_BITSET: {
		const char *sep = "";
		fprintf(f, "arg%d in {", r->arg);
		for (int b = 0; b < 64; b++)
			if (mask >> b & 1) {
				fprintf(f, "%s%#llx", sep, val + b);
				sep = ", ";
			}
		fputc('}', f);
		break;
	}
	}
	fputs(" else ", f);
	put_errno(f, r->err ? r->err : deflt);
}

static void put_proc(FILE *f, const struct policy_proc_arg *a)
{
	static const char *const access[] = {
		[PA_READ] = "read", [PA_WRITE] = "write", [PA_OPEN] = "open", [PA_NEVER] = "never"
	};

	if (a->kind == PK_SIGACTION || a->kind == PK_CLONE) {
		fputs(a->kind == PK_SIGACTION ? ": sigaction" : ": thread flags, new slot", f);
		return;
	}
	fprintf(f, ": path arg%d", a->path_arg);
	if (a->dirfd_arg != POLICY_NOARG)
		fprintf(f, ", dirfd arg%d", a->dirfd_arg);
	if (a->flags_arg != POLICY_NOARG)
		fprintf(f, ", %s flags arg%d", a->access == PA_OPEN ? "open" : "at", a->flags_arg);
	fprintf(f, ", access %s", access[a->access]);
	if (a->nofollow)
		fputs(", nofollow", f);
}

static void put_call(FILE *f, const char *name, const struct policy_call *c)
{
	fprintf(f, "%-24s ", name);
	switch (c->cls) {
	case POLICY_DENY:
		fputs("deny(", f);
		put_errno(f, c->err);
		fputc(')', f);
		break;
	case POLICY_ALLOW:
		fputs("allow", f);
		break;
	case POLICY_KILL:
		fputs("kill", f);
		break;
	case POLICY_NATIVE:
		fputs("native", f);
		break;
	case POLICY_EMU:
		fputs(c->err == POLICY_EMU_GETTID ? "emu(gettid)" : c->err == POLICY_EMU_ZERO ? "emu(0)" : "emu(?)", f);
		break;
	case POLICY_THREAD:
		fputs("thread", f);
		for (int i = 0; i < c->nrules; i++) {
			fputs(i ? "; " : ": ", f);
			put_rule(f, &c->rules[i], c->err);
		}
		break;
	case POLICY_PROCESS:
		fputs("process", f);
		put_proc(f, &c->proc);
		break;
	}
	fputc('\n', f);
}

void policy_dump(const struct policy *p, FILE *f)
{
	fputs("# sandpit policy, x86_64\n", f);
	for (size_t i = 0; i < policy_ngrants(p); i++) {
		const struct policy_grant *g = policy_grant_at(p, i);

		fprintf(f, "grant %-5s %s%s\n", g->writable ? "write" : "read", g->path,
			g->exact ? " (file)" : "");
	}
	for (int nr = 0; nr < POLICY_MAX_NR; nr++) {
		const struct policy_call *c = policy_call(p, nr);
		char *name;

		if (!c->mentioned)
			continue;
		name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
		if (name) {
			put_call(f, name, c);
		} else {
			char num[16];
			snprintf(num, sizeof(num), "%d", nr);
			put_call(f, num, c);
		}
		free(name);
	}
	fputs("default                  deny(ENOSYS)\n", f);
}
