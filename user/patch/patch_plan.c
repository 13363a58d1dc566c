/* Planning: which `syscall`s to patch and over which instructions (see
 * patch_plan.h). */
#include <emmintrin.h>
#include <errno.h>
#include <string.h>
#include "user/patch/patch_plan.h"
#include "user/patch/patch_stats.h"
#include "user/patch/patch_sys.h"
#include "user/patch/patch_vdso.h"
#include "user/patch/plan_cache.h"
#include "user/patch/plan_run.h"
#include "user/patch/plan_verify.h"

/* An rdtsc or rdtscp candidate that starts an instruction (which is then
 * that instruction): redirected where a window fits, else left to fault
 * and be emulated. */
static void plan_clock(struct planner *p, struct span *s, int i, uintptr_t c)
{
	struct patch_plan *pl = p->plan;
	const struct decoded *d = planner_decode(p, c);
	uint8_t kind = ((const uint8_t *)c)[1] == 0x31 ? PATCH_RDTSC : PATCH_RDTSCP;

	if (!d || d->in.mnemonic != (kind == PATCH_RDTSC ? ZYDIS_MNEMONIC_RDTSC
							  : ZYDIS_MNEMONIC_RDTSCP))
		return;
	pl->st.clock_sites++;
	if (planner_pick_region(p, s, i, &pl->site[pl->n_site]) != WIN_FIT)
		return;
	pl->st.clock_patched++;
	pl->site[pl->n_site].kind = kind;
	p->bound += (size_t)(pl->site[pl->n_site].n_pre + pl->site[pl->n_site].n_post) *
		    ZYDIS_MAX_INSTRUCTION_LENGTH + TRAMP_FIXED;
	pl->n_site++;
}

static void plan_candidate(struct planner *p, uintptr_t c)
{
	struct patch_plan *pl = p->plan;
	struct patch_stats *st = &pl->st;
	struct span *s = planner_span_for(p, c);
	int i = s ? span_index(s, c) : -1;

	/* an instruction that starts with 0f 05 is `syscall` */
	if (i < 0)
		return;
	if (((const uint8_t *)c)[1] != 0x05) {
		plan_clock(p, s, i, c);
		return;
	}
	st->sites++;
	st->by_method[s->method]++;
	long nr = i > 0 ? planner_static_nr(p, span_insn(s, i - 1)) : -1;
	struct plan_rec *rec = p->rec ? &p->rec[p->n_rec++] : NULL;

	if (rec)
		*rec = (struct plan_rec){ .off = (uint32_t)(c - p->mod.lo), .nr = (int32_t)nr,
					  .after = 2, .method = s->method,
					  .bytes = (const uint8_t *)c };
	if (nr == 15) {
		if (rec)
			rec->status = PLAN_NATIVE_SIGRETURN;
		/* rt_sigreturn must run natively, on the kernel's frame */
		st->native_sigreturn++;
		patch_note_site(c, s->method, "left native (rt_sigreturn)");
		return;
	}
	int why = planner_pick_region(p, s, i, &pl->site[pl->n_site]);

	if (rec) {
		const struct patch_site *x = &pl->site[pl->n_site];

		rec->status = why == WIN_FIT ? PLAN_FIT : why == WIN_SKIP_TARGET ? PLAN_SKIP_TARGET
									: PLAN_SKIP_OTHER;
		if (why == WIN_FIT)
			*rec = (struct plan_rec){ .off = rec->off, .nr = rec->nr,
						  .before = (uint8_t)(c - x->lo),
						  .after = (uint8_t)(x->hi - c), .n_pre = x->n_pre,
						  .n_post = x->n_post, .method = s->method,
						  .bytes = (const uint8_t *)x->lo };
	}
	if (planner_left_native(p, nr)) {
		st->native_allowed++;
		patch_note_site(c, s->method, "left native (allowed in the filter)");
		return;
	}
	switch (why) {
	case WIN_FIT:
		st->patched++;
		p->bound += (size_t)(pl->site[pl->n_site].n_pre + pl->site[pl->n_site].n_post) *
			    ZYDIS_MAX_INSTRUCTION_LENGTH + TRAMP_FIXED;
		pl->n_site++;
		patch_note_site(c, s->method, "patched");
		break;
	case WIN_SKIP_TARGET:
		st->skipped_target++;
		patch_note_site(c, s->method, "not patched (a branch target is in the way)");
		break;
	default:
		st->skipped_other++;
		patch_note_site(c, s->method, "not patched (no window fits)");
		break;
	}
}

