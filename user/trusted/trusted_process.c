/* The trusted process B (user/trusted/trusted_process.h): its start from
 * P, and its main thread.  Ordinary C with libc: B runs unsandboxed in its
 * own address space, where U cannot reach.
 *
 * B's files, from the top down: this one starts B's threads; b_serve.c's
 * servers answer each slot's requests, through the checks (b_checks.c,
 * b_rlimit.c, path_op.c, write_open.c; below them the answers, b_answer.c,
 * the resolution of paths, b_resolve.c, the memory reads of P, b_read.c,
 * and the refusals recorded, b_refusal.c); b_watch.c's watchers follow
 * each slot's threads and P; b_wait.c ends B's waits on U's behalf.  At
 * the bottom, b_state.c holds B's configuration and its record of P and
 * P's slots, and denial_log.c explains and counts refusals, calling
 * nothing of B's. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "user/trusted/b_serve.h"
#include "user/trusted/b_state.h"
#include "user/trusted/b_wait.h"
#include "user/trusted/b_watch.h"
#include "user/trusted/fs_base.h"
#include "user/trusted/slot_fds.h"
#include "user/trusted/trusted_process.h"

/* One byte from P on its socket; 0 at its end.  Its end is also P's
 * death (its pidfd): N holds P's descriptor table, so P's end of the pair
 * hangs up only once B lets N go, and B, waiting for the byte, would
 * never (P killed before it said "T next": B and N left for ever, as
 * b_watch_p knows). */
static int byte_from_p(struct b_proc *p, char *c)
{
	struct pollfd pf[2] = { { .fd = p->fd, .events = POLLIN },
				{ .fd = p->notif_fd >= 0 ? p->pidfd : -1, .events = POLLIN } };
	while (pf[1].fd >= 0) {
		int r = poll(pf, 2, -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || (pf[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			b_notifier_release(p); /* P gone (or no poll): its end hangs up */
			pf[1].fd = -1;
		} else if (pf[0].revents) {
			break;
		}
	}
	for (;;) {
		ssize_t n = read(p->fd, c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		return n == 1;
	}
}

static void __attribute__((noreturn)) run(struct b_proc *p)
{
	const struct trusted_process_config *cfg = b_cfg();
	/* B keeps only its sockets and stderr: holding P's stdin/stdout open
	 * would keep pipes from seeing their end */
	close(0);
	close(1);
	/* and the command's count of refusals (denial_log.h), if it gave one,
	 * the program's file (b_exe.c), under `sandpit run`, and the notifier
	 * thread's listener (slot_fds.c) */
	int keep[5] = { p->fd, p->pass_fd, cfg->report_fd >= 3 ? cfg->report_fd : p->fd,
			p->exe_fd >= 3 ? p->exe_fd : p->fd,
			p->notif_fd >= 3 ? p->notif_fd : p->fd };
	for (int i = 0; i < 5; i++)
		for (int j = i + 1; j < 5; j++)
			if (keep[j] < keep[i]) {
				int t = keep[i];
				keep[i] = keep[j];
				keep[j] = t;
			}
	int from = 3;
	for (int i = 0; i < 5; i++) {
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
	b_open_pidfd(p);
	b_notifier_open(p);
	p->slots[0].state = SLOT_STARTING; /* sandpit_start makes slot 0's U and T */

	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL); /* B's threads take no signals */
	/* but for the waits made on U's behalf (b_wait_begin) */
	b_wait_install();
	b_serve_init(); /* B's CPUs, its threads' stacks */
	/* slot 0's server and watcher before ready, while P patches: T finds
	 * its server waiting (a bell rung with no one waiting is rung again,
	 * a sched_yield each time), and the watcher looks at slot 0 only
	 * from P's word that T is next (below) */
	if (b_serve_start(0) < 0)
		_exit(1);
	/* ready (a failure after it ends B, which T sees as B hanging up) */
	pid_t me = getpid();
	if (write(p->fd, &me, sizeof(me)) != sizeof(me))
		_exit(1);
	if (cfg->fs_by_ptrace) {
		/* P names B its ptracer, then asks: can B stop P's thread? */
		char go;
		uint64_t base;
		if (!byte_from_p(p, &go))
			_exit(1);
		int r = fs_base_ptrace(p->pid, p->sp[0].u_tid, -1, 0, &base);
		if (write(p->fd, &r, sizeof(r)) != sizeof(r) || r < 0)
			_exit(1);
	}
	/* P has patched and clones T next (trusted_process_t_next); P's end
	 * closed instead: its start failed, and B has nothing to serve */
	char next;
	if (!byte_from_p(p, &next))
		_exit(0);
	b_watch_arm_slot0();
	if (b_thread(b_watch_p, p) != 0)
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
		if (r == 0)
			run(b_set_cfg(c));
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
		run(b_set_cfg(c));
	}
	return mid;
}

int trusted_process_check_ptrace(int fd)
{
	char go = 1;
	int r;
	/* MSG_NOSIGNAL: B gone is this call's -EPIPE, never the program's
	 * SIGPIPE (which would end it inside sandpit_start) */
	if (send(fd, &go, 1, MSG_NOSIGNAL) != 1 || read(fd, &r, sizeof(r)) != sizeof(r))
		return -EPIPE;
	return r;
}

void trusted_process_end(int fd, pid_t b)
{
	char buf[64];

	shutdown(fd, SHUT_WR);
	for (int waited = 0; waited < 100;) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int r = poll(&pf, 1, 100);
		if (r < 0 && errno != EINTR)
			return;
		if (r == 0 && ++waited == 10 && b > 0)
			kill(b, SIGKILL); /* its end still open: B is not reaped, b is B */
		if (r <= 0)
			continue;
		/* B's words (ready, the ptrace check) read and dropped */
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return; /* its end closed (or reset: closed with a word unread) */
	}
}

int trusted_process_t_next(int fd)
{
	char next = 'T';
	return send(fd, &next, 1, MSG_NOSIGNAL) == 1 ? 0 : -EPIPE; /* as above */
}

int trusted_process_reap(pid_t mid)
{
	int st;
	if (waitpid(mid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -ECHILD;
}

pid_t trusted_process_started(pid_t mid, pid_t b, int fd)
{
	pid_t got;
	int r = mid > 0 ? trusted_process_reap(mid) : 0;
	if (r < 0)
		return r;
	if (fd < 0)
		return -ECHILD;
	if (read(fd, &got, sizeof(got)) != sizeof(got) || got <= 0 || (b > 0 && got != b))
		return -ECHILD;
	return got;
}
