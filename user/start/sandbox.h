/* What the runtime offers the command (loader/, bench/) beyond the public
 * API of include/sandpit.h.  Implemented in user/start/sandbox.c, the plan
 * cache's three in user/start/run_hooks.c. */
#ifndef SANDPIT_USER_SANDBOX_H
#define SANDPIT_USER_SANDBOX_H
#include <stddef.h>
#include <stdint.h>

/* For `sandpit run` (loader/run.c), before sandpit_start: patch only the
 * objects overlapping [lo, hi) (at most 4 calls) and the vDSO. */
void sandpit_patch_only(uintptr_t lo, uintptr_t hi);

/* For `sandpit run`, before sandpit_start: the command's parent waits for
 * P alone, so B may be its child too, P's sibling, started by one clone
 * instead of a fork through an intermediate child (user/trusted/trusted_process.h). */
void sandpit_trusted_process_as_sibling(void);

/* For `sandpit run`, before sandpit_start: the program's file, open for
 * reading on fd (the loader's; a copy is taken).  B keeps it and answers
 * the program's /proc/self/exe from it, which is otherwise the `sandpit`
 * command (user/trusted/b_exe.c); P closes its copy before the program
 * runs. */
void sandpit_program_file(int fd);

/* The plan cache under `sandpit run` (user/start/run_hooks.c, the work in
 * user/patch/plan_run.c): the child, before sandpit_start, reads the plans
 * of the libraries the program (open on prog_fd) needed last time, and
 * gives the run-time patcher hint_page (SANDPIT_PLAN_HINT_BYTES of
 * MAP_SHARED memory made before the fork) to name the files it had to plan
 * itself; the parent, once the child has ended, plans those with
 * plan_file_at (which maps one with the loader and calls sandpit_plan_image
 * on it; 0 if planned) and remembers them. */
#define SANDPIT_PLAN_HINT_BYTES 8192
void sandpit_plan_cache_child(int prog_fd, void *hint_page);
void sandpit_plan_cache_parent(const char *prog, const void *hint_page,
			       int (*plan_file_at)(const char *path));
/* Plan (and cache) the code of the object the loader mapped at bias, its
 * program headers at phdr, writing nothing into it.  0 or -errno. */
int sandpit_plan_image(uintptr_t bias, uintptr_t phdr, unsigned phnum);

/* Memory sandpit_start sets aside for each slot, whether a thread uses it
 * or not: its secure page and mailbox (S) and T's alternate signal stack
 * (user/layout/secure_mem.h). */
size_t sandpit_slot_bytes(void);

#endif
