/* The trusted process B.  Ordinary C with libc: B runs unsandboxed in its
 * own address space, where U cannot reach.
 *
 * Longer than 700 lines because the slots, the watchers, the servers and
 * start-up all read and write B's private slot record under one lock; split
 * further, that record would have to leave this file.  A request's memory
 * arguments are checked in b_checks.c, refusals explained in denial_log.c,
 * namespace calls made in path_op.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ucontext.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <seccomp.h>

#include "compat/compat.h"
#include "policy/policy.h"
#include "user/trusted/denial_log.h"
#include "user/trusted/exit_check.h"
#include "user/trusted/fs_base.h"
#include "user/trusted/b_checks.h"
#include "user/trusted/write_open.h"
#include "user/layout/slots.h"
#include "user/trusted/path_op.h"
#include "user/trusted/trusted_process.h"

#include "user/untrusted/runtime.h"

static const struct trusted_process_config *cfg;

const struct trusted_process_config *b_cfg(void)
{
	return cfg;
}
static int pidfd = -1;

int b_pidfd(void)
{
	return pidfd;
}

/* B's own record of the slots: never in memory P can reach */
enum { SLOT_FREE, SLOT_STARTING, SLOT_ACTIVE };
#define START_MARK 0xffffffffu /* a clear-child-tid word before its thread runs */

static struct slot {
	int state;
	int exiting; /* T said U asks to exit (its exit bell): U's end is no alarm */
} slots[SM_NSLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* a slot's U and T, as the kernel confirmed them when the slot started
 * (watch_step), 0 when free: B's own copies, never re-read from P */
static int32_t u_tids[SM_NSLOTS], t_tids[SM_NSLOTS];
/* and, where the kernel has them (6.9), pidfds of those threads: a tid can
 * be reused, a pidfd cannot; -1 otherwise */
static int u_pidfds[SM_NSLOTS] = { [0 ... SM_NSLOTS - 1] = -1 };
static int t_pidfds[SM_NSLOTS] = { [0 ... SM_NSLOTS - 1] = -1 };
/* a thread has run in the slot (slot 0: sandpit_start's) */
static char ran[SM_NSLOTS] = { 1 };
/* U asked for its T to be interrupted (watch_p) while the slot was still
 * starting, before B knew T's tid: sent when the kernel confirms the
 * slot's threads (watch_step).  U asks once a request, so an interrupt
 * dropped here would leave U's handler waiting on T's call for ever.
 * With the lock held. */
static char intr_pending[SM_NSLOTS];
/* Interrupts asked for each slot (watch_p), and the count when the slot's
 * last answer was published: one asked in between is for the request B
 * holds (b_wait_begin).  A late one for the answered request only makes a
 * wait restart (-ERESTARTSYS, made again as no handler ran for it). */
static uint32_t intr_asked[SM_NSLOTS], intr_answered[SM_NSLOTS];
/* the server thread of a slot while it waits on U's behalf (b_wait_begin) */
static pid_t b_waiter[SM_NSLOTS];

/* a thread has run in slot s: only then can its mailbox say anything
 * (asking the others would make the kernel allocate their pages).  Without
 * the lock: the last count is taken from slot_alarm, which may hold it. */
int b_slot_ever_ran(int s)
{
	return s >= 0 && s < SM_NSLOTS && __atomic_load_n(&ran[s], __ATOMIC_ACQUIRE);
}

/* Ends a wait B makes on U's behalf (b_wait_begin): sent by watch_p to
 * the waiting thread; B's threads block it but for the wait itself. */
#define B_SIG_WAKE SIGUSR1
/* set by watch_p, before it sends the wake, for the slot's waiter */
static int b_wake_flag[SM_NSLOTS];

/* b_wait_syscall4's labels (asm/x86_64/b_wait.S) */
extern const char b_wait_look[], b_wait_call[], b_wait_stopped[];

/* The wake's handler: a thread between b_wait_syscall4's look at its flag
 * and the syscall instruction has not made the call yet, and is sent to
 * its -EINTR return; one in the call sees EINTR from the kernel (no
 * SA_RESTART); anywhere else the wake only ends whatever blocks. */
static void b_woken(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	ucontext_t *uc = ctx;
	uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	if (ip >= (uintptr_t)b_wait_look && ip <= (uintptr_t)b_wait_call)
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)b_wait_stopped;
}

