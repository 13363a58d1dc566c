/* Spans (internal to the patcher): stretches of code (a function, or a
 * whole object without tables) decoded lazily from their start, recording
 * instruction starts and direct branch targets, and the check that no
 * branch lands inside a patch window. */
#ifndef SANDPIT_USER_PATCH_SPAN_H
#define SANDPIT_USER_PATCH_SPAN_H
#include <stdbool.h>
#include <stdint.h>
#include <Zydis/Zydis.h>

struct span {
	const ZydisDecoder *dec;
	uintptr_t lo, end;           /* the stretch (a function): [lo, end) */
	uintptr_t hi;                /* decoded so far: [lo, hi) */
	bool stuck;                  /* the byte at hi does not decode */
	int err;
	uint32_t *ins;               /* instruction starts, offsets from lo */
	unsigned n_ins, cap_ins;
	uintptr_t *tgt;              /* direct branch targets in [lo, end) */
	unsigned n_tgt, cap_tgt;
	bool sorted;
	uint8_t method;              /* enum patch_method: how lo was found */
};

/* Begin decoding [lo, end) (the arrays are reused). */
void span_start(struct span *s, const ZydisDecoder *dec, uintptr_t lo, uintptr_t end);
/* Decode on until `to` (or the end, or a byte that does not decode). */
void span_extend(struct span *s, uintptr_t to);
/* Is there an instruction i?  Decodes as far as needed. */
static inline bool span_has(struct span *s, unsigned i)
{
	while (i >= s->n_ins && s->hi < s->end && !s->stuck && !s->err)
		span_extend(s, s->hi + 1);
	return i < s->n_ins;
}

/* Start of instruction i, or where the decoded code ends. */
static inline uintptr_t span_insn(struct span *s, unsigned i)
{
	return span_has(s, i) ? s->lo + s->ins[i] : s->hi;
}

/* The index of the instruction that starts at a, -1 if none does. */
int span_index(struct span *s, uintptr_t a);
/* Is some branch target strictly inside (lo, hi)? */
bool span_inner_target(struct span *s, uintptr_t lo, uintptr_t hi);
void span_free(struct span *s);
#endif
