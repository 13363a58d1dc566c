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
 * Each of these is a set of argument vectors, built here as a union of
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
 * One file past 700 lines on purpose: the clause algebra, the shape rule
 * and the check against rule_eval.c are one argument for why the filter is
 * exact; split, no part could be read as correct on its own. */
#include <errno.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/filter.h>

#include "policy/policy.h"
#include "policy/rule_eval.h"

#define NARGS 6
#define MAX_CLAUSES 64       /* per set; a longer one is dropped (it traps) */
#define FD_FREE_BLOCKS 4     /* [0, lo) from 0 up, then negative fds: 0..895 for lo 1000 */
#define BITSET_FAIL_BLOCKS 8
#define RANGE_BLOCKS 8       /* RULE_LE: the first blocks from the low end */
#define NE_BITS 32           /* "not equal": the lowest 32 bits of the mask */

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

#define LOW32 0xffffffffULL

/* Numbers from here on exist in no x86-64 kernel (x32's 512-547 need the
 * x32 bit, which is killed anyway) and lie beyond the T table, which answers
 * ENOSYS for them: the filter leaves an ENOSYS there to T rather than spend
 * some 650 instructions (of BPF_MAXINSNS) and half its build time on them. */
#define BPF_EXPLICIT_NR POLICY_DEFAULT_NR

/* (a & mask) == val, val within mask; mask 0: any value */
struct atom {
	uint64_t mask, val;
};

struct clause {
	struct atom a[NARGS];
};

struct cset {
	size_t n;
	int over; /* a clause did not fit: the set is incomplete, not worth emitting */
	struct clause c[MAX_CLAUSES];
};

static void set_clear(struct cset *s)
{
	s->n = 0;
	s->over = 0;
}

static void set_true(struct cset *s)
{
	memset(s, 0, sizeof(*s));
	s->n = 1;
}

/* A set that overflows stays a correct (smaller) under-approximation. */
static void set_add(struct cset *s, const struct clause *c)
{
	for (size_t i = 0; i < s->n; i++) {
		int k = 0;

		while (k < NARGS && s->c[i].a[k].mask == c->a[k].mask &&
		       s->c[i].a[k].val == c->a[k].val)
			k++;
		if (k == NARGS)
			return;
	}
	if (s->n < MAX_CLAUSES)
		s->c[s->n++] = *c;
	else
		s->over = 1;
}

static void set_or(struct cset *s, const struct cset *t)
{
	s->over |= t->over;
	for (size_t i = 0; i < t->n; i++)
		set_add(s, &t->c[i]);
}

static void add_meq(struct cset *s, int arg, uint64_t mask, uint64_t val)
{
	struct clause c;

	memset(&c, 0, sizeof(c));
	c.a[arg].mask = mask;
	c.a[arg].val = val & mask;
	set_add(s, &c);
}

/* x and y on one argument; 0 when no value satisfies both. */
static int atom_and(const struct atom *x, const struct atom *y, struct atom *out)
{
	if ((x->val & y->mask) != (y->val & x->mask))
		return 0;
	out->mask = x->mask | y->mask;
	out->val = x->val | y->val;
	return 1;
}

static void set_and(const struct cset *s, const struct cset *t, struct cset *out)
{
	struct clause c;

	set_clear(out);
	out->over = s->over || t->over;
	for (size_t i = 0; i < s->n; i++)
		for (size_t j = 0; j < t->n; j++) {
			int ok = 1;

			for (int k = 0; k < NARGS && ok; k++)
				ok = atom_and(&s->c[i].a[k], &t->c[j].a[k], &c.a[k]);
			if (ok)
				set_add(out, &c);
		}
}

/* (a & mask) != val: for each bit b of mask, the clause "mask's bits above
 * b as in val, bit b not".  Disjoint, and exact when taken for every bit of
 * mask; taken for its lowest NE_BITS bits only, it still covers every value
 * whose higher bits agree with val (a != AF_UNIX: every other 32-bit value). */
