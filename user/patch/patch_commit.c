/* Committing a plan: the trampoline region and the sites (see
 * patch_commit.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include "user/patch/patch_commit.h"
#include "user/patch/patch_sys.h"
#include "user/patch/patch_trampoline.h"
#include "user/patch/patch_vdso.h"

/* what a rel32 can cover, with a margin for the region's own size */
#define REACH ((1UL << 31) - (1UL << 24))
#define USER_TOP 0x7ffffffff000UL
#define HEAP_GUARD (256UL << 20)    /* kept free above brk */
#define STACK_GUARD_MAX (1UL << 30) /* at most this much kept free below the stack */

struct placement {
	uintptr_t lo, hi;          /* the module's reach: sites in [lo, hi) */
	size_t size;
	uintptr_t avoid[2][2];     /* room the stack and the heap grow into */
	uintptr_t best, dist;
};

static void place_try(struct placement *pl, uintptr_t a)
{
	uintptr_t b = a + pl->size, d;

	if (a < (1UL << 20) || b > USER_TOP || a + REACH < pl->hi || b > pl->lo + REACH)
		return;
	for (unsigned i = 0; i < 2; i++)
		if (a < pl->avoid[i][1] && b > pl->avoid[i][0])
			return;
	d = b <= pl->lo ? pl->lo - b : a - pl->hi;
	if (d < pl->dist) {
		pl->best = a;
		pl->dist = d;
	}
}

/* The free address nearest to [lo, hi), 0 if none within reach. */
static uintptr_t place_region(const struct maps *m, uintptr_t lo, uintptr_t hi, size_t size)
{
	struct placement pl = { .lo = lo, .hi = hi, .size = size, .dist = UINTPTR_MAX };
	const struct patch_config *cfg = patch_cfg_now;
	uintptr_t brk = cfg->brk, prev = 0, guard = STACK_GUARD_MAX;
	struct rlimit rl = { cfg->stack_limit, 0 };

	/* outside the sandbox (libc's calls) asked now; inside, as they were
	 * at start, the heap's end from the maps */
	if (!cfg->ops) {
		brk = (uintptr_t)p_sys(SYS_brk, 0, 0, 0, 0, 0, 0);
		if (p_sys(SYS_prlimit64, 0, RLIMIT_STACK, 0, &rl, 0, 0))
			rl.rlim_cur = 0;
	}
	for (unsigned i = 0; i < m->n; i++)
		if (m->v[i].kind == VMA_HEAP && m->v[i].hi > brk)
			brk = m->v[i].hi;
	if (rl.rlim_cur && rl.rlim_cur < STACK_GUARD_MAX)
		guard = page_up(rl.rlim_cur);
	pl.avoid[1][0] = brk;
	pl.avoid[1][1] = brk + HEAP_GUARD;
	for (unsigned i = 0; i < m->n; i++)
		if (m->v[i].kind == VMA_STACK) {
			pl.avoid[0][0] = m->v[i].lo > guard ? m->v[i].lo - guard : 0;
			pl.avoid[0][1] = m->v[i].lo;
		}
	for (unsigned i = 0; i <= m->n; i++) {
		uintptr_t next = i < m->n ? m->v[i].lo : USER_TOP;

		if (next > prev && next - prev >= size) {
			place_try(&pl, prev);
			place_try(&pl, next - size);
		}
		if (i < m->n && m->v[i].hi > prev)
			prev = m->v[i].hi;
	}
	return pl.best;
}

/* The region just mapped at [a, a + size) into the copy of the maps, so
 * that the next module's region is not placed there (which costs a lost
 * race and a second read of the maps). */
static void note_region(struct maps *m, uintptr_t a, size_t size)
{
	unsigned i = 0;

	if (p_grow(&m->v, &m->cap, m->n, sizeof *m->v))
		return; /* only a hint */
	while (i < m->n && m->v[i].lo < a)
		i++;
	memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof *m->v);
	m->v[i] = (struct vma){ .lo = a, .hi = a + size, .prot = PROT_READ | PROT_WRITE };
	m->n++;
}

