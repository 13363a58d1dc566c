/* The notifier N (user/start/notifier.h, asm/x86_64/notifier.S). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compat/compat.h"
#include "policy/policy.h"
#include "user/start/notifier.h"

extern const struct sock_filter sandpit_notifier_filter[]; /* policy/notifier_filter.S */
extern const uint64_t sandpit_notifier_filter_len;
long sandpit_clone_notifier(const struct sock_fprog *prog, int32_t words[2]);

/* N's pid (cleared by the kernel when N ends: memory of sandpit's for as
 * long as P lives), then its listener or -errno.  Not hidden from the
 * program, which can read all of P's memory; the selftests find N by it. */
int32_t sandpit_notifier_words[2];

/* N's pid word: 0 once N has ended (the kernel clears it in N's exit,
 * whether or not N's reaper ever reaps it) */
static int n_gone(void)
{
	return !__atomic_load_n(&sandpit_notifier_words[0], __ATOMIC_ACQUIRE);
}

/* N wakes with FUTEX_WAKE_PRIVATE, all its filter lets it make.  N can be
 * killed from outside before it writes the word (nothing wakes us then):
 * the wait is cut every 10 ms to see whether N still lives.  0 once the
 * word has changed, -1 when N ended without changing it */
static int wait_while(int32_t *w, int32_t v)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };
	while (__atomic_load_n(w, __ATOMIC_ACQUIRE) == v) {
		/* N writes the word before it ends: read it again after */
		if (n_gone())
			return __atomic_load_n(w, __ATOMIC_ACQUIRE) == v ? -1 : 0;
		syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, &tick, NULL, 0);
	}
	return 0;
}

/* the kernel's wake at N's end (CLONE_CHILD_CLEARTID) is a shared one */
static void wait_gone(void)
{
	for (int32_t t; (t = __atomic_load_n(&sandpit_notifier_words[0], __ATOMIC_ACQUIRE)) != 0;)
		syscall(SYS_futex, &sandpit_notifier_words[0], FUTEX_WAIT, t, NULL, NULL, 0);
}

static void debug(const char *why, int err)
{
	if (getenv("SANDPIT_DEBUG"))
		fprintf(stderr, "sandpit: every thread slot's eventfds made at start-up: %s%s%s\n", why,
			err ? ": " : "", err ? strerror(err) : "");
}

/* whether the program can raise its soft RLIMIT_NOFILE only through B,
 * which refuses it (b_rlimit.c): setrlimit and prlimit64 each refused or
 * B's.  A policy that lets either run as it is lets the program raise its
 * limit past numbers of the block not made yet, which the kernel would
 * then hand out. */
static int limit_stays(const struct policy *pol)
{
	static const int nrs[] = { SYS_setrlimit, SYS_prlimit64 };
	for (size_t i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++) {
		const struct policy_call *pc = policy_call(pol, nrs[i]);
		if (pc && pc->cls != POLICY_DENY && pc->cls != POLICY_KILL &&
		    !(pc->cls == POLICY_PROCESS && pc->proc.kind == PK_RLIMIT))
			return 0;
	}
	return 1;
}

