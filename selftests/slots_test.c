/* One file over 700 lines: one subject, slots made on demand up to SM_NSLOTS, and
 * every test runs under the one slots fixture (its long timeouts) with the same thread helpers. */
/* Threads on demand: a slot (S, T) is set up as a thread is, up to
 * SM_NSLOTS threads at once; beyond, pthread_create gets EAGAIN and the
 * process goes on.  Every slot's two eventfds are made with the sandbox
 * and are sandpit's (invariant 3), and each thread has its own T
 * (invariant 4). */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "user/layout/secure_mem.h"
#include "u_state.h"
#include "block_util.h"
#include "kernel_probe.h"

#define MANY 300
#define WAVES 5
#define LINE 64

/* what the threads of one run write, compared between native and sandboxed */
struct many_out {
	int sandboxed;
	long refused_ok;       /* refused calls that failed with the policy's errno */
	long tasks_at_once;    /* /proc/self/task entries while all MANY threads live */
	long waves_done;
	long ppid;
	char lines[MANY][LINE];
};

static struct many_out *out;
static pthread_barrier_t all_here, counted;

static long tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	long n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* allowed: open/read/close, stat, getppid; refused by the default policy:
 * socket(AF_INET) (EAFNOSUPPORT) and a create outside the grants (EACCES) */
static void *many_worker(void *arg)
{
	long i = (long)arg;
	char buf[32];
	int fd = open("/etc/passwd", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (fd >= 0)
		close(fd);
	struct stat sb;
	long size = stat("/etc/passwd", &sb) == 0 ? (long)sb.st_size : -1;
	/* every thread alive at once before any refused call or exit */
	pthread_barrier_wait(&all_here);
	pthread_barrier_wait(&counted);
	if (out->sandboxed) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		if (s == -1 && errno == EAFNOSUPPORT)
			__atomic_add_fetch(&out->refused_ok, 1, __ATOMIC_SEQ_CST);
		int c = open("/tmp/sandpit-slots-test", O_CREAT | O_WRONLY, 0600);
		if (c == -1 && errno == EACCES)
			__atomic_add_fetch(&out->refused_ok, 1, __ATOMIC_SEQ_CST);
	}
	snprintf(out->lines[i], LINE, "%03ld read %zd size %ld ppid %d\n", i, n, size,
		 getppid() == out->ppid ? 0 : 1);
	return NULL;
}

static int many_wave(void)
{
	pthread_t t[MANY];
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 128 * 1024);
	if (pthread_barrier_init(&all_here, NULL, MANY + 1) ||
	    pthread_barrier_init(&counted, NULL, MANY + 1))
		return 1;
	for (long i = 0; i < MANY; i++)
		if (pthread_create(&t[i], &at, many_worker, (void *)i))
			return 2;
	pthread_barrier_wait(&all_here);
	long n = tasks();
	if (n > out->tasks_at_once)
		out->tasks_at_once = n;
	pthread_barrier_wait(&counted);
	for (int i = 0; i < MANY; i++)
		if (pthread_join(t[i], NULL))
			return 3;
	pthread_barrier_destroy(&all_here);
	pthread_barrier_destroy(&counted);
	out->waves_done++;
	return 0;
}

static int body_many(void *a)
{
	int waves = (int)(long)a;
	out->sandboxed = sandpit_mode() != SANDPIT_MODE_NONE;
	out->ppid = getppid();
	for (int w = 0; w < waves; w++) {
		int r = many_wave();
		if (r)
			return 10 * (w + 1) + r;
	}
	return 0;
}

/* the same body natively (forked, never sandboxed) and in the sandbox */
static void run_native_and_sandboxed(struct __test_metadata *_metadata, int waves,
				     struct many_out *native)
{
	out = native;
	pid_t p = fork();
	ASSERT_LE(0, p);
	if (p == 0)
		_exit(body_many((void *)(long)waves));
	int st;
	ASSERT_EQ(p, waitpid(p, &st, 0));
	ASSERT_EQ(0, outcome(st));
	out = shared_page(sizeof(*out));
	ASSERT_NE(NULL, out);
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_many, (void *)(long)waves, NULL, 240)));
}

/* Each test's own timeout is its sandboxed run's limit and a little more:
 * a thousand threads made through B take 20-40 s on a loaded 2-CPU
 * machine, past the harness's 30 s default, without hanging */
FIXTURE(slots) {};
FIXTURE_SETUP(slots) {}
FIXTURE_TEARDOWN(slots) {}

