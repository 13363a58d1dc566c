/* Trampolines, re-encoded with Zydis (see patch_trampoline.h). */
#include <errno.h>
#include <string.h>
#include <Zydis/Zydis.h>
#include "user/patch/patch_sys.h"
#include "user/patch/patch_trampoline.h"
#include "user/layout/tramp_layout.h"

struct emit {
	uint8_t *buf;
	size_t off, cap;
	uintptr_t base;            /* runtime address of buf[0] */
};

static int emit_req(struct emit *e, ZydisEncoderRequest *r)
{
	ZyanUSize len = e->cap - e->off;

	if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstructionAbsolute(r, e->buf + e->off, &len,
								 e->base + e->off)))
		return -ERANGE;
	e->off += len;
	return 0;
}

static void req_init(ZydisEncoderRequest *r, ZydisMnemonic mn, unsigned nops)
{
	memset(r, 0, sizeof *r);
	r->machine_mode = ARCH_MACHINE_MODE;
	r->mnemonic = mn;
	r->operand_count = nops;
}

static int emit_lea_rsp(struct emit *e, int disp)
{
	ZydisEncoderRequest r;

	req_init(&r, ZYDIS_MNEMONIC_LEA, 2);
	r.operands[0].type = ZYDIS_OPERAND_TYPE_REGISTER;
	r.operands[0].reg.value = ARCH_REG_SP;
	r.operands[1].type = ZYDIS_OPERAND_TYPE_MEMORY;
	r.operands[1].mem.base = ARCH_REG_SP;
	r.operands[1].mem.displacement = disp;
	r.operands[1].mem.size = 8;
	return emit_req(e, &r);
}

/* An instruction with one 32-bit field that is relative to its end (a
 * jmp's target, a rip-relative displacement), encoded once by Zydis; each
 * use is that encoding with the field set to its own distance, at the
 * offset and size Zydis's decoder reports for it.  The encoder took about
 * 0.2 us an instruction, and a trampoline has two of them besides its
 * site's jmp. */
struct rel32_insn {
	uint8_t bytes[ZYDIS_MAX_INSTRUCTION_LENGTH];
	uint8_t len, at;
	bool ok;
};

static void rel32_make(ZydisEncoderRequest *r, bool disp, struct rel32_insn *t)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction in;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	ZyanUSize len = sizeof t->bytes;

	ZydisDecoderInit(&dec, ARCH_MACHINE_MODE, ARCH_STACK_WIDTH);
	t->ok = ZYAN_SUCCESS(ZydisEncoderEncodeInstructionAbsolute(r, t->bytes, &len, 0)) &&
		ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, t->bytes, len, &in, op)) &&
		in.length == len &&
		(disp ? in.raw.disp.size == 32 :
			in.raw.imm[0].size == 32 && in.raw.imm[0].is_relative);
	t->len = (uint8_t)len;
	t->at = !t->ok ? 0 : disp ? in.raw.disp.offset : in.raw.imm[0].offset;
	t->ok = t->ok && t->at + 4 <= t->len;
}

/* `call [rip + slot]` and `jmp target` (rel32), made once */
static const struct rel32_insn *rel32_call, *rel32_jmp;

static void rel32_init(void)
{
	static struct rel32_insn call, jmp;
	ZydisEncoderRequest r;

	if (__atomic_load_n(&rel32_jmp, __ATOMIC_ACQUIRE))
		return; /* (two makers would write the same bytes) */
	req_init(&r, ZYDIS_MNEMONIC_CALL, 1);
	r.branch_type = ZYDIS_BRANCH_TYPE_NEAR;
	r.operands[0].type = ZYDIS_OPERAND_TYPE_MEMORY;
	r.operands[0].mem.base = ARCH_REG_PC;
	r.operands[0].mem.displacement = 0x10000;
	r.operands[0].mem.size = 8;
	rel32_make(&r, true, &call);
	req_init(&r, ZYDIS_MNEMONIC_JMP, 1);
	r.branch_type = ZYDIS_BRANCH_TYPE_NEAR;
	r.branch_width = ZYDIS_BRANCH_WIDTH_32;
	r.operands[0].type = ZYDIS_OPERAND_TYPE_IMMEDIATE;
	r.operands[0].imm.u = 0x10000;
	rel32_make(&r, false, &jmp);
	rel32_call = &call;
	__atomic_store_n(&rel32_jmp, &jmp, __ATOMIC_RELEASE);
}

static int emit_copy(struct emit *e, const uint8_t *bytes, size_t n)
{
	if (e->cap - e->off < n)
		return -ERANGE;
	memcpy(e->buf + e->off, bytes, n);
	e->off += n;
	return 0;
}

