/* rev18: an outside review of the notifier N as an orphan (commit
 * 7f90017): P clones X (CLONE_VM|CLONE_FILES, no exit signal), X clones N
 * and exits, P reaps X.  Each test counts the attempts that reached the
 * call or the race and asserts the precise outcome. */
#include <errno.h>
#include <fcntl.h>
#include <linux/ioprio.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "user/layout/secure_mem.h"
#include "block_util.h"
#include "kernel_probe.h"

FIXTURE(r18) {};
FIXTURE_SETUP(r18) {}
FIXTURE_TEARDOWN(r18) {}

static int soft_1024(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_max < SM_FD_TOP + 1)
		return 0;
	rl.rlim_cur = 1024;
	return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

static int want_n(void)
{
	return kernel_has_addfd() && !kernel_addfd_forced_off();
}

static void *ret_one(void *a)
{
	(void)a;
	return (void *)1L;
}

/* makes n threads, one at a time (each a slot used), joined: how many ran */
static long threads(int n)
{
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	long ok = 0;
	for (int i = 0; i < n; i++) {
		pthread_t t;
		void *rv = NULL;
		if (pthread_create(&t, &at, ret_one, NULL))
			continue;
		ok += !pthread_join(t, &rv) && rv == (void *)1L;
	}
	return ok;
}

/* ---- 1. P, the init of a pid namespace, or a subreaper ----
 * FOUND at 7f90017 (these tests failed in both modes): X's end gave N to
 * the nearest subreaper or the namespace's init, which can be P itself,
 * and the kernel sets N's exit signal to SIGCHLD as it takes N in, so
 * even a plain wait4(-1, 0) saw N (0 with WNOHANG, a blocking one never
 * ended while N lived); B, made from the library through an intermediate
 * child the same way, was found just the same.  Now a subreaper is none
 * while sandpit's orphans are made (sandbox.c orphans_away), and a
 * namespace's init gets no N; B stays its child, which no process can
 * change (every orphan of a namespace is its init's: docs/LIMITS.md). */

struct ns_out {
	long started, ntid, my_pid;
	long w4all_r, w4all_e;      /* wait4(-1, WNOHANG|__WALL) */
	long w4_r, w4_e;            /* wait4(-1, WNOHANG): N's exit signal SIGCHLD once reparented */
	long w4n_r, w4n_e;          /* wait4(N, WNOHANG|__WALL) */
	long threads_ok;
	long blocking_done, blocking_r, blocking_e;
};
static struct ns_out *nso;