void b_wait_begin(int s)
{
	__atomic_store_n(&b_wake_flag[s], 0, __ATOMIC_SEQ_CST);
	/* published before the look at the count (b_wait_interrupted):
	 * watch_p sees the waiter, or the waiter sees watch_p's count */
	__atomic_store_n(&b_waiter[s], (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	sigset_t wake;
	sigemptyset(&wake);
	sigaddset(&wake, B_SIG_WAKE);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
}

int b_wait_interrupted(int s)
{
	return __atomic_load_n(&intr_asked[s], __ATOMIC_SEQ_CST) != intr_answered[s];
}

long b_wait_call4(int s, long nr, long a0, long a1, long a2)
{
	return b_wait_syscall4(nr, a0, a1, a2, &b_wake_flag[s]);
}

void b_wait_end(int s)
{
	sigset_t wake;
	sigemptyset(&wake);
	sigaddset(&wake, B_SIG_WAKE);
	pthread_sigmask(SIG_BLOCK, &wake, NULL);
	__atomic_store_n(&b_waiter[s], 0, __ATOMIC_SEQ_CST);
}

int32_t b_slot_u_tid(int s)
{
	if (s < 0 || s >= SM_NSLOTS)
		return 0;
	pthread_mutex_lock(&lock);
	int32_t t = slots[s].state == SLOT_ACTIVE ? u_tids[s] : 0;
	pthread_mutex_unlock(&lock);
	return t;
}

static void kill_p(void)
{
	if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) == 0)
		return;
	if (pidfd < 0)
		kill(cfg->pid, SIGKILL);
}

static void say(const char *fmt, long a)
{
	char msg[384];
	int n = snprintf(msg, sizeof(msg), fmt, a);
	if (n > 0 && write(2, msg, (size_t)n) < 0)
		return;
}

/* P is ending by itself if its end of the socket pair hangs up soon (its
 * descriptors go when the last thread is gone) */
static int p_is_exiting(void)
{
	struct pollfd p = { .fd = cfg->fd, .events = POLLRDHUP };
	return poll(&p, 1, 200) == 1 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR));
}

static pthread_cond_t slot_freed = PTHREAD_COND_INITIALIZER;

/* with the lock held */
static int free_slot(void)
{
	for (int s = 1; s < cfg->nslots; s++)
		if (slots[s].state == SLOT_FREE)
			return s;
	return -1;
}

static int starting_slots(void)
{
	int n = 0;
	for (int s = 0; s < SM_NSLOTS; s++)
		n += slots[s].state == SLOT_STARTING;
	return n;
}

static int exiting_slots(void)
{
	int n = 0;
	for (int s = 1; s < SM_NSLOTS; s++)
		n += slots[s].state != SLOT_FREE && __atomic_load_n(&slots[s].exiting, __ATOMIC_ACQUIRE);
	return n;
}

static void wake_all(uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* The U tid table every T's U_TID rule reads (after the secure pages,
 * read-only in P): a signal goes only to a thread in it (invariant 7).
 * Slot s's U from the moment the kernel confirmed it (watch_step) until B
 * accepts its exit, 0 otherwise; a slot that is starting keeps what it
 * has: 0, or for slot 0 the thread that started the sandbox, which
 * sandpit_start wrote.  With the lock held. */
static void publish_tids(void)
{
	int32_t *tab = (int32_t *)(uintptr_t)cfg->sp[0].tids;
	for (int s = 0; s < SM_NSLOTS; s++) {
		if (slots[s].state == SLOT_STARTING)
			continue;
		int32_t v = slots[s].state == SLOT_ACTIVE && !slots[s].exiting ? u_tids[s] : 0;
		if (__atomic_load_n(&tab[s], __ATOMIC_RELAXED) != v)
			__atomic_store_n(&tab[s], v, __ATOMIC_RELEASE);
	}
}

/* B has decided slot s's start (after publish_tids): the T that cloned
 * into it waits for its count to change before the program gets the new
 * thread's tid (.Lclone_known in trusted_thread.S) */
static void slot_start_decided(int s)
{
	__atomic_add_fetch(&cfg->sp[s].started, 1, __ATOMIC_RELEASE);
	wake_all(&cfg->sp[s].started);
}

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

static int before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* kernel ABI since 6.9 */
#endif

static int thread_gone(int32_t tid);

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
static int thread_gone_fd(int32_t tid, int pidfd)
{
	if (pidfd >= 0) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		if (poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP)))
			return 1;
	}
	/* a leader that ended before its group stays a zombie its pidfd does
	 * not report on every kernel: ask /proc as well */
	return thread_gone(tid);
}