static int scan_push(uintptr_t **v, unsigned *n, unsigned *cap, uintptr_t a)
{
	if (p_grow(v, cap, *n, sizeof **v)) {
		p_free(*v);
		*v = NULL;
		return -ENOMEM;
	}
	(*v)[(*n)++] = a;
	return 0;
}

static bool is_clock(const uint8_t *b, uintptr_t left)
{
	return b[0] == 0x0f && (b[1] == 0x31 || (left >= 3 && b[1] == 0x01 && b[2] == 0xf9));
}

/* Append every rdtsc / rdtscp byte pattern in [lo, hi) to the n syscall
 * candidates of *v, then put them all in address order. */
static int scan_clock(uintptr_t lo, uintptr_t hi, uintptr_t **v, unsigned *n, unsigned *cap)
{
	const __m128i b0 = _mm_set1_epi8(0x0f), b31 = _mm_set1_epi8(0x31),
		      b01 = _mm_set1_epi8(0x01);
	unsigned first = *n;
	uintptr_t a = lo;

	for (; a + 18 <= hi; a += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)a),
			y = _mm_loadu_si128((const __m128i *)(a + 1));
		unsigned mask = _mm_movemask_epi8(_mm_and_si128(
			_mm_cmpeq_epi8(x, b0), _mm_or_si128(_mm_cmpeq_epi8(y, b31),
							     _mm_cmpeq_epi8(y, b01))));

		for (; mask; mask &= mask - 1) {
			uintptr_t c = a + __builtin_ctz(mask);

			if (is_clock((const uint8_t *)c, hi - c) && scan_push(v, n, cap, c))
				return -ENOMEM;
		}
	}
	for (; a + 2 <= hi; a++)
		if (is_clock((const uint8_t *)a, hi - a) && scan_push(v, n, cap, a))
			return -ENOMEM;
	/* insert the few found into the ascending syscall candidates (no qsort:
	 * inside the sandbox libc is the program's) */
	for (unsigned i = first; i < *n; i++) {
		uintptr_t x = (*v)[i];
		unsigned j = i;

		for (; j > 0 && (*v)[j - 1] > x; j--)
			(*v)[j] = (*v)[j - 1];
		(*v)[j] = x;
	}
	return 0;
}

/* Every 0f 05 pair in [lo, hi), and if clock every rdtsc and rdtscp
 * pattern, ascending. */
static int scan(uintptr_t lo, uintptr_t hi, bool clock, uintptr_t **v, unsigned *n)
{
	const __m128i b0 = _mm_set1_epi8(0x0f), b1 = _mm_set1_epi8(0x05);
	unsigned cap = 0;
	uintptr_t a = lo;

	*v = NULL;
	*n = 0;
	for (; a + 17 <= hi; a += 16) {
		__m128i x, y = _mm_loadu_si128((const __m128i *)(a + 1));
		unsigned mask;

		/* most blocks have no 05 at all: skip four at a time */
		if (a + 65 <= hi && !_mm_movemask_epi8(_mm_or_si128(
			    _mm_or_si128(_mm_cmpeq_epi8(y, b1),
					 _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(a + 17)), b1)),
			    _mm_or_si128(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(a + 33)), b1),
					 _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(a + 49)), b1))))) {
			a += 48;
			continue;
		}
		x = _mm_loadu_si128((const __m128i *)a);
		mask = _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(x, b0), _mm_cmpeq_epi8(y, b1)));
		for (; mask; mask &= mask - 1)
			if (scan_push(v, n, &cap, a + __builtin_ctz(mask)))
				return -ENOMEM;
	}
	for (; a + 2 <= hi; a++)
		if (((const uint8_t *)a)[0] == 0x0f && ((const uint8_t *)a)[1] == 0x05 &&
		    scan_push(v, n, &cap, a))
			return -ENOMEM;
	return clock ? scan_clock(lo, hi, v, n, &cap) : 0;
}

/* Drop the candidates that overlap sandpit's own code. */
static void drop_skipped(const struct patch_config *cfg, uintptr_t *v, unsigned *n)
{
	unsigned j = 0;

	for (unsigned i = 0; i < *n; i++)
		if (v[i] + site_len((const uint8_t *)v[i]) <= cfg->skip_lo || v[i] >= cfg->skip_hi)
			v[j++] = v[i];
	*n = j;
}