TEST_F_TIMEOUT(slots, threads_300_at_once_allowed_and_refused_calls_as_native, 250)
{
	struct many_out *native = shared_page(sizeof(*native));
	ASSERT_NE(NULL, native);
	run_native_and_sandboxed(_metadata, 1, native);
	EXPECT_EQ(1, out->sandboxed);
	EXPECT_EQ(0, native->sandboxed);
	/* the refused calls reached the sandbox and got the policy's errno */
	EXPECT_EQ(2 * MANY, out->refused_ok);
	/* all at once: natively a task each, sandboxed a U and its own T each */
	EXPECT_EQ(MANY + 1, native->tasks_at_once);
	EXPECT_EQ(2 * (MANY + 1), out->tasks_at_once);
	EXPECT_EQ(0, memcmp(native->lines, out->lines, sizeof(out->lines)));
	if (memcmp(native->lines, out->lines, sizeof(out->lines)))
		TH_LOG("native: %.*s sandboxed: %.*s", LINE, native->lines[0], LINE, out->lines[0]);
}

TEST_F_TIMEOUT(slots, threads_5_waves_of_300_reuse_slots_as_native, 250)
{
	struct many_out *native = shared_page(sizeof(*native));
	ASSERT_NE(NULL, native);
	run_native_and_sandboxed(_metadata, WAVES, native);
	EXPECT_EQ(WAVES, out->waves_done);
	/* 1,500 threads ran through 1,024 slots, each refused call refused */
	EXPECT_EQ(2 * MANY * WAVES, out->refused_ok);
	EXPECT_EQ(2 * (MANY + 1), out->tasks_at_once);
	EXPECT_EQ(0, memcmp(native->lines, out->lines, sizeof(out->lines)));
}

/* ---- the limit ---- */

struct limit_out {
	long created;
	long err;          /* pthread_create's error at the first refusal */
	long after;        /* a thread made once the others ended: its call's result */
};

static int gate[2];

static void *parked(void *a)
{
	char c;
	(void)a;
	return (void *)(long)read(gate[0], &c, 1);
}

static void *after_worker(void *a)
{
	(void)a;
	int fd = open("/etc/passwd", O_RDONLY);
	if (fd < 0)
		return (void *)(long)-errno;
	close(fd);
	return (void *)1L;
}

static void (*limit_full)(void);

static int body_limit(void *a)
{
	struct limit_out *o = a;
	static pthread_t t[SM_NSLOTS + 8];
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	if (pipe(gate))
		return 1;
	long n = 0;
	int r = 0;
	while (n < SM_NSLOTS + 8 && (r = pthread_create(&t[n], &at, parked, NULL)) == 0)
		n++;
	o->created = n;
	o->err = r;
	if (limit_full)
		limit_full(); /* with every thread it could make alive */
	/* the process keeps working: every parked thread ends and is joined */
	char go[SM_NSLOTS + 8];
	memset(go, 1, sizeof(go));
	if (write(gate[1], go, (size_t)n) != n)
		return 2;
	for (long i = 0; i < n; i++) {
		void *res;
		if (pthread_join(t[i], &res) || (long)res != 1)
			return 3;
	}
	pthread_t late;
	void *res = NULL;
	if (pthread_create(&late, &at, after_worker, NULL) || pthread_join(late, &res))
		return 4;
	o->after = (long)res;
	return 0;
}

static char *run_logged(struct __test_metadata *_metadata, int (*fn)(void *), void *arg,
			int *st)
{
	char path[] = "/tmp/sandpit-slots-log-XXXXXX";
	int logfd = mkstemp(path);
	if (logfd < 0)
		return NULL;
	unlink(path);
	int saved = dup(2);
	dup2(logfd, 2);
	setenv("SANDPIT_LOG", "denials", 1);
	*st = run_sandboxed_opts(fn, arg, NULL, 240);
	unsetenv("SANDPIT_LOG");
	dup2(saved, 2);
	close(saved);
	struct stat sb;
	char *log = NULL;
	if (fstat(logfd, &sb) == 0 && (log = calloc(1, (size_t)sb.st_size + 1)) &&
	    pread(logfd, log, (size_t)sb.st_size, 0) != sb.st_size) {
		free(log);
		log = NULL;
	}
	close(logfd);
	(void)_metadata;
	return log;
}

TEST_F_TIMEOUT(slots, threads_beyond_1024_get_eagain_and_a_denial_line_and_the_process_goes_on, 250)
{
	struct rlimit rl;
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_max < SM_FD_TOP)
		SKIP(return, "RLIMIT_NOFILE's hard limit %lu leaves room for fewer slots",
		     (unsigned long)rl.rlim_max);
	struct limit_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	/* B's line goes to the sandboxed process's stderr: a file here */
	int st;
	char *log = run_logged(_metadata, body_limit, o, &st);
	ASSERT_NE(NULL, log);
	const char *why = strstr(log, "killing the process");
	while (why && why > log && why[-1] != '\n')
		why--;
	ASSERT_EQ(0, outcome(st)) TH_LOG("%ld threads made; %.300s", o->created, why ? why : "");
	/* slot 0 is the first thread's: 1,023 more run at once, the next is
	 * refused with EAGAIN */
	EXPECT_EQ(SM_NSLOTS - 1, o->created);
	EXPECT_EQ(EAGAIN, o->err);
	EXPECT_EQ(1, o->after);
	EXPECT_NE(NULL, strstr(log, "= -EAGAIN; by policy/default.policy:"));
	EXPECT_NE(NULL, strstr(log, ": all 1024 thread slots are in use; from "));
	if (!strstr(log, "thread slots"))
		TH_LOG("log: %.300s", log);
	free(log);
}

