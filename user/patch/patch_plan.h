/* Planning (internal to the patcher): for one executable range, find every
 * `syscall` (0f 05 pairs, kept where they start an instruction of the
 * enclosing function; in strict mode rdtsc and rdtscp too), and choose each site's window of displaced
 * instructions, one no branch lands inside. */
#ifndef SANDPIT_USER_PATCH_PLAN_H
#define SANDPIT_USER_PATCH_PLAN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <Zydis/Zydis.h>
#include "user/patch/elf_read.h"
#include "user/patch/patch.h"
#include "user/patch/patch_objects.h"
#include "user/patch/patch_span.h"
#include "user/patch/plan_file.h"
#include "user/patch/proc_maps.h"

#define JMP_LEN 5
#define SYSCALL_LEN 2
#define MAX_SIDE 4          /* displaced instructions on one side of a syscall */
#define TRAMP_FIXED 32      /* lea + call + lea + jmp = 24 bytes, rounded up */
#define SITE_MAX (2 * MAX_SIDE * ZYDIS_MAX_INSTRUCTION_LENGTH + SYSCALL_LEN)

/* The length of the instruction a candidate's bytes b stand for: syscall
 * (0f 05) or rdtsc (0f 31), 2; rdtscp (0f 01 f9), 3. */
static inline unsigned site_len(const uint8_t *b)
{
	return b[1] == 0x01 ? 3 : SYSCALL_LEN;
}

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

/* Set p up to plan [lo, hi) of mod into *plan, reading the module's tables
 * within its readable mappings m.  0 or -errno. */
int planner_init(struct planner *p, const struct patch_config *cfg,
		 const struct module *mod, uintptr_t lo, uintptr_t hi,
		 struct patch_plan *plan, const struct maps *m);
/* Scan the range and plan its sites (plan->site, plan->st).  0 or -errno. */
int planner_analyse(struct planner *p);
void planner_free(struct planner *p);

/* The decode of the instruction at a, NULL if it does not decode. */
const struct decoded *planner_decode(struct planner *p, uintptr_t a);
/* Its operands (all of them, hidden ones too), decoded on first use. */
const ZydisDecodedOperand *planner_operands(struct planner *p, const struct decoded *d);
#endif
