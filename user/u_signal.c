/* sandpit's SIGSEGV handler in U.  Strict mode turns the TSC off for U
 * (DESIGN §9): rdtsc and rdtscp fault, and the vDSO's clock_gettime uses
 * them.  The handler recognises the instruction, asks T (which keeps the
 * TSC) to execute it, writes the result into the interrupted registers and
 * steps over the instruction.  Any other fault restores the default action
 * so that the retried instruction kills the process. */
#include <asm/unistd.h>
#include <sys/ucontext.h>
#include "user/runtime.h"

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

/* Filter mode's net: a system call the patcher did not redirect, which the
 * filter sends here (SECCOMP_RET_TRAP), takes the same entry a patched
 * site would, and its result goes back into the interrupted rax. */
void u_sigsys(int sig, void *info, void *ucv)
{
	(void)sig;
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	const int32_t *si = info;
	long nr = si[6]; /* si_syscall, after si_call_addr */
	g[REG_RAX] = (greg_t)sandpit_entry(nr, g[REG_RDI], g[REG_RSI], g[REG_RDX], g[REG_R10],
					   g[REG_R8], g[REG_R9]);
}

/* SANDPIT_SIG: a request from this thread's own entry to change its
 * signal mask (u_sigprocmask).  The frame's uc_sigmask is the mask in force
 * when the signal came, and what the kernel restores on rt_sigreturn. */
void u_sandpit_sig(int sig, void *info, void *ucv)
{
	(void)sig;
	(void)info;
	refuse_trusted_thread();
	ucontext_t *uc = ucv;
	struct u_state *st = u_self();
	/* A handler stacked on this one (the mask it installs lets one in) may
	 * have eaten the wake-up byte of the wait this one interrupted: that
	 * wait looks at res_seq again instead of restarting its read. */
	greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t ip = (uintptr_t)g[REG_RIP];
	if (ip >= (uintptr_t)sandpit_wake_begin && ip < (uintptr_t)sandpit_wake_end)
		g[REG_RIP] = (greg_t)(uintptr_t)sandpit_wake_end;
	uint64_t req = __atomic_load_n(&st->self_req, __ATOMIC_ACQUIRE);
	if (st->self_done == req)
		return; /* not asked for */
	/* sigaltstack: validated here as the kernel would, because a bad
	 * uc_stack would make rt_sigreturn fail */
	uint64_t *ss = (uint64_t *)&uc->uc_stack; /* ss_sp, ss_flags (int), ss_size */
	st->self_old_ss[0] = ss[0];
	st->self_old_ss[1] = ss[1] & 0xffffffffu;
	st->self_old_ss[2] = ss[2];
	if (st->self_how == 3) {
		uint32_t flags = (uint32_t)st->self_ss[1], mode = flags & ~(1u << 31); /* SS_AUTODISARM */
		st->self_err = 0;
		if (ss[1] & 1 /* SS_ONSTACK: on it now */)
			st->self_err = -1; /* EPERM */
		else if (mode != 0 && mode != 2 /* SS_DISABLE */ && mode != 1)
			st->self_err = -22; /* EINVAL */
		else if (mode != 2 && st->self_ss[2] < 2048 /* MINSIGSTKSZ */)
			st->self_err = -12; /* ENOMEM */
		if (!st->self_err) {
			ss[0] = mode == 2 ? 0 : st->self_ss[0];
			ss[1] = (ss[1] & ~0xffffffffull) | (mode == 2 ? 2 : flags & ~1u);
			ss[2] = mode == 2 ? 0 : st->self_ss[2];
		}
		__atomic_store_n(&st->self_done, req, __ATOMIC_RELEASE);
		return;
	}
	uint64_t *mask = (uint64_t *)&uc->uc_sigmask;
	uint64_t old = *mask, set = st->self_set, now = old;
	if (st->self_how == 0)
		now |= set;
	else if (st->self_how == 1)
		now &= ~set;
	else if (st->self_how == 2)
		now = set;
	/* SIGKILL and SIGSTOP cannot be blocked, nor can sandpit's own */
	now &= ~((1ull << (9 - 1)) | (1ull << (19 - 1)) | (1ull << (SANDPIT_SIG - 1)));
	*mask = now;
	st->self_old = old;
	__atomic_store_n(&st->self_done, req, __ATOMIC_RELEASE);
}

