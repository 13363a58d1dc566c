/* What a register rule means: the one executable definition of the rules
 * the trusted thread interprets (asm/x86_64/trusted_thread.S, .Lrules),
 * written in C over the T table's own records (policy/t_table.h).  The
 * tests model T with it, the dump and the BPF back end (policy/bpf.c)
 * reason with it, and rule_eval_test runs real calls through T in a
 * started sandbox and checks that T answers what this says.
 *
 * T's rules read a few facts besides the arguments: sandpit's descriptors,
 * P's pid (known when a filter is built), the protected ranges and the
 * tids of the program's threads that B knows (which only T knows, from
 * the table B writes in secure memory). */
#ifndef SANDPIT_RULE_EVAL_H
#define SANDPIT_RULE_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"
#include "policy/t_table.h"

struct rule_range {
	uint64_t lo, hi; /* [lo, hi), page-aligned */
};

/* What T knows when it checks a rule. */
struct rule_world {
	struct policy_runtime rt;        /* P's pid, sandpit's descriptors [fd_lo, fd_hi] */
	int t_facts;                     /* 0: ranges and tids unknown (what BPF knows) */
	size_t nranges;                  /* protected memory (TR_RANGE_FREE) */
	const struct rule_range *ranges;
	size_t ntids;                    /* the program's threads B knows (TR_U_TID) */
	const int32_t *tids;
};

#define RULE_FAIL    0
#define RULE_PASS    1
#define RULE_UNKNOWN (-1) /* the answer needs what only T knows and w lacks */

/* One rule of the T table for arguments a, its condition included. */
int tt_rule_check(const struct tt_rule *r, const uint64_t a[6], const struct rule_world *w);

/* What T answers for call nr of table t with arguments a: TT_ANS_EXEC, a
 * negative errno (deny, a failing rule, a corrupt entry), where the call
 * goes instead (B, an emulation, the kill), or TT_ANS_UNKNOWN where a
 * rule needs facts w lacks. */
#define TT_ANS_EXEC    0
#define TT_ANS_B       1
#define TT_ANS_EMU     2
#define TT_ANS_KILL    3
#define TT_ANS_UNKNOWN 4
long tt_answer(const struct tt_table *t, long nr, const uint64_t a[6], const struct rule_world *w);

/* The model's own rules, as policy_compile_table puts them in the table:
 * RULE_PASS, RULE_FAIL, RULE_UNKNOWN. */
int policy_rule_check(const struct policy_rule *r, int call_err, const uint64_t a[6],
		      const struct rule_world *w);
/* A thread-class call's rules in order: RULE_PASS, RULE_FAIL with the
 * failing rule's errno in *err, or RULE_UNKNOWN if a rule whose answer w
 * cannot give decides first. */
int policy_call_check(const struct policy_call *c, const uint64_t a[6], const struct rule_world *w,
		      int *err);

/* Whether a rule's answer needs what only T knows (protected ranges,
 * the program's tids): BPF cannot decide it. */
int rule_needs_t(int op); /* enum policy_rule_op */

#endif