static void set_ne(struct cset *s, int arg, uint64_t mask, uint64_t val)
{
	int nbits = 0;

	set_clear(s);
	if (val & ~mask) {
		set_true(s); /* never equal */
		return;
	}
	for (int b = 0; b < 64 && nbits < NE_BITS; b++) {
		uint64_t bit = 1ULL << b, m = mask & ~(bit - 1);

		if (mask & bit) {
			add_meq(s, arg, m, (val & ~bit) | (~val & bit));
			nbits++;
		}
	}
}

/* [lo, hi] of the `width`-bit values (width 32: the low half of the
 * argument, the upper half free), as aligned power-of-two blocks in
 * ascending order, the first `max` of them.  `flip` is xor-ed into each
 * value: the bias that turns a signed range into an unsigned one. */
static void add_range(struct cset *s, int arg, uint64_t lo, uint64_t hi, int width, uint64_t flip,
		      size_t max)
{
	uint64_t all = width == 64 ? ~0ULL : (1ULL << width) - 1;

	for (size_t n = 0; n < max && lo <= hi; n++) {
		uint64_t m;
		int k = 0;

		/* the largest block 2^k aligned at lo that ends at or before hi */
		while (k < width && !(lo & (1ULL << k)) && hi - lo >= (2ULL << k) - 1)
			k++;
		m = k == 64 ? 0 : all & ~((1ULL << k) - 1);
		add_meq(s, arg, m, (lo ^ flip) & m);
		if (k == 64 || hi - lo == (1ULL << k) - 1)
			break;
		lo += 1ULL << k;
	}
}

/* Signed int range of the low 32 bits. */
static void add_int_range(struct cset *s, int arg, int64_t lo, int64_t hi, size_t max)
{
	if (lo < INT_MIN)
		lo = INT_MIN;
	if (hi > INT_MAX)
		hi = INT_MAX;
	if (lo <= hi)
		add_range(s, arg, (uint64_t)(lo - INT_MIN), (uint64_t)(hi - INT_MIN), 32, 1ULL << 31,
			  max);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* RULE_BITSET: pass is one SCMP_CMP_EQ per value; fail, the gaps between
 * the values as blocks from 0 upwards, the first BITSET_FAIL_BLOCKS of them. */
static void bitset_sets(const struct policy_rule *r, struct cset *pass, struct cset *fail)
{
	uint64_t v[64] = { 0 }, from = 0;
	int more = 1; /* values from `from` upwards are still to be covered */
	size_t n = 0;

	for (int d = 0; d < 64; d++)
		if ((r->mask >> d) & 1) {
			add_meq(pass, r->arg, ~0ULL, r->val + d);
			v[n++] = r->val + d;
		}
	qsort(v, n, sizeof(v[0]), cmp_u64);
	for (size_t i = 0; i < n && more; i++) {
		if (v[i] > from)
			add_range(fail, r->arg, from, v[i] - 1, 64, 0, BITSET_FAIL_BLOCKS - fail->n);
		more = v[i] != ~0ULL;
		from = v[i] + 1;
	}
	if (more)
		add_range(fail, r->arg, from, ~0ULL, 64, 0, BITSET_FAIL_BLOCKS - fail->n);
}

/* Pass and fail sets of one rule's check, its condition aside. */
static void check_sets(const struct policy_rule *r, const struct policy_runtime *rt,
		       struct cset *pass, struct cset *fail)
{
	set_clear(pass);
	set_clear(fail);
	switch (r->op) {
	case RULE_MASK_ZERO:
		add_meq(pass, r->arg, r->mask, 0);
		set_ne(fail, r->arg, r->mask, 0);
		break;
	case RULE_MASKED_EQ:
		if (!(r->val & ~r->mask))
			add_meq(pass, r->arg, r->mask, r->val);
		set_ne(fail, r->arg, r->mask, r->val);
		break;
	case RULE_MASKED_NE:
		set_ne(pass, r->arg, r->mask, r->val);
		if (!(r->val & ~r->mask))
			add_meq(fail, r->arg, r->mask, r->val);
		break;
	case RULE_FD_FREE: /* T: (int)a < lo || (int)a > hi */
		if (rt->fd_lo > rt->fd_hi) {
			set_true(pass);
			break;
		}
		/* the common descriptors first: a shape that must pick one
		 * block picks [0, ...) */
		add_int_range(pass, r->arg, 0, (int64_t)rt->fd_lo - 1, FD_FREE_BLOCKS - 1);
		add_int_range(pass, r->arg, INT_MIN, -1, 1);
		add_int_range(pass, r->arg, (int64_t)rt->fd_hi + 1, INT_MAX,
			      FD_FREE_BLOCKS - pass->n);
		add_int_range(fail, r->arg, rt->fd_lo, rt->fd_hi, MAX_CLAUSES);
		break;
	case RULE_SELF_PID: /* T: (uint32_t)a == pid */
		/* only the pass: "!= pid" would take a block per bit of the
		 * pid, so the program's shape would change with it and could
		 * not be built ahead of time (policy_bpf_write_template); a
		 * signal to another process traps and T refuses it */
		add_meq(pass, r->arg, LOW32, (uint32_t)rt->pid);
		break;
	case RULE_LE:
		add_range(pass, r->arg, 0, r->val, 64, 0, RANGE_BLOCKS);
		if (r->val != ~0ULL)
			add_range(fail, r->arg, r->val + 1, ~0ULL, 64, 0, RANGE_BLOCKS);
		break;
	case RULE_BITSET:
		bitset_sets(r, pass, fail);
		break;
	default: /* rule_needs_t: only T knows; both sets empty */
		break;
	}
}

/* Keeps the clauses of s at whose one point (every argument its atom's
 * value, the others 0) the rule's meaning (policy/rule_eval.c) gives
 * `want`: a clause the meaning contradicts would make BPF answer what T
 * does not, so it is dropped (those vectors trap to T). */
static void agree(struct cset *s, const struct policy_rule *r, const struct policy_runtime *rt,
		  int want)
{
	const struct rule_world w = { .rt = *rt };
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++) {
		uint64_t a[NARGS];

		for (int k = 0; k < NARGS; k++)
			a[k] = s->c[i].a[k].val;
		if (policy_rule_check(r, 0, a, &w) == want)
			s->c[n++] = s->c[i];
	}
	s->n = n;
}

