/* The signals sandpit keeps for itself (SIGSEGV, SIGSYS, 63, 64) are
 * virtualised, not refused: the program reads and sets their dispositions,
 * masks and alternate stacks as natively, its handlers run for its own
 * signals with the kernel's frame, they cannot be taken away, the 2009
 * sandbox's signal and exit behaviours hold, and every call is made once
 * under a signal storm.  Each body runs natively in a child first, then
 * sandboxed, and the two answers must be the same.  The rest, by subject:
 * signals_pending_test (signals pending together inside a request) and
 * signals_mask_test (mask calls in a handler that lands inside one). */
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

/* ------------------------------------------------ every call made once */

/* A storm of signals whose handler makes calls of its own, while the
 * program alternates calls whose answers differ: every call is made once
 * and gets its own answer, wherever a signal lands (between the sequence
 * number and the request, while T works, between the answer and its copy
 * to the program's buffer).  The handler has no SA_RESTART, so each
 * signal that landed inside a request is counted by the entry
 * (norestart_ran, its handler put off until the request was done). */
struct storm {
	long calls, wrong, handled, handler_wrong, landed, through_t, first_what, first_got;
	long dumpable;
	long depth, deepest; /* handlers running at once: 1, as natively (SIGALRM blocked in its handler) */
	long period_us, handler_ns; /* the timer's period, from one handler's cost */
	long rounds, per_round; /* the loop's rounds; requests to T one round makes, unsignalled */
	ino_t ino_a;
	off_t size_a, size_b;
};
static struct storm *STORM;
static char storm_a[64], storm_b[64], storm_c[64];

static void on_storm(int sig)
{
	struct stat sb;
	(void)sig;
	if (++STORM->depth > STORM->deepest)
		STORM->deepest = STORM->depth;
	int fd = open(storm_c, O_RDONLY);
	if (fd < 0 || stat(storm_c, &sb) || sb.st_size != 3 ||
	    syscall(SYS_tgkill, getpid(), gettid(), 0) != 0)
		STORM->handler_wrong++;
	if (fd >= 0)
		close(fd);
	STORM->handled++;
	STORM->depth--;
}

static void storm_wrong(long what, long got)
{
	if (!STORM->wrong++) {
		STORM->first_what = what;
		STORM->first_got = got;
	}
}

/* One round of the storm loop: five calls whose answers differ, each
 * checked, counted in STORM->calls */
static void storm_round(void)
{
	struct stat sb;
	/* two calls T makes (in strict mode; filter mode's filter answers
	 * prctl itself), answers 1 and 0 */
	long d = prctl(PR_GET_DUMPABLE);
	if (d != STORM->dumpable)
		storm_wrong(1, d);
	long k = syscall(SYS_tgkill, getpid(), gettid(), 0);
	if (k != 0)
		storm_wrong(2, k);
	/* two B answers of different sizes, copied out after T returns */
	if (stat(storm_a, &sb) || sb.st_size != STORM->size_a)
		storm_wrong(3, sb.st_size);
	if (stat(storm_b, &sb) || sb.st_size != STORM->size_b)
		storm_wrong(4, sb.st_size);
	/* a path carried with the request */
	int fd = open(storm_a, O_RDONLY);
	if (fd < 0 || fstat(fd, &sb) || sb.st_ino != STORM->ino_a)
		storm_wrong(5, fd < 0 ? -errno : (long)sb.st_ino);
	if (fd >= 0)
		close(fd);
	STORM->calls += 5;
}

