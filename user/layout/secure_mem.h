/* Secure memory S: two pages per untrusted thread (DESIGN §1).
 *
 *   page 1, "secure page": read-only in P (a memfd sealed with
 *     F_SEAL_FUTURE_WRITE, so mprotect cannot make it writable), read-write
 *     in B.  Holds T's configuration (written before the seal) and B's
 *     verdicts: the validated call and its memory arguments, published
 *     complete with a seqlock (SP_SEQ odd while B writes).  T trusts it.
 *   page 2, "mailbox": read-write in P and B (shared anonymous).  U's
 *     requests to T, T's results, the wake-up flags, U's clear-child-tid
 *     word, and T's scratch for building messages.  Nobody trusts it:
 *     nothing T or B decides, waits on or executes comes from here, but
 *     one copy of a request that B then checks in full (invariant 8).
 *
 * Included by C and by assembly; offsets are checked by static asserts. */
#ifndef SANDPIT_SECURE_MEM_H
#define SANDPIT_SECURE_MEM_H

#define SM_PAGE         4096
/* threads at once: each has its slot (S, T's alternate stack, two
 * descriptors).  Address space for every slot is reserved and its
 * descriptors made at start; a slot's pages are touched when a thread
 * first uses it (user/layout/slots.h). */
#define SM_NSLOTS       1024
/* sandpit's descriptors, one block [fd_lo, fd_lo + SM_NFDS): P's end of
 * T<->B, a placeholder for B's, then per slot T's and U's eventfds
 * (slots_t_fd, slots_u_fd), all made at start, and last /proc/self/maps,
 * opened before the sandbox for the run-time patcher (slots_maps_fd).
 * The block lies at or above the program's soft RLIMIT_NOFILE where the
 * hard limit leaves room, ending at SM_FD_TOP where it fits there (the
 * prebuilt filter is for that block); else below (user/layout/slots.h). */
#define SM_NFDS   (3 + 2 * SM_NSLOTS)
#define SM_FD_TOP 4096
#define SM_MAX_RANGES   48

/* ---- secure page ---- */
#define SP_SEQ          0    /* seqlock: odd while B writes, even when complete */
#define SP_VERDICT      8    /* SP_V_*, or < 0: return it                     */
#define SP_NR           16
#define SP_ARGS         24   /* 6 x u64                                        */
#define SP_B_CPU        72   /* u32: CPU B's server took the last request on, ~0: none yet */
#define SP_CFG_SLOT     76   /* u32: this thread's slot                          */
#define SP_CFG_T_FD     80   /* T's end of U<->T                                */
#define SP_CFG_TB_FD    84   /* P's end of T<->B: hangs up when B exits         */
#define SP_CFG_FD_LO    88   /* sandpit's descriptors are [FD_LO, FD_HI]        */
#define SP_CFG_FD_HI    92
#define SP_CFG_PID      96
#define SP_CFG_U_TID    100
#define SP_CFG_SPIN     104  /* u32: spin iterations (~ one blocking hand-off)  */
#define SP_CFG_PASS_FD  108  /* i32: P's end of B's descriptor hand-over (SP_V_RECV) */
#define SP_CFG_TIDS     112  /* u64: the U tid table (SM_NSLOTS x i32, 0: none) */
#define SP_CFG_CPU_MASKS 120 /* u64: the CPU masks (SM_CPU_ALL + 1), 0: T never moves */
#define SP_CFG_MAPS_FD  128  /* i32: /proc/self/maps, opened in P before the sandbox */
#define SP_STARTED      132  /* u32: bumped by B when it has decided the slot's
                              * start (its threads confirmed and its U in the
                              * U tid table, or the slot free again); kept
                              * when the slot is set up again */
