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

enum { FIT = 0, SKIP_TARGET, SKIP_OTHER };

const struct decoded *planner_decode(struct planner *p, uintptr_t a)
{
	struct decoded *d = &p->dc[a % (sizeof p->dc / sizeof p->dc[0])];
	size_t n = p->mod.hi - a < ZYDIS_MAX_INSTRUCTION_LENGTH ? p->mod.hi - a
								 : ZYDIS_MAX_INSTRUCTION_LENGTH;

	if (d->at != a) {
		d->at = a;
		d->has_op = false;
		d->ok = a < p->mod.hi && ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(
					&p->dec, &d->ctx, (const void *)a, n, &d->in));
	}
	return d->ok ? d : NULL;
}

const ZydisDecodedOperand *planner_operands(struct planner *p, const struct decoded *cd)
{
	struct decoded *d = &p->dc[cd - p->dc];

	if (!d->has_op)
		d->has_op = ZYAN_SUCCESS(ZydisDecoderDecodeOperands(&p->dec, &d->ctx, &d->in, d->op,
								    d->in.operand_count));
	return d->has_op ? d->op : NULL;
}

/* Is the object a Go program (the Go linker's build-id note)? */
static bool is_go(const struct planner *p)
{
	for (unsigned i = 0; i < p->mod.phnum; i++) {
		const ElfW(Phdr) *ph = &p->mod.phdr[i];

		if (ph->p_type == PT_NOTE &&
		    elf_note_has(&p->view, p->mod.bias + ph->p_vaddr, ph->p_memsz, ELF_NOTE_GO,
				 ELF_NT_GO_BUILDID))
			return true;
	}
	return false;
}

/* Go's function table, looked for the first time a candidate lies outside
 * every FDE and symbol of a Go program (the search reads the object's
 * readable memory, ~0.1 ms a MiB: other objects never pay it). */
static bool go_table(struct planner *p)
{
	if (!p->go_state)
		p->go_state = p->mod.phdr && is_go(p) &&
			      !elf_gotab_find(&p->go, &p->view, p->mod.lo, p->mod.hi, p->mod.bias)
				      ? 1 : -1;
	return p->go_state > 0;
}

/* The stretch the planner decodes candidate c in, from a known instruction
 * boundary: [*lo, *end) and how lo was found.  0: none can be trusted; 1:
 * a function (or the gap after one); 2: the whole object (no table at all). */
static int stretch_for(struct planner *p, uintptr_t c, uintptr_t *lo, uintptr_t *end,
		       uint8_t *how)
{
	const struct span *s = &p->fn;
	uintptr_t hi;
	int r;

	if (p->whole.n_ins && c >= p->whole.lo && c < p->whole.end) {
		*lo = p->whole.lo, *end = p->whole.end, *how = p->whole.method;
		return 2;
	}
	if (s->n_ins && c >= s->lo && c < s->end) {
		*lo = s->lo, *end = s->end, *how = s->method;
		return 1;
	}
	*how = PATCH_BY_EH_FRAME;
	r = p->has_eh ? elf_fde_lookup(&p->eh, c, lo, &hi) : -1;
	if (r == 1)
		;
	else if (p->has_sym && elf_sym_find(&p->sym, c, lo, &hi))
		*how = PATCH_BY_SYMTAB;
	else if (go_table(p) && elf_gofunc_lookup(&p->go, c, lo, &hi) == 1)
		*how = PATCH_BY_GOPCLNTAB;
	else if (r == 0 && *lo == 0)
		return 0;       /* before the first function: headers, not code */
	else if (r == 0)
		*how = PATCH_BY_LINEAR; /* the gap after an FDE, decoded from its end */
	else if (p->go_state > 0)
		return 0;       /* a Go program's code outside its functions */
	else {
		/* no table at all: one linear decode of everything */
		*lo = p->mod.lo, *end = p->mod.hi, *how = PATCH_BY_LINEAR;
		return 2;
	}
	*lo = *lo < p->mod.lo ? p->mod.lo : *lo;
	*end = hi > p->mod.hi ? p->mod.hi : hi;
	return *lo < *end;
}