static void *blocking_wait(void *a)
{
	(void)a;
	int st;
	errno = 0;
	long r = wait4(-1, &st, __WALL, NULL);
	nso->blocking_e = errno;
	nso->blocking_r = r;
	__atomic_store_n(&nso->blocking_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int ns_body(struct ns_out *o)
{
	nso = o;
	struct sandpit_options opts = { .mode = suite_mode() };
	if (sandpit_start(&opts) < 0)
		return SANDBOX_START_FAILED;
	o->started = 1;
	o->my_pid = getpid();
	o->ntid = notifier_tid();
	int st;
	errno = 0;
	o->w4all_r = wait4(-1, &st, WNOHANG | __WALL, NULL);
	o->w4all_e = errno;
	errno = 0;
	o->w4_r = wait4(-1, &st, WNOHANG, NULL);
	o->w4_e = errno;
	errno = 0;
	o->w4n_r = o->ntid ? wait4((pid_t)o->ntid, &st, WNOHANG | __WALL, NULL) : -1;
	o->w4n_e = o->ntid ? errno : ECHILD;
	o->threads_ok = threads(20);
	pthread_t t;
	if (pthread_create(&t, NULL, blocking_wait, NULL))
		return 90;
	for (int i = 0; i < 2000 && !__atomic_load_n(&o->blocking_done, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	return 0;
}

/* P runs as pid 1 of a new pid namespace (unshare(CLONE_NEWPID), then a
 * fork), as a container's init would.  X's end reparents N to the
 * namespace's reaper, which is P itself, and the kernel sets N's exit
 * signal to SIGCHLD as it does so: every wait of the program's for any
 * child should still be ECHILD, as natively */
/* runs ns_body as pid 1 of a new pid namespace (unshare(CLONE_NEWPID),
 * then a fork): its outcome */
static int pidns_run(struct ns_out *o)
{
	fflush(NULL);
	pid_t c = fork();
	if (c < 0)
		return -1;
	if (c == 0) {
		if (unshare(CLONE_NEWPID | CLONE_NEWNS))
			_exit(80);
		pid_t g = fork();
		if (g < 0)
			_exit(81);
		if (g == 0) {
			/* the namespace's own /proc, as `unshare --mount-proc`:
			 * B reads P's threads there by P's pid in it */
			if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
			    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
				_exit(83);
			_exit(ns_body(o));
		}
		int st;
		if (waitpid(g, &st, 0) != g)
			_exit(82);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st));
	}
	int st;
	if (waitpid(c, &st, 0) != c)
		return -1;
	return outcome(st);
}

#define NS_LOG(r)                                                                                  \
	TH_LOG("outcome %d; pid in ns %ld N %ld; wait4 __WALL %ld/%ld; wait4 0 %ld/%ld; N's pid "   \
	       "%ld/%ld; threads %ld; blocking wait ended %ld (%ld/%ld)",                           \
	       r, o->my_pid, o->ntid, o->w4all_r, o->w4all_e, o->w4_r, o->w4_e, o->w4n_r, o->w4n_e, \
	       o->threads_ok, o->blocking_done, o->blocking_r, o->blocking_e)

/* P runs as pid 1 of a new pid namespace, as a container's init would,
 * with N possible (soft RLIMIT_NOFILE 1024): start-up makes none, since
 * N would be P's child; B is P's child (the documented limit): a wait for
 * any child with WNOHANG answers 0, and a wait for N's pid (none) ECHILD */
TEST_F_TIMEOUT(r18, pid_namespace_init_program_gets_no_notifier_b_its_child, 60)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	if (geteuid())
		SKIP(return, "needs root for CLONE_NEWPID");
	struct ns_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	int r = pidns_run(o);
	NS_LOG(r);
	/* the case ran: P was pid 1, where N could have been */
	EXPECT_EQ(1, o->started);
	EXPECT_EQ(1, o->my_pid);
	EXPECT_EQ(0, o->ntid);
	/* B, alive: the one child the program's waits find */
	EXPECT_EQ(0, o->w4all_r);
	EXPECT_EQ(0, o->w4_r);
	EXPECT_EQ(-1, o->w4n_r);
	EXPECT_EQ(ECHILD, o->w4n_e);
	EXPECT_EQ(20, o->threads_ok);
	EXPECT_EQ(0, r);
}

/* A library-mode program that made itself a child subreaper
 * (PR_SET_CHILD_SUBREAPER) before sandpit_start, as a service manager or
 * a test runner does: X's end reparents N to the nearest subreaper
 * ancestor of X's, P itself.  Its waits should still be ECHILD */
TEST_F_TIMEOUT(r18, subreaper_program_waits_never_see_the_notifier, 60)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	struct ns_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	fflush(NULL);
	pid_t c = fork();
	ASSERT_LE(0, c);
	if (c == 0) {
		if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
			_exit(80);
		_exit(ns_body(o));
	}
	int st;
	ASSERT_EQ(c, waitpid(c, &st, 0));
	TH_LOG("status %d; N %ld; wait4 __WALL %ld/%ld; wait4 0 %ld/%ld; N's pid %ld/%ld; "
	       "threads %ld; blocking wait ended %ld (%ld/%ld)",
	       outcome(st), o->ntid, o->w4all_r, o->w4all_e, o->w4_r, o->w4_e, o->w4n_r, o->w4n_e,
	       o->threads_ok, o->blocking_done, o->blocking_r, o->blocking_e);
	ASSERT_EQ(0, outcome(st));
	EXPECT_EQ(1, o->started);
	EXPECT_EQ(want_n(), o->ntid != 0);
	EXPECT_EQ(20, o->threads_ok);
	EXPECT_EQ(-1, o->w4all_r);
	EXPECT_EQ(ECHILD, o->w4all_e);
	EXPECT_EQ(-1, o->w4_r);
	EXPECT_EQ(ECHILD, o->w4_e);
	EXPECT_EQ(-1, o->w4n_r);
	EXPECT_EQ(ECHILD, o->w4n_e);
	EXPECT_EQ(1, o->blocking_done);
	EXPECT_EQ(-1, o->blocking_r);
	EXPECT_EQ(ECHILD, o->blocking_e);
}

