/* The vDSO, for the patcher (internal to the patcher): found in the
 * auxiliary vector when ld.so does not list it, and replaced by a writable
 * copy at the same address when its sites are written. */
#ifndef SANDPIT_USER_PATCH_VDSO_H
#define SANDPIT_USER_PATCH_VDSO_H
#include <stdbool.h>
#include "user/patch/patch_objects.h"
#include "user/patch/proc_maps.h"

/* Add the vDSO's code to l unless it is there already.  0 or -errno. */
int vdso_module_add(struct mod_list *l);

/* Is a in the vDSO (by the maps m)? */
bool vdso_holds(const struct maps *m, uintptr_t a);

/* Replace the vDSO mapping v by an anonymous read-write copy.  0 or -errno. */
int vdso_replace(const struct vma *v);
#endif
