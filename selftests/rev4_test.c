/* An outside review of three surfaces that changed together: the
 * descriptor block above RLIMIT_NOFILE (user/start/slots.c), the metadata calls
 * on a descriptor that B now makes (user/trusted/path_op.c meta_fd), and the
 * signals U puts off while a request is in flight (user/untrusted/u_signal.c).
 * Each test attacks one property from the sandboxed program, counts the
 * attempts that reached the call, and checks what is left afterwards (the
 * file on disk, the descriptor's flags, sandpit still serving).  Here the
 * descriptor block; rev4_meta_test has the metadata calls, rev4_signal_test
 * the signals put off.
 *
 * A test that expects what sandpit does not do today says so above it: it
 * fails on purpose until the hole is closed. */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "u_state.h"
#include "block_util.h"
#include "rev4_util.h"

/* ================= surface: the descriptor block ================= */

#define NCALLS 24
static const char *const call_names[NCALLS] = {
	"fcntl F_SETFD",  "fcntl F_SETFL",   "fcntl F_GETFL",	 "fcntl F_DUPFD_CLOEXEC",
	"dup",		  "ioctl FIONBIO",   "ioctl FIONCLEX",	 "epoll_ctl ADD",
	"open /proc/self/fd/N rdonly", "open /proc/self/fd/N rdwr", "open /dev/fd/N",
	"open /proc/thread-self/fd/N", "mmap", "sendfile from", "splice from",
	"fchmod",	  "fchown",	     "fsetxattr",	 "ftruncate",
	"fchdir",	  "close",	     "dup2 onto",	 "dup3 onto O_CLOEXEC",
	"copy_file_range from",
};

struct block_out {
	long lo, hi;
	long attempts;
	long ok[NCALLS];	/* calls that succeeded on one of sandpit's numbers */
	long first_ok[NCALLS];	/* the first number each succeeded on */
	long flags_changed;	/* fdinfo flags differ after the attacks */
	long held_expected, held_before, held_after;
	long cr_cloexec;	/* close_range(lo, hi, CLOSE_RANGE_CLOEXEC)'s result */
	long got_in_block;	/* a number the program was given inside the block */
	long works;
	/* what a reopen through /proc/self/fd/N of sandpit's number gave:
	 * the path it names (a fresh open of that file, not sandpit's open
	 * file description) */
	long reopened;
	char reopen_target[4][96];
};

static struct block_out *block_o;

static int ok_call(int i, long fd, int own, int ep, int devnull)
{
	char p[64];
	int one = 1;
	long r;
	switch (i) {
	case 0: return fcntl((int)fd, F_SETFD, FD_CLOEXEC) == 0;
	case 1: return fcntl((int)fd, F_SETFL, O_NONBLOCK) == 0;
	case 2: return fcntl((int)fd, F_GETFL) >= 0;
	case 3: r = fcntl((int)fd, F_DUPFD_CLOEXEC, 0); break;
	case 4: r = dup((int)fd); break;
	case 5: return ioctl((int)fd, FIONBIO, &one) == 0;
	case 6: return ioctl((int)fd, FIONCLEX) == 0;
	case 7: {
		struct epoll_event ev = { .events = EPOLLIN };
		return epoll_ctl(ep, EPOLL_CTL_ADD, (int)fd, &ev) == 0;
	}
	case 8: snprintf(p, sizeof(p), "/proc/self/fd/%ld", fd); r = open(p, O_RDONLY); break;
	case 9: snprintf(p, sizeof(p), "/proc/self/fd/%ld", fd); r = open(p, O_RDWR); break;
	case 10: snprintf(p, sizeof(p), "/dev/fd/%ld", fd); r = open(p, O_RDONLY); break;
	case 11: snprintf(p, sizeof(p), "/proc/thread-self/fd/%ld", fd); r = open(p, O_RDONLY); break;
	case 12: {
		void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, (int)fd, 0);
		if (m == MAP_FAILED)
			return 0;
		munmap(m, 4096);
		return 1;
	}
	case 13: { off_t o = 0; return sendfile(devnull, (int)fd, &o, 1) >= 0; }
	case 14: return splice((int)fd, NULL, devnull, NULL, 1, SPLICE_F_NONBLOCK) >= 0;
	case 15: return fchmod((int)fd, 0600) == 0;
	case 16: return fchown((int)fd, (uid_t)-1, (gid_t)-1) == 0;
	case 17: return fsetxattr((int)fd, "user.rev4", "1", 1, 0) == 0;
	case 18: return ftruncate((int)fd, 0) == 0;
	case 19: {
		if (fchdir((int)fd) != 0)
			return 0;
		return chdir("/") == 0 || 1;
	}
	case 20: return close((int)fd) == 0;
	case 21: return dup2(own, (int)fd) == (int)fd;
	case 22: return dup3(own, (int)fd, O_CLOEXEC) == (int)fd;
	case 23: { loff_t o = 0; return syscall(SYS_copy_file_range, (int)fd, &o, devnull, NULL, 1, 0) >= 0; }
	default: return 0;
	}
	if (r < 0)
		return 0;
	if (i >= 8 && i <= 11 && block_o->reopened < 4) {
		char *t = block_o->reopen_target[block_o->reopened++];
		snprintf(p, sizeof(p), "/proc/self/fd/%ld", r);
		ssize_t n = readlink(p, t, 95);
		t[n > 0 ? n : 0] = 0;
		/* the same open file description as sandpit's? */
		if (fcntl((int)r, F_GETFL) >= 0 && (fcntl((int)r, F_GETFL) & O_NONBLOCK))
			strcat(t, " (O_NONBLOCK)");
	}
	close((int)r);
	return 1;
}

