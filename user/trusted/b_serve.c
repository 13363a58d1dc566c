/* The trusted process B's servers (user/trusted/b_serve.h): one thread a
 * slot waits on the slot's doorbell, takes B's one copy of the request,
 * checks it in full (check: the memory arguments by b_checks.c, b_rlimit.c
 * b_net.c and path_op.c; a clone, which gives a new thread its slot, here) and
 * publishes the verdict in the slot's secure page; on the exit bell it
 * accepts U's exit once the kernel shows U where it can only end by exit.
 * The servers start the slot's watchers (b_watch.c), which stand below. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "compat/compat.h"
#include "policy/policy.h"
#include "user/trusted/b_checks.h"
#include "user/trusted/b_net.h"
#include "user/trusted/b_read.h"
#include "user/trusted/b_refusal.h"
#include "user/trusted/b_rlimit.h"
#include "user/trusted/b_serve.h"
#include "user/trusted/b_state.h"
#include "user/trusted/b_wait.h"
#include "user/trusted/b_watch.h"
#include "user/trusted/denial_log.h"
#include "user/trusted/exit_check.h"
#include "user/trusted/fs_base.h"
#include "user/trusted/path_op.h"
#include "user/trusted/slot_fds.h"
#include "user/trusted/slot_init.h"
#include "user/trusted/write_open.h"
#include "user/untrusted/runtime.h"

/* with the lock held: the lowest free slot whose eventfds P has */
static int free_slot(const struct b_proc *p)
{
	int made = b_slots_made(p);
	for (int s = 1; s < made; s++)
		if (p->slots[s].state == SLOT_FREE)
			return s;
	return -1;
}

static int starting_slots(const struct b_proc *p)
{
	int n = 0;
	for (int s = 0; s < SM_NSLOTS; s++)
		n += p->slots[s].state == SLOT_STARTING;
	return n;
}

static int exiting_slots(const struct b_proc *p)
{
	int n = 0;
	for (int s = 1; s < SM_NSLOTS; s++)
		n += p->slots[s].state != SLOT_FREE &&
		     __atomic_load_n(&p->slots[s].exiting, __ATOMIC_ACQUIRE);
	return n;
}

static int before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

#define CLONE_THREAD_REQUIRED                                                                \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM)
#define CLONE_THREAD_ALLOWED                                                                 \
	(CLONE_THREAD_REQUIRED | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)

static void *serve(void *arg);
static void *exit_bell_slot(void *arg);

/* The CPUs B may run on, as B started (the user's taskset, say), when
 * there are two or more; else B's servers stay where the kernel puts them. */
static cpu_set_t b_cpus;
static int b_follows;

/* A slot's server runs on its T's CPU.  Woken on another (U's, typically:
 * the CPU it last ran on), it would wait there for U's spin to end or take
 * an idle CPU's wake-up, at every call: ≈ 30 µs a call instead of ≈ 9.
 * T's CPU is a hint in the mailbox, which U can write (invariant 8): it
 * decides only which of B's own CPUs this server runs on, so a lie costs U
 * speed, never an answer, and never a CPU outside B's. */
static void follow_t(const struct mailbox *mb, unsigned *pinned)
{
	unsigned t = __atomic_load_n(&mb->t_cpu, __ATOMIC_RELAXED);
	if (!b_follows || t == *pinned || t >= CPU_SETSIZE || !CPU_ISSET(t, &b_cpus))
		return;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(t, &one);
	if (sched_setaffinity(0, sizeof(one), &one) == 0)
		*pinned = t;
}

/* A slot's server (and, without futex_waitv, its watcher), made when the
 * slot is first used: starting them all at once would take CPU from P
 * while it patches. */
static pthread_attr_t thread_attr;
static int slot_threads[SM_NSLOTS];
static int group_watchers[WATCH_GROUPS];

int b_serve_start(intptr_t s)
{
	pthread_t w;
	if (slot_threads[s])
		return 0;
	if (compat_has(COMPAT_FUTEX_WAITV) && !group_watchers[s / WATCH_GROUP]) {
		if (pthread_create(&w, &thread_attr, b_watch_group, (void *)(s / WATCH_GROUP)) != 0)
			return -EAGAIN;
		group_watchers[s / WATCH_GROUP] = 1;
	}
	if (pthread_create(&w, &thread_attr, serve, (void *)s) != 0)
		return -EAGAIN;
	if (!compat_has(COMPAT_FUTEX_WAITV) &&
	    (pthread_create(&w, &thread_attr, b_watch_slot, (void *)s) != 0 ||
	     pthread_create(&w, &thread_attr, exit_bell_slot, (void *)s) != 0)) {
		b_say("sandpit: cannot start the watcher of slot %ld; killing the process\n", (long)s);
		b_kill_p(b_proc_of_slot((int)s));
		_exit(1);
	}
	slot_threads[s] = 1;
	return 0;
}

