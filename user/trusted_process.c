/* The trusted process B.  Ordinary C with libc: B runs unsandboxed in its
 * own address space, where U cannot reach. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy/policy.h"
#include "user/trusted_process.h"

static const struct trusted_process_config *cfg;
static int pidfd = -1;

static void kill_p(void)
{
	if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) == 0)
		return;
	if (pidfd < 0)
		kill(cfg->pid, SIGKILL);
}

static void say(const char *fmt, long a)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), fmt, a);
	if (n > 0 && write(2, msg, (size_t)n) < 0)
		return;
}

/* Watch U: the kernel clears and wakes U's clear_child_tid word when U
 * ends for any reason, including strict mode's SIGKILL for a forbidden call
 * (DESIGN §9).  If P does not then exit by itself, U was killed and T is
 * left running: end P (invariant 5). */
static void *watch_u(void *arg)
{
	(void)arg;
	volatile uint32_t *ctid = &cfg->mb->ctid;
	uint32_t v;
	while ((v = __atomic_load_n(ctid, __ATOMIC_ACQUIRE)) != 0)
		syscall(SYS_futex, ctid, FUTEX_WAIT, v, NULL, NULL, 0);
	if (pidfd >= 0) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		if (poll(&p, 1, 200) == 1)
			_exit(0);
	}
	say("sandpit: sandboxed thread %ld ended without exit_group (killed by the "
	    "kernel for a system call that escaped the sandbox?); killing the process\n",
	    (long)cfg->sp->u_tid);
	kill_p();
	_exit(0);
}

/* P's end of the socket pair closes when P is gone, however it ended;
 * then B has nothing left to do. */
static void *watch_p(void *arg)
{
	(void)arg;
	struct pollfd p = { .fd = cfg->fd, .events = POLLIN };
	while (poll(&p, 1, -1) < 0 && errno == EINTR)
		;
	_exit(0);
}

static long read_string(char *buf, size_t max, uint64_t addr)
{
	size_t got = 0;
	while (got < max) {
		size_t chunk = 4096 - ((addr + got) & 4095);
		if (chunk > max - got)
			chunk = max - got;
		struct iovec local = { buf + got, chunk };
		struct iovec remote = { (void *)(uintptr_t)(addr + got), chunk };
		ssize_t n = process_vm_readv(cfg->pid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			return -EFAULT;
		char *nul = memchr(buf + got, 0, (size_t)n);
		if (nul)
			return nul - buf;
		got += (size_t)n;
	}
	return -ENAMETOOLONG;
}

static int proc_link(char *out, size_t len, const char *what)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/%d/%s", (int)cfg->pid, what);
	ssize_t n = readlink(link, out, len - 1);
	if (n < 0)
		return -errno;
	out[n] = 0;
	return out[0] == '/' ? 0 : -EACCES; /* sockets, pipes: no path to check */
}

static int in_protected(uint64_t a)
{
	const struct secure_page *sp = cfg->sp;
	for (uint64_t i = 0; i < sp->nranges && i < SM_MAX_RANGES; i++)
		if (a >= sp->ranges[i].lo && a < sp->ranges[i].hi)
			return 1;
	return 0;
}

/* A path argument: copy, resolve as the kernel will, check, and hand T the
 * resolved absolute path in S so the kernel reads exactly what was checked. */
static long check_path(const struct policy_proc_arg *pa, struct secure_page *sp)
{
	char path[PATH_MAX], base[PATH_MAX], resolved[PATH_MAX];
	long n = read_string(path, sizeof(path), sp->args[pa->path_arg]);
	if (n < 0)
		return n;
	int dirfd = pa->dirfd_arg >= 0 ? (int)sp->args[pa->dirfd_arg] : AT_FDCWD;
	long flags = pa->flags_arg >= 0 ? (long)sp->args[pa->flags_arg] : 0;
	int access = policy_proc_access(pa, sp->args);
	if (access == PA_NEVER)
		return -EACCES;

	if (n == 0) {
		/* fstatat(fd, "", AT_EMPTY_PATH) and friends act on the open fd */
		if (pa->access != PA_OPEN && pa->flags_arg >= 0 && (flags & AT_EMPTY_PATH) &&
		    access == PA_READ) {
			sp->data[0] = 0;
			sp->args[pa->path_arg] = (uint64_t)(uintptr_t)sp->data;
			return 0;
		}
		return -ENOENT;
	}
	int r;
	if (path[0] == '/')
		r = 0, strcpy(base, "/");
	else if (dirfd == AT_FDCWD)
		r = proc_link(base, sizeof(base), "cwd");
	else {
		char what[32];
		snprintf(what, sizeof(what), "fd/%d", dirfd);
		r = proc_link(base, sizeof(base), what);
	}
	if (r < 0)
		return r == -ENOENT ? -EBADF : r;
	int nofollow = policy_proc_follow(pa, sp->args) ? 0 : PATH_NOFOLLOW;
	r = path_resolve(cfg->pid, base, path, nofollow, resolved, sizeof(resolved));
	if (r < 0)
		return r;
	r = policy_check_path(cfg->policy, cfg->pid, resolved, access);
	if (r < 0)
		return r;
	size_t len = strlen(resolved) + 1;
	if (len > SP_DATA_SIZE)
		return -ENAMETOOLONG;
	memcpy(sp->data, resolved, len);
	sp->args[pa->path_arg] = (uint64_t)(uintptr_t)sp->data;
	if (pa->dirfd_arg >= 0)
		sp->args[pa->dirfd_arg] = (uint64_t)(int64_t)AT_FDCWD;
	return 0;
}