/* the same subreaper program where there is no N (soft RLIMIT_NOFILE at the
 * hard one): a control that shows whether B, made the same way (through an
 * intermediate that exits), is found by the program's waits too */
TEST_F_TIMEOUT(r18, subreaper_program_without_notifier_control, 60)
{
	struct rlimit rl;
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	rl.rlim_cur = rl.rlim_max;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	struct ns_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	fflush(NULL);
	pid_t c = fork();
	ASSERT_LE(0, c);
	if (c == 0) {
		if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
			_exit(80);
		_exit(ns_body(o));
	}
	int st;
	ASSERT_EQ(c, waitpid(c, &st, 0));
	int r = outcome(st);
	NS_LOG(r);
	ASSERT_EQ(0, r);
	EXPECT_EQ(1, o->started);
	EXPECT_EQ(0, o->ntid);
	EXPECT_EQ(20, o->threads_ok);
	EXPECT_EQ(-1, o->w4all_r);
	EXPECT_EQ(ECHILD, o->w4all_e);
	EXPECT_EQ(-1, o->w4_r);
	EXPECT_EQ(ECHILD, o->w4_e);
	EXPECT_EQ(1, o->blocking_done);
	EXPECT_EQ(ECHILD, o->blocking_e);
}

/* ---- 2. a subreaper parent that reaps everything with __WALL ---- */

struct sr_out {
	long ntid, threads_ok, wrote;
};

/* S (a subreaper) forks P, sandboxed, which makes 40 threads (slots made
 * by N), writes a line and ends with 7.  S meanwhile loops
 * wait4(-1, __WALL) as a service manager does: it finds P and, once P has
 * ended and B let N go, N too.  P's status must be 7, P's stdout must
 * reach EOF, and N (S's child once X ended) must end: S reaps it */
TEST_F_TIMEOUT(r18, subreaper_parent_reaping_with___WALL_sees_p_7_eof_and_reaps_n, 60)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	struct sr_out *o = shared_page(sizeof(*o));
	long *rep = shared_page(4096); /* [0] P's status, [1] N reaped, [2] EOF, [3] reaped others, [4] N's ppid */
	ASSERT_NE(NULL, o);
	ASSERT_NE(NULL, rep);
	fflush(NULL);
	pid_t s = fork();
	ASSERT_LE(0, s);
	if (s == 0) {
		if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
			_exit(80);
		int pfd[2];
		if (pipe(pfd))
			_exit(81);
		pid_t p = fork();
		if (p < 0)
			_exit(82);
		if (p == 0) {
			close(pfd[0]);
			dup2(pfd[1], 1);
			close(pfd[1]);
			struct sandpit_options opts = { .mode = suite_mode() };
			if (sandpit_start(&opts) < 0)
				_exit(SANDBOX_START_FAILED);
			o->ntid = notifier_tid();
			o->threads_ok = threads(40);
			o->wrote = write(1, "hello\n", 6);
			usleep(200000);
			_exit(7);
		}
		close(pfd[1]);
		/* N's pid as S sees it (same namespace), read while P lives */
		long n = 0;
		for (int i = 0; i < 500 && !n; i++) {
			n = notifier_pid_of(p);
			if (!n)
				usleep(2000);
		}
		rep[4] = n ? proc_ppid(n) : -1;
		rep[5] = n;
		rep[6] = getpid();
		int p_done = 0, n_done = !n;
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		char buf[64];
		long got = 0;
		for (;;) {
			int st;
			pid_t w = wait4(-1, &st, WNOHANG | __WALL, NULL);
			if (w == p) {
				rep[0] = outcome(st);
				p_done = 1;
			} else if (w > 0 && w == n) {
				rep[1] = 1;
				n_done = 1;
			} else if (w > 0) {
				rep[3]++;
			}
			struct pollfd pf = { pfd[0], POLLIN, 0 };
			if (!rep[2] && poll(&pf, 1, 0) == 1) {
				ssize_t r = read(pfd[0], buf, sizeof(buf));
				if (r == 0)
					rep[2] = 1;
				else if (r > 0)
					got += r;
			}
			if (p_done && n_done && rep[2])
				break;
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > 20)
				break;
			usleep(1000);
		}
		rep[7] = got;
		_exit(0);
	}
	int st;
	ASSERT_EQ(s, waitpid(s, &st, 0));
	TH_LOG("S %ld; N %ld (inside %ld), N's parent %ld; P status %ld; N reaped %ld; EOF %ld; "
	       "others reaped %ld; bytes %ld; threads %ld",
	       rep[6], rep[5], o->ntid, rep[4], rep[0], rep[1], rep[2], rep[3], rep[7], o->threads_ok);
	ASSERT_EQ(0, outcome(st));
	EXPECT_EQ(want_n(), o->ntid != 0);
	EXPECT_EQ(40, o->threads_ok);
	EXPECT_EQ(6, o->wrote);
	EXPECT_EQ(7, rep[0]);
	EXPECT_EQ(1, rep[2]);
	EXPECT_EQ(6, rep[7]);
	if (o->ntid) {
		/* the attack ran: N was S's child, and S reaped it */
		EXPECT_EQ(rep[6], rep[4]);
		EXPECT_EQ(1, rep[1]);
	}
}

