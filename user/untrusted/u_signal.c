/* sandpit's signal handling in U.  Every signal U catches arrives through
 * sandpit_signal_entry (asm/x86_64/syscall.S) at u_signal_enter, which does
 * sandpit's part and names the program's handler to run in the kernel's
 * frame.  sandpit keeps SIGSEGV (strict mode turns the TSC off for U,
 * DESIGN §9: rdtsc and rdtscp fault, and T, which keeps the TSC, executes
 * them; sandpit's own fault-safe accesses; code mapped later), SIGSYS
 * (filter mode's net; SIGSEGV also answers the thread's own mask and
 * alternate stack changes, sandpit_ask_self) and 63 and 64; the
 * program's own uses of them (a real fault, a raise, a kill) reach the
 * program's virtualised disposition. */
#include <asm/unistd.h>
#include <sys/ucontext.h>
#include "user/untrusted/runtime.h"

union sandpit_ro_page sandpit_ro_page __attribute__((section("sandpit_ro"), aligned(SM_PAGE)));

/* Invariant 1: a handler of U's must never run on T.  T blocks every signal
 * but sandpit's interrupt, and no mask of U's reaches it; should one still
 * land, it lands on T's alternate stack (T has no other), which the stack
 * pointer, a register, tells without trusting %gs (0 on T, and page 0 may
 * be U's).  Then P ends, before anything else is read. */
static void refuse_trusted_thread(void)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	const struct sandpit_ro *ro = &sandpit_ro_page.ro;
	if (sp - ro->t_alt_lo >= ro->t_alt_hi - ro->t_alt_lo)
		return;
	static const char msg[] = "sandpit: a signal handler of the program reached a trusted "
				  "thread; killing the process\n";
	sandpit_raw_syscall6(1 /* write */, 2, (long)msg, sizeof(msg) - 1, 0, 0, 0);
	for (;;)
		sandpit_raw_syscall6(62 /* kill */, ro->pid, 9 /* SIGKILL */, 0, 0, 0, 0);
}

#define SI_KERNEL_ 0x80
#define SYS_SECCOMP_ 1


/* What u_signal_leave needs once the program's handler has returned,
 * kept in the kernel's own frame: the 64 bytes the kernel reserves in the
 * sigcontext (__reserved1) and never reads back.  They are U's to write,
 * as all of this is U's own state. */
struct sig_saved {
	uint32_t restore, u_sleep; /* a request in flight was answered first */
	int32_t depth, pad;
	int64_t result;
	uint64_t res2, res3;
	uint64_t vblocked; /* the program's view of its mask before the handler */
};
_Static_assert(sizeof(struct sig_saved) <= sizeof(((mcontext_t *)0)->__reserved1), "sig_saved");

static struct sig_saved *saved_of(ucontext_t *uc)
{
	return (struct sig_saved *)(void *)uc->uc_mcontext.__reserved1;
}


/* A handler interrupted one of sandpit's own waits: pause and sigsuspend
 * end with EINTR; U's sleep for T's answer looks again instead of
 * restarting a read whose wake-up byte the handler may have eaten. */
static void leave_waits(ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t ip = (uintptr_t)g[UC_PC];
	if (ip >= (uintptr_t)sandpit_wait_begin && ip < (uintptr_t)sandpit_wait_end)
		g[UC_PC] = (greg_t)(uintptr_t)sandpit_wait_eintr;
	else if (ip >= (uintptr_t)sandpit_wake_begin && ip < (uintptr_t)sandpit_wake_end)
		g[UC_PC] = (greg_t)(uintptr_t)sandpit_wake_end;
}



/* tgkill, tkill or kill of this very thread or process with this signal:
 * if it is in flight and the signal is here, T has already made it. */
static int raised_by_request(const struct u_state *st, const struct mailbox *mb, int sig)
{
	const uint64_t *a = mb->args;
	switch (mb->nr) {
	case __NR_tgkill:
		return (int32_t)a[0] == st->pid && (int32_t)a[1] == st->tid && (int32_t)a[2] == sig;
	case __NR_kill:
		return (int32_t)a[0] == st->pid && (int32_t)a[1] == sig;
	}
	return 0;
}