/* A rule applies only when (a[carg] & cmask) != 0, otherwise it passes:
 * pass = clear(cond) | (cond & pass(check)), fail = cond & fail(check). */
static void rule_sets(const struct policy_rule *r, const struct policy_runtime *rt,
		      struct cset *pass, struct cset *fail, struct cset *tmp)
{
	struct cset *cond = tmp, *check_pass = tmp + 1, *check_fail = tmp + 2;

	check_sets(r, rt, check_pass, check_fail);
	if (r->carg == POLICY_NOARG) {
		*pass = *check_pass;
		*fail = *check_fail;
	} else {
		set_ne(cond, r->carg, r->cmask, 0);
		set_and(cond, check_fail, fail);
		set_clear(pass);
		add_meq(pass, r->carg, r->cmask, 0);
		set_and(cond, check_pass, check_fail);
		set_or(pass, check_fail);
	}
	agree(pass, r, rt, RULE_PASS);
	agree(fail, r, rt, RULE_FAIL);
}

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

static int fail_msg(char *err, size_t errlen, int nr, int rc, const char *what)
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
	set_true(&b->allow);
	for (int i = 0; i < c->nrules; i++) {
		rule_sets(&c->rules[i], b->rt, &b->pass, &b->fail, b->tmp);
		if (i == which) {
			set_and(&b->allow, &b->fail, out);
			return;
		}
		set_and(&b->allow, &b->pass, &b->next);
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
	set_clear(out);
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
				ok = atom_and(a, &sh->high, &c.a[j]) &&
				     (c.a[j].mask & ~LOW32) == sh->high.mask;
			}
		}
		if (ok)
			set_add(out, &c);
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

	set_clear(&r);
	if (n > 0)
		add_range(&r, 0, (uint32_t)first, (uint32_t)first + 2 * (uint64_t)(n - 1), 32, 0,
			  MAX_CLAUSES);
	s->over |= r.over;
	for (size_t i = 0; i < r.n; i++) {
		const struct atom *a = &r.c[i].a[0];

		if (!(a->mask & 1) || (a->val & 1) == par) /* a block, or a number of the set */
			add_meq(s, 0, a->mask | 1, (a->val & ~1ULL) | par);
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

	if (!atom_and(&o->a[0], &upper0, &x.a[0]))
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

	set_clear(&own);
	if (which == OWN_WRITE && handlers_possible(b->p))
		add_meq(&own, 0, LOW32, (uint32_t)b->rt->own_tb);
	own_every_other(&own, b->rt->own_t + (which == OWN_READ), b->rt->own_n);
	if (own.over || !own.n)
		return -E2BIG;
	if (c->cls == POLICY_THREAD) {
		call_set(b, c, c->nrules, &all);
		set_or(&all, &own);
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
			return fail_msg(err, errlen, nr, rc, "seccomp_rule_add");
	for (int errnos = 0; errnos < 2 - b->trap_deny; errnos++)
		for (size_t i = 1; i < sizeof(sweeps) / sizeof(sweeps[0]); i++) {
			b->cost_lo = sweeps[i - 1];
			b->cost_hi = sweeps[i];
			for (int nr = 0; nr < POLICY_MAX_NR; nr++) {
				const struct policy_call *c = policy_call(b->p, nr);

				if (c->cls != POLICY_THREAD || own_call(b, nr, c))
					continue;
				if ((rc = thread_call(b, nr, c, errnos)) < 0)
					return fail_msg(err, errlen, nr, rc, "seccomp_rule_add");
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
		return fail_msg(err, errlen, -1, -EINVAL, "bad arguments");
	*out = NULL;
	if (!p || !rt || (flags & ~(POLICY_BPF_NO_KILL_PROCESS | POLICY_BPF_TRAP_DENY)))
		return fail_msg(err, errlen, -1, -EINVAL, "bad arguments");
	if (rt->pid <= 0)
		return fail_msg(err, errlen, -1, -EINVAL, "runtime pid");
	ctx = seccomp_init(SCMP_ACT_TRAP);
	b = calloc(1, sizeof(*b));
	if (!ctx || !b) {
		seccomp_release(ctx);
		free(b);
		return fail_msg(err, errlen, -1, -ENOMEM, "seccomp_init");
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
		rc = fail_msg(err, errlen, -1, rc, "seccomp_attr_set");
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
		return fail_msg(err, errlen, -1, rc, pfc ? "seccomp_export_pfc" : "seccomp_export_bpf");
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

/* ---- templates (see policy.h) ---- */

/* The exported program for pid, in memory (free it). */
static int export_mem(const struct policy *p, pid_t pid, int fd_lo, int fd_hi, uint32_t flags,
		      struct sock_filter **prog, size_t *n, char *err, size_t errlen)
{
	struct policy_runtime rt = { .pid = pid, .fd_lo = fd_lo, .fd_hi = fd_hi };
	scmp_filter_ctx ctx;
	int rc = policy_compile_bpf(p, &rt, flags, &ctx, err, errlen);
	int fd;
	off_t len;

	if (rc < 0)
		return rc;
	fd = memfd_create("sandpit-template", MFD_CLOEXEC);
	rc = fd < 0 ? -errno : seccomp_export_bpf(ctx, fd);
	seccomp_release(ctx);
	if (rc < 0)
		goto out;
	len = lseek(fd, 0, SEEK_END);
	*prog = len > 0 && len % 8 == 0 ? malloc((size_t)len) : NULL;
	if (!*prog || pread(fd, *prog, (size_t)len, 0) != len) {
		free(*prog);
		rc = -EIO;
		goto out;
	}
	*n = (size_t)len / 8;
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		fail_msg(err, errlen, -1, rc, "exporting the filter");
	return rc;
}

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int policy_bpf_write_template(const struct policy *p, int fd_lo, int fd_hi, uint32_t flags, int fd,
			      char *err, size_t errlen)
{
	/* two pids no other constant of the program is likely to equal */
	static const pid_t pid_a = 0x1b2d3c4, pid_b = 0x2c3e4d5;
	struct sock_filter *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	uint32_t *slot = NULL, nslots = 0;
	int rc = 0;

	/* built without sandpit's own descriptors, which start-up chooses: a
	 * template holds only for a policy that allows their calls whole */
	for (size_t i = 0; i < 4; i++) {
		static const char *const own[] = { "read", "write", "exit", "rt_sigreturn" };
		int cls = policy_call(p, seccomp_syscall_resolve_name(own[i]))->cls;

		if (cls != POLICY_ALLOW && cls != POLICY_NATIVE)
			return fail_msg(err, errlen, -1, -EINVAL, "a template needs read, write, "
				       "exit and rt_sigreturn allowed");
	}
	rc = export_mem(p, pid_a, fd_lo, fd_hi, flags, &a, &na, err, errlen);

	rc = rc < 0 ? rc : export_mem(p, pid_b, fd_lo, fd_hi, flags, &b, &nb, err, errlen);
	if (rc < 0)
		goto out;
	slot = calloc(na ? na : 1, sizeof(*slot));
	if (!slot) {
		rc = -ENOMEM;
		goto out;
	}
	rc = na == nb ? 0 : -EINVAL;
	for (size_t i = 0; !rc && i < na; i++) {
		if (!memcmp(&a[i], &b[i], sizeof(a[i])))
			continue;
		/* the only difference a pid may make: the constant itself */
		if (a[i].code != b[i].code || a[i].jt != b[i].jt || a[i].jf != b[i].jf ||
		    a[i].k != (uint32_t)pid_a || b[i].k != (uint32_t)pid_b)
			rc = -EINVAL;
		slot[nslots++] = (uint32_t)i;
	}
	if (rc < 0) {
		fail_msg(err, errlen, -1, rc, "the program changes shape with the pid");
		goto out;
	}
	struct policy_bpf_template h = { POLICY_BPF_TEMPLATE_MAGIC, flags, fd_lo, fd_hi,
					 (uint32_t)na, nslots };
	rc = write_all(fd, &h, sizeof(h));
	rc = rc < 0 ? rc : write_all(fd, slot, nslots * sizeof(*slot));
	rc = rc < 0 ? rc : write_all(fd, a, na * sizeof(*a));
	if (rc < 0)
		fail_msg(err, errlen, -1, rc, "writing the template");
out:
	free(a);
	free(b);
	free(slot);
	return rc;
}

int policy_bpf_from_template(const void *blob, size_t len, pid_t pid, int fd_lo, int fd_hi,
			     uint32_t flags, int fd)
{
	const uint8_t *at = blob, *end = at + len;

	while ((size_t)(end - at) >= sizeof(struct policy_bpf_template)) {
		struct policy_bpf_template h;
		memcpy(&h, at, sizeof(h));
		size_t body = (size_t)h.nslots * 4 + (size_t)h.ninsn * sizeof(struct sock_filter);
		if (h.magic != POLICY_BPF_TEMPLATE_MAGIC || h.nslots > h.ninsn ||
		    body > (size_t)(end - at) - sizeof(h))
			return -EINVAL;
		const uint8_t *slots = at + sizeof(h), *insns = slots + (size_t)h.nslots * 4;
		at = insns + (size_t)h.ninsn * sizeof(struct sock_filter);
		if (h.flags != flags || h.fd_lo != fd_lo || h.fd_hi != fd_hi)
			continue;
		struct sock_filter *prog = malloc((size_t)h.ninsn * sizeof(*prog));
		if (!prog)
			return -ENOMEM;
		memcpy(prog, insns, (size_t)h.ninsn * sizeof(*prog));
		for (uint32_t i = 0; i < h.nslots; i++) {
			uint32_t s;
			memcpy(&s, slots + 4 * (size_t)i, 4);
			if (s >= h.ninsn) {
				free(prog);
				return -EINVAL;
			}
			prog[s].k = (uint32_t)pid;
		}
		int rc = write_all(fd, prog, (size_t)h.ninsn * sizeof(*prog));
		free(prog);
		return rc;
	}
	return -ENOENT;
}
