/* The bottom of the trusted process B (user/trusted/b_state.h): its
 * configuration, its record of P and P's slots, and the alarm. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat/compat.h"
#include "user/trusted/b_state.h"
#include "user/trusted/denial_log.h"

const struct trusted_process_config *b_config;

/* the one process of the sandbox */
static struct b_proc proc;

struct b_proc *b_set_cfg(const struct trusted_process_config *c)
{
	b_config = c;
	proc = (struct b_proc){ .pid = c->pid, .pidfd = -1, .fd = c->fd, .pass_fd = c->pass_fd,
				.fd_lo = c->fd_lo, .fd_hi = c->fd_hi, .nslots = c->nslots,
				.sp = c->sp, .mb = c->mb, .sigtab = c->sigtab,
				.exe_fd = c->exe_fd, .notif_fd = c->notif_fd,
				.notif_pid = c->notif_pid, .notif_pidfd = -1,
				.notif_id = c->notif_id,
				.slots_made = c->notif_fd < 0 ? c->nslots : c->slots_made };
	return &proc;
}

struct b_proc *b_proc_of_slot(int s)
{
	(void)s;
	return &proc;
}

void b_open_pidfd(struct b_proc *p)
{
	p->pidfd = compat_has(COMPAT_PIDFD) ? (int)syscall(SYS_pidfd_open, p->pid, 0) : -1;
}

pthread_mutex_t b_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t b_slot_freed = PTHREAD_COND_INITIALIZER;

/* a thread has run in the slot (slot 0: sandpit_start's) */
static char ran[SM_NSLOTS] = { 1 };

/* a thread has run in slot s: only then can its mailbox say anything
 * (asking the others would make the kernel allocate their pages).  Without
 * the lock: the last count is taken from b_slot_alarm, which may hold it. */
int b_slot_ever_ran(int s)
{
	return s >= 0 && s < SM_NSLOTS && __atomic_load_n(&ran[s], __ATOMIC_ACQUIRE);
}

void b_slot_ran(int s)
{
	__atomic_store_n(&ran[s], 1, __ATOMIC_RELEASE);
}

int32_t b_slot_u_tid(int s)
{
	if (s < 0 || s >= SM_NSLOTS)
		return 0;
	const struct b_slot *slot = &b_proc_of_slot(s)->slots[s];
	pthread_mutex_lock(&b_lock);
	int32_t t = slot->state == SLOT_ACTIVE ? slot->u_tid : 0;
	pthread_mutex_unlock(&b_lock);
	return t;
}

void b_kill_p(const struct b_proc *p)
{
	if (p->pidfd >= 0 && syscall(SYS_pidfd_send_signal, p->pidfd, SIGKILL, NULL, 0) == 0)
		return;
	if (p->pidfd < 0)
		kill(p->pid, SIGKILL);
}

void b_say(const char *fmt, long a)
{
	char msg[384];
	int n = snprintf(msg, sizeof(msg), fmt, a);
	if (n > 0 && write(2, msg, (size_t)n) < 0)
		return;
}

#define PF_EXITING 0x4 /* include/linux/sched.h: the task is in do_exit */

const char *b_stat_fields(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0) {
		errno = ESRCH;
		return NULL;
	}
	buf[n] = 0;
	const char *paren = strrchr(buf, ')'); /* the name may hold anything */
	if (!paren || paren[1] != ' ') {
		errno = EPROTO;
		return NULL;
	}
	return paren + 2;
}

/* the kernel says a /proc file of P's is gone with its thread: ENOENT at
 * the open, ESRCH (or nothing) at the read.  Any other failure (B out of
 * descriptors or memory) is no evidence that P is ending. */
static int gone_errno(int e)
{
	return e == ENOENT || e == ESRCH;
}

/* stat's flags of P's thread tid (a name in /proc/P/task) have PF_EXITING,
 * or the thread is gone */
