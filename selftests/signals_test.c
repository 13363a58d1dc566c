/* The signals sandpit keeps for itself (SIGSEGV, SIGSYS, 63, 64) are
 * virtualised, not refused: the program reads and sets their dispositions,
 * masks and alternate stacks as natively, its handlers run for its own
 * signals with the kernel's frame, and the 2009 sandbox's signal and exit
 * behaviours hold.  Each body runs natively in a child first, then
 * sandboxed, and the two answers must be the same. */
#include <setjmp.h>
#include <stddef.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"

#define K_SA_RESTORER 0x04000000
struct k_act {
	uint64_t handler, flags, restorer, mask;
};

/* fn's status when run natively in a child */
static int run_native(int (*fn)(void *), void *arg)
{
	fflush(NULL);
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0)
		_exit(fn(arg));
	int st;
	if (waitpid(p, &st, 0) != p)
		return -1;
	return st;
}

/* the answers a body writes, natively and sandboxed */
struct answers {
	long v[1024];
};

static struct answers *shared_answers(void)
{
	struct answers *a = shared_page(sizeof(struct answers));
	if (a)
		memset(a, 0, sizeof(*a));
	return a;
}

static int first_difference(const struct answers *a, const struct answers *b)
{
	for (unsigned i = 0; i < sizeof(a->v) / sizeof(a->v[0]); i++)
		if (a->v[i] != b->v[i])
			return (int)i;
	return -1;
}

/* runs fn natively, then sandboxed, with fresh answers each time; both
 * outcomes and answer sets must agree */
#define EXPECT_SAME_AS_NATIVE(fn, native_outcome)                                      \
	do {                                                                           \
		struct answers *nat = shared_answers(), *box = shared_answers();       \
		ASSERT_NE(NULL, nat);                                                  \
		ASSERT_NE(NULL, box);                                                  \
		int n = outcome(run_native(fn, nat));                                  \
		ASSERT_EQ(native_outcome, n);                                          \
		int b = outcome(run_sandboxed(fn, box));                               \
		EXPECT_EQ(n, b);                                                       \
		int d = first_difference(nat, box);                                    \
		EXPECT_EQ(-1, d) TH_LOG("answer %d: native %ld, sandboxed %ld", d,     \
					d < 0 ? 0 : nat->v[d], d < 0 ? 0 : box->v[d]); \
	} while (0)

/* ----------------------------------------------------- the 2009 behaviours */

/* a single-threaded program that leaves with the raw exit call */
static int body_raw_exit_1(void *a)
{
	(void)a;
	raw_syscall(SYS_exit, 1, 0, 0);
	return 2;
}

TEST(sig2009_raw_exit_1_of_a_single_thread_is_status_1)
{
	EXPECT_SAME_AS_NATIVE(body_raw_exit_1, 1);
}

static char *alt_lo, *alt_hi;
static volatile int alt_flags = -1, alt_on = -1;

static void on_usr1_alt(int sig)
{
	(void)sig;
	char here;
	stack_t cur;
	alt_on = &here >= alt_lo && &here < alt_hi;
	alt_flags = sigaltstack(NULL, &cur) ? -2 : cur.ss_flags;
}

static int body_onstack(void *a)
{
	struct answers *r = a;
	size_t sz = 64 * 1024;
	alt_lo = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	alt_hi = alt_lo + sz;
	stack_t ss = { .ss_sp = alt_lo, .ss_size = sz };
	struct sigaction sa = { .sa_handler = on_usr1_alt, .sa_flags = SA_ONSTACK };
	if (alt_lo == MAP_FAILED || sigaltstack(&ss, NULL) || sigaction(SIGUSR1, &sa, NULL))
		return 1;
	raise(SIGUSR1);
	r->v[0] = alt_on;
	r->v[1] = alt_flags;
	stack_t cur;
	r->v[2] = sigaltstack(NULL, &cur) ? -1 : cur.ss_flags; /* off it again */
	return 0;
}

TEST(sig2009_sigaltstack_inside_a_handler_on_it_reports_ss_onstack)
{
	EXPECT_SAME_AS_NATIVE(body_onstack, 0);
}

static volatile int *volatile bad_ptr = (int *)8;
static volatile int segv_entries, segv_depth, segv_max_depth;
static sigjmp_buf segv_out;

static void on_segv_nodefer(int sig)
{
	(void)sig;
	segv_entries++;
	if (++segv_depth > segv_max_depth)
		segv_max_depth = segv_depth;
	if (segv_entries == 1)
		raise(SIGSEGV); /* re-enters at once with SA_NODEFER */
	segv_depth--;
	if (segv_entries == 2)
		return;
	siglongjmp(segv_out, 1);
}

static int body_nodefer(void *a)
{
	struct answers *r = a;
	struct sigaction sa = { .sa_handler = on_segv_nodefer, .sa_flags = SA_NODEFER };
	if (sigaction(SIGSEGV, &sa, NULL))
		return 1;
	if (!sigsetjmp(segv_out, 1))
		*bad_ptr = 1;
	r->v[0] = segv_entries;
	r->v[1] = segv_max_depth;
	return 0;
}

TEST(sig2009_sa_nodefer_sigsegv_raised_in_its_handler_reenters_it)
{
	EXPECT_SAME_AS_NATIVE(body_nodefer, 0);
}

static void on_segv_once(int sig)
{
	(void)sig;
	segv_entries++;
	siglongjmp(segv_out, 1);
}

static int body_resethand(void *a)
{
	struct answers *r = a;
	struct sigaction sa = { .sa_handler = on_segv_once, .sa_flags = SA_RESETHAND }, old;
	if (sigaction(SIGSEGV, &sa, NULL))
		return 1;
	if (!sigsetjmp(segv_out, 1))
		*bad_ptr = 1;
	r->v[0] = segv_entries;
	r->v[1] = sigaction(SIGSEGV, NULL, &old) ? -1 : (long)(uintptr_t)old.sa_handler;
	*bad_ptr = 2; /* the default action now: killed by SIGSEGV */
	return 3;
}

TEST(sig2009_sa_resethand_sigsegv_handler_runs_once_then_default_kills)
{
	EXPECT_SAME_AS_NATIVE(body_resethand, KILLED(SIGSEGV));
}

TEST_HARNESS_MAIN