/* The program's handler for sig, to run now in the kernel's frame (or 0:
 * none, or put off until the request in flight is answered).  Counts it
 * for pause and sigsuspend; SA_RESETHAND, SA_NODEFER and the handler's
 * mask act on the program's view of the signals sandpit keeps as the
 * kernel acts on the others. */
static uintptr_t program_handler(int sig, void *info, ucontext_t *uc)
{
	struct sigtab *t = sandpit_sigtab;
	struct u_state *st = u_self();
	struct k_sigaction *a = &t->act[sig];
	uint64_t h = a->handler;
	struct sig_saved *sv = saved_of(uc);
	sv->restore = 0;
	int depth = __atomic_load_n(&st->depth, __ATOMIC_SEQ_CST);
	/* a standard signal pending (put off) is pending once: this one is it */
	if (sig < 32 && u_is_queued(st, sig))
		return 0;
	if (h == 1)
		return 0;
	if (h == 0) {
		/* SIG_DFL once sandpit's entry had it (SA_RESETHAND, applied
		 * by U): the kernel's default action, now or at delivery */
		if (depth > 0) {
			u_queue_signal(st, sig, info);
			if (__atomic_load_n(&st->flight, __ATOMIC_SEQ_CST) == FLIGHT_SENT &&
			    __atomic_load_n(&st->mb->res_seq, __ATOMIC_SEQ_CST) < st->seq)
				u_interrupt_t(st, st->seq);
		} else {
			u_default_action(st, sig);
		}
		return 0;
	}
	__atomic_fetch_add(&t->signals, 1, __ATOMIC_SEQ_CST);
	struct mailbox *mb = st->mb;
	if (depth > 0) {
		/* A request is in flight.  Its handler runs now only where
		 * nothing of the request's can be trodden on: T has it, and has
		 * answered it with a result in the mailbox (which is kept for it
		 * below), or it is the very call that sent this signal to this
		 * thread.  Everywhere else (the number taken and the mailbox
		 * being written, an answer of B's still in the secure page, the
		 * results being read, sandpit's own waits) the handler is put
		 * off until the request is done, as if the signal had come just
		 * after the call. */
		uint32_t flight = __atomic_load_n(&st->flight, __ATOMIC_SEQ_CST);
		int sent = flight == FLIGHT_SENT;
		int answered = sent && __atomic_load_n(&mb->res_seq, __ATOMIC_SEQ_CST) >= st->seq;
		/* an alternate stack change asked through SANDPIT_SIG
		 * (ask_through_sandpit_sig) waits for its answer: it waits too */
		int asking = __atomic_load_n(&st->self_req, __ATOMIC_SEQ_CST) !=
			     __atomic_load_n(&st->self_done, __ATOMIC_SEQ_CST);
		/* a handler already put off runs first, as the kernel would have
		 * delivered it first (and the same signal twice is once) */
		int now = sent && !asking && !__atomic_load_n(&st->ndeferred, __ATOMIC_SEQ_CST) &&
			  !sandpit_exec_held(st->tid) &&
			  ((answered && mb->result != -SP_ANSWERED) ||
			   (!answered && raised_by_request(st, mb, sig)));
		if (!now) {
			u_queue_signal(st, sig, info);
			/* a request still being written asks B itself once sent */
			if (sent && !answered)
				u_interrupt_t(st, st->seq);
			return 0;
		}
		/* The request is answered (only its result is left to read), or
		 * it is the very call that sent this signal to this thread, which
		 * has done its work and returns 0.  T has taken the request out of
		 * the mailbox either way, so the handler runs now, as the kernel
		 * would run it, and may make requests of its own; the result is
		 * given back afterwards (u_signal_leave).  The handler's own waits
		 * end with u_sleep at 0: the interrupted wait may be about to
		 * sleep, and T must then still wake it. */
		sv->restore = 1;
		sv->result = answered ? mb->result : 0;
		sv->res2 = mb->res2;
		sv->res3 = mb->res3;
		sv->depth = st->depth;
		sv->u_sleep = __atomic_load_n(&mb->u_sleep, __ATOMIC_SEQ_CST);
		st->depth = 0;
		st->flight = FLIGHT_NONE;
	}
	sv->vblocked = st->vblocked;
	st->vblocked |= u_start_handler(a, sig) & SANDPIT_NEVER_BLOCKED;
	return (uintptr_t)h;
}


