/* The untrusted-side runtime: what runs in U once the sandbox is in force
 * (the syscall entry, the raw wrappers, the SIGSEGV handler).  Freestanding:
 * no libc, no errno; per-thread state through %gs. */
#ifndef SANDPIT_RUNTIME_H
#define SANDPIT_RUNTIME_H
#include <stdint.h>
#include "user/layout/secure_mem.h"
#include "user/untrusted/arch.h"
#include "policy/t_table.h"

#define U_NDEFERRED 16

/* per-thread state, in the mailbox page at MB_U_STATE; %gs base = mailbox */
struct u_state {
	struct mailbox *mb;
	const struct tt_table *table;
	uint64_t seq;
	int32_t tid; /* US_TID: written by sandpit_start or the nursery */
	int32_t u_fd;             /* U's eventfd: U sleeps on it */
	uint32_t spin;
	int32_t pid;
	/* an alternate stack change the fault's frame cannot make (it lies on
	 * the armed alternate stack, and the kernel ignores a uc_stack change
	 * from there): asked through SANDPIT_SIG instead (u_entry.c) */
	struct self_request *self_rq;
	uint64_t self_req, self_done;
	/* A signal that lands while this thread waits for T would run its
	 * handler in the middle of a request, and a handler's own calls would
	 * tread on it: such handlers are deferred until the request is done
	 * (as if the signal had come just after the call). */
	int32_t depth;
	uint32_t ndeferred;
	int32_t tb_fd, slot;      /* to ask B to interrupt T's waiting call */
	uint64_t intr_seq;        /* the request it was asked for */
	/* the signals put off, in the order they landed: like the kernel's
	 * pending set, a standard signal at most once, a real-time one once
	 * per instance (u_signal.c, queue_signal); bounded, the rest lost */
	struct deferred_signal {
		int32_t sig;
		uint8_t info[128];
	} deferred[U_NDEFERRED];
	const struct secure_page *sp; /* this thread's: u_exit waits on SP_EXITING */
	uint64_t caller;              /* where the call in progress returns to */
	struct u_denial denial;       /* the refusal being reported to B */
	uint32_t nreported;           /* refusals this thread reported to B */
	uint64_t unreported;          /* and those only counted (B adds them up at the end) */
	/* the program's view of SANDPIT_NEVER_BLOCKED in this thread's mask,
	 * and those of them it raised while it had them blocked */
	uint64_t vblocked, vpending;
	int32_t t_fd;             /* T's eventfd: U wakes a sleeping T on it */
	/* deferred handlers run without SA_RESTART: a call T gave up for one
	 * of them ends with EINTR, otherwise it is made again */
	uint64_t norestart_ran;
	/* where the request in flight is (FLIGHT_*), for a handler that
	 * lands meanwhile: one word, written as the request moves on */
	uint32_t flight;
};
#define FLIGHT_NONE  0 /* none, or one of sandpit's own waits (handlers wait) */
#define FLIGHT_BUILD 1 /* its number taken, the mailbox being written: handlers wait */
#define FLIGHT_SENT  2 /* T has it; seq and res_seq tell whether it is answered */
#define FLIGHT_TAKEN 3 /* answered, its results being read: handlers wait */
_Static_assert(__builtin_offsetof(struct u_state, tid) == US_TID, "US_TID");
_Static_assert(sizeof(struct u_state) <= SM_PAGE - MB_U_STATE, "u_state fits its page");

/* A change of this thread's signal mask or alternate stack, which only a
 * signal frame can make in strict mode: sandpit_ask_self (below) faults on
 * purpose and sandpit's SIGSEGV handler answers in the fault's frame.  It
 * lives on the asker's stack, so a handler that asks meanwhile has its own. */
