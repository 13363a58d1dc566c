/* The check of a cached plan (internal to the patcher): a plan from the
 * cache (outside the sandbox) or preloaded by the loader (inside it) is
 * used only if it holds whole in memory: every record's bytes are the
 * mapped ones, each window decodes to its syscall over simple
 * instructions, what it leaves native or unpatched the planner would
 * leave so, and no syscall of the code is left out. */
#ifndef SANDPIT_USER_PLAN_VERIFY_H
#define SANDPIT_USER_PLAN_VERIFY_H
#include <stdbool.h>
#include <stdint.h>
#include "user/patch/plan_window.h"

/* The cache's plan for p's object, given the scan's n candidates (the
 * 0f 05 pairs found, ascending): true if it held whole in memory and is
 * p's plan now (p->plan's sites and stats); false, with nothing of it
 * kept, if there is none or it does not hold.  Inside the sandbox it also
 * names the object on the hint page. */
bool plan_try_cache(struct planner *p, const uintptr_t *cand, unsigned n);
#endif
