/* The program's descriptors and sandpit's never meet (invariant 3), and
 * the program sees its RLIMIT_NOFILE as it set it.  Where the hard limit
 * leaves room, sandpit's block lies at or above the program's soft limit
 * (user/layout/slots.h): a program that opens descriptors until EMFILE gets the
 * same numbers as natively, closefrom leaves sandpit working, and a
 * program that raises its own limit still cannot name sandpit's numbers.
 * Where the hard limit leaves no room, the block lies below the limit and
 * SANDPIT_DEBUG says how many numbers the program lost. */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "user/layout/secure_mem.h"
#include "u_state.h"
#include "block_util.h"

#define MAXFDS 4096

struct fill_out {
	int sandboxed;
	struct rlimit before, after;   /* getrlimit at the body's start and end */
	struct rlimit prl;             /* prlimit64's view, at the start */
	long n, err;                   /* descriptors opened until the first failure, its errno */
	long polled;                   /* poll on every one of them: how many ready */
	long lo, hi;                   /* sandboxed: sandpit's block */
	long in_block;                 /* opened numbers inside it (must be 0) */
	int fds[MAXFDS];
};

/* open /dev/null until the kernel says no, then poll them all (the
 * select/poll test above FD_SETSIZE does this) and close them */
static int body_fill(void *a)
{
	struct fill_out *o = a;
	o->sandboxed = sandpit_mode() != SANDPIT_MODE_NONE;
	if (getrlimit(RLIMIT_NOFILE, &o->before) ||
	    syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &o->prl))
		return 1;
	o->lo = o->hi = -1;
	if (o->sandboxed) {
		o->lo = state_of(my_mailbox())->sp->fd_lo;
		o->hi = state_of(my_mailbox())->sp->fd_hi;
	}
	o->n = 0;
	for (;;) {
		int fd = open("/dev/null", O_RDONLY);
		if (fd < 0) {
			o->err = errno;
			break;
		}
		if (o->n == MAXFDS)
			return 2;
		o->fds[o->n++] = fd;
		o->in_block += fd >= o->lo && fd <= o->hi;
	}
	static struct pollfd p[MAXFDS];
	for (long i = 0; i < o->n; i++)
		p[i] = (struct pollfd){ .fd = o->fds[i], .events = POLLIN };
	o->polled = poll(p, (nfds_t)o->n, 0);
	for (long i = 0; i < o->n; i++)
		if (close(o->fds[i]))
			return 3;
	if (getrlimit(RLIMIT_NOFILE, &o->after))
		return 4;
	return 0;
}

/* the program's limit set to soft (the hard one kept), then the body run
 * natively and sandboxed */
static void fill_both(struct __test_metadata *_metadata, rlim_t soft, struct fill_out **nat,
		      struct fill_out **box)
{
	struct rlimit rl;
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_max < SM_FD_TOP)
		SKIP(return, "RLIMIT_NOFILE's hard limit %lu leaves no room above %lu",
		     (unsigned long)rl.rlim_max, (unsigned long)soft);
	rl.rlim_cur = soft;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl)); /* this test's process only */
	*nat = shared_page(sizeof(**nat));
	*box = shared_page(sizeof(**box));
	ASSERT_NE(NULL, *nat);
	ASSERT_NE(NULL, *box);
	fflush(NULL);
	pid_t p = fork();
	ASSERT_LE(0, p);
	if (p == 0)
		_exit(body_fill(*nat));
	int st;
	ASSERT_EQ(p, waitpid(p, &st, 0));
	ASSERT_EQ(0, outcome(st));
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_fill, *box, NULL, 120)));
	ASSERT_EQ(1, (*box)->sandboxed);
}

static void same_as_native(struct __test_metadata *_metadata, const struct fill_out *nat,
			   const struct fill_out *box, rlim_t soft)
{
	/* the attack ran: the program filled its table */
	EXPECT_LT((long)soft - 16, nat->n);
	EXPECT_EQ(EMFILE, nat->err);
	EXPECT_EQ(EMFILE, box->err);
	EXPECT_EQ(nat->n, box->n);
	EXPECT_EQ(0, memcmp(nat->fds, box->fds, sizeof(int) * (size_t)nat->n));
	EXPECT_EQ(nat->n, nat->polled);
	EXPECT_EQ(box->n, box->polled);
	EXPECT_EQ(0, box->in_block);
	/* the limit as the program set it, before, during and after */
	EXPECT_EQ((long)soft, (long)box->before.rlim_cur);
	EXPECT_EQ(nat->before.rlim_cur, box->before.rlim_cur);
	EXPECT_EQ(nat->before.rlim_max, box->before.rlim_max);
	EXPECT_EQ(nat->prl.rlim_cur, box->prl.rlim_cur);
	EXPECT_EQ(nat->prl.rlim_max, box->prl.rlim_max);
	EXPECT_EQ(nat->after.rlim_cur, box->after.rlim_cur);
	/* sandpit's block is at or above it */
	EXPECT_LE((long)soft, box->lo);
	EXPECT_EQ(SM_NFDS - 1, box->hi - box->lo);
}