/* The stretch that holds candidate c, NULL if none can be trusted. */
static struct span *span_for(struct planner *p, uintptr_t c)
{
	uintptr_t lo, end;
	uint8_t how;

	switch (stretch_for(p, c, &lo, &end, &how)) {
	case 0:
		return NULL;
	case 2:
		/* one linear decode of everything, kept */
		if (!p->whole.n_ins) {
			span_start(&p->whole, &p->fast, lo, end);
			p->whole.method = how;
			span_extend(&p->whole, end);
		}
		return p->whole.err ? NULL : &p->whole;
	default:
		if (!(p->fn.n_ins && p->fn.lo == lo && p->fn.end == end)) {
			span_start(&p->fn, &p->fast, lo, end);
			p->fn.method = how;
		}
		return &p->fn;
	}
}

/* Can this instruction run unchanged at another address (once re-encoded)? */
static bool is_simple(struct planner *p, const struct decoded *d)
{
	const ZydisDecodedInstruction *in = &d->in;
	const ZydisDecodedOperand *op;

	switch (in->meta.category) {
	case ZYDIS_CATEGORY_CALL: case ZYDIS_CATEGORY_RET: case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_SYSCALL: case ZYDIS_CATEGORY_SYSRET: case ZYDIS_CATEGORY_SYSTEM:
	case ZYDIS_CATEGORY_INTERRUPT:
		return false;
	default:
		break;
	}
	switch (in->mnemonic) {
	/* rel8 only, or transactional: they can not move */
	case ZYDIS_MNEMONIC_LOOP: case ZYDIS_MNEMONIC_LOOPE: case ZYDIS_MNEMONIC_LOOPNE:
	case ZYDIS_MNEMONIC_JCXZ: case ZYDIS_MNEMONIC_JECXZ: case ZYDIS_MNEMONIC_JRCXZ:
	case ZYDIS_MNEMONIC_XBEGIN:
		return false;
	default:
		break;
	}
	if (!(in->attributes & ZYDIS_ATTRIB_IS_RELATIVE))
		return true;
	if (!(op = planner_operands(p, d)))
		return false;
	for (unsigned i = 0; i < in->operand_count_visible; i++) {
		if (op[i].type == ZYDIS_OPERAND_TYPE_MEMORY && op[i].mem.base == ZYDIS_REGISTER_RIP)
			return true;
		if (op[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op[i].imm.is_relative)
			return in->meta.category == ZYDIS_CATEGORY_COND_BR;
	}
	return false;
}

static bool simple_at(struct planner *p, uintptr_t a)
{
	const struct decoded *d = planner_decode(p, a);

	return d && is_simple(p, d);
}

/* The system call number, if the instruction right before the syscall is
 * `mov $nr,%eax` (or %rax); -1 if it is not known there. */
static long static_nr(struct planner *p, uintptr_t a)
{
	const struct decoded *d = planner_decode(p, a);
	const ZydisDecodedOperand *op = d && d->in.mnemonic == ZYDIS_MNEMONIC_MOV ?
						planner_operands(p, d) : NULL;

	if (op && op[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	    (op[0].reg.value == ZYDIS_REGISTER_EAX || op[0].reg.value == ZYDIS_REGISTER_RAX) &&
	    op[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op[1].imm.value.u < 0x10000)
		return (long)op[1].imm.value.u;
	return -1;
}

/* Bytes covered by k instructions before syscall i and m after it, 0 if
 * they are not there. */
static size_t region_len(struct span *s, unsigned i, unsigned k, unsigned m)
{
	if (k > i || !span_has(s, i + m))
		return 0;
	return span_insn(s, i + m + 1) - span_insn(s, i - k);
}

static int try_region(struct planner *p, struct span *s, unsigned i, unsigned k,
		      unsigned m, struct patch_site *out)
{
	uintptr_t lo = span_insn(s, i - k), hi = span_insn(s, i + m + 1);
	const struct patch_config *cfg = p->cfg;

	if (lo < p->lo || hi > p->hi || hi - lo > SITE_MAX ||
	    (lo < cfg->skip_hi && hi > cfg->skip_lo))
		return SKIP_OTHER;
	for (unsigned j = i - k; j <= i + m; j++)
		if (j != i && !simple_at(p, span_insn(s, j)))
			return SKIP_OTHER;
	if (span_inner_target(s, lo, hi))
		return SKIP_TARGET;
	*out = (struct patch_site){ .addr = span_insn(s, i), .lo = lo, .hi = hi,
				    .n_pre = k, .n_post = m };
	return FIT;
}

/* Prefer the instructions before the syscall (the region then ends where the
 * syscall returns to), then those after it, then both. */
static int pick_region(struct planner *p, struct span *s, unsigned i,
		       struct patch_site *out)
{
	int why = SKIP_OTHER, r;
	unsigned k, m;

#define TRY(k_, m_) do { \
		r = try_region(p, s, i, (k_), (m_), out); \
		if (r == FIT) \
			return FIT; \
		if (r == SKIP_TARGET) \
			why = SKIP_TARGET; \
	} while (0)

	for (k = 1; k <= MAX_SIDE && region_len(s, i, k, 0); k++)
		if (region_len(s, i, k, 0) >= JMP_LEN) {
			TRY(k, 0);
			break;
		}
	for (m = 1; m <= MAX_SIDE && region_len(s, i, 0, m); m++)
		if (region_len(s, i, 0, m) >= JMP_LEN) {
			TRY(0, m);
			break;
		}
	for (k = 1; k <= MAX_SIDE && region_len(s, i, k, 0) &&
		    region_len(s, i, k, 0) < JMP_LEN; k++)
		for (m = 1; m <= MAX_SIDE && region_len(s, i, k, m); m++)
			if (region_len(s, i, k, m) >= JMP_LEN) {
				TRY(k, m);
				break;
			}
#undef TRY
	return why;
}

/* Filter mode leaves a site of call nr as it is (allowed outright)? */
static bool left_native(const struct planner *p, long nr)
{
	return nr >= 0 && p->cfg->leave_native && p->cfg->leave_native(p->cfg->ctx, nr);
}

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
	if (pick_region(p, s, i, &pl->site[pl->n_site]) != FIT)
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
	struct span *s = span_for(p, c);
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
	long nr = i > 0 ? static_nr(p, span_insn(s, i - 1)) : -1;
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
	int why = pick_region(p, s, i, &pl->site[pl->n_site]);

	if (rec) {
		const struct patch_site *x = &pl->site[pl->n_site];

		rec->status = why == FIT ? PLAN_FIT : why == SKIP_TARGET ? PLAN_SKIP_TARGET
									: PLAN_SKIP_OTHER;
		if (why == FIT)
			*rec = (struct plan_rec){ .off = rec->off, .nr = rec->nr,
						  .before = (uint8_t)(c - x->lo),
						  .after = (uint8_t)(x->hi - c), .n_pre = x->n_pre,
						  .n_post = x->n_post, .method = s->method,
						  .bytes = (const uint8_t *)x->lo };
	}
	if (left_native(p, nr)) {
		st->native_allowed++;
		patch_note_site(c, s->method, "left native (allowed in the filter)");
		return;
	}
	switch (why) {
	case FIT:
		st->patched++;
		p->bound += (size_t)(pl->site[pl->n_site].n_pre + pl->site[pl->n_site].n_post) *
			    ZYDIS_MAX_INSTRUCTION_LENGTH + TRAMP_FIXED;
		pl->n_site++;
		patch_note_site(c, s->method, "patched");
		break;
	case SKIP_TARGET:
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

/* How far before a candidate the local check below starts: decodes from
 * different offsets mostly fall into step within a few instructions, but
 * padding (runs of 00, of nops) can keep two apart for longer. */
#define NEAR_FIRST 64
#define NEAR_LAST 4096

/* Does the planner's decode of c's stretch start an instruction at c?
 * Told without decoding the stretch from its start: that decode has an
 * instruction start within any ZYDIS_MAX_INSTRUCTION_LENGTH bytes, so it
 * passes through one of the first that many offsets `near` bytes before c
 * and goes on from there as a decode from that offset does.  Every such
 * decode is followed (each address once) up to c: if none reaches c
 * exactly, the planner's does not either (0); if all do, and through the
 * same instruction, so does the planner's (1, *prev that instruction, 0 if
 * c starts the stretch); else it is tried from further back, and at last
 * -1: only the planner's own decode can tell.  A decode that stops at a
 * byte that is no instruction never reaches c, and is left out: were it
 * the planner's, the planner would make no record of c and leave it as it
 * is, which is what a plan's claim that needs a 1 here (a number before a
 * site left native) comes to as well. */
static int starts_insn(struct planner *p, uintptr_t c, uintptr_t *prev)
{
	uint64_t reach[(NEAR_LAST + 63) / 64];
	uintptr_t lo, end;
	uint8_t how;

	*prev = 0;
	if (!stretch_for(p, c, &lo, &end, &how) || c < lo || c >= end)
		return 0;
	if (c == lo)
		return 1;
	for (uintptr_t near = NEAR_FIRST; near <= NEAR_LAST; near *= 4) {
		uintptr_t from = c - lo > near ? c - near : lo, before = 0;
		unsigned n_from = from == lo ? 1 : ZYDIS_MAX_INSTRUCTION_LENGTH;
		bool hit = false, miss = false;

		memset(reach, 0, sizeof reach);
		for (unsigned i = 0; i < n_from; i++)
			reach[i / 64] |= 1ULL << (i % 64);
		for (uintptr_t a = from; a < c; a++) {
			ZydisDecodedInstruction in;
			uintptr_t next;

			if (!(reach[(a - from) / 64] >> ((a - from) % 64) & 1))
				continue;
			if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&p->fast, NULL, (const void *)a,
									end - a, &in)))
				continue;
			next = a + in.length;
			if (next < c)
				reach[(next - from) / 64] |= 1ULL << ((next - from) % 64);
			else if (next > c || (hit && before != a))
				miss = true; /* past c, or a second instruction that ends at c */
			else
				hit = true, before = a;
		}
		if (!hit)
			return 0;
		if (!miss) {
			*prev = before;
			return 1;
		}
		if (from == lo)
			break;
	}
	return -1;
}