/* every call a descriptor of sandpit's could be named in, on each number
 * of the block, by a program whose limit is soft:hard */
static int body_block(void *a)
{
	struct block_out *o = a;
	block_o = o;
	o->lo = state_of(my_mailbox())->sp->fd_lo;
	o->hi = state_of(my_mailbox())->sp->fd_hi;
	static long before[SM_NFDS];
	for (long fd = o->lo; fd <= o->hi && fd - o->lo < SM_NFDS; fd++)
		before[fd - o->lo] = fdinfo_flags(fd);
	o->held_expected = block_held_expected(o->lo, o->hi, 1);
	o->held_before = held_in(o->lo, o->hi);
	int own = open("/dev/null", O_RDONLY);
	int devnull = open("/dev/null", O_WRONLY);
	int ep = epoll_create1(0);
	if (own < 0 || devnull < 0 || ep < 0)
		return 1;
	for (long fd = o->lo; fd <= o->hi; fd++)
		for (int i = 0; i < NCALLS; i++) {
			o->attempts++;
			if (ok_call(i, fd, own, ep, devnull) && !o->ok[i]++)
				o->first_ok[i] = fd;
		}
	o->cr_cloexec = syscall(SYS_close_range, o->lo, o->hi, CLOSE_RANGE_CLOEXEC) ? -errno : 0;
	for (long fd = o->lo; fd <= o->hi && fd - o->lo < SM_NFDS; fd++)
		o->flags_changed += fdinfo_flags(fd) != before[fd - o->lo];
	o->held_after = held_in(o->lo, o->hi);
	/* numbers the kernel hands out never land in the block */
	for (int i = 0; i < 64; i++) {
		int d = fcntl(own, F_DUPFD_CLOEXEC, (int)o->lo);
		o->got_in_block += d >= o->lo && d <= o->hi;
		int e = dup(own);
		o->got_in_block += e >= o->lo && e <= o->hi;
		if (d >= 0)
			close(d);
		if (e >= 0)
			close(e);
	}
	o->works = sandpit_works();
	return 0;
}


static void block_attack(struct __test_metadata *_metadata, uid_t uid, rlim_t soft, rlim_t hard)
{
	NEED_ROOT(uid);
	struct block_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	struct sandpit_options opts = { .mode = suite_mode() };
	int st = run_sandboxed_as(uid, soft, hard, body_block, o, &opts, 120);
	ASSERT_EQ(0, outcome(st));
	TH_LOG("block %ld..%ld (limit %lu:%lu, uid %u)", o->lo, o->hi, (unsigned long)soft,
	       (unsigned long)hard, uid);
	EXPECT_EQ((o->hi - o->lo + 1) * NCALLS, o->attempts);
	for (int i = 0; i < NCALLS; i++) {
		if (i < 8 || i > 11)
			EXPECT_EQ(0, o->ok[i]);
		if (o->ok[i])
			TH_LOG("%s succeeded on %ld of sandpit's numbers (first %ld)", call_names[i],
			       o->ok[i], o->first_ok[i]);
	}
	/* a reopen is a new open of the file the number names: only files the
	 * program may open itself (the placeholder's /dev/null, the maps) */
	for (long i = 0; i < o->reopened; i++) {
		const char *t = o->reopen_target[i];
		size_t n = strlen(t);
		TH_LOG("reopened through /proc: %s", t);
		EXPECT_TRUE(!strcmp(t, "/dev/null") || (n > 5 && !strcmp(t + n - 5, "/maps")));
	}
	/* sandpit's, the numbers of slots not made yet too: every call on
	 * each refused, and none of them the program's afterwards */
	EXPECT_EQ(o->held_expected, o->held_before);
	EXPECT_EQ(o->held_before, o->held_after);
	EXPECT_EQ(0, o->flags_changed);
	EXPECT_EQ(0, o->got_in_block);
	EXPECT_EQ(1, o->works);
	TH_LOG("close_range(lo, hi, CLOSE_RANGE_CLOEXEC) = %ld", o->cr_cloexec);
}