#define SELF_ASK_AGAIN 1
#define SELF_BLOCK_ALL 4 /* how: every signal blocked, sandpit's too (the thread's exit) */
struct self_request {
	int32_t how, err;         /* how: 0-2 a mask change, -1 a query, 3 sigaltstack, SELF_BLOCK_ALL;
				   * err SELF_ASK_AGAIN: ask through SANDPIT_SIG */
	uint64_t set, old;
	uint64_t ss[3], old_ss[3]; /* stack_t: ss_sp, ss_flags, ss_size */
};

/* set once U's thread is sandboxed; before that the entry passes calls through */
extern int sandpit_u_active __attribute__((visibility("hidden")));
/* filter mode: the kernel's filter allows what the policy allows, so the
 * entry makes those calls itself (in strict mode T makes them) */
extern int sandpit_u_filter __attribute__((visibility("hidden")));
/* the CPU and kernel let U write its own %fs base (wrfsbase); without it
 * filter mode makes arch_prctl(ARCH_SET_FS/GET_FS) natively and strict mode
 * asks B, which sets the base by ptrace */
extern int sandpit_u_fsgsbase __attribute__((visibility("hidden")));
/* the kernel's TASK_SIZE_MAX: the highest FS base + 1 it accepts */
extern uint64_t sandpit_u_task_size __attribute__((visibility("hidden")));
/* a store to U's memory that returns -EFAULT instead of faulting
 * (asm/x86_64/syscall.S; sandpit's SIGSEGV handler resumes the faulting store) */
long sandpit_put_user64(uint64_t *p, uint64_t v) __attribute__((visibility("hidden")));
extern const char sandpit_put_user64_insn[] __attribute__((visibility("hidden")));
extern const char sandpit_put_user64_fault[] __attribute__((visibility("hidden")));
/* n bytes to U's memory: 0, or -EFAULT instead of a fault */
long sandpit_copy_to_user(void *dst, const void *src, unsigned long n)
	__attribute__((visibility("hidden")));
extern const char sandpit_copy_to_user_insn[] __attribute__((visibility("hidden")));
extern const char sandpit_copy_to_user_fault[] __attribute__((visibility("hidden")));
/* a load from U's memory: the byte, or -EFAULT instead of a fault */
long sandpit_get_user8(const void *p) __attribute__((visibility("hidden")));
extern const char sandpit_get_user8_insn[] __attribute__((visibility("hidden")));
extern const char sandpit_get_user8_fault[] __attribute__((visibility("hidden")));
/* a string from U's memory into dst: its length, -ENAMETOOLONG (no NUL in
 * max bytes) or -EFAULT instead of a fault */
long sandpit_copy_user_str(char *dst, const char *src, unsigned long max)
	__attribute__((visibility("hidden")));
extern const char sandpit_copy_user_str_insn[] __attribute__((visibility("hidden")));
extern const char sandpit_copy_user_str_fault[] __attribute__((visibility("hidden")));
/* which argument of a call is the path B reads (0xff: none), for the entry's
 * copy of it (MB_PATH); set by sandpit_start from the policy */
extern unsigned char sandpit_u_path_arg[] __attribute__((visibility("hidden")));
/* the request's answer (rq->err): a hlt at sandpit_ask_self_insn, whose
 * #GP the kernel delivers as SIGSEGV (SI_KERNEL) in a frame right on the
 * asker's context: a fault is dequeued before any other pending signal */
long sandpit_ask_self(struct self_request *rq) __attribute__((visibility("hidden")));
extern const char sandpit_ask_self_insn[] __attribute__((visibility("hidden")));

/* refusals are reported to B (which counts and logs them): set by
 * sandpit_start, SANDPIT_U_REPORT_ALL for the log, SANDPIT_U_REPORT_COUNT
 * for the command's count (after a thread's first SANDPIT_U_REPORT_FULL,
 * only counted in u_state: a round trip to B each would slow a program
 * that retries a refused call) */
#define SANDPIT_U_REPORT_COUNT 1
#define SANDPIT_U_REPORT_ALL   2
#define SANDPIT_U_REPORT_FULL  64
extern int sandpit_u_report __attribute__((visibility("hidden")));

