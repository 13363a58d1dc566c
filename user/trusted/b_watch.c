/* The trusted process B's watchers (user/trusted/b_watch.h): of each slot's
 * threads, from their start to their end, and of P (its socket pair: U's
 * asks to interrupt, and P's end).  Below the servers, which only tell a
 * watcher that a slot is starting (b_watch_starting). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "compat/compat.h"
#include "user/trusted/b_state.h"
#include "user/trusted/b_wait.h"
#include "user/trusted/b_watch.h"
#include "user/trusted/slot_fds.h"
#include "user/trusted/denial_log.h"
#include "user/trusted/exit_check.h"
#include "user/trusted/fs_base.h"
#include "user/untrusted/runtime.h"

/* Watching the slots (invariant 5, invariant 8).  A U that ends without
 * B having accepted its exit (accept_exit) was killed by the kernel
 * (strict mode's SIGKILL for a forbidden call, DESIGN §9): end P.  The
 * clear-child-tid words in the mailbox are written by the kernel, but U
 * can write them too, so they only ever wake the watcher or tell it where
 * to look: that a thread is gone, and which threads a slot's are, B
 * learns from the kernel (tgkill(P, tid, 0) failing with ESRCH; /proc
 * for the thread-group leader, which lingers as a zombie).  Each slot
 * goes through the steps below;
 * watch_step takes as many as it can without waiting and says which word
 * to wait on next.  With futex_waitv a watcher waits on the words of 127
 * slots at once (watch_group); without it each slot has its own. */
enum { W_IDLE, W_START, W_SECCOMP, W_U, W_T };
static struct {
	int step;
	int by;       /* the slot whose T makes the clone (check_clone) */
	int looks;    /* how often the watcher has looked at this step */
	int32_t u, t; /* the tids the slot's words named, being confirmed */
} watch[SM_NSLOTS];
static uint32_t watch_gen; /* bumped and woken when a slot starts */

void b_watch_starting(int s, int by)
{
	watch[s].by = by;
}

void b_watch_wake(void)
{
	__atomic_add_fetch(&watch_gen, 1, __ATOMIC_RELEASE);
	b_wake_all(&watch_gen);
}

/* slot 0 is starting from B's start, but its T is cloned only when P has
 * patched: until P says so the watchers leave it alone */
static int slot0_armed;

void b_watch_arm_slot0(void)
{
	__atomic_store_n(&slot0_armed, 1, __ATOMIC_RELEASE);
	b_watch_wake();
}

/* how often a starting slot is looked at: nothing wakes the watcher when
 * the kernel writes a new thread's tid or puts it in seccomp, and the
 * thread that made it waits for B to know it (.Lclone_known).  Every
 * 50 µs for the first START_FAST_LOOKS looks at a step, then less often
 * the longer it takes (P stopped, or the thread waiting for a CPU), up to
 * every 10 ms.  Only how often B looks: when a start is decided is the
 * kernel's to say (watch_step), never a clock's. */
#define START_POLL_NS     50000
#define START_POLL_MAX_NS 10000000
#define START_FAST_LOOKS  200

struct watch_wait {
	uint32_t *word, val;
	long ns; /* look again after this long even without a wake */
};

/* a starting slot's next wait: on word (still at val), after the look
 * just made */
static struct watch_wait start_wait(int s, uint32_t *word, uint32_t val)
{
	int slow = watch[s].looks++ - START_FAST_LOOKS;
	long ns = slow <= 0 ? START_POLL_NS : START_POLL_NS << (slow < 8 ? slow : 8);
	return (struct watch_wait){ word, val, ns < START_POLL_MAX_NS ? ns : START_POLL_MAX_NS };
}

/* whether this look at a starting slot whose words are not written walks
 * P's threads: most starts write both within a few looks, and the walk
 * costs more the more threads P has; at looks 8, 16, 32, 64 and 128, then
 * at every (slower) look */
static int start_scan_due(int s)
{
	int k = watch[s].looks;
	return k >= 8 && (k >= START_FAST_LOOKS || (k & (k - 1)) == 0);
}


/* where the kernel has them (6.9), pidfds of each slot's U and T as the
 * kernel confirmed them: a tid can be reused, a pidfd cannot; -1
 * otherwise */
static int u_pidfds[SM_NSLOTS] = { [0 ... SM_NSLOTS - 1] = -1 };
static int t_pidfds[SM_NSLOTS] = { [0 ... SM_NSLOTS - 1] = -1 };

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* kernel ABI since 6.9 */
#endif

