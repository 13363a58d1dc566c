/* B's half of slots on demand (user/trusted/slot_fds.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "user/layout/slots.h"
#include "user/trusted/b_state.h"
#include "user/trusted/slot_fds.h"

/* the notification N waits in (start-up's until N's wait is cut short),
 * the slots made, N let go: in P's record, with fds_lock */
static pthread_mutex_t fds_lock = PTHREAD_MUTEX_INITIALIZER;

int b_slots_made(const struct b_proc *p)
{
	return __atomic_load_n(&p->slots_made, __ATOMIC_ACQUIRE);
}

/* N's wait was cut short (N stopped, as a stop of P's process group
 * stops it: the kernel drops the notification and makes the call again
 * when N goes on): its next one, however long N stays stopped.  With
 * fds_lock. */
static int next_notification(struct b_proc *p)
{
	struct pollfd pf = { .fd = p->notif_fd, .events = POLLIN };
	for (;;) {
		if (poll(&pf, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pf.revents & POLLIN)
			break;
		return -ESRCH; /* hung up: N is gone (let go, P ended, or killed) */
	}
	struct seccomp_notif n;
	memset(&n, 0, sizeof(n));
	if (ioctl(p->notif_fd, SECCOMP_IOCTL_NOTIF_RECV, &n) < 0)
		return errno == ENOENT ? -EAGAIN : -errno;
	/* only N has the filter, and it notifies getppid alone */
	if (n.pid != (uint32_t)p->notif_pid || n.data.nr != __NR_getppid)
		return -EPROTO;
	p->notif_id = n.id;
	static long cut;
	cut++;
	if (getenv("SANDPIT_DEBUG"))
		b_say("sandpit: the notifier's wait was cut short (stopped?), %ld times; "
		      "its next one taken\n", cut);
	return 0;
}

/* src (B's) put at number to of P's table, close-on-exec */
static int add_fd(struct b_proc *p, int src, int to)
{
	for (;;) {
		struct seccomp_notif_addfd a = { .id = p->notif_id,
						 .flags = SECCOMP_ADDFD_FLAG_SETFD,
						 .srcfd = (uint32_t)src, .newfd = (uint32_t)to,
						 .newfd_flags = O_CLOEXEC };
		int r = ioctl(p->notif_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
		if (r == to)
			return 0;
		if (r >= 0)
			return -EPROTO;
		if (errno == EINTR)
			continue;
		/* ENOENT: N's notification was dropped; ESRCH: it was, while
		 * this one waited for N */
		if (errno != ENOENT && errno != ESRCH)
			return -errno;
		int e;
		while ((e = next_notification(p)) == -EAGAIN)
			;
		if (e < 0)
			return e;
	}
}

/* slot s's eventfds, T's (never blocks: T polls it) and U's.  The
 * kernel checks their numbers against N's RLIMIT_NOFILE, which covers the
 * block, not P's: P's limit never moves, and no number of the block is
 * ever the kernel's to hand to the program */
static int make_slot(struct b_proc *p, int s)
{
	int t = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), u = eventfd(0, EFD_CLOEXEC), r;
	if (t < 0 || u < 0)
		r = -errno;
	else if ((r = add_fd(p, t, slots_t_fd(p->fd_lo, s))) == 0)
		r = add_fd(p, u, slots_u_fd(p->fd_lo, s));
	if (t >= 0)
		close(t);
	if (u >= 0)
		close(u);
	return r;
}

int b_slot_fds_grow(struct b_proc *p)
{
	pthread_mutex_lock(&fds_lock);
	int m = b_slots_made(p), r;
	if (m >= p->nslots)
		r = -ENOSPC;
	else if (__atomic_load_n(&p->notif_released, __ATOMIC_ACQUIRE))
		r = -ESRCH;
	else if ((r = make_slot(p, m)) == 0)
		__atomic_store_n(&p->slots_made, m + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&fds_lock);
	return r;
}

void b_notifier_open(struct b_proc *p)
{
	if (p->notif_fd < 0)
		return;
	p->notif_pidfd = (int)syscall(SYS_pidfd_open, p->notif_pid, 0);
	/* the pidfd holds the pid from now on; before it, N could have been
	 * killed from outside and its pid given to another process: N's is
	 * the one that shares P's descriptor table (P's threads do too, but
	 * none of them is a process of its own that pidfd_open takes) */
	errno = 0;
	long same = p->notif_pidfd < 0 ? 0
				       : syscall(SYS_kcmp, p->pid, p->notif_pid, KCMP_FILES, 0, 0);
	if (same != 0 && !(same < 0 && errno == ENOSYS)) {
		close(p->notif_pidfd);
		p->notif_pidfd = -1;
	}
}

void b_notifier_release(struct b_proc *p)
{
	if (p->notif_fd < 0 || __atomic_exchange_n(&p->notif_released, 1, __ATOMIC_ACQ_REL))
		return;
	/* killed, not answered: SIGKILL ends N whatever its state, stopped
	 * by someone outside too, and needs no notification of its (a grow
	 * waiting for N's next one then sees the listener hang up); by its
	 * pidfd, so that no other process that got its pid is reached */
	if (p->notif_pidfd >= 0 &&
	    syscall(SYS_pidfd_send_signal, p->notif_pidfd, SIGKILL, NULL, 0) == 0)
		return;
	/* no pidfd of N (B out of descriptors at its start): answered, which
	 * ends it unless it is stopped */
	pthread_mutex_lock(&fds_lock);
	struct seccomp_notif_resp a = { .id = p->notif_id };
	ioctl(p->notif_fd, SECCOMP_IOCTL_NOTIF_SEND, &a);
	pthread_mutex_unlock(&fds_lock);
}
