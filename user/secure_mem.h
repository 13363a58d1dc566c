/* Secure memory S: two pages per untrusted thread (DESIGN §1).
 *
 *   page 1, "secure page": read-only in P (a memfd sealed with
 *     F_SEAL_FUTURE_WRITE, so mprotect cannot make it writable), read-write
 *     in B.  Holds T's configuration (written before the seal) and B's
 *     verdicts: the validated call and its memory arguments.  T trusts it.
 *   page 2, "mailbox": read-write in P and B (shared anonymous).  U's
 *     requests to T, T's results, the wake-up flags, U's clear-child-tid
 *     word, and T's scratch for building messages.  Nobody trusts it.
 *
 * Included by C and by assembly; offsets are checked by static asserts. */
#ifndef SANDPIT_SECURE_MEM_H
#define SANDPIT_SECURE_MEM_H

#define SM_PAGE         4096
#define SM_MAX_RANGES   48
#define SM_MAX_TIDS     8

/* ---- secure page ---- */
#define SP_SEQ          0    /* bumped by B after each verdict               */
#define SP_VERDICT      8    /* 0: execute SP_NR/SP_ARGS; < 0: return it      */
#define SP_NR           16
#define SP_ARGS         24   /* 6 x u64                                        */
#define SP_B_CPU        72   /* u32: CPU B last ran on                          */
#define SP_B_SPIN       76   /* u32: unused                                      */
#define SP_CFG_T_FD     80   /* T's end of U<->T                                */
#define SP_CFG_TB_FD    84   /* T's end of T<->B                                */
#define SP_CFG_FD_LO    88   /* sandpit's descriptors are [FD_LO, FD_HI]        */
#define SP_CFG_FD_HI    92
#define SP_CFG_PID      96
#define SP_CFG_U_TID    100
#define SP_CFG_SPIN     104  /* u32: spin iterations (~ one blocking hand-off)  */
#define SP_CFG_NTIDS    108  /* u32 */
#define SP_CFG_TIDS     112  /* SM_MAX_TIDS x u32: trusted tids (T, B)         */
#define SP_CFG_TABLE    144  /* u64: address of the T table                    */
#define SP_CFG_MAILBOX  152  /* u64: address of page 2                          */
#define SP_CFG_NRANGES  160  /* u64 */
#define SP_CFG_RANGES   168  /* SM_MAX_RANGES x {lo, hi}: protected memory      */
#define SP_DATA         1024 /* B's copies of memory arguments                  */
#define SP_DATA_SIZE    (SM_PAGE - SP_DATA)

/* ---- mailbox ---- */
#define MB_REQ_SEQ      0    /* U bumps after writing MB_NR/MB_ARGS            */
#define MB_NR           8
#define MB_ARGS         16
#define MB_RES_SEQ      64   /* T sets to the request's seq after the result   */
#define MB_RESULT       72
#define MB_RES2         80   /* rdx of the rdtsc pseudo-call                    */
#define MB_RES3         88   /* rcx of rdtscp                                   */
#define MB_T_SLEEP      96   /* u32: T is (about to be) blocked in ppoll        */
#define MB_U_SLEEP      100  /* u32: U is (about to be) blocked in read        */
#define MB_T_CPU        104  /* u32 */
#define MB_U_CPU        108  /* u32 */
#define MB_CTID         112  /* u32: U's clear_child_tid word, watched by B    */
#define MB_B_BELL       116  /* u32: B's doorbell; only T ever FUTEX_WAKEs it  */
#define MB_T_WAIT_B     120  /* u32: T sleeps on SP_SEQ: B must FUTEX_WAKE it */
#define MB_PAYLOAD      256  /* T scratch: the request for B, nr + 6 args (56) */
#define MB_POLLFD       320  /* 2 x struct pollfd                               */
#define MB_DRAIN        384  /* bytes read to drain wake-ups                    */
#define MB_U_STATE      512  /* U-side runtime state (struct u_state)          */