TEST(block_above_soft_1024_no_call_reaches_sandpits_descriptors_root)
{
	block_attack(_metadata, 0, 1024, 20000);
}

TEST(block_above_soft_1024_no_call_reaches_sandpits_descriptors_nobody)
{
	block_attack(_metadata, NOBODY, 1024, 20000);
}

/* hard == soft: the block lies below the limit, inside the program's range */
TEST(block_below_limit_1024_1024_no_call_reaches_sandpits_descriptors_root)
{
	block_attack(_metadata, 0, 1024, 1024);
}

TEST(block_below_limit_20000_20000_no_call_reaches_sandpits_descriptors_nobody)
{
	block_attack(_metadata, NOBODY, 20000, 20000);
}

/* close_range with CLOSE_RANGE_UNSHARE over everything: the calling
 * thread's table is unshared (natively: its own copy, then closed).  In
 * strict mode T makes the call; it must never unshare T from U. */
struct unshare_out {
	long r, own_closed, works, held, held_expected;
	long lo, hi;
};

static int body_unshare(void *a)
{
	struct unshare_out *o = a;
	o->lo = state_of(my_mailbox())->sp->fd_lo;
	o->hi = state_of(my_mailbox())->sp->fd_hi;
	int fd = open("/dev/null", O_RDONLY);
	o->r = syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_UNSHARE) ? -errno : 0;
	o->own_closed = fcntl(fd, F_GETFD) == -1 && errno == EBADF;
	o->held_expected = block_held_expected(o->lo, o->hi, 1);
	o->held = held_in(o->lo, o->hi);
	o->works = sandpit_works();
	return 0;
}

TEST(close_range_unshare_over_everything_leaves_sandpit_serving)
{
	struct unshare_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	struct sandpit_options opts = { .mode = suite_mode() };
	int st = run_sandboxed_as(0, 1024, 20000, body_unshare, o, &opts, 60);
	ASSERT_EQ(0, outcome(st));
	TH_LOG("close_range(3, ~0, UNSHARE) = %ld, own closed %ld", o->r, o->own_closed);
	EXPECT_EQ(1, o->works);
	EXPECT_EQ(o->held_expected, o->held);
	if (o->r == 0)
		EXPECT_EQ(1, o->own_closed);
}

/* The program writes and reads sandpit's eventfds (read and write take
 * any descriptor, in both modes): the eventfds of slots no thread uses
 * yet are set near their maximum, so that a later write of one blocks,
 * and T's and U's of this thread get spurious wake-ups.  Then threads
 * are made (they take those slots) and each makes calls: sandpit must
 * still serve every one, never hang. */
struct evfd_out {
	long lo, hi, written, read_back, threads_ok, calls_ok, works;
};

static void *evfd_thread(void *a)
{
	struct evfd_out *o = a;
	struct stat sb;
	long ok = 0;
	for (int i = 0; i < 50; i++)
		ok += stat("/etc/passwd", &sb) == 0;
	__atomic_fetch_add(&o->calls_ok, ok, __ATOMIC_SEQ_CST);
	return NULL;
}

static int body_evfd(void *a)
{
	struct evfd_out *o = a;
	o->lo = state_of(my_mailbox())->sp->fd_lo;
	o->hi = state_of(my_mailbox())->sp->fd_hi;
	uint64_t big = 0xfffffffffffffffeull, one = 1, got;
	/* slots 1..63: both eventfds near full */
	for (long fd = o->lo + 4; fd < o->lo + 2 + 2 * 64 && fd < o->hi; fd++)
		o->written += write((int)fd, &big, 8) == 8;
	/* this thread's: spurious wake-ups both ways */
	for (int i = 0; i < 100; i++) {
		o->written += write((int)o->lo + 2, &one, 8) == 8;
		o->written += write((int)o->lo + 3, &one, 8) == 8;
	}
	pthread_t t[16];
	for (int i = 0; i < 16; i++)
		o->threads_ok += pthread_create(&t[i], NULL, evfd_thread, o) == 0;
	for (int i = 0; i < o->threads_ok; i++)
		pthread_join(t[i], NULL);
	(void)got;
	o->works = sandpit_works();
	return 0;
}

TEST(sandpits_eventfds_filled_and_rung_by_the_program_sandpit_still_serves)
{
	struct evfd_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	struct sandpit_options opts = { .mode = suite_mode() };
	int st = run_sandboxed_as(0, 1024, 20000, body_evfd, o, &opts, 60);
	TH_LOG("written %ld, threads %ld, calls %ld, status %d", o->written, o->threads_ok,
	       o->calls_ok, st);
	ASSERT_NE(-2, st);
	ASSERT_EQ(0, outcome(st));
	EXPECT_EQ(16, o->threads_ok);
	EXPECT_EQ(16 * 50, o->calls_ok);
	EXPECT_EQ(1, o->works);
}

TEST_HARNESS_MAIN
