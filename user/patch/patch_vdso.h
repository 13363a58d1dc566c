/* The vDSO, for the patcher (internal to the patcher): its headers read
 * from the auxiliary vector when ld.so does not list it, and replaced by a
 * writable copy at the same address when its sites are written. */
#ifndef SANDPIT_USER_PATCH_VDSO_H
#define SANDPIT_USER_PATCH_VDSO_H
#include <stdbool.h>
#include <link.h>
#include <stdint.h>
#include "user/patch/proc_maps.h"

/* The program headers of the vDSO whose ELF header is at eh (the
 * auxiliary vector's AT_SYSINFO_EHDR), as dl_iterate_phdr would give them:
 * true, or false if they do not read. */
bool vdso_phdr_info(uintptr_t eh, struct dl_phdr_info *info);

/* Is a in the vDSO (by the maps m)? */
bool vdso_holds(const struct maps *m, uintptr_t a);

/* Replace the vDSO mapping v by an anonymous read-write copy.  0 or -errno. */
int vdso_replace(const struct vma *v);
#endif
