/* A handler that lands inside a mask call makes mask calls of its own
 * without a hang (below). */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "u_state.h"
#include "signals_util.h"

/* ------- mask calls in a handler that lands inside a mask call
 *
 * A SIGUSR1 handler blocks SIGUSR2 and restores its mask while the thread
 * it interrupts does the same in a loop, and another thread sends SIGUSR1
 * thousands of times.  Under sandpit this hung: the mask change was a
 * SANDPIT_SIG that T sent, the kernel stacked it above SIGUSR1's fresh
 * frame, and the program's handler then ran in the middle of the request
 * and answered requests of its own.  Each looping thread counts the
 * handler entries that landed while it was inside a mask call (the race),
 * and the sender goes on until every looper has some. */

#define ML_MAX_LOOPERS 2
#define ML_WANT_HITS 20
#define ML_MIN_SENT 3000
#define ML_MAX_SENT 400000
#define ML_MAX_DEPTH 3
/* the hang guard, inside the harness's own limit for these tests */
#define ML_HANG_SECONDS 90

struct mask_loop {
	int nodefer, loopers;
	volatile int stop, started;
	pthread_t looper[ML_MAX_LOOPERS];
	struct ml_thread {
		volatile long wrong, handled, hits, handler_wrong, loops, entries, exits, sent;
		long final_view, final_sigblk;
	} t[ML_MAX_LOOPERS];
	long sent;
};
static struct mask_loop *ML;
static __thread int ml_index = -1;
static __thread volatile int ml_in_call;

static int usr2_blocked(void)
{
	sigset_t cur;
	if (sigprocmask(SIG_SETMASK, NULL, &cur))
		return -1;
	return sigismember(&cur, SIGUSR2);
}

/* an SA_NODEFER handler nests in itself: its counts are atomic */
#define ML_ADD(field, n) __atomic_fetch_add(&(field), (n), __ATOMIC_SEQ_CST)

static void on_usr1_mask(int sig)
{
	(void)sig;
	if (ml_index < 0)
		return;
	struct ml_thread *t = &ML->t[ml_index];
	int saved = ml_in_call;
	ML_ADD(t->entries, 1);
	ML_ADD(t->hits, saved);
	sigset_t s, old;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	int was = -1;
	if (sigprocmask(SIG_BLOCK, &s, &old))
		ML_ADD(t->handler_wrong, 1);
	else
		was = sigismember(&old, SIGUSR2);
	/* the kernel blocks SIGUSR1 for its handler unless SA_NODEFER: the
	 * old mask must be this handler's, not another frame's */
	if (sigismember(&old, SIGUSR1) != !ML->nodefer)
		ML_ADD(t->handler_wrong, 1);
	if (usr2_blocked() != 1)
		ML_ADD(t->handler_wrong, 1);
	if (sigprocmask(SIG_SETMASK, &old, NULL) || usr2_blocked() != was)
		ML_ADD(t->handler_wrong, 1);
	else
		ML_ADD(t->handled, 1);
	ml_in_call = saved;
	/* on one CPU, the sender's turn: it waits for this.  Before the exit
	 * is counted, so that a signal the sender sends meanwhile nests on a
	 * frame the depth counts: after it, every handler parked in its yield
	 * was a frame the depth did not show, and a slow guest (TCG) stacked
	 * them until the native run overflowed its stack (SIGSEGV) */
	sched_yield();
	ML_ADD(t->exits, 1);
}

static void *ml_loop(void *arg)
{
	int i = (int)(intptr_t)arg;
	struct ml_thread *t = &ML->t[i];
	sigset_t s, old;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	ml_index = i;
	__atomic_fetch_add(&ML->started, 1, __ATOMIC_SEQ_CST);
	while (!ML->stop) {
		ml_in_call = 1;
		int r = sigprocmask(SIG_BLOCK, &s, &old);
		ml_in_call = 0;
		if (r || sigismember(&old, SIGUSR2) || sigismember(&old, SIGUSR1))
			t->wrong++;
		ml_in_call = 1;
		int b = usr2_blocked();
		ml_in_call = 0;
		if (b != 1)
			t->wrong++;
		ml_in_call = 1;
		r = sigprocmask(SIG_SETMASK, &old, NULL);
		b = usr2_blocked();
		ml_in_call = 0;
		if (r || b != 0)
			t->wrong++;
		t->loops++;
	}
	sigset_t cur;
	if (sigprocmask(SIG_SETMASK, NULL, &cur) == 0)
		memcpy(&t->final_view, &cur, sizeof(long));
	unsigned long long blk;
	if (proc_status_hex("/proc/thread-self/status", "SigBlk:", &blk) == 0)
		t->final_sigblk = (long)(blk & ~KEPT);
	return NULL;
}

static int ml_enough(void)
{
	if (ML->sent < ML_MIN_SENT)
		return 0;
	for (int i = 0; i < ML->loopers; i++)
		if (ML->t[i].hits < ML_WANT_HITS)
			return 0;
	return 1;
}