/* Map the region near the module; on a lost race, look again once. */
static int region_map(struct maps *m, uintptr_t lo, uintptr_t hi, size_t size, uintptr_t *out)
{
	for (int tries = 0; tries < 2; tries++) {
		int r = tries ? maps_read(m) : 0;
		uintptr_t a = r ? 0 : place_region(m, lo, hi, size);
		long q;

		if (r)
			return r;
		if (!a)
			return -ENOMEM;
		q = p_mmap(a, size, PROT_READ | PROT_WRITE, MAP_FIXED_NOREPLACE);
		if (q == (long)a) {
			note_region(m, a, size);
			*out = a;
			return 0;
		}
		if (q >= 0)
			p_munmap(q, size);  /* old kernel: the hint was ignored */
		else if (q != -EEXIST)
			return (int)q;
	}
	return -EEXIST;
}

/* Make the mappings over [lo, hi) writable (open) or restore them. */
static int text_access(const struct maps *m, uintptr_t lo, uintptr_t hi, bool open)
{
	for (unsigned i = 0; i < m->n; i++) {
		const struct vma *v = &m->v[i];
		uintptr_t a = v->lo > lo ? v->lo : lo, b = v->hi < hi ? v->hi : hi;
		int prot = v->prot, r;

		if (a >= b)
			continue;
		if (v->kind == VMA_VDSO) {
			int r = open ? vdso_replace(v) : 0;

			if (r)
				return r;
			a = v->lo;
			b = v->hi;
			prot = open ? PROT_READ | PROT_WRITE : PROT_READ | PROT_EXEC;
		} else if (open && !patch_cfg_now->wx_apart) {
			/* keep X: the patcher's own libc may live on these pages */
			prot |= PROT_WRITE | PROT_EXEC;
		} else if (open) {
			prot = (prot | PROT_WRITE) & ~PROT_EXEC;
		}
		if ((r = p_mprotect(a, b - a, prot)))
			return r;
	}
	return 0;
}

/* Write every site of pl, each whole or untouched. */
static int write_sites(const struct patch_plan *pl, const struct maps *m)
{
	uint8_t (*bytes)[SITE_MAX] = p_alloc((size_t)pl->n_site * SITE_MAX);
	const struct patch_site *s = pl->site;
	uintptr_t lo = page_down(s[0].lo), hi = page_up(s[pl->n_site - 1].hi);
	int r = bytes ? 0 : -ENOMEM, closed;

	for (unsigned i = 0; !r && i < pl->n_site; i++)
		r = tramp_site_bytes(pl, &s[i], bytes[i]);
	if (r) {
		p_free(bytes);
		return r;
	}
	r = text_access(m, lo, hi, true);
	if (!r && patch_sys_ops->busy)
		patch_sys_ops->busy(1);
	for (unsigned i = 0; !r && i < pl->n_site; i++) {
		/* the jmp last: a site is either whole or untouched */
		memcpy((void *)(s[i].lo + JMP_LEN), bytes[i] + JMP_LEN, s[i].hi - s[i].lo - JMP_LEN);
		memcpy((void *)s[i].lo, bytes[i], JMP_LEN);
	}
	if (!r && patch_sys_ops->busy)
		patch_sys_ops->busy(0);
	closed = text_access(m, lo, hi, false);
	p_free(bytes);
	return r ? r : closed;
}

int patch_commit(struct planner *p, struct maps *m)
{
	struct patch_plan *pl = p->plan;
	size_t size = page_up(p->bound);
	int r = region_map(m, pl->site[0].lo, pl->site[pl->n_site - 1].hi, size, &pl->region);

	r = r ? r : tramp_encode(p);
	if (!r && pl->n_site) {
		memcpy((void *)pl->region, pl->code, pl->code_len);
		if (page_up(pl->code_len) < size)
			p_munmap(pl->region + page_up(pl->code_len), size - page_up(pl->code_len));
		size = page_up(pl->code_len);
		r = p_mprotect(pl->region, size, PROT_READ | PROT_EXEC);
		if (!r && p->cfg->on_region)
			p->cfg->on_region(p->cfg->ctx, pl->region, pl->region + size);
		r = r ? r : write_sites(pl, m);
	} else if (pl->region) {
		p_munmap(pl->region, size);
	}
	return r;
}