static int body_storm(void *a)
{
	long want = *(long *)a;
	struct sigaction sa = { .sa_handler = on_storm }; /* no SA_RESTART */
	if (sigaction(SIGALRM, &sa, NULL))
		return 1;
	struct u_state *st = state_of(my_mailbox());
	uint64_t ran0 = st->norestart_ran;
	STORM->dumpable = prctl(PR_GET_DUMPABLE);
	/* the requests to T one round makes, no signal landing */
	uint64_t r0 = st->seq;
	for (int i = 0; i < 20; i++)
		storm_round();
	STORM->per_round = (long)(st->seq - r0) / 20;
	STORM->calls = 0;
	/* A handler's cost (its four calls, made here as the handler makes
	 * them): the cheapest of 10 rounds of 10.  The timer fires every
	 * 200 us, or every 3 costs where a handler costs more (under qemu's
	 * TCG): a period shorter than the handler would leave the loop no
	 * time at all.  Not timed by raising the signal: its delivery may
	 * wait for the kernel's next tick, which costs the loop nothing */
	STORM->handler_ns = 1000000000L;
	for (int r = 0; r < 10; r++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int i = 0; i < 10; i++)
			on_storm(SIGALRM);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		long c = ((t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec) / 10;
		if (c < STORM->handler_ns)
			STORM->handler_ns = c;
	}
	if (STORM->handled != 100 || STORM->handler_wrong)
		return 3;
	STORM->handled = 0;
	long p = 3 * STORM->handler_ns / 1000;
	STORM->period_us = p < 200 ? 200 : p > 100000 ? 100000 : p;
	struct itimerval it = { .it_interval = { 0, STORM->period_us },
				.it_value = { 0, STORM->period_us } };
	if (setitimer(ITIMER_REAL, &it, NULL))
		return 2;
	/* at least want calls, and on until more than 100 signals landed
	 * inside a request (the attack ran; under TCG a handler costs
	 * milliseconds and the period is long), at most 50 times want */
	uint64_t loop0 = st->seq;
	long rounds = 0;
	for (long i = 0; i < want || (st->norestart_ran - ran0 <= 100 && i < 50 * want); i += 5) {
		storm_round();
		rounds++;
	}
	struct itimerval off = { 0 };
	setitimer(ITIMER_REAL, &off, NULL);
	STORM->through_t = (long)(st->seq - loop0);
	STORM->rounds = rounds;
	STORM->landed = (long)(st->norestart_ran - ran0);
	return 0;
}

static void storm_file(char *path, size_t len, const char *name, const char *bytes)
{
	snprintf(path, len, "/tmp/sandpit-storm-%d-%s", getpid(), name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, bytes, strlen(bytes)) < 0)
			path[0] = 0;
		close(fd);
	}
}

FIXTURE(storm) {};
FIXTURE_SETUP(storm) {}
FIXTURE_TEARDOWN(storm) {}

TEST_F_TIMEOUT(storm, every_call_made_once_under_a_signal_storm_whose_handler_makes_calls, 120)
{
	const char *e = getenv("SANDPIT_STORM_CALLS");
	long want = e ? atol(e) : 50000;
	struct stat sb;
	if (e) /* the kernel-matrix guests lower it: TCG is slower than the host */
		TH_LOG("%ld calls (SANDPIT_STORM_CALLS), not 50000", want);
	STORM = shared_page(sizeof(*STORM));
	ASSERT_NE(NULL, STORM);
	memset(STORM, 0, sizeof(*STORM));
	storm_file(storm_a, sizeof(storm_a), "a", "a");
	storm_file(storm_b, sizeof(storm_b), "b", "bbbbbbb");
	storm_file(storm_c, sizeof(storm_c), "c", "ccc");
	ASSERT_EQ(0, stat(storm_a, &sb));
	STORM->ino_a = sb.st_ino;
	STORM->size_a = 1;
	STORM->size_b = 7;
	const char *r[] = { "/tmp", NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = r };
	int out = outcome(run_sandboxed_opts(body_storm, &want, &o, 110));
	unlink(storm_a);
	unlink(storm_b);
	unlink(storm_c);
	ASSERT_EQ(0, out) TH_LOG("after %ld calls, %ld handlers", STORM->calls, STORM->handled);
	TH_LOG("%ld calls, %ld through T (%ld a round unsignalled), %ld handlers ran (every %ld "
	       "us, each %ld ns), %ld of them landed inside a request",
	       STORM->calls, STORM->through_t, STORM->per_round, STORM->handled, STORM->period_us,
	       STORM->handler_ns, STORM->landed);
	EXPECT_EQ(0, STORM->wrong)
	TH_LOG("first wrong answer: call %ld answered %ld", STORM->first_what, STORM->first_got);
	EXPECT_EQ(0, STORM->handler_wrong);
	/* the attack ran: the calls went to T (tgkill, both stats and the
	 * open in every mode; prctl too in strict mode), the storm landed
	 * inside them */
	EXPECT_LE(want, STORM->calls);
	EXPECT_NE(0, STORM->dumpable); /* its answer differs from tgkill's */
	EXPECT_LE(suite_mode() == SANDPIT_MODE_STRICT ? 5 : 4, STORM->per_round);
	EXPECT_LE(STORM->rounds * STORM->per_round, STORM->through_t);
	EXPECT_LT(100, STORM->landed);
	/* a handler put off until its request was done runs with its signal
	 * blocked too: one that nested in itself ran out of stack on one CPU */
	EXPECT_EQ(1, STORM->deepest);
}

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

