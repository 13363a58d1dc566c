/* The patcher's memory and system calls (internal to the patcher): libc's,
 * or the caller's (struct patch_ops, inside the sandbox), chosen per pass
 * by patch_use; and its SANDPIT_DEBUG switch. */
#ifndef SANDPIT_USER_PATCH_SYS_H
#define SANDPIT_USER_PATCH_SYS_H
#include <stddef.h>
#include <stdint.h>
#include "user/patch/patch_types.h"

#define PAGE 4096UL

static inline uintptr_t page_down(uintptr_t a) { return a & ~(PAGE - 1); }
static inline uintptr_t page_up(uintptr_t a) { return (a + PAGE - 1) & ~(PAGE - 1); }

/* the pass's allocator and system calls, its configuration, and whether
 * SANDPIT_DEBUG was set (-1: not read yet; read once while libc is ours) */
extern const struct patch_ops *patch_sys_ops;
extern const struct patch_config *patch_cfg_now;
extern int patch_debug;

/* Start a pass with cfg's ops (NULL: libc's). */
void patch_use(const struct patch_config *cfg);

static inline void *p_alloc(size_t n) { return patch_sys_ops->alloc(n); }
static inline void *p_realloc(void *p, size_t n) { return patch_sys_ops->realloc(p, n); }
static inline void p_free(void *p) { patch_sys_ops->release(p); }
void *p_calloc(size_t n, size_t size);

#define p_sys(nr, a0, a1, a2, a3, a4, a5)                                                \
	patch_sys_ops->sys(nr, (long)(a0), (long)(a1), (long)(a2), (long)(a3), (long)(a4), \
			   (long)(a5))

long p_mmap(uintptr_t a, size_t n, int prot, int flags);
int p_mprotect(uintptr_t a, size_t n, int prot);
void p_munmap(uintptr_t a, size_t n);

/* Make room for element n of the array *pp of *cap elements (doubling). */
int p_grow(void *pp, unsigned *cap, unsigned n, size_t elem);
#endif