/* RLIMIT_NOFILE decides how many slots fit: sandpit's block must end
 * below the soft limit, which it raises towards 4096 if the hard limit
 * lets it */
struct rlimit_out {
	struct limit_out l;
	long soft_seen;    /* the soft limit the sandboxed program sees */
	long notifier;     /* sandpit's notifier was there (block_util.h) */
	long block, held_first, held_full, eventfds_ok; /* the block before and with every slot */
};

static struct rlimit_out *rl_out;

static void on_full(void)
{
	int lo = state_of(my_mailbox())->sp->fd_lo, hi = state_of(my_mailbox())->sp->fd_hi;
	rl_out->held_full = held_in(lo, hi);
	rl_out->eventfds_ok = slot_eventfds_ok(lo, (hi - lo - 2) / 2);
}

static int body_rlimit(void *a)
{
	struct rlimit_out *o = a;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 90;
	o->soft_seen = (long)rl.rlim_cur;
	o->notifier = notifier_tid() != 0;
	int lo = state_of(my_mailbox())->sp->fd_lo, hi = state_of(my_mailbox())->sp->fd_hi;
	o->block = hi - lo + 1;
	o->held_first = held_in(lo, hi);
	rl_out = o;
	limit_full = on_full;
	return body_limit(&o->l);
}

/* this test's child at a soft RLIMIT_NOFILE of 1024 under a hard limit
 * that leaves sandpit's block room above it (skipped where it does not) */
#define SOFT_1024_WITH_ROOM_ABOVE()                                                            \
	do {                                                                                   \
		struct rlimit rl_;                                                             \
		ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl_));                                  \
		if (rl_.rlim_max < SM_FD_TOP)                                                  \
			SKIP(return, "RLIMIT_NOFILE's hard limit %lu is under %d",             \
			     (unsigned long)rl_.rlim_max, SM_FD_TOP);                          \
		rl_.rlim_cur = 1024;                                                           \
		ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl_));                                  \
	} while (0)

TEST_F_TIMEOUT(slots, threads_with_a_hard_nofile_limit_of_1024_fewer_slots_then_eagain, 250)
{
	struct rlimit rl = { 1024, 1024 };
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl)); /* this test's child only */
	struct rlimit_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	int st;
	char *log = run_logged(_metadata, body_rlimit, o, &st);
	ASSERT_NE(NULL, log);
	ASSERT_EQ(0, outcome(st));
	EXPECT_EQ(1024, o->soft_seen);
	/* fewer slots, but more than the program's 64 descriptors' worth */
	EXPECT_LT(64, o->l.created);
	EXPECT_GT(SM_NSLOTS - 1, o->l.created);
	EXPECT_EQ(EAGAIN, o->l.err);
	EXPECT_EQ(1, o->l.after);
	char want[128];
	EXPECT_NE(NULL, strstr(log, "= -EAGAIN; by policy/default.policy:"));
	snprintf(want, sizeof(want), ": all %ld thread slots are in use; from ", o->l.created + 1);
	EXPECT_NE(NULL, strstr(log, want));
	if (!strstr(log, want)) {
		char *l = strstr(log, "slot");
		TH_LOG("created %ld; log: %.200s", o->l.created, l ? l - 60 : log);
	}
	free(log);
}

TEST_F_TIMEOUT(slots, threads_with_a_soft_nofile_limit_of_1024_get_1024_slots_above_it, 250)
{
	SOFT_1024_WITH_ROOM_ABOVE();
	struct rlimit_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_rlimit, o, NULL, 240)));
	/* the block lies above it: the program's limit is its own */
	EXPECT_EQ(1024, o->soft_seen);
	EXPECT_EQ(SM_NSLOTS - 1, o->l.created);
	EXPECT_EQ(EAGAIN, o->l.err);
	EXPECT_EQ(1, o->l.after);
	/* each slot's eventfds made when it was first used, through the
	 * notifier, wherever the kernel can and nothing forces it off
	 * (only slot 0's at the start); else all at start-up */
	EXPECT_EQ(kernel_has_addfd() && !kernel_addfd_forced_off(), o->notifier);
	EXPECT_EQ(2 * SM_NSLOTS + 3, o->block);
	EXPECT_EQ(o->notifier ? 5 : o->block, o->held_first);
	EXPECT_EQ(o->block, o->held_full);
	EXPECT_EQ(2 * SM_NSLOTS, o->eventfds_ok);
}

