/* The T table: the read-only lookup table that the trusted thread (assembly)
 * and the untrusted-side entry consult for every system call.  Compiled from
 * the policy model by policy_compile_table(); lives in a sealed memfd that is
 * mapped read-only in P, so U can read it but never change it.
 *
 * This header is included by C and by assembly (asm/x86_64/trusted_thread.S);
 * keep the layout in step with the offsets below (checked by static asserts). */
#ifndef SANDPIT_T_TABLE_H
#define SANDPIT_T_TABLE_H

#define TT_MAGIC      0x54545053u /* "SPTT" */
#define TT_MAX_NR     512         /* syscall numbers 0..TT_MAX_NR-1 */
#define TT_MAX_RULES  256

/* classes (tt_entry.cls) */
#define TT_DENY     0   /* return -err; also what an unknown number gets   */
#define TT_ALLOW    1   /* T executes it as it is                          */
#define TT_THREAD   2   /* T runs the entry's rules on the registers, then executes */
#define TT_PROCESS  3   /* memory argument: U -> T -> B -> S, T executes from S */
#define TT_KILL     4   /* the process is killed                            */
#define TT_EMU      5   /* T emulates it; err holds the emulation id (TE_*) */
#define TT_NATIVE   6   /* U executes it itself (allowed by seccomp strict)  */

/* emulation ids for TT_EMU */
#define TE_GETTID   1   /* returns U's tid, not T's */
#define TE_ZERO     2   /* returns 0 and does nothing */
#define TE_CLOSE_RANGE 3 /* close_range on the numbers around sandpit's descriptors */

/* rule ops (tt_rule.op).  a[i] is syscall argument i.  A rule whose carg is
 * not TT_NOARG applies only when (a[carg] & cmask) != 0.  A failing rule makes
 * the call return -err. */
#define TR_MASK_ZERO   1  /* (a[arg] & mask) == 0                           */
#define TR_MASKED_EQ   2  /* (a[arg] & mask) == val                         */
#define TR_MASKED_NE   3  /* (a[arg] & mask) != val                         */
#define TR_FD_FREE     4  /* (int)a[arg] is not one of sandpit's descriptors */
#define TR_RANGE_FREE  5  /* [a[arg], a[arg]+a[arg2]) (page-rounded) overlaps no protected range;
                             arg2 TT_NOARG: the single address a[arg] */
#define TR_SELF_PID    6  /* a[arg] == P's pid                               */
#define TR_U_TID       7  /* (int)a[arg] <= 0, or the tid of a U B knows     */
#define TR_LE          8  /* a[arg] <= val (unsigned)                        */
#define TR_BITSET      9  /* d = a[arg] - val (mod 2^64): d < 64 && ((mask >> d) & 1) */

#define TT_NOARG 0xff

#ifndef __ASSEMBLER__
#include <stdint.h>

struct tt_entry {
	uint8_t cls;
	uint8_t nrules;
	uint16_t first;  /* index of the first rule in tt_table.rules */
	int32_t err;     /* errno for TT_DENY / failing rules default; TE_* for TT_EMU */
};

struct tt_rule {
	uint8_t op;
	uint8_t arg;
	uint8_t arg2;
	uint8_t carg;
	int32_t err;
	uint64_t mask;
	uint64_t val;
	uint64_t cmask;
};

struct tt_table {
	uint32_t magic;
	uint32_t nrules;
	struct tt_entry entries[TT_MAX_NR];
	struct tt_rule rules[TT_MAX_RULES];
	/* bit nr: a refusal of nr (deny, or a failed rule) on a first argument
	 * that is not an open descriptor, or is sandpit's, says EBADF
	 * (syscall_refusal_checks_fd); T decides it with F_GETFD */
	uint8_t fd_checked[TT_MAX_NR / 8];
};

_Static_assert(sizeof(struct tt_entry) == 8, "tt_entry layout");
_Static_assert(sizeof(struct tt_rule) == 32, "tt_rule layout");
_Static_assert(__builtin_offsetof(struct tt_table, fd_checked) ==
		       8 + 8 * TT_MAX_NR + 32 * TT_MAX_RULES, "TT_FD_CHECKED");
#endif

/* offsets for assembly */
#define TT_ENTRIES      8
#define TT_RULES        (8 + 8 * TT_MAX_NR)
#define TTE_CLS         0
#define TTE_NRULES      1
#define TTE_FIRST       2
#define TTE_ERR         4
#define TTR_OP          0
#define TTR_ARG         1
#define TTR_ARG2        2
#define TTR_CARG        3
#define TTR_ERR         4
#define TTR_MASK        8
#define TTR_VAL         16
#define TTR_CMASK       24
#define TTR_SIZE        32
#define TT_FD_CHECKED   (TT_RULES + TTR_SIZE * TT_MAX_RULES)

#endif