/* What the planner itself makes of candidate c (plan_candidate's decision,
 * nothing planned): false if c starts no instruction of its span (or no
 * span can be trusted there), else true with r's nr, status and method as
 * the planner would record them.  It decodes c's function up to c: a
 * cached plan asks it only for the sites it says stay as they are. */
static bool derive(struct planner *p, uintptr_t c, struct plan_rec *r)
{
	struct span *s = span_for(p, c);
	int i = s ? span_index(s, c) : -1;
	struct patch_site x;
	int why;

	if (i < 0)
		return false;
	r->nr = (int32_t)(i > 0 ? static_nr(p, span_insn(s, i - 1)) : -1);
	r->method = s->method;
	if (r->nr == 15) {
		r->status = PLAN_NATIVE_SIGRETURN;
		return true;
	}
	why = pick_region(p, s, i, &x);
	r->status = why == FIT ? PLAN_FIT : why == SKIP_TARGET ? PLAN_SKIP_TARGET : PLAN_SKIP_OTHER;
	return true;
}

/* The static number the planner finds before candidate c: -1 none, -2 c
 * starts no instruction (its decode has no record there). */
static long nr_before(struct planner *p, uintptr_t c)
{
	struct plan_rec own;
	uintptr_t prev;

	switch (starts_insn(p, c, &prev)) {
	case 0:
		return -2;
	case 1:
		return prev ? static_nr(p, prev) : -1;
	default:
		return derive(p, c, &own) ? own.nr : -2;
	}
}