/* A program that lowers its hard limit under sandpit's block: the kernel
 * checks the numbers B puts there against the notifier's own limit, not
 * the program's, so slots are still made when first used, and every
 * thread slot stays usable */
struct lower_out {
	long notifier, held_before, lowered, block, held_after, made, eventfds_ok, threads_ok;
};

static void *ret_one(void *a) { (void)a; return (void *)1L; }

static int body_lower(void *a)
{
	struct lower_out *o = a;
	int lo = state_of(my_mailbox())->sp->fd_lo, hi = state_of(my_mailbox())->sp->fd_hi;
	o->notifier = notifier_tid() != 0;
	o->block = hi - lo + 1;
	o->held_before = held_in(lo, hi);
	struct rlimit rl = { 512, 1024 };
	o->lowered = setrlimit(RLIMIT_NOFILE, &rl) == 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
		     rl.rlim_cur == 512 && rl.rlim_max == 1024;
	o->held_after = held_in(lo, hi);
	pthread_t t[20];
	for (int i = 0; i < 20; i++)
		if (pthread_create(&t[i], NULL, ret_one, NULL))
			return 1;
	for (int i = 0; i < 20; i++) {
		void *r = NULL;
		o->threads_ok += !pthread_join(t[i], &r) && r == (void *)1L;
	}
	o->made = o->notifier ? (held_in(lo, hi) - 3) / 2 : SM_NSLOTS;
	o->eventfds_ok = slot_eventfds_ok(lo, o->made);
	return 0;
}

TEST_F_TIMEOUT(slots, hard_limit_lowered_under_the_block_slots_still_made_when_used, 120)
{
	SOFT_1024_WITH_ROOM_ABOVE();
	struct lower_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_lower, o, NULL, 100)));
	EXPECT_EQ(kernel_has_addfd() && !kernel_addfd_forced_off(), o->notifier);
	EXPECT_EQ(o->notifier ? 5 : o->block, o->held_before);
	EXPECT_EQ(1, o->lowered);
	EXPECT_EQ(o->held_before, o->held_after);
	EXPECT_EQ(20, o->threads_ok);
	/* slot 0 and at least one more, each's two eventfds at its numbers */
	EXPECT_LE(2, o->made);
	EXPECT_EQ(2 * o->made, o->eventfds_ok);
}

/* A signal sent to the process goes to a thread of it that does not block
 * it.  The program's handlers for glibc's own two signals (32, 33: glibc's
 * sigprocmask never blocks them) and for SIGUSR1, with the program's one
 * thread blocking them, then each sent to the process NSIG_TRIES times:
 * none may be taken by a T (every signal blocked from its clone on: the
 * body makes no system call before, so slot 0's T has not yet blocked
 * them again itself; start-up's glibc sigprocmask had left 32 and 33 open
 * there, and T, with no stack, died of the frame: SIGSEGV) or reach the
 * notifier (a process of its own, its signals blocked too) and run the
 * program's handler there; each runs on the program's thread once it
 * unblocks */
#define NSIG_TRIES 200
struct notifier_sig_out {
	long notifier, sent, before_unblock, ran, ran_elsewhere, pending_seen;
};
static struct notifier_sig_out *ns_o;
static pid_t ns_main;

static void ns_handler(int sig)
{
	(void)sig;
	__atomic_add_fetch(&ns_o->ran, 1, __ATOMIC_SEQ_CST);
	if ((pid_t)syscall(SYS_gettid) != ns_main)
		__atomic_add_fetch(&ns_o->ran_elsewhere, 1, __ATOMIC_SEQ_CST);
}

/* the kernel's struct k_sigaction for rt_sigaction, glibc's being
 * refused for its own two signals */
struct ns_ksa {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};
extern void ns_restorer(void);
__asm__(".text\nns_restorer:\n\tmov $15, %eax\n\tsyscall\n");

static int body_notifier_sig(void *a)
{
	struct notifier_sig_out *o = ns_o = a;
	ns_main = (pid_t)syscall(SYS_gettid);
	o->notifier = notifier_tid() != 0;
	static const int sigs[] = { 32, 33, SIGUSR1 };
	uint64_t set = 0;
	for (int i = 0; i < 3; i++) {
		struct ns_ksa k = { ns_handler, 0x04000000 /* SA_RESTORER */, ns_restorer, 0 };
		if (syscall(SYS_rt_sigaction, sigs[i], &k, NULL, 8))
			return 10 + i;
		set |= 1ull << (sigs[i] - 1);
	}
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, 8))
		return 2;
	for (int n = 0; n < NSIG_TRIES; n++)
		for (int i = 0; i < 3; i++)
			o->sent += kill(getpid(), sigs[i]) == 0;
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	nanosleep(&ts, NULL); /* time for another thread to take one */
	o->before_unblock = __atomic_load_n(&o->ran, __ATOMIC_SEQ_CST);
	uint64_t pend = 0;
	if (syscall(SYS_rt_sigpending, &pend, 8) == 0)
		o->pending_seen = (long)__builtin_popcountll(pend & set);
	if (syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &set, NULL, 8))
		return 3;
	return 0;
}

