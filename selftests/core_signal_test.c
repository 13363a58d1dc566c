/* Attacks on the trusted core (invariants 8 and 1): SIGSEGV's default
 * action and T's poll descriptors are never read from the mailbox, and no
 * program signal handler runs on a trusted thread, whether routed there
 * by a mask-carrying call or reaching sandpit's wrapper on its stack.
 * Each test counts the rewrites that landed (core_test says more). */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "u_state.h"
#include "core_race.h"

/* ------------------------------------ SIGSEGV's default action, rewritten */

static void evil_handler(int sig)
{
	(void)sig;
}

static int segv_caught_by_kernel(void)
{
	unsigned long long m;
	if (proc_status_hex("/proc/self/status", "SigCgt:", &m) < 0)
		return -1;
	return (m >> (SIGSEGV - 1)) & 1;
}

static void *rewrite_sigaction(void *a)
{
	(void)a;
	while (!victim_mb)
		;
	struct k_sigaction evil = { (uint64_t)(uintptr_t)evil_handler, SANDPIT_SA_RESTORER,
				    (uint64_t)(uintptr_t)evil_handler, 0 };
	/* where T used to build it */
	volatile uint64_t *where = (volatile uint64_t *)((uint8_t *)victim_mb + MB_PAYLOAD);
	while (!R->done) {
		if (R->pause) {
			R->paused = 1;
			continue;
		}
		R->paused = 0;
		where[0] = evil.handler;
		where[1] = evil.flags;
		where[2] = evil.restorer;
		where[3] = evil.mask;
		R->writes++;
	}
	/* never ends: see body_segv_dfl */
	for (;;)
		pause();
	return NULL;
}

static int body_segv_dfl(void *a)
{
	(void)a;
	static const long segv[6] = { SIGSEGV };
	pthread_t w;
	victim_mb = my_mailbox();
	if (pthread_create(&w, NULL, rewrite_sigaction, NULL))
		return 1;
	while (!R->writes)
		sched_yield();
	for (int i = 0; i < 1000; i++) {
		u_call_trusted(SANDPIT_NR_SIG_DFL, segv);
		R->calls++;
		/* the check's own open goes through the payload: not while it is
		 * being rewritten */
		R->pause = 1;
		while (!R->paused)
			;
		if (segv_caught_by_kernel() == 1)
			R->bad++; /* the kernel has a handler for SIGSEGV: not the default */
		R->paused = 0;
		R->pause = 0;
	}
	/* Not joined, and the writer never ends: SIGSEGV is at the kernel's
	 * default now, a state sandpit reaches only as P is about to die of
	 * it, and in which it can no longer change a thread's mask (its
	 * SIGSEGV handler answers those, sandpit_ask_self), which a thread's
	 * exit does (u_exit blocks every signal). */
	R->done = 1;
	return 0;
}

TEST(inv8_segv_default_action_is_not_read_from_the_mailbox)
{
	char msg[4096];
	R = shared_page(4096);
	ASSERT_NE(NULL, R);
	int o = run_capture(body_segv_dfl, NULL, NULL, 60, msg, sizeof(msg));
	TH_LOG("writes %ld, calls %ld, handler installed %ld", R->writes, R->calls, R->bad);
	EXPECT_EQ(0, o);
	EXPECT_LT(0, R->writes);
	EXPECT_LT(0, R->calls);
	EXPECT_EQ(0, R->bad);
}

/* ----------------------------- T's poll descriptors rewritten, B killed */

static int quiet_fd;

static void *rewrite_pollfds(void *a)
{
	(void)a;
	while (!victim_mb)
		;
	struct mailbox *mb = victim_mb;
	struct pollfd fake[2] = { { quiet_fd, POLLIN, 0 }, { quiet_fd, POLLIN, 0 } };
	for (;;) {
		/* all of T's scratch, where its poll descriptors used to be */
		for (int off = MB_PAYLOAD; off + (int)sizeof(fake) <= MB_CLONE_REGS; off += 8)
			memcpy((char *)mb + off, fake, sizeof(fake));
		R->writes++;
		if (__atomic_load_n(&mb->t_sleep, __ATOMIC_RELAXED))
			R->landed++; /* while T sleeps in ppoll */
	}
	return NULL;
}