/* ---- 3. calls on N's pid from inside the sandbox ---- */

#define NCALLS 20
static const char *const call_name[NCALLS] = {
	"pidfd_open", "pidfd_send_signal(SIGKILL)", "process_vm_readv", "kcmp(KCMP_FILES)",
	"sched_setaffinity", "sched_getaffinity", "setpriority(19)", "getpriority",
	"ioprio_set(IDLE)", "ioprio_get", "getpgid", "setpgid", "getsid", "kill(SIGKILL)",
	"sched_setscheduler(IDLE)", "waitid(P_PID, N, __WALL)", "get_robust_list",
	"kcmp(KCMP_VM)", "sched_getscheduler", "kill(SIGSTOP)",
};

struct c_out {
	long ntid, made, n_after, threads_ok;
	long r[NCALLS], e[NCALLS];
};

static int body_calls(void *a)
{
	struct c_out *o = a;
	long n = o->ntid = notifier_tid();
	if (!n)
		return 0;
	pid_t me = getpid();
	cpu_set_t cs;
	char buf[16];
	struct iovec l = { buf, sizeof(buf) }, rv = { (void *)&sandpit_notifier_words, 8 };
	siginfo_t si;
	void *head;
	size_t len;
	for (int i = 0; i < NCALLS; i++) {
		long r = -1;
		errno = 0;
		switch (i) {
		case 0: r = syscall(SYS_pidfd_open, n, 0); break;
		case 1: r = o->r[0] >= 0 ? syscall(SYS_pidfd_send_signal, (int)o->r[0], SIGKILL, NULL, 0)
					 : syscall(SYS_pidfd_send_signal, 3, SIGKILL, NULL, 0);
			break;
		case 2: r = syscall(SYS_process_vm_readv, n, &l, 1, &rv, 1, 0); break;
		case 3: r = syscall(SYS_kcmp, me, n, KCMP_FILES, 0, 0); break;
		case 4: CPU_ZERO(&cs); CPU_SET(0, &cs);
			r = syscall(SYS_sched_setaffinity, n, sizeof(cs), &cs);
			break;
		case 5: r = syscall(SYS_sched_getaffinity, n, sizeof(cs), &cs); break;
		case 6: r = syscall(SYS_setpriority, PRIO_PROCESS, n, 19); break;
		case 7: r = syscall(SYS_getpriority, PRIO_PROCESS, n); break;
		case 8: r = syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, n,
				    IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0));
			break;
		case 9: r = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, n); break;
		case 10: r = syscall(SYS_getpgid, n); break;
		case 11: r = syscall(SYS_setpgid, n, n); break;
		case 12: r = syscall(SYS_getsid, n); break;
		case 13: r = syscall(SYS_kill, n, SIGKILL); break;
		case 14: { struct sched_param sp = { 0 };
			r = syscall(SYS_sched_setscheduler, n, SCHED_IDLE, &sp); }
			break;
		case 15: memset(&si, 0, sizeof(si));
			r = syscall(SYS_waitid, P_PID, n, &si, WEXITED | WNOHANG | __WALL, NULL);
			break;
		case 16: r = syscall(SYS_get_robust_list, n, &head, &len); break;
		case 17: r = syscall(SYS_kcmp, me, n, KCMP_VM, 0, 0); break;
		case 18: r = syscall(SYS_sched_getscheduler, n); break;
		case 19: r = syscall(SYS_kill, n, SIGSTOP); break;
		}
		o->r[i] = r;
		o->e[i] = r < 0 ? errno : 0;
		o->made++;
	}
	o->threads_ok = threads(20);
	o->n_after = notifier_tid();
	return 0;
}