static int thread_pidfd(int32_t tid)
{
	if (!compat_has(COMPAT_PIDFD_THREAD))
		return -1;
	return (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
}

/* The kernel says the thread is gone: its pidfd is readable (the thread
 * has exited; a pidfd, unlike a tid, is never reused), or there is no such
 * thread of P, or (the leader, whose tid is P's and who stays a zombie
 * until the whole group ends) its state is Z or X. */
static int thread_gone_fd(const struct b_proc *p, int32_t tid, int pidfd)
{
	if (pidfd >= 0) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		if (poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP)))
			return 1;
	}
	/* a leader that ended before its group stays a zombie its pidfd does
	 * not report on every kernel: ask /proc as well */
	return b_thread_gone(p, tid);
}

int b_thread_gone(const struct b_proc *p, int32_t tid)
{
	if (tid <= 0)
		return 0;
	if (syscall(SYS_tgkill, p->pid, tid, 0) < 0 && errno == ESRCH)
		return 1;
	if (tid != p->pid)
		return 0;
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)p->pid, (int)tid);
	const char *f = b_stat_fields(path, buf, sizeof(buf));
	if (!f)
		return errno == ENOENT || errno == ESRCH;
	return f[0] == 'Z' || f[0] == 'X';
}

/* with the lock held: tid is some slot's U or T already */
static int tid_recorded(const struct b_proc *p, int32_t tid)
{
	for (int s = 0; s < SM_NSLOTS; s++)
		if (p->slots[s].u_tid == tid || p->slots[s].t_tid == tid)
			return 1;
	return 0;
}

/* with the lock held: a live thread of P that no slot records */
static int new_thread(const struct b_proc *p, int32_t tid)
{
	return tid > 0 && !tid_recorded(p, tid) && !b_thread_gone(p, tid);
}

/* with the lock held: the live threads of P that no slot records, as the
 * kernel lists them, and the two a starting slot's words name if the
 * kernel says they are such threads too (a thread made while the list was
 * read may be missing from it); up to max of them in tids, how many in
 * all returned.  Slots start one at a time (check_clone), so these are
 * the starting slot's U and T, those of them the kernel has made. */
static int new_threads(const struct b_proc *p, int32_t *tids, int max, uint32_t u, uint32_t t)
{
	char path[64];
	int n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)p->pid);
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		int32_t tid = (int32_t)atoi(e->d_name);
		if (!new_thread(p, tid))
			continue;
		if (n < max)
			tids[n] = tid;
		n++;
	}
	if (d)
		closedir(d);
	uint32_t words[2] = { u, t };
	for (int i = 0; i < 2; i++) {
		int32_t tid = (int32_t)words[i], known = 0;
		for (int j = 0; j < n && j < max; j++)
			known |= tids[j] == tid;
		if (words[i] == START_MARK || known || !new_thread(p, tid))
			continue;
		if (n < max)
			tids[n] = tid;
		n++;
	}
	return n;
}


/* with the lock held: the T that makes slot s's clone (the T of the slot
 * that asked, as B recorded it) waits, as the kernel shows it, at
 * sandpit_clone_failed_site on slot s's count of starts: where it goes
 * only after a clone into slot s that made no thread, until B decides */
static int clone_failed(const struct b_proc *p, int s)
{
	int32_t tc = p->slots[watch[s].by].t_tid;
	if (tc <= 0)
		return 0;
	int r = exit_check_call_at(p->pid, tc, (uintptr_t)sandpit_clone_failed_site, SYS_futex,
				   (unsigned long)(uintptr_t)&p->sp[s].started);
	if (r < 0 && r != -ESRCH) {
		char why[160];
		snprintf(why, sizeof(why),
			 "the kernel does not show where a thread that made a clone waits "
			 "(/proc/TID/syscall: %s)",
			 strerror(-r));
		b_slot_alarm(why, s);
	}
	return r > 0;
}

/* a thread's state letter as the kernel shows it (R, S, D, T, t, Z...),
 * 0 if it is not a thread of P any more */
static char thread_state(int32_t tid)
{
	char path[64], buf[512];
	/* /proc/TID (task_status in fs_base.c says why); tid was found a
	 * thread of P just before */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	const char *f = b_stat_fields(path, buf, sizeof(buf));
	return f ? f[0] : 0;
}