TEST_F_TIMEOUT(slots, signals_to_the_process_run_only_on_the_programs_thread, 60)
{
	SOFT_1024_WITH_ROOM_ABOVE();
	struct notifier_sig_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_notifier_sig, o, NULL, 50)));
	TH_LOG("notifier %ld, sent %ld, ran before the unblock %ld, pending %ld, ran %ld (elsewhere %ld)",
	       o->notifier, o->sent, o->before_unblock, o->pending_seen, o->ran, o->ran_elsewhere);
	EXPECT_EQ(kernel_has_addfd() && !kernel_addfd_forced_off(), o->notifier);
	EXPECT_EQ(3 * NSIG_TRIES, o->sent);
	/* all three held pending for the process, none taken meanwhile;
	 * then, on the program's thread, the real-time ones (32, 33) as
	 * queued, each of the 200 sent, and SIGUSR1 merged into one */
	EXPECT_EQ(0, o->before_unblock);
	EXPECT_EQ(3, o->pending_seen);
	EXPECT_EQ(2 * NSIG_TRIES + 1, o->ran);
	EXPECT_EQ(0, o->ran_elsewhere);
}

/* ---- invariant 3: a new slot's descriptors are sandpit's ---- */

struct fd_attack {
	long before, during;   /* sandpit's first eventfds before a second thread, and with it */
	long same;             /* those before still there, at the same numbers */
	long second_at;        /* the second slot's first eventfd, from the first slot's */
	long notifier;         /* slots made when first used (block_util.h) */
	long attempts, refused;
	long thread_ok;
};

/* eventfds are anonymous inodes: no file type in st_mode */
static int eventfds(int *fds, int max)
{
	int n = 0;
	for (int fd = 3; fd < SM_FD_TOP; fd++) {
		struct stat sb;
		if (fstat(fd, &sb) == 0 && (sb.st_mode & S_IFMT) == 0 && n < max)
			fds[n++] = fd;
	}
	return n;
}

static int fd_gate[2], fd_done[2];

static void *fd_thread(void *a)
{
	char c;
	(void)a;
	if (read(fd_gate[0], &c, 1) != 1)
		return NULL;
	/* after the attack: its calls still go through its slot's T */
	int fd = open("/etc/passwd", O_RDONLY);
	c = fd >= 0 ? 1 : 2;
	if (fd >= 0)
		close(fd);
	if (write(fd_done[1], &c, 1) != 1)
		return NULL;
	return (void *)1L;
}

static void try_refused(struct fd_attack *o, long r)
{
	o->attempts++;
	if (r == -1 && errno == EBADF)
		o->refused++;
}

static int body_fd_attack(void *a)
{
	struct fd_attack *o = a;
	int before[8], during[8];
	if (pipe(fd_gate) || pipe(fd_done))
		return 1;
	o->before = eventfds(before, 8);
	pthread_t t;
	if (pthread_create(&t, NULL, fd_thread, NULL))
		return 2;
	o->during = eventfds(during, 8);
	o->same = o->before <= o->during && !memcmp(before, during, sizeof(int) * (size_t)o->before);
	o->second_at = o->during >= 3 ? during[2] - during[0] : -1;
	o->notifier = notifier_tid() != 0;
	/* the new slot's (slot 1's): the third and fourth */
	for (int i = 2; i < 4 && i < o->during; i++) {
		int fd = during[i];
		try_refused(o, close(fd));
		try_refused(o, dup2(0, fd));
		try_refused(o, dup3(0, fd, O_CLOEXEC));
		try_refused(o, fcntl(fd, F_SETFL, O_NONBLOCK));
		try_refused(o, fcntl(fd, F_DUPFD, 0));
		/* and the numbers of slots no thread has used yet */
		try_refused(o, dup2(0, fd + 2));
		try_refused(o, dup2(0, fd + 4));
	}
	char c = 1;
	if (write(fd_gate[1], &c, 1) != 1 || read(fd_done[0], &c, 1) != 1)
		return 3;
	void *r;
	if (pthread_join(t, &r))
		return 4;
	o->thread_ok = c == 1 && (long)r == 1;
	return 0;
}

