/* sandpit's model written out as a minijail .policy file (sandpit policy
 * export): each call's class and rules in minijail's syntax, what minijail
 * cannot say reported as comments. */
#include <errno.h>
#include <limits.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "policy/policy.h"
#include "policy/minijail_expr.h"

/* --- sandpit's model in minijail's format --- */

#define EX_MAX_ALT 64 /* atoms in one clause, clauses in the result */

struct ex_clause {
	int n;
	struct atom a[EX_MAX_ALT];
};

struct ex {
	int n;
	struct ex_clause c[POLICY_MAX_RULES * 65];
};

static int ex_add(struct ex *e, int carg, uint64_t cmask, const struct atom *alts, int n)
{
	struct ex_clause *c = &e->c[e->n];

	if (e->n >= (int)(sizeof(e->c) / sizeof(e->c[0])) || n + 1 > EX_MAX_ALT)
		return -1;
	c->n = 0;
	if (carg != POLICY_NOARG) /* "if a[carg] & cmask then R" is "(a[carg] & cmask) == 0 || R" */
		c->a[c->n++] = (struct atom){ carg, OP_IN, ~cmask };
	memcpy(c->a + c->n, alts, n * sizeof(*alts));
	c->n += n;
	e->n++;
	return 0;
}

/* A register rule as clauses of minijail atoms: 0, 1 if it is one of
 * sandpit's own checks (nothing to say outside sandpit), -1 if minijail
 * cannot say it. */
static int ex_rule(struct ex *e, const struct policy_rule *r)
{
	struct atom alt[EX_MAX_ALT];
	uint64_t m = r->mask, v = r->val;
	int n = 0, rc = 0;

	switch (r->op) {
	case RULE_FD_FREE:
	case RULE_RANGE_FREE:
	case RULE_U_TID:
		return 1;
	case RULE_MASK_ZERO:
		alt[n++] = (struct atom){ r->arg, OP_IN, ~m };
		return ex_add(e, r->carg, r->cmask, alt, n);
	case RULE_LE:
		alt[n++] = (struct atom){ r->arg, OP_LE, v };
		return ex_add(e, r->carg, r->cmask, alt, n);
	case RULE_MASKED_EQ: /* the bits of v set, the rest of m clear */
		if (v & ~m)
			return -1;
		if (m == UINT64_MAX) {
			alt[0] = (struct atom){ r->arg, OP_EQ, v };
			return ex_add(e, r->carg, r->cmask, alt, 1);
		}
		if (m & ~v) {
			alt[0] = (struct atom){ r->arg, OP_IN, ~(m & ~v) };
			rc |= ex_add(e, r->carg, r->cmask, alt, 1);
		}
		for (int b = 0; b < 64; b++)
			if (v >> b & 1) {
				alt[0] = (struct atom){ r->arg, OP_AND, 1ULL << b };
				rc |= ex_add(e, r->carg, r->cmask, alt, 1);
			}
		return rc;
	case RULE_MASKED_NE: /* some bit of m outside v set, or some bit of v clear */
		if (v & ~m)
			return 0; /* always holds */
		if (m == UINT64_MAX) {
			alt[n++] = (struct atom){ r->arg, OP_NE, v };
		} else {
			if (m & ~v)
				alt[n++] = (struct atom){ r->arg, OP_AND, m & ~v };
			for (int b = 0; b < 64 && n < EX_MAX_ALT - 1; b++)
				if (v >> b & 1)
					alt[n++] = (struct atom){ r->arg, OP_IN, ~(1ULL << b) };
		}
		return ex_add(e, r->carg, r->cmask, alt, n);
	case RULE_BITSET:
		for (int b = 0; b < 64; b++)
			if (r->mask >> b & 1)
				alt[n++] = (struct atom){ r->arg, OP_EQ, v + b };
		return ex_add(e, r->carg, r->cmask, alt, n);
	default: /* RULE_SELF_PID: minijail cannot name the sandboxed process */
		return -1;
	}
}