struct sigtab *sandpit_sigtab;

typedef void (*handler1)(int);
typedef void (*handler3)(int, void *, void *);

static void call_program_handler(const struct k_sigaction *a, int sig, void *info, void *uc)
{
	if (a->flags & 4 /* SA_SIGINFO */)
		((handler3)(uintptr_t)a->handler)(sig, info, uc);
	else
		((handler1)(uintptr_t)a->handler)(sig);
}

/* What the kernel calls for every signal the program catches: count it,
 * call the program's handler, and if it interrupted pause or sigsuspend
 * make that return EINTR (DESIGN: a wait ends when a handler ran). */
static void copy_bytes(void *d, const void *s, unsigned long n)
{
	unsigned char *dd = d;
	const unsigned char *ss = s;
	while (n--)
		*dd++ = *ss++;
}

/* A handler interrupted one of sandpit's own waits: pause and sigsuspend
 * end with EINTR; U's sleep for T's answer looks again instead of
 * restarting a read whose wake-up byte the handler may have eaten. */
static void leave_waits(ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t ip = (uintptr_t)g[REG_RIP];
	if (ip >= (uintptr_t)sandpit_wait_begin && ip < (uintptr_t)sandpit_wait_end)
		g[REG_RIP] = (greg_t)(uintptr_t)sandpit_wait_eintr;
	else if (ip >= (uintptr_t)sandpit_wake_begin && ip < (uintptr_t)sandpit_wake_end)
		g[REG_RIP] = (greg_t)(uintptr_t)sandpit_wake_end;
}