static int thread_gone(int32_t tid)
{
	if (tid <= 0)
		return 0;
	if (syscall(SYS_tgkill, cfg->pid, tid, 0) < 0 && errno == ESRCH)
		return 1;
	if (tid != cfg->pid)
		return 0;
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)cfg->pid, (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = 0;
	const char *paren = strrchr(buf, ')'); /* the name may hold anything */
	return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

/* with the lock held: tid is some slot's U or T already */
static int tid_recorded(int32_t tid)
{
	for (int s = 0; s < SM_NSLOTS; s++)
		if (u_tids[s] == tid || t_tids[s] == tid)
			return 1;
	return 0;
}

/* with the lock held: a live thread of P that no slot records */
static int new_thread(int32_t tid)
{
	return tid > 0 && !tid_recorded(tid) && !thread_gone(tid);
}

/* with the lock held: the live threads of P that no slot records, as the
 * kernel lists them, and the two a starting slot's words name if the
 * kernel says they are such threads too (a thread made while the list was
 * read may be missing from it); up to max of them in tids, how many in
 * all returned.  Slots start one at a time (check_clone), so these are
 * the starting slot's U and T, those of them the kernel has made. */
static int new_threads(int32_t *tids, int max, uint32_t u, uint32_t t)
{
	char path[64];
	int n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)cfg->pid);
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		int32_t tid = (int32_t)atoi(e->d_name);
		if (!new_thread(tid))
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
		if (words[i] == START_MARK || known || !new_thread(tid))
			continue;
		if (n < max)
			tids[n] = tid;
		n++;
	}
	return n;
}

static void __attribute__((noreturn)) slot_alarm(const char *why, int s);

/* with the lock held: the T that makes slot s's clone (the T of the slot
 * that asked, as B recorded it) waits, as the kernel shows it, at
 * sandpit_clone_failed_site on slot s's count of starts: where it goes
 * only after a clone into slot s that made no thread, until B decides */
