/* The sandpit entry: every patched system call site arrives here (through
 * the stub in asm/x86_64/entry.S).  Runs in U, freestanding. */
#include <asm/unistd.h>
#include "user/untrusted/runtime.h"

int sandpit_u_active;
int sandpit_u_filter;
int sandpit_u_fsgsbase;
uint64_t sandpit_u_task_size = 0x7ffffffff000;
unsigned char sandpit_u_path_arg[TT_MAX_NR] = { [0 ... TT_MAX_NR - 1] = 0xff };

/* one wake-up on T's eventfd */
static void wake_t(const struct u_state *st)
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
		wake_t(st);
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

/* A change of an armed alternate stack asked from off it: the fault's
 * frame lies on that stack, and the kernel ignores a uc_stack change made
 * there.  SANDPIT_SIG's frame lies on the thread's stack: U sends it
 * through T and waits.  The program's handlers wait meanwhile
 * (program_handler sees self_req ahead of self_done), as one that asked
 * here would take this request's place.  One interleaving is left here:
 * another signal's fresh frame under SANDPIT_SIG's restores the old stack
 * on its return (rare: a handler that lands inside such a call). */
static long ask_through_sandpit_sig(struct u_state *st, struct self_request *rq)
{
	__atomic_store_n(&st->depth, st->depth + 1, __ATOMIC_SEQ_CST);
	st->self_rq = rq;
	uint64_t req = st->self_req + 1;
	__atomic_store_n(&st->self_req, req, __ATOMIC_SEQ_CST);
	long args[6] = { st->pid, st->tid, SANDPIT_SIG };
	long r = u_call_trusted(__NR_tgkill, args);
	if (r == 0) {
		while (__atomic_load_n(&st->self_done, __ATOMIC_ACQUIRE) < req)
			cpu_relax(); /* the signal is on its way: tgkill has queued it */
		r = rq->err;
	}
	__atomic_store_n(&st->self_done, req, __ATOMIC_SEQ_CST);
	__atomic_store_n(&st->depth, st->depth - 1, __ATOMIC_SEQ_CST);
	if (!st->depth && __atomic_load_n(&st->ndeferred, __ATOMIC_SEQ_CST))
		u_run_deferred(st);
	return r;
}

static long u_sigaltstack(const uint64_t *ss, uint64_t *old)
{
	struct self_request rq = { .how = ss ? 3 : -1 };
	for (int i = 0; ss && i < 3; i++)
		rq.ss[i] = ss[i];
	long r = sandpit_ask_self(&rq);
	if (r == SELF_ASK_AGAIN)
		r = ask_through_sandpit_sig(u_self(), &rq);
	for (int i = 0; r == 0 && old && i < 3; i++)
		old[i] = rq.old_ss[i];
	return r;
}

/* A thread's exit: tell T (and through it B) first, so that its end is no
 * alarm; T then waits for it and cleans up after it.  T gives no result:
 * U ends once its secure page says B accepted (T wakes it with a byte), so
 * a request rewritten into an exit by another thread leaves its caller
 * waiting, never running on without T.  B accepts only a thread that
 * waits in sandpit_exit_wait with every signal blocked, from where it can
 * only end by exit (invariant 5): so the mask first, and nothing of the
 * program's runs in this thread again. */
static long __attribute__((noreturn)) u_exit(long code)
{
	struct u_state *st = u_self();
	struct mailbox *mb = st->mb;
	struct self_request rq = { .how = SELF_BLOCK_ALL };
	__atomic_store_n(&st->depth, st->depth + 1, __ATOMIC_SEQ_CST);
	sandpit_ask_self(&rq);
	mb->nr = SANDPIT_NR_THREAD_EXIT;
	for (int i = 0; i < 6; i++)
		mb->args[i] = 0;
	mb->args[0] = (uint64_t)code; /* T ends with it too: the last to end gives P's status */
	__atomic_store_n(&mb->req_seq, __atomic_add_fetch(&st->seq, 1, __ATOMIC_SEQ_CST),
			 __ATOMIC_RELEASE);
	full_fence();
	if (__atomic_load_n(&mb->t_sleep, __ATOMIC_RELAXED))
		wake_t(st);
	sandpit_exit_wait(st->u_fd, &st->sp->exiting, code);
}

/* rt_sigaction goes to B, which gives the kernel sandpit's wrapper for a
 * caught signal: what the program gets back as the old action must be its
 * own, from the handler table as it was before the call. */