/* pseudo system call numbers U sends to T (never real numbers) */
#define SANDPIT_NR_RDTSC        0x10001
#define SANDPIT_NR_SEGV_DFL     0x10002

/* kernel ABI: struct kernel_sigaction.sa_flags bit, not exported by libc */
#define SANDPIT_SA_RESTORER     0x04000000

#ifndef __ASSEMBLER__
#include <stdint.h>

struct secure_page {
	uint64_t seq;
	int64_t verdict;
	uint64_t nr;
	uint64_t args[6];
	uint32_t b_cpu, b_spin;
	int32_t t_fd, tb_fd, fd_lo, fd_hi;
	int32_t pid, u_tid;
	uint32_t spin, ntids;
	int32_t tids[SM_MAX_TIDS];
	uint64_t table, mailbox, nranges;
	struct { uint64_t lo, hi; } ranges[SM_MAX_RANGES];
	uint8_t pad[SP_DATA - SP_CFG_RANGES - 16 * SM_MAX_RANGES];
	uint8_t data[SP_DATA_SIZE];
};

struct b_request {
	uint64_t nr;
	uint64_t args[6];
};

struct mailbox {
	uint64_t req_seq, nr, args[6];
	uint64_t res_seq;
	int64_t result;
	uint64_t res2, res3;
	uint32_t t_sleep, u_sleep, t_cpu, u_cpu;
	uint32_t ctid, b_bell, t_wait_b;
	uint8_t pad1[MB_PAYLOAD - 124];
	struct b_request payload;
	uint8_t t_scratch[MB_U_STATE - MB_PAYLOAD - sizeof(struct b_request)];
	uint8_t u_state[SM_PAGE - MB_U_STATE];
};

_Static_assert(sizeof(struct secure_page) == SM_PAGE, "secure page size");
_Static_assert(__builtin_offsetof(struct secure_page, b_cpu) == SP_B_CPU, "SP_B_CPU");
_Static_assert(__builtin_offsetof(struct secure_page, t_fd) == SP_CFG_T_FD, "SP_CFG_T_FD");
_Static_assert(__builtin_offsetof(struct secure_page, pid) == SP_CFG_PID, "SP_CFG_PID");
_Static_assert(__builtin_offsetof(struct secure_page, spin) == SP_CFG_SPIN, "SP_CFG_SPIN");
_Static_assert(__builtin_offsetof(struct secure_page, tids) == SP_CFG_TIDS, "SP_CFG_TIDS");
_Static_assert(__builtin_offsetof(struct secure_page, table) == SP_CFG_TABLE, "SP_CFG_TABLE");
_Static_assert(__builtin_offsetof(struct secure_page, ranges) == SP_CFG_RANGES, "SP_CFG_RANGES");
_Static_assert(__builtin_offsetof(struct secure_page, data) == SP_DATA, "SP_DATA");
_Static_assert(sizeof(struct mailbox) == SM_PAGE, "mailbox size");
_Static_assert(__builtin_offsetof(struct mailbox, res_seq) == MB_RES_SEQ, "MB_RES_SEQ");
_Static_assert(__builtin_offsetof(struct mailbox, t_sleep) == MB_T_SLEEP, "MB_T_SLEEP");
_Static_assert(__builtin_offsetof(struct mailbox, ctid) == MB_CTID, "MB_CTID");
_Static_assert(__builtin_offsetof(struct mailbox, b_bell) == MB_B_BELL, "MB_B_BELL");
_Static_assert(__builtin_offsetof(struct mailbox, t_wait_b) == MB_T_WAIT_B, "MB_T_WAIT_B");
_Static_assert(__builtin_offsetof(struct mailbox, payload) == MB_PAYLOAD, "MB_PAYLOAD");
_Static_assert(__builtin_offsetof(struct mailbox, u_state) == MB_U_STATE, "MB_U_STATE");
#endif
#endif
