/* Committing a plan (internal to the patcher): map the trampoline region
 * within reach of the sites (clear of the stack's and the heap's room),
 * copy the trampolines there, then write the sites into the text pages
 * (each whole or untouched; the vDSO by a copy). */
#ifndef SANDPIT_USER_PATCH_COMMIT_H
#define SANDPIT_USER_PATCH_COMMIT_H
#include "user/patch/plan_window.h"
#include "user/patch/proc_maps.h"

/* Place, encode (tramp_encode) and write p's plan; m is a copy of the maps,
 * read again if a place is lost.  0 or -errno. */
int patch_commit(struct planner *p, struct maps *m);
#endif
