/* A request of U's to T, and the program's handlers put off while one is
 * in flight, run at its end (user/untrusted/runtime.h): the two call each
 * other (a handler run at a request's end makes requests of its own), so
 * they are one file.  Below the entry (u_entry.c) and sandpit's signal
 * handlers (u_signal.c), which both use it.  Runs in U, freestanding. */
#include <asm/unistd.h>
#include <sys/ucontext.h>
#include "user/untrusted/runtime.h"

int sandpit_u_active;
int sandpit_u_filter;
int sandpit_u_fsgsbase;
uint64_t sandpit_u_task_size = 0x7ffffffff000;
unsigned char sandpit_u_path_arg[TT_MAX_NR] = { [0 ... TT_MAX_NR - 1] = 0xff };

/* one wake-up on T's eventfd */
void u_wake_t(const struct u_state *st)
{
	static const uint64_t one = 1;
	sandpit_raw_syscall6(__NR_write, st->t_fd, (long)&one, sizeof(one), 0, 0, 0);
}

/* One request to T: write it, wake T only if it sleeps, then spin while T
 * runs on another CPU (at most about one blocking hand-off), else block. */
static long call_trusted(struct u_state *st, long nr, const long args[6])
{
	struct mailbox *mb = st->mb;
	/* one instruction: a handler never finds the number half taken */
	uint64_t seq = __atomic_add_fetch(&st->seq, 1, __ATOMIC_SEQ_CST);
	unsigned cpu = sandpit_getcpu();

	mb->nr = nr;
	for (int i = 0; i < 6; i++)
		mb->args[i] = args[i];
	mb->u_cpu = cpu;
	__atomic_store_n(&mb->req_seq, seq, __ATOMIC_RELEASE);
	__atomic_store_n(&st->flight, FLIGHT_SENT, __ATOMIC_SEQ_CST);
	full_fence();
	if (__atomic_load_n(&mb->t_sleep, __ATOMIC_RELAXED))
		u_wake_t(st);
	/* a handler put off while the request was being written could not
	 * ask B to interrupt it: it is asked now, for T may block in it */
	if (__atomic_load_n(&st->ndeferred, __ATOMIC_SEQ_CST))
		u_interrupt_t(st, seq);

	/* res_seq can pass seq: a handler's own requests, answered after ours */
	for (;;) {
		if (__atomic_load_n(&mb->res_seq, __ATOMIC_ACQUIRE) >= seq)
			break;
		if (__atomic_load_n(&mb->t_cpu, __ATOMIC_RELAXED) != cpu) {
			uint32_t n = st->spin;
			while (n-- && __atomic_load_n(&mb->res_seq, __ATOMIC_ACQUIRE) < seq)
				cpu_relax();
			if (__atomic_load_n(&mb->res_seq, __ATOMIC_ACQUIRE) >= seq)
				break;
		}
		__atomic_store_n(&mb->u_sleep, 1, __ATOMIC_RELAXED);
		full_fence();
		sandpit_wait_result(st->u_fd, &mb->res_seq, seq);
		__atomic_store_n(&mb->u_sleep, 0, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&st->flight, FLIGHT_TAKEN, __ATOMIC_SEQ_CST);
	return mb->result;
}

/* The start and the end of a request: from before its number is taken
 * until its answer is read, a handler that lands is put off, or run at
 * once in the one state where nothing of the request's can be trodden
 * on (program_handler).  At the end, the handlers put off run. */
static void begin_request(struct u_state *st)
{
	__atomic_store_n(&st->depth, st->depth + 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&st->flight, FLIGHT_BUILD, __ATOMIC_SEQ_CST);
}

static void end_request(struct u_state *st)
{
	__atomic_store_n(&st->flight, FLIGHT_NONE, __ATOMIC_SEQ_CST);
	__atomic_store_n(&st->depth, st->depth - 1, __ATOMIC_SEQ_CST);
	if (!st->depth && __atomic_load_n(&st->ndeferred, __ATOMIC_SEQ_CST))
		u_run_deferred(st);
}

/* A call B checks a path of: the path goes with the request (MB_PATH), so
 * that B need not read it from P with process_vm_readv (about 1.5 us).  Read
 * here as the kernel would read it, without faulting; one that does not
 * fit or cannot be read is left to B (which then says ENAMETOOLONG or
 * EFAULT as the kernel does).  Under depth, so that no handler's call
 * takes the place of this one's copy. */
static void carry_path(struct mailbox *mb, long nr, const long args[6])
{
	unsigned arg = (unsigned long)nr < TT_MAX_NR ? sandpit_u_path_arg[nr] : 0xff;
	long n = arg < 6 && args[arg] ?
			 sandpit_copy_user_str(mb->path.bytes, (const char *)args[arg], MB_PATH_MAX) :
			 -1;
	mb->path.addr = n >= 0 ? (uint64_t)args[arg] : 0;
	mb->path.len = n >= 0 ? (uint32_t)n : MB_PATH_NONE;
}

/* B answered the call itself (-SP_ANSWERED, b_answer.c: the stat family,
 * statx, access, readlink): its answer is in this thread's secure page,
 * where B put it for this request (it writes there only when this slot's
 * T rings it again, for a later request).  Its bytes go to the program's
 * buffer, the call's argument B named, as the kernel's copy would: EFAULT
 * where it cannot be written, never a fault; then the call's result.
 * Under depth, before any handler's call. */
static long copy_answer(const struct u_state *st, const long args[6])
{
	const struct sp_answer *a = (const struct sp_answer *)st->sp->data;
	uint32_t len = a->len, arg = a->arg;
	long result = a->result;
	if (len > SP_ANSWER_MAX || (len && arg >= 6))
		return -5; /* EIO: never from B */
	if (len && sandpit_copy_to_user((void *)args[arg], a->bytes, len) < 0)
		return -14; /* EFAULT */
	return result;
}

/* res23, if set, gets T's second and third results, taken before deferred
 * handlers run (their own requests would overwrite them). */
static long call_trusted_res(long nr, const long args[6], uint64_t res23[2])
{
	struct u_state *st = u_self();
	begin_request(st);
	if ((unsigned long)nr < TT_MAX_NR && sandpit_u_path_arg[nr] != 0xff)
		carry_path(st->mb, nr, args);
	long r = call_trusted(st, nr, args);
	if (r == -SP_ANSWERED)
		r = copy_answer(st, args);
	if (res23) {
		res23[0] = st->mb->res2;
		res23[1] = st->mb->res3;
	}
	end_request(st);
	return r;
}

/* A refusal made here or by T's rules is reported to B, which counts it
 * for `sandpit run` and explains it under --log=denials: the call as U
 * passed it, the result, which of the call's rules refused it (T says
 * which, in MB_RES3) and where the call returns to.  B decides nothing by
 * it; a report U forges only adds a line. */
int sandpit_u_report;

void u_report_denied(struct u_state *st, long nr, const long a[6], long r, long rule)
{
	if (sandpit_u_report != SANDPIT_U_REPORT_ALL && st->nreported >= SANDPIT_U_REPORT_FULL) {
		__atomic_store_n(&st->unreported, st->unreported + 1, __ATOMIC_RELAXED);
		return;
	}
	st->nreported++;
	/* a handler's own report waits until this one is B's */
	begin_request(st);
	struct u_denial *d = &st->denial;
	d->nr = (uint64_t)nr;
	for (int i = 0; i < 6; i++)
		d->args[i] = (uint64_t)a[i];
	d->result = r;
	d->rule = rule;
	d->caller = st->caller;
	long none[6] = { 0 };
	call_trusted(st, SANDPIT_NR_DENIED, none);
	end_request(st);
}

/* -ERESTARTSYS from T: sandpit's interrupt ended a call that the kernel
 * restarts per SA_RESTART (or one not yet made).  As the kernel does for
 * U's own call: made again, unless a handler that ran for it lacks
 * SA_RESTART, then EINTR.  (Calls the kernel never restarts, such as
 * poll or nanosleep, come back from T with EINTR itself.) */

/* A signal this thread sent itself is pending on it once T has made the
 * call, and natively it is delivered before the call returns.  T's call
 * only kicks U's CPU, an interrupt that can come after U has read the
 * answer and gone on (a raise whose handler had not run when it returned,
 * and the next raise of the same signal lost with it: 1 in ~100 000 in
 * strict mode on two CPUs).  So U enters the kernel once itself: a read of
 * no descriptor, which strict mode allows, delivers it on the way out. */
static void deliver_own_signal(const struct u_state *st, long nr, const long a[6])
{
	if ((nr == __NR_tgkill && (int32_t)a[0] == st->pid && (int32_t)a[1] == st->tid && a[2]) ||
	    (nr == __NR_kill && ((int32_t)a[0] == st->pid || a[0] == 0) && a[1]))
		sandpit_raw_syscall6(__NR_read, -1, 0, 0, 0, 0, 0);
}

long u_call_trusted(long nr, const long args[6])
{
	struct u_state *st = u_self();
	for (;;) {
		uint64_t ran = st->norestart_ran;
		long r = call_trusted_res(nr, args, 0);
		if (r == -SP_ERESTARTNOINTR)
			continue;
		if (r == 0)
			deliver_own_signal(st, nr, args);
		if (r != -SP_ERESTARTSYS)
			return r;
		if (st->norestart_ran != ran)
			return -4; /* EINTR */
	}
}

/* Strict mode turns the TSC off for U, so T (which keeps it) executes
 * rdtscp: U gets exactly the counter the instruction would give, no other
 * timer and no finer one.  (No rdtscp of U's own here: this file is not
 * sandpit_text, the patcher would take it.) */
uint64_t u_read_tsc(uint32_t *aux)
{
	static const long none[6];
	uint64_t res23[2];
	uint32_t lo = (uint32_t)call_trusted_res(SANDPIT_NR_RDTSC, none, res23);

	*aux = (uint32_t)res23[1];
	return (uint64_t)(uint32_t)res23[0] << 32 | lo;
}

/* rt_sigprocmask and sigaltstack act on the calling thread, so T cannot
 * make them for U, and strict mode forbids them to U.  sandpit's SIGSEGV
 * handler makes them in the frame of a fault U raises on purpose
 * (sandpit_ask_self; answer_self_request, u_signal.c): the frame holds the
 * mask and alternate stack in force, and the kernel installs them on
 * rt_sigreturn.  No request is in flight between U and T, so a handler
 * that lands meanwhile runs as it would natively, and asks with its own
 * request on its own stack. */
long u_sigprocmask(long how, const uint64_t *set, uint64_t *old, long size)
{
	if (size != 8)
		return -22; /* EINVAL */
	if (set && how != 0 && how != 1 && how != 2) /* SIG_BLOCK, SIG_UNBLOCK, SIG_SETMASK */
		return -22;
	struct self_request rq = { .how = set ? (int32_t)how : -1, .set = set ? *set : 0 };
	long r = sandpit_ask_self(&rq);
	if (r == 0 && old)
		*old = rq.old;
	if (r == 0 && set) {
		struct u_state *st = u_self();
		u_raise_due(st);
		/* signals put off that the new mask lets through are delivered
		 * now, as the kernel delivers pending ones it unblocks */
		if (!st->depth && __atomic_load_n(&st->ndeferred, __ATOMIC_SEQ_CST))
			u_run_deferred(st);
	}
	return r;
}

#define SA_SIGINFO_ 4u
#define SA_NODEFER_ 0x40000000u
#define SA_RESTART_ 0x10000000u
#define SA_RESETHAND_ 0x80000000u

struct sigtab *sandpit_sigtab;

typedef void (*handler1)(int);
typedef void (*handler3)(int, void *, void *);

static void call_program_handler(const struct k_sigaction *a, int sig, void *info, void *uc)
{
	if (a->flags & SA_SIGINFO_)
		((handler3)(uintptr_t)a->handler)(sig, info, uc);
	else
		((handler1)(uintptr_t)a->handler)(sig);
}

static void copy_bytes(void *d, const void *s, unsigned long n)
{
	unsigned char *dd = d;
	const unsigned char *ss = s;
	while (n--)
		*dd++ = *ss++;
}

/* What the kernel does as it starts a handler: SA_RESETHAND's reset, and
 * the signals blocked while it runs (its sa_mask, and its own signal
 * unless SA_NODEFER), returned. */
uint64_t u_start_handler(struct k_sigaction *a, int sig)
{
	if (a->flags & SA_RESETHAND_)
		a->handler = 0;
	return a->mask | (a->flags & SA_NODEFER_ ? 0 : SANDPIT_SIGBIT(sig));
}

#define SA_ONSTACK_ 0x08000000u

/* The signals whose default action is to be ignored (SIGCHLD, SIGCONT,
 * SIGURG, SIGWINCH): the others end or stop the process. */
static int ignored_by_default(int sig)
{
	return sig == 17 || sig == 18 || sig == 23 || sig == 28;
}

/* The default action of a signal sandpit's entry caught (the program's
 * action became SIG_DFL after the kernel was given sandpit's: SA_RESETHAND,
 * applied here, or a change while it was pending): the kernel's own,
 * given SIG_DFL and the signal again.  Made between requests (depth 0). */
void u_default_action(struct u_state *st, int sig)
{
	if (ignored_by_default(sig))
		return;
	static const struct k_sigaction dfl = { 0, 0, 0, 0 };
	long args[6] = { sig, (long)&dfl, 0, 8 };
	u_call_trusted(__NR_rt_sigaction, args);
	u_raise_self(st, sig);
}

/* The queue of signals put off (u_state.deferred) is written by this
 * thread's own signal handlers, which may land between any two of its
 * instructions, also while it delivers from it: so nothing in it moves.
 * An entry is taken with one atomic add on ndeferred (its end), filled,
 * then made live by its signal number; it is delivered or discarded by
 * setting its number to 0; the end goes back to 0 once no entry is live,
 * by a compare-and-swap that fails if one was taken meanwhile.  Arrival
 * order is index order. */
static uint32_t queue_end(const struct u_state *st)
{
	uint32_t n = __atomic_load_n(&st->ndeferred, __ATOMIC_SEQ_CST);
	return n < U_NDEFERRED ? n : U_NDEFERRED;
}

static int entry_sig(const struct u_state *st, uint32_t i)
{
	return __atomic_load_n(&st->deferred[i].sig, __ATOMIC_SEQ_CST);
}

int u_is_queued(const struct u_state *st, int sig)
{
	uint32_t n = queue_end(st);
	for (uint32_t i = 0; i < n; i++)
		if (entry_sig(st, i) == sig)
			return 1;
	return 0;
}

static void queue_trim(struct u_state *st)
{
	uint32_t n = __atomic_load_n(&st->ndeferred, __ATOMIC_SEQ_CST);
	for (uint32_t i = 0; i < n && i < U_NDEFERRED; i++)
		if (entry_sig(st, i))
			return;
	__atomic_compare_exchange_n(&st->ndeferred, &n, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* A signal put off: queued as the kernel queues a pending one.  A standard
 * signal already pending is not queued again (the first one's siginfo
 * stays); a real-time one is queued per instance.  0: not queued (the
 * queue is full: the signal is lost, as one past the kernel's limit). */
int u_queue_signal(struct u_state *st, int sig, const void *info)
{
	if (sig < 32 && u_is_queued(st, sig))
		return 0;
	uint32_t i = __atomic_fetch_add(&st->ndeferred, 1, __ATOMIC_SEQ_CST);
	if (i >= U_NDEFERRED) {
		__atomic_fetch_sub(&st->ndeferred, 1, __ATOMIC_SEQ_CST);
		return 0;
	}
	copy_bytes(st->deferred[i].info, info, sizeof(st->deferred[i].info));
	__atomic_store_n(&st->deferred[i].sig, sig, __ATOMIC_SEQ_CST);
	return 1;
}

/* The program set SIG_IGN, or SIG_DFL of a signal ignored by default: the
 * kernel discards it where pending, and so is it here (this thread's). */
void u_discard_deferred(struct u_state *st, int sig)
{
	uint32_t n = queue_end(st);
	for (uint32_t i = 0; i < n; i++) {
		int s = sig;
		__atomic_compare_exchange_n(&st->deferred[i].sig, &s, 0, 0, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	}
	queue_trim(st);
}

struct handler_call {
	struct u_state *st;
	const struct k_sigaction *act;
	int sig;
	uint64_t during;
	void *info, *uc;
};

/* the handler's mask (which delivers first what it still lets through),
 * then the handler: on the alternate stack for SA_ONSTACK, so that what
 * nests on it lands there too, as on the kernel's frame there */
static long handler_call_fn(void *p)
{
	struct handler_call *c = p;
	u_sigprocmask(2 /* SIG_SETMASK */, &c->during, 0, 8);
	if (!(c->act->flags & SA_RESTART_))
		c->st->norestart_ran++;
	call_program_handler(c->act, c->sig, c->info, c->uc);
	return 0;
}

/* The lowest signal put off that the mask lets through (its oldest
 * instance), as the kernel picks among pending ones, or -1. */
static int next_deliverable(const struct u_state *st, uint64_t mask)
{
	int best = -1, best_sig = 0;
	uint32_t n = queue_end(st);
	for (uint32_t i = 0; i < n; i++) {
		int sig = entry_sig(st, i);
		if (!sig || (mask & SANDPIT_SIGBIT(sig)))
			continue;
		if (best < 0 || sig < best_sig) {
			best = (int)i;
			best_sig = sig;
		}
	}
	return best;
}

/* One signal put off, delivered as the kernel delivers a pending one: its
 * action is decided now (SIG_IGN, SIG_DFL, SA_RESETHAND's reset), the mask
 * for the handler is set (its sa_mask, and its own signal unless
 * SA_NODEFER), and, as the kernel delivers the pending signals that mask
 * still lets through before the handler's first instruction, those are
 * delivered first (the mask change does it, u_sigprocmask); SA_ONSTACK
 * runs it on the alternate stack if one is set and not in use.  The mask
 * is then put back, as rt_sigreturn would.  The handler gets a zeroed
 * context: the kernel's frame is gone. */
static void deliver(struct u_state *st, const struct deferred_signal *d, uint64_t mask,
		    const uint64_t ss[3])
{
	int sig = d->sig;
	struct k_sigaction *a = &sandpit_sigtab->act[sig];
	struct k_sigaction act = *a;
	if (act.handler == 1)
		return;
	if (act.handler == 0) {
		u_default_action(st, sig);
		return;
	}
	__atomic_fetch_add(&sandpit_sigtab->signals, 1, __ATOMIC_SEQ_CST);
	uint64_t block = u_start_handler(a, sig);
	uint64_t during = (mask | block) & ~(SANDPIT_SIGBIT(9) | SANDPIT_SIGBIT(19));
	ucontext_t uc;
	for (unsigned long i = 0; i < sizeof(uc); i++)
		((unsigned char *)&uc)[i] = 0;
	struct deferred_signal copy = *d;
	struct handler_call c = { st, &act, sig, during, copy.info, &uc };
	/* ss: ss_sp, ss_flags (SS_ONSTACK 1, SS_DISABLE 2), ss_size */
	if ((act.flags & SA_ONSTACK_) && !(ss[1] & 3) && ss[2])
		sandpit_call_on_stack((void *)(uintptr_t)((ss[0] + ss[2]) & ~15ull), handler_call_fn, &c);
	else
		handler_call_fn(&c);
	u_sigprocmask(2, &mask, 0, 8);
}

/* The handlers put off while their thread waited for T, run once no
 * request is in flight (depth 0): those the thread's mask lets through,
 * the lowest first, each as the kernel would deliver it (deliver).  A
 * blocked one stays until a mask change lets it through (u_sigprocmask
 * comes back here).  Without the handler's mask a signal that comes faster
 * than its handler runs nests without end and the program dies of its
 * stack. */
void u_run_deferred(struct u_state *st)
{
	for (;;) {
		if (st->depth || !__atomic_load_n(&st->ndeferred, __ATOMIC_SEQ_CST))
			return;
		/* the mask and the alternate stack in force, in one question */
		struct self_request rq = { .how = -1 };
		if (sandpit_ask_self(&rq))
			return;
		int i = next_deliverable(st, rq.old);
		if (i < 0) {
			queue_trim(st);
			return;
		}
		/* copied, then taken: a handler that lands between the two
		 * finds it still pending (and merges with it) */
		struct deferred_signal d = st->deferred[i];
		int sig = d.sig;
		if (!sig || !__atomic_compare_exchange_n(&st->deferred[i].sig, &sig, 0, 0,
							 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			continue;
		queue_trim(st);
		deliver(st, &d, rq.old, rq.old_ss);
	}
}

long u_raise_self(struct u_state *st, int sig)
{
	long args[6] = { st->pid, st->tid, sig };
	return u_call_trusted(__NR_tgkill, args);
}

/* The program's own kept signals it raised while it had them blocked,
 * once they are not: raised again (between requests, depth 0). */
void u_raise_due(struct u_state *st)
{
	uint64_t due = st->vpending & ~st->vblocked;
	st->vpending &= ~due;
	for (int sig = 1; due; sig++, due >>= 1)
		if (due & 1)
			u_raise_self(st, sig);
}