/* From inside the sandbox, with N's pid read in sandpit's memory: 20
 * calls that name a process by pid (those rev16/rev17 made, kill with 0,
 * tgkill, ptrace, process_vm_writev, prlimit64, left out).  Each is
 * refused, or harmless: N still lives after, and 20 threads (each slot
 * made through N) are made */
TEST_F_TIMEOUT(r18, calls_naming_the_notifiers_pid_refused_or_harmless, 60)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	struct c_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	struct sandpit_options opts = { .mode = suite_mode() };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_calls, o, &opts, 30)));
	EXPECT_EQ(want_n(), o->ntid != 0);
	if (!o->ntid)
		return;
	for (int i = 0; i < NCALLS; i++)
		TH_LOG("%-28s %ld errno %ld", call_name[i], o->r[i], o->e[i]);
	TH_LOG("calls made %ld; threads %ld; N %ld after %ld", o->made, o->threads_ok, o->ntid, o->n_after);
	EXPECT_EQ(NCALLS, o->made);
	EXPECT_EQ(20, o->threads_ok);
	EXPECT_EQ(o->ntid, o->n_after);
	/* refused: EPERM; pidfd_send_signal with no pidfd (fd 3, P's end of
	 * T<->B... no pidfd): EBADF; waitid: ECHILD (N no child); reads of
	 * N's scheduling, priority, group and session: allowed, as for any
	 * pid (harmless: they change nothing) */
	static const long want_e[NCALLS] = {
		EPERM, EBADF, EPERM, EPERM, EPERM, 0, EPERM, 0, EPERM, 0,
		0, EPERM, 0, EPERM, EPERM, ECHILD, EPERM, EPERM, 0, EPERM,
	};
	for (int i = 0; i < NCALLS; i++) {
		EXPECT_EQ(want_e[i], o->e[i]) TH_LOG("%s", call_name[i]);
		if (want_e[i]) {
			EXPECT_EQ(-1, o->r[i]) TH_LOG("%s", call_name[i]);
		} else {
			EXPECT_LE(0, o->r[i]) TH_LOG("%s", call_name[i]);
		}
	}
}

/* ---- 4. many starts from one parent ---- */

struct many_out {
	long ntid, threads_ok;
};

static int body_many(void *a)
{
	struct many_out *o = a;
	o->ntid = notifier_tid();
	o->threads_ok = threads(2);
	return 0;
}

static long fds_open(void)
{
	return held_in(0, 1 << 20);
}

/* 300 library-mode sandboxed children in a row from one parent, each
 * making 2 threads (slots through N): after each, the parent has no child
 * left to wait for (no X or N zombie: wait4(-1, WNOHANG|__WALL) ECHILD),
 * that child's N has ended within 3 s, and the parent's descriptors are
 * as before */
