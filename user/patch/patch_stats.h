/* What the patcher reports (internal to the patcher): its statistics, and
 * the lines it writes under SANDPIT_DEBUG (no stdio: it runs inside the
 * sandbox too). */
#ifndef SANDPIT_USER_PATCH_STATS_H
#define SANDPIT_USER_PATCH_STATS_H
#include <stdbool.h>
#include "user/patch/patch_types.h"
#include "user/patch/patch_objects.h"

/* *to += *from, field by field; to may be NULL */
void patch_stats_add(struct patch_stats *to, const struct patch_stats *from);

/* Under SANDPIT_DEBUG: an object whose unwind tables cannot guide the
 * patcher (why), which then finds functions by method (enum patch_method:
 * symtab, gopclntab or linear). */
void patch_note_fallback(const struct module *mod, const char *why, unsigned method);

/* Under SANDPIT_DEBUG: a `syscall` at addr, found by method (enum
 * patch_method), and what became of it. */
void patch_note_site(uintptr_t addr, unsigned method, const char *what);
#endif