#define SP_CFG_PAD0     136
#define SP_CFG_TABLE    176  /* u64: address of the T table                    */
#define SP_CFG_MAILBOX  184  /* u64: address of this thread's mailbox          */
#define SP_NEW_SP       192  /* u64: SP_V_CLONE: the new thread's secure page  */
#define SP_GLIBC_CTID   200  /* u64: cleared and woken when this slot's U ends */
#define SP_CFG_NRANGES  208  /* u64 */
#define SP_CFG_RANGES   216  /* SM_MAX_RANGES x {lo, hi}: protected memory      */
#define SP_ALTSTACK     984  /* stack_t of T's alternate signal stack (24)      */
#define SP_FPROG        1008 /* struct sock_fprog of filter mode (len 0: strict) */
#define SP_POLLFD       1024 /* 2 x struct pollfd T sleeps on: {T_FD, TB_FD}    */
#define SP_EXITING      1040 /* u32: B accepted U's exit (U waits in sandpit_exit_wait) */
#define SP_CFG_U_FD     1044 /* U's eventfd: U sleeps on it, T wakes it        */
#define SP_DATA         1048 /* B's copies of memory arguments                  */
#define SP_DATA_SIZE    (SM_PAGE - SP_DATA)

/* T's alternate signal stacks and the secure pages share one region
 * aligned to SM_REGION_ALIGN: [SM_NSLOTS x SM_ALT_SIZE stacks][secure pages].
 * T's interrupt handler finds its secure page from its own stack pointer,
 * which the kernel sets inside T's alternate stack. */
#define SM_ALT_SIZE     16384
#define SM_ALT_SHIFT    14
#define SM_ALT_REGION   (SM_NSLOTS * SM_ALT_SIZE)
#define SM_REGION_ALIGN 0x2000000 /* > SM_ALT_REGION */
/* after the secure pages, in the same sealed memfd: the U tid table, one
 * i32 per slot, the slot's U once B knows it (0 otherwise, and from the
 * moment B accepts its exit), written by B, read by T's U_TID rule: a
 * signal goes only to a thread that is in it (invariant 7) */
#define SM_TID_PAGES    ((SM_NSLOTS * 4 + SM_PAGE - 1) / SM_PAGE)
/* then one page of CPU masks, written by P before the seal: entry c (c <
 * 64) is the process's CPUs at start without CPU c, for T to leave U's CPU
 * with (sched_setaffinity, from memory U cannot write: invariant 8); entry
 * SM_CPU_ALL is all of them, which T puts back before it clones a thread */
#define SM_CPU_ALL      64
#define SM_CPU_PAGES    1
#define SM_S_LEN        ((SM_NSLOTS + SM_TID_PAGES + SM_CPU_PAGES) * SM_PAGE)

/* verdicts */
#define SP_V_EXEC       0    /* execute SP_NR with SP_ARGS                       */
#define SP_V_CLONE      1    /* clone (SP_NR/SP_ARGS) a new U into SP_NEW_SP     */
#define SP_V_ACK        2    /* done, the result is 0                            */
#define SP_V_EXIT       3    /* B knows U is exiting: T serves nothing more      */
/* B opened the file itself (an open for writing, user/trusted/write_open.c) and
 * sent it on SP_CFG_PASS_FD: T receives it (recvmsg, SP_ARGS[0] its flags:
 * MSG_CMSG_CLOEXEC or 0; SP_ARGS[1] the tag B sent with it), acknowledges
 * with one byte and returns the descriptor it got, or an errno */
#define SP_V_RECV       4
/* A negative verdict is the call's result.  Two of the kernel's own
 * restart codes go from T or B to U that way: the call was ended by
 * sandpit's interrupt (U makes it again per SA_RESTART, as the kernel
 * restarts U's own), or was never made (U makes it again, whatever the
 * handler) */
#define SP_ERESTARTSYS    512
#define SP_ERESTARTNOINTR 513
/* T's recvmsg for SP_V_RECV, built in the mailbox's payload (B has copied
 * the request by then): struct msghdr, one iovec, the tag's 8 bytes and
 * the control buffer, CMSG_SPACE(sizeof(int)).  U can write all of it;
 * T reads each answer once and trusts none (trusted_thread.S) */