static long u_sigaction(long sig, long act, struct k_sigaction *old, long size)
{
	struct k_sigaction prev = { 0, 0, 0, 0 };
	if (sig > 0 && sig < SIGTAB_N)
		prev = sandpit_sigtab->act[sig];
	long args[6] = { sig, act, (long)old, size };
	long r = u_call_trusted(__NR_rt_sigaction, args);
	/* SIG_IGN, or SIG_DFL that ignores: a pending one is discarded */
	if (r == 0 && act && sig > 0 && sig < SIGTAB_N) {
		uint64_t h = sandpit_sigtab->act[sig].handler;
		if (h == 1 || (h == 0 && (sig == 17 || sig == 18 || sig == 23 || sig == 28)))
			u_discard_deferred(u_self(), (int)sig);
	}
	if (r < 0 || !old)
		return r;
	/* a signal sandpit keeps is only recorded (the kernel keeps sandpit's
	 * handler, and B wrote no old action) */
	if (!(SANDPIT_KEPT_SIGNALS & SANDPIT_SIGBIT(sig)) &&
	    old->handler != (uint64_t)(uintptr_t)sandpit_signal_entry)
		return r;
	if (sandpit_copy_to_user(old, &prev, sizeof(prev)) < 0)
		return -14; /* EFAULT */
	return r;
}

/* arch_prctl acts on the calling thread, and sandpit answers its two codes
 * for the thread pointer itself (the kernel reads the code as an int); the
 * rest is the policy's.  Filter mode: the filter lets exactly these two
 * through, so the kernel makes them.  Strict mode: U sets its own base with
 * wrfsbase where the CPU has FSGSBASE; without it B does by ptrace. */
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
static long u_arch_prctl(long code, long addr)
{
	long args[6] = { code, addr };
	if (sandpit_u_filter)
		return sandpit_raw_syscall6(__NR_arch_prctl, code, addr, 0, 0, 0, 0);
	if (!sandpit_u_fsgsbase)
		return u_call_trusted(SANDPIT_NR_FS_BASE, args);
	if ((int)code == ARCH_SET_FS) {
		if ((uint64_t)addr >= sandpit_u_task_size)
			return -1; /* EPERM, as the kernel says for a base it cannot use */
		ARCH_SET_THREAD_POINTER(addr);
		return 0;
	}
	uint64_t base;
	ARCH_THREAD_POINTER(base);
	return sandpit_put_user64((uint64_t *)addr, base);
}

/* newfstatat(fd, "", buf, AT_EMPTY_PATH) is glibc's fstat(fd, buf): a path
 * argument that is almost never needed.  When the path is empty (read
 * once, here in U) it is fstat(fd), a call U may make itself, so nothing
 * is gained by changing the byte afterwards; only a path with something in
 * it goes to B.  An unreadable path is EFAULT, as the kernel says.  The fd
 * must be a real one (AT_FDCWD with "" names the cwd) and the flags ones
 * the kernel accepts. */
#define AT_SYMLINK_NOFOLLOW_ 0x100
#define AT_NO_AUTOMOUNT_ 0x800
#define AT_EMPTY_PATH_ 0x1000
static int fstatat_is_fstat(long fd, long path, long flags)
{
	if ((int)fd < 0 || !(flags & AT_EMPTY_PATH_) ||
	    (flags & ~(long)(AT_SYMLINK_NOFOLLOW_ | AT_NO_AUTOMOUNT_ | AT_EMPTY_PATH_)))
		return 0;
	long c = sandpit_get_user8((const void *)path);
	return c < 0 ? (int)c : c == 0;
}

/* pause: until a handler has run */
static long u_pause(void)
{
	struct u_state *st = u_self();
	uint64_t seen = __atomic_load_n(&sandpit_sigtab->signals, __ATOMIC_SEQ_CST);
	long r;
	while ((r = sandpit_wait_signal(st->u_fd, &sandpit_sigtab->signals, seen)) != -4)
		;
	return r;
}

/* rt_sigsuspend: the mask for the wait, then the old one again */
static long u_sigsuspend(const uint64_t *mask, long size)
{
	uint64_t old;
	uint64_t seen = __atomic_load_n(&sandpit_sigtab->signals, __ATOMIC_SEQ_CST);
	long r = u_sigprocmask(2, mask, &old, size);
	if (r < 0)
		return r;
	struct u_state *st = u_self();
	while (sandpit_wait_signal(st->u_fd, &sandpit_sigtab->signals, seen) != -4)
		;
	u_sigprocmask(2, &old, 0, 8);
	return -4; /* EINTR */
}