int planner_analyse(struct planner *p)
{
	uintptr_t *cand;
	unsigned n;
	int r;

	p->plan->st.modules = 1;
	if ((r = scan(p->lo, p->hi, p->clock, &cand, &n)))
		return r;
	drop_skipped(p->cfg, cand, &n);
	if (plan_try_cache(p, cand, n)) {
		p_free(cand);
		return 0;
	}
	p->plan->st.candidates = n;
	p->plan->site = p_calloc(n ? n : 1, sizeof *p->plan->site);
	if (!p->plan->site) {
		p_free(cand);
		return -ENOMEM;
	}
	if (p->cacheable) /* what the analysis finds, for the cache */
		p->rec = p_calloc(n ? n : 1, sizeof *p->rec);
	for (unsigned i = 0; i < n; i++)
		plan_candidate(p, cand[i]);
	p_free(cand);
	if (p->rec) {
		plan_cache_note(p->path, "plan computed", NULL);
		/* code already patched (a second pass) or changed in memory
		 * would make a plan that misses sites: only the file's own */
		if (plan_cache_pristine(&p->mod, &p->key, p->path))
			plan_cache_note(p->path, "cache not written",
					"the mapped code is not the file's");
		else
			plan_cache_put(&p->key, p->path, p->rec, p->n_rec);
	}
	return 0;
}

int planner_init(struct planner *p, const struct patch_config *cfg,
		 const struct module *mod, uintptr_t lo, uintptr_t hi,
		 struct patch_plan *plan, const struct maps *m)
{
	const ElfW(Phdr) *eh, *dyn;
	const char *name = NULL;
	int r = -ENOENT;

	memset(p, 0, sizeof *p);
	memset(plan, 0, sizeof *plan);
	p->cfg = cfg;
	p->mod = *mod;
	p->lo = lo;
	p->hi = hi;
	p->plan = plan;
	p->bound = 3 * PATCH_SLOT_SIZE;
	ZydisDecoderInit(&p->dec, ARCH_MACHINE_MODE, ARCH_STACK_WIDTH);
	ZydisDecoderInit(&p->fast, ARCH_MACHINE_MODE, ARCH_STACK_WIDTH);
	ZydisDecoderEnableMode(&p->fast, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE);
	module_view(mod, m, &p->view);
	/* the vDSO's clock functions read the TSC on every call; elsewhere a
	 * rare rdtsc (ld.so's start-up timing) is left to the SIGSEGV net, as
	 * planning it costs start-up more (its function decoded) than it saves */
	p->clock = cfg->rdtsc_stub && vdso_holds(m, lo);
	/* the code itself is read too: it must be there */
	if (!elf_view_has(&p->view, lo, hi - lo))
		return -EFAULT;
	eh = module_phdr(mod, PT_GNU_EH_FRAME);
	dyn = module_phdr(mod, PT_DYNAMIC);
	p->has_sym = dyn && !elf_symtab_init(&p->sym, &p->view, mod->bias + dyn->p_vaddr,
					      dyn->p_memsz, mod->bias);
	p->has_eh = eh && !(r = elf_ehtab_init(&p->eh, &p->view, mod->bias + eh->p_vaddr));
	if (!p->has_eh && mod->phdr)
		patch_note_fallback(mod, r == -ENOENT ? "no .eh_frame_hdr that we read"
					      : ".eh_frame_hdr does not fit in its mapping",
				    p->has_sym ? PATCH_BY_SYMTAB
				    : planner_go_table(p) ? PATCH_BY_GOPCLNTAB : PATCH_BY_LINEAR);
	/* the plan cache, outside the sandbox, for a whole object's code */
	/* (not the object holding sandpit's own code: its plan would leave
	 * out the sites of that code, which another process may not skip) */
	p->cacheable = !cfg->ops && !p->clock && mod->phdr && lo == mod->lo && hi == mod->hi &&
		       !(mod->lo < cfg->skip_hi && mod->hi > cfg->skip_lo) &&
		       !plan_cache_key(mod, m, &p->key, p->path, sizeof p->path);
	/* inside the sandbox, only the plans the loader read (plan_cache.h) */
	p->inside = cfg->ops && !p->clock && mod->phdr && lo == mod->lo && hi == mod->hi &&
		    !(mod->lo < cfg->skip_hi && mod->hi > cfg->skip_lo) &&
		    !plan_cache_inside_key(mod, m, &p->key, &name);
	if (p->inside) {
		size_t len = name ? strlen(name) : sizeof p->path;

		if (len < sizeof p->path)
			memcpy(p->path, name, len + 1);
		else
			memcpy(p->path, "?", 2);
	}
	return 0;
}

void planner_free(struct planner *p)
{
	span_free(&p->fn);
	span_free(&p->whole);
	p_free(p->rec);
	p->rec = NULL;
}