#define RM_MSG          0    /* struct msghdr (56) */
#define RM_IOV          56   /* struct iovec (16) */
#define RM_DATA         72   /* the tag (8) */
#define RM_CBUF         80   /* cmsghdr (16) + the descriptor (4) + pad (4) */
#define RM_CBUF_LEN     24
#define RM_CMSG_LEN     20   /* CMSG_LEN(sizeof(int)) */
/* a verdict of -SP_ANSWERED is no errno: B answered the call itself (the
 * stat family, statx, access, readlink: b_answer.c) and SP_DATA holds its
 * answer (struct sp_answer): the call's result, and `len` bytes for the
 * program's buffer, argument `arg` of the call.  T returns the verdict as
 * it returns an errno, for U's entry to copy the bytes out and return the
 * result (u_entry.c). */
#define SP_ANSWERED     4000
#define SP_ANSWER_HEAD  16   /* result (i64), len (u32), arg (u32)            */
#define SP_ANSWER_MAX   (SP_DATA_SIZE - SP_ANSWER_HEAD) /* 3032 bytes        */
#define SP_ANSWER_STAT  144  /* sizeof(struct stat) on x86-64, the kernel's */
#define SP_ANSWER_STATX 256  /* sizeof(struct statx) */

/* ---- mailbox ---- */
#define MB_REQ_SEQ      0    /* U bumps after writing MB_NR/MB_ARGS            */
#define MB_NR           8
#define MB_ARGS         16
#define MB_RES_SEQ      64   /* T sets to the request's seq after the result   */
#define MB_RESULT       72
#define MB_RES2         80   /* rdx of the rdtsc pseudo-call                    */
#define MB_RES3         88   /* rcx of rdtscp; the refusing rule's index + 1     */
#define MB_T_SLEEP      96   /* u32: T is (about to be) blocked in ppoll        */
#define MB_U_SLEEP      100  /* u32: U is (about to be) blocked in read        */
#define MB_T_CPU        104  /* u32 */
#define MB_U_CPU        108  /* u32 */
#define MB_CTID         112  /* u32: U's clear_child_tid word, watched by B    */
#define MB_B_BELL       116  /* u32: B's doorbell; only T ever FUTEX_WAKEs it  */
#define MB_T_WAIT_B     120  /* u32: T sleeps on SP_SEQ: B must FUTEX_WAKE it */
#define MB_T_CTID       124  /* u32: T's clear_child_tid word, watched by B    */
#define MB_EXIT_BELL    128  /* u32: T FUTEX_WAKEs it when U asks to exit      */
#define MB_U_BUSY       132  /* u32: U computes a while (patching): T need not spin */
#define MB_PAYLOAD      256  /* T scratch: the request for B, nr + 6 args (56) */
#define MB_DRAIN        384  /* bytes read to drain wake-ups (never read back) */
#define MB_CLONE_REGS   512  /* U's registers at clone, for the new thread     */
#define MB_PATH         640  /* U's copy of a path it sends to B (struct mb_path) */
#define MB_PATH_MAX     368  /* its bytes, the NUL included                     */
#define MB_PATH_NONE    0xffffffffu /* mb_path.len: no copy for this request      */
#define MB_U_STATE      1024 /* U-side runtime state (struct u_state)          */

/* struct u_state (user/untrusted/runtime.h) fields the assembly writes */
#define US_TID 24

/* MB_CLONE_REGS layout: what the stub saw, and where the child resumes */
#define CR_RBX 0
#define CR_RBP 8
#define CR_R12 16
#define CR_R13 24
#define CR_R14 32
#define CR_R15 40
#define CR_RDI 48
#define CR_RSI 56
#define CR_RDX 64
#define CR_R10 72
#define CR_R8  80
#define CR_R9  88
#define CR_FLAGS 96
#define CR_RIP 104           /* the stub's return address in the trampoline */
#define CR_RSP 112           /* child stack - 128 (red zone) - 8 (return address) */
#define CR_SIZE 120