void u_signal_leave(void *ucv)
{
	ucontext_t *uc = ucv;
	struct u_state *st = u_self();
	struct sig_saved *sv = saved_of(uc);
	st->vblocked = sv->vblocked;
	u_raise_due(st);
	if (sv->restore) {
		struct mailbox *mb = st->mb;
		st->flight = FLIGHT_SENT; /* the only state a handler runs in at once */
		st->depth = sv->depth;
		__atomic_store_n(&mb->u_sleep, sv->u_sleep, __ATOMIC_SEQ_CST);
		/* the handler's own requests came after ours and overwrote its
		 * result; if it made none, T answers ours as usual */
		if (__atomic_load_n(&mb->res_seq, __ATOMIC_SEQ_CST) >= st->seq) {
			mb->result = sv->result;
			mb->res2 = sv->res2;
			mb->res3 = sv->res3;
		}
	}
	leave_waits(uc);
}

/* The program's own SIGSEGV, SIGSYS or SANDPIT_SIG, as the kernel would
 * deliver it (fault: the kernel raised it for an instruction, which it
 * cannot leave pending, ignore or block). */
static uintptr_t program_kept_signal(int sig, void *info, ucontext_t *uc, int fault)
{
	struct u_state *st = u_self();
	const struct k_sigaction *a = &sandpit_sigtab->act[sig];
	if (st->vblocked & SANDPIT_SIGBIT(sig)) {
		if (!fault) {
			st->vpending |= SANDPIT_SIGBIT(sig);
			return 0;
		}
	} else if (a->handler > 1) {
		/* the kernel blocked only what sandpit's own action says: the
		 * rest of the program's sa_mask is blocked here, in this frame's
		 * mask, which rt_sigreturn replaces with the one from before */
		uint64_t more = a->mask & ~SANDPIT_KEPT_SIGNALS;
		uintptr_t h = program_handler(sig, info, uc);
		if (h && more)
			u_sigprocmask(0 /* SIG_BLOCK */, &more, 0, 8);
		return h;
	} else if (a->handler == 1 && !fault) {
		return 0;
	}
	/* the default action: the kernel's, which ends P (a fault is retried
	 * and ends it; a raised signal is raised again) */
	long args[6] = { sig };
	u_call_trusted(SANDPIT_NR_SIG_DFL, args);
	if (!fault)
		u_raise_self(st, sig);
	return 0;
}

/* Filter mode's net: a system call the patcher did not redirect, which the
 * filter sends here (SECCOMP_RET_TRAP), takes the same entry a patched
 * site would, and its result goes back into the interrupted rax.  Any
 * other SIGSYS is the program's. */
static uintptr_t on_sigsys(void *info, ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	const int32_t *si = info;
	if (si[2] != SYS_SECCOMP_)
		return program_kept_signal(31, info, uc, 0);
	long nr = si[6]; /* si_syscall, after si_call_addr */
	g[UC_RET] = (greg_t)sandpit_entry_from(nr, g[UC_SYSCALL_ARG0], g[UC_SYSCALL_ARG1],
					       g[UC_SYSCALL_ARG2], g[UC_SYSCALL_ARG3],
					       g[UC_SYSCALL_ARG4], g[UC_SYSCALL_ARG5], g[UC_PC]);
	return 0;
}