TEST(fds_until_emfile_under_1024_same_numbers_and_limit_as_native)
{
	struct fill_out *nat = NULL, *box = NULL;
	fill_both(_metadata, 1024, &nat, &box);
	if (!nat)
		return;
	same_as_native(_metadata, nat, box, 1024);
}

/* about 2,000 descriptors, well above FD_SETSIZE: the numbers just below
 * the block's first */
TEST(fds_until_emfile_under_2045_same_numbers_and_limit_as_native)
{
	struct fill_out *nat = NULL, *box = NULL;
	fill_both(_metadata, SM_FD_TOP - SM_NFDS, &nat, &box);
	if (!nat)
		return;
	same_as_native(_metadata, nat, box, SM_FD_TOP - SM_NFDS);
	EXPECT_LT(2000, box->n);
}

/* ---- closefrom and close_range over everything ---- */

#define OWN 16

struct closefrom_out {
	long lo, hi;
	long opened, closed_by_closefrom, closed_by_close_range;
	long r_closefrom_errno, r_close_range;
	long held_expected, held_before, held_after; /* sandpit's numbers open, per /proc/self/fd */
	long t_call_ok, b_call_ok, thread_ok;
	/* the limit kept: on each of sandpit's numbers dup2 and dup3 give
	 * EBADF and F_DUPFD EINVAL, as natively for a number past the limit */
	long attempts, as_native;
};

static long open_own(int *fds)
{
	long n = 0;
	for (int i = 0; i < OWN; i++)
		n += (fds[i] = open("/dev/null", O_RDONLY)) >= 3;
	return n;
}

static long gone(const int *fds)
{
	long n = 0;
	for (int i = 0; i < OWN; i++)
		n += fcntl(fds[i], F_GETFD) == -1 && errno == EBADF;
	return n;
}

static void *thread_fn(void *a) { return a; }

static int body_closefrom(void *a)
{
	struct closefrom_out *o = a;
	int fds[OWN];
	o->lo = state_of(my_mailbox())->sp->fd_lo;
	o->hi = state_of(my_mailbox())->sp->fd_hi;
	o->held_expected = block_held_expected(o->lo, o->hi, 1);
	o->held_before = held_in(o->lo, o->hi);
	/* glibc's closefrom: close_range, or (without it) one close per
	 * number /proc/self/fd lists */
	o->opened = open_own(fds);
	errno = 0;
	closefrom(3);
	o->r_closefrom_errno = errno;
	o->closed_by_closefrom = gone(fds);
	o->opened += open_own(fds);
	o->r_close_range = syscall(SYS_close_range, 3, ~0U, 0);
	o->closed_by_close_range = gone(fds);
	for (long fd = o->lo; fd <= o->hi; fd++) {
		o->attempts += 3;
		o->as_native += dup2(0, (int)fd) == -1 && errno == EBADF;
		o->as_native += dup3(0, (int)fd, 0) == -1 && errno == EBADF;
		o->as_native += fcntl(0, F_DUPFD, (int)fd) == -1 && errno == EINVAL;
	}
	o->held_after = held_in(o->lo, o->hi);
	/* B checks the path, T opens it */
	int fd = open("/etc/passwd", O_RDONLY);
	char c;
	o->t_call_ok = fd >= 0 && read(fd, &c, 1) == 1;
	if (fd >= 0)
		close(fd);
	/* B answers it */
	struct stat sb;
	o->b_call_ok = stat("/etc/passwd", &sb) == 0;
	/* a new slot: B hands it out, T clones into it, both use its eventfds */
	pthread_t t;
	void *r = NULL;
	o->thread_ok = pthread_create(&t, NULL, thread_fn, (void *)7L) == 0 && pthread_join(t, &r) == 0 &&
		       r == (void *)7L;
	return 0;
}