static int emit_rel32(struct emit *e, const struct rel32_insn *t, uintptr_t target)
{
	int64_t rel = (int64_t)(target - (e->base + e->off + t->len));
	int32_t v = (int32_t)rel;

	if (!t->ok || rel != v || emit_copy(e, t->bytes, t->len))
		return -ERANGE;
	memcpy(e->buf + e->off - t->len + t->at, &v, sizeof v);
	return 0;
}

static int emit_call_slot(struct emit *e, uintptr_t slot)
{
	return emit_rel32(e, rel32_call, slot);
}

static int emit_jmp(struct emit *e, uintptr_t to)
{
	return emit_rel32(e, rel32_jmp, to);
}

static bool abs_of(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op,
		   uintptr_t at, uint64_t *v)
{
	return ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(in, op, at, v));
}

static bool same_operand(const ZydisDecodedInstruction *ia, const ZydisDecodedOperand *a,
			 uintptr_t pa, const ZydisDecodedInstruction *ib,
			 const ZydisDecodedOperand *b, uintptr_t pb)
{
	uint64_t va, vb;

	if (a->type != b->type)
		return false;
	/* immediates may change width (rel8 to rel32, imm32 to imm8): compare values */
	if (a->type != ZYDIS_OPERAND_TYPE_IMMEDIATE && a->size != b->size)
		return false;
	switch (a->type) {
	case ZYDIS_OPERAND_TYPE_REGISTER:
		return a->reg.value == b->reg.value;
	case ZYDIS_OPERAND_TYPE_MEMORY:
		if (a->mem.type != b->mem.type || a->mem.segment != b->mem.segment ||
		    a->mem.base != b->mem.base || a->mem.index != b->mem.index ||
		    a->mem.scale != b->mem.scale)
			return false;
		if (a->mem.base != ARCH_REG_PC)
			return a->mem.disp.value == b->mem.disp.value;
		return abs_of(ia, a, pa, &va) && abs_of(ib, b, pb, &vb) && va == vb;
	case ZYDIS_OPERAND_TYPE_IMMEDIATE:
		if (a->imm.is_relative != b->imm.is_relative)
			return false;
		if (!a->imm.is_relative)
			return a->imm.value.u == b->imm.value.u;
		return abs_of(ia, a, pa, &va) && abs_of(ib, b, pb, &vb) && va == vb;
	case ZYDIS_OPERAND_TYPE_POINTER:
		return a->ptr.segment == b->ptr.segment && a->ptr.offset == b->ptr.offset;
	default:
		return true;
	}
}

#define SEMANTIC_PREFIXES (ZYDIS_ATTRIB_HAS_LOCK | ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE | \
			   ZYDIS_ATTRIB_HAS_REPNE | ZYDIS_ATTRIB_HAS_XACQUIRE | \
			   ZYDIS_ATTRIB_HAS_XRELEASE)

static bool same_insn(const ZydisDecodedInstruction *ia, const ZydisDecodedOperand *a,
		      uintptr_t pa, const ZydisDecodedInstruction *ib,
		      const ZydisDecodedOperand *b, uintptr_t pb)
{
	if (ia->mnemonic != ib->mnemonic || ia->operand_count != ib->operand_count ||
	    ia->operand_width != ib->operand_width || ia->address_width != ib->address_width ||
	    (ia->attributes & SEMANTIC_PREFIXES) != (ib->attributes & SEMANTIC_PREFIXES))
		return false;
	for (unsigned i = 0; i < ia->operand_count; i++)
		if (!same_operand(ia, &a[i], pa, ib, &b[i], pb))
			return false;
	return true;
}

/* The instruction at `a` into the trampoline: its own bytes when nothing in
 * it is relative to where it is (ZYDIS_ATTRIB_IS_RELATIVE: no rip-relative
 * operand, no relative branch target), else re-encoded with its absolute
 * targets kept and checked to decode back to the same instruction. */