TEST_F_TIMEOUT(r18, starts_300_in_a_row_no_x_or_n_left_no_descriptor_leaked, 600)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	struct many_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	struct sandpit_options opts = { .mode = suite_mode() };
	long fds0 = fds_open(), ok = 0, had_n = 0, n_gone = 0, no_child = 0, slow = 0, zombies = 0;
	for (int i = 0; i < 300; i++) {
		memset(o, 0, sizeof(*o));
		ok += outcome(run_sandboxed_opts(body_many, o, &opts, 30)) == 0 && o->threads_ok == 2;
		int st;
		errno = 0;
		no_child += wait4(-1, &st, WNOHANG | __WALL, NULL) == -1 && errno == ECHILD;
		if (!o->ntid)
			continue;
		had_n++;
		/* N's pid, in the parent's namespace too: gone, a zombie of
		 * its reaper's (N has ended: whether the reaper reaps is its
		 * own affair), or another process's */
		char path[64], buf[256];
		snprintf(path, sizeof(path), "/proc/%ld/stat", o->ntid);
		for (int k = 0; k < 300; k++) {
			int f = open(path, O_RDONLY);
			ssize_t m = f < 0 ? -1 : read(f, buf, sizeof(buf) - 1);
			if (f >= 0)
				close(f);
			char *rp = m > 0 ? (buf[m] = 0, strrchr(buf, ')')) : NULL;
			int is_n = rp && strstr(buf, "(sandpit-N)");
			if (!is_n || rp[2] == 'Z') {
				n_gone++;
				zombies += is_n;
				slow += k > 10;
				break;
			}
			usleep(10000);
		}
	}
	long fds1 = fds_open();
	TH_LOG("runs ok %ld; with N %ld; N ended within 3 s %ld (after 100 ms %ld; a zombie "
	       "of its reaper's %ld); no child left %ld; descriptors %ld -> %ld",
	       ok, had_n, n_gone, slow, zombies, no_child, fds0, fds1);
	EXPECT_EQ(300, ok);
	EXPECT_EQ(want_n() ? 300 : 0, had_n);
	EXPECT_EQ(had_n, n_gone);
	EXPECT_EQ(300, no_child);
	EXPECT_EQ(fds0, fds1);
}

/* ---- 5. X or N killed or stopped from outside during start-up ---- */

struct k_out {
	long started, ntid, held, unsandboxed, threads_ok, create_err, n_after;
};

#define BLOCK_LO (SM_FD_TOP - SM_NFDS)
#define BLOCK_HI (SM_FD_TOP - 1)

/* P: starts the sandbox, then checks it is in one (a file it may not
 * create), what its block holds, and makes 5 threads */
static int body_k(struct k_out *o, const char *probe)
{
	struct sandpit_options opts = { .mode = suite_mode() };
	if (sandpit_start(&opts) < 0)
		return SANDBOX_START_FAILED;
	o->started = 1;
	o->ntid = notifier_tid();
	o->held = held_in(BLOCK_LO, BLOCK_HI);
	int f = open(probe, O_CREAT | O_WRONLY, 0600);
	o->unsandboxed = f >= 0;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	for (int i = 0; i < 5; i++) {
		pthread_t t;
		void *rv = NULL;
		int e = pthread_create(&t, &at, ret_one, NULL);
		if (e) {
			o->create_err = o->create_err ? o->create_err : e;
			continue;
		}
		o->threads_ok += !pthread_join(t, &rv) && rv == (void *)1L;
	}
	o->n_after = notifier_tid();
	return 0;
}

/* the first task after P whose descriptor table is P's (X, or N), its pid;
 * *is_x: its parent is P (X; N's is X, then init or a subreaper) */
static long sharer_of(pid_t p, int *is_x, int spins)
{
	for (int i = 0; i < spins; i++)
		for (pid_t c = p + 1; c < p + 12; c++)
			if (syscall(SYS_kcmp, p, c, KCMP_FILES, 0, 0) == 0) {
				*is_x = proc_ppid(c) == p;
				return c;
			}
	return 0;
}

enum { K_KILL_FIRST, K_KILL_N_LATE, K_STOP_FIRST, K_STOP_N, K_MODES };
static const char *const k_mode[K_MODES] = { "SIGKILL the first sharer (X or N)",
					     "SIGKILL N after 0-3 ms", "SIGSTOP the first sharer 300 ms",
					     "SIGSTOP N 300 ms" };

/* 40 start-ups per way, each attacked once: SIGKILL or SIGSTOP (then
 * SIGCONT 300 ms later) to X or N, as soon as the test sees it or a little
 * later.  Each start-up must end one of three ways: sandboxed with N and
 * the block as N leaves it (5 held), sandboxed without N and the block all
 * made (start-up's fallback), or P refused or killed; never a hang, never
 * the program's code outside the sandbox */