TEST_F_TIMEOUT(slots, inv3_a_new_slots_eventfds_cannot_be_closed_dup2ed_over_or_changed, 70)
{
	struct fd_attack *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_fd_attack, o, NULL, 60)));
	/* every slot's, made at start, the thread making none; or, with the
	 * notifier, slot 0's, and slot 1's made by B as the thread
	 * starts (none of them the program's: every attack on their numbers
	 * before and after is refused) */
	EXPECT_EQ(o->notifier ? 2 : 8, o->before);
	EXPECT_EQ(o->notifier ? 4 : 8, o->during);
	EXPECT_EQ(1, o->same);
	EXPECT_EQ(2, o->second_at);
	EXPECT_EQ(2 * 7, o->attempts);
	EXPECT_EQ(o->attempts, o->refused);
	EXPECT_EQ(1, o->thread_ok);
}

/* ---- slots past the first watcher's and past the old 16 ---- */

#define HIGH 300
static pid_t u_tids[HIGH];
static int park[2];

static void *parked_u(void *a)
{
	char c;
	u_tids[(long)a] = (pid_t)syscall(SYS_gettid);
	return (void *)(long)read(park[0], &c, 1);
}

static void *noop(void *a) { return a; }

/* HIGH threads parked; when it returns, every one of their slots has
 * been confirmed by B (a slot starts only once the one before is) */
static int park_high(pthread_t *t)
{
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	if (pipe(park))
		return 1;
	for (long i = 0; i < HIGH; i++)
		if (pthread_create(&t[i], &at, parked_u, (void *)i))
			return 2;
	pthread_t x;
	if (pthread_create(&x, &at, noop, NULL) || pthread_join(x, NULL))
		return 3;
	/* and that thread's U and T are gone: a U and a T for each left */
	long want = 2 * (HIGH + 1);
	for (int i = 0; i < 5000 && tasks() != want; i++)
		usleep(1000);
	return tasks() == want ? 0 : 4;
}

static int unpark(pthread_t *t)
{
	char go[HIGH];
	memset(go, 1, sizeof(go));
	if (write(park[1], go, sizeof(go)) != (ssize_t)sizeof(go))
		return 1;
	for (int i = 0; i < HIGH; i++)
		if (pthread_join(t[i], NULL))
			return 2;
	return 0;
}

static void *forbidden_in_thread(void *a)
{
	(void)a;
	/* a call the patcher cannot see: socket(AF_INET) from new code */
	missed_fn f = missed_code(SYS_socket);
	return (void *)(f ? f(AF_INET, SOCK_STREAM, 0) : -1L);
}

static int body_high_killed(void *a)
{
	(void)a;
	static pthread_t t[HIGH];
	int r = park_high(t);
	if (r)
		return 10 + r;
	pthread_t k;
	void *res;
	if (pthread_create(&k, NULL, forbidden_in_thread, NULL))
		return 1;
	pthread_join(k, &res);
	/* the process went on: only the filter's net may let it */
	if ((long)res != -EAFNOSUPPORT)
		return 3;
	return unpark(t) ? 4 : 2;
}

/* slot 301 is watched by B's third watcher (127 slots each): strict mode,
 * the kernel kills the thread and B the process; filter mode, the net
 * refuses the call */
TEST_F_TIMEOUT(slots, inv5_a_thread_past_300_killed_by_the_kernel_kills_the_process, 70)
{
	int want = suite_mode() == SANDPIT_MODE_STRICT ? KILLED(SIGKILL) : 2;
	EXPECT_EQ(want, outcome(run_sandboxed_opts(body_high_killed, NULL, NULL, 60)));
}

struct tid_attack {
	long ts, attempts, refused;
};

static int body_kill_ts(void *a)
{
	struct tid_attack *o = a;
	static pthread_t t[HIGH];
	int r = park_high(t);
	if (r)
		return 10 + r;
	pid_t me = getpid();
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return 1;
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t tid = atoi(e->d_name);
		int mine = tid == me || tid <= 0;
		for (int i = 0; i < HIGH && !mine; i++)
			mine = u_tids[i] == tid;
		if (mine)
			continue;
		o->ts++;
		o->attempts++;
		if (syscall(SYS_tgkill, me, tid, SIGKILL) == -1 && errno == ESRCH)
			o->refused++;
	}
	closedir(d);
	return unpark(t) ? 2 : 0;
}

/* no T, the 301st neither, is in the U tid table the U_TID rule reads:
 * each is, to the program, no thread of its own (ESRCH) */
TEST_F_TIMEOUT(slots, inv7_signals_to_any_of_301_trusted_threads_refused, 70)
{
	struct tid_attack *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_kill_ts, o, NULL, 60)));
	EXPECT_EQ(HIGH + 1, o->ts);
	EXPECT_EQ(o->ts, o->attempts);
	EXPECT_EQ(o->attempts, o->refused);
}

/* ---- the block is held: the kernel never hands its numbers out ---- */

#define NFDS 3000
#define LATE 50

