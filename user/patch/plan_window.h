/* The planner's state and a site's window (internal to the patcher): the
 * decodes around a candidate, the stretch of code it is decoded in (its
 * function, found by .eh_frame, the symbols or Go's table), which
 * instructions can move, the static number before a syscall, and the
 * window of displaced instructions, one no branch lands inside.  Shared by
 * the planner (patch_plan.c), the check of a cached plan (plan_verify.c)
 * and the trampolines (patch_trampoline.c), which all stand above it. */
#ifndef SANDPIT_USER_PLAN_WINDOW_H
#define SANDPIT_USER_PLAN_WINDOW_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <Zydis/Zydis.h>
#include "user/patch/arch.h"
#include "user/patch/elf_read.h"
#include "user/patch/patch_types.h"
#include "user/patch/patch_objects.h"
#include "user/patch/patch_span.h"
#include "user/patch/plan_file.h"
#include "user/patch/proc_maps.h"

#define MAX_SIDE 4          /* displaced instructions on one side of a syscall */
#define SITE_MAX (2 * MAX_SIDE * ZYDIS_MAX_INSTRUCTION_LENGTH + SYSCALL_LEN)

struct planner {
	const struct patch_config *cfg;
	struct module mod;
	uintptr_t lo, hi;          /* the range being planned */
	ZydisDecoder dec;
	ZydisDecoder fast;         /* lengths and raw fields only, for spans */
	struct elf_view view;      /* what of the module may be read */
	struct elf_ehtab eh;
	bool has_eh;
	struct elf_symtab sym;
	bool has_sym;
	bool clock;                /* rdtsc/rdtscp sites too (strict mode, the vDSO) */
	struct elf_gotab go;
	int go_state;              /* 0: not looked for yet, 1: found, -1: none */
	struct span fn, whole;
	struct patch_plan *plan;
	size_t bound;              /* code_len can not exceed this */
	/* the position-independent parts of every trampoline, encoded once */
	uint8_t lea_down[16], lea_up[16];
	size_t n_down, n_up;
	/* decodes of the instructions around a site: each is asked for by the
	 * checks and again by the relocation; the operands only when a check
	 * needs them (planner_operands) */
	struct decoded {
		uintptr_t at;
		bool ok, has_op;
		ZydisDecoderContext ctx;
		ZydisDecodedInstruction in;
		ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	} dc[8];
	/* the plan cache: the object's file (cacheable), and what the analysis
	 * found, one record a `syscall`, to be written there */
	bool cacheable, inside;    /* outside the sandbox / inside it */
	struct plan_key key;
	char path[512];
	struct plan_rec *rec;
	unsigned n_rec;
};

/* The decode of the instruction at a, NULL if it does not decode. */
const struct decoded *planner_decode(struct planner *p, uintptr_t a);
/* Its operands (all of them, hidden ones too), decoded on first use. */
const ZydisDecodedOperand *planner_operands(struct planner *p, const struct decoded *d);

/* Go's function table, looked for the first time it is asked for: true if
 * the object is a Go program that has one (p->go). */
bool planner_go_table(struct planner *p);
/* The stretch the planner decodes candidate c in, from a known instruction
 * boundary: [*lo, *end) and how lo was found.  0: none can be trusted; 1:
 * a function (or the gap after one); 2: the whole object (no table at all). */
int planner_stretch_for(struct planner *p, uintptr_t c, uintptr_t *lo, uintptr_t *end,
			uint8_t *how);
/* The stretch that holds candidate c, decoded, NULL if none can be trusted. */
struct span *planner_span_for(struct planner *p, uintptr_t c);
/* Can this instruction run unchanged at another address (once re-encoded)? */
bool planner_is_simple(struct planner *p, const struct decoded *d);
/* The system call number, if the instruction at a (the one right before
 * the syscall) is `mov $nr,%eax` (or %rax); -1 if it is not known there. */
long planner_static_nr(struct planner *p, uintptr_t a);

/* Why a window was or was not found for a site. */
enum { WIN_FIT = 0, WIN_SKIP_TARGET, WIN_SKIP_OTHER };
/* The window for instruction i of span s (a syscall, rdtsc or rdtscp):
 * WIN_FIT with *out set, else why not. */
int planner_pick_region(struct planner *p, struct span *s, unsigned i, struct patch_site *out);
/* Filter mode leaves a site of call nr as it is (allowed outright)? */
bool planner_left_native(const struct planner *p, long nr);
#endif