TEST_F_TIMEOUT(r18, x_or_n_killed_or_stopped_during_start_up_fails_closed_or_falls_back, 600)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	struct k_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	char probe[64];
	snprintf(probe, sizeof(probe), "/tmp/rev18-probe-%d", getpid());
	long hit[K_MODES] = { 0 }, hit_x[K_MODES] = { 0 }, with_n[K_MODES] = { 0 },
	     fallback[K_MODES] = { 0 }, refused[K_MODES] = { 0 }, killed[K_MODES] = { 0 },
	     hung[K_MODES] = { 0 }, bad[K_MODES] = { 0 }, other[K_MODES] = { 0 },
	     n_lost[K_MODES] = { 0 };
	for (int m = 0; m < K_MODES; m++)
		for (int i = 0; i < 40; i++) {
			memset(o, 0, sizeof(*o));
			fflush(NULL);
			pid_t p = fork();
			ASSERT_LE(0, p);
			if (p == 0)
				_exit(body_k(o, probe));
			int is_x = 0;
			long c = 0;
			if (m == K_KILL_FIRST || m == K_STOP_FIRST) {
				c = sharer_of(p, &is_x, 200000);
			} else {
				for (int k = 0; k < 2000 && !c; k++) {
					c = notifier_pid_of(p);
					if (!c)
						usleep(200);
				}
				if (c)
					usleep((useconds_t)(i % 4) * 1000);
			}
			if (c) {
				int sig = m == K_KILL_FIRST || m == K_KILL_N_LATE ? SIGKILL : SIGSTOP;
				if (kill((pid_t)c, sig) == 0) {
					hit[m]++;
					hit_x[m] += is_x;
				}
				if (sig == SIGSTOP) {
					usleep(300000);
					kill((pid_t)c, SIGCONT);
				}
			}
			int st = 0, done = 0;
			for (int k = 0; k < 1500 && !done; k++) {
				if (waitpid(p, &st, WNOHANG) == p)
					done = 1;
				else
					usleep(10000);
			}
			if (!done) {
				hung[m]++;
				char path[64], wc[64] = "", sc[128] = "";
				snprintf(path, sizeof(path), "/proc/%d/wchan", p);
				int f = open(path, O_RDONLY);
				if (f >= 0) {
					ssize_t n = read(f, wc, sizeof(wc) - 1);
					wc[n > 0 ? n : 0] = 0;
					close(f);
				}
				snprintf(path, sizeof(path), "/proc/%d/syscall", p);
				f = open(path, O_RDONLY);
				if (f >= 0) {
					ssize_t n = read(f, sc, sizeof(sc) - 1);
					sc[n > 0 ? n : 0] = 0;
					close(f);
				}
				TH_LOG("%s #%d: P hung (15 s) in %s, syscall %s; %s %ld (%s) signalled", k_mode[m],
				       i, wc, sc, is_x ? "X" : "N", c, c ? "yes" : "none");
				kill(p, SIGKILL);
				waitpid(p, &st, 0);
				continue;
			}
			int r = outcome(st);
			if (o->unsandboxed)
				bad[m]++;
			if (r == 0 && o->ntid && o->held == 5 && o->threads_ok == 5)
				with_n[m]++;
			else if (r == 0 && !o->ntid && o->held == SM_NFDS && o->threads_ok == 5)
				fallback[m]++;
			else if (r == 0 && o->held == 5 && !o->n_after && o->threads_ok < 5 &&
				 o->create_err == EAGAIN)
				/* N killed once start-up had it: sandboxed, the block as
				 * N left it, a thread that needs a new slot EAGAIN */
				n_lost[m]++;
			else if (r == SANDBOX_START_FAILED && !o->started)
				refused[m]++;
			else if (r >= 1000)
				killed[m]++;
			else {
				other[m]++;
				TH_LOG("%s #%d: outcome %d started %ld N %ld held %ld threads %ld (error %ld) N "
				       "after %ld", k_mode[m], i, r, o->started, o->ntid, o->held,
				       o->threads_ok, o->create_err, o->n_after);
			}
		}
	unlink(probe);
	for (int m = 0; m < K_MODES; m++) {
		TH_LOG("%s: signalled %ld (X %ld); sandboxed with N %ld, without (fallback) %ld, N "
		       "lost after start-up (clone EAGAIN) %ld; start refused %ld; P killed %ld; hung %ld; "
		       "unsandboxed %ld; other %ld",
		       k_mode[m], hit[m], hit_x[m], with_n[m], fallback[m], n_lost[m], refused[m],
		       killed[m], hung[m], bad[m], other[m]);
		if (want_n())
			EXPECT_LE(20, hit[m]) TH_LOG("%s", k_mode[m]);
		EXPECT_EQ(0, hung[m]) TH_LOG("%s", k_mode[m]);
		EXPECT_EQ(0, bad[m]) TH_LOG("%s", k_mode[m]);
		EXPECT_EQ(0, other[m]) TH_LOG("%s", k_mode[m]);
		EXPECT_EQ(40, with_n[m] + fallback[m] + n_lost[m] + refused[m] + killed[m])
			TH_LOG("%s", k_mode[m]);
	}
}

