/* The patcher's memory and system calls (see patch_sys.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "user/patch/patch_sys.h"

static long libc_sys(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	long r = syscall(nr, a0, a1, a2, a3, a4, a5);

	return r == -1 ? -errno : r;
}

static const struct patch_ops libc_ops = { malloc, realloc, free, libc_sys, NULL, NULL };
const struct patch_ops *patch_sys_ops = &libc_ops;
const struct patch_config *patch_cfg_now;
int patch_debug = -1;

void patch_use(const struct patch_config *cfg)
{
	patch_cfg_now = cfg;
	patch_sys_ops = cfg->ops ? cfg->ops : &libc_ops;
	if (patch_debug < 0 && !cfg->ops)
		patch_debug = getenv("SANDPIT_DEBUG") != NULL;
}

void *p_calloc(size_t n, size_t size)
{
	void *q = n && size > SIZE_MAX / n ? NULL : p_alloc(n * size);

	if (q)
		memset(q, 0, n * size);
	return q;
}

long p_mmap(uintptr_t a, size_t n, int prot, int flags)
{
	return p_sys(SYS_mmap, a, n, prot, flags | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

int p_mprotect(uintptr_t a, size_t n, int prot)
{
	return (int)p_sys(SYS_mprotect, a, n, prot, 0, 0, 0);
}

void p_munmap(uintptr_t a, size_t n)
{
	p_sys(SYS_munmap, a, n, 0, 0, 0, 0);
}

int p_grow(void *pp, unsigned *cap, unsigned n, size_t elem)
{
	void **p = pp;
	unsigned c;
	void *q;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 64;
	q = p_realloc(*p, (size_t)c * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}
