/* B's own interface between its files: trusted_process.c (slots, servers,
 * watchers, start-up) and b_checks.c (one request's memory arguments
 * checked).  Only B includes it. */
#ifndef SANDPIT_B_CHECKS_H
#define SANDPIT_B_CHECKS_H

#include <stdint.h>

#include "user/trusted/trusted_process.h"

struct policy_proc_arg;
struct secure_page;

/* After B's one copy of something in a mailbox (U can write it at any
 * time): the compiler may not read the mailbox again in the copy's place,
 * so what is checked is what is used (invariant 8). */
static inline void b_copied(void)
{
	__asm__ __volatile__("" ::: "memory");
}

/* trusted_process.c: the configuration B was started with */
const struct trusted_process_config *b_cfg(void);
/* trusted_process.c: a pidfd of P, or -1 (no pidfds) */
int b_pidfd(void);

/* b_checks.c */
int b_in_protected(uint64_t a); /* a lies in sandpit's memory (P's ranges) */
void b_denial(int s, const struct secure_page *sp, long r, const char *why);
long b_reported_denial(int s);
void b_killed(int s, const struct secure_page *sp);
long b_check_path(int s, const struct policy_proc_arg *pa, struct secure_page *sp);
long b_check_sigaction(struct secure_page *sp);
/* b_rlimit.c */
long b_check_rlimit(int s, struct secure_page *sp);

#endif