/* ---- 6. sandpit_notifier_words, written by the program ---- */

struct w_out {
	long ntid, before, after_self, after_zero, after_big, held;
};

static void *nap(void *a)
{
	(void)a;
	usleep(100000);
	return (void *)1L;
}

/* n threads alive at once (slots 1..n in use: those not used before are
 * made now, through N): how many ran */
static long threads_at_once(int n)
{
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	pthread_t t[64];
	int made = 0;
	for (int i = 0; i < n && i < 64; i++)
		if (!pthread_create(&t[made], &at, nap, NULL))
			made++;
	long ok = 0;
	for (int i = 0; i < made; i++) {
		void *rv = NULL;
		ok += !pthread_join(t[i], &rv) && rv == (void *)1L;
	}
	return ok;
}

static int body_words(void *a)
{
	struct w_out *o = a;
	o->ntid = notifier_tid();
	o->before = threads_at_once(5);
	/* N's pid word made P's own pid, the listener word a wrong number */
	__atomic_store_n(&sandpit_notifier_words[0], (int32_t)getpid(), __ATOMIC_RELEASE);
	__atomic_store_n(&sandpit_notifier_words[1], 0, __ATOMIC_RELEASE);
	o->after_self = threads_at_once(10);
	/* N "gone", as the kernel would say at its end */
	__atomic_store_n(&sandpit_notifier_words[0], 0, __ATOMIC_RELEASE);
	o->after_zero = threads_at_once(15);
	__atomic_store_n(&sandpit_notifier_words[0], INT32_MAX, __ATOMIC_RELEASE);
	__atomic_store_n(&sandpit_notifier_words[1], INT32_MIN, __ATOMIC_RELEASE);
	o->after_big = threads_at_once(20);
	o->held = held_in(BLOCK_LO, BLOCK_HI);
	return 0;
}

/* The words start-up shares with N are the program's to write (it can
 * write any of P's memory but sandpit's own pages): once start-up is over
 * nothing of sandpit's reads them (B has its own copy of N's pid, made
 * before the sandbox): threads are made through N whatever they say, and
 * N ends with P (its pid, read before, is no sandpit-N 3 s after) */
TEST_F_TIMEOUT(r18, notifier_words_written_by_the_program_change_nothing, 60)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	struct w_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	struct sandpit_options opts = { .mode = suite_mode() };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_words, o, &opts, 30)));
	EXPECT_EQ(want_n(), o->ntid != 0);
	long alive = -1;
	if (o->ntid) {
		char path[64], buf[256];
		snprintf(path, sizeof(path), "/proc/%ld/stat", o->ntid);
		for (int k = 0; k < 300; k++) {
			int f = open(path, O_RDONLY);
			ssize_t m = f < 0 ? -1 : read(f, buf, sizeof(buf) - 1);
			if (f >= 0)
				close(f);
			char *rp = m > 0 ? (buf[m] = 0, strrchr(buf, ')')) : NULL;
			alive = rp && strstr(buf, "(sandpit-N)") && rp[2] != 'Z';
			if (!alive)
				break;
			usleep(10000);
		}
	}
	TH_LOG("N %ld; threads at once: 5 before %ld, 10 with words P's pid/0 %ld, 15 with pid 0 %ld, 20 with INT32_MAX/INT32_MIN %ld; "
	       "block held %ld; N alive 3 s after P %ld", o->ntid, o->before, o->after_self, o->after_zero, o->after_big,
	       o->held, alive);
	EXPECT_EQ(5, o->before);
	EXPECT_EQ(10, o->after_self);
	EXPECT_EQ(15, o->after_zero);
	EXPECT_EQ(20, o->after_big);
	/* slots 0..20 made, each its two eventfds (with N), or all of them */
	EXPECT_EQ(o->ntid ? 3 + 2 * 21 : SM_NFDS, o->held);
	if (o->ntid)
		EXPECT_EQ(0, alive);
}

TEST_HARNESS_MAIN
