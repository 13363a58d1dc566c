/* The sets of argument vectors the seccomp filter is built from
 * (policy/bpf_clause.c; see the top of policy/bpf.c): a set is a union of
 * clauses, a clause at most one comparison per argument. */
#ifndef SANDPIT_POLICY_BPF_CLAUSE_H
#define SANDPIT_POLICY_BPF_CLAUSE_H
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

#define NARGS 6
#define MAX_CLAUSES 64       /* per set; a longer one is dropped (it traps) */

#define LOW32 0xffffffffULL

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

void cset_clear(struct cset *s);
void cset_true(struct cset *s);
void cset_add(struct cset *s, const struct clause *c);
void cset_or(struct cset *s, const struct cset *t);
void cset_add_meq(struct cset *s, int arg, uint64_t mask, uint64_t val);
int cset_atom_and(const struct atom *x, const struct atom *y, struct atom *out);
void cset_and(const struct cset *s, const struct cset *t, struct cset *out);
void cset_add_range(struct cset *s, int arg, uint64_t lo, uint64_t hi, int width, uint64_t flip,
		    size_t max);
/* A rule's pass and fail sets, each clause checked against the rule's
 * meaning (policy/rule_eval.c); tmp: three sets of scratch */
void cset_of_rule(const struct policy_rule *r, const struct policy_runtime *rt,
		  struct cset *pass, struct cset *fail, struct cset *tmp);
#endif