struct many_fds_out {
	long opened, getfd_ok, pipes_ok, polled, in_block;
	long threads_ok, after_close, after_closefrom, b_call_after;
};

static void *late_worker(void *a)
{
	(void)a;
	int fd = open("/etc/passwd", O_RDONLY); /* through B */
	if (fd < 0)
		return NULL;
	close(fd);
	return (void *)1L;
}

static long late_threads(int n)
{
	pthread_t t[LATE];
	long ok = 0;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, late_worker, NULL))
			return ok;
	for (int i = 0; i < n; i++) {
		void *r = NULL;
		ok += !pthread_join(t[i], &r) && r == (void *)1L;
	}
	return ok;
}

/* 3,000 descriptors of the program's (pipes, eventfds, dups), each used;
 * then LATE threads; then all closed, and closefrom(3) */
static int body_many_fds(void *a)
{
	struct many_fds_out *o = a;
	static int fds[NFDS];
	int lo = -1, hi = -2;
	if (sandpit_mode() != SANDPIT_MODE_NONE) {
		lo = state_of(my_mailbox())->sp->fd_lo;
		hi = state_of(my_mailbox())->sp->fd_hi;
	}
	int n = 0;
	while (n + 2 <= NFDS / 3) { /* pipes: [read, write] pairs */
		if (pipe(fds + n))
			return 1;
		n += 2;
	}
	while (n < 2 * NFDS / 3)
		if ((fds[n++] = eventfd(0, EFD_NONBLOCK)) < 0)
			return 2;
	for (int i = 0; n < NFDS; i++)
		if ((fds[n++] = dup(fds[i])) < 0)
			return 3;
	o->opened = n;
	for (int i = 0; i < n; i++) {
		o->in_block += fds[i] >= lo && fds[i] <= hi;
		o->getfd_ok += fcntl(fds[i], F_GETFD) >= 0;
	}
	for (int i = 0; i + 1 < NFDS / 3; i += 2) {
		char c = (char)i, d = 0;
		o->pipes_ok += write(fds[i + 1], &c, 1) == 1 && read(fds[i], &d, 1) == 1 && c == d;
	}
	/* poll on those above 1024: an eventfd (or a pipe's write end) is writable */
	static struct pollfd p[NFDS];
	int np = 0;
	for (int i = 0; i < n; i++)
		if (fds[i] > 1024)
			p[np++] = (struct pollfd){ fds[i], POLLOUT, 0 };
	if (poll(p, (nfds_t)np, 1000) >= 0)
		for (int i = 0; i < np; i++)
			o->polled += (p[i].revents & POLLOUT) != 0;
	o->threads_ok = late_threads(LATE);
	for (int i = 0; i < n; i++)
		o->after_close += close(fds[i]) == 0;
	closefrom(3);
	o->after_closefrom = late_threads(1);
	struct stat sb;
	o->b_call_after = stat("/etc/passwd", &sb) == 0;
	return 0;
}

/* (a program with ~2,000 descriptors used to be handed numbers of
 * sandpit's block, every call on which was refused: CPython's
 * test_selectors.test_above_fd_setsize).  The sandboxed program cannot
 * raise its own limit (setrlimit is refused), so it is raised before the
 * start, as a shell's ulimit would. */
TEST_F_TIMEOUT(slots, fds_3000_of_the_programs_outside_sandpits_block_and_used_as_native, 250)
{
	struct rlimit rl;
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_max < 4200)
		SKIP(return, "RLIMIT_NOFILE's hard limit %lu is under 4200",
		     (unsigned long)rl.rlim_max);
	rl.rlim_cur = rl.rlim_max;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl)); /* this test's child only */
	struct many_fds_out *native = shared_page(sizeof(*native));
	struct many_fds_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, native);
	ASSERT_NE(NULL, o);
	pid_t p = fork();
	ASSERT_LE(0, p);
	if (p == 0)
		_exit(body_many_fds(native));
	int st;
	ASSERT_EQ(p, waitpid(p, &st, 0));
	ASSERT_EQ(0, outcome(st));
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_many_fds, o, NULL, 240)));
	EXPECT_EQ(NFDS, native->opened);
	EXPECT_EQ(NFDS, o->opened);
	EXPECT_EQ(0, o->in_block);
	EXPECT_EQ(native->getfd_ok, o->getfd_ok);
	EXPECT_EQ(NFDS, o->getfd_ok);
	EXPECT_EQ(NFDS / 6, o->pipes_ok);
	EXPECT_EQ(native->pipes_ok, o->pipes_ok);
	EXPECT_LT(1000, o->polled); /* the numbers above 1024: past the block */
	EXPECT_EQ(native->polled, o->polled);
	EXPECT_EQ(LATE, native->threads_ok);
	EXPECT_EQ(LATE, o->threads_ok);
	EXPECT_EQ(NFDS, o->after_close);
	EXPECT_EQ(1, native->after_closefrom);
	EXPECT_EQ(1, o->after_closefrom);
	EXPECT_EQ(1, o->b_call_after);
}