/* Handlers put off while their thread waited for T (see struct u_state). */
void u_run_deferred(struct u_state *st)
{
	while (st->ndeferred) {
		uint32_t n = --st->ndeferred;
		struct deferred_signal d = st->deferred[n];
		ucontext_t uc;
		for (unsigned long i = 0; i < sizeof(uc); i++)
			((unsigned char *)&uc)[i] = 0;
		const struct k_sigaction *a = &sandpit_sigtab->act[d.sig];
		if (a->handler > 1)
			call_program_handler(a, d.sig, d.info, &uc);
	}
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

void u_signal_wrapper(int sig, void *info, void *ucv)
{
	refuse_trusted_thread();
	ucontext_t *uc = ucv;
	struct sigtab *t = sandpit_sigtab;
	struct u_state *st = u_self();
	__atomic_fetch_add(&t->signals, 1, __ATOMIC_SEQ_CST);
	struct mailbox *mb = st->mb;
	int answered = __atomic_load_n(&mb->res_seq, __ATOMIC_SEQ_CST) >= st->seq;
	if (__atomic_load_n(&st->depth, __ATOMIC_SEQ_CST) > 0 &&
	    (answered || raised_by_request(st, mb, sig))) {
		/* The request is answered (only its result is left to read), or
		 * it is the very call that sent this signal to this thread, which
		 * has done its work and returns 0.  T has taken the request out of
		 * the mailbox either way, so the handler runs now, as the kernel
		 * would run it, and may make requests of its own; the result is
		 * given back afterwards. */
		int64_t result = answered ? mb->result : 0;
		uint64_t res2 = mb->res2, res3 = mb->res3;
		int32_t depth = st->depth;
		/* the handler's own waits end with u_sleep at 0: the interrupted
		 * wait may be about to sleep, and T must then still wake it */
		uint32_t u_sleep = __atomic_load_n(&mb->u_sleep, __ATOMIC_SEQ_CST);
		st->depth = 0;
		if (sig > 0 && sig < SIGTAB_N && t->act[sig].handler > 1)
			call_program_handler(&t->act[sig], sig, info, uc);
		st->depth = depth;
		__atomic_store_n(&mb->u_sleep, u_sleep, __ATOMIC_SEQ_CST);
		/* the handler's own requests came after ours and overwrote its
		 * result; if it made none, T answers ours as usual */
		if (answered || __atomic_load_n(&mb->res_seq, __ATOMIC_SEQ_CST) > st->seq) {
			mb->result = result;
			mb->res2 = res2;
			mb->res3 = res3;
		}
		leave_waits(uc);
		return;
	}
	if (__atomic_load_n(&st->depth, __ATOMIC_SEQ_CST) > 0) {
		uint32_t n = st->ndeferred;
		for (uint32_t i = 0; i < n; i++)
			if (st->deferred[i].sig == sig)
				return; /* a standard signal pending twice is once */
		if (n < sizeof(st->deferred) / sizeof(st->deferred[0])) {
			st->deferred[n].sig = sig;
			copy_bytes(st->deferred[n].info, info, sizeof(st->deferred[n].info));
			__atomic_store_n(&st->ndeferred, n + 1, __ATOMIC_SEQ_CST);
		}
		/* T may be waiting for U (a futex, a sleep, a poll): B can make
		 * that call end with EINTR, as the kernel would for the handler */
		if (st->intr_seq != st->seq) {
			st->intr_seq = st->seq;
			char slot = (char)st->slot;
			sandpit_raw_syscall6(1 /* write */, st->tb_fd, (long)&slot, 1, 0, 0, 0);
		}
		return;
	}
	if (sig > 0 && sig < SIGTAB_N && t->act[sig].handler > 1)
		call_program_handler(&t->act[sig], sig, info, uc);
	leave_waits(uc);
}

void u_sigsegv(int sig, void *info, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	const unsigned char *ip = (const unsigned char *)g[REG_RIP];
	static const long none[6];
	int len = 0;
	const int32_t *si = info;

	/* sandpit's own fault-safe accesses to U's memory: EFAULT, not a death */
	if (ip == (const unsigned char *)sandpit_put_user64_insn) {
		g[REG_RIP] = (greg_t)(uintptr_t)sandpit_put_user64_fault;
		return;
	}
	if (ip == (const unsigned char *)sandpit_get_user8_insn) {
		g[REG_RIP] = (greg_t)(uintptr_t)sandpit_get_user8_fault;
		return;
	}
	/* an instruction fetch from code not yet patched (SEGV_ACCERR at rip) */
	if (si[2] == 2 && *(const uint64_t *)(si + 4) == (uint64_t)g[REG_RIP] &&
	    sandpit_exec_fault((uintptr_t)g[REG_RIP]))
		return;
	if (ip[0] == 0x0f && ip[1] == 0x31)
		len = 2;
	else if (ip[0] == 0x0f && ip[1] == 0x01 && ip[2] == 0xf9)
		len = 3;
	if (!len || !__atomic_load_n(&sandpit_u_active, __ATOMIC_RELAXED)) {
		/* a real fault: the program's own handler, if it has one */
		const struct k_sigaction *a = &sandpit_sigtab->act[11];
		if (a->handler > 1) {
			__atomic_fetch_add(&sandpit_sigtab->signals, 1, __ATOMIC_SEQ_CST);
			call_program_handler(a, sig, info, ucv);
			return;
		}
		if (a->handler == 1)
			return; /* SIG_IGN: the kernel would loop on it too */
		u_call_trusted(SANDPIT_NR_SEGV_DFL, none);
		return;
	}
	uint32_t aux;
	uint64_t tsc = u_read_tsc(&aux);
	g[REG_RAX] = (greg_t)(tsc & 0xffffffffu);
	g[REG_RDX] = (greg_t)(tsc >> 32);
	if (len == 3)
		g[REG_RCX] = (greg_t)aux;
	g[REG_RIP] += len;
}
