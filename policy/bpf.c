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
 * Each of these is a set of argument vectors, built here as a union of
 * clauses, a clause being at most one comparison per argument (libseccomp's
 * limit).  Every clause is a subset of the true set (an under-approximation),
 * so BPF never answers differently from T; what is cut, or what BPF cannot
 * express (protected ranges, trusted tids), traps.
 *
 * Only SCMP_CMP_MASKED_EQ, SCMP_CMP_EQ and SCMP_CMP_NE are handed to
 * libseccomp.  Ranges (an fd outside sandpit's block, RULE_LE) become
 * aligned power-of-two blocks, one MASKED_EQ each: libseccomp 2.5.4 builds
 * wrong programs when several rules of one call use LT/GT/GE on the same
 * argument (the accumulator still holds the low word where a later node
 * tests the high word), and BPF must never allow what T refuses.
 *
 * Comparisons on descriptors and pids use the low 32 bits only (a mask of
 * 0xffffffff): the kernel truncates an int argument, and T compares 32-bit
 * registers, so the upper half is irrelevant whether U sign-extended
 * (AT_FDCWD as 0xffffffffffffff9c) or not (0x00000000ffffff9c). */
#include <errno.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

#define NARGS 6
#define MAX_CLAUSES 64       /* per set; a longer set is cut (the rest traps) */
#define FD_FREE_BLOCKS 8     /* blocks allowed for one RULE_FD_FREE */
#define BITSET_FAIL_BLOCKS 16

#define LOW32 0xffffffffULL

enum atom_op { A_ANY, A_MEQ, A_NE }; /* A_MEQ: (a & mask) == val; A_NE: a != val */

struct atom {
	uint64_t mask, val;
	int op;
};

struct clause {
	struct atom a[NARGS];
};

struct cset {
	size_t n;
	struct clause c[MAX_CLAUSES];
};

static void set_true(struct cset *s)
{
	memset(s, 0, sizeof(*s));
	s->n = 1;
}

/* Sets only shrink when they overflow: any subset of an under-approximation
 * is one too. */
static void set_add(struct cset *s, const struct clause *c)
{
	for (size_t i = 0; i < s->n; i++)
		if (!memcmp(&s->c[i], c, sizeof(*c)))
			return;
	if (s->n < MAX_CLAUSES)
		s->c[s->n++] = *c;
}

static void set_or(struct cset *s, const struct cset *t)
{
	for (size_t i = 0; i < t->n; i++)
		set_add(s, &t->c[i]);
}

static struct clause one(int arg, int op, uint64_t mask, uint64_t val)
{
	struct clause c;

	memset(&c, 0, sizeof(c));
	if (op == A_MEQ && mask == 0)
		return c; /* always true */
	c.a[arg].op = op;
	c.a[arg].mask = op == A_MEQ ? mask : 0;
	c.a[arg].val = val;
	return c;
}

static void add_meq(struct cset *s, int arg, uint64_t mask, uint64_t val)
{
	struct clause c = one(arg, A_MEQ, mask, val);

	set_add(s, &c);
}

/* x and y on one argument; 0 when the conjunction is empty or needs two
 * comparisons of that argument (then the clause is dropped). */
static int atom_and(const struct atom *x, const struct atom *y, struct atom *out)
{
	if (x->op == A_ANY || y->op == A_ANY) {
		*out = x->op == A_ANY ? *y : *x;
		return 1;
	}
	if (x->op == A_MEQ && y->op == A_MEQ) {
		if ((x->val & y->mask) != (y->val & x->mask))
			return 0;
		*out = (struct atom){ .op = A_MEQ, .mask = x->mask | y->mask, .val = x->val | y->val };
		return 1;
	}
	if (x->op == A_NE && y->op == A_NE) {
		*out = *x;
		return x->val == y->val;
	}
	if (x->op == A_NE) {
		const struct atom *t = x;

		x = y;
		y = t;
	}
	/* x masked-equal, y not-equal */
	if ((y->val & x->mask) != x->val) {
		*out = *x; /* y follows from x */
		return 1;
	}
	return 0; /* x single-valued and equal to y's value: empty; else inexpressible */
}

static void set_and(const struct cset *s, const struct cset *t, struct cset *out)
{
	struct clause c;

	out->n = 0;
	for (size_t i = 0; i < s->n; i++)
		for (size_t j = 0; j < t->n; j++) {
			int ok = 1;

			for (int k = 0; k < NARGS && ok; k++)
				ok = atom_and(&s->c[i].a[k], &t->c[j].a[k], &c.a[k]);
			if (ok)
				set_add(out, &c);
		}
}

/* (a & mask) != val, exactly: for each bit b of mask, from the top, the
 * clause "mask's bits above b as in val, bit b not".  Disjoint, popcount(mask)
 * clauses; a full mask is one SCMP_CMP_NE. */
static void set_ne(struct cset *s, int arg, uint64_t mask, uint64_t val)
{
	s->n = 0;
	if (val & ~mask) {
		set_true(s); /* never equal */
		return;
	}
	if (mask == ~0ULL) {
		struct clause c = one(arg, A_NE, 0, val);

		set_add(s, &c);
		return;
	}
	for (int b = 63; b >= 0; b--) {
		uint64_t bit = 1ULL << b, m = mask & ~(bit - 1);

		if (mask & bit)
			add_meq(s, arg, m, (val & m & ~bit) | (~val & bit));
	}
}

/* [lo, hi] of the `width`-bit values (width 32: the low half of the
 * argument, the upper half free), as aligned blocks in ascending order; at
 * most `max` of them (the first ones). `flip` is xor-ed into each value: the
 * bias that turns signed ranges into unsigned ones. */
static void add_range(struct cset *s, int arg, uint64_t lo, uint64_t hi, int width, uint64_t flip,
		      size_t max)
{
	uint64_t all = width == 64 ? ~0ULL : (1ULL << width) - 1;

	for (size_t n = 0; lo <= hi && n < max; n++) {
		int k = 0;
		uint64_t m;

		/* the largest aligned block at lo that stays within hi */
		while (k < width && !(lo & (1ULL << k)) &&
		       hi - lo >= (k + 1 == 64 ? ~0ULL : (2ULL << k) - 1))
			k++;
		m = all & ~(k == 64 ? ~0ULL : (1ULL << k) - 1);
		add_meq(s, arg, m, (lo ^ flip) & m);
		if (k == 64 || (k == width) || hi - lo == (1ULL << k) - 1)
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

/* RULE_BITSET: pass is one SCMP_CMP_EQ per value; fail, the gaps between the
 * values, as blocks from 0 upwards, cut after BITSET_FAIL_BLOCKS. */
static void bitset_sets(const struct policy_rule *r, struct cset *pass, struct cset *fail)
{
	uint64_t v[64], next = 0;
	size_t n = 0, left = BITSET_FAIL_BLOCKS;
	int done = 0;

	for (int d = 0; d < 64; d++)
		if ((r->mask >> d) & 1) {
			struct clause c = one(r->arg, A_MEQ, ~0ULL, r->val + d);

			set_add(pass, &c);
			v[n++] = r->val + d;
		}
	qsort(v, n, sizeof(v[0]), cmp_u64);
	for (size_t i = 0; i <= n && !done && left; i++) {
		uint64_t end = i < n ? v[i] : 0;
		size_t before = fail->n;

		if (i < n && end == next) { /* no gap */
			done = end == ~0ULL;
			next = end + 1;
			continue;
		}
		add_range(fail, r->arg, next, i < n ? end - 1 : ~0ULL, 64, 0, left);
		left -= fail->n - before < left ? fail->n - before : left;
		if (i < n) {
			done = end == ~0ULL;
			next = end + 1;
		}
	}
}

/* Pass and fail sets of one rule's check, its condition aside. */
static void check_sets(const struct policy_rule *r, const struct policy_runtime *rt,
		       struct cset *pass, struct cset *fail)
{
	pass->n = fail->n = 0;
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
		add_int_range(pass, r->arg, INT_MIN, (int64_t)rt->fd_lo - 1, FD_FREE_BLOCKS);
		add_int_range(pass, r->arg, (int64_t)rt->fd_hi + 1, INT_MAX,
			      FD_FREE_BLOCKS - pass->n);
		add_int_range(fail, r->arg, rt->fd_lo, rt->fd_hi, MAX_CLAUSES);
		break;
	case RULE_SELF_PID: /* T: (uint32_t)a == pid */
		add_meq(pass, r->arg, LOW32, (uint32_t)rt->pid);
		set_ne(fail, r->arg, LOW32, (uint32_t)rt->pid);
		break;
	case RULE_LE:
		add_range(pass, r->arg, 0, r->val, 64, 0, MAX_CLAUSES);
		if (r->val != ~0ULL)
			add_range(fail, r->arg, r->val + 1, ~0ULL, 64, 0, MAX_CLAUSES);
		break;
	case RULE_BITSET:
		bitset_sets(r, pass, fail);
		break;
	default: /* RULE_RANGE_FREE, RULE_NOT_TID: only T knows; both sets empty */
		break;
	}
}

/* A rule applies only when (a[carg] & cmask) != 0; otherwise it passes. */
static void rule_sets(const struct policy_rule *r, const struct policy_runtime *rt,
		      struct cset *pass, struct cset *fail, struct cset *tmp)
{
	struct cset *cond = tmp, *check_pass = tmp + 1, *check_fail = tmp + 2;

	check_sets(r, rt, check_pass, check_fail);
	if (r->carg == POLICY_NOARG) {
		*pass = *check_pass;
		*fail = *check_fail;
		return;
	}
	set_ne(cond, r->carg, r->cmask, 0);
	set_and(cond, check_fail, fail);
	set_and(cond, check_pass, pass);
	{
		struct cset *clear = check_fail; /* reused */

		clear->n = 0;
		add_meq(clear, r->carg, r->cmask, 0);
		set_or(clear, pass);
		*pass = *clear;
	}
}

struct work {
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

static int emit(scmp_filter_ctx ctx, uint32_t action, int nr, const struct cset *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct scmp_arg_cmp cmp[NARGS];
		unsigned int n = 0;
		int rc;

		for (int k = 0; k < NARGS; k++) {
			const struct atom *a = &s->c[i].a[k];

			if (a->op == A_NE)
				cmp[n++] = SCMP_CMP64(k, SCMP_CMP_NE, a->val);
			else if (a->op == A_MEQ && a->mask == ~0ULL)
				cmp[n++] = SCMP_CMP64(k, SCMP_CMP_EQ, a->val);
			else if (a->op == A_MEQ)
				cmp[n++] = SCMP_CMP64(k, SCMP_CMP_MASKED_EQ, a->mask, a->val);
		}
		rc = seccomp_rule_add_exact_array(ctx, action, nr, n, cmp);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* allow = every rule passes; rule i's errno where rules 0..i-1 pass and i fails. */
static int thread_call(scmp_filter_ctx ctx, int nr, const struct policy_call *c,
		       const struct policy_runtime *rt, struct work *w)
{
	int rc;

	set_true(&w->allow);
	for (int i = 0; i < c->nrules; i++) {
		const struct policy_rule *r = &c->rules[i];

		rule_sets(r, rt, &w->pass, &w->fail, w->tmp);
		set_and(&w->allow, &w->fail, &w->err);
		rc = emit(ctx, SCMP_ACT_ERRNO(r->err ? r->err : c->err), nr, &w->err);
		if (rc < 0)
			return rc;
		set_and(&w->allow, &w->pass, &w->next);
		w->allow = w->next;
	}
	return emit(ctx, SCMP_ACT_ALLOW, nr, &w->allow);
}

static int build(scmp_filter_ctx ctx, const struct policy *p, const struct policy_runtime *rt,
		 uint32_t kill, struct work *w, char *err, size_t errlen)
{
	for (int nr = 0; nr < POLICY_MAX_NR; nr++) {
		const struct policy_call *c = policy_call(p, nr);
		int rc = 0;

		switch (c->cls) {
		case POLICY_NATIVE:
		case POLICY_ALLOW:
			rc = seccomp_rule_add_exact(ctx, SCMP_ACT_ALLOW, nr, 0);
			break;
		case POLICY_DENY: /* unmentioned numbers too: ENOSYS, not a trap */
			rc = seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(c->err), nr, 0);
			break;
		case POLICY_KILL:
			rc = seccomp_rule_add_exact(ctx, kill, nr, 0);
			break;
		case POLICY_THREAD:
			rc = thread_call(ctx, nr, c, rt, w);
			break;
		case POLICY_EMU:
		case POLICY_PROCESS: /* T or B decides: the default action, TRAP */
			break;
		default:
			rc = -EINVAL;
			break;
		}
		if (rc < 0)
			return fail_msg(err, errlen, nr, rc, "seccomp_rule_add");
	}
	return 0;
}

int policy_compile_bpf(const struct policy *p, const struct policy_runtime *rt, uint32_t flags,
		       scmp_filter_ctx *out, char *err, size_t errlen)
{
	uint32_t kill = flags & POLICY_BPF_NO_KILL_PROCESS ? SCMP_ACT_KILL : SCMP_ACT_KILL_PROCESS;
	uint32_t native = seccomp_arch_native();
	scmp_filter_ctx ctx;
	struct work *w;
	int rc;

	*out = NULL;
	if (!p || !rt || (flags & ~POLICY_BPF_NO_KILL_PROCESS))
		return fail_msg(err, errlen, -1, -EINVAL, "bad arguments");
	if (rt->pid <= 0)
		return fail_msg(err, errlen, -1, -EINVAL, "runtime pid");
	ctx = seccomp_init(SCMP_ACT_TRAP);
	w = malloc(sizeof(*w));
	if (!ctx || !w) {
		seccomp_release(ctx);
		free(w);
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
	/* about 1000 numbers: a binary search, not a linear chain */
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
	if (rc < 0) {
		rc = fail_msg(err, errlen, -1, rc, "seccomp_attr_set");
		goto out;
	}
	rc = build(ctx, p, rt, kill, w, err, errlen);
out:
	free(w);
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