/* Candidate c starts no instruction of the planner's decode (the planner
 * makes no record of it)? */
static bool no_syscall(struct planner *p, uintptr_t c)
{
	struct plan_rec own;
	uintptr_t prev;
	int r = starts_insn(p, c, &prev);

	return !r || (r < 0 && !derive(p, c, &own));
}

/* Does record r of a cached plan hold in memory: its bytes are the mapped
 * ones; a window that is to be patched decodes from its first instruction
 * to the syscall exactly, over simple instructions, and ends where the
 * window ends; and a site it says stays native is one the planner leaves
 * native for these bytes.  NULL, or why not. */
static const char *rec_holds(struct planner *p, const struct plan_rec *r)
{
	uintptr_t c = p->mod.lo + r->off, a = c - r->before;
	const struct decoded *d = NULL;
	struct plan_rec own;
	long last_nr = -1;

	if (a < p->lo || c + r->after > p->hi || memcmp((const void *)a, r->bytes,
							(size_t)r->before + r->after))
		return "a record's bytes are not the mapped code";
	if (c < p->cfg->skip_hi && c + 2 > p->cfg->skip_lo)
		return "a record lies in sandpit's own code";
	/* left native for rt_sigreturn: the planner finds `mov $15` before it */
	if (r->status == PLAN_NATIVE_SIGRETURN)
		return r->nr == 15 && nr_before(p, c) == 15
			       ? NULL : "a site it leaves native is no rt_sigreturn";
	/* left unpatched for want of a window: the planner must say so too */
	if (r->status != PLAN_FIT)
		return derive(p, c, &own) && own.status == r->status && own.nr == r->nr
			       ? NULL : "a site it leaves unpatched is one the planner patches";
	if (a < p->cfg->skip_hi && c + r->after > p->cfg->skip_lo)
		return "a record's window overlaps sandpit's own code";
	for (unsigned j = 0; j < r->n_pre; j++, a += d->in.length) {
		if (a >= c || !(d = planner_decode(p, a)) || !is_simple(p, d))
			return "a window does not decode to its syscall";
		last_nr = static_nr(p, a);
	}
	if (a != c || !(d = planner_decode(p, a)) || d->in.mnemonic != ZYDIS_MNEMONIC_SYSCALL ||
	    d->in.length != SYSCALL_LEN)
		return "a window does not decode to its syscall";
	a += SYSCALL_LEN;
	for (unsigned j = 0; j < r->n_post; j++, a += d->in.length)
		if (a >= c + r->after || !(d = planner_decode(p, a)) || !is_simple(p, d))
			return "a window does not decode to its syscall";
	if (a != c + r->after)
		return "a window does not end where it says";
	/* filter mode leaves the site native by its recorded number: the
	 * number must be the one before the syscall (in the window, or as
	 * the planner finds it), in every mode, so that a plan holds or not
	 * whatever the run that checks it */
	if ((r->n_pre ? last_nr : nr_before(p, c)) != r->nr)
		return "a site it leaves native has another number";
	return NULL;
}

