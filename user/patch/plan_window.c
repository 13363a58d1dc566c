/* The planner's state and a site's window (see plan_window.h). */
#include <string.h>
#include "user/patch/plan_window.h"

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
bool planner_go_table(struct planner *p)
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
int planner_stretch_for(struct planner *p, uintptr_t c, uintptr_t *lo, uintptr_t *end,
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
	else if (planner_go_table(p) && elf_gofunc_lookup(&p->go, c, lo, &hi) == 1)
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
struct span *planner_span_for(struct planner *p, uintptr_t c)
{
	uintptr_t lo, end;
	uint8_t how;

	switch (planner_stretch_for(p, c, &lo, &end, &how)) {
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
bool planner_is_simple(struct planner *p, const struct decoded *d)
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
		if (op[i].type == ZYDIS_OPERAND_TYPE_MEMORY && op[i].mem.base == ARCH_REG_PC)
			return true;
		if (op[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op[i].imm.is_relative)
			return in->meta.category == ZYDIS_CATEGORY_COND_BR;
	}
	return false;
}

static bool simple_at(struct planner *p, uintptr_t a)
{
	const struct decoded *d = planner_decode(p, a);

	return d && planner_is_simple(p, d);
}

/* The system call number, if the instruction right before the syscall is
 * `mov $nr,%eax` (or %rax); -1 if it is not known there. */
long planner_static_nr(struct planner *p, uintptr_t a)
{
	const struct decoded *d = planner_decode(p, a);
	const ZydisDecodedOperand *op = d && d->in.mnemonic == ZYDIS_MNEMONIC_MOV ?
						planner_operands(p, d) : NULL;

	if (op && op[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	    (op[0].reg.value == ARCH_REG_NR || op[0].reg.value == ARCH_REG_NR_WIDE) &&
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
		return WIN_SKIP_OTHER;
	for (unsigned j = i - k; j <= i + m; j++)
		if (j != i && !simple_at(p, span_insn(s, j)))
			return WIN_SKIP_OTHER;
	if (span_inner_target(s, lo, hi))
		return WIN_SKIP_TARGET;
	*out = (struct patch_site){ .addr = span_insn(s, i), .lo = lo, .hi = hi,
				    .n_pre = k, .n_post = m };
	return WIN_FIT;
}

/* Prefer the instructions before the syscall (the region then ends where the
 * syscall returns to), then those after it, then both. */
int planner_pick_region(struct planner *p, struct span *s, unsigned i, struct patch_site *out)
{
	int why = WIN_SKIP_OTHER, r;
	unsigned k, m;

#define TRY(k_, m_) do { \
		r = try_region(p, s, i, (k_), (m_), out); \
		if (r == WIN_FIT) \
			return WIN_FIT; \
		if (r == WIN_SKIP_TARGET) \
			why = WIN_SKIP_TARGET; \
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
bool planner_left_native(const struct planner *p, long nr)
{
	return nr >= 0 && p->cfg->leave_native && p->cfg->leave_native(p->cfg->ctx, nr);
}