/* ------------------------------------------ dispositions of all 64 signals */

/* a restorer of the program's own, as libc has one */
void test_restorer(void);
__asm__(".text\n.globl test_restorer\n.type test_restorer,@function\ntest_restorer:\n"
	"\tmov $15, %eax\n\tsyscall\n\tud2\n.size test_restorer, .-test_restorer\n");

static volatile long caught[65];

static void on_any(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	caught[sig]++;
}

static long rt_sigaction_raw(int sig, const struct k_act *act, struct k_act *old)
{
	return syscall(SYS_rt_sigaction, sig, act, old, 8);
}

/* What Go's runtime does at start for every signal (rt_sigaction(n, NULL,
 * &old), then a handler with SA_ONSTACK|SA_SIGINFO|SA_RESTORER), then the
 * program's own SIGSYS, SIGSEGV, SIGUSR1 and signal 64, raised. */
static int body_all_64(void *a)
{
	struct answers *r = a;
	long *v = r->v;
	for (int sig = 1; sig <= 64; sig++) {
		struct k_act old = { 1, 2, 3, 4 };
		long rc = rt_sigaction_raw(sig, NULL, &old);
		*v++ = rc ? -errno : 0;
		*v++ = (long)old.handler;
		*v++ = (long)old.flags;
		struct k_act act = { (uint64_t)(uintptr_t)on_any,
				     SA_ONSTACK | SA_SIGINFO | K_SA_RESTORER | SA_RESTART | 0x400,
				     (uint64_t)(uintptr_t)test_restorer,
				     (1ull << (SIGKILL - 1)) | (1ull << (SIGUSR2 - 1)) |
					     (1ull << 62) };
		*v++ = rt_sigaction_raw(sig, &act, NULL) ? -errno : 0;
		memset(&old, 0, sizeof(old));
		*v++ = rt_sigaction_raw(sig, NULL, &old) ? -errno : 0;
		*v++ = old.handler == (uint64_t)(uintptr_t)on_any ? 1 : (long)old.handler;
		*v++ = (long)old.flags;
		*v++ = old.restorer == (uint64_t)(uintptr_t)test_restorer ? 1 : (long)old.restorer;
		*v++ = (long)old.mask;
	}
	static const int raised[] = { SIGSYS, SIGSEGV, SIGUSR1, 63, 64 };
	for (unsigned i = 0; i < sizeof(raised) / sizeof(raised[0]); i++) {
		raise(raised[i]);
		*v++ = caught[raised[i]];
	}
	/* set back to the default, read back */
	struct k_act dfl = { 0 }, old;
	*v++ = rt_sigaction_raw(SIGSYS, &dfl, NULL) || rt_sigaction_raw(SIGSYS, NULL, &old)
		       ? -errno
		       : (long)old.handler;
	return 0;
}

TEST(dispositions_of_all_64_signals_read_set_and_caught_as_natively)
{
	EXPECT_SAME_AS_NATIVE(body_all_64, 0);
}

/* ------------------------- a handler without SA_SIGINFO: the kernel's frame */

void probe_fault(void);
extern const char probe_resume[];
__asm__(".text\n.globl probe_fault, probe_resume\n.type probe_fault,@function\nprobe_fault:\n"
	"\txor %eax, %eax\n\tmovl $1, 8(%rax)\nprobe_resume:\n\tret\n"
	".size probe_fault, .-probe_fault\n");

static long frame_facts[2][6];

/* installed with sa_handler: the kernel still passes siginfo in rsi and the
 * ucontext in rdx, and the ucontext sits just above the return address */
static __attribute__((noinline)) void on_plain(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	char *fp = __builtin_frame_address(0);
	long *f = frame_facts[sig == SIGSEGV];
	f[0]++;
	/* where the siginfo is (the kernel fills it in for SA_SIGINFO only) */
	f[1] = si != NULL;
	f[2] = (char *)uc == fp + 16;
	f[3] = (char *)si - (char *)uc;
	f[4] = __builtin_return_address(0) != NULL;
	if (sig == SIGSEGV) {
		f[5] = uc->uc_mcontext.gregs[REG_RIP] == (greg_t)(uintptr_t)probe_fault + 2;
		uc->uc_mcontext.gregs[REG_RIP] =
			(greg_t)(uintptr_t)probe_resume; /* go on after it */
	}
}