static int relocate(struct planner *p, uintptr_t a, struct emit *e, size_t *len)
{
	const struct decoded *d = planner_decode(p, a);
	const ZydisDecodedInstruction *in = d ? &d->in : NULL;
	const ZydisDecodedOperand *op;
	ZydisDecodedInstruction out;
	ZydisDecodedOperand oop[ZYDIS_MAX_OPERAND_COUNT];
	ZydisEncoderRequest r;
	size_t at = e->off;
	uint64_t v;

	if (!d)
		return -EINVAL;
	*len = in->length;
	if (!(in->attributes & ZYDIS_ATTRIB_IS_RELATIVE))
		return emit_copy(e, (const uint8_t *)a, in->length);
	if (!(op = planner_operands(p, d)) || !ZYAN_SUCCESS(ZydisEncoderDecodedInstructionToEncoderRequest(
		    in, op, in->operand_count_visible, &r)))
		return -EINVAL;
	for (unsigned i = 0; i < in->operand_count_visible; i++) {
		if (op[i].type == ZYDIS_OPERAND_TYPE_MEMORY && op[i].mem.base == ARCH_REG_PC) {
			if (!abs_of(in, &op[i], a, &v))
				return -EINVAL;
			r.operands[i].mem.displacement = (int64_t)v;
		} else if (op[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op[i].imm.is_relative) {
			if (!abs_of(in, &op[i], a, &v))
				return -EINVAL;
			r.operands[i].imm.u = v;
			/* let the encoder widen rel8 to rel32 */
			r.branch_type = ZYDIS_BRANCH_TYPE_NONE;
			r.branch_width = ZYDIS_BRANCH_WIDTH_NONE;
		}
	}
	if (emit_req(e, &r))
		return -ERANGE;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&p->dec, e->buf + at, e->off - at, &out, oop)) ||
	    out.length != e->off - at || !same_insn(in, op, a, &out, oop, e->base + at))
		return -EINVAL;
	return 0;
}

static int encode_fixed(struct planner *p)
{
	struct emit down = { .buf = p->lea_down, .cap = sizeof p->lea_down };
	struct emit up = { .buf = p->lea_up, .cap = sizeof p->lea_up };
	/* step over the red zone; lea leaves the flags alone */
	int r = emit_lea_rsp(&down, -TRAMP_RED_ZONE);

	rel32_init();

	r = r ? r : emit_lea_rsp(&up, TRAMP_RED_ZONE);
	p->n_down = down.off;
	p->n_up = up.off;
	/* the stub finds the jmp back at this distance from its return address */
	return r ? r : p->n_up == TRAMP_UP_LEN ? 0 : -EINVAL;
}

static int encode_tramp(struct planner *p, struct patch_site *s, struct emit *e)
{
	uintptr_t a = s->lo;
	size_t len;
	int r = 0;

	s->tramp = e->off;
	for (unsigned j = 0; !r && j < s->n_pre; j++, a += len)
		r = relocate(p, a, e, &len);
	r = r ? r : emit_copy(e, p->lea_down, p->n_down);
	r = r ? r : emit_call_slot(e, e->base + (uintptr_t)s->kind * PATCH_SLOT_SIZE);
	r = r ? r : emit_copy(e, p->lea_up, p->n_up);
	a = s->addr + site_len((const uint8_t *)s->addr);
	for (unsigned j = 0; !r && j < s->n_post; j++, a += len)
		r = relocate(p, a, e, &len);
	r = r ? r : emit_jmp(e, s->hi);
	s->tramp_len = e->off - s->tramp;
	return r;
}

int tramp_encode(struct planner *p)
{
	struct patch_plan *pl = p->plan;
	struct emit e = { .buf = p_calloc(1, p->bound), .cap = p->bound, .base = pl->region };
	unsigned j = 0;

	if (!e.buf)
		return -ENOMEM;
	if (encode_fixed(p)) {
		p_free(e.buf);
		return -EINVAL;
	}
	memcpy(e.buf, &p->cfg->stub, PATCH_SLOT_SIZE);
	e.off = PATCH_SLOT_SIZE;
	if (p->cfg->rdtsc_stub) {
		memcpy(e.buf + e.off, &p->cfg->rdtsc_stub, PATCH_SLOT_SIZE);
		memcpy(e.buf + e.off + PATCH_SLOT_SIZE, &p->cfg->rdtscp_stub, PATCH_SLOT_SIZE);
		e.off += 2 * PATCH_SLOT_SIZE;
	}
	for (unsigned i = 0; i < pl->n_site; i++) {
		size_t off = e.off;

		if (encode_tramp(p, &pl->site[i], &e)) {
			e.off = off;
			if (pl->site[i].kind != PATCH_SYSCALL) {
				pl->st.clock_patched--; /* left to fault and be emulated */
				continue;
			}
			pl->st.patched--;
			pl->st.skipped_other++;
			continue;
		}
		pl->site[j++] = pl->site[i];
	}
	pl->n_site = j;
	pl->code = e.buf;
	pl->code_len = e.off;
	return 0;
}

int tramp_site_bytes(const struct patch_plan *pl, const struct patch_site *s, uint8_t *buf)
{
	struct emit e = { .buf = buf, .cap = SITE_MAX, .base = s->lo };

	rel32_init();
	if (emit_jmp(&e, pl->region + s->tramp) || e.off != JMP_LEN)
		return -ERANGE;
	if (s->hi - s->lo > JMP_LEN &&
	    !ZYAN_SUCCESS(ZydisEncoderNopFill(buf + JMP_LEN, s->hi - s->lo - JMP_LEN)))
		return -EINVAL;
	return 0;
}