/* The plan of a cache file, checked whole against memory first: NULL, or
 * why it does not hold and nothing of it used.  Its records must be the
 * `syscall`s of the code: each of the n candidates (the 0f 05 pairs the
 * scan found, ascending) has its record, or the planner would find no
 * instruction starting there; and no record is anywhere else. */
static const char *plan_from_cache(struct planner *p, const struct plan_file *f,
				   const uintptr_t *cand, unsigned n)
{
	struct patch_plan *pl = p->plan;
	struct patch_stats *st = &pl->st;
	const uint8_t *pos = f->rec;
	const char *why = NULL;
	struct plan_rec r;
	unsigned k = 0;

	while (!why && plan_file_next(f, &pos, &r)) {
		uintptr_t c = p->mod.lo + r.off;

		for (; !why && k < n && cand[k] < c; k++)
			if (!no_syscall(p, cand[k]))
				why = "it leaves out a syscall of the code";
		if (!why && (k == n || cand[k] != c))
			why = "a record is no candidate of the code";
		if (!why)
			why = rec_holds(p, &r);
		k++;
	}
	for (; !why && k < n; k++)
		if (!no_syscall(p, cand[k]))
			why = "it leaves out a syscall of the code";
	if (why)
		return why;
	st->candidates = n;
	for (pos = f->rec; plan_file_next(f, &pos, &r);) {
		uintptr_t c = p->mod.lo + r.off;

		st->sites++;
		st->by_method[r.method]++;
		if (r.status == PLAN_NATIVE_SIGRETURN) {
			st->native_sigreturn++;
			patch_note_site(c, r.method, "left native (rt_sigreturn)");
		} else if (left_native(p, r.nr)) {
			st->native_allowed++;
			patch_note_site(c, r.method, "left native (allowed in the filter)");
		} else if (r.status == PLAN_FIT) {
			struct patch_site *x = &pl->site[pl->n_site++];

			*x = (struct patch_site){ .addr = c, .lo = c - r.before, .hi = c + r.after,
						  .n_pre = r.n_pre, .n_post = r.n_post };
			st->patched++;
			p->bound += (size_t)(x->n_pre + x->n_post) * ZYDIS_MAX_INSTRUCTION_LENGTH +
				    TRAMP_FIXED;
			patch_note_site(c, r.method, "patched");
		} else if (r.status == PLAN_SKIP_TARGET) {
			st->skipped_target++;
			patch_note_site(c, r.method, "not patched (a branch target is in the way)");
		} else {
			st->skipped_other++;
			patch_note_site(c, r.method, "not patched (no window fits)");
		}
	}
	return NULL;
}