static int body_plain_frame(void *a)
{
	struct answers *r = a;
	struct sigaction sa = { .sa_handler = (void (*)(int))(void (*)(void))on_plain };
	if (sigaction(SIGUSR1, &sa, NULL) || sigaction(SIGSEGV, &sa, NULL))
		return 1;
	raise(SIGUSR1);
	probe_fault(); /* resumed by the handler through the context on the stack */
	memcpy(r->v, frame_facts, sizeof(frame_facts));
	return 0;
}

TEST(handler_without_sa_siginfo_gets_the_kernel_frame_layout)
{
	EXPECT_SAME_AS_NATIVE(body_plain_frame, 0);
	struct answers *box = shared_answers();
	ASSERT_NE(NULL, box);
	ASSERT_EQ(0, outcome(run_sandboxed(body_plain_frame, box)));
	for (int i = 0; i < 2; i++) {
		EXPECT_EQ(1, box->v[i * 6 + 0]); /* ran once */
		EXPECT_EQ(1, box->v[i * 6 + 1]); /* siginfo's place in rsi */
		EXPECT_EQ(1, box->v[i * 6 + 2]); /* ucontext in rdx, above the return address */
	}
	EXPECT_EQ(1, box->v[6 + 5]); /* the context is the fault's */
}

/* ------------- a kept signal's handler runs with the program's sa_mask */

static long mask_facts[8];

static void on_segv_masked(int sig)
{
	(void)sig;
	sigset_t cur;
	sigprocmask(SIG_SETMASK, NULL, &cur);
	mask_facts[0] = sigismember(&cur, SIGUSR1);
	mask_facts[1] = sigismember(&cur, SIGSYS);
	mask_facts[2] = sigismember(&cur, SIGSEGV);
	mask_facts[3] = sigismember(&cur, SIGUSR2);
}