/* A refusal made here or by T's rules is reported to B, which counts it
 * for `sandpit run` and explains it under --log=denials: the call as U
 * passed it, the result, which of the call's rules refused it (T says
 * which, in MB_RES3) and where the call returns to.  B decides nothing by
 * it; a report U forges only adds a line. */
int sandpit_u_report;

static void report_denied(struct u_state *st, long nr, const long a[6], long r, long rule)
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

/* ppoll, pselect6, epoll_pwait and epoll_pwait2 carry a signal mask for
 * the wait.  T never hands it to the kernel (it would apply to T,
 * invariant 1); it is U's for the length of the call, as the kernel would
 * make it, and a signal it lets through ends T's wait with EINTR through
 * sandpit's interrupt. */
static long call_with_mask(long nr, const long a[6])
{
	const uint64_t *mask = 0;
	if (nr == __NR_ppoll)
		mask = (const uint64_t *)a[3];
	else if (nr == __NR_epoll_pwait || nr == __NR_epoll_pwait2)
		mask = (const uint64_t *)a[4];
	else if (nr == __NR_pselect6 && a[5])
		mask = *(const uint64_t *const *)a[5];
	if (!mask)
		return u_call_trusted(nr, a);
	uint64_t old = 0;
	long r = u_sigprocmask(2 /* SIG_SETMASK */, mask, &old, 8);
	if (r < 0)
		return r;
	r = u_call_trusted(nr, a);
	u_sigprocmask(2, &old, 0, 8);
	return r;
}

/* The policy's path for nr: native, denied here, or through T. */
static long dispatch(long nr, const long a[6])
{
	struct u_state *st = u_self();
	if ((unsigned long)nr >= TT_MAX_NR) {
		if (sandpit_u_report)
			report_denied(st, nr, a, -38, -1);
		return -38; /* ENOSYS: an unknown number is never executed */
	}
	const struct tt_entry *e = &st->table->entries[nr];
	if (e->cls == TT_NATIVE || (e->cls == TT_ALLOW && sandpit_u_filter))
		return sandpit_raw_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	/* a refusal on a descriptor that is not open says EBADF, as the
	 * kernel would, and only T can ask the kernel (t_table.h) */
	int fd_checked = (st->table->fd_checked[nr / 8] >> (nr % 8)) & 1;
	if (e->cls == TT_DENY && (!fd_checked || e->err == 9 /* EBADF */ || e->err == 38 /* ENOSYS */)) {
		if (sandpit_u_report)
			report_denied(st, nr, a, -(long)e->err, -1);
		return -(long)e->err;
	}
	if (e->cls == TT_DENY) {
		long r = u_call_trusted(nr, a);
		if (sandpit_u_report)
			report_denied(st, nr, a, r, -1);
		return r;
	}
	if (!sandpit_u_report || e->cls != TT_THREAD)
		return call_with_mask(nr, a);
	st->mb->res3 = 0; /* T sets it when a rule refuses the call: the rule's index + 1 */
	long r = call_with_mask(nr, a);
	uint64_t rule = st->mb->res3;
	if (r < 0 && rule > e->first && rule <= (uint64_t)e->first + e->nrules)
		report_denied(st, nr, a, r, (long)(rule - 1 - e->first));
	return r;
}

long sandpit_entry_from(long nr, long a0, long a1, long a2, long a3, long a4, long a5,
			long caller)
{
	if (!__atomic_load_n(&sandpit_u_active, __ATOMIC_RELAXED))
		return sandpit_raw_syscall6(nr, a0, a1, a2, a3, a4, a5);
	/* a handler's calls in between have callers of their own */
	struct u_state *st = u_self();
	uint64_t outer = st->caller;
	st->caller = (uint64_t)caller;
	long r = sandpit_entry(nr, a0, a1, a2, a3, a4, a5);
	st->caller = outer;
	return r;
}

/* "This thread" is U, not the T that makes the call in strict mode: a call
 * whose pid 0 or clock means the calling thread names U's tid instead, so
 * that it reads or sets U's CPUs, priority, scheduling or CPU time, not
 * T's (T's CPUs can be fewer: it leaves U's, trusted_thread.S).  The same
 * call, natively, in filter mode.  (getrusage(RUSAGE_THREAD) and prctl's
 * thread name have no form that names a thread: docs/LIMITS.md.) */