static int thread_exiting(const struct b_proc *p, const char *tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%.16s/stat", (int)p->pid, tid);
	const char *f = b_stat_fields(path, buf, sizeof(buf));
	unsigned long flags = 0;
	/* state, ppid, pgrp, session, tty_nr, tpgid, flags */
	if (!f || sscanf(f, "%*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return !f && gone_errno(errno);
	return !!(flags & PF_EXITING);
}

/* Whether every thread of P left is dying: each has SIGKILL pending (a
 * group exit, exit_group or a fatal signal, sends it to every thread) or is
 * already in its exit (PF_EXITING), or is gone.  Only the process's own end
 * does that: SIGKILL cannot be sent to one thread.  What B cannot look at
 * (no descriptor left, which the program can bring about) is not dying:
 * the alarm then comes after 200 ms, as for a thread seen running. */
static int p_threads_dying(const struct b_proc *p)
{
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)p->pid);
	DIR *d = opendir(path);
	if (!d)
		return gone_errno(errno); /* no threads to look at: P is gone */
	int dying = 1;
	for (struct dirent *e; dying && (errno = 0, e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/status", (int)p->pid, e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		int err = n < 0 ? errno : ESRCH;
		if (fd >= 0)
			close(fd);
		if (n <= 0) {
			dying = gone_errno(err); /* gone meanwhile, or not seen */
			continue;
		}
		buf[n] = 0;
		const char *pnd = strstr(buf, "\nSigPnd:\t");
		const char *st = strstr(buf, "\nState:\t");
		unsigned long long pending = pnd ? strtoull(pnd + 9, NULL, 16) : 0;
		int zombie = st && (st[8] == 'Z' || st[8] == 'X');
		if (!zombie && !(pending & (1ULL << (SIGKILL - 1))) &&
		    !thread_exiting(p, e->d_name))
			dying = 0;
	}
	if (dying && errno && !gone_errno(errno))
		dying = 0; /* the list was not read to its end */
	closedir(d);
	return dying;
}

/* P is ending by itself if its end of the socket pair hangs up soon (its
 * descriptors go when the last thread is gone).  On a loaded machine each
 * thread of a group exit needs a CPU to act on its SIGKILL, which can take
 * longer than 200 ms: while every thread left is dying, wait on, up to
 * 5 s.  A thread the kernel killed alone (a call that escaped the sandbox)
 * leaves the others running: the answer comes after 200 ms. */
static int p_is_exiting(const struct b_proc *p)
{
	struct pollfd pf = { .fd = p->fd, .events = POLLRDHUP };
	for (int waited = 0; waited < 5000; waited += 200) {
		if (poll(&pf, 1, 200) == 1 && (pf.revents & (POLLHUP | POLLRDHUP | POLLERR)))
			return 1;
		if (!p_threads_dying(p))
			return 0;
	}
	return 0;
}

void b_wake_all(uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* The U tid table every T's U_TID rule reads (after the secure pages,
 * read-only in P): a signal goes only to a thread in it (invariant 7).
 * Slot s's U from the moment the kernel confirmed it (watch_step) until B
 * accepts its exit, 0 otherwise; a slot that is starting keeps what it
 * has: 0, or for slot 0 the thread that started the sandbox, which
 * sandpit_start wrote.  With the lock held. */
void b_publish_tids(struct b_proc *p)
{
	int32_t *tab = (int32_t *)(uintptr_t)p->sp[0].tids;
	for (int s = 0; s < SM_NSLOTS; s++) {
		const struct b_slot *slot = &p->slots[s];
		if (slot->state == SLOT_STARTING)
			continue;
		int32_t v = slot->state == SLOT_ACTIVE && !slot->exiting ? slot->u_tid : 0;
		if (__atomic_load_n(&tab[s], __ATOMIC_RELAXED) != v)
			__atomic_store_n(&tab[s], v, __ATOMIC_RELEASE);
	}
}

/* B has decided slot s's start (after b_publish_tids): the T that cloned
 * into it waits for its count to change before the program gets the new
 * thread's tid (.Lclone_known in trusted_thread.S) */
void b_slot_start_decided(int s)
{
	struct secure_page *sp = &b_proc_of_slot(s)->sp[s];
	__atomic_add_fetch(&sp->started, 1, __ATOMIC_RELEASE);
	b_wake_all(&sp->started);
}

void __attribute__((noreturn)) b_slot_alarm(const char *why, int s)
{
	/* one line, from the first of B's threads to see it (a watcher and a
	 * server may see the same death), which ends P unless P is ending by
	 * itself, and then B */
	static int raised;
	if (__atomic_exchange_n(&raised, 1, __ATOMIC_SEQ_CST))
		for (;;)
			pause();
	const struct b_proc *p = b_proc_of_slot(s);
	if (p_is_exiting(p)) {
		denial_final(b_cfg(), p->mb, b_slot_ever_ran);
		_exit(0);
	}
	char msg[320]; /* the longest reason whole */
	snprintf(msg, sizeof(msg), "sandpit: %s (slot %%ld); killing the process\n", why);
	b_say(msg, s);
	b_kill_p(p);
	_exit(0);
}