/* The program's own signal handlers (one page, shared by P and B; U may
 * write it, it only ever tells U's own code what to call).  The kernel sees
 * sandpit's wrapper for each caught signal; the wrapper calls these. */
#define SIGTAB_N 65

/* pseudo system call numbers U sends to T (never real numbers) */
#define SANDPIT_NR_RDTSC        0x10001
/* the kernel's default action for one of the signals sandpit keeps
 * (arg0: SIGSEGV, SIGSYS, SANDPIT_SIG or SANDPIT_SIG_INTR), when the program's own signal
 * must end it as natively: it only ever makes sandpit fail closed */
#define SANDPIT_NR_SIG_DFL      0x10002
#define SANDPIT_NR_THREAD_EXIT  0x10003
/* arch_prctl(ARCH_SET_FS/ARCH_GET_FS, addr) in strict mode on a CPU without
 * FSGSBASE: U cannot set its own FS base and T is another thread, so B
 * does it by ptrace on the slot's U */
#define SANDPIT_NR_FS_BASE      0x10004
/* a refusal made by the entry or by T's rules, reported to B, which counts
 * and logs every refusal (the report is in u_state, struct u_denial) */
#define SANDPIT_NR_DENIED       0x10005
/* the run-time patcher's read of /proc/self/maps (buf, len, offset): T
 * makes pread64 on the descriptor P opened before the sandbox (SP_CFG_MAPS_FD,
 * in sandpit's block), so that the read needs nothing of the policy */
#define SANDPIT_NR_MAPS_READ    0x10006

/* the real-time signal sandpit keeps for itself: its handler changes the
 * thread's own signal mask and alternate stack, which T cannot */
#define SANDPIT_SIG             64
/* the signal B sends a T blocked in a waiting call (futex wait, sleep, poll)
 * for U, when a handler must run in U: the call ends with EINTR, as the
 * kernel would end it */
#define SANDPIT_SIG_INTR        63

/* The signals sandpit keeps, virtualised so that a program may set them: the kernel always has sandpit's
 * handler for them (SIGSEGV: faults, rdtsc, code mapped later; SIGSYS:
 * filter mode's net; 63 and 64 above).  The program's dispositions for
 * them live only in the handler table, virtualised: it reads back what it
 * set, and its handlers run for its own signals, never for sandpit's. */
#define SANDPIT_SIGBIT(s)       (1ull << ((s) - 1))
#define SANDPIT_KEPT_SIGNALS    (SANDPIT_SIGBIT(11) | SANDPIT_SIGBIT(31) | \
				 SANDPIT_SIGBIT(SANDPIT_SIG_INTR) | SANDPIT_SIGBIT(SANDPIT_SIG))
/* those of them U's mask never blocks for real (U never takes 63); the
 * program's view of these bits is kept per thread (u_state.vblocked) */
#define SANDPIT_NEVER_BLOCKED   (SANDPIT_SIGBIT(11) | SANDPIT_SIGBIT(31) | SANDPIT_SIGBIT(SANDPIT_SIG))

/* kernel ABI: struct kernel_sigaction.sa_flags bit, not exported by libc */
#define SANDPIT_SA_RESTORER     0x04000000

#ifndef __ASSEMBLER__
#include <stdint.h>

