/* Spans: code decoded lazily from a known instruction boundary (see
 * patch_span.h). */
#include <emmintrin.h>
#include <errno.h>
#include <string.h>
#include "user/patch/patch_span.h"
#include "user/patch/patch_sys.h"

/* heapsort: libc's qsort may allocate, and must not at run time */
static void sift(uintptr_t *v, size_t i, size_t n)
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && v[c + 1] > v[c])
			c++;
		if (v[i] >= v[c])
			return;
		uintptr_t t = v[i];
		v[i] = v[c];
		v[c] = t;
	}
}

static void sort_addrs(uintptr_t *v, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift(v, i, n);
	while (n-- > 1) {
		uintptr_t t = v[0];
		v[0] = v[n];
		v[n] = t;
		sift(v, 0, n);
	}
}

void span_start(struct span *s, const ZydisDecoder *dec, uintptr_t lo, uintptr_t end)
{
	s->dec = dec;
	s->lo = s->hi = lo;
	s->end = end;
	s->stuck = false;
	s->err = 0;
	s->n_ins = s->n_tgt = 0;
	s->sorted = true;
}

static void span_target(struct span *s, uintptr_t t)
{
	if (t < s->lo || t >= s->end)
		return;
	if (p_grow(&s->tgt, &s->cap_tgt, s->n_tgt, sizeof *s->tgt)) {
		s->err = -ENOMEM;
		return;
	}
	s->tgt[s->n_tgt++] = t;
	s->sorted = false;
}

void span_extend(struct span *s, uintptr_t to)
{
	ZydisDecodedInstruction in;

	to = to < s->end ? to : s->end;
	while (s->hi < to && !s->stuck && !s->err) {
		uintptr_t next;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(s->dec, NULL, (const void *)s->hi,
								s->end - s->hi, &in))) {
			s->stuck = true;
			break;
		}
		if (p_grow(&s->ins, &s->cap_ins, s->n_ins, sizeof *s->ins)) {
			s->err = -ENOMEM;
			break;
		}
		s->ins[s->n_ins++] = s->hi - s->lo;
		next = s->hi + in.length;
		/* a return address is a branch target too */
		if (in.mnemonic == ZYDIS_MNEMONIC_CALL)
			span_target(s, next);
		if ((in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) && in.raw.imm[0].is_relative)
			span_target(s, next + in.raw.imm[0].value.s);
		s->hi = next;
	}
}

int span_index(struct span *s, uintptr_t a)
{
	unsigned lo = 0, hi;

	span_extend(s, a + 1);
	if (a < s->lo || a >= s->hi)
		return -1;
	hi = s->n_ins;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (s->lo + s->ins[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n_ins && s->lo + s->ins[lo] == a ? (int)lo : -1;
}

/* A target in (lo, hi) among the branches decoded so far? */
static bool known_inner_target(struct span *s, uintptr_t lo, uintptr_t hi)
{
	unsigned a = 0, b = s->n_tgt;

	if (!s->sorted && s->n_tgt < 64) {
		for (unsigned i = 0; i < s->n_tgt; i++)
			if (s->tgt[i] > lo && s->tgt[i] < hi)
				return true;
		return false;
	}
	if (!s->sorted) {
		sort_addrs(s->tgt, s->n_tgt);
		s->sorted = true;
	}
	while (a < b) {
		unsigned mid = a + (b - a) / 2;

		if (s->tgt[mid] <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a < s->n_tgt && s->tgt[a] < hi;
}

/* Could an instruction at a be a direct jmp/jcc/call?  Its target then. */
static bool maybe_branch(uintptr_t a, uintptr_t end, uintptr_t *t)
{
	const uint8_t *b = (const uint8_t *)a;
	int32_t rel;

	if (end - a >= 2 && ((b[0] >= 0x70 && b[0] <= 0x7f) || (b[0] >= 0xe0 && b[0] <= 0xe3) ||
			     b[0] == 0xeb)) {
		*t = a + 2 + (int8_t)b[1];
		return true;
	}
	if (end - a >= 5 && (b[0] == 0xe8 || b[0] == 0xe9)) {
		memcpy(&rel, b + 1, 4);
		*t = a + 5 + rel;
		return true;
	}
	if (end - a >= 6 && b[0] == 0x0f && b[1] >= 0x80 && b[1] <= 0x8f) {
		memcpy(&rel, b + 2, 4);
		*t = a + 6 + rel;
		return true;
	}
	return false;
}

/* The first byte in [a, end) that could start a branch into (lo, hi). */
static uintptr_t next_maybe(uintptr_t a, uintptr_t end, uintptr_t lo, uintptr_t hi)
{
	const __m128i e8 = _mm_set1_epi8((char)0xe8), e9 = _mm_set1_epi8((char)0xe9);
	const __m128i of = _mm_set1_epi8(0x0f);
	uintptr_t near = hi + 128, t;    /* no rel8 reaches (lo, hi) from further on */

	while (a < end) {
		if (a >= near && a + 16 <= end) {
			/* only rel32 forms: e8, e9, 0f 8x */
			__m128i x = _mm_loadu_si128((const __m128i *)a);
			unsigned m = _mm_movemask_epi8(_mm_or_si128(
				_mm_or_si128(_mm_cmpeq_epi8(x, e8), _mm_cmpeq_epi8(x, e9)),
				_mm_cmpeq_epi8(x, of)));

			if (!m) {
				a += 16;
				continue;
			}
			a += __builtin_ctz(m);
		}
		if (maybe_branch(a, end, &t) && t > lo && t < hi)
			return a;
		a++;
	}
	return end;
}

/* Is some branch target strictly inside (lo, hi)?  A linear decode of whole
 * functions costs more than the start-up budget, so the rest of the function
 * is decoded only as far as each byte pattern that could be a branch into
 * (lo, hi), to see whether it is one. */
bool span_inner_target(struct span *s, uintptr_t lo, uintptr_t hi)
{
	uintptr_t a;

	for (;;) {
		if (s->err || known_inner_target(s, lo, hi))
			return true;
		a = next_maybe(s->hi, s->end, lo, hi);
		if (a >= s->end)
			return false;
		span_extend(s, a + 1);
		if (a >= s->hi)
			return true;    /* could not decode that far: assume it is one */
	}
}

void span_free(struct span *s)
{
	p_free(s->ins);
	p_free(s->tgt);
}
