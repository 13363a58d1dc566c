/* The filter's sets of argument vectors (see the top of policy/bpf.c): a
 * union of clauses, a clause being at most one comparison per argument;
 * their algebra, and each rule's pass and fail sets, every clause of them
 * checked against the rule's meaning (policy/rule_eval.c, what T runs). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "policy/bpf_clause.h"
#include "policy/rule_eval.h"

#define FD_FREE_BLOCKS 4     /* [0, lo) from 0 up, then negative fds: 0..895 for lo 1000 */
#define BITSET_FAIL_BLOCKS 8
#define RANGE_BLOCKS 8       /* RULE_LE: the first blocks from the low end */
#define NE_BITS 32           /* "not equal": the lowest 32 bits of the mask */

void cset_clear(struct cset *s)
{
	s->n = 0;
	s->over = 0;
}

void cset_true(struct cset *s)
{
	memset(s, 0, sizeof(*s));
	s->n = 1;
}

/* A set that overflows stays a correct (smaller) under-approximation. */
void cset_add(struct cset *s, const struct clause *c)
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

void cset_or(struct cset *s, const struct cset *t)
{
	s->over |= t->over;
	for (size_t i = 0; i < t->n; i++)
		cset_add(s, &t->c[i]);
}

void cset_add_meq(struct cset *s, int arg, uint64_t mask, uint64_t val)
{
	struct clause c;

	memset(&c, 0, sizeof(c));
	c.a[arg].mask = mask;
	c.a[arg].val = val & mask;
	cset_add(s, &c);
}

/* x and y on one argument; 0 when no value satisfies both. */
int cset_atom_and(const struct atom *x, const struct atom *y, struct atom *out)
{
	if ((x->val & y->mask) != (y->val & x->mask))
		return 0;
	out->mask = x->mask | y->mask;
	out->val = x->val | y->val;
	return 1;
}

void cset_and(const struct cset *s, const struct cset *t, struct cset *out)
{
	struct clause c;

	cset_clear(out);
	out->over = s->over || t->over;
	for (size_t i = 0; i < s->n; i++)
		for (size_t j = 0; j < t->n; j++) {
			int ok = 1;

			for (int k = 0; k < NARGS && ok; k++)
				ok = cset_atom_and(&s->c[i].a[k], &t->c[j].a[k], &c.a[k]);
			if (ok)
				cset_add(out, &c);
		}
}

/* (a & mask) != val: for each bit b of mask, the clause "mask's bits above
 * b as in val, bit b not".  Disjoint, and exact when taken for every bit of
 * mask; taken for its lowest NE_BITS bits only, it still covers every value
 * whose higher bits agree with val (a != AF_UNIX: every other 32-bit value). */
static void set_ne(struct cset *s, int arg, uint64_t mask, uint64_t val)
{
	int nbits = 0;

	cset_clear(s);
	if (val & ~mask) {
		cset_true(s); /* never equal */
		return;
	}
	for (int b = 0; b < 64 && nbits < NE_BITS; b++) {
		uint64_t bit = 1ULL << b, m = mask & ~(bit - 1);

		if (mask & bit) {
			cset_add_meq(s, arg, m, (val & ~bit) | (~val & bit));
			nbits++;
		}
	}
}

/* [lo, hi] of the `width`-bit values (width 32: the low half of the
 * argument, the upper half free), as aligned power-of-two blocks in
 * ascending order, the first `max` of them.  `flip` is xor-ed into each
 * value: the bias that turns a signed range into an unsigned one. */
void cset_add_range(struct cset *s, int arg, uint64_t lo, uint64_t hi, int width, uint64_t flip,
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
		cset_add_meq(s, arg, m, (lo ^ flip) & m);
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
		cset_add_range(s, arg, (uint64_t)(lo - INT_MIN), (uint64_t)(hi - INT_MIN), 32, 1ULL << 31,
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
			cset_add_meq(pass, r->arg, ~0ULL, r->val + d);
			v[n++] = r->val + d;
		}
	qsort(v, n, sizeof(v[0]), cmp_u64);
	for (size_t i = 0; i < n && more; i++) {
		if (v[i] > from)
			cset_add_range(fail, r->arg, from, v[i] - 1, 64, 0, BITSET_FAIL_BLOCKS - fail->n);
		more = v[i] != ~0ULL;
		from = v[i] + 1;
	}
	if (more)
		cset_add_range(fail, r->arg, from, ~0ULL, 64, 0, BITSET_FAIL_BLOCKS - fail->n);
}

/* Pass and fail sets of one rule's check, its condition aside. */
static void check_sets(const struct policy_rule *r, const struct policy_runtime *rt,
		       struct cset *pass, struct cset *fail)
{
	cset_clear(pass);
	cset_clear(fail);
	switch (r->op) {
	case RULE_MASK_ZERO:
		cset_add_meq(pass, r->arg, r->mask, 0);
		set_ne(fail, r->arg, r->mask, 0);
		break;
	case RULE_MASKED_EQ:
		if (!(r->val & ~r->mask))
			cset_add_meq(pass, r->arg, r->mask, r->val);
		set_ne(fail, r->arg, r->mask, r->val);
		break;
	case RULE_MASKED_NE:
		set_ne(pass, r->arg, r->mask, r->val);
		if (!(r->val & ~r->mask))
			cset_add_meq(fail, r->arg, r->mask, r->val);
		break;
	case RULE_FD_FREE: /* T: (int)a < lo || (int)a > hi */
		if (rt->fd_lo > rt->fd_hi) {
			cset_true(pass);
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
		cset_add_meq(pass, r->arg, LOW32, (uint32_t)rt->pid);
		break;
	case RULE_LE:
		cset_add_range(pass, r->arg, 0, r->val, 64, 0, RANGE_BLOCKS);
		if (r->val != ~0ULL)
			cset_add_range(fail, r->arg, r->val + 1, ~0ULL, 64, 0, RANGE_BLOCKS);
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
void cset_of_rule(const struct policy_rule *r, const struct policy_runtime *rt,
		      struct cset *pass, struct cset *fail, struct cset *tmp)
{
	struct cset *cond = tmp, *check_pass = tmp + 1, *check_fail = tmp + 2;

	check_sets(r, rt, check_pass, check_fail);
	if (r->carg == POLICY_NOARG) {
		*pass = *check_pass;
		*fail = *check_fail;
	} else {
		set_ne(cond, r->carg, r->cmask, 0);
		cset_and(cond, check_fail, fail);
		cset_clear(pass);
		cset_add_meq(pass, r->carg, r->cmask, 0);
		cset_and(cond, check_pass, check_fail);
		cset_or(pass, check_fail);
	}
	agree(pass, r, rt, RULE_PASS);
	agree(fail, r, rt, RULE_FAIL);
}