/* rt_sigaction(sig, act, oact, size): the struct is copied into S; sandpit's
 * own SIGSEGV is not U's to change, and no handler or restorer may point
 * into sandpit's protected memory (invariant 1). */
static long check_sigaction(struct secure_page *sp)
{
	struct { uint64_t handler, flags, restorer, mask; } act;
	int sig = (int)sp->args[0];
	if (sp->args[3] != 8)
		return -EINVAL;
	if (!sp->args[1])
		return 0;
	if (sig == SIGSEGV)
		return -EPERM;
	struct iovec local = { &act, sizeof(act) };
	struct iovec remote = { (void *)(uintptr_t)sp->args[1], sizeof(act) };
	if (process_vm_readv(cfg->pid, &local, 1, &remote, 1, 0) != sizeof(act))
		return -EFAULT;
	if ((act.handler > 1 && in_protected(act.handler)) ||
	    ((act.flags & SANDPIT_SA_RESTORER) && in_protected(act.restorer)))
		return -EPERM;
	memcpy(sp->data, &act, sizeof(act));
	sp->args[1] = (uint64_t)(uintptr_t)sp->data;
	return 0;
}

long trusted_process_check(const struct trusted_process_config *c, const struct b_request *req)
{
	struct secure_page *sp = c->sp;
	cfg = c;
	sp->nr = req->nr;
	memcpy(sp->args, req->args, sizeof(sp->args));
	const struct policy_proc_arg *pa = policy_proc_arg(c->policy, (int)req->nr);
	if (!pa)
		return -ENOSYS;
	switch (pa->kind) {
	case PK_PATH:
		return check_path(pa, sp);
	case PK_SIGACTION:
		return check_sigaction(sp);
	default:
		return -ENOSYS;
	}
}

/* B waits on its doorbell.  FUTEX_WAIT returns 0 only when someone issued
 * FUTEX_WAKE on it, and only T can (U is in strict mode; T refuses futex on
 * sandpit's memory): so every 0 is a genuine request from T.  A change of the
 * word by U only makes the wait return EAGAIN. */
static void serve(void)
{
	struct secure_page *sp = cfg->sp;
	uint32_t *bell = &cfg->mb->b_bell;
	for (;;) {
		__atomic_store_n(&sp->b_cpu, ~0u, __ATOMIC_RELAXED);
		uint32_t v = __atomic_load_n(bell, __ATOMIC_RELAXED);
		if (syscall(SYS_futex, bell, FUTEX_WAIT, v, NULL, NULL, 0) != 0)
			continue;
		__atomic_store_n(&sp->b_cpu, (uint32_t)sched_getcpu(), __ATOMIC_RELAXED);
		struct b_request req;
		memcpy(&req, (const void *)&cfg->mb->payload, sizeof(req)); /* one copy */
		long v2 = trusted_process_check(cfg, &req);
		sp->verdict = v2;
		__atomic_store_n(&sp->seq, sp->seq + 1, __ATOMIC_RELEASE);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(&cfg->mb->t_wait_b, __ATOMIC_RELAXED))
			syscall(SYS_futex, &sp->seq, FUTEX_WAKE, 1, NULL, NULL, 0);
	}
}

static void __attribute__((noreturn)) run(void)
{
	/* B keeps only its socket and stderr: holding P's stdin/stdout open
	 * would keep pipes from seeing their end */
	close(0);
	close(1);
	for (int fd = 3; fd <= cfg->spare_fd_hi; fd++)
		if (fd != cfg->fd)
			close(fd);
	syscall(SYS_close_range, cfg->spare_fd_hi + 1, ~0u, 0);
	prctl(PR_SET_NAME, "sandpit-B");
	prctl(PR_SET_DUMPABLE, 0);
	signal(SIGPIPE, SIG_IGN);
	pidfd = (int)syscall(SYS_pidfd_open, cfg->pid, 0);
	pthread_t w;
	if (pthread_create(&w, NULL, watch_u, NULL) != 0 ||
	    pthread_create(&w, NULL, watch_p, NULL) != 0)
		_exit(1);
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL); /* the watcher was created first */
	pid_t me = getpid();
	if (write(cfg->fd, &me, sizeof(me)) != sizeof(me))
		_exit(1);
	serve();
	_exit(0);
}

pid_t trusted_process_spawn(const struct trusted_process_config *c)
{
	pid_t mid = fork();
	if (mid < 0)
		return -errno;
	if (mid == 0) {
		if (fork() != 0)
			_exit(0);
		cfg = c;
		run();
	}
	int st;
	if (waitpid(mid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -ECHILD;
}
