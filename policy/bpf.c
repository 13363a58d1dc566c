/* Back end: the policy model compiled by libseccomp into U's seccomp-bpf
 * filter for filter mode (DESIGN §2-§4, invariant 6).
 *
 * The filter decides only what it can decide exactly; everything else is
 * SCMP_ACT_TRAP, the default action, and U's SIGSYS handler hands it to T
 * (and B) like a patched site would.  So a thread-class call becomes:
 *
 *   ALLOW         where every rule provably passes,
 *   ERRNO(rule's) where the rules before it provably pass and it provably fails,
 *   TRAP          everywhere else.
 *
 * A call the policy kills traps too: T then has B name it and the line
 * that kills it before P dies (a kill by the filter says only SIGSYS).
 * Only other architectures are killed here (invariant 6).  sandpit's own
 * calls in U pass whatever the policy says (below, "sandpit's own calls").
 *
 * Each of these is a set of argument vectors, built as a union of
 * clauses, a clause being at most one comparison per argument (libseccomp's
 * limit).  Every clause is a subset of the true set (an under-approximation),
 * so BPF never answers differently from T; what is cut, or what BPF cannot
 * express (protected ranges, the program's tids), traps.
 *
 * libseccomp 2.5.4 (Debian 12) builds wrong programs from some rule sets,
 * so what it is given is kept to a form it gets right:
 *
 *  - only SCMP_CMP_MASKED_EQ and SCMP_CMP_EQ.  Ranges (an fd outside
 *    sandpit's block, RULE_LE) become aligned power-of-two blocks, "not
 *    equal" a bit-by-bit split.  With LT/GT it allowed a0 = 1500, a1 = 0x5401
 *    from the rules a0 < 1000 && a1 == 0x5401, a0 < 2000 && a1 == 0x5402;
 *    with SCMP_CMP_NE next to MASKED_EQ in rules of different actions,
 *    seccomp_rule_add never returned.
 *  - one shape per call: all its clauses agree on every argument but the
 *    highest one they compare, and on that one's high half.  Where clauses
 *    differed on a lower argument, a failed comparison on a higher one
 *    jumped back to the next lower sibling without reloading the
 *    accumulator (futex: a0 & 0xff == 1, a2 == pid failed for a2 = 0 and
 *    went on to test a2, not a0, against "a0 & 0xff == 0": ALLOW).  With one
 *    node on every level but the last, every failure ends in TRAP.
 *
 * Both found by the selftest that runs random policies' programs against
 * the rules' meaning (policy/rule_eval.c, what T runs); it is the evidence
 * that this subset holds.  Each clause built is also checked against that
 * meaning at one of its points, and dropped if the two disagree.
 *
 * Comparisons on descriptors and pids use the low 32 bits only (a mask of
 * 0xffffffff): the kernel truncates an int argument, and T compares 32-bit
 * registers, so the upper half is irrelevant whether U sign-extended
 * (AT_FDCWD as 0xffffffffffffff9c) or not (0x00000000ffffff9c).
 *
 * The sets and their algebra, and each rule's sets checked against its
 * meaning, are policy/bpf_clause.c's; here, the shape, the calls and the
 * program; the templates made from the program, policy/bpf_template.c's. */
#include <errno.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "policy/bpf_clause.h"
#include "policy/bpf_internal.h"

/* Instructions libseccomp may spend on one clause (per 64-bit comparison:
 * load, mask and jump for each half, and a jump) and on one call with
 * argument rules, and what all argument clauses together may cost: with the
 * ~700 that the number-only rules and the tree take, the program stays under
 * BPF_MAXINSNS (libseccomp shares nodes, so real programs are far smaller;
 * the selftest checks random policies).  Allow sets are spent first, then
 * errno sets (a refused call is rare, and T answers it as well), the cheap
 * sets of each before the dear ones; what does not fit traps. */
#define CLAUSE_COST(ncmp) (1 + 6 * (ncmp))
#define CALL_COST 4
#define ARG_BUDGET 3200