/* user/untrusted/exec_patch.c: code mapped executable after start-up */
struct patch_config;
extern int sandpit_exec_patch_on __attribute__((visibility("hidden")));
/* start_cfg: the patching's at start-up; entry: where the run-time
 * patcher's own calls go (sandpit_entry) */
int sandpit_exec_patch_init(const struct patch_config *start_cfg,
			    long (*entry)(long nr, long a0, long a1, long a2, long a3, long a4, long a5))
	__attribute__((visibility("hidden")));
/* its memory given back (a start that failed after sandpit_exec_patch_init) */
void sandpit_exec_patch_release(void) __attribute__((visibility("hidden")));
long sandpit_exec_call(long nr, long a[6], long (*make)(long nr, const long a[6]))
	__attribute__((visibility("hidden")));
int sandpit_exec_fault(uintptr_t addr) __attribute__((visibility("hidden")));
/* whether thread tid holds the run-time patcher's lock: its handlers wait */
int sandpit_exec_held(int tid) __attribute__((visibility("hidden")));

/* asm/x86_64/syscall.S */
/* run fn(arg) on the stack whose top is `top` */
long sandpit_call_on_stack(void *top, long (*fn)(void *), void *arg) __attribute__((visibility("hidden")));
long sandpit_raw_syscall6(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
	__attribute__((visibility("hidden")));
void sandpit_restorer(void) __attribute__((visibility("hidden")));
unsigned sandpit_getcpu(void) __attribute__((visibility("hidden")));
/* asm/x86_64/entry.S */
void sandpit_syscall_stub(void) __attribute__((visibility("hidden")));
/* patched rdtsc / rdtscp sites: edx:eax (and ecx) as the instruction sets
 * them, every other register and the flags kept */
void sandpit_rdtsc_stub(void) __attribute__((visibility("hidden")));
void sandpit_rdtscp_stub(void) __attribute__((visibility("hidden")));
/* asm/x86_64/trusted_thread.S */
long sandpit_clone_trusted(struct secure_page *sp) __attribute__((visibility("hidden")));

void sandpit_intr_handler(int sig, void *info, void *uc) __attribute__((visibility("hidden")));

/* user/untrusted/u_entry.c */
long sandpit_entry(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
	__attribute__((visibility("hidden")));
/* the same, from a call site that returns to `caller` (the stub, the SIGSYS net) */
long sandpit_entry_from(long nr, long a0, long a1, long a2, long a3, long a4, long a5,
			long caller) __attribute__((visibility("hidden")));
/* user/untrusted/u_request.c: a request to T, and the handlers put off
 * meanwhile */
long u_call_trusted(long nr, const long args[6]) __attribute__((visibility("hidden")));
/* the TSC as rdtscp gives it, through T in the sandbox; *aux its ecx */
uint64_t u_read_tsc(uint32_t *aux) __attribute__((visibility("hidden")));
long u_sigprocmask(long how, const uint64_t *set, uint64_t *old, long size)
	__attribute__((visibility("hidden")));
/* one wake-up on T's eventfd */
void u_wake_t(const struct u_state *st) __attribute__((visibility("hidden")));
/* what the kernel does as it starts the handler of a: SA_RESETHAND's
 * reset, and the signals blocked while it runs, returned */
uint64_t u_start_handler(struct k_sigaction *a, int sig) __attribute__((visibility("hidden")));
/* the kernel's default action for sig, made between requests */
void u_default_action(struct u_state *st, int sig) __attribute__((visibility("hidden")));
/* sig is put off already; put it off (0: the queue is full, it is lost) */
int u_is_queued(const struct u_state *st, int sig) __attribute__((visibility("hidden")));
int u_queue_signal(struct u_state *st, int sig, const void *info) __attribute__((visibility("hidden")));
/* a refusal made by U's entry or T's rules, reported to B (r the result,
 * rule the call's rule that refused it) */
void u_report_denied(struct u_state *st, long nr, const long a[6], long r, long rule)
	__attribute__((visibility("hidden")));
/* tgkill of this very thread, through T */
long u_raise_self(struct u_state *st, int sig) __attribute__((visibility("hidden")));
/* user/untrusted/u_signal.c */
/* sandpit's part of every signal U catches (asm/x86_64/syscall.S's
 * sandpit_signal_entry calls them): the program's handler to run in the
 * kernel's frame, or 0; and what is left to do once it has returned */
uintptr_t u_signal_enter(int sig, void *info, void *uc) __attribute__((visibility("hidden")));
void u_signal_leave(void *uc) __attribute__((visibility("hidden")));
void sandpit_signal_entry(void) __attribute__((visibility("hidden")));
/* user/untrusted/u_request.c */
void u_run_deferred(struct u_state *st) __attribute__((visibility("hidden")));
void u_discard_deferred(struct u_state *st, int sig) __attribute__((visibility("hidden")));

/* T may be blocked in the call of request seq (a read, a send, a futex, a
 * sleep, a poll...) while a handler waits for it: B interrupts it, and it
 * ends or restarts as the kernel would end U's own.  Once a request. */
static inline void u_interrupt_t(struct u_state *st, uint64_t seq)
{
	if (st->intr_seq == seq)
		return;
	st->intr_seq = seq;
	uint16_t slot = (uint16_t)st->slot; /* B reads slots as u16 */
	sandpit_raw_syscall6(1 /* write */, st->tb_fd, (long)&slot, sizeof(slot), 0, 0, 0);
}
void u_raise_due(struct u_state *st) __attribute__((visibility("hidden")));
extern struct sigtab *sandpit_sigtab __attribute__((visibility("hidden")));
/* asm/x86_64/syscall.S: block in read(fd) unless *counter != seen; a
 * handler that lands between the check and the read makes it return -EINTR */
long sandpit_wait_signal(int fd, const volatile uint64_t *counter, uint64_t seen)
	__attribute__((visibility("hidden")));
extern const char sandpit_wait_begin[], sandpit_wait_end[], sandpit_wait_eintr[]
	__attribute__((visibility("hidden")));
void sandpit_wait_result(int fd, const volatile uint64_t *res_seq, uint64_t seq)
	__attribute__((visibility("hidden")));
/* a thread's end: read(fd) until *exiting, then exit(code), with every
 * signal blocked; B finds the thread blocked at sandpit_exit_site before
 * it accepts the exit */
void sandpit_exit_wait(int fd, const volatile uint32_t *exiting, long code)
	__attribute__((visibility("hidden"), noreturn));
extern const char sandpit_exit_site[] __attribute__((visibility("hidden")));
/* where a T waits for B after a clone that made no thread (blocked in
 * futex on the new slot's SP_STARTED): B frees that slot only on seeing it
 * there */
extern const char sandpit_clone_failed_site[] __attribute__((visibility("hidden")));
extern const char sandpit_wake_begin[], sandpit_wake_end[] __attribute__((visibility("hidden")));

/* Facts the signal handlers need and may not take from memory U can
 * write: one page of its own, filled by sandpit_start, then made read-only
 * and protected (invariant 3) before U runs. */
struct sandpit_ro {
	uintptr_t t_alt_lo, t_alt_hi; /* T's alternate stacks (secure_mem.h) */
	int32_t pid;
};
extern union sandpit_ro_page {
	struct sandpit_ro ro;
	char page[SM_PAGE];
} sandpit_ro_page __attribute__((visibility("hidden")));

/* section bounds of sandpit's own code (never patched, protected) */
extern const char __start_sandpit_text[] __attribute__((visibility("hidden")));
extern const char __stop_sandpit_text[] __attribute__((visibility("hidden")));

/* The first word of u_state is the mailbox's own address, so one
 * %gs-relative load finds the thread's state. */
static inline struct u_state *u_self(void)
{
	struct mailbox *mb;
	ARCH_MAILBOX_WORD(MB_U_STATE, mb);
	return (struct u_state *)mb->u_state;
}
#endif