struct secure_page {
	uint64_t seq;
	int64_t verdict;
	uint64_t nr;
	uint64_t args[6];
	uint32_t b_cpu, slot;
	int32_t t_fd, tb_fd, fd_lo, fd_hi;
	int32_t pid, u_tid;
	uint32_t spin;
	int32_t pass_fd;
	uint64_t tids; /* int32_t[SM_NSLOTS] */
	uint64_t cpu_masks; /* uint64_t[SM_CPU_ALL + 1], or 0 */
	int32_t maps_fd;
	uint32_t started;
	/* B's own, in its copy (never published): bit i when args[i] points
	 * into that copy's data (b_arg_into_data), which publish points into
	 * S's data instead */
	uint64_t data_args;
	uint64_t pad0[4];
	uint64_t table, mailbox, new_sp, glibc_ctid, nranges;
	struct { uint64_t lo, hi; } ranges[SM_MAX_RANGES];
	uint64_t altstack[3];
	uint64_t fprog[2]; /* { len, filter }: what a new U installs in filter mode */
	struct { int32_t fd; int16_t events, revents; } pollfd[2];
	uint32_t exiting;
	int32_t u_fd;
	uint8_t data[SP_DATA_SIZE];
};

/* what B answered (SP_VERDICT -SP_ANSWERED), at SP_DATA */
struct sp_answer {
	int64_t result; /* what the call returns: 0, a length, or -errno */
	uint32_t len;   /* bytes of `bytes` for the program's buffer */
	uint32_t arg;   /* the argument that points to that buffer (len 0: none) */
	uint8_t bytes[SP_ANSWER_MAX];
};

struct k_sigaction {
	uint64_t handler, flags, restorer, mask;
};

struct sigtab {
	struct k_sigaction act[SIGTAB_N];
	uint64_t signals; /* handlers run in this process, for pause and sigsuspend */
};

/* What U's entry tells B about a refusal it or T made: U's own account,
 * which B copies once and uses only to explain and count, never to decide.
 * `caller` is the address the refused call returns to (a trampoline's, or
 * the program's for a call the filter trapped); B also reads it there for
 * the refusals it makes itself. */
struct u_denial {
	uint64_t nr, args[6];
	int64_t result;
	int64_t rule; /* index of the call's register rule that refused it, or -1 */
	uint64_t caller;
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
	uint32_t ctid, b_bell, t_wait_b, t_ctid;
	uint32_t exit_bell, u_busy;
	uint8_t pad1[MB_PAYLOAD - 136];
	struct b_request payload;
	uint8_t t_scratch[MB_CLONE_REGS - MB_PAYLOAD - sizeof(struct b_request)];
	uint64_t clone_regs[CR_SIZE / 8];
	uint8_t pad2[MB_PATH - MB_CLONE_REGS - CR_SIZE];
	/* The path argument of U's request for B, copied by U's entry with
	 * the request (addr: the pointer it was read from, len: its length
	 * without the NUL, or MB_PATH_NONE).  U's like the rest of the
	 * request: B takes one copy and checks that (b_read.c). */
	struct mb_path {
		uint64_t addr;
		uint32_t len, pad;
		char bytes[MB_PATH_MAX];
	} path;
	uint8_t u_state[SM_PAGE - MB_U_STATE];
};
_Static_assert(__builtin_offsetof(struct mailbox, path) == MB_PATH, "MB_PATH");
_Static_assert(MB_PATH + sizeof(struct mb_path) == MB_U_STATE, "mb_path fits before u_state");

