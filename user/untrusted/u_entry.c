/* The sandpit entry: every patched system call site arrives here (through
 * the stub in asm/x86_64/entry.S).  Runs in U, freestanding. */
#include <asm/unistd.h>
#include "user/untrusted/runtime.h"


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
		u_wake_t(st);
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
			u_report_denied(st, nr, a, -38, -1);
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
			u_report_denied(st, nr, a, -(long)e->err, -1);
		return -(long)e->err;
	}
	if (e->cls == TT_DENY) {
		long r = u_call_trusted(nr, a);
		if (sandpit_u_report)
			u_report_denied(st, nr, a, r, -1);
		return r;
	}
	if (!sandpit_u_report || e->cls != TT_THREAD)
		return call_with_mask(nr, a);
	st->mb->res3 = 0; /* T sets it when a rule refuses the call: the rule's index + 1 */
	long r = call_with_mask(nr, a);
	uint64_t rule = st->mb->res3;
	if (r < 0 && rule > e->first && rule <= (uint64_t)e->first + e->nrules)
		u_report_denied(st, nr, a, r, (long)(rule - 1 - e->first));
	return r;
}

/* No sandbox (a start that failed after patching): the call made as it
 * is, from here, but for the new tasks that would share this stack and
 * return through the frames on it, which the parent still needs: vfork
 * made as fork, a clone that shares memory and waits for the child
 * without a stack of its own as one that copies it (what the program may
 * do in such a child, exec or _exit, it does the same), and clone3,
 * whose stack this path cannot give the child, refused with ENOSYS as
 * the sandbox refuses it, so that libc uses clone (made in the stub). */
static long no_sandbox_call(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	enum { CLONE_VM_ = 0x100, CLONE_VFORK_ = 0x4000 };
	if (nr == __NR_clone3)
		return -38; /* ENOSYS */
	if (nr == __NR_vfork)
		nr = __NR_fork;
	if (nr == __NR_clone && !a1 && (a0 & CLONE_VFORK_))
		a0 &= ~(long)(CLONE_VM_ | CLONE_VFORK_);
	return sandpit_raw_syscall6(nr, a0, a1, a2, a3, a4, a5);
}

long sandpit_entry_from(long nr, long a0, long a1, long a2, long a3, long a4, long a5,
			long caller)
{
	if (!__atomic_load_n(&sandpit_u_active, __ATOMIC_RELAXED))
		return no_sandbox_call(nr, a0, a1, a2, a3, a4, a5);
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
				      nr == __NR_mremap || nr == __NR_pkey_mprotect))
		return sandpit_exec_call(nr, args, dispatch);
	return dispatch(nr, args);
}