void b_serve_init(void)
{
	b_follows = sched_getaffinity(0, sizeof(b_cpus), &b_cpus) == 0 && CPU_COUNT(&b_cpus) > 1;
	pthread_attr_init(&thread_attr);
	pthread_attr_setstacksize(&thread_attr, 64 * 1024);
}

int b_thread(void *(*fn)(void *), void *arg)
{
	pthread_t w;
	return pthread_create(&w, &thread_attr, fn, arg);
}

/* clone(flags, stack, ptid, ctid, tls) from U: threads of this process
 * only, each with its own slot (invariant 4).  B prepares the slot and
 * tells T to clone into it; the child starts in the nursery. */
static long check_clone(int parent, struct secure_page *sp)
{
	uint64_t flags = sp->args[0], stack = sp->args[1], ctid = sp->args[3];
	if (!(flags & CLONE_VM) || !(flags & CLONE_THREAD))
		return -EPERM; /* fork and friends: no second process */
	if ((flags & CLONE_THREAD_REQUIRED) != CLONE_THREAD_REQUIRED || (flags & ~(uint64_t)CLONE_THREAD_ALLOWED))
		return -EPERM;
	if (!stack || stack < 4096)
		return -EINVAL;
	if ((flags & CLONE_CHILD_CLEARTID) && b_in_protected(parent, ctid))
		return -EPERM;
	if ((flags & CLONE_PARENT_SETTID) && b_in_protected(parent, sp->args[2]))
		return -EPERM;

	struct b_proc *p = b_proc_of_slot(parent);
	pthread_mutex_lock(&b_lock);
	/* a thread that has exited gives its slot back a moment later: wait
	 * for that rather than fail a create-join loop with EAGAIN.  Slots
	 * start one at a time, so that the kernel can tell B which threads
	 * are the new slot's (watch_step). */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	int s;
	for (;;) {
		/* a start ends when the kernel shows how (watch_step): that
		 * takes as long as the new thread takes to be scheduled, and
		 * longer while P is stopped, so no clock cuts it short */
		while (starting_slots(p))
			pthread_cond_wait(&b_slot_freed, &b_lock);
		s = free_slot(p);
		if (s < 0 && b_slots_made(p) < p->nslots) {
			/* the next slot made in P (slot_fds.c), the lock
			 * let go meanwhile: N may have to wait for P to go on
			 * from a stop */
			pthread_mutex_unlock(&b_lock);
			int r = b_slot_fds_grow(p);
			pthread_mutex_lock(&b_lock);
			if (r == 0 || r == -ENOSPC)
				continue;
			pthread_mutex_unlock(&b_lock);
			char why[96];
			snprintf(why, sizeof(why), "a new thread slot's descriptors could not be made (%s)",
				 strerror(-r));
			b_denial(parent, sp, -EAGAIN, why);
			return -EAGAIN;
		}
		if (s >= 0 || !exiting_slots(p))
			break;
		if (pthread_cond_timedwait(&b_slot_freed, &b_lock, &until) == ETIMEDOUT) {
			s = starting_slots(p) ? -1 : free_slot(p);
			break;
		}
	}
	if (s < 0 || b_serve_start(s) < 0) {
		int busy = starting_slots(p);
		pthread_mutex_unlock(&b_lock);
		char why[64];
		snprintf(why, sizeof(why), s < 0 && !busy ? "all %d thread slots are in use"
							   : "no thread slot of %d came free in time",
			 p->nslots);
		b_denial(parent, sp, -EAGAIN, why);
		return -EAGAIN;
	}
	denial_slot_reused(b_cfg(), &p->mb[s]); /* before its state is cleared */
	slot_init(p->sp, p->mb, p->fd_lo, s);
	struct secure_page *child = &p->sp[s];
	struct mailbox *cmb = &p->mb[s];
	child->glibc_ctid = (flags & CLONE_CHILD_CLEARTID) ? ctid : 0;
	memcpy(cmb->clone_regs, p->mb[parent].clone_regs, CR_SIZE);
	cmb->clone_regs[CR_RSP / 8] = stack - 128 - 8;
	cmb->ctid = START_MARK;
	cmb->t_ctid = START_MARK;
	p->slots[s].exiting = 0;
	p->slots[s].state = SLOT_STARTING;
	b_watch_starting(s, parent);
	p->slots[s].intr_pending = 0;
	b_publish_tids(p); /* the new slot's T needs the list too */
	b_watch_wake();
	pthread_mutex_unlock(&b_lock);

	sp->args[0] = (flags & ~(uint64_t)CLONE_CHILD_CLEARTID) | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID;
	sp->args[1] = 0;
	sp->args[3] = (uint64_t)(uintptr_t)&cmb->ctid;
	sp->new_sp = (uint64_t)(uintptr_t)child;
	return SP_V_CLONE;
}