void start_notifier(struct start *s, const struct policy *pol, struct trusted_process_config *c)
{
	c->notif_fd = -1;
	if (!s->place.above) {
		/* below the soft limit the kernel may hand out any number of
		 * the block not yet made: all of it is made now */
		debug("the block lies below the program's RLIMIT_NOFILE", 0);
		return;
	}
	if (!limit_stays(pol)) {
		debug("the policy lets the program raise its RLIMIT_NOFILE without the trusted process", 0);
		return;
	}
	/* N is an orphan so that no wait of the program's finds it: the
	 * init of a pid namespace takes in every orphan of it (a subreaper
	 * stops being one while N is made: sandbox.c, orphans_away) */
	if (getpid() == 1) {
		debug("the program is its pid namespace's init, which takes in every orphan", 0);
		return;
	}
	if (compat_state_unprobed(COMPAT_ADDFD) != COMPAT_PRESENT) {
		debug("no SECCOMP_IOCTL_NOTIF_ADDFD (SANDPIT_KERNEL or the kernel)", 0);
		return;
	}
	/* B lets N go when P ends, which it learns from P's pidfd: N holds
	 * P's descriptor table, so P's end of T<->B never hangs up first */
	if (!compat_has(COMPAT_PIDFD)) {
		debug("no pidfd (SANDPIT_KERNEL)", 0);
		return;
	}
	struct sock_fprog prog = { .len = (unsigned short)(sandpit_notifier_filter_len / 8),
				   .filter = (struct sock_filter *)sandpit_notifier_filter };
	/* every signal blocked, glibc's own two too (its sigprocmask leaves
	 * SIGCANCEL and SIGSETXID open): N inherits the mask, and a signal
	 * N took would run a handler, perhaps the program's, in N.  N takes
	 * P's soft RLIMIT_NOFILE as start-up raised it over the block, and
	 * keeps it: the kernel checks B's numbers against N's limit, never
	 * P's, which goes back to the program's own */
	uint64_t all = ~0ull, old;
	sandpit_notifier_words[1] = INT32_MIN;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, 8);
	long x = sandpit_clone_notifier(&prog, sandpit_notifier_words);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, 8);
	if (x < 0) {
		debug("cannot clone the notifier", (int)-x);
		return;
	}
	/* X, N's maker, reaped: it has ended once N's pid is set */
	int st = 0;
	while (waitpid((pid_t)x, &st, __WALL) < 0 && errno == EINTR)
		;
	/* N sets its listener before it ends, and its pid is cleared only
	 * when it ends: neither set, N was never made */
	if (!__atomic_load_n(&sandpit_notifier_words[0], __ATOMIC_ACQUIRE) &&
	    __atomic_load_n(&sandpit_notifier_words[1], __ATOMIC_ACQUIRE) == INT32_MIN) {
		debug("cannot clone the notifier",
		      WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st) : ECHILD);
		return;
	}
	if (wait_while(&sandpit_notifier_words[1], INT32_MIN) < 0) {
		debug("the notifier ended before its filter", ESRCH);
		return;
	}
	int fd = __atomic_load_n(&sandpit_notifier_words[1], __ATOMIC_ACQUIRE);
	if (fd < 0) {
		wait_gone();
		debug("the notifier's filter", -fd);
		return;
	}
	if (fd < 3) {
		/* B keeps no descriptor under 3 (trusted_process.c) */
		int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		close(fd);
		if (moved < 0) {
			wait_gone();
			debug("the notifier's listener", errno);
			return;
		}
		fd = moved;
	}
	/* N's notification, held from now on: B answers it only when N is
	 * to end (slot_fds.c) */
	struct seccomp_notif n;
	memset(&n, 0, sizeof(n));
	int r = 0;
	/* N may be killed from outside before its getppid: then no
	 * notification ever comes (the listener's hang-up waits for N to be
	 * reaped, by a reaper that may never reap), so the wait for one is
	 * cut every 10 ms to see whether N still lives.  A notification of
	 * N's killed after the poll is taken back: the receive is ENOENT */
	for (;;) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int k = poll(&pf, 1, 10);
		if (k < 0 && errno != EINTR) {
			r = errno;
			break;
		}
		if (k > 0 && (pf.revents & POLLIN)) {
			if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &n) == 0)
				break;
			if (errno != EINTR) {
				r = errno;
				break;
			}
			continue;
		}
		if (n_gone() || (k > 0 && (pf.revents & (POLLHUP | POLLERR | POLLNVAL)))) {
			r = ESRCH;
			break;
		}
	}
	pid_t pid = __atomic_load_n(&sandpit_notifier_words[0], __ATOMIC_ACQUIRE);
	if (!r && (!pid || n.pid != (uint32_t)pid || n.data.nr != __NR_getppid))
		r = EPROTO;
	/* the probe: B's end of T<->B put again where it is */
	struct seccomp_notif_addfd a = { .id = n.id, .flags = SECCOMP_ADDFD_FLAG_SETFD,
					 .srcfd = (uint32_t)s->b_fd, .newfd = (uint32_t)s->b_fd,
					 .newfd_flags = O_CLOEXEC };
	errno = 0;
	if (!r && ioctl(fd, SECCOMP_IOCTL_NOTIF_ADDFD, &a) != s->b_fd) {
		r = errno ? errno : EPROTO;
		if (r == EINVAL || r == ENOTTY)
			compat_learned(COMPAT_ADDFD, 0);
	}
	if (r) {
		close(fd); /* N's wait ends (ENOSYS) and N with it */
		wait_gone();
		debug("SECCOMP_IOCTL_NOTIF_ADDFD", r);
		return;
	}
	compat_learned(COMPAT_ADDFD, 1);
	c->notif_fd = fd;
	c->notif_id = n.id;
	c->notif_pid = pid;
	c->slots_made = 1;
	s->n_made = s->n_held = 1;
}

void start_notifier_let_go(struct start *s, const struct trusted_process_config *c)
{
	if (s->n_held)
		close(c->notif_fd);
	s->n_held = 0;
}

void start_notifier_ended(struct start *s)
{
	if (s->n_made)
		wait_gone();
	s->n_made = 0;
}
