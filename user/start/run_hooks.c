/* What `sandpit run` (loader/run.c) asks of the runtime around
 * sandpit_start (user/start/sandbox.h): the plan cache's steps in the child
 * and in the parent, and the plan of an object the loader mapped.  The
 * work is the patcher's (user/patch/plan_run.c, patch.c). */
#include <errno.h>
#include <stdint.h>
#include "user/patch/patch.h"
#include "user/patch/plan_run.h"
#include "user/start/sandbox.h"

_Static_assert(sizeof(struct plan_hints) <= SANDPIT_PLAN_HINT_BYTES, "the hint page holds the hints");

void sandpit_plan_cache_child(int prog_fd, void *hint_page)
{
	plan_cache_run_child(prog_fd, hint_page);
}

void sandpit_plan_cache_parent(const char *prog, const void *hint_page,
			       int (*plan_file_at)(const char *path))
{
	plan_cache_run_parent(prog, hint_page, plan_file_at);
}

int sandpit_plan_image(uintptr_t bias, uintptr_t phdr, unsigned phnum)
{
	return phdr ? patch_cache_object(bias, (const void *)phdr, phnum) : -EINVAL;
}
