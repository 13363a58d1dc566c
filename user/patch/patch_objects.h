/* The loaded objects the patcher works on (internal to the patcher): what
 * ld.so knows, the vDSO, and file mappings with an ELF header ld.so does not
 * know; and the view of an object's readable memory that its tables are
 * read through (user/patch/elf_read.h, invariant 9). */
#ifndef SANDPIT_USER_PATCH_OBJECTS_H
#define SANDPIT_USER_PATCH_OBJECTS_H
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include "user/patch/elf_read.h"
#include "user/patch/proc_maps.h"

struct module {
	uintptr_t bias;
	const ElfW(Phdr) *phdr;   /* NULL: bare range, no tables */
	unsigned phnum;
	uintptr_t lo, hi;         /* the executable segment */
};

struct mod_list {
	struct module *m;
	unsigned n, cap;
	int err;
};

/* Add the executable PT_LOAD segments of one object (a dl_iterate_phdr
 * callback); on failure l->err is set and it returns 1. */
int modules_add_phdrs(struct dl_phdr_info *info, size_t size, void *l);

/* Everything executable (see patch_objects.c); the maps read on the way
 * stay in *m.  0 or -errno. */
int modules_collect(struct mod_list *l, bool use_ldso, uintptr_t lo, uintptr_t hi,
		    struct maps *m);

/* The object whose executable segment overlaps [lo, hi), else a bare one. */
int module_find(uintptr_t lo, uintptr_t hi, struct module *out, struct maps *m);

/* The object's program header of this type, NULL if none. */
const ElfW(Phdr) *module_phdr(const struct module *m, unsigned type);

/* What of the object may be read: its readable mappings, within the extent
 * its PT_LOAD segments claim (without headers, the range itself). */
void module_view(const struct module *mod, const struct maps *m, struct elf_view *v);
#endif
