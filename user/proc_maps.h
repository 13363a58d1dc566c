/* The process's memory map, read from /proc/self/maps with the patcher's
 * allocator and system calls (no stdio, no locale: it runs inside the
 * sandbox too). */
#ifndef SANDPIT_USER_PROC_MAPS_H
#define SANDPIT_USER_PROC_MAPS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { VMA_STACK = 1, VMA_VDSO = 2 };

struct vma {
	uintptr_t lo, hi;
	int prot, kind;
	unsigned long off, ino;   /* file offset and inode (0: anonymous) */
	unsigned dev_major, dev_minor;
};

struct maps {
	struct vma *v;            /* ascending; the caller releases it (p_free) */
	unsigned n, cap;
};

/* Read the maps again into *m (its array reused).  0 or -errno. */
int maps_read(struct maps *m);
/* [lo, hi) is readable memory, by the maps */
bool maps_readable(const struct maps *m, uintptr_t lo, uintptr_t hi);
/* The path of the file mapped at lo (the mapping that starts there), with
 * its NUL, into out[n].  0, or -errno (-ENOENT: none, or too long). */
int maps_path(uintptr_t lo, char *out, size_t n);
#endif