/* Numbers from here on exist in no x86-64 kernel (x32's 512-547 need the
 * x32 bit, which is killed anyway) and lie beyond the T table, which answers
 * ENOSYS for them: the filter leaves an ENOSYS there to T rather than spend
 * some 650 instructions (of BPF_MAXINSNS) and half its build time on them. */
#define BPF_EXPLICIT_NR POLICY_DEFAULT_NR

struct build {
	scmp_filter_ctx ctx;
	const struct policy *p;
	const struct policy_runtime *rt;
	uint32_t kill;
	int trap_deny;         /* POLICY_BPF_TRAP_DENY */
	long budget;           /* instructions left for argument clauses */
	long cost_lo, cost_hi; /* this sweep emits sets that cost (lo, hi] */
	struct cset allow, next, pass, fail, err, tmp[3];
};

int bpf_fail_msg(char *err, size_t errlen, int nr, int rc, const char *what)
{
	char *name = nr >= 0 ? seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr) : NULL;

	if (err && errlen) {
		if (nr >= 0)
			snprintf(err, errlen, "bpf: %s (%d): %s: %s", name ? name : "?", nr, what,
				 strerror(-rc));
		else
			snprintf(err, errlen, "bpf: %s: %s", what, strerror(-rc));
	}
	free(name);
	return rc;
}

static long set_cost(const struct cset *s)
{
	long cost = CALL_COST;

	for (size_t i = 0; i < s->n; i++) {
		int ncmp = 0;

		for (int k = 0; k < NARGS; k++)
			ncmp += s->c[i].a[k].mask != 0;
		cost += CLAUSE_COST(ncmp);
	}
	return cost;
}