static void resume_after_probe(int sig, siginfo_t *si, void *ucv)
{
	(void)si;
	on_segv_masked(sig);
	((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)probe_resume;
}

static int body_kept_handler_mask(void *a)
{
	struct answers *r = a;
	struct sigaction sa = { .sa_sigaction = resume_after_probe, .sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR1);
	sigaddset(&sa.sa_mask, SIGSYS);
	if (sigaction(SIGSEGV, &sa, NULL))
		return 1;
	probe_fault();
	sigset_t cur;
	sigprocmask(SIG_SETMASK, NULL, &cur);
	mask_facts[4] = sigismember(&cur, SIGUSR1);
	mask_facts[5] = sigismember(&cur, SIGSYS);
	mask_facts[6] = sigismember(&cur, SIGSEGV);
	memcpy(r->v, mask_facts, sizeof(mask_facts));
	return 0;
}

TEST(kept_signal_handler_runs_with_its_sa_mask_and_the_mask_comes_back)
{
	EXPECT_SAME_AS_NATIVE(body_kept_handler_mask, 0);
}

/* --------- sandpit's signals cannot be taken away (DESIGN §6, invariant 5) */

struct attack {
	long attempts, traps_ok, program_handler_runs, masked_view_ok;
	long sigcgt_lost, sigblk_gained;
};
static struct attack *A;

static void on_attack(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	A->program_handler_runs++;
}

/* SigCgt and SigBlk of this (single) thread, from the kernel */
static int sig_status(uint64_t *cgt, uint64_t *blk)
{
	unsigned long long c, b;
	if (proc_status_hex("/proc/thread-self/status", "SigCgt:", &c) < 0 ||
	    proc_status_hex("/proc/thread-self/status", "SigBlk:", &b) < 0)
		return -1;
	*cgt = c;
	*blk = b;
	return 0;
}

static missed_fn missed_open;
static char forbidden[64];

/* sandpit still traps: strict mode emulates rdtsc in its SIGSEGV handler;
 * filter mode's net (SIGSYS) decides a call the patcher missed, and B
 * refuses the create */
static int still_traps(void)
{
	if (suite_mode() == SANDPIT_MODE_STRICT) {
		uint32_t lo, hi;
		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
		return lo || hi;
	}
	return missed_open((long)forbidden, O_WRONLY | O_CREAT, 0600) == -EACCES;
}

static void check_kernel_view(void)
{
	uint64_t cgt, blk;
	if (sig_status(&cgt, &blk))
		return;
	A->sigcgt_lost += (cgt & KEPT) != KEPT;
	A->sigblk_gained += (blk & KEPT) != 0;
}

static int body_attack(void *a)
{
	(void)a;
	missed_open = missed_code(SYS_open);
	if (!missed_open)
		return 1;
	static const uint64_t flag_bits[] = { SA_ONSTACK,   SA_RESTART, SA_NODEFER,
					      SA_RESETHAND, SA_SIGINFO, K_SA_RESTORER };
	static const int sigs[] = { SIGSEGV, SIGSYS, 63, 64 };
	const uint64_t handlers[] = { 0 /* SIG_DFL */, 1 /* SIG_IGN */,
				      (uint64_t)(uintptr_t)on_attack };
	for (unsigned s = 0; s < 4; s++)
		for (unsigned h = 0; h < 3; h++) {
			for (unsigned combo = 0; combo < 64; combo++) {
				struct k_act act = { handlers[h], 0,
						     (uint64_t)(uintptr_t)test_restorer, ~0ull };
				for (unsigned b = 0; b < 6; b++)
					if (combo & (1u << b))
						act.flags |= flag_bits[b];
				if (rt_sigaction_raw(sigs[s], &act, NULL) == 0)
					A->attempts++;
				A->traps_ok += still_traps();
			}
			check_kernel_view();
		}
	/* every signal blocked: the kernel's mask keeps sandpit's, the
	 * program's view says blocked */
	sigset_t all, now;
	sigfillset(&all);
	if (sigprocmask(SIG_BLOCK, &all, NULL) == 0)
		A->attempts++;
	if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, NULL, &now, 8) == 0 &&
	    sigismember(&now, SIGSEGV) && sigismember(&now, SIGSYS) && sigismember(&now, 64))
		A->masked_view_ok++;
	A->traps_ok += still_traps();
	check_kernel_view();
	/* a signalfd for them, while they are (virtually) blocked */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGSYS);
	sigaddset(&set, SIGSEGV);
	int sfd = signalfd(-1, &set, SFD_NONBLOCK);
	if (sfd >= 0)
		A->attempts++;
	A->traps_ok += still_traps();
	struct signalfd_siginfo ssi;
	if (sfd >= 0 && read(sfd, &ssi, sizeof(ssi)) == -1 && errno == EAGAIN)
		A->attempts++; /* the traps left nothing for it to read */
	/* an alternate stack of its own, then none */
	stack_t ss = { .ss_sp = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
		       .ss_size = 65536 };
	if (sigaltstack(&ss, NULL) == 0)
		A->attempts++;
	A->traps_ok += still_traps();
	stack_t off = { .ss_flags = SS_DISABLE };
	if (sigaltstack(&off, NULL) == 0)
		A->attempts++;
	A->traps_ok += still_traps();
	return 0;
}

/* Tests whose sandboxed run may take longer than the harness's 30 s
 * default on a loaded machine (bounded work, not a hang): each gets its
 * run's limit and a little more */
FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

TEST_F_TIMEOUT(slow, inv5_sandpit_signals_cannot_be_taken_away_by_sigaction_mask_signalfd_altstack, 130)
{
	A = shared_page(4096);
	ASSERT_NE(NULL, A);
	snprintf(forbidden, sizeof(forbidden), "/tmp/sandpit-sig-attack-%d", getpid());
	unlink(forbidden);
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_attack, NULL, NULL, 120)));
	/* every attempt reached the call and was accepted (virtualised) */
	EXPECT_EQ(4 * 3 * 64 + 5, A->attempts);
	EXPECT_EQ(4 * 3 * 64 + 4, A->traps_ok);
	EXPECT_EQ(0, A->program_handler_runs); /* never for sandpit's own traps */
	EXPECT_EQ(1, A->masked_view_ok);
	EXPECT_EQ(0, A->sigcgt_lost);
	EXPECT_EQ(0, A->sigblk_gained);
	EXPECT_EQ(-1, access(forbidden, F_OK));
}

/* A SIGSYS of the program's own (kill to itself) reaches its handler in
 * filter mode too, where SIGSYS is the net's; one left at the default
 * kills with SIGSYS, as natively. */
static int body_own_sigsys_default(void *a)
{
	(void)a;
	kill(getpid(), SIGSYS);
	return 0;
}

TEST(own_sigsys_at_default_kills_with_sigsys_as_natively)
{
	EXPECT_SAME_AS_NATIVE(body_own_sigsys_default, KILLED(SIGSYS));
}

TEST_HARNESS_MAIN
