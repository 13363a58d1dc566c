/* The bottom of the trusted process B (user/trusted/b_state.h): its
 * configuration, P's pidfd, the record of the slots and the alarm. */
#include <errno.h>
#include <linux/futex.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat/compat.h"
#include "user/trusted/b_state.h"
#include "user/trusted/denial_log.h"

const struct trusted_process_config *b_config;

void b_set_cfg(const struct trusted_process_config *c)
{
	b_config = c;
}

static int pidfd = -1;

int b_pidfd(void)
{
	return pidfd;
}

void b_open_pidfd(void)
{
	pidfd = compat_has(COMPAT_PIDFD) ? (int)syscall(SYS_pidfd_open, b_cfg()->pid, 0) : -1;
}

struct b_slot b_slots[SM_NSLOTS];
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
	pthread_mutex_lock(&b_lock);
	int32_t t = b_slots[s].state == SLOT_ACTIVE ? b_slots[s].u_tid : 0;
	pthread_mutex_unlock(&b_lock);
	return t;
}

void b_kill_p(void)
{
	if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) == 0)
		return;
	if (pidfd < 0)
		kill(b_cfg()->pid, SIGKILL);
}

void b_say(const char *fmt, long a)
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
	struct pollfd p = { .fd = b_cfg()->fd, .events = POLLRDHUP };
	return poll(&p, 1, 200) == 1 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR));
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
void b_publish_tids(void)
{
	int32_t *tab = (int32_t *)(uintptr_t)b_cfg()->sp[0].tids;
	for (int s = 0; s < SM_NSLOTS; s++) {
		if (b_slots[s].state == SLOT_STARTING)
			continue;
		int32_t v = b_slots[s].state == SLOT_ACTIVE && !b_slots[s].exiting ? b_slots[s].u_tid : 0;
		if (__atomic_load_n(&tab[s], __ATOMIC_RELAXED) != v)
			__atomic_store_n(&tab[s], v, __ATOMIC_RELEASE);
	}
}

/* B has decided slot s's start (after b_publish_tids): the T that cloned
 * into it waits for its count to change before the program gets the new
 * thread's tid (.Lclone_known in trusted_thread.S) */
void b_slot_start_decided(int s)
{
	__atomic_add_fetch(&b_cfg()->sp[s].started, 1, __ATOMIC_RELEASE);
	b_wake_all(&b_cfg()->sp[s].started);
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
	if (p_is_exiting()) {
		denial_final(b_cfg(), b_slot_ever_ran);
		_exit(0);
	}
	char msg[320]; /* the longest reason whole */
	snprintf(msg, sizeof(msg), "sandpit: %s (slot %%ld); killing the process\n", why);
	b_say(msg, s);
	b_kill_p();
	_exit(0);
}