/* arch_prctl(ARCH_SET_FS/GET_FS, addr) for a strict-mode U on a CPU
 * without FSGSBASE: on the U of B's record for the slot, which the kernel
 * confirms while it is stopped (a thread of P in strict mode, so never a
 * T).  GET_FS writes the base where U asked, as the kernel would: EFAULT
 * for memory it cannot write, and never into sandpit's. */
static long check_fs_base(int s, const struct secure_page *req)
{
	int code = (int)req->args[0];
	uint64_t addr = req->args[1], base = addr;
	pid_t pid = b_proc_of_slot(s)->pid;
	if (!b_cfg()->fs_by_ptrace)
		return -ENOSYS;
	/* the slot's U as the kernel confirmed it; slot 0's first call (ld.so's)
	 * may come before the watcher has confirmed it: wait for that */
	pid_t tid = 0;
	for (int i = 0; i < 2000 && !(tid = b_slot_u_tid(s)); i++)
		usleep(1000);
	if (!tid)
		return -ESRCH;
	if (code == 0x1002 /* ARCH_SET_FS */) {
		if (addr >= b_cfg()->task_size)
			return -EPERM;
		long r = fs_base_ptrace(pid, tid, 1, 1, &base);
		return r < 0 ? r : SP_V_ACK;
	}
	if (code != 0x1003 /* ARCH_GET_FS */)
		return -EINVAL;
	if (b_in_protected(s, addr) || b_in_protected(s, addr + 7))
		return -EFAULT;
	long r = fs_base_ptrace(pid, tid, 1, 0, &base);
	if (r < 0)
		return r;
	struct iovec local = { &base, sizeof(base) };
	struct iovec remote = { (void *)(uintptr_t)addr, sizeof(base) };
	if (process_vm_writev(pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(base))
		return -EFAULT;
	return SP_V_ACK;
}

/* The request, from B's one copy: checked in full, the verdict and the
 * call built in `out` (B's private memory), never in S. */
static long check(int s, struct secure_page *out)
{
	if (out->nr == SANDPIT_NR_FS_BASE)
		return check_fs_base(s, out);
	if (out->nr == SANDPIT_NR_DENIED)
		return b_reported_denial(s);
	/* T kills P after this answer, whatever it is: B only names the call */
	if (out->nr < POLICY_MAX_NR && policy_call(b_cfg()->policy, (int)out->nr)->cls == POLICY_KILL) {
		b_killed(s, out);
		return -EPERM;
	}
	const struct policy_proc_arg *pa = policy_proc_arg(b_cfg()->policy, (int)out->nr);
	if (!pa)
		return -ENOSYS; /* SANDPIT_NR_THREAD_EXIT too: an exit comes from T's bell */
	if (out->nr == SYS_creat && pa->kind == PK_PATH) {
		/* creat(path, mode) is open(path, O_CREAT | O_WRONLY | O_TRUNC,
		 * mode), checked, logged and made as that open */
		static const struct policy_proc_arg as_open = { PK_PATH, 0, POLICY_NOARG, 1,
								PA_OPEN, 0 };
		out->nr = SYS_open;
		out->args[2] = out->args[1];
		out->args[1] = O_CREAT | O_WRONLY | O_TRUNC;
		pa = &as_open;
	}
	switch (pa->kind) {
	case PK_PATH:
		return b_check_path(s, pa, out);
	case PK_SIGACTION: {
		long r = b_check_sigaction(s, out);
		if (r == -EPERM)
			b_denial(s, out, r, "a handler or restorer in sandpit's memory");
		return r;
	}
	case PK_CLONE: {
		long r = check_clone(s, out);
		if (r == -EPERM)
			b_denial(s, out, r, "only a thread of this process");
		return r;
	}
	case PK_PATH_OP:
		return path_op(s, pa, out);
	case PK_RLIMIT:
		return b_check_rlimit(s, out);
	case PK_NET:
		return b_check_net(s, out);
	default:
		return -ENOSYS;
	}
}

/* S is published complete (invariant 8): a seqlock whose odd value means
 * "being written".  T acts only on the even value it expects for its own
 * request and reads it again after loading the call, so it never executes
 * a half-written verdict or one meant for an earlier request. */
static void publish(int s, const struct secure_page *out)
{
	struct b_proc *p = b_proc_of_slot(s);
	struct secure_page *sp = &p->sp[s];
	struct mailbox *mb = &p->mb[s];
	uint64_t seq = sp->seq & ~(uint64_t)1;
	__atomic_store_n(&sp->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	sp->verdict = out->verdict;
	sp->nr = out->nr;
	for (int i = 0; i < 6; i++)
		sp->args[i] = b_arg_for_s(out, i, sp);
	sp->new_sp = out->new_sp;
	memcpy(sp->data, out->data, sizeof(sp->data));
	__atomic_store_n(&sp->seq, seq + 2, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&mb->t_wait_b, __ATOMIC_RELAXED))
		syscall(SYS_futex, &sp->seq, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* Until the kernel shows slot s's U (tid) where it can only end by exit
 * (user/trusted/exit_check.h), for at most EXIT_SITE_S seconds.  The exit
 * request that rang the bell is a word in the mailbox, which any thread of
 * P can write: the U it names may never have asked, and run on (then P
 * ends when the time is up: a forgery costs the program itself, no more).
 * The time is the machine's: 1,023 threads asking to exit at once on a
 * slow machine (a TCG guest of check-kernels) needed more than the 2 s it
 * once was, and P was killed for a thread that was on its way.  If the
 * thread ends meanwhile, the kernel killed it: P ends, as it does for any
 * U the kernel kills (invariant 5). */
#define EXIT_SITE_S 10
static void wait_exit_site(int s, int32_t tid)
{
	struct timespec until, now;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += EXIT_SITE_S;
	const struct b_proc *p = b_proc_of_slot(s);
	for (int i = 0;; i++) {
		int r = exit_check_waits_at(p->pid, tid, (uintptr_t)sandpit_exit_site);
		if (r > 0)
			return;
		if (r == -ESRCH || (r == 0 && b_thread_gone(p, tid)))
			b_slot_alarm("a sandboxed thread ended without exit (killed by the kernel for a "
				   "system call that escaped the sandbox?)",
				   s);
		if (r < 0) {
			char why[160];
			snprintf(why, sizeof(why),
				 "the kernel does not show where a thread that asks to exit waits "
				 "(/proc/TID/syscall: %s)",
				 strerror(-r));
			b_slot_alarm(why, s);
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!before(&now, &until))
			b_slot_alarm("a thread that asked to exit did not end", s);
		/* U is a few instructions from its read: yield at first */
		if (i < 20)
			sched_yield();
		else
			usleep(i < 200 ? 50 : 1000);
	}
}

/* T rang the slot's exit bell: U asks to exit.  Only T can ring it (a
 * FUTEX_WAKE), so this is never learned from the mailbox.  B waits until
 * the kernel has confirmed the slot's threads (T needs U's tid to see it
 * go), then until U waits where it can only end by exit (wait_exit_site),
 * then marks the slot exiting: from now on U's end is no alarm, its tid
 * is out of the U tid table (no signal reaches it, nor a thread that
 * might get its tid later), and T serves nothing more (SP_V_EXIT). */
static void accept_exit(int s)
{
	struct secure_page out;
	struct b_proc *p = b_proc_of_slot(s);
	pthread_mutex_lock(&b_lock);
	/* only the slot's T rings its exit bell, so its U is in seccomp and
	 * the watcher is about to confirm the start: however long the machine
	 * takes for that */
	while (p->slots[s].state == SLOT_STARTING)
		pthread_cond_wait(&b_slot_freed, &b_lock);
	int32_t tid = p->slots[s].state == SLOT_ACTIVE ? p->slots[s].u_tid : 0;
	pthread_mutex_unlock(&b_lock);
	if (!tid)
		b_slot_alarm("a thread asked to exit before its start was confirmed", s);
	wait_exit_site(s, tid);
	pthread_mutex_lock(&b_lock);
	__atomic_store_n(&p->slots[s].exiting, 1, __ATOMIC_RELEASE);
	b_publish_tids(p);
	int last = 1; /* no U is left to make a thread: N's work is done */
	for (int i = 0; i < SM_NSLOTS && last; i++)
		last = p->slots[i].state == SLOT_FREE ||
		       (p->slots[i].state == SLOT_ACTIVE &&
			__atomic_load_n(&p->slots[i].exiting, __ATOMIC_ACQUIRE));
	pthread_mutex_unlock(&b_lock);
	if (last)
		b_notifier_release(p);
	__atomic_store_n(&p->sp[s].exiting, 1, __ATOMIC_RELEASE);
	memset(&out, 0, sizeof(out)); /* nothing of B's stack reaches S */
	out.verdict = SP_V_EXIT;
	out.nr = SANDPIT_NR_THREAD_EXIT;
	publish(s, &out);
}

/* Without futex_waitv each slot has a thread on its exit bell. */
static void *exit_bell_slot(void *arg)
{
	int s = (int)(intptr_t)arg;
	struct mailbox *mb = &b_proc_of_slot(s)->mb[s];
	for (;;) {
		uint32_t v = __atomic_load_n(&mb->exit_bell, __ATOMIC_RELAXED);
		if (syscall(SYS_futex, &mb->exit_bell, FUTEX_WAIT, v, NULL, NULL, 0) == 0)
			accept_exit(s);
	}
	return NULL;
}

/* One server per slot waits on that slot's doorbell (and, with
 * futex_waitv, its exit bell).  A futex wait returns a wake (0, or the
 * woken word's index, which the kernel sets) only when someone issued
 * FUTEX_WAKE on it, and only T can (U is in strict mode; T refuses futex
 * on sandpit's memory): so every wake is a genuine request from T.  A
 * change of a word by U only makes the wait return EAGAIN. */
static void *serve(void *arg)
{
	int s = (int)(intptr_t)arg;
	struct b_proc *p = b_proc_of_slot(s);
	struct secure_page *sp = &p->sp[s];
	struct mailbox *mb = &p->mb[s];
	int waitv = compat_has(COMPAT_FUTEX_WAITV);
	/* this thread's malloc arena, made now: the first malloc maps one
	 * (mmap, munmap, mprotect), which the first request would wait for */
	void *volatile warm = malloc(1);
	free(warm);
	unsigned pinned = ~0u; /* the CPU follow_t last put this server on */
	for (;;) {
		uint32_t v = __atomic_load_n(&mb->b_bell, __ATOMIC_RELAXED);
		long r;
		if (waitv) {
			struct futex_waitv fw[2] = {
				{ .val = v, .uaddr = (uintptr_t)&mb->b_bell, .flags = FUTEX_32 },
				{ .val = __atomic_load_n(&mb->exit_bell, __ATOMIC_RELAXED),
				  .uaddr = (uintptr_t)&mb->exit_bell, .flags = FUTEX_32 },
			};
			r = syscall(SYS_futex_waitv, fw, 2, 0, NULL, 0);
		} else {
			r = syscall(SYS_futex, &mb->b_bell, FUTEX_WAIT, v, NULL, NULL, 0);
		}
		if (r < 0)
			continue;
		if (r == 0)
			follow_t(mb, &pinned);
		__atomic_store_n(&sp->b_cpu, (uint32_t)sched_getcpu(), __ATOMIC_RELAXED);
		if (r == 1) {
			accept_exit(s);
			continue;
		}
		struct b_request req;
		memcpy(&req, (const void *)&mb->payload, sizeof(req)); /* the one copy */
		b_copied(); /* from here on req is read, never the mailbox */
		struct secure_page out;
		memset(&out, 0, sizeof(out)); /* nothing of B's stack reaches S */
		out.nr = req.nr;
		memcpy(out.args, req.args, sizeof(out.args));
		out.verdict = check(s, &out);
		/* before the answer: an interrupt for the next request can
		 * only be asked after it */
		b_wait_answered(s);
		publish(s, &out);
		if (out.verdict == SP_V_RECV)
			b_hand_over_done(s);
	}
	return NULL;
}