TEST(closefrom_3_closes_the_programs_sandpit_keeps_working_and_its_numbers_are_past_the_limit)
{
	struct rlimit rl;
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_max < SM_FD_TOP)
		SKIP(return, "RLIMIT_NOFILE's hard limit %lu", (unsigned long)rl.rlim_max);
	rl.rlim_cur = 1024;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	struct closefrom_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_closefrom, o, NULL, 60)));
	EXPECT_EQ(2 * OWN, o->opened);
	EXPECT_EQ(OWN, o->closed_by_closefrom);
	EXPECT_EQ(0, o->r_closefrom_errno);
	EXPECT_EQ(0, o->r_close_range);
	EXPECT_EQ(OWN, o->closed_by_close_range);
	EXPECT_EQ(o->held_expected, o->held_before);
	EXPECT_EQ(o->held_before, o->held_after);
	EXPECT_EQ(3 * SM_NFDS, o->attempts);
	EXPECT_EQ(o->attempts, o->as_native);
	EXPECT_EQ(1, o->t_call_ok);
	EXPECT_EQ(1, o->b_call_ok);
	EXPECT_EQ(1, o->thread_ok);
}

/* ---- a program that raises its own limit to the hard one ---- */

struct raise_out {
	long lo, hi, raised;
	long attempts, refused;        /* dup2, dup3, close on sandpit's numbers: EBADF */
	long dupfd_attempts, dupfd_outside; /* F_DUPFD from each: a number past the block */
	long held_after;
	long opened, in_block, last;   /* opened until one lands past the block */
	long notifier;                 /* a notifier (block_util.h): there must be none */
	long t_call_ok;
};

static int st_raise;

static void try_refused(struct raise_out *o, long r)
{
	o->attempts++;
	o->refused += r == -1 && errno == EBADF;
}

static int body_raise(void *a)
{
	struct raise_out *o = a;
	o->lo = state_of(my_mailbox())->sp->fd_lo;
	o->hi = state_of(my_mailbox())->sp->fd_hi;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 1;
	/* a policy that lets the program raise its limit gets every slot's
	 * eventfds at start-up: numbers of the block not yet made would be
	 * the kernel's to hand out past the limit */
	o->notifier = notifier_tid() != 0;
	rl.rlim_cur = rl.rlim_max;
	o->raised = setrlimit(RLIMIT_NOFILE, &rl) == 0 && (long)rl.rlim_cur > o->hi;
	for (long fd = o->lo; fd <= o->hi; fd++) {
		try_refused(o, dup2(0, (int)fd));
		try_refused(o, dup3(0, (int)fd, O_CLOEXEC));
		try_refused(o, close((int)fd));
		o->dupfd_attempts++;
		int d = fcntl(0, F_DUPFD, (int)fd);
		o->dupfd_outside += d > o->hi;
		if (d >= 0 && d > o->hi)
			close(d);
	}
	o->held_after = held_in(o->lo, o->hi);
	/* every number the kernel hands out now skips the block */
	static int fds[MAXFDS * 2];
	long n = 0;
	int fd;
	while (n < MAXFDS * 2 && (fd = open("/dev/null", O_RDONLY)) >= 0) {
		fds[n++] = fd;
		o->in_block += fd >= o->lo && fd <= o->hi;
		o->last = fd;
		if (fd > o->hi)
			break;
	}
	o->opened = n;
	for (long i = 0; i < n; i++)
		close(fds[i]);
	fd = open("/etc/passwd", O_RDONLY);
	o->t_call_ok = fd >= 0;
	if (fd >= 0)
		close(fd);
	return 0;
}

extern const char sandpit_default_policy[];
extern const uint64_t sandpit_default_policy_len;

/* The default policy refuses setrlimit (EPERM) and lets prlimit64 only
 * read: a policy that lets the program raise its limit (prlimit64 on
 * itself, as glibc's setrlimit makes it) */
static void raising_policy(struct __test_metadata *_metadata, char *file)
{
	FILE *pf = fdopen(mkstemp(file), "w");
	ASSERT_NE(NULL, pf);
	const char *t = sandpit_default_policy, *end = t + sandpit_default_policy_len;
	int replaced = 0;
	while (t < end) {
		const char *nl = memchr(t, '\n', (size_t)(end - t));
		size_t len = nl ? (size_t)(nl - t + 1) : (size_t)(end - t);
		if (len >= 10 && !memcmp(t, "prlimit64:", 10)) {
			fputs("prlimit64: arg0 == 0\n", pf);
			replaced++;
		} else {
			ASSERT_EQ(1u, fwrite(t, len, 1, pf));
		}
		t += len;
	}
	ASSERT_EQ(0, fclose(pf));
	ASSERT_EQ(1, replaced);
}

