/* What start-up compiles the policy into (internal to sandpit_start): the
 * T table and filter mode's program, each in a memfd sealed against every
 * write and mapped read-only, so that nothing in P can change them. */
#ifndef SANDPIT_USER_START_POLICY_H
#define SANDPIT_USER_START_POLICY_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "policy/policy.h"
#include "policy/t_table.h"

/* The T table: *out (read-only) of *len bytes.  0 or -errno, with a
 * message in err. */
int make_table(const struct policy *pol, const struct tt_table **out, size_t *len,
	       char *err, size_t errlen);

/* Filter mode's program for P (rt: its pid, sandpit's descriptors and
 * those U's runtime reads and writes itself): fprog = { length, address }
 * (a sock_fprog).  builtin: the policy is the default, whose program was
 * built with the library.  0 or -errno, with a message in err. */
int make_filter(const struct policy *pol, int builtin, const struct policy_runtime *rt,
		uint64_t fprog[2], char *err, size_t errlen);

/* Every directory the plan cache may be in (plan_cache_dirs), as named and
 * as B would resolve it, denied in pol: what a sandboxed program could
 * write there a later run would read (which sites it patches), and what it
 * could read names the sites left native.  0 or -errno, with a message in
 * err. */
int deny_plan_cache(struct policy *pol, char *err, size_t errlen);

/* Refusals are counted and explained by B (user/trusted/denial_log.c) when
 * --log=denials asks for lines (SANDPIT_LOG=denials) or `sandpit run` for
 * the count: SANDPIT_REPORT_FD, a descriptor only B keeps (-1: none). */
int denials_logged(void);
int denials_report_fd(void);
#endif