TEST(inv8_poll_descriptors_rewritten_cannot_hide_b_hanging_up)
{
	int p[2], q[2];
	R = shared_page(4096);
	ASSERT_NE(NULL, R);
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(q));
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	fflush(NULL);
	pid_t child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		quiet_fd = q[0];
		if (sandpit_start(NULL) < 0)
			_exit(SANDBOX_START_FAILED);
		victim_mb = my_mailbox();
		pthread_t w;
		if (pthread_create(&w, NULL, rewrite_pollfds, NULL))
			_exit(1);
		if (write(p[1], "r", 1) != 1)
			_exit(2);
		char c;
		_exit((int)read(q[0], &c, 1) + 100); /* idle in U: its T sleeps */
	}
	char c;
	ASSERT_EQ(1, read(p[0], &c, 1));
	usleep(200000);
	pid_t b = 0;
	for (int i = 0; i < 100 && !b; i++) {
		b = find_child_named("sandpit-B");
		if (!b)
			usleep(10000);
	}
	ASSERT_LT(0, b);
	ASSERT_EQ(0, kill(b, SIGKILL));
	int st = 0, done = 0;
	for (int i = 0; i < 500 && !done; i++) {
		done = waitpid(child, &st, WNOHANG) == child;
		if (!done)
			usleep(10000);
	}
	if (!done)
		kill(child, SIGKILL);
	TH_LOG("writes %ld, while T slept %ld", R->writes, R->landed);
	EXPECT_TRUE(done);
	EXPECT_EQ(KILLED(SIGKILL), outcome(st));
	EXPECT_LT(0, R->landed);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* ------------------- a signal routed to T through a mask-carrying call */

enum { VIA_PPOLL, VIA_PSELECT6, VIA_EPOLL_PWAIT };
static volatile pid_t handler_tid;
static volatile int handler_on_other;
static char outside[64];

static void on_alarm(int sig)
{
	(void)sig;
	pid_t t = (pid_t)syscall(SYS_gettid);
	if (handler_tid && t != handler_tid)
		handler_on_other = 1;
	R->landed++;
	/* on T (outside seccomp) this would succeed */
	int fd = open(outside, O_WRONLY | O_CREAT, 0600);
	if (fd >= 0)
		close(fd);
}

static void *send_alarms(void *a)
{
	(void)a;
	while (!R->done) {
		kill(getpid(), SIGALRM); /* to the process: any thread not blocking it */
		R->writes++;
		usleep(3000);
	}
	return NULL;
}

static int body_mask_call(void *a)
{
	int via = (int)(intptr_t)a;
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_ONSTACK };
	sigset_t alrm, empty;
	sigemptyset(&alrm);
	sigemptyset(&empty);
	sigaddset(&alrm, SIGALRM);
	handler_tid = (pid_t)syscall(SYS_gettid);
	/* U blocks the signal everywhere but inside the call */
	if (sigaction(SIGALRM, &sa, NULL) || pthread_sigmask(SIG_BLOCK, &alrm, NULL))
		return 1;
	int ep = via == VIA_EPOLL_PWAIT ? epoll_create1(0) : -1;
	if (via == VIA_EPOLL_PWAIT && ep < 0)
		return 2;
	pthread_t s;
	if (pthread_create(&s, NULL, send_alarms, NULL))
		return 3;
	for (int i = 0; i < 100; i++) {
		struct timespec ts = { 0, 20000000 };
		struct epoll_event ev;
		int r = via == VIA_PPOLL	  ? ppoll(NULL, 0, &ts, &empty)
			: via == VIA_PSELECT6 ? pselect(0, NULL, NULL, NULL, &ts, &empty)
					      : epoll_pwait(ep, &ev, 1, 20, &empty);
		if (r < 0 && errno == EINTR)
			R->calls++; /* the signal came during the call */
	}
	R->done = 1;
	pthread_join(s, NULL);
	return handler_on_other ? 4 : 0;
}