static void ex_errno(FILE *f, int e)
{
	const char *s = strerrorname_np(e);

	if (s)
		fputs(s, f);
	else
		fprintf(f, "%d", e);
}

static void ex_atom(FILE *f, const struct atom *a)
{
	fprintf(f, "arg%d %s %#llx", a->arg, minijail_op_text(a->op), (unsigned long long)a->v);
}

/* One of the rules guard.c puts on every policy for the call, because of
 * what sandpit's own threads and descriptors are (a futex op that could ring
 * B, an fcntl owner that would signal it, ...): nothing to say outside
 * sandpit.  Not $pid: confining a call to the process means something
 * under minijail too. */
static int guard_rule(int nr, const struct policy_rule *r)
{
	const struct policy_guard *g = policy_guard(nr);

	/* what the kinds add (policy/guard.c's derive) is about the call, not
	 * about sandpit: an argument that must be NULL (sendto's address, a
	 * structure the kernel would read), a mode without set-id bits.  It
	 * means the same under minijail, which can say it */
	if (r->carg == POLICY_NOARG &&
	    ((r->op == RULE_MASKED_EQ && r->mask == ~0ULL && r->val == 0) ||
	     (r->op == RULE_MASK_ZERO && r->mask == (S_ISUID | S_ISGID))))
		return 0;

	for (int i = 0; g && g->kind == GUARD_RULES && i < g->nrules; i++) {
		const struct policy_rule *q = &g->rules[i];
		if (q->op == r->op && q->arg == r->arg && q->arg2 == r->arg2 && q->carg == r->carg &&
		    q->mask == r->mask && q->val == r->val && q->cmask == r->cmask &&
		    r->op != RULE_SELF_PID)
			return 1;
	}
	return 0;
}

/* The call's rules as one DNF (|| distributed over &&), or a comment and
 * the refusal. */
static void ex_thread(FILE *f, int nr, const char *name, const struct policy_call *c)
{
	static struct ex e;
	int pick[sizeof(e.c) / sizeof(e.c[0])] = { 0 }, own = 0, bad = 0;
	long ndnf = 1;

	e.n = 0;
	for (int i = 0; i < c->nrules; i++) {
		int r = guard_rule(nr, &c->rules[i]) ? 1 : ex_rule(&e, &c->rules[i]);
		own |= r == 1;
		bad |= r < 0;
		if (r != 1 && c->rules[i].err && c->rules[i].err != c->err)
			fprintf(f, "# %s: sandpit returns ", name), ex_errno(f, c->rules[i].err),
				fprintf(f, " when rule %d fails; minijail, one errno for all\n", i + 1);
	}
	for (int i = 0; !bad && i < e.n; i++)
		if ((ndnf *= e.c[i].n) > EX_MAX_ALT)
			bad = 1;
	if (own)
		fprintf(f, "# %s: sandpit's own checks (that the call leaves its descriptors, "
			   "pages and threads alone) are left out\n", name);
	if (bad) {
		fprintf(f, "# %s: sandpit's rules (see sandpit policy show) cannot be said in "
			   "minijail's expressions; refused here\n%s: return ", name, name);
		ex_errno(f, c->err ? c->err : EPERM);
		fputc('\n', f);
		return;
	}
	if (e.n == 0) {
		fprintf(f, "%s: allow\n", name);
		return;
	}
	fprintf(f, "%s: ", name);
	for (long k = 0; k < ndnf; k++) {
		fputs(k ? " || " : "", f);
		for (int i = 0; i < e.n; i++) {
			fputs(i ? " && " : "", f);
			ex_atom(f, &e.c[i].a[pick[i]]);
		}
		for (int i = 0; i < e.n; i++) {
			if (++pick[i] < e.c[i].n)
				break;
			pick[i] = 0;
		}
	}
	fputs("; return ", f);
	ex_errno(f, c->err ? c->err : EPERM);
	fputc('\n', f);
}

