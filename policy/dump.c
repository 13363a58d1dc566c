/* Back end: the policy as text, one line per mentioned syscall (like
 * libseccomp's PFC output), for `sandpit policy show` and for review: its
 * action, the path it takes in strict mode and in filter mode, and its
 * rules or B's check, sandpit's own rules included. */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "policy/rule_eval.h"

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
		if (r->arg2 == POLICY_NOARG)
			fprintf(f, "range_free(arg%d)", r->arg);
		else
			fprintf(f, "range_free(arg%d, arg%d)", r->arg, r->arg2);
		break;
	case RULE_SELF_PID:
		fprintf(f, "arg%d == self_pid", r->arg);
		break;
	case RULE_U_TID:
		fprintf(f, "arg%d is a thread of the program's", r->arg);
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

	if (a->kind == PK_SIGACTION || a->kind == PK_CLONE || a->kind == PK_RLIMIT ||
	    a->kind == PK_NET) {
		fputs(a->kind == PK_SIGACTION ? "sigaction" :
		      a->kind == PK_CLONE ? "thread flags, new slot" :
		      a->kind == PK_NET ? "family, address against the connect grants, "
					  "descriptors passed" :
		      "own limits, lowered or kept, made by B", f);
		return;
	}
	if (a->kind == PK_PATH_OP)
		fputs("made by B, ", f);
	if (a->path_arg == POLICY_NOARG)
		fprintf(f, "the file of descriptor arg%d", a->dirfd_arg);
	else
		fprintf(f, "path arg%d", a->path_arg);
	if (a->dirfd_arg != POLICY_NOARG && a->path_arg != POLICY_NOARG)
		fprintf(f, ", dirfd arg%d", a->dirfd_arg);
	if (a->flags_arg != POLICY_NOARG)
		fprintf(f, ", %s flags arg%d", a->access == PA_OPEN ? "open" : "at", a->flags_arg);
	fprintf(f, ", access %s", access[a->access]);
	if (a->nofollow)
		fputs(", nofollow", f);
}

static const char *action(const struct policy_call *c, char *buf, size_t n)
{
	switch (c->cls) {
	case POLICY_DENY: {
		const char *e = strerrorname_np(c->err);

		if (e)
			snprintf(buf, n, "deny(%s)", e);
		else
			snprintf(buf, n, "deny(%d)", c->err);
		return buf;
	}
	case POLICY_ALLOW:
	case POLICY_NATIVE: return "allow";
	case POLICY_KILL: return "kill";
	case POLICY_THREAD: return "trap";
	case POLICY_PROCESS: return "process";
	case POLICY_EMU: return "emulate";
	default: return "?";
	}
}

/* Strict mode: U makes it itself, the entry answers the errno, T, or B;
 * or, for a call seccomp strict lets U make itself that the policy does
 * not allow, none: strict mode refuses such a policy (policy_strict_check). */
static const char *strict_path(int nr, const struct policy_call *c)
{
	if (nr >= 0 && policy_strict_allows(nr) && c->cls != POLICY_NATIVE && c->cls != POLICY_ALLOW)
		return "refused";
	switch (c->cls) {
	case POLICY_NATIVE: return "native";
	case POLICY_DENY: return "errno";
	case POLICY_PROCESS: return "B";
	default: return "T";
	}
}

/* Filter mode: what the BPF filter decides, and what it traps to T (and
 * B).  A thread call's rules that BPF can decide (all but those that need
 * what only T knows, rule_needs_t) are decided there, the rest trap: BPF+T. */
static const char *filter_path(const struct policy_call *c)
{
	switch (c->cls) {
	case POLICY_NATIVE:
	case POLICY_ALLOW: return "native";
	case POLICY_DENY: return "BPF errno";
	case POLICY_KILL: return "BPF kill";
	case POLICY_PROCESS: return "B";
	case POLICY_THREAD:
		for (int i = 0; i < c->nrules; i++)
			if (!rule_needs_t(c->rules[i].op) || c->rules[i].carg != POLICY_NOARG)
				return "BPF+T";
		return c->nrules ? "T" : "BPF+T";
	default: return "T";
	}
}

static void put_call(FILE *f, int nr, const char *name, const struct policy_call *c)
{
	int detail = c->cls == POLICY_EMU || c->cls == POLICY_PROCESS ||
		     (c->cls == POLICY_THREAD && c->nrules);
	char buf[32];

	fprintf(f, "%-24s %-14s %-7s %-*s", name, action(c, buf, sizeof(buf)), strict_path(nr, c),
		detail ? 10 : 0, filter_path(c));
	switch (c->cls) {
	case POLICY_EMU:
		fputs(c->err == POLICY_EMU_GETTID	  ? " U's tid"
		      : c->err == POLICY_EMU_ZERO	  ? " returns 0"
		      : c->err == POLICY_EMU_CLOSE_RANGE ? " around sandpit's descriptors"
							  : " ?",
		      f);
		break;
	case POLICY_THREAD:
		for (int i = 0; i < c->nrules; i++) {
			fputs(i ? "; " : " ", f);
			put_rule(f, &c->rules[i], c->err);
		}
		break;
	case POLICY_PROCESS:
		fputc(' ', f);
		put_proc(f, &c->proc);
		break;
	}
	fputc('\n', f);
}

void policy_dump(const struct policy *p, FILE *f)
{
	struct policy_call dflt = { 0 };

	fputs("# sandpit policy, x86_64\n", f);
	for (size_t i = 0; i < policy_ngrants(p); i++) {
		const struct policy_grant *g = policy_grant_at(p, i);

		fprintf(f, "path %-5s %s%s\n", g->writable ? "write" : "read", g->path,
			g->exact ? "  # a file" : "");
	}
	for (size_t i = 0; i < policy_ndenies(p); i++)
		fprintf(f, "path deny  %s\n", policy_deny_at(p, i)->pattern);
	fprintf(f, "# %-22s %-14s %-7s %-10s %s\n", "syscall", "action", "strict", "filter",
		"rules (sandpit's own included) or B's check");
	for (int nr = 0; nr < POLICY_MAX_NR; nr++) {
		const struct policy_call *c = policy_call(p, nr);
		char *name;

		if (!c->mentioned)
			continue;
		name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
		if (name) {
			put_call(f, nr, name, c);
		} else {
			char num[16];
			snprintf(num, sizeof(num), "%d", nr);
			put_call(f, nr, num, c);
		}
		free(name);
	}
	policy_get_default(p, &dflt.cls, &dflt.err);
	put_call(f, -1, "default", &dflt);
}