/* A change of this thread's mask or alternate stack (u_sigprocmask,
 * u_sigaltstack), asked for by the fault at sandpit_ask_self_insn.  The
 * frame is the fault's, right on the asker's context (the kernel delivers
 * a fault before any other pending signal, and those stack above it):
 * its uc_sigmask is the mask in force at the call, and what the kernel
 * restores on rt_sigreturn; uc_stack likewise. */
static void answer_self_request(struct self_request *rq, ucontext_t *uc)
{
	struct u_state *st = u_self();
	greg_t *g = uc->uc_mcontext.gregs;
	/* sigaltstack: validated here as the kernel would, because a bad
	 * uc_stack would make rt_sigreturn fail.  The frame keeps the settings;
	 * whether the thread runs on the stack comes from the interrupted stack
	 * pointer, as the kernel's own answer does */
	uint64_t *ss = (uint64_t *)&uc->uc_stack; /* ss_sp, ss_flags (int), ss_size */
	uint64_t sp = (uint64_t)g[UC_SP];
	int on_stack = ss[2] && sp > ss[0] && sp - ss[0] <= ss[2];
	uint32_t kflags = (uint32_t)ss[1];
	rq->old_ss[0] = ss[0];
	rq->old_ss[1] = (!ss[2]	   ? 2 /* SS_DISABLE */
			 : on_stack ? 1 /* SS_ONSTACK */
				    : 0) |
			kflags;
	rq->old_ss[2] = ss[2];
	rq->err = 0;
	/* this frame on the armed alternate stack, the thread off it: the
	 * kernel would ignore the change on rt_sigreturn */
	uintptr_t here = (uintptr_t)uc;
	if (rq->how == 3 && !on_stack && ss[2] && here - ss[0] < ss[2]) {
		rq->err = SELF_ASK_AGAIN;
		return;
	}
	if (rq->how == 3) {
		uint32_t flags = (uint32_t)rq->ss[1], mode = flags & ~(1u << 31); /* SS_AUTODISARM */
		if (on_stack)
			rq->err = -1; /* EPERM */
		else if (mode != 0 && mode != 2 /* SS_DISABLE */ && mode != 1)
			rq->err = -22; /* EINVAL */
		else if (mode != 2 && rq->ss[2] < 2048 /* MINSIGSTKSZ */)
			rq->err = -12; /* ENOMEM */
		if (!rq->err) {
			ss[0] = mode == 2 ? 0 : rq->ss[0];
			ss[1] = (ss[1] & ~0xffffffffull) | (mode == 2 ? 2 : flags & ~1u);
			ss[2] = mode == 2 ? 0 : rq->ss[2];
		}
		return;
	}
	/* a thread on its way out (u_exit): nothing may run in it any more,
	 * sandpit's own handlers included (sandpit_exit_wait) */
	if (rq->how == SELF_BLOCK_ALL) {
		*(uint64_t *)&uc->uc_sigmask = ~(SANDPIT_SIGBIT(9) | SANDPIT_SIGBIT(19));
		return;
	}
	/* the program's view: the real mask, and its own bits for the signals
	 * sandpit never lets be blocked for real (DESIGN §6: U cannot take
	 * them away) */
	uint64_t *mask = (uint64_t *)&uc->uc_sigmask;
	uint64_t old = (*mask & ~SANDPIT_NEVER_BLOCKED) | (st->vblocked & SANDPIT_NEVER_BLOCKED);
	uint64_t set = rq->set, now = old;
	if (rq->how == 0)
		now |= set;
	else if (rq->how == 1)
		now &= ~set;
	else if (rq->how == 2)
		now = set;
	/* SIGKILL and SIGSTOP cannot be blocked */
	now &= ~(SANDPIT_SIGBIT(9) | SANDPIT_SIGBIT(19));
	*mask = now & ~SANDPIT_NEVER_BLOCKED;
	st->vblocked = now & SANDPIT_NEVER_BLOCKED;
	rq->old = old;
	/* what this unblocked, u_sigprocmask raises (u_raise_due) */
}