/* Fills *w when the slot has something to wait for; leaves it alone if not. */
static void watch_step(int s, struct watch_wait *w)
{
	struct b_proc *p = b_proc_of_slot(s);
	struct b_slot *slot = &p->slots[s];
	struct mailbox *mb = &p->mb[s];
	uint32_t u, t;
	int m;
	if (s == 0 && !__atomic_load_n(&slot0_armed, __ATOMIC_ACQUIRE))
		return;
	for (;;) {
		switch (watch[s].step) {
		case W_IDLE:
			pthread_mutex_lock(&b_lock);
			int busy = slot->state != SLOT_FREE;
			pthread_mutex_unlock(&b_lock);
			if (!busy)
				return;
			watch[s].looks = 0;
			watch[s].step = W_START;
			break;
		case W_START:
			/* The kernel writes a new U's tid (CLONE_CHILD_SETTID) when U
			 * first runs, its T's (CLONE_PARENT_SETTID, CLONE_T) before U
			 * goes on to seccomp, both without a wake.  How long that
			 * takes is no evidence of anything: P may be stopped (SIGSTOP,
			 * a debugger), the new thread may wait for a CPU, or the T
			 * that clones may not have reached its clone yet.  So the slot
			 * waits, with no deadline, for what the kernel says. */
			u = __atomic_load_n(&mb->ctid, __ATOMIC_ACQUIRE);
			t = __atomic_load_n(&mb->t_ctid, __ATOMIC_ACQUIRE);
			if (u != START_MARK && t != START_MARK) {
				/* U could have written either word: only the kernel's
				 * answers make them the slot's threads.  Slots start one
				 * at a time (check_clone), so a live thread of P that no
				 * slot records is this slot's U or T. */
				pthread_mutex_lock(&b_lock);
				if (u == t || !new_thread(p, (int32_t)u) ||
				    !new_thread(p, (int32_t)t))
					b_slot_alarm("a new thread's ids are not the kernel's", s);
				pthread_mutex_unlock(&b_lock);
				watch[s].u = (int32_t)u;
				watch[s].t = (int32_t)t;
				watch[s].looks = 0;
				watch[s].step = W_SECCOMP;
				break;
			}
			/* a word not written yet: what has the kernel made? */
			if (!start_scan_due(s)) {
				*w = start_wait(s, u == START_MARK ? &mb->ctid : &mb->t_ctid, START_MARK);
				return;
			}
			int32_t nt[2];
			pthread_mutex_lock(&b_lock);
			int n = new_threads(p, nt, 2, u, t), sealed = 0;
			for (int i = 0; i < n && i < 2; i++)
				sealed += task_status(p->pid, nt[i], "Seccomp:") > 0;
			if (sealed) {
				/* U is in seccomp: the kernel wrote both words before
				 * that, so a word still unwritten was written back */
				pthread_mutex_unlock(&b_lock);
				if (__atomic_load_n(&mb->ctid, __ATOMIC_ACQUIRE) == START_MARK ||
				    __atomic_load_n(&mb->t_ctid, __ATOMIC_ACQUIRE) == START_MARK)
					b_slot_alarm("a new thread's ids are not the kernel's", s);
				break; /* written meanwhile: confirm them */
			}
			if (n == 1 && s != 0 && thread_state(nt[0]) == 'S') {
				/* a new U runs the nursery from its first instruction to
				 * seccomp and never sleeps there (it can only be running,
				 * waiting for a CPU, stopped, or in the kernel's own
				 * uninterruptible waits): a lone new thread asleep is a T
				 * whose U is gone, with U's word written back (slot 0's
				 * U starts the sandbox, which may sleep) */
				pthread_mutex_unlock(&b_lock);
				if (__atomic_load_n(&mb->ctid, __ATOMIC_ACQUIRE) == START_MARK ||
				    __atomic_load_n(&mb->t_ctid, __ATOMIC_ACQUIRE) == START_MARK)
					b_slot_alarm("a new thread's ids are not the kernel's", s);
				break;
			}
			if (n == 0 && s != 0 && clone_failed(p, s)) {
				/* no new thread, and the T that cloned waits where it
				 * waits only after a clone into this slot that made none:
				 * the clone failed and the slot never came to life */
				slot->state = SLOT_FREE;
				b_slot_start_decided(s);
				pthread_cond_broadcast(&b_slot_freed);
				pthread_mutex_unlock(&b_lock);
				watch[s].step = W_IDLE;
				break;
			}
			pthread_mutex_unlock(&b_lock);
			/* nothing yet, or a thread that has not reached seccomp: wait
			 * for as long as that lasts.  It is sandpit's nursery running
			 * in it, which goes straight to seccomp or ends P (.Ldie):
			 * no program instruction runs in the thread meanwhile, so
			 * waiting costs only the start of this thread (and of the
			 * ones after it) */
			*w = start_wait(s, u == START_MARK ? &mb->ctid : &mb->t_ctid, START_MARK);
			return;
		case W_SECCOMP:
			/* U enters seccomp at once, T never: so the two cannot have
			 * been swapped.  A U not in seccomp yet is in the nursery
			 * (stopped, say, or waiting for a CPU): wait, as long as the
			 * one named T is not in seccomp and still there */
			m = task_status(p->pid, watch[s].u, "Seccomp:");
			if (m == 0) {
				if (task_status(p->pid, watch[s].t, "Seccomp:") != 0)
					b_slot_alarm("a new thread's ids are not the kernel's", s);
				/* U is a few instructions from seccomp, and then the
				 * program runs in it (slot 0's at once) while B has not
				 * confirmed it, which holds back what waits for that (an
				 * interrupt of its T): look again soon unless the kernel
				 * shows U stopped */
				char st = thread_state(watch[s].u);
				if (st != 'T' && st != 't')
					watch[s].looks = 0;
				*w = start_wait(s, &mb->ctid, __atomic_load_n(&mb->ctid, __ATOMIC_ACQUIRE));
				return;
			}
			if (m == -1 ||
			    (m != -2 && task_status(p->pid, watch[s].t, "Seccomp:") != 0))
				b_slot_alarm("a new thread's ids are not the kernel's", s);
			pthread_mutex_lock(&b_lock);
			slot->state = SLOT_ACTIVE;
			b_slot_ran(s);
			slot->u_tid = watch[s].u;
			slot->t_tid = watch[s].t;
			u_pidfds[s] = thread_pidfd(slot->u_tid);
			t_pidfds[s] = thread_pidfd(slot->t_tid);
			if (slot->intr_pending) {
				slot->intr_pending = 0;
				syscall(SYS_tgkill, p->pid, slot->t_tid, SANDPIT_SIG_INTR);
			}
			/* U in the table first: its T serves it once it sees its
			 * tid here, the creating T returns it once the count moves */
			b_publish_tids(p);
			__atomic_store_n(&p->sp[s].u_tid, watch[s].u, __ATOMIC_RELEASE);
			b_wake_all((uint32_t *)&p->sp[s].u_tid);
			b_slot_start_decided(s);
			pthread_cond_broadcast(&b_slot_freed); /* the next slot may start */
			pthread_mutex_unlock(&b_lock);
			watch[s].step = W_U;
			break;
		case W_U:
			/* T first: T ends only after U, so T gone while U lives (asked
			 * in that order) is a T that died (invariant 5) */
			m = thread_gone_fd(p, slot->t_tid, t_pidfds[s]);
			u = __atomic_load_n(&mb->ctid, __ATOMIC_ACQUIRE);
			if (thread_gone_fd(p, slot->u_tid, u_pidfds[s])) {
				if (!__atomic_load_n(&slot->exiting, __ATOMIC_ACQUIRE))
					b_slot_alarm("a sandboxed thread ended without exit (killed by the "
						   "kernel for a system call that escaped the sandbox?)",
						   s);
				b_wake_all(&mb->ctid); /* T may wait on it too */
				watch[s].step = W_T;
				break;
			}
			if (m)
				b_slot_alarm("a trusted thread ended while its thread runs", s);
			/* a word at 0 with U alive is U's own writing, or U on its
			 * way out: look again soon */
			*w = (struct watch_wait){ &mb->ctid, u, u ? 200000000 : 1000000 };
			return;
		case W_T:
			if (!thread_gone_fd(p, slot->t_tid, t_pidfds[s])) {
				t = __atomic_load_n(&mb->t_ctid, __ATOMIC_ACQUIRE);
				*w = (struct watch_wait){ &mb->t_ctid, t, t ? 200000000 : 1000000 };
				return;
			}
			/* both gone, as the kernel says: only now may the slot go to
			 * another thread */
			pthread_mutex_lock(&b_lock);
			slot->u_tid = slot->t_tid = 0;
			if (u_pidfds[s] >= 0)
				close(u_pidfds[s]);
			if (t_pidfds[s] >= 0)
				close(t_pidfds[s]);
			u_pidfds[s] = t_pidfds[s] = -1;
			slot->exiting = 0;
			slot->state = SLOT_FREE;
			b_publish_tids(p);
			pthread_cond_broadcast(&b_slot_freed);
			pthread_mutex_unlock(&b_lock);
			watch[s].step = W_IDLE;
			break;
		}
	}
}

