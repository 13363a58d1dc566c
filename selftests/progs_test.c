/* What ordinary programs do at start that a sandbox must let through
 * without widening it: lowering their own limits (gpg turns core dumps
 * off), AF_UNIX sockets of their own and descriptors passed over a socket
 * pair they own (Python's asyncio), and reading their own name.  Each is
 * compared with the same code run natively; each check B makes on the way
 * is attacked. */
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "kselftest_harness.h"
#include "sandbox_util.h"
#include "user/layout/secure_mem.h"

/* ---- limits ---- */

struct rlim_out {
	long core_set, core_cur, core_max;   /* setrlimit(RLIMIT_CORE, {0, 0}) as gpg */
	long same, same_errno;               /* setrlimit to the value it has */
	long raise, raise_errno;             /* soft raised within hard */
	long prl_old_ok;                     /* prlimit64 lowering returns the old value */
	long other, other_errno;             /* prlimit64 on another pid */
	long read_other, read_other_errno;   /* ... even to read */
	pid_t parent;
};

static int body_rlimit(void *a)
{
	struct rlim_out *o = a;
	struct rlimit rl = { 0, 0 };
	o->core_set = setrlimit(RLIMIT_CORE, &rl);
	if (getrlimit(RLIMIT_CORE, &rl))
		return 1;
	o->core_cur = (long)rl.rlim_cur;
	o->core_max = (long)rl.rlim_max;
	struct rlimit f;
	if (getrlimit(RLIMIT_FSIZE, &f))
		return 2;
	errno = 0;
	o->same = setrlimit(RLIMIT_FSIZE, &f);
	o->same_errno = errno;
	struct rlimit n;
	if (getrlimit(RLIMIT_NOFILE, &n))
		return 3;
	struct rlimit lower = { n.rlim_cur - 1, n.rlim_max }, old = { 0, 0 };
	o->prl_old_ok = syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &lower, &old) == 0 &&
			old.rlim_cur == n.rlim_cur && old.rlim_max == n.rlim_max &&
			getrlimit(RLIMIT_NOFILE, &n) == 0 && n.rlim_cur == lower.rlim_cur;
	struct rlimit up = { n.rlim_cur + 1, n.rlim_max };
	errno = 0;
	o->raise = setrlimit(RLIMIT_NOFILE, &up);
	o->raise_errno = errno;
	struct rlimit keep = { 0, 0 };
	errno = 0;
	o->other = syscall(SYS_prlimit64, o->parent, RLIMIT_CORE, &keep, NULL);
	o->other_errno = errno;
	errno = 0;
	o->read_other = syscall(SYS_prlimit64, o->parent, RLIMIT_CORE, NULL, &keep);
	o->read_other_errno = errno;
	return 0;
}

static void run_rlimit(struct __test_metadata *_metadata, struct rlim_out *nat, struct rlim_out *box)
{
	nat->parent = box->parent = getpid();
	/* a soft NOFILE limit below its hard one, so that a raise is one the
	 * kernel allows */
	struct rlimit n;
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &n));
	if (n.rlim_max < 512)
		SKIP(return, "RLIMIT_NOFILE's hard limit %lu", (unsigned long)n.rlim_max);
	n.rlim_cur = 256;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &n));
	ASSERT_EQ(0, run_native_then_sandboxed(body_rlimit, nat, box, "/tmp"));
}

TEST(rlimit_core_lowered_to_zero_as_gpg_does_and_kept_limits_as_native)
{
	struct rlim_out *nat = shared_page(sizeof(*nat)), *box = shared_page(sizeof(*box));
	ASSERT_NE(NULL, nat);
	ASSERT_NE(NULL, box);
	run_rlimit(_metadata, nat, box);
	EXPECT_EQ(0, nat->core_set);
	EXPECT_EQ(nat->core_set, box->core_set);
	EXPECT_EQ(0, box->core_cur);
	EXPECT_EQ(0, box->core_max);
	EXPECT_EQ(0, box->same) TH_LOG("errno %ld", box->same_errno);
	EXPECT_EQ(nat->same, box->same);
	EXPECT_EQ(1, nat->prl_old_ok);
	EXPECT_EQ(1, box->prl_old_ok);
}

TEST(rlimit_raised_refused_eperm_where_native_allows_it)
{
	struct rlim_out *nat = shared_page(sizeof(*nat)), *box = shared_page(sizeof(*box));
	ASSERT_NE(NULL, nat);
	ASSERT_NE(NULL, box);
	run_rlimit(_metadata, nat, box);
	EXPECT_EQ(0, nat->raise);
	EXPECT_EQ(-1, box->raise);
	EXPECT_EQ(EPERM, box->raise_errno);
}

TEST(prlimit64_on_another_process_refused_eperm_even_to_read)
{
	struct rlim_out *nat = shared_page(sizeof(*nat)), *box = shared_page(sizeof(*box));
	ASSERT_NE(NULL, nat);
	ASSERT_NE(NULL, box);
	run_rlimit(_metadata, nat, box);
	EXPECT_EQ(0, nat->read_other); /* the same user's process: the kernel lets it */
	EXPECT_EQ(-1, box->other);
	EXPECT_EQ(EPERM, box->other_errno);
	EXPECT_EQ(-1, box->read_other);
	EXPECT_EQ(EPERM, box->read_other_errno);
}

/* One thread asks to keep RLIMIT_CORE's soft limit while another flips the
 * struct it points to between that value and a raise: B compares and sets
 * from its one copy, so the limit never goes up. */
#define RACE_CALLS 20000
struct rlim_race {
	volatile struct rlimit rl;
	volatile int stop;
	long calls, ok, eperm, other, raised, flips;
};

static void *flip_limit(void *a)
{
	struct rlim_race *r = a;
	while (!r->stop) {
		r->rl.rlim_cur = 1 << 20;
		r->rl.rlim_cur = 4096;
		r->flips++;
	}
	return NULL;
}

static int body_rlimit_race(void *a)
{
	struct rlim_race *r = a;
	pthread_t t;
	r->rl.rlim_cur = 4096;
	r->rl.rlim_max = 1 << 21;
	if (pthread_create(&t, NULL, flip_limit, r))
		return 1;
	for (long i = 0; i < RACE_CALLS; i++) {
		long s = syscall(SYS_prlimit64, 0, RLIMIT_CORE, (void *)&r->rl, NULL);
		r->calls++;
		if (s == 0)
			r->ok++;
		else if (errno == EPERM)
			r->eperm++;
		else
			r->other++;
		struct rlimit now;
		if (getrlimit(RLIMIT_CORE, &now) || now.rlim_cur != 4096 || now.rlim_max != 1 << 21)
			r->raised++;
	}
	r->stop = 1;
	pthread_join(t, NULL);
	return 0;
}

TEST(rlimit_rewritten_during_the_check_never_raises_the_limit)
{
	struct rlim_race *r = shared_page(sizeof(*r));
	ASSERT_NE(NULL, r);
	struct rlimit c = { 4096, 1 << 21 };
	ASSERT_EQ(0, setrlimit(RLIMIT_CORE, &c));
	struct sandpit_options o = { .mode = suite_mode() };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_rlimit_race, r, &o, 240)));
	TH_LOG("%ld calls: %ld kept, %ld refused (raised in B's copy); %ld flips", r->calls, r->ok,
	       r->eperm, r->flips);
	EXPECT_EQ(RACE_CALLS, r->calls);
	EXPECT_EQ(0, r->other);
	EXPECT_EQ(0, r->raised);
	EXPECT_EQ(r->calls, r->ok + r->eperm);
}

TEST_HARNESS_MAIN