static int clone_failed(int s)
{
	int32_t tc = t_tids[watch[s].by];
	if (tc <= 0)
		return 0;
	int r = exit_check_call_at(cfg->pid, tc, (uintptr_t)sandpit_clone_failed_site, SYS_futex,
				   (unsigned long)(uintptr_t)&cfg->sp[s].started);
	if (r < 0 && r != -ESRCH) {
		char why[160];
		snprintf(why, sizeof(why),
			 "the kernel does not show where a thread that made a clone waits "
			 "(/proc/TID/syscall: %s)",
			 strerror(-r));
		slot_alarm(why, s);
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
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *paren = strrchr(buf, ')'); /* the name may hold anything */
	return paren && paren[1] == ' ' ? paren[2] : 0;
}

static void __attribute__((noreturn)) slot_alarm(const char *why, int s)
{
	/* one line, from the first of B's threads to see it (a watcher and a
	 * server may see the same death), which ends P unless P is ending by
	 * itself, and then B */
	static int raised;
	if (__atomic_exchange_n(&raised, 1, __ATOMIC_SEQ_CST))
		for (;;)
			pause();
	if (p_is_exiting()) {
		denial_final(cfg);
		_exit(0);
	}
	char msg[320]; /* the longest reason whole */
	snprintf(msg, sizeof(msg), "sandpit: %s (slot %%ld); killing the process\n", why);
	say(msg, s);
	kill_p();
	_exit(0);
}

/* Fills *w when the slot has something to wait for; leaves it alone if not. */
static void watch_step(int s, struct watch_wait *w)
{
	struct mailbox *mb = &cfg->mb[s];
	uint32_t u, t;
	int m;
	for (;;) {
		switch (watch[s].step) {
		case W_IDLE:
			pthread_mutex_lock(&lock);
			int busy = slots[s].state != SLOT_FREE;
			pthread_mutex_unlock(&lock);
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
				pthread_mutex_lock(&lock);
				if (u == t || !new_thread((int32_t)u) || !new_thread((int32_t)t))
					slot_alarm("a new thread's ids are not the kernel's", s);
				pthread_mutex_unlock(&lock);
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
			pthread_mutex_lock(&lock);
			int n = new_threads(nt, 2, u, t), sealed = 0;
			for (int i = 0; i < n && i < 2; i++)
				sealed += task_status(cfg->pid, nt[i], "Seccomp:") > 0;
			if (sealed) {
				/* U is in seccomp: the kernel wrote both words before
				 * that, so a word still unwritten was written back */
				pthread_mutex_unlock(&lock);
				if (__atomic_load_n(&mb->ctid, __ATOMIC_ACQUIRE) == START_MARK ||
				    __atomic_load_n(&mb->t_ctid, __ATOMIC_ACQUIRE) == START_MARK)
					slot_alarm("a new thread's ids are not the kernel's", s);
				break; /* written meanwhile: confirm them */
			}
			if (n == 1 && s != 0 && thread_state(nt[0]) == 'S') {
				/* a new U runs the nursery from its first instruction to
				 * seccomp and never sleeps there (it can only be running,
				 * waiting for a CPU, stopped, or in the kernel's own
				 * uninterruptible waits): a lone new thread asleep is a T
				 * whose U is gone, with U's word written back (slot 0's
				 * U starts the sandbox, which may sleep) */
				pthread_mutex_unlock(&lock);
				if (__atomic_load_n(&mb->ctid, __ATOMIC_ACQUIRE) == START_MARK ||
				    __atomic_load_n(&mb->t_ctid, __ATOMIC_ACQUIRE) == START_MARK)
					slot_alarm("a new thread's ids are not the kernel's", s);
				break;
			}
			if (n == 0 && s != 0 && clone_failed(s)) {
				/* no new thread, and the T that cloned waits where it
				 * waits only after a clone into this slot that made none:
				 * the clone failed and the slot never came to life */
				slots[s].state = SLOT_FREE;
				slot_start_decided(s);
				pthread_cond_broadcast(&slot_freed);
				pthread_mutex_unlock(&lock);
				watch[s].step = W_IDLE;
				break;
			}
			pthread_mutex_unlock(&lock);
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
			m = task_status(cfg->pid, watch[s].u, "Seccomp:");
			if (m == 0) {
				if (task_status(cfg->pid, watch[s].t, "Seccomp:") != 0)
					slot_alarm("a new thread's ids are not the kernel's", s);
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
			if (m == -1 || (m != -2 && task_status(cfg->pid, watch[s].t, "Seccomp:") != 0))
				slot_alarm("a new thread's ids are not the kernel's", s);
			pthread_mutex_lock(&lock);
			slots[s].state = SLOT_ACTIVE;
			__atomic_store_n(&ran[s], 1, __ATOMIC_RELEASE);
			u_tids[s] = watch[s].u;
			t_tids[s] = watch[s].t;
			u_pidfds[s] = thread_pidfd(u_tids[s]);
			t_pidfds[s] = thread_pidfd(t_tids[s]);
			if (intr_pending[s]) {
				intr_pending[s] = 0;
				syscall(SYS_tgkill, cfg->pid, t_tids[s], SANDPIT_SIG_INTR);
			}
			/* U in the table first: its T serves it once it sees its
			 * tid here, the creating T returns it once the count moves */
			publish_tids();
			__atomic_store_n(&cfg->sp[s].u_tid, watch[s].u, __ATOMIC_RELEASE);
			wake_all((uint32_t *)&cfg->sp[s].u_tid);
			slot_start_decided(s);
			pthread_cond_broadcast(&slot_freed); /* the next slot may start */
			pthread_mutex_unlock(&lock);
			watch[s].step = W_U;
			break;
		case W_U:
			/* T first: T ends only after U, so T gone while U lives (asked
			 * in that order) is a T that died (invariant 5) */
			m = thread_gone_fd(t_tids[s], t_pidfds[s]);
			u = __atomic_load_n(&mb->ctid, __ATOMIC_ACQUIRE);
			if (thread_gone_fd(u_tids[s], u_pidfds[s])) {
				if (!__atomic_load_n(&slots[s].exiting, __ATOMIC_ACQUIRE))
					slot_alarm("a sandboxed thread ended without exit (killed by the "
						   "kernel for a system call that escaped the sandbox?)",
						   s);
				wake_all(&mb->ctid); /* T may wait on it too */
				watch[s].step = W_T;
				break;
			}
			if (m)
				slot_alarm("a trusted thread ended while its thread runs", s);
			/* a word at 0 with U alive is U's own writing, or U on its
			 * way out: look again soon */
			*w = (struct watch_wait){ &mb->ctid, u, u ? 200000000 : 1000000 };
			return;
		case W_T:
			if (!thread_gone_fd(t_tids[s], t_pidfds[s])) {
				t = __atomic_load_n(&mb->t_ctid, __ATOMIC_ACQUIRE);
				*w = (struct watch_wait){ &mb->t_ctid, t, t ? 200000000 : 1000000 };
				return;
			}
			/* both gone, as the kernel says: only now may the slot go to
			 * another thread */
			pthread_mutex_lock(&lock);
			u_tids[s] = t_tids[s] = 0;
			if (u_pidfds[s] >= 0)
				close(u_pidfds[s]);
			if (t_pidfds[s] >= 0)
				close(t_pidfds[s]);
			u_pidfds[s] = t_pidfds[s] = -1;
			slots[s].exiting = 0;
			slots[s].state = SLOT_FREE;
			publish_tids();
			pthread_cond_broadcast(&slot_freed);
			pthread_mutex_unlock(&lock);
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

static void *watch_slot(void *arg)
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

/* futex_waitv takes at most 128 words: a watcher per WATCH_GROUP slots (a
 * word each and the idle word), started when its first slot is used */
#define WATCH_GROUP 127
#define WATCH_GROUPS ((SM_NSLOTS + WATCH_GROUP - 1) / WATCH_GROUP)

static void *watch_group(void *arg)
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
			say("sandpit: futex_waitv failed (errno %ld); killing the process\n", (long)errno);
			kill_p();
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
static void *watch_p(void *arg)
{
	(void)arg;
	/* slot numbers are u16 (a stream: one may come in two reads) */
	unsigned char buf[128];
	size_t have = 0;
	for (;;) {
		ssize_t n = read(cfg->fd, buf + have, sizeof(buf) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			denial_final(cfg); /* P is gone: the command gets the count */
			_exit(0);
		}
		have += (size_t)n;
		pthread_mutex_lock(&lock);
		for (size_t i = 0; i + 1 < have; i += 2) {
			uint16_t s;
			memcpy(&s, buf + i, sizeof(s));
			if (s >= SM_NSLOTS)
				continue;
			__atomic_add_fetch(&intr_asked[s], 1, __ATOMIC_SEQ_CST);
			pid_t w = __atomic_load_n(&b_waiter[s], __ATOMIC_SEQ_CST);
			if (w) { /* B waits for U, T for B's answer: B's wait ends */
				__atomic_store_n(&b_wake_flag[s], 1, __ATOMIC_SEQ_CST);
				syscall(SYS_tgkill, getpid(), w, B_SIG_WAKE);
			}
			else if (slots[s].state == SLOT_STARTING)
				intr_pending[s] = 1;
			else if (t_tids[s])
				syscall(SYS_tgkill, cfg->pid, t_tids[s], SANDPIT_SIG_INTR);
		}
		pthread_mutex_unlock(&lock);
		if (have & 1)
			buf[0] = buf[have - 1];
		have &= 1;
	}
}

void trusted_process_init_slot(const struct trusted_process_config *c, int s)
{
	struct secure_page *sp = &c->sp[s], *sp0 = &c->sp[0];
	struct mailbox *mb = &c->mb[s];
	uint64_t seq = sp->seq;
	uint32_t started = sp->started;
	if (s != 0)
		memcpy(sp, sp0, SP_DATA); /* the configuration, not B's data area */
	sp->seq = seq;
	sp->started = started; /* a T may wait for it to move (slot_start_decided) */
	sp->verdict = 0;
	sp->slot = (uint32_t)s;
	sp->t_fd = slots_t_fd(c->fd_lo, s);
	sp->u_fd = slots_u_fd(c->fd_lo, s);
	sp->mailbox = (uint64_t)(uintptr_t)mb;
	sp->u_tid = 0;
	sp->glibc_ctid = 0;
	sp->b_cpu = ~0u;
	sp->exiting = 0;
	/* what T sleeps on: in S, so U cannot hide B's hang-up from T */
	sp->pollfd[0].fd = sp->t_fd;
	sp->pollfd[1].fd = sp->tb_fd;
	sp->pollfd[0].events = sp->pollfd[1].events = POLLIN;
	sp->pollfd[0].revents = sp->pollfd[1].revents = 0;
	memset(mb, 0, sizeof(*mb));
	mb->t_cpu = mb->u_cpu = ~0u;
	mb->path.len = MB_PATH_NONE;
	struct u_state *st = (struct u_state *)mb->u_state;
	st->mb = mb;
	st->table = (const struct tt_table *)(uintptr_t)sp0->table;
	st->u_fd = sp->u_fd;
	st->t_fd = sp->t_fd;
	st->spin = sp0->spin;
	st->pid = sp0->pid;
	st->tb_fd = sp0->tb_fd;
	st->slot = s;
	st->sp = sp;
	/* T's alternate stack: its slot's in the region below the secure pages */
	uintptr_t region = (uintptr_t)c->sp - SM_ALT_REGION;
	sp->altstack[0] = region + (uintptr_t)s * SM_ALT_SIZE;
	sp->altstack[1] = 0;
	sp->altstack[2] = SM_ALT_SIZE;
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

static int start_slot_threads(intptr_t s)
{
	pthread_t w;
	if (slot_threads[s])
		return 0;
	if (compat_has(COMPAT_FUTEX_WAITV) && !group_watchers[s / WATCH_GROUP]) {
		if (pthread_create(&w, &thread_attr, watch_group, (void *)(s / WATCH_GROUP)) != 0)
			return -EAGAIN;
		group_watchers[s / WATCH_GROUP] = 1;
	}
	if (pthread_create(&w, &thread_attr, serve, (void *)s) != 0)
		return -EAGAIN;
	if (!compat_has(COMPAT_FUTEX_WAITV) &&
	    (pthread_create(&w, &thread_attr, watch_slot, (void *)s) != 0 ||
	     pthread_create(&w, &thread_attr, exit_bell_slot, (void *)s) != 0)) {
		say("sandpit: cannot start the watcher of slot %ld; killing the process\n", (long)s);
		kill_p();
		_exit(1);
	}
	slot_threads[s] = 1;
	return 0;
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
	if ((flags & CLONE_CHILD_CLEARTID) && b_in_protected(ctid))
		return -EPERM;
	if ((flags & CLONE_PARENT_SETTID) && b_in_protected(sp->args[2]))
		return -EPERM;

	pthread_mutex_lock(&lock);
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
		while (starting_slots())
			pthread_cond_wait(&slot_freed, &lock);
		s = free_slot();
		if (s >= 0 || !exiting_slots())
			break;
		if (pthread_cond_timedwait(&slot_freed, &lock, &until) == ETIMEDOUT) {
			s = starting_slots() ? -1 : free_slot();
			break;
		}
	}
	if (s < 0 || start_slot_threads(s) < 0) {
		int busy = starting_slots();
		pthread_mutex_unlock(&lock);
		char why[64];
		snprintf(why, sizeof(why), s < 0 && !busy ? "all %d thread slots are in use"
							   : "no thread slot of %d came free in time",
			 cfg->nslots);
		b_denial(parent, sp, -EAGAIN, why);
		return -EAGAIN;
	}
	denial_slot_reused(cfg, s); /* before its state is cleared */
	trusted_process_init_slot(cfg, s);
	struct secure_page *child = &cfg->sp[s];
	struct mailbox *cmb = &cfg->mb[s];
	child->glibc_ctid = (flags & CLONE_CHILD_CLEARTID) ? ctid : 0;
	memcpy(cmb->clone_regs, cfg->mb[parent].clone_regs, CR_SIZE);
	cmb->clone_regs[CR_RSP / 8] = stack - 128 - 8;
	cmb->ctid = START_MARK;
	cmb->t_ctid = START_MARK;
	slots[s].exiting = 0;
	slots[s].state = SLOT_STARTING;
	watch[s].by = parent;
	intr_pending[s] = 0;
	publish_tids(); /* the new slot's T needs the list too */
	__atomic_add_fetch(&watch_gen, 1, __ATOMIC_RELEASE);
	wake_all(&watch_gen);
	pthread_mutex_unlock(&lock);

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
	if (!cfg->fs_by_ptrace)
		return -ENOSYS;
	/* the slot's U as the kernel confirmed it; slot 0's first call (ld.so's)
	 * may come before the watcher has confirmed it: wait for that */
	pid_t tid = 0;
	for (int i = 0; i < 2000 && !(tid = b_slot_u_tid(s)); i++)
		usleep(1000);
	if (!tid)
		return -ESRCH;
	if (code == 0x1002 /* ARCH_SET_FS */) {
		if (addr >= cfg->task_size)
			return -EPERM;
		long r = fs_base_ptrace(cfg->pid, tid, 1, 1, &base);
		return r < 0 ? r : SP_V_ACK;
	}
	if (code != 0x1003 /* ARCH_GET_FS */)
		return -EINVAL;
	if (b_in_protected(addr) || b_in_protected(addr + 7))
		return -EFAULT;
	long r = fs_base_ptrace(cfg->pid, tid, 1, 0, &base);
	if (r < 0)
		return r;
	struct iovec local = { &base, sizeof(base) };
	struct iovec remote = { (void *)(uintptr_t)addr, sizeof(base) };
	if (process_vm_writev(cfg->pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(base))
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
	if (out->nr < POLICY_MAX_NR && policy_call(cfg->policy, (int)out->nr)->cls == POLICY_KILL) {
		b_killed(s, out);
		return -EPERM;
	}
	const struct policy_proc_arg *pa = policy_proc_arg(cfg->policy, (int)out->nr);
	if (!pa)
		return -ENOSYS; /* SANDPIT_NR_THREAD_EXIT too: an exit comes from T's bell */
	switch (pa->kind) {
	case PK_PATH:
		return b_check_path(s, pa, out);
	case PK_SIGACTION: {
		long r = b_check_sigaction(out);
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
		return path_op(cfg, s, pa, out);
	case PK_RLIMIT:
		return b_check_rlimit(s, out);
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
	struct secure_page *sp = &cfg->sp[s];
	struct mailbox *mb = &cfg->mb[s];
	uint64_t seq = sp->seq & ~(uint64_t)1;
	__atomic_store_n(&sp->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	sp->verdict = out->verdict;
	sp->nr = out->nr;
	/* the checks point arguments into out's data: S's, once published */
	for (int i = 0; i < 6; i++) {
		uint64_t a = out->args[i], lo = (uintptr_t)out->data;
		sp->args[i] = a >= lo && a < lo + sizeof(out->data) ? (uintptr_t)sp->data + (a - lo) : a;
	}
	sp->new_sp = out->new_sp;
	memcpy(sp->data, out->data, sizeof(sp->data));
	__atomic_store_n(&sp->seq, seq + 2, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&mb->t_wait_b, __ATOMIC_RELAXED))
		syscall(SYS_futex, &sp->seq, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* Until the kernel shows slot s's U (tid) where it can only end by exit
 * (user/trusted/exit_check.h), for about as long as T gives an accepted U to end.
 * The exit request that rang the bell is a word in the mailbox, which any
 * thread of P can write: the U it names may never have asked, and run on.
 * If it ends meanwhile, the kernel killed it: P ends, as it does for any U
 * the kernel kills (invariant 5). */
static void wait_exit_site(int s, int32_t tid)
{
	struct timespec until, now;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += 2;
	for (int i = 0;; i++) {
		int r = exit_check_waits_at(cfg->pid, tid, (uintptr_t)sandpit_exit_site);
		if (r > 0)
			return;
		if (r == -ESRCH || (r == 0 && thread_gone(tid)))
			slot_alarm("a sandboxed thread ended without exit (killed by the kernel for a "
				   "system call that escaped the sandbox?)",
				   s);
		if (r < 0) {
			char why[160];
			snprintf(why, sizeof(why),
				 "the kernel does not show where a thread that asks to exit waits "
				 "(/proc/TID/syscall: %s)",
				 strerror(-r));
			slot_alarm(why, s);
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!before(&now, &until))
			slot_alarm("a thread that asked to exit did not end", s);
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
	pthread_mutex_lock(&lock);
	/* only the slot's T rings its exit bell, so its U is in seccomp and
	 * the watcher is about to confirm the start: however long the machine
	 * takes for that */
	while (slots[s].state == SLOT_STARTING)
		pthread_cond_wait(&slot_freed, &lock);
	int32_t tid = slots[s].state == SLOT_ACTIVE ? u_tids[s] : 0;
	pthread_mutex_unlock(&lock);
	if (!tid)
		slot_alarm("a thread asked to exit before its start was confirmed", s);
	wait_exit_site(s, tid);
	pthread_mutex_lock(&lock);
	__atomic_store_n(&slots[s].exiting, 1, __ATOMIC_RELEASE);
	publish_tids();
	pthread_mutex_unlock(&lock);
	__atomic_store_n(&cfg->sp[s].exiting, 1, __ATOMIC_RELEASE);
	memset(&out, 0, sizeof(out)); /* nothing of B's stack reaches S */
	out.verdict = SP_V_EXIT;
	out.nr = SANDPIT_NR_THREAD_EXIT;
	publish(s, &out);
}

/* Without futex_waitv each slot has a thread on its exit bell. */
static void *exit_bell_slot(void *arg)
{
	int s = (int)(intptr_t)arg;
	struct mailbox *mb = &cfg->mb[s];
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
	struct secure_page *sp = &cfg->sp[s];
	struct mailbox *mb = &cfg->mb[s];
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
		intr_answered[s] = __atomic_load_n(&intr_asked[s], __ATOMIC_SEQ_CST);
		publish(s, &out);
		if (out.verdict == SP_V_RECV)
			b_hand_over_done();
	}
	return NULL;
}

static void __attribute__((noreturn)) run(void)
{
	/* B keeps only its sockets and stderr: holding P's stdin/stdout open
	 * would keep pipes from seeing their end */
	close(0);
	close(1);
	/* and the command's count of refusals (denial_log.h), if it gave one */
	int keep[3] = { cfg->fd, cfg->pass_fd, cfg->report_fd >= 3 ? cfg->report_fd : cfg->fd };
	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (keep[j] < keep[i]) {
				int t = keep[i];
				keep[i] = keep[j];
				keep[j] = t;
			}
	int from = 3;
	for (int i = 0; i < 3; i++) {
		if (keep[i] > from)
			syscall(SYS_close_range, from, keep[i] - 1, 0);
		if (keep[i] + 1 > from)
			from = keep[i] + 1;
	}
	syscall(SYS_close_range, from, ~0u, 0);
	prctl(PR_SET_NAME, "sandpit-B");
	prctl(PR_SET_DUMPABLE, 0);
	umask(0); /* B creates only for U, with U's umask applied (path_op.c) */
	signal(SIGPIPE, SIG_IGN);
	/* without pidfds (before 5.3) kill(2) by pid */
	pidfd = compat_has(COMPAT_PIDFD) ? (int)syscall(SYS_pidfd_open, cfg->pid, 0) : -1;
	slots[0].state = SLOT_STARTING; /* sandpit_start makes slot 0's U and T */

	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL); /* B's threads take no signals */
	/* but for the waits made on U's behalf (b_wait_begin) */
	struct sigaction wake = { .sa_sigaction = b_woken, .sa_flags = SA_SIGINFO };
	sigaction(B_SIG_WAKE, &wake, NULL);
	b_follows = sched_getaffinity(0, sizeof(b_cpus), &b_cpus) == 0 && CPU_COUNT(&b_cpus) > 1;
	pthread_attr_init(&thread_attr);
	pthread_attr_setstacksize(&thread_attr, 64 * 1024);
	/* ready: P patches while B starts its threads (a failure here ends B,
	 * which T sees as B hanging up) */
	pid_t me = getpid();
	if (write(cfg->fd, &me, sizeof(me)) != sizeof(me))
		_exit(1);
	if (cfg->fs_by_ptrace) {
		/* P names B its ptracer, then asks: can B stop P's thread? */
		char go;
		uint64_t base;
		if (read(cfg->fd, &go, 1) != 1)
			_exit(1);
		int r = fs_base_ptrace(cfg->pid, cfg->sp[0].u_tid, -1, 0, &base);
		if (write(cfg->fd, &r, sizeof(r)) != sizeof(r) || r < 0)
			_exit(1);
	}
	pthread_t w;
	if (start_slot_threads(0) < 0 || pthread_create(&w, &thread_attr, watch_p, NULL) != 0)
		_exit(1);
	for (;;)
		pause();
}

pid_t trusted_process_spawn(const struct trusted_process_config *c, int sibling, pid_t *b)
{
	*b = 0;
	if (sibling) {
		/* one process instead of two (the intermediate child copied
		 * P's memory and descriptor table only to exit); P is single-
		 * threaded here, so the child may run libc as after fork */
		long r = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, 0L);
		if (r == 0) {
			cfg = c;
			run();
		}
		if (r > 0) {
			*b = (pid_t)r;
			return 0;
		}
		if (errno != EINVAL) /* EINVAL: P is a namespace's init */
			return -errno;
	}
	pid_t mid = fork();
	if (mid < 0)
		return -errno;
	if (mid == 0) {
		if (fork() != 0)
			_exit(0);
		cfg = c;
		run();
	}
	return mid;
}

int trusted_process_check_ptrace(int fd)
{
	char go = 1;
	int r;
	if (write(fd, &go, 1) != 1 || read(fd, &r, sizeof(r)) != sizeof(r))
		return -EPIPE;
	return r;
}

pid_t trusted_process_started(pid_t mid, pid_t b, int fd)
{
	int st;
	pid_t got;
	if (mid > 0) {
		if (waitpid(mid, &st, 0) < 0)
			return -errno;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return -ECHILD;
	}
	if (fd < 0)
		return -ECHILD;
	if (read(fd, &got, sizeof(got)) != sizeof(got) || got <= 0 || (b > 0 && got != b))
		return -ECHILD;
	return got;
}