static struct watch_wait idle_wait(void)
{
	return (struct watch_wait){ &watch_gen, __atomic_load_n(&watch_gen, __ATOMIC_ACQUIRE),
				    200000000 };
}

void *b_watch_slot(void *arg)
{
	int s = (int)(intptr_t)arg;
	for (;;) {
		struct watch_wait w = idle_wait();
		watch_step(s, &w);
		struct timespec ts = { 0, w.ns };
		syscall(SYS_futex, w.word, FUTEX_WAIT, w.val, &ts, NULL, 0);
	}
	return NULL;
}

void *b_watch_group(void *arg)
{
	int lo = (int)(intptr_t)arg * WATCH_GROUP;
	int hi = lo + WATCH_GROUP < SM_NSLOTS ? lo + WATCH_GROUP : SM_NSLOTS;
	struct futex_waitv v[1 + WATCH_GROUP];
	_Static_assert(1 + WATCH_GROUP <= 128, "futex_waitv's FUTEX_WAITV_MAX");
	for (;;) {
		struct watch_wait idle = idle_wait();
		long ns = idle.ns;
		int n = 0;
		v[n++] = (struct futex_waitv){ .val = idle.val, .uaddr = (uintptr_t)idle.word,
					       .flags = FUTEX_32 };
		for (int s = lo; s < hi; s++) {
			struct watch_wait w = { NULL, 0, 0 };
			watch_step(s, &w);
			if (!w.word)
				continue;
			v[n++] = (struct futex_waitv){ .val = w.val, .uaddr = (uintptr_t)w.word,
						       .flags = FUTEX_32 };
			if (w.ns < ns)
				ns = w.ns;
		}
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += ns;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		if (syscall(SYS_futex_waitv, v, n, 0, &until, CLOCK_MONOTONIC) < 0 && errno != EAGAIN &&
		    errno != ETIMEDOUT && errno != EINTR) {
			/* it worked when probed: no watching without it */
			b_say("sandpit: futex_waitv failed (errno %ld); killing the process\n", (long)errno);
			b_kill_p(b_proc_of_slot(lo));
			_exit(1);
		}
	}
	return NULL;
}