struct range_attack {
	long block, held_expected, held_before, held_after, attempts, as_expected, thread_ok, b_call_ok;
};

static void try_range(struct range_attack *o, long first, long last, long flags, long want)
{
	o->attempts++;
	long r = syscall(SYS_close_range, first, last, flags);
	o->as_expected += want ? r == -1 && errno == want : r == 0;
}

static int body_close_range(void *a)
{
	struct range_attack *o = a;
	int lo = state_of(my_mailbox())->sp->fd_lo, hi = state_of(my_mailbox())->sp->fd_hi;
	o->block = hi - lo + 1;
	o->held_expected = block_held_expected(lo, hi, 1);
	o->held_before = held_in(lo, hi);
	try_range(o, lo, hi, 0, 0);                      /* the block: nothing of it goes */
	try_range(o, lo + 4, lo + 4, 0, 0);              /* slot 1's eventfd */
	try_range(o, lo - 1, hi + 1, 0, 0);              /* across it */
	try_range(o, 3, ~0U, 4 /* CLOSE_RANGE_CLOEXEC */, 0);
	try_range(o, 3, ~0U, 2 /* CLOSE_RANGE_UNSHARE: T's table */, EINVAL);
	try_range(o, 9, 8, 0, EINVAL);                   /* as the kernel says */
	try_range(o, 3, ~0U, 0, 0);
	o->held_after = held_in(lo, hi);
	o->thread_ok = late_threads(1);
	struct stat sb;
	o->b_call_ok = stat("/etc/passwd", &sb) == 0;
	return 0;
}

/* close_range is T's emulation: it closes the numbers around sandpit's
 * block, every one of which stays held */
TEST_F_TIMEOUT(slots, inv3_close_range_over_sandpits_block_closes_none_of_it, 70)
{
	struct range_attack *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_close_range, o, NULL, 60)));
	EXPECT_LT(4, o->block);
	EXPECT_EQ(o->held_expected, o->held_before);
	EXPECT_EQ(o->held_expected, o->held_after);
	EXPECT_EQ(7, o->attempts);
	EXPECT_EQ(o->attempts, o->as_expected);
	EXPECT_EQ(1, o->thread_ok);
	EXPECT_EQ(1, o->b_call_ok);
}

struct crowded_out {
	long block, held, spare, dups, in_block, last_errno, thread_ok;
};

/* the program takes every free number it can with dup: the ones below the
 * block, then EMFILE, never a number of the block */
static int body_crowded(void *a)
{
	struct crowded_out *o = a;
	int lo = state_of(my_mailbox())->sp->fd_lo, hi = state_of(my_mailbox())->sp->fd_hi;
	o->block = hi - lo + 1;
	o->held = held_in(lo, hi);
	for (int fd = 0; fd < lo; fd++)
		o->spare += fcntl(fd, F_GETFD) < 0;
	int fd;
	while ((fd = dup(0)) >= 0) {
		o->dups++;
		o->in_block += fd >= lo && fd <= hi;
	}
	o->last_errno = errno;
	for (int i = 0; i < 64; i++)
		close(500 - i); /* room for the thread's eventfds on their way */
	o->thread_ok = late_threads(1);
	return 0;
}

/* A program that starts with nearly every number below the block in use
 * (18 of 509 free, the block the top 515 of its 1024): the block is held
 * all the same, so its dups get the 19 and then EMFILE, none a number of
 * the block */
TEST_F_TIMEOUT(slots, fds_crowded_below_the_block_none_of_it_handed_out, 70)
{
	struct rlimit rl;
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_max < 1024)
		SKIP(return, "RLIMIT_NOFILE's hard limit %lu is under 1024", (unsigned long)rl.rlim_max);
	rl.rlim_cur = rl.rlim_max = 1024; /* this test's child only */
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	struct crowded_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	int null = open("/dev/null", O_RDONLY);
	ASSERT_LE(0, null);
	for (int fd = 3; fd <= 490; fd++)
		if (fd != null)
			ASSERT_EQ(fd, dup2(null, fd));
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_crowded, o, NULL, 60)));
	EXPECT_EQ(515, o->block); /* 256 slots: a quarter of 1024, and the maps, in [509, 1024) */
	EXPECT_EQ(o->block, o->held);
	EXPECT_GT(32, o->spare);
	EXPECT_LT(0, o->spare);
	EXPECT_EQ(o->spare, o->dups);
	EXPECT_EQ(0, o->in_block);
	EXPECT_EQ(EMFILE, o->last_errno);
	EXPECT_EQ(1, o->thread_ok);
}

TEST_HARNESS_MAIN