/* One seccomp rule per clause of s. */
static int add_clauses(struct build *b, uint32_t action, int nr, const struct cset *s)
{
	b->budget -= set_cost(s);
	for (size_t i = 0; i < s->n; i++) {
		struct scmp_arg_cmp cmp[NARGS];
		unsigned int n = 0;
		int rc;

		for (int k = 0; k < NARGS; k++) {
			const struct atom *a = &s->c[i].a[k];

			if (a->mask == ~0ULL) /* datum_b is the mask of MASKED_EQ only */
				cmp[n++] = SCMP_CMP64(k, SCMP_CMP_EQ, a->val, 0);
			else if (a->mask)
				cmp[n++] = SCMP_CMP64(k, SCMP_CMP_MASKED_EQ, a->mask, a->val);
		}
		rc = seccomp_rule_add_exact_array(b->ctx, action, nr, n, cmp);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The set's rules, if it is complete and fits the budget. */
static int emit(struct build *b, uint32_t action, int nr, const struct cset *s)
{
	long cost = set_cost(s);

	if (!s->n || s->over || cost <= b->cost_lo || cost > b->cost_hi || cost > b->budget)
		return 0;
	return add_clauses(b, action, nr, s);
}

/* Set `which` of a thread call: rule `which`'s errno set (rules before it
 * pass, it fails), or with which == nrules the allow set (every rule passes). */
static void call_set(struct build *b, const struct policy_call *c, int which, struct cset *out)
{
	cset_true(&b->allow);
	for (int i = 0; i < c->nrules; i++) {
		cset_of_rule(&c->rules[i], b->rt, &b->pass, &b->fail, b->tmp);
		if (i == which) {
			cset_and(&b->allow, &b->fail, out);
			return;
		}
		cset_and(&b->allow, &b->pass, &b->next);
		b->allow = b->next;
	}
	*out = b->allow;
}

/* y holds whenever x does */
static int implies(const struct atom *x, const struct atom *y)
{
	return (y->mask & ~x->mask) == 0 && (x->val & y->mask) == y->val;
}

/* The shape of one call's clauses (see the top of the file): every clause
 * has exactly `prefix` on the arguments below k and none above, and on
 * argument k its own low half under one common high half `high`. */
struct shape {
	int k; /* -1: the unconditional clause only */
	struct atom prefix[NARGS];
	struct atom high;
};

/* Fitted to the allow set (or the first errno set that has clauses): k is
 * the highest argument it compares; on each argument below, the atom that
 * keeps the most clauses; the high half of the first clause that fits. */
static int shape_of(const struct cset *s, struct shape *sh)
{
	memset(sh, 0, sizeof(*sh));
	sh->k = -1;
	if (!s->n || s->over)
		return 0;
	for (size_t i = 0; i < s->n; i++)
		for (int j = 0; j < NARGS; j++)
			if (s->c[i].a[j].mask && j > sh->k)
				sh->k = j;
	for (int j = 0; j < sh->k; j++) {
		size_t best = 0;

		for (size_t i = 0; i <= s->n; i++) {
			struct atom x = { 0, 0 };
			size_t n = 0;

			if (i < s->n)
				x = s->c[i].a[j];
			for (size_t m = 0; m < s->n; m++)
				n += implies(&x, &s->c[m].a[j]);
			if (n > best) {
				best = n;
				sh->prefix[j] = x;
			}
		}
	}
	for (size_t i = 0; i < s->n && sh->k >= 0; i++) {
		const struct atom *a = &s->c[i].a[sh->k];
		int j = 0;

		while (j < sh->k && implies(&sh->prefix[j], &s->c[i].a[j]))
			j++;
		if (j == sh->k) {
			sh->high.mask = a->mask & ~LOW32;
			sh->high.val = a->val & ~LOW32;
			break;
		}
	}
	return 1;
}

/* The clauses of s that fit the shape, narrowed to it (a subset stays an
 * under-approximation). */
static void fit(const struct shape *sh, const struct cset *s, struct cset *out)
{
	cset_clear(out);
	out->over = s->over;
	for (size_t i = 0; i < s->n; i++) {
		struct clause c;
		int ok = 1;

		for (int j = 0; j < NARGS && ok; j++) {
			const struct atom *a = &s->c[i].a[j];

			if (j < sh->k) {
				ok = implies(&sh->prefix[j], a);
				c.a[j] = sh->prefix[j];
			} else if (j > sh->k) {
				ok = a->mask == 0;
				c.a[j] = *a;
			} else {
				ok = cset_atom_and(a, &sh->high, &c.a[j]) &&
				     (c.a[j].mask & ~LOW32) == sh->high.mask;
			}
		}
		if (ok)
			cset_add(out, &c);
	}
}

/* A refusal that says EBADF, as the kernel would, when the call's first
 * argument is not an open descriptor (syscall_refusal_checks_fd): the
 * filter cannot see the descriptor table, so T decides it (TRAP, the
 * default action).  Refusals are rare; the allowed calls keep their cost. */
static int refusal_traps(int nr, int err)
{
	return err != EBADF && err != ENOSYS && syscall_refusal_checks_fd(nr);
}

/* Emits the allow set, or the errno sets, of a thread call, in its shape. */
static int thread_call(struct build *b, int nr, const struct policy_call *c, int errnos)
{
	struct shape sh;
	int rc, found;

	call_set(b, c, c->nrules, &b->err);
	found = shape_of(&b->err, &sh);
	for (int i = 0; i < c->nrules && !found; i++) {
		call_set(b, c, i, &b->err);
		found = shape_of(&b->err, &sh);
	}
	if (!found)
		return 0;
	if (!errnos) {
		call_set(b, c, c->nrules, &b->err);
		fit(&sh, &b->err, &b->next);
		return emit(b, SCMP_ACT_ALLOW, nr, &b->next);
	}
	for (int i = 0; i < c->nrules; i++) {
		const struct policy_rule *r = &c->rules[i];

		if (refusal_traps(nr, r->err ? r->err : c->err))
			continue;
		call_set(b, c, i, &b->err);
		fit(&sh, &b->err, &b->next);
		rc = emit(b, SCMP_ACT_ERRNO(r->err ? r->err : c->err), nr, &b->next);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* arch_prctl's two codes for the thread pointer are sandpit's, whatever the
 * policy says of the call (policy/guard.c lets a file only deny or kill
 * it): the filter lets them through, so that U sets its own FS base on a
 * CPU without FSGSBASE.  The kernel reads the code as an int: the low 32
 * bits.  Every other code traps, and T answers it as the policy says
 * (ARCH_SET_GS and ARCH_GET_GS among them: sandpit owns %gs). */
static int own_fs_base(struct build *b, int nr)
{
	static const uint64_t codes[] = { 0x1002 /* ARCH_SET_FS */, 0x1003 /* ARCH_GET_FS */ };
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		int rc = seccomp_rule_add_exact(b->ctx, SCMP_ACT_ALLOW, nr, 1,
						SCMP_CMP64(0, SCMP_CMP_MASKED_EQ, 0xffffffffULL, codes[i]));
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int simple_call(struct build *b, int nr, const struct policy_call *c)
{
	if (nr == SCMP_SYS(arch_prctl) && c->cls != POLICY_ALLOW && c->cls != POLICY_NATIVE)
		return own_fs_base(b, nr);
	switch (c->cls) {
	case POLICY_NATIVE:
	case POLICY_ALLOW:
		return seccomp_rule_add_exact(b->ctx, SCMP_ACT_ALLOW, nr, 0);
	case POLICY_DENY: /* unmentioned numbers too: ENOSYS, not a trap */
		if (b->trap_deny || refusal_traps(nr, c->err))
			return 0;
		if (nr < BPF_EXPLICIT_NR || c->err != ENOSYS)
			return seccomp_rule_add_exact(b->ctx, SCMP_ACT_ERRNO(c->err), nr, 0);
		return 0;
	case POLICY_KILL:
		/* a trap, which the net takes to T: T has B name the call and
		 * the line that kills it, then kills P (a kill by the filter
		 * would say nothing but SIGSYS).  The call never runs either way */
		return 0;
	case POLICY_THREAD:
	case POLICY_EMU:
	case POLICY_PROCESS: /* T or B decides: the default action, TRAP */
		return 0;
	default:
		return -EINVAL;
	}
}

/* ---- sandpit's own calls (struct policy_runtime's own_*) ----
 *
 * U's runtime makes a few calls of its own, natively, under the filter:
 * its wake-ups (a write to T's eventfd, to B's socket), its sleeps (a read
 * of its own eventfd), a thread's exit and every signal's return.  They
 * must pass whatever the policy says of read, write, exit and
 * rt_sigreturn, or a rule on write would trap sandpit's own write, and the
 * net would call itself until the stack ran out.  The filter cannot see
 * who calls, so the program can make them too: on exactly these
 * descriptors, which only wake its own threads' T (as any call it makes
 * through T does) or take their U's wake-ups (its own threads then wait),
 * or, where its handlers may run, make one of its own T's waits restart
 * (docs/design/filter-mode.md, "sandpit's own calls"); exit ends the
 * calling thread (then P, as the exit did not go through T) and
 * rt_sigreturn returns from a signal frame: seccomp's strict mode allows
 * both to every thread. */

/* The numbers first + 2i, i < n (32-bit descriptors): the aligned blocks of
 * [first, first + 2n - 2], with bit 0 fixed to first's. */
static void own_every_other(struct cset *s, int first, int n)
{
	struct cset r;
	uint64_t par = (uint32_t)first & 1;

	cset_clear(&r);
	if (n > 0)
		cset_add_range(&r, 0, (uint32_t)first, (uint32_t)first + 2 * (uint64_t)(n - 1), 32, 0,
			  MAX_CLAUSES);
	s->over |= r.over;
	for (size_t i = 0; i < r.n; i++) {
		const struct atom *a = &r.c[i].a[0];

		if (!(a->mask & 1) || (a->val & 1) == par) /* a block, or a number of the set */
			cset_add_meq(s, 0, a->mask | 1, (a->val & ~1ULL) | par);
	}
}

enum { OWN_NONE, OWN_WHOLE, OWN_READ, OWN_WRITE };

static int own_call(const struct build *b, int nr, const struct policy_call *c)
{
	if (b->rt->own_n <= 0 || c->cls == POLICY_ALLOW || c->cls == POLICY_NATIVE)
		return OWN_NONE;
	if (nr == SCMP_SYS(exit) || nr == SCMP_SYS(rt_sigreturn))
		return OWN_WHOLE;
	return nr == SCMP_SYS(read) ? OWN_READ : nr == SCMP_SYS(write) ? OWN_WRITE : OWN_NONE;
}

/* clause o, for sandpit's own descriptors (small, the upper half 0), lies
 * inside a clause of s */
static int covered(const struct clause *o, const struct cset *s)
{
	static const struct atom upper0 = { ~LOW32, 0 };
	struct clause x = *o;

	if (!cset_atom_and(&o->a[0], &upper0, &x.a[0]))
		return 1;
	for (size_t i = 0; i < s->n; i++) {
		int k = 0;

		while (k < NARGS && implies(&x.a[k], &s->c[i].a[k]))
			k++;
		if (k == NARGS)
			return 1;
	}
	return 0;
}

/* U writes to B's socket only for a handler of the program's that must run
 * while T waits in a call for U (B then interrupts T's call): never where
 * the policy refuses every rt_sigaction */
static int handlers_possible(const struct policy *p)
{
	int cls = policy_call(p, SCMP_SYS(rt_sigaction))->cls;

	return cls != POLICY_DENY && cls != POLICY_KILL;
}

/* read or write: sandpit's descriptors always; with them, the policy's own
 * allow set where the two fit one shape (see the top of the file), else
 * the policy's allowed calls trap and T makes them.  Every other call
 * traps (T decides; a refusal is counted and logged, a kill explained). */
static int own_io(struct build *b, int nr, const struct policy_call *c, int which)
{
	struct cset own, all, fitted;
	struct shape sh;

	cset_clear(&own);
	if (which == OWN_WRITE && handlers_possible(b->p))
		cset_add_meq(&own, 0, LOW32, (uint32_t)b->rt->own_tb);
	own_every_other(&own, b->rt->own_t + (which == OWN_READ), b->rt->own_n);
	if (own.over || !own.n)
		return -E2BIG;
	if (c->cls == POLICY_THREAD) {
		call_set(b, c, c->nrules, &all);
		cset_or(&all, &own);
		if (!all.over && shape_of(&all, &sh)) {
			size_t i = 0;

			fit(&sh, &all, &fitted);
			while (i < own.n && covered(&own.c[i], &fitted))
				i++;
			if (i == own.n && !fitted.over)
				return add_clauses(b, SCMP_ACT_ALLOW, nr, &fitted);
		}
	}
	return add_clauses(b, SCMP_ACT_ALLOW, nr, &own);
}

static int decided_by_number(struct build *b, int nr)
{
	const struct policy_call *c = policy_call(b->p, nr);

	switch (own_call(b, nr, c)) {
	case OWN_WHOLE:
		return seccomp_rule_add_exact(b->ctx, SCMP_ACT_ALLOW, nr, 0);
	case OWN_READ:
	case OWN_WRITE:
		return own_io(b, nr, c, own_call(b, nr, c));
	default:
		return simple_call(b, nr, c);
	}
}

/* Calls decided by number, and sandpit's own; then the thread calls' allow
 * sets, then their errno sets, each in sweeps of rising cost. */
static int build(struct build *b, char *err, size_t errlen)
{
	static const long sweeps[] = { 0, 64, 256, LONG_MAX };
	int rc;

	for (int nr = 0; nr < POLICY_MAX_NR; nr++)
		if ((rc = decided_by_number(b, nr)) < 0)
			return bpf_fail_msg(err, errlen, nr, rc, "seccomp_rule_add");
	for (int errnos = 0; errnos < 2 - b->trap_deny; errnos++)
		for (size_t i = 1; i < sizeof(sweeps) / sizeof(sweeps[0]); i++) {
			b->cost_lo = sweeps[i - 1];
			b->cost_hi = sweeps[i];
			for (int nr = 0; nr < POLICY_MAX_NR; nr++) {
				const struct policy_call *c = policy_call(b->p, nr);

				if (c->cls != POLICY_THREAD || own_call(b, nr, c))
					continue;
				if ((rc = thread_call(b, nr, c, errnos)) < 0)
					return bpf_fail_msg(err, errlen, nr, rc, "seccomp_rule_add");
			}
		}
	return 0;
}

int policy_compile_bpf(const struct policy *p, const struct policy_runtime *rt, uint32_t flags,
		       scmp_filter_ctx *out, char *err, size_t errlen)
{
	uint32_t kill = flags & POLICY_BPF_NO_KILL_PROCESS ? SCMP_ACT_KILL : SCMP_ACT_KILL_PROCESS;
	uint32_t native = seccomp_arch_native();
	scmp_filter_ctx ctx;
	struct build *b;
	int rc;

	if (!out)
		return bpf_fail_msg(err, errlen, -1, -EINVAL, "bad arguments");
	*out = NULL;
	if (!p || !rt || (flags & ~(POLICY_BPF_NO_KILL_PROCESS | POLICY_BPF_TRAP_DENY)))
		return bpf_fail_msg(err, errlen, -1, -EINVAL, "bad arguments");
	if (rt->pid <= 0)
		return bpf_fail_msg(err, errlen, -1, -EINVAL, "runtime pid");
	ctx = seccomp_init(SCMP_ACT_TRAP);
	b = calloc(1, sizeof(*b));
	if (!ctx || !b) {
		seccomp_release(ctx);
		free(b);
		return bpf_fail_msg(err, errlen, -1, -ENOMEM, "seccomp_init");
	}
	/* the policy is in x86-64 numbers; every other architecture (i386's
	 * int $0x80, and x32 numbers, which libseccomp sends to the same
	 * action) is killed: invariant 6 */
	rc = 0;
	if (native != SCMP_ARCH_X86_64) {
		rc = seccomp_arch_add(ctx, SCMP_ARCH_X86_64);
		if (rc == 0)
			rc = seccomp_arch_remove(ctx, native);
	}
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, kill);
	/* the caller sets no_new_privs itself; a root caller may not need it */
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	/* some 500 numbers: a binary search, not a linear chain */
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
	if (rc < 0) {
		rc = bpf_fail_msg(err, errlen, -1, rc, "seccomp_attr_set");
		goto out;
	}
	b->ctx = ctx;
	b->p = p;
	b->rt = rt;
	b->kill = kill;
	b->trap_deny = !!(flags & POLICY_BPF_TRAP_DENY);
	b->budget = ARG_BUDGET;
	rc = build(b, err, errlen);
out:
	free(b);
	if (rc < 0) {
		seccomp_release(ctx);
		return rc;
	}
	*out = ctx;
	return 0;
}

static int export(const struct policy *p, const struct policy_runtime *rt, int fd, int pfc,
		  char *err, size_t errlen)
{
	scmp_filter_ctx ctx;
	int rc = policy_compile_bpf(p, rt, 0, &ctx, err, errlen);

	if (rc < 0)
		return rc;
	rc = pfc ? seccomp_export_pfc(ctx, fd) : seccomp_export_bpf(ctx, fd);
	seccomp_release(ctx);
	if (rc < 0)
		return bpf_fail_msg(err, errlen, -1, rc, pfc ? "seccomp_export_pfc" : "seccomp_export_bpf");
	return 0;
}

int policy_export_bpf(const struct policy *p, const struct policy_runtime *rt, int fd, char *err,
		      size_t errlen)
{
	return export(p, rt, fd, 0, err, errlen);
}

int policy_export_pfc(const struct policy *p, const struct policy_runtime *rt, int fd, char *err,
		      size_t errlen)
{
	return export(p, rt, fd, 1, err, errlen);
}

