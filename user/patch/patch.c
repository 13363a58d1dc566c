/* The patcher (see patch.h).  For one executable range:
 *   scan    find every 0f 05 byte pair (SSE2, no decoding);
 *   span    find the enclosing function in .eh_frame_hdr (else the dynamic
 *           symbol table, else a Go program's .gopclntab, else the gap
 *           after the previous FDE, else decode the whole range once) and
 *           decode it from its start, lazily, recording instruction starts
 *           and direct branch targets;
 *   plan    keep the candidates that start an instruction (an instruction
 *           that starts 0f 05 is `syscall`); pick the displaced region;
 *   encode  re-encode the displaced instructions into trampolines with the
 *           Zydis encoder and check each decodes back to its original;
 *   commit  map the region near the module, then write the sites.
 * A linear decode of libc costs ~60 ms; this costs ~1.5 ms.
 *
 * Each step has its file: patch_objects.c (which objects, the view their
 * tables are read through; proc_maps.c, patch_vdso.c), patch_plan.c (scan,
 * plan; a site's window in plan_window.c, spans in patch_span.c, a cached
 * plan checked in plan_verify.c), patch_trampoline.c (encode),
 * patch_commit.c (commit); patch_sys.c holds the memory and system calls
 * they all use, patch_stats.c what they report; what is x86-64's comes from
 * arch.h.  This file strings them together for each range. */
#include <errno.h>
#include <string.h>
#include "user/patch/patch.h"
#include "user/patch/patch_commit.h"
#include "user/patch/patch_objects.h"
#include "user/patch/patch_plan.h"
#include "user/patch/patch_stats.h"
#include "user/patch/patch_sys.h"
#include "user/patch/patch_trampoline.h"
#include "user/patch/plan_cache.h"

void patch_plan_free(struct patch_plan *plan)
{
	p_free(plan->code);
	p_free(plan->site);
	memset(plan, 0, sizeof *plan);
}

static int patch_module(const struct patch_config *cfg, const struct module *mod,
			uintptr_t lo, uintptr_t hi, struct patch_stats *st, struct maps *m)
{
	struct patch_plan plan;
	struct planner p;
	int r;

	r = planner_init(&p, cfg, mod, lo, hi, &plan, m);
	r = r ? r : planner_analyse(&p);
	if (!r && plan.n_site)
		r = patch_commit(&p, m);
	if (!r)
		patch_stats_add(st, &plan.st);
	planner_free(&p);
	patch_plan_free(&plan);
	return r;
}

int patch_plan_range(const struct patch_config *cfg, uintptr_t lo, uintptr_t hi,
		     uintptr_t region, struct patch_plan *plan)
{
	struct module mod;
	struct planner p;
	struct maps m = {0};
	int r;

	patch_use(cfg);
	r = lo < hi ? module_find(lo, hi, &mod, &m) : -EINVAL;
	memset(plan, 0, sizeof *plan);
	if (r) {
		maps_free(&m);
		return r;
	}
	r = planner_init(&p, cfg, &mod, lo, hi, plan, &m);
	maps_free(&m);
	plan->region = region;
	r = r ? r : planner_analyse(&p);
	r = r ? r : tramp_encode(&p);
	planner_free(&p);
	if (r)
		patch_plan_free(plan);
	return r;
}

int patch_range(const struct patch_config *cfg, uintptr_t lo, uintptr_t hi,
		struct patch_stats *st)
{
	struct module mod;
	struct maps m = {0};
	int r;

	patch_use(cfg);
	r = lo < hi ? module_find(lo, hi, &mod, &m) : -EINVAL;
	if (!r && mod.phdr) { /* what of [lo, hi) is the object's code */
		lo = lo > mod.lo ? lo : mod.lo;
		hi = hi < mod.hi ? hi : mod.hi;
	}
	r = r ? r : patch_module(cfg, &mod, lo, hi, st, &m);
	maps_free(&m);
	return r;
}

int patch_process(const struct patch_config *cfg, struct patch_stats *st)
{
	struct mod_list l = {0};
	struct maps m = {0};
	int r;

	patch_use(cfg);
	r = modules_collect(&l, !cfg->ops, 0, 0, &m);
	for (unsigned i = 0; !r && i < l.n; i++)
		if (!cfg->want || cfg->want(cfg->ctx, l.m[i].lo, l.m[i].hi))
			r = patch_module(cfg, &l.m[i], l.m[i].lo, l.m[i].hi, st, &m);
	maps_free(&m);
	p_free(l.m);
	return r;
}

int patch_cache_object(uintptr_t bias, const void *phdr, unsigned phnum)
{
	const struct patch_config cfg = {0};
	struct dl_phdr_info info = { .dlpi_addr = bias, .dlpi_phdr = phdr,
				     .dlpi_phnum = (ElfW(Half))phnum };
	struct mod_list l = {0};
	struct maps m = {0};
	int r;

	patch_use(&cfg);
	if (patch_debug > 0)
		patch_debug = 2; /* the plan cache's lines, not each site's */
	modules_add_phdrs(&info, sizeof info, &l);
	r = l.err ? l.err : maps_read(&m);
	for (unsigned i = 0; !r && i < l.n; i++) {
		struct patch_plan plan;
		struct planner p;

		r = planner_init(&p, &cfg, &l.m[i], l.m[i].lo, l.m[i].hi, &plan, &m);
		r = r ? r : planner_analyse(&p);
		planner_free(&p);
		patch_plan_free(&plan);
	}
	maps_free(&m);
	p_free(l.m);
	return r;
}