/* the main thread sends; loopers 0 and (two) 1 loop on their masks */
static int body_mask_loop(void *a)
{
	(void)a;
	struct sigaction sa = { .sa_handler = on_usr1_mask,
				.sa_flags = ML->nodefer ? SA_NODEFER : 0 };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		return 1;
	ML->started = 0;
	for (int i = 0; i < ML->loopers; i++)
		if (pthread_create(&ML->looper[i], NULL, ml_loop, (void *)(intptr_t)i))
			return 2;
	while (ML->started < ML->loopers)
		;
	while (!ml_enough() && ML->sent < ML_MAX_SENT) {
		int i = (int)(ML->sent % ML->loopers);
		struct ml_thread *t = &ML->t[i];
		/* SA_NODEFER handlers nest: at most a few deep, or the stack
		 * would overflow natively too.  A signal is sent only once the
		 * last one sent to this looper has entered its handler: a
		 * delivered signal whose handler has not yet counted its entry
		 * is a frame the depth does not show, and on a slow machine
		 * (a guest under TCG, where each send's IPI lands before the
		 * handler's first instructions) such frames piled up until the
		 * stack overflowed natively.  One signal in flight also means
		 * none is merged with another, so every one sent is entered
		 * (a hang here is the sandbox losing one; the hang guard
		 * catches it). */
		while (t->entries < t->sent || t->entries - t->exits >= ML_MAX_DEPTH)
			sched_yield(); /* the looper's turn, on one CPU */
		t->sent++;
		pthread_kill(ML->looper[i], SIGUSR1);
		ML->sent++;
		for (volatile int k = 0; k < 2000; k++)
			;
	}
	ML->stop = 1;
	for (int i = 0; i < ML->loopers; i++)
		pthread_join(ML->looper[i], NULL);
	return 0;
}

static void mask_loop_case(struct __test_metadata *_metadata, int nodefer, int loopers)
{
	struct mask_loop *nat = shared_page(sizeof(*nat)), *box = shared_page(sizeof(*box));
	ASSERT_NE(NULL, nat);
	ASSERT_NE(NULL, box);
	memset(nat, 0, sizeof(*nat));
	memset(box, 0, sizeof(*box));
	nat->nodefer = box->nodefer = nodefer;
	nat->loopers = box->loopers = loopers;
	ML = nat;
	ASSERT_EQ(0, outcome(run_native(body_mask_loop, NULL)));
	ML = box;
	int o = outcome(run_sandboxed_opts(body_mask_loop, NULL, NULL, ML_HANG_SECONDS));
	ASSERT_NE(-2, o)
	TH_LOG("the sandboxed program hung: a looper stuck in a mask call "
	       "(handler entries: %ld, sent: %ld)", box->t[0].entries, box->sent);
	ASSERT_EQ(0, o);
	for (int i = 0; i < loopers; i++) {
		TH_LOG("looper %d: native loops %ld handled %ld in-call %ld; sandboxed loops %ld "
		       "handled %ld in-call %ld; sent %ld / %ld",
		       i, nat->t[i].loops, nat->t[i].handled, nat->t[i].hits, box->t[i].loops,
		       box->t[i].handled, box->t[i].hits, nat->sent, box->sent);
		EXPECT_EQ(0, nat->t[i].wrong);
		EXPECT_EQ(0, nat->t[i].handler_wrong);
		EXPECT_EQ(0, box->t[i].wrong);
		EXPECT_EQ(0, box->t[i].handler_wrong);
		/* the race was reached: handlers ran, some inside a mask call */
		EXPECT_LT(0, box->t[i].handled);
		EXPECT_EQ(box->t[i].entries, box->t[i].handled);
		EXPECT_LE(ML_WANT_HITS, box->t[i].hits);
		/* the mask at the end is the native one, in the program's view
		 * and in the kernel's (sandpit's own signals aside) */
		EXPECT_EQ(nat->t[i].final_view, box->t[i].final_view);
		EXPECT_EQ(nat->t[i].final_sigblk, box->t[i].final_sigblk);
	}
}

FIXTURE(mask_loop) {};
FIXTURE_SETUP(mask_loop) {}
FIXTURE_TEARDOWN(mask_loop) {}

TEST_F_TIMEOUT(mask_loop, handler_landing_inside_a_mask_call_makes_mask_calls_without_a_hang, 150)
{
	mask_loop_case(_metadata, 0, 1);
}

TEST_F_TIMEOUT(mask_loop, sa_nodefer_handler_inside_a_mask_call_makes_mask_calls_without_a_hang, 150)
{
	mask_loop_case(_metadata, 1, 1);
}

TEST_F_TIMEOUT(mask_loop, handlers_on_two_looping_threads_make_mask_calls_without_a_hang, 150)
{
	mask_loop_case(_metadata, 0, 2);
}

TEST_HARNESS_MAIN
