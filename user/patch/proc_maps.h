/* The process's memory map, read from /proc/self/maps with the patcher's
 * allocator and system calls (no stdio, no locale: it runs inside the
 * sandbox too). */
#ifndef SANDPIT_USER_PROC_MAPS_H
#define SANDPIT_USER_PROC_MAPS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { VMA_STACK = 1, VMA_VDSO = 2, VMA_HEAP = 3 };

struct vma {
	uintptr_t lo, hi;
	int prot, kind;
	unsigned long off, ino;   /* file offset and inode (0: anonymous) */
	unsigned dev_major, dev_minor;
	const char *path;         /* the file's name as the maps give it (in the
				   * maps' text; NULL: none) */
};

struct maps {
	struct vma *v;            /* ascending */
	unsigned n, cap;
	char *text;               /* the text read, which the paths point into */
};

/* Read the maps again into *m (its array reused).  0 or -errno. */
int maps_read(struct maps *m);
/* What maps_read allocated. */
void maps_free(struct maps *m);
/* [lo, hi) is readable memory, by the maps */
bool maps_readable(const struct maps *m, uintptr_t lo, uintptr_t hi);
#endif