static uintptr_t on_sigsegv(void *info, ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	const unsigned char *ip = (const unsigned char *)g[UC_PC];
	const int32_t *si = info;

	/* sandpit's own fault-safe accesses to U's memory: EFAULT, not a death */
	if (ip == (const unsigned char *)sandpit_put_user64_insn) {
		g[UC_PC] = (greg_t)(uintptr_t)sandpit_put_user64_fault;
		return 0;
	}
	if (ip == (const unsigned char *)sandpit_copy_to_user_insn) {
		g[UC_PC] = (greg_t)(uintptr_t)sandpit_copy_to_user_fault;
		return 0;
	}
	if (ip == (const unsigned char *)sandpit_get_user8_insn) {
		g[UC_PC] = (greg_t)(uintptr_t)sandpit_get_user8_fault;
		return 0;
	}
	if (ip == (const unsigned char *)sandpit_copy_user_str_insn) {
		g[UC_PC] = (greg_t)(uintptr_t)sandpit_copy_user_str_fault;
		return 0;
	}
	/* sandpit's own request for a mask or stack change (the hlt's #GP;
	 * a kill or raise that lands there has another si_code) */
	if (ip == (const unsigned char *)sandpit_ask_self_insn && si[2] == SI_KERNEL_) {
		struct self_request *rq = (struct self_request *)g[UC_CALL_ARG0];
		answer_self_request(rq, uc);
		g[UC_RET] = rq->err;
		g[UC_PC] += ARCH_ASK_SELF_LEN;
		return 0;
	}
	int fault = si[2] > 0; /* from the kernel; a kill, raise or sigqueue is <= 0 */
	/* an instruction fetch from code not yet patched (SEGV_ACCERR at rip) */
	if (si[2] == 2 && *(const uint64_t *)(si + 4) == (uint64_t)g[UC_PC] &&
	    sandpit_exec_fault((uintptr_t)g[UC_PC]))
		return 0;
	/* rdtsc (0f 31) or rdtscp (0f 01 f9): a #GP, read without faulting */
	int len = 0;
	if (si[2] == SI_KERNEL_ && __atomic_load_n(&sandpit_u_active, __ATOMIC_RELAXED) &&
	    sandpit_get_user8(ip) == 0x0f) {
		long b1 = sandpit_get_user8(ip + 1);
		if (b1 == 0x31)
			len = 2;
		else if (b1 == 0x01 && sandpit_get_user8(ip + 2) == 0xf9)
			len = 3;
	}
	if (!len)
		return program_kept_signal(11, info, uc, fault);
	uint32_t aux;
	uint64_t tsc = u_read_tsc(&aux);
	g[UC_TSC_LO] = (greg_t)(tsc & 0xffffffffu);
	g[UC_TSC_HI] = (greg_t)(tsc >> 32);
	if (len == 3)
		g[UC_TSC_AUX] = (greg_t)aux;
	g[UC_PC] += len;
	return 0;
}

uintptr_t u_signal_enter(int sig, void *info, void *ucv)
{
	refuse_trusted_thread();
	ucontext_t *uc = ucv;
	switch (sig) {
	case 11:
		return on_sigsegv(info, uc);
	case 31:
		return on_sigsys(info, uc);
	case SANDPIT_SIG: {
		/* asked for by ask_through_sandpit_sig, or the program's */
		struct u_state *st = u_self();
		uint64_t req = __atomic_load_n(&st->self_req, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&st->self_done, __ATOMIC_ACQUIRE) != req) {
			answer_self_request(st->self_rq, uc);
			__atomic_store_n(&st->self_done, req, __ATOMIC_RELEASE);
			return 0;
		}
		return program_kept_signal(sig, info, uc, 0);
	}
	case SANDPIT_SIG_INTR: /* never T's here: its handler sends only U's */
		return program_kept_signal(sig, info, uc, 0);
	}
	if (sig > 0 && sig < SIGTAB_N)
		return program_handler(sig, info, uc);
	return 0;
}