TEST(raised_limit_dup2_dup3_close_on_sandpits_numbers_refused_f_dupfd_skips_them)
{
	struct rlimit rl;
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_max < SM_FD_TOP + 1)
		SKIP(return, "RLIMIT_NOFILE's hard limit %lu", (unsigned long)rl.rlim_max);
	rl.rlim_cur = 1024;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	char file[] = "/tmp/sandpit-nofile-policy-XXXXXX";
	raising_policy(_metadata, file);
	struct raise_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	struct sandpit_options opts = { .mode = suite_mode(), .policy_file = file };
	st_raise = run_sandboxed_opts(body_raise, o, &opts, 120);
	unlink(file);
	ASSERT_EQ(0, outcome(st_raise));
	EXPECT_EQ(1, o->raised);
	EXPECT_EQ(0, o->notifier);
	EXPECT_EQ(SM_NFDS - 1, o->hi - o->lo);
	EXPECT_EQ(3 * SM_NFDS, o->attempts);
	EXPECT_EQ(o->attempts, o->refused);
	EXPECT_EQ(SM_NFDS, o->dupfd_attempts);
	EXPECT_EQ(o->dupfd_attempts, o->dupfd_outside);
	EXPECT_EQ(SM_NFDS, o->held_after);
	/* it got numbers below the block, then the first one past it */
	EXPECT_LT(o->lo - 300, o->opened);
	EXPECT_EQ(0, o->in_block);
	EXPECT_EQ(o->hi + 1, o->last);
	EXPECT_EQ(1, o->t_call_ok);
}

/* ---- no room above: the block below, said so ---- */

static int body_fallback(void *a)
{
	struct fill_out *o = a;
	return body_fill(o);
}

TEST(hard_equal_to_soft_1024_the_block_below_the_program_loses_its_numbers_and_is_told)
{
	struct rlimit rl = { 1024, 1024 };
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	struct fill_out *nat = shared_page(sizeof(*nat)), *box = shared_page(sizeof(*box));
	ASSERT_NE(NULL, nat);
	ASSERT_NE(NULL, box);
	/* the log's descriptors first, so that both runs inherit them */
	char path[] = "/tmp/sandpit-nofile-log-XXXXXX";
	int logfd = mkstemp(path);
	ASSERT_LE(0, logfd);
	unlink(path);
	int saved = dup(2);
	fflush(NULL);
	pid_t p = fork();
	ASSERT_LE(0, p);
	if (p == 0)
		_exit(body_fill(nat));
	int st;
	ASSERT_EQ(p, waitpid(p, &st, 0));
	ASSERT_EQ(0, outcome(st));

	dup2(logfd, 2);
	setenv("SANDPIT_DEBUG", "1", 1);
	st = run_sandboxed_opts(body_fallback, box, NULL, 120);
	unsetenv("SANDPIT_DEBUG");
	dup2(saved, 2);
	close(saved);
	char log[8192] = "";
	ssize_t got = pread(logfd, log, sizeof(log) - 1, 0);
	close(logfd);
	ASSERT_EQ(0, outcome(st));
	ASSERT_LT(0, got);
	log[got] = 0;

	long block = box->hi - box->lo + 1;
	EXPECT_EQ(EMFILE, box->err);
	EXPECT_EQ(0, box->in_block);
	EXPECT_GT(1024, box->hi);
	EXPECT_EQ(nat->n - block, box->n);
	if (nat->n - block != box->n) {
		for (long i = 0, j = 0; i < nat->n; i++) {
			if (j < box->n && box->fds[j] == nat->fds[i]) {
				j++;
				continue;
			}
			if (nat->fds[i] < box->lo || nat->fds[i] > box->hi)
				TH_LOG("native %d not sandboxed (block %ld..%ld)", nat->fds[i], box->lo, box->hi);
		}
	}
	EXPECT_EQ(1024, (long)box->before.rlim_cur);
	EXPECT_EQ(1024, (long)box->before.rlim_max);
	EXPECT_EQ(1024, (long)box->after.rlim_cur);
	char want[400];
	snprintf(want, sizeof(want),
		 "sandpit: descriptors %ld..%ld (%ld thread slots) lie BELOW the program's "
		 "RLIMIT_NOFILE 1024: its hard limit 1024 leaves no room above; the program has "
		 "%ld fewer descriptors than its limit says\n",
		 box->lo, box->hi, (block - 3) / 2, block);
	EXPECT_NE(NULL, strstr(log, want));
	if (!strstr(log, want))
		TH_LOG("log: %.400s", log);
}

TEST_HARNESS_MAIN
