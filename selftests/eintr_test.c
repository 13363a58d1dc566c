/* One file over 700 lines: one scenario runner (set-up, the call, the signal, the
 * release, native against sandboxed) that its table of blocking calls all go through. */
/* Every blocking call a sandboxed thread makes is interruptible as the
 * kernel's own: a signal for the thread ends it with EINTR, or
 * restarts it when the handler is SA_RESTART and the call is one the
 * kernel restarts (man 7 signal).
 *
 * Each test runs one scenario twice, natively in a child and sandboxed in
 * another, and compares: the call's result and errno, how many times the
 * handler ran, and for the sleeps the remaining time they wrote.  The
 * parent sets up what the call blocks on (a full socket, an empty pipe, a
 * lock it holds...) before the fork, waits until a task of the child is
 * asleep in the very call (/proc/PID/task/TID/syscall: its number and
 * first argument; sandboxed it may be the trusted thread that makes it),
 * sends SIGUSR1 with tgkill, waits for the handler (and, for a restarted
 * call, until the call sleeps again), and then releases the call so that
 * a restarted one completes.  No sleeps sized by guess (pace.h).  A call that neither ends nor restarts fails the
 * test by its timeout instead of hanging the suite.
 *
 * accept and accept4 need a policy that allows them (the default refuses
 * every socket call but socketpair): the default with both allowed without
 * an address (arg1 == 0, arg2 == 0: registers only, T's call).  The opens
 * of a FIFO are the trusted process's calls (the path is checked against a
 * read grant of the FIFO's directory), which T then makes from B's
 * verdict. */
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/select.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <kselftest_harness.h>
#include "selftests/sandbox_util.h"
#include "selftests/pace.h"

#define SLEEP_S 5

/* what the child reports (a shared page) */
struct report {
	volatile int ready;     /* the child is about to make the call (expect) */
	int started;            /* sandpit_start's result (sandboxed runs) */
	long ret;
	int err;
	volatile int handled;   /* the handler's runs */
	long rem_ns;            /* nanosleep's remaining time, -1 if not written */
	pid_t grandchild;       /* wait4's child */
	uint32_t word;          /* the futex */
	volatile int finished;  /* the call returned */
	long nrs[4];            /* the call as a task sleeps in it: its numbers */
	long arg0;              /* and its first argument, -1 for any */
};

/* what the parent set up, inherited by the child */
struct res {
	int fd[2];      /* a socket pair or a pipe */
	int ep;         /* epoll on fd[0] */
	int lock_fd;    /* the parent's own open of the lock file */
	int lock_other; /* a second open of it, for the child */
	int lsock;      /* a listening AF_UNIX socket */
	int peer;       /* the parent's end of what released the call */
	char dir[64];   /* a directory of the test's own, or "" */
	char name[96];  /* the socket or the FIFO in it */
	char policy[128]; /* the policy file in it, or "" for the default */
	int writable;   /* dir is granted for writing too */
};

struct scenario {
	const char *name;
	void (*setup)(struct res *);
	void (*pre)(struct report *);                  /* before sandpit_start */
	void (*call)(struct res *, struct report *);   /* the blocking call */
	void (*release)(struct res *, struct report *); /* let a restarted call finish */
};

static struct report *rep;

extern const char sandpit_default_policy[];
extern const uint64_t sandpit_default_policy_len;

static void on_usr1(int sig)
{
	(void)sig;
	rep->handled++;
}

/* ---- set-ups and releases */