/* The cache's plan for the object, given the scan's n candidates: true if
 * it held whole in memory and is p's plan now.  The scan reads all of the
 * code (a big object's pages are mapped for it), but a plan that only the
 * key tied to the code could leave out any syscall, or leave it native,
 * and every later run of every program using that object would be killed
 * there (strict mode) or trapped at each call (filter mode). */
static bool try_cache(struct planner *p, const uintptr_t *cand, unsigned n)
{
	struct patch_plan *pl = p->plan;
	struct plan_file f;
	void *mem = NULL;
	bool taken = false;
	int r = p->inside ? plan_cache_preloaded(&p->key, &f, &mem)
		: p->cacheable ? plan_cache_get(&p->key, p->path, &f, &mem) : 0;

	if (r == 1 && (pl->site = p_calloc(f.n_rec ? f.n_rec : 1, sizeof *pl->site))) {
		const char *why = plan_from_cache(p, &f, cand, n);

		taken = !why;
		plan_cache_note(p->path, taken ? "plan from cache (verified)" : "cache refused", why);
		if (!taken) { /* nothing of it kept: planned from the scan below */
			p_free(pl->site);
			pl->site = NULL;
		}
	}
	if (p->inside) {
		p_free(mem);
		/* still needed next time; or planned here, for the parent to cache */
		plan_cache_hint(p->path, !taken);
		if (!taken)
			plan_cache_note(p->path, "plan computed", "named for the parent to cache");
	} else {
		plan_cache_release(mem);
	}
	return taken;
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
	if (try_cache(p, cand, n)) {
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
	ZydisDecoderInit(&p->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	ZydisDecoderInit(&p->fast, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
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
				    : go_table(p) ? PATCH_BY_GOPCLNTAB : PATCH_BY_LINEAR);
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