static void name_this_thread(long nr, long args[6], int tid)
{
	enum { PRIO_PROCESS_ = 0, IOPRIO_WHO_PROCESS_ = 1, CLOCK_THREAD_CPUTIME_ID_ = 3 };
	int pid_arg = -1, clock_arg = -1;
	switch (nr) {
	case __NR_sched_getaffinity:
	case __NR_sched_setaffinity:
	case __NR_sched_getparam:
	case __NR_sched_setparam:
	case __NR_sched_getscheduler:
	case __NR_sched_setscheduler:
	case __NR_sched_getattr:
	case __NR_sched_setattr:
	case __NR_sched_rr_get_interval:
		pid_arg = 0;
		break;
	case __NR_getpriority:
	case __NR_setpriority:
		if ((int)args[0] == PRIO_PROCESS_)
			pid_arg = 1;
		break;
	case __NR_ioprio_get:
	case __NR_ioprio_set:
		if ((int)args[0] == IOPRIO_WHO_PROCESS_)
			pid_arg = 1;
		break;
	case __NR_clock_gettime:
	case __NR_clock_getres:
	case __NR_timer_create:
		clock_arg = 0;
		break;
	}
	if (pid_arg >= 0 && (int)args[pid_arg] == 0)
		args[pid_arg] = tid;
	if (clock_arg >= 0) {
		/* a CPU clock is ~pid << 3 | how, bit 2 "a thread's"; pid 0
		 * and CLOCK_THREAD_CPUTIME_ID (the scheduler's clock, 2) are
		 * the caller's */
		unsigned c = (unsigned)args[clock_arg];
		if (c == CLOCK_THREAD_CPUTIME_ID_)
			c = ~0u << 3 | 4 | 2;
		if ((c | 7) == ~0u && (c & 4))
			args[clock_arg] = (int)(~(unsigned)tid << 3 | (c & 7));
	}
}

long sandpit_entry(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	if (!__atomic_load_n(&sandpit_u_active, __ATOMIC_RELAXED))
		return sandpit_raw_syscall6(nr, a0, a1, a2, a3, a4, a5);

	struct u_state *st = u_self();
	switch (nr) {
	case __NR_exit:
		return u_exit(a0);
	case __NR_gettid:
		return st->tid;
	case __NR_set_tid_address:
		return st->tid; /* sandpit keeps the thread's clear-child-tid itself */
	case __NR_rt_sigprocmask:
		return u_sigprocmask(a0, (const uint64_t *)a1, (uint64_t *)a2, a3);
	case __NR_sigaltstack:
		return u_sigaltstack((const uint64_t *)a0, (uint64_t *)a1);
	case __NR_rt_sigaction:
		return u_sigaction(a0, a1, (struct k_sigaction *)a2, a3);
	case __NR_pause:
		return u_pause();
	case __NR_rt_sigsuspend:
		return u_sigsuspend((const uint64_t *)a0, a1);
	case __NR_newfstatat: {
		/* where the policy sends the call to B and lets fstat through,
		 * an empty path is fstat's */
		const struct tt_entry *e = u_self()->table->entries;
		if (e[__NR_newfstatat].cls != TT_PROCESS ||
		    (e[__NR_fstat].cls != TT_ALLOW && e[__NR_fstat].cls != TT_NATIVE &&
		     e[__NR_fstat].cls != TT_THREAD))
			break;
		int r = fstatat_is_fstat(a0, a1, a3);
		if (r < 0)
			return r;
		if (r) {
			long args[6] = { a0, a2 };
			return dispatch(__NR_fstat, args);
		}
		break;
	}
	case __NR_arch_prctl:
		if ((int)a0 == ARCH_SET_FS || (int)a0 == ARCH_GET_FS)
			return u_arch_prctl(a0, a1);
		break;
	}
	long args[6] = { a0, a1, a2, a3, a4, a5 };
	name_this_thread(nr, args, st->tid);
	if (sandpit_exec_patch_on && (nr == __NR_mmap || nr == __NR_mprotect || nr == __NR_munmap ||
				      nr == __NR_mremap))
		return sandpit_exec_call(nr, args, dispatch);
	return dispatch(nr, args);
}