static void nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void drain(int fd)
{
	char buf[4096];
	nonblock(fd);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

static void setup_socketpair(struct res *r)
{
	socketpair(AF_UNIX, SOCK_STREAM, 0, r->fd);
}

static void setup_full_socketpair(struct res *r)
{
	static char buf[4096];
	setup_socketpair(r);
	while (send(r->fd[0], buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	while (send(r->fd[0], buf, 1, MSG_DONTWAIT) > 0)
		;
}

static void setup_pipe(struct res *r)
{
	if (pipe(r->fd) < 0)
		r->fd[0] = r->fd[1] = -1;
}

static void setup_full_pipe(struct res *r)
{
	static char buf[4096];
	setup_pipe(r);
	nonblock(r->fd[1]);
	while (write(r->fd[1], buf, sizeof(buf)) > 0)
		;
	while (write(r->fd[1], buf, 1) > 0)
		;
	fcntl(r->fd[1], F_SETFL, fcntl(r->fd[1], F_GETFL) & ~O_NONBLOCK);
}

static void setup_epoll(struct res *r)
{
	setup_pipe(r);
	r->ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN };
	epoll_ctl(r->ep, EPOLL_CTL_ADD, r->fd[0], &ev);
}

static void setup_locked(struct res *r)
{
	char path[] = "/tmp/sandpit-eintr-XXXXXX";
	r->lock_fd = mkstemp(path);
	r->lock_other = open(path, O_RDWR);
	unlink(path);
}

static void setup_flocked(struct res *r)
{
	setup_locked(r);
	flock(r->lock_fd, LOCK_EX);
}

static void setup_posix_locked(struct res *r)
{
	setup_locked(r);
	struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	fcntl(r->lock_fd, F_SETLK, &l);
}

/* the child's wait status, or -2 (killed) if it has not ended in 10 s */
static int wait_or_kill(pid_t pid)
{
	int st;
	for (int i = 0; i < 1000; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -2;
}

static void make_dir(struct res *r)
{
	strcpy(r->dir, "/tmp/sandpit-eintr-XXXXXX");
	if (!mkdtemp(r->dir))
		r->dir[0] = 0;
}

/* The default policy, with accept and accept4 allowed when they carry no
 * address: the listening socket is made before the sandbox starts. */
static void write_accept_policy(struct res *r)
{
	static const char *const drop[] = { "accept: deny(EACCES)\n", "accept4: deny(EACCES)\n" };
	size_t n = (size_t)sandpit_default_policy_len;
	char *text = malloc(n + 1);
	if (!text)
		return;
	memcpy(text, sandpit_default_policy, n);
	text[n] = 0;
	for (size_t i = 0; i < 2; i++) {
		char *hit = strstr(text, drop[i]);
		if (!hit) {
			free(text);
			return;
		}
		memmove(hit, hit + strlen(drop[i]), strlen(hit + strlen(drop[i])) + 1);
	}
	snprintf(r->policy, sizeof(r->policy), "%s/accept.policy", r->dir);
	FILE *f = fopen(r->policy, "w");
	if (f) {
		fputs(text, f);
		fputs("accept: arg1 == 0 && arg2 == 0; deny(EACCES)\n"
		      "accept4: arg1 == 0 && arg2 == 0; deny(EACCES)\n", f);
		fclose(f);
	}
	free(text);
}

static void setup_listener(struct res *r)
{
	make_dir(r);
	write_accept_policy(r);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/s", r->dir);
	snprintf(r->name, sizeof(r->name), "%s", a.sun_path);
	r->lsock = socket(AF_UNIX, SOCK_STREAM, 0);
	if (bind(r->lsock, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(r->lsock, 1) < 0) {
		close(r->lsock);
		r->lsock = -1;
	}
}

static void setup_fifo(struct res *r)
{
	make_dir(r);
	snprintf(r->name, sizeof(r->name), "%s/f", r->dir);
	if (mkfifo(r->name, 0600) < 0)
		r->name[0] = 0;
}

static void setup_fifo_writable(struct res *r)
{
	setup_fifo(r);
	r->writable = 1;
}

static void release_client(struct res *r, struct report *p)
{
	(void)p;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", r->name);
	r->peer = socket(AF_UNIX, SOCK_STREAM, 0);
	if (connect(r->peer, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(r->peer);
		r->peer = -1;
	}
}

/* the other end of the FIFO, once the child waits in its open again (a
 * non-blocking open for writing fails with ENXIO while no reader waits) */
static void release_fifo(struct res *r, struct report *p, int flags)
{
	for (int i = 0; i < 300 && r->peer < 0 && !p->finished; i++) {
		r->peer = open(r->name, flags | O_NONBLOCK | O_CLOEXEC);
		if (r->peer < 0)
			usleep(10000);
	}
}

static void release_fifo_writer(struct res *r, struct report *p)
{
	release_fifo(r, p, O_WRONLY);
}

static void release_fifo_reader(struct res *r, struct report *p)
{
	release_fifo(r, p, O_RDONLY);
}

static void release_drain_peer(struct res *r, struct report *p)
{
	(void)p;
	drain(r->fd[1]);
}

static void release_drain_pipe(struct res *r, struct report *p)
{
	(void)p;
	drain(r->fd[0]);
}

static void release_byte(struct res *r, struct report *p)
{
	(void)p;
	if (write(r->fd[1], "x", 1) != 1)
		return;
}

static void release_futex(struct res *r, struct report *p)
{
	(void)r;
	__atomic_store_n(&p->word, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &p->word, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static void release_flock(struct res *r, struct report *p)
{
	(void)p;
	flock(r->lock_fd, LOCK_UN);
}

static void release_posix_lock(struct res *r, struct report *p)
{
	(void)p;
	struct flock l = { .l_type = F_UNLCK, .l_whence = SEEK_SET };
	fcntl(r->lock_fd, F_SETLK, &l);
}

static void release_grandchild(struct res *r, struct report *p)
{
	(void)r;
	if (p->grandchild > 0)
		kill(p->grandchild, SIGKILL);
}

static void release_nothing(struct res *r, struct report *p)
{
	(void)r;
	(void)p;
}

static void pre_grandchild(struct report *p)
{
	pid_t g = fork();
	if (g == 0) {
		for (;;)
			pause();
	}
	p->grandchild = g;
}

/* ---- the calls (each records ret and errno) */

static void done(struct report *p, long r)
{
	p->ret = r;
	p->err = r < 0 ? errno : 0;
	p->finished = 1;
}

/* the call the child is about to make, as /proc shows a task asleep in
 * it (glibc's wrappers may make another number: the alternatives) */
static void expect(struct report *p, long arg0, long a, long b, long c)
{
	p->nrs[0] = a;
	p->nrs[1] = b;
	p->nrs[2] = c;
	p->nrs[3] = -1;
	p->arg0 = arg0;
	__atomic_store_n(&p->ready, 1, __ATOMIC_SEQ_CST);
}

static void call_send(struct res *r, struct report *p)
{
	expect(p, r->fd[0], SYS_sendto, SYS_sendmsg, -1);
	done(p, send(r->fd[0], "y", 1, 0));
}

static void call_recv(struct res *r, struct report *p)
{
	char c;
	expect(p, r->fd[0], SYS_recvfrom, SYS_recvmsg, -1);
	done(p, recv(r->fd[0], &c, 1, 0));
}

static void call_read(struct res *r, struct report *p)
{
	char c;
	expect(p, r->fd[0], SYS_read, -1, -1);
	done(p, read(r->fd[0], &c, 1));
}

static void call_write(struct res *r, struct report *p)
{
	expect(p, r->fd[1], SYS_write, -1, -1);
	done(p, write(r->fd[1], "y", 1));
}

static void call_epoll_wait(struct res *r, struct report *p)
{
	struct epoll_event ev;
	expect(p, r->ep, SYS_epoll_wait, SYS_epoll_pwait, SYS_epoll_pwait2);
	done(p, epoll_wait(r->ep, &ev, 1, SLEEP_S * 1000));
}

static void call_poll(struct res *r, struct report *p)
{
	struct pollfd f = { .fd = r->fd[0], .events = POLLIN };
	expect(p, (long)&f, SYS_poll, SYS_ppoll, -1);
	done(p, poll(&f, 1, SLEEP_S * 1000));
}

static void call_select(struct res *r, struct report *p)
{
	fd_set s;
	expect(p, r->fd[0] + 1, SYS_select, SYS_pselect6, -1);
	FD_ZERO(&s);
	FD_SET(r->fd[0], &s);
	struct timeval tv = { SLEEP_S, 0 };
	done(p, select(r->fd[0] + 1, &s, NULL, NULL, &tv));
}

static void call_futex(struct res *r, struct report *p)
{
	(void)r;
	expect(p, (long)&p->word, SYS_futex, -1, -1);
	done(p, syscall(SYS_futex, &p->word, FUTEX_WAIT, 0, NULL, NULL, 0));
}

static void call_nanosleep(struct res *r, struct report *p)
{
	(void)r;
	struct timespec req = { SLEEP_S, 0 }, rem = { -1, -1 };
	expect(p, CLOCK_REALTIME, SYS_clock_nanosleep, SYS_nanosleep, -1);
	done(p, nanosleep(&req, &rem));
	p->rem_ns = rem.tv_sec < 0 ? -1 : rem.tv_sec * 1000000000L + rem.tv_nsec;
}

static void call_clock_nanosleep(struct res *r, struct report *p)
{
	(void)r;
	struct timespec req = { SLEEP_S, 0 }, rem = { -1, -1 };
	expect(p, CLOCK_MONOTONIC, SYS_clock_nanosleep, -1, -1);
	/* it returns the error itself; done() also says the call ended,
	 * which ends the parent's look for it asleep */
	done(p, clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem));
	p->rem_ns = rem.tv_sec < 0 ? -1 : rem.tv_sec * 1000000000L + rem.tv_nsec;
}

static void call_wait4(struct res *r, struct report *p)
{
	(void)r;
	int st;
	expect(p, p->grandchild, SYS_wait4, SYS_waitid, -1);
	long w = wait4(p->grandchild, &st, 0, NULL);
	done(p, w < 0 ? w : w == p->grandchild); /* 1: it was the child */
}

static void call_flock(struct res *r, struct report *p)
{
	expect(p, r->lock_other, SYS_flock, -1, -1);
	done(p, flock(r->lock_other, LOCK_EX));
}

static void call_setlkw(struct res *r, struct report *p)
{
	struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	expect(p, r->lock_other, SYS_fcntl, -1, -1);
	done(p, fcntl(r->lock_other, F_SETLKW, &l));
}

/* descriptors are numbered differently in the sandbox: 1 for a new one */
static void call_accept(struct res *r, struct report *p)
{
	expect(p, r->lsock, SYS_accept, SYS_accept4, -1);
	int fd = accept(r->lsock, NULL, NULL);
	done(p, fd < 0 ? fd : 1);
}

/* 1 for a new descriptor with its close-on-exec flag */
static void call_accept4(struct res *r, struct report *p)
{
	expect(p, r->lsock, SYS_accept4, -1, -1);
	int fd = accept4(r->lsock, NULL, NULL, SOCK_CLOEXEC);
	done(p, fd < 0 ? fd : fcntl(fd, F_GETFD) == FD_CLOEXEC);
}

static void call_open_fifo_read(struct res *r, struct report *p)
{
	expect(p, -1, SYS_openat, SYS_openat2, SYS_open);
	int fd = open(r->name, O_RDONLY);
	done(p, fd < 0 ? fd : 1);
}

static void call_open_fifo_write(struct res *r, struct report *p)
{
	expect(p, -1, SYS_openat, SYS_openat2, SYS_open);
	int fd = open(r->name, O_WRONLY);
	done(p, fd < 0 ? fd : 1);
}

/* ---- running a scenario */

/* until a task of pid sleeps in the call the report names (or the call
 * returned): 1 if seen asleep.  A sandboxed open that waits for a FIFO's
 * other end is made by the trusted process (user/trusted/write_open.c): its
 * tasks are looked at too (it is this test's child: run() is its
 * subreaper); where this user may not look into B (not dumpable), the
 * request's T asleep in its wait for B's answer (a futex) stands for it. */
static int asleep_in_call(pid_t pid, struct report *p, int sandboxed)
{
	pid_t b = 0;
	for (long i = 0; i < 10000 && !p->finished; i++) {
		if (sandboxed && !b && i % 64 == 0)
			b = find_child_named("sandpit-B");
		for (int k = 0; k < 4 && p->nrs[k] >= 0; k++)
			if (pace_blocked_in(pid, p->nrs[k], p->arg0) ||
			    (b && pace_blocked_in(b, p->nrs[k], p->arg0)) ||
			    (b && !pace_can_look(b) && pace_blocked_in(pid, SYS_futex, -1)))
				return 1;
		if (i < 100)
			sched_yield();
		else
			usleep(1000);
	}
	return 0;
}

struct outcome {
	int status;     /* the child's outcome(): 0 when it reported */
	int blocked;    /* the thread was seen asleep before the signal */
	long ret;
	int err;
	int handled;
	long rem_ns;
};

static struct outcome run(const struct scenario *s, int sandboxed, int restart)
{
	struct outcome o = { .status = -1 };
	struct res r = { .fd = { -1, -1 }, .ep = -1, .lock_fd = -1, .lock_other = -1,
			 .lsock = -1, .peer = -1 };
	rep = shared_page(4096);
	if (!rep)
		return o;
	memset(rep, 0, sizeof(*rep));
	rep->rem_ns = -1;
	s->setup(&r);
	/* B, made by sandpit_start through a child that exits, is then ours */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		if (s->pre)
			s->pre(rep);
		/* the test's own directory is readable (a FIFO in it) */
		const char *grant[] = { r.dir, NULL };
		struct sandpit_options so = { .policy_file = r.policy[0] ? r.policy : NULL,
					      .allow_read = r.dir[0] ? grant : NULL,
					      .allow_write = r.writable ? grant : NULL };
		if (sandboxed && sandpit_start(&so) < 0)
			_exit(SANDBOX_START_FAILED);
		struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = restart ? SA_RESTART : 0 };
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGUSR1, &sa, NULL) < 0)
			_exit(3);
		s->call(&r, rep); /* says it is ready, and what it calls */
		_exit(0);
	}
	/* about to call, then asleep in it (a task of the child in the very
	 * call: sandboxed, its U waits for T in another) */
	for (int i = 0; i < 10000 && !rep->ready; i++)
		usleep(1000);
	o.blocked = rep->ready && asleep_in_call(pid, rep, sandboxed);
	syscall(SYS_tgkill, pid, pid, SIGUSR1);
	/* the handler ran; a call that restarts sleeps in it again before it
	 * is released (one released before would not be the restarted one) */
	for (int i = 0; i < 10000 && !rep->handled && !rep->finished; i++)
		usleep(1000);
	if (restart && rep->handled)
		asleep_in_call(pid, rep, sandboxed);
	s->release(&r, rep);
	int st = wait_or_kill(pid);
	if (rep->grandchild > 0) {
		kill(rep->grandchild, SIGKILL);
		waitpid(rep->grandchild, NULL, 0);
	}
	o.status = outcome(st);
	o.ret = rep->ret;
	o.err = rep->err;
	o.handled = rep->handled;
	o.rem_ns = rep->rem_ns;
	for (int i = 0; i < 2; i++)
		if (r.fd[i] >= 0)
			close(r.fd[i]);
	if (r.ep >= 0)
		close(r.ep);
	if (r.lock_fd >= 0)
		close(r.lock_fd);
	if (r.lock_other >= 0)
		close(r.lock_other);
	if (r.lsock >= 0)
		close(r.lsock);
	if (r.peer >= 0)
		close(r.peer);
	if (r.policy[0])
		unlink(r.policy);
	if (r.name[0])
		unlink(r.name);
	if (r.dir[0])
		rmdir(r.dir);
	munmap(rep, 4096);
	return o;
}

static void compare(struct __test_metadata *_metadata, const struct scenario *s, int restart)
{
	/* write grants need openat2, which a forced legacy kernel has not */
	if (s->setup == setup_fifo_writable && !suite_has_openat2())
		SKIP(return, "no write grants without openat2");
	struct outcome n = run(s, 0, restart);
	struct outcome b = run(s, 1, restart);
	TH_LOG("%s%s: native ret %ld errno %d handled %d rem %ld; sandboxed ret %ld errno %d handled %d rem %ld",
	       s->name, restart ? " SA_RESTART" : "", n.ret, n.err, n.handled, n.rem_ns,
	       b.ret, b.err, b.handled, b.rem_ns);
	/* the scenario ran natively: the call blocked, the handler ran once */
	ASSERT_EQ(0, n.status);
	ASSERT_EQ(1, n.blocked);
	ASSERT_EQ(1, n.handled);
	/* and sandboxed: it ended (no hang), after blocking, as natively */
	ASSERT_EQ(0, b.status);
	ASSERT_EQ(1, b.blocked);
	EXPECT_EQ(n.ret, b.ret);
	EXPECT_EQ(n.err, b.err);
	EXPECT_EQ(n.handled, b.handled);
	/* the sleeps wrote the time left: both most of SLEEP_S (the signal
	 * comes within about a second), or both not at all */
	if (n.rem_ns < 0) {
		EXPECT_EQ(-1, b.rem_ns);
	} else {
		EXPECT_GT(b.rem_ns, 0);
		EXPECT_LE(b.rem_ns, SLEEP_S * 1000000000L);
		long d = n.rem_ns - b.rem_ns;
		EXPECT_LT(d < 0 ? -d : d, 2000000000L);
	}
}

#define SCENARIO(nm, su, pr, ca, re)                                              \
	static const struct scenario sc_##nm = { #nm, su, pr, ca, re };           \
	TEST(nm) { compare(_metadata, &sc_##nm, 0); }                             \
	TEST(nm##_sa_restart) { compare(_metadata, &sc_##nm, 1); }

SCENARIO(send_full_socketpair, setup_full_socketpair, NULL, call_send, release_drain_peer)
SCENARIO(recv_empty_socketpair, setup_socketpair, NULL, call_recv, release_byte)
SCENARIO(read_empty_pipe, setup_pipe, NULL, call_read, release_byte)
SCENARIO(write_full_pipe, setup_full_pipe, NULL, call_write, release_drain_pipe)
SCENARIO(epoll_wait_pipe, setup_epoll, NULL, call_epoll_wait, release_byte)
SCENARIO(poll_pipe, setup_pipe, NULL, call_poll, release_byte)
SCENARIO(select_pipe, setup_pipe, NULL, call_select, release_byte)
SCENARIO(futex_wait, setup_pipe, NULL, call_futex, release_futex)
SCENARIO(nanosleep_rem, setup_pipe, NULL, call_nanosleep, release_nothing)
SCENARIO(clock_nanosleep_rem, setup_pipe, NULL, call_clock_nanosleep, release_nothing)
SCENARIO(wait4_child, setup_pipe, pre_grandchild, call_wait4, release_grandchild)
SCENARIO(flock_held, setup_flocked, NULL, call_flock, release_flock)
SCENARIO(fcntl_setlkw, setup_posix_locked, NULL, call_setlkw, release_posix_lock)
SCENARIO(accept_no_client, setup_listener, NULL, call_accept, release_client)
SCENARIO(accept4_no_client, setup_listener, NULL, call_accept4, release_client)
SCENARIO(open_fifo_read_no_writer, setup_fifo, NULL, call_open_fifo_read, release_fifo_writer)
SCENARIO(open_fifo_write_no_reader, setup_fifo_writable, NULL, call_open_fifo_write, release_fifo_reader)

/* The calls the trusted process makes itself on a FIFO in a write grant
 * never wait for its other end: truncate opens it without blocking (and
 * answers EINVAL, as the kernel's truncate does for what is not a regular
 * file), chmod opens it O_PATH, mknod, rename and unlink open nothing.
 * Each answers as natively, with and without a reader holding it open. */
#define FIFO_OPS 9
struct fifo_ops {
	long ret[FIFO_OPS];
	int err[FIFO_OPS];
	volatile int done;
};

static void fifo_ops(const char *dir, struct fifo_ops *o)
{
	char f[96], g[96];
	int i = 0, rd;
	snprintf(f, sizeof(f), "%s/p", dir);
	snprintf(g, sizeof(g), "%s/q", dir);
#define OP(x) (o->ret[i] = (x), o->err[i] = o->ret[i] < 0 ? errno : 0, i++)
	OP(mkfifo(f, 0600));
	OP(truncate(f, 0));                     /* no reader */
	OP(chmod(f, 0640));
	rd = open(f, O_RDONLY | O_NONBLOCK);    /* a reader: an open for writing succeeds */
	OP(rd < 0 ? rd : 1);
	OP(truncate(f, 0));
	OP(truncate(f, 4096));
	OP(rename(f, g));
	OP(unlink(g));
	OP(rd < 0 ? rd : close(rd));
#undef OP
	o->done = 1;
}

static int run_fifo_ops(const char *dir, int sandboxed, struct fifo_ops *o)
{
	memset(o, 0, sizeof(*o));
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		const char *grant[] = { dir, NULL };
		struct sandpit_options so = { .allow_write = grant };
		if (sandboxed && sandpit_start(&so) < 0)
			_exit(SANDBOX_START_FAILED);
		fifo_ops(dir, o);
		_exit(0);
	}
	int st = wait_or_kill(pid);
	return outcome(st);
}

TEST(fifo_truncate_chmod_rename_do_not_block)
{
	struct res r = { 0 };
	if (!suite_has_openat2())
		SKIP(return, "no write grants without openat2");
	make_dir(&r);
	ASSERT_NE(0, r.dir[0]);
	struct fifo_ops *n = shared_page(4096), *b = shared_page(4096);
	ASSERT_NE(NULL, n);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, run_fifo_ops(r.dir, 0, n));
	ASSERT_EQ(1, n->done);
	/* natively: a FIFO is made, truncate says EINVAL with and without a
	 * reader, the rest succeed */
	EXPECT_EQ(0, n->ret[0]);
	EXPECT_EQ(EINVAL, n->err[1]);
	EXPECT_EQ(EINVAL, n->err[4]);
	EXPECT_EQ(1, n->ret[3]);
	ASSERT_EQ(0, run_fifo_ops(r.dir, 1, b));
	ASSERT_EQ(1, b->done);
	for (int i = 0; i < FIFO_OPS; i++) {
		EXPECT_EQ(n->ret[i], b->ret[i]) TH_LOG("op %d", i);
		EXPECT_EQ(n->err[i], b->err[i]) TH_LOG("op %d", i);
	}
	munmap(n, 4096);
	munmap(b, 4096);
	rmdir(r.dir);
}

TEST_HARNESS_MAIN
