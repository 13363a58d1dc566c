/* Planning (internal to the patcher): for one executable range, find every
 * `syscall` (0f 05 pairs, kept where they start an instruction of the
 * enclosing function; in strict mode rdtsc and rdtscp too), and choose each site's window of displaced
 * instructions, one no branch lands inside. */
#ifndef SANDPIT_USER_PATCH_PLAN_H
#define SANDPIT_USER_PATCH_PLAN_H
#include "user/patch/patch_types.h"
#include "user/patch/patch_objects.h"
#include "user/patch/plan_window.h"
#include "user/patch/proc_maps.h"

/* Set p up to plan [lo, hi) of mod into *plan, reading the module's tables
 * within its readable mappings m.  0 or -errno. */
int planner_init(struct planner *p, const struct patch_config *cfg,
		 const struct module *mod, uintptr_t lo, uintptr_t hi,
		 struct patch_plan *plan, const struct maps *m);
/* Scan the range and plan its sites (plan->site, plan->st).  0 or -errno. */
int planner_analyse(struct planner *p);
void planner_free(struct planner *p);
#endif