/* P's end of the socket pair closes when P is gone, however it ended;
 * then B has nothing left to do.  Until then U writes a slot number to it
 * when a handler must run while that slot's T waits for U: B interrupts T
 * (sandpit_intr_handler), or ends B's own wait for that slot (b_wait_begin).
 * Anyone in P can write here; the worst forged bytes do is end P's own
 * waits early (EINTR, or made again), and queue signal 63 on a T that is
 * not waiting, each one of the user's queued signals (RLIMIT_SIGPENDING),
 * as the program could by queueing real-time signals to itself. */
void *b_watch_p(void *arg)
{
	struct b_proc *p = arg;
	/* slot numbers are u16 (a stream: one may come in two reads) */
	unsigned char buf[128];
	size_t have = 0;
	/* with the notifier, P's end also when its pidfd says so: N holds P's
	 * descriptor table, so P's end of the pair hangs up only once B has
	 * let N go */
	struct pollfd pf[2] = { { .fd = p->fd, .events = POLLIN },
				{ .fd = p->notif_fd >= 0 ? p->pidfd : -1, .events = POLLIN } };
	for (;;) {
		if (pf[1].fd >= 0) {
			if (poll(pf, 2, -1) < 0 && errno != EINTR)
				pf[1].fd = -1; /* B out of resources: the read alone, as without N */
			if (pf[1].fd >= 0 && (pf[1].revents & (POLLIN | POLLHUP | POLLERR))) {
				b_notifier_release(p);
				pf[1].fd = -1;
			}
			if (pf[1].fd >= 0 && !pf[0].revents)
				continue;
		}
		ssize_t n = read(p->fd, buf + have, sizeof(buf) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* P is gone: the command gets the count */
			denial_final(b_cfg(), p->mb, b_slot_ever_ran);
			_exit(0);
		}
		have += (size_t)n;
		pthread_mutex_lock(&b_lock);
		for (size_t i = 0; i + 1 < have; i += 2) {
			uint16_t s;
			memcpy(&s, buf + i, sizeof(s));
			if (s >= SM_NSLOTS)
				continue;
			if (b_wait_asked(s))
				continue; /* B waited for U, T for B's answer: B's wait ended */
			if (p->slots[s].state == SLOT_STARTING)
				p->slots[s].intr_pending = 1;
			else if (p->slots[s].t_tid)
				syscall(SYS_tgkill, p->pid, p->slots[s].t_tid, SANDPIT_SIG_INTR);
		}
		pthread_mutex_unlock(&b_lock);
		if (have & 1)
			buf[0] = buf[have - 1];
		have &= 1;
	}
}