static void mask_case(struct __test_metadata *_metadata, int via)
{
	char msg[4096];
	R = shared_page(4096);
	ASSERT_NE(NULL, R);
	snprintf(outside, sizeof(outside), "/tmp/sandpit-core-sig-%d", getpid());
	unlink(outside);
	int o = run_capture(body_mask_call, (void *)(intptr_t)via, NULL, 60, msg, sizeof(msg));
	TH_LOG("signals sent %ld, handled %ld, calls ended by one %ld; %s", R->writes, R->landed,
	       R->calls, msg);
	/* the handler ran on U's thread only (or P was ended by sandpit) */
	if (o == KILLED(SIGKILL)) {
		EXPECT_TRUE(strstr(msg, "reached a trusted thread") != NULL);
	} else {
		EXPECT_EQ(0, o);
	}
	EXPECT_EQ(-1, access(outside, F_OK));
	/* U blocks the signal but inside the call: each run is one the call's
	 * mask let through */
	EXPECT_LT(0, R->landed);
	unlink(outside);
}

TEST(inv1_signal_through_ppoll_mask_never_runs_on_the_trusted_thread)
{
	mask_case(_metadata, VIA_PPOLL);
}

TEST(inv1_signal_through_pselect6_mask_never_runs_on_the_trusted_thread)
{
	mask_case(_metadata, VIA_PSELECT6);
}

TEST(inv1_signal_through_epoll_pwait_mask_never_runs_on_the_trusted_thread)
{
	mask_case(_metadata, VIA_EPOLL_PWAIT);
}

/* ---------------- sandpit's wrapper on a trusted thread's stack */

static long wrapper_on_this_stack(void *a)
{
	(void)a;
	static uint8_t info[128], uc[1024];
	u_signal_enter(SIGUSR1, info, uc);
	return 0;
}

static void on_usr1(int sig)
{
	(void)sig;
	R->landed++;
	int fd = open(outside, O_WRONLY | O_CREAT, 0600);
	if (fd >= 0)
		close(fd);
}

static int body_wrapper_on_t_stack(void *a)
{
	(void)a;
	struct sigaction sa = { .sa_handler = on_usr1 };
	if (sigaction(SIGUSR1, &sa, NULL))
		return 1;
	/* where the kernel would put a handler's frame on a T: the alternate
	 * stack of slot 9 (no thread has it in this test) */
	const struct sandpit_ro *ro = &sandpit_ro_page.ro;
	uintptr_t top = ro->t_alt_lo + 10 * SM_ALT_SIZE - 256;
	if (ro->t_alt_hi - ro->t_alt_lo != SM_ALT_REGION)
		return 2;
	R->calls++;
	sandpit_call_on_stack((void *)top, wrapper_on_this_stack, NULL);
	return 3; /* the wrapper went on as if on U */
}

/* Whatever brings a handler of the program onto T, sandpit's wrapper sees
 * it from the stack pointer alone (not %gs) and ends P before calling it. */
TEST(inv1_program_handler_reaching_a_trusted_thread_ends_the_process)
{
	char msg[4096];
	R = shared_page(4096);
	ASSERT_NE(NULL, R);
	snprintf(outside, sizeof(outside), "/tmp/sandpit-core-usr1-%d", getpid());
	unlink(outside);
	int o = run_capture(body_wrapper_on_t_stack, NULL, NULL, 20, msg, sizeof(msg));
	TH_LOG("%s", msg);
	EXPECT_EQ(1, R->calls);
	EXPECT_EQ(KILLED(SIGKILL), o);
	EXPECT_EQ(0, R->landed);
	EXPECT_TRUE(strstr(msg, "reached a trusted thread") != NULL);
	EXPECT_EQ(-1, access(outside, F_OK));
}

TEST_HARNESS_MAIN