_Static_assert(sizeof(struct secure_page) == SM_PAGE, "secure page size");
_Static_assert(__builtin_offsetof(struct secure_page, b_cpu) == SP_B_CPU, "SP_B_CPU");
_Static_assert(__builtin_offsetof(struct secure_page, t_fd) == SP_CFG_T_FD, "SP_CFG_T_FD");
_Static_assert(__builtin_offsetof(struct secure_page, pid) == SP_CFG_PID, "SP_CFG_PID");
_Static_assert(__builtin_offsetof(struct secure_page, spin) == SP_CFG_SPIN, "SP_CFG_SPIN");
_Static_assert(__builtin_offsetof(struct secure_page, tids) == SP_CFG_TIDS, "SP_CFG_TIDS");
_Static_assert(__builtin_offsetof(struct secure_page, cpu_masks) == SP_CFG_CPU_MASKS, "SP_CFG_CPU_MASKS");
_Static_assert(__builtin_offsetof(struct secure_page, maps_fd) == SP_CFG_MAPS_FD, "SP_CFG_MAPS_FD");
_Static_assert(__builtin_offsetof(struct secure_page, slot) == SP_CFG_SLOT, "SP_CFG_SLOT");
_Static_assert(__builtin_offsetof(struct secure_page, started) == SP_STARTED, "SP_STARTED");
_Static_assert(__builtin_offsetof(struct secure_page, table) == SP_CFG_TABLE, "SP_CFG_TABLE");
_Static_assert(__builtin_offsetof(struct secure_page, new_sp) == SP_NEW_SP, "SP_NEW_SP");
_Static_assert(__builtin_offsetof(struct secure_page, glibc_ctid) == SP_GLIBC_CTID, "SP_GLIBC_CTID");
_Static_assert(__builtin_offsetof(struct secure_page, nranges) == SP_CFG_NRANGES, "SP_CFG_NRANGES");
_Static_assert(__builtin_offsetof(struct secure_page, ranges) == SP_CFG_RANGES, "SP_CFG_RANGES");
_Static_assert(__builtin_offsetof(struct secure_page, altstack) == SP_ALTSTACK, "SP_ALTSTACK");
_Static_assert(__builtin_offsetof(struct secure_page, fprog) == SP_FPROG, "SP_FPROG");
_Static_assert(__builtin_offsetof(struct secure_page, pollfd) == SP_POLLFD, "SP_POLLFD");
_Static_assert(__builtin_offsetof(struct secure_page, exiting) == SP_EXITING, "SP_EXITING");
_Static_assert(__builtin_offsetof(struct secure_page, u_fd) == SP_CFG_U_FD, "SP_CFG_U_FD");
_Static_assert(__builtin_offsetof(struct secure_page, pass_fd) == SP_CFG_PASS_FD, "SP_CFG_PASS_FD");
_Static_assert(SM_ALT_REGION < SM_REGION_ALIGN, "the alternate stacks fit the alignment");
_Static_assert(__builtin_offsetof(struct secure_page, data) == SP_DATA, "SP_DATA");
_Static_assert(sizeof(struct sp_answer) == SP_DATA_SIZE, "an answer fills B's data area");
_Static_assert(__builtin_offsetof(struct sp_answer, bytes) == SP_ANSWER_HEAD, "SP_ANSWER_HEAD");
_Static_assert(sizeof(struct mailbox) == SM_PAGE, "mailbox size");
_Static_assert(__builtin_offsetof(struct mailbox, res_seq) == MB_RES_SEQ, "MB_RES_SEQ");
_Static_assert(__builtin_offsetof(struct mailbox, t_sleep) == MB_T_SLEEP, "MB_T_SLEEP");
_Static_assert(__builtin_offsetof(struct mailbox, ctid) == MB_CTID, "MB_CTID");
_Static_assert(__builtin_offsetof(struct mailbox, b_bell) == MB_B_BELL, "MB_B_BELL");
_Static_assert(__builtin_offsetof(struct mailbox, t_wait_b) == MB_T_WAIT_B, "MB_T_WAIT_B");
_Static_assert(__builtin_offsetof(struct mailbox, t_ctid) == MB_T_CTID, "MB_T_CTID");
_Static_assert(__builtin_offsetof(struct mailbox, exit_bell) == MB_EXIT_BELL, "MB_EXIT_BELL");
_Static_assert(__builtin_offsetof(struct mailbox, u_busy) == MB_U_BUSY, "MB_U_BUSY");
_Static_assert(__builtin_offsetof(struct mailbox, payload) == MB_PAYLOAD, "MB_PAYLOAD");
_Static_assert(__builtin_offsetof(struct mailbox, clone_regs) == MB_CLONE_REGS, "MB_CLONE_REGS");
_Static_assert(__builtin_offsetof(struct mailbox, u_state) == MB_U_STATE, "MB_U_STATE");
#endif
#endif