int policy_export_minijail(const struct policy *p, FILE *f)
{
	int dcls, derr;

	policy_get_default(p, &dcls, &derr);
	fprintf(f, "# sandpit policy export-minijail: this policy in minijail's format.\n"
		   "# What minijail cannot express is said in comments.\n");
	if (policy_ngrants(p))
		fprintf(f, "# The path grants, which a seccomp filter cannot check (minijail's mount\n"
			   "# namespace, -b and -k, can):\n");
	for (size_t i = 0; i < policy_ngrants(p); i++)
		fprintf(f, "#   path %s %s\n", policy_grant_at(p, i)->writable ? "write" : "read",
			policy_grant_at(p, i)->path);
	if (dcls == POLICY_KILL)
		fprintf(f, "# calls no line names kill the process, as in minijail\n");
	else
		fprintf(f, "# calls no line names fail with errno %d; each is listed\n", derr);
	for (int nr = 0; nr < POLICY_DEFAULT_NR; nr++) {
		const struct policy_call *c = policy_call(p, nr);
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);

		if (!name || (!c->mentioned && dcls == POLICY_KILL)) {
			free(name);
			continue;
		}
		switch (c->cls) {
		case POLICY_ALLOW:
		case POLICY_NATIVE:
			fprintf(f, "%s: allow\n", name);
			break;
		case POLICY_DENY:
			fprintf(f, "%s: return ", name);
			ex_errno(f, c->err);
			fputc('\n', f);
			break;
		case POLICY_KILL:
			fprintf(f, "%s: kill\n", name);
			break;
		case POLICY_EMU:
			fprintf(f, "# %s: sandpit answers it itself (%s); minijail lets it be made\n"
				   "%s: allow\n", name,
				c->err == POLICY_EMU_GETTID ? "the caller's tid" : "success, doing nothing",
				name);
			break;
		case POLICY_PROCESS:
			if (c->proc.kind == PK_RLIMIT) {
				/* a filter cannot compare with the limit in force:
				 * reads only, of the process itself */
				fprintf(f, "# %s: sandpit's trusted process lets a limit be lowered "
					   "or kept; a seccomp filter can only let it be read\n%s\n",
					name, nr == SCMP_SYS(prlimit64) ? "prlimit64: arg0 == 0 && arg2 == 0"
									 : "setrlimit: return EPERM");
				break;
			}
			if (c->proc.kind == PK_NET && nr == SCMP_SYS(socket)) {
				/* the connect grants are sandpit's: a filter alone
				 * can give the family that reaches nothing */
				fprintf(f, "# socket: sandpit's trusted process allows AF_INET and "
					   "AF_INET6 with a connect grant; a seccomp filter knows "
					   "none\nsocket: arg0 == AF_UNIX; return EAFNOSUPPORT\n");
				break;
			}
			if (c->proc.kind == PK_NET && nr == SCMP_SYS(setsockopt)) {
				/* the source routes B refuses matter only to the
				 * network sockets that socket's line above allows none of */
				fprintf(f, "# setsockopt: sandpit's trusted process refuses a source "
					   "route (IP_OPTIONS, IPV6_RTHDR, IPV6_2292PKTOPTIONS), which "
					   "only the AF_INET and AF_INET6 sockets that socket's line "
					   "allows none of take\nsetsockopt: allow\n");
				break;
			}
			fprintf(f, "# %s: sandpit's trusted process checks its %s; a seccomp filter "
				   "cannot read memory\n%s: allow\n", name,
				c->proc.kind == PK_PATH ? "path against the grants" :
				c->proc.kind == PK_CLONE ? "flags (threads of the process only)" :
				c->proc.kind == PK_NET ? "socket family, address and passed descriptors" :
				"structure", name);
			break;
		default:
			ex_thread(f, nr, name, c);
			break;
		}
		free(name);
	}
	return fflush(f) ? -errno : 0;
}
