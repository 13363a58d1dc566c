/* Faults from outside the program: its trusted process B killed or
 * stopped in the middle of a call, one of its trusted threads T killed,
 * RLIMIT_NOFILE and RLIMIT_AS at the edge when it starts, /proc gone.
 * Each ends in one of two ways, asserted: the program goes on with every
 * call made exactly once, or it ends at once with sandpit's one-line
 * reason -- sandpit_start's error before the point of no return, one
 * "sandpit: ...; killing the process" line and SIGKILL after it.  Never a
 * hang, never a crash, never a call that was not made reported as made.
 *
 * The test process is a child subreaper, so that B (the sandboxed
 * process's sibling, or reparented to it) is its child: found by name,
 * stopped, killed, and waited for, since B must end when P ends. */
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sched.h>
#include <pthread.h>
#include <dirent.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "block_util.h"
#include "user/layout/secure_mem.h"

/* shared with the sandboxed child */
struct fault {
	volatile long calls, wrong, first_got, stop_at;
	volatile int inside; /* in the call B answers */
	volatile int done;   /* the body ended by itself */
	ino_t ino;
	int start_rc;
	char start_msg[512];
	char path[64];
	/* P stopped while it makes a thread: the rounds the test lets begin
	 * (go), the creations begun and returned, the threads that ran */
	volatile long go, begun, made, ran, quit, bad;
};
static struct fault *F;

/* above any pid_max: no such thread */
#define NO_TID 0x3ffffff0

static void wrong(long got)
{
	if (!F->wrong++)
		F->first_got = got;
}

/* The calls a fault lands among: an open B checks (a second open made
 * for one asked would show as a descriptor number other than the first's,
 * since each is closed before the next), and two calls T answers whose
 * answers differ.  Until stop_at calls, or for ever. */
static int body_calls(void *a)
{
	int fd0 = -1;
	struct stat sb;
	(void)a;
	while (!F->stop_at || F->calls < F->stop_at) {
		F->inside = 1;
		int fd = open(F->path, O_RDONLY);
		F->inside = 0;
		if (fd < 0 || fstat(fd, &sb) || sb.st_ino != F->ino)
			wrong(fd < 0 ? -errno : fd);
		if (fd0 < 0)
			fd0 = fd;
		else if (fd != fd0)
			wrong(fd);
		if (fd >= 0)
			close(fd);
		if (syscall(SYS_tgkill, getpid(), gettid(), 0) != 0)
			wrong(-1000);
		if (syscall(SYS_tgkill, getpid(), NO_TID, 0) != -1 || errno != ESRCH)
			wrong(-1001);
		F->calls++;
	}
	F->done = 1;
	return 0;
}

enum { RAN, REFUSED, KILLED_WITH_REASON, OTHER }; /* how a sandboxed run ended */
struct run {
	pid_t p, b;
	int out; /* outcome(): exit status or 1000 + signal, -2 hung */
	int b_ended;
	char err[2048]; /* P's and B's stderr */
};

static void fault_file(void)
{
	struct stat sb;
	snprintf(F->path, sizeof(F->path), "/tmp/sandpit-fault-%d", getpid());
	int fd = open(F->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	F->ino = stat(F->path, &sb) ? 0 : sb.st_ino;
}

/* Forks P: prepare (limits, namespaces; may be NULL) then sandpit_start
 * and body, with stderr in errfd.  The start's result goes to F. */
static pid_t start_p(int (*prepare)(long), long arg, int (*body)(void *), int errfd)
{
	static const char *r[] = { "/tmp", NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = r };
	fflush(NULL);
	pid_t p = fork();
	if (p == 0) {
		dup2(errfd, 2);
		if (prepare && prepare(arg) < 0)
			_exit(KSFT_SKIP);
		F->start_rc = sandpit_start(&o);
		if (F->start_rc < 0) {
			snprintf(F->start_msg, sizeof(F->start_msg), "%s", sandpit_error());
			_exit(SANDBOX_START_FAILED);
		}
		_exit(body(NULL));
	}
	return p;
}

static pid_t find_b(void)
{
	pid_t b = 0;
	for (int i = 0; i < 500 && !b; i++) {
		b = find_child_named("sandpit-B");
		if (!b)
			usleep(10000);
	}
	return b;
}

/* P's end within timeout_s, then B's within 5 s (B is a child of this
 * process, see the top), then the messages. */
static void finish(struct run *r, int errfd, int timeout_s)
{
	int st = 0, done = 0;
	for (int i = 0; i < timeout_s * 100 && !done; i++) {
		done = waitpid(r->p, &st, WNOHANG) == r->p;
		if (!done)
			usleep(10000);
	}
	if (!done) {
		kill(r->p, SIGKILL);
		waitpid(r->p, &st, 0);
	}
	r->out = done ? outcome(st) : -2;
	if (!r->b)
		r->b = find_child_named("sandpit-B");
	r->b_ended = 1;
	if (r->b > 0) {
		int bst;
		r->b_ended = 0;
		for (int i = 0; i < 500 && !r->b_ended; i++) {
			r->b_ended = waitpid(r->b, &bst, WNOHANG) == r->b;
			if (!r->b_ended)
				usleep(10000);
		}
		if (!r->b_ended) {
			kill(r->b, SIGKILL);
			waitpid(r->b, &bst, 0);
		}
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	ssize_t n = pread(errfd, r->err, sizeof(r->err) - 1, 0);
	r->err[n > 0 ? n : 0] = 0;
	close(errfd);
}

static int err_file(void)
{
	char tmpl[] = "/tmp/sandpit-fault-errXXXXXX";
	int fd = mkstemp(tmpl);
	if (fd >= 0)
		unlink(tmpl);
	return fd;
}

/* sandpit's lines in err: how many, and the first (or "") */
static int sandpit_lines(const char *err, char *first, size_t len)
{
	int n = 0;
	first[0] = 0;
	for (const char *l = err; *l;) {
		const char *nl = strchr(l, '\n');
		size_t ll = nl ? (size_t)(nl - l) : strlen(l);
		if (!strncmp(l, "sandpit: ", 9) && n++ == 0)
			snprintf(first, len, "%.*s", (int)ll, l);
		l += ll + (nl ? 1 : 0);
	}
	return n;
}

/* the two allowed ends, or OTHER */
static int classify(const struct run *r)
{
	char first[512];
	int n = sandpit_lines(r->err, first, sizeof(first));
	size_t fl = strlen(first), kl = strlen("; killing the process");
	if (r->out == 0 && n == 0)
		return RAN;
	if (r->out == SANDBOX_START_FAILED && F->start_rc < 0 && F->start_msg[0])
		return REFUSED;
	if (r->out == KILLED(SIGKILL) && n == 1 && fl > kl &&
	    !strcmp(first + fl - kl, "; killing the process"))
		return KILLED_WITH_REASON;
	return OTHER;
}

FIXTURE(fault) {};
FIXTURE_SETUP(fault)
{
	F = shared_page(sizeof(*F));
	ASSERT_NE(NULL, F);
	memset(F, 0, sizeof(*F));
	fault_file();
	ASSERT_NE(0, (long)F->ino);
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
}
FIXTURE_TEARDOWN(fault)
{
	unlink(F->path);
}

/* Waits until P is inside B's call and stays there (B is stopped): the
 * calls count has not moved for 100 ms.  1 if so. */
static int stuck_in_call(void)
{
	for (int i = 0; i < 500; i++) {
		long c = F->calls;
		usleep(100000);
		if (F->inside && F->calls == c)
			return 1;
	}
	return 0;
}

static int calls_reach(long n)
{
	for (int i = 0; i < 3000 && F->calls < n; i++)
		usleep(10000);
	return F->calls >= n;
}

/* B killed while P waits for its answer: P ends at once, killed, with T's
 * one line; the call is not reported made (the body never went on). */
TEST_F_TIMEOUT(fault, b_killed_in_the_middle_of_a_call_ends_p_with_the_reason, 60)
{
	struct run r = { 0 };
	int errfd = err_file();
	ASSERT_LE(0, errfd);
	r.p = start_p(NULL, 0, body_calls, errfd);
	ASSERT_LT(0, r.p);
	r.b = find_b();
	ASSERT_LT(0, r.b);
	ASSERT_TRUE(calls_reach(1000));
	/* stopped first, so that the kill lands in a call, not between two */
	ASSERT_EQ(0, kill(r.b, SIGSTOP));
	EXPECT_TRUE(stuck_in_call());
	long at = F->calls;
	ASSERT_EQ(0, kill(r.b, SIGKILL));
	finish(&r, errfd, 10);
	TH_LOG("%ld calls before the kill; P's end %d; stderr: %s", at, r.out, r.err);
	EXPECT_EQ(KILLED(SIGKILL), r.out);
	EXPECT_EQ(KILLED_WITH_REASON, classify(&r));
	EXPECT_NE(NULL, strstr(r.err, "sandpit: the trusted process is gone; killing the process\n"));
	EXPECT_EQ(at, F->calls); /* the call in flight never came back */
	EXPECT_EQ(0, F->done);
	EXPECT_EQ(0, F->wrong) TH_LOG("first wrong answer %ld", F->first_got);
}

/* B stopped in the middle of a call and continued: the call completes,
 * made once, and P goes on. */
TEST_F_TIMEOUT(fault, b_stopped_and_continued_the_call_is_made_once_and_p_goes_on, 60)
{
	struct run r = { 0 };
	int errfd = err_file();
	ASSERT_LE(0, errfd);
	F->stop_at = 1L << 40;
	r.p = start_p(NULL, 0, body_calls, errfd);
	ASSERT_LT(0, r.p);
	r.b = find_b();
	ASSERT_LT(0, r.b);
	ASSERT_TRUE(calls_reach(1000));
	ASSERT_EQ(0, kill(r.b, SIGSTOP));
	int stuck = stuck_in_call();
	long at = F->calls;
	usleep(300000);
	long still = F->calls;
	ASSERT_EQ(0, kill(r.b, SIGCONT));
	F->stop_at = at + 2000;
	finish(&r, errfd, 30);
	TH_LOG("stopped at %ld calls, %ld after; P's end %d; stderr: %s", at, F->calls, r.out, r.err);
	EXPECT_TRUE(stuck); /* the stop landed inside B's call */
	EXPECT_EQ(at, still);
	EXPECT_EQ(0, r.out);
	EXPECT_EQ(RAN, classify(&r));
	EXPECT_EQ(1, F->done);
	EXPECT_EQ(at + 2000, F->calls);
	EXPECT_EQ(0, F->wrong) TH_LOG("first wrong answer %ld", F->first_got);
	EXPECT_TRUE(r.b_ended);
}

/* T of P's only thread, from /proc: P's task that is not P */
static pid_t find_t(pid_t p)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", p);
	DIR *d = opendir(path);
	struct dirent *e;
	pid_t t = 0;
	while (d && (e = readdir(d)))
		if (atoi(e->d_name) > 0 && atoi(e->d_name) != p)
			t = atoi(e->d_name);
	if (d)
		closedir(d);
	return t;
}

/* T killed from outside: SIGKILL to one thread ends its whole process (the
 * kernel's rule), so P ends at once; B must not outlive it. */
TEST_F_TIMEOUT(fault, t_killed_from_outside_ends_p_and_b, 60)
{
	struct run r = { 0 };
	int errfd = err_file();
	ASSERT_LE(0, errfd);
	r.p = start_p(NULL, 0, body_calls, errfd);
	ASSERT_LT(0, r.p);
	r.b = find_b();
	ASSERT_LT(0, r.b);
	ASSERT_TRUE(calls_reach(1000));
	pid_t t = find_t(r.p);
	ASSERT_LT(0, t);
	ASSERT_EQ(0, syscall(SYS_tgkill, r.p, t, SIGKILL));
	finish(&r, errfd, 10);
	TH_LOG("T %d killed after %ld calls; P's end %d; stderr: %s", t, F->calls, r.out, r.err);
	EXPECT_EQ(KILLED(SIGKILL), r.out);
	EXPECT_EQ(0, F->done);
	EXPECT_TRUE(r.b_ended);
	EXPECT_EQ(0, F->wrong) TH_LOG("first wrong answer %ld", F->first_got);
}

/* ------------------------------------------ P stopped while it makes a thread */

static void *mark_ran(void *a)
{
	__atomic_add_fetch(&F->ran, 1, __ATOMIC_SEQ_CST);
	return a;
}

/* One thread at a time, each when the test says go: made and joined. */
static int body_make_threads(void *a)
{
	(void)a;
	for (long i = 0;; i++) {
		while (__atomic_load_n(&F->go, __ATOMIC_ACQUIRE) <= i)
			if (F->quit)
				return F->bad ? 1 : 0;
			else
				sched_yield();
		__atomic_store_n(&F->begun, i + 1, __ATOMIC_RELEASE);
		pthread_t t;
		void *r = NULL;
		int e = pthread_create(&t, NULL, mark_ran, (void *)i);
		__atomic_store_n(&F->made, i + 1, __ATOMIC_RELEASE);
		if (e || pthread_join(t, &r) || (long)r != i)
			F->bad = i + 1;
	}
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* P's threads as the kernel shows them: how many, how many in seccomp,
 * how many stopped (state T) */
struct p_tasks {
	int n, sealed, stopped;
};

static struct p_tasks p_tasks(pid_t p)
{
	struct p_tasks k = { 0, 0, 0 };
	char path[320], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/task", p);
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (atoi(e->d_name) <= 0)
			continue;
		unsigned long long m = 0;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", p, e->d_name);
		if (proc_status_hex(path, "Seccomp:", &m))
			continue; /* gone meanwhile */
		proc_read(path, buf, sizeof(buf));
		char *st = strstr(buf, "\nState:");
		k.n++;
		k.sealed += m != 0;
		k.stopped += st && st[8] == 'T';
	}
	if (d)
		closedir(d);
	return k;
}

static int p_alive(pid_t p)
{
	siginfo_t si = { 0 };
	return waitid(P_PID, (id_t)p, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == 0;
}

/* P stopped (SIGSTOP, as Ctrl-Z or a debugger does) for 3 s at varied
 * points of making a thread, then continued: P goes on, every thread
 * runs, nothing is killed.  A new thread's start is B's to confirm with
 * the kernel, and a stopped or unscheduled thread has not started yet:
 * no deadline by the clock may decide it.  The test first measures how
 * long a thread takes to make (begun to returned), then stops P at delays
 * spread over that time after the creation begins, until 6 stops have
 * landed while pthread_create was in flight, 2 of them with the new
 * thread already there (the kernel shows P with more threads than the
 * main one and its T); a stop that landed after the call returned is
 * continued at once.  Each landing is counted by phase:
 * before the clone (no new thread yet), the new thread not yet in
 * seccomp, in seccomp but pthread_create not yet back. */
TEST_F_TIMEOUT(fault, p_stopped_while_it_makes_threads_goes_on_and_every_thread_runs, 180)
{
	struct run r = { 0 };
	int errfd = err_file();
	ASSERT_LE(0, errfd);
	r.p = start_p(NULL, 0, body_make_threads, errfd);
	ASSERT_LT(0, r.p);
	r.b = find_b();
	ASSERT_LT(0, r.b);
	long rounds = 0, at_clone = 0, unsealed = 0, sealed = 0, after = 0, held = 0;
	long long dur[21];
	int ok = 1;
	for (int attempt = 0; ok && attempt < 600; attempt++) {
		/* only P's main thread and its T: the last thread is gone */
		struct p_tasks k;
		for (int i = 0; i < 3000 && (k = p_tasks(r.p)).n != 2; i++)
			usleep(1000);
		if (k.n != 2 || !p_alive(r.p)) {
			TH_LOG("round %ld: P has %d threads, %d in seccomp", rounds, k.n, k.sealed);
			ok = 0;
			break;
		}
		__atomic_store_n(&F->go, rounds + 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&F->begun, __ATOMIC_ACQUIRE) != rounds + 1 && p_alive(r.p))
			;
		long long t0 = now_ns();
		if (attempt < 21) { /* calibration: no stop */
			while (__atomic_load_n(&F->made, __ATOMIC_ACQUIRE) != rounds + 1 && p_alive(r.p))
				;
			dur[attempt] = now_ns() - t0;
			rounds++;
			continue;
		}
		if (attempt == 21) /* the median */
			for (int i = 0; i < 21; i++)
				for (int j = i + 1; j < 21; j++)
					if (dur[j] < dur[i]) {
						long long x = dur[i];
						dur[i] = dur[j];
						dur[j] = x;
					}
		/* 0 to 1.2 median durations, in 37 steps, cycled */
		long long delay = dur[10] * 12 / 10 * ((attempt - 21) % 37) / 36;
		while (now_ns() - t0 < delay)
			;
		ASSERT_EQ(0, kill(r.p, SIGSTOP));
		for (int i = 0; i < 2000; i++) {
			k = p_tasks(r.p);
			if (k.n && k.stopped == k.n)
				break;
			usleep(500);
		}
		int inflight = __atomic_load_n(&F->made, __ATOMIC_ACQUIRE) != rounds + 1;
		if (!inflight)
			after++;
		else if (k.n <= 2)
			at_clone++;
		else if (k.sealed < 2)
			unsealed++;
		else
			sealed++;
		if (inflight) {
			held++;
			usleep(3000000);
		}
		ASSERT_EQ(0, kill(r.p, SIGCONT));
		for (int i = 0; i < 30000 && __atomic_load_n(&F->made, __ATOMIC_ACQUIRE) != rounds + 1 &&
				p_alive(r.p);
		     i++)
			usleep(1000);
		if (__atomic_load_n(&F->made, __ATOMIC_ACQUIRE) != rounds + 1) {
			TH_LOG("round %ld: pthread_create did not return", rounds);
			ok = 0;
			break;
		}
		rounds++;
		if (held >= 6 && unsealed + sealed >= 2)
			break;
	}
	F->quit = 1;
	finish(&r, errfd, 30);
	TH_LOG("%ld threads made; stops held 3 s: %ld (before the clone %ld, new thread not yet "
	       "in seccomp %ld, in seccomp and not yet returned %ld), after the return %ld; %ld "
	       "threads ran; P's end %d; stderr: %s",
	       rounds, held, at_clone, unsealed, sealed, after, F->ran, r.out, r.err);
	EXPECT_TRUE(ok);
	EXPECT_LE(6, held);
	EXPECT_LE(2, unsealed + sealed);
	EXPECT_EQ(0, r.out);
	EXPECT_EQ(RAN, classify(&r));
	EXPECT_EQ(0, F->bad);
	EXPECT_EQ(rounds, F->made);
	EXPECT_EQ(rounds, F->ran);
	EXPECT_TRUE(r.b_ended);
}

/* ------------------------------------------ P stopped while slots are made */

#define STORM_THREADS 150
static int storm_gate[2];

static void *storm_parked(void *a)
{
	char c;
	__atomic_add_fetch(&F->ran, 1, __ATOMIC_SEQ_CST);
	return read(storm_gate[0], &c, 1) == 1 ? a : NULL;
}

/* STORM_THREADS threads alive at once, each in a slot of its own (B makes
 * each slot's eventfds as it is first used), each made when the test says
 * go; then all ended */
static int body_many_alive(void *a)
{
	(void)a;
	static pthread_t t[STORM_THREADS];
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	if (pipe(storm_gate))
		return 1;
	for (long i = 0; i < STORM_THREADS; i++) {
		while (__atomic_load_n(&F->go, __ATOMIC_ACQUIRE) <= i)
			sched_yield();
		if (pthread_create(&t[i], &at, storm_parked, (void *)i))
			return 2;
		__atomic_store_n(&F->made, i + 1, __ATOMIC_RELEASE);
	}
	char go[STORM_THREADS];
	memset(go, 1, sizeof(go));
	if (write(storm_gate[1], go, sizeof(go)) != (ssize_t)sizeof(go))
		return 3;
	for (long i = 0; i < STORM_THREADS; i++) {
		void *r = NULL;
		if (pthread_join(t[i], &r) || (long)r != i)
			F->bad = i + 1;
	}
	return F->bad ? 4 : 0;
}

/* SANDPIT_DEBUG on, and a soft RLIMIT_NOFILE of 1024 where the hard
 * limit leaves sandpit's block room above it (where slots are made on
 * demand) */
static int debug_on_soft_1024(long unused)
{
	(void)unused;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max >= SM_FD_TOP) {
		rl.rlim_cur = 1024;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			return -1;
	}
	return setenv("SANDPIT_DEBUG", "1", 1);
}

/* P and its notifier stopped and continued together (as a stop of their
 * process group, Ctrl-Z, does) once for each of 150 threads P makes, at
 * a point 0 to 99 us after the test lets the creation begin (before the
 * clone, while B makes the slot, after): each stop cuts the notifier's
 * wait short (the kernel makes its call again when it goes on), and B,
 * which puts each new slot's eventfds through that wait, takes the new
 * one (its SANDPIT_DEBUG line counts them): every thread is made and
 * runs, P ends by itself */
TEST_F_TIMEOUT(fault, stops_while_slots_are_made_every_thread_runs_and_b_takes_the_next_wait, 180)
{
	struct run r = { 0 };
	int errfd = err_file();
	ASSERT_LE(0, errfd);
	r.p = start_p(debug_on_soft_1024, 0, body_many_alive, errfd);
	ASSERT_LT(0, r.p);
	r.b = find_b();
	ASSERT_LT(0, r.b);
	long stops = 0, inflight = 0;
	pid_t np = 0;
	for (int i = 0; i < 500 && !np; i++)
		if (!(np = (pid_t)notifier_pid_of(r.p)))
			usleep(1000); /* until P's start-up has made it, where it does */
	if (np) {
		/* an orphan, never P's child: taken in by this test, a
		 * subreaper (start_p) */
		long ppid = proc_ppid(np);
		EXPECT_EQ(getpid(), ppid);
	}
	for (long i = 0; i < STORM_THREADS && p_alive(r.p); i++) {
		__atomic_store_n(&F->go, i + 1, __ATOMIC_RELEASE);
		long long t0 = now_ns();
		while (now_ns() - t0 < (i % 100) * 1000)
			;
		ASSERT_EQ(0, kill(r.p, SIGSTOP));
		if (np)
			ASSERT_EQ(0, kill(np, SIGSTOP));
		inflight += __atomic_load_n(&F->made, __ATOMIC_ACQUIRE) <= i;
		usleep(300);
		if (np)
			ASSERT_EQ(0, kill(np, SIGCONT));
		ASSERT_EQ(0, kill(r.p, SIGCONT));
		stops++;
		for (int w = 0; w < 30000 && __atomic_load_n(&F->made, __ATOMIC_ACQUIRE) <= i &&
				p_alive(r.p);
		     w++)
			usleep(1000);
	}
	int errs = dup(errfd); /* SANDPIT_DEBUG's lines are more than r.err holds */
	finish(&r, errfd, 60);
	int cut = 0;
	static char all[1 << 20];
	ssize_t n = pread(errs, all, sizeof(all) - 1, 0);
	all[n > 0 ? n : 0] = 0;
	close(errs);
	for (const char *l = all; (l = strstr(l, "the notifier's wait was cut short")); l++)
		cut++;
	TH_LOG("%ld stops, %ld while the creation was in flight; notifier %d; B took %d new "
	       "waits; %ld threads made, %ld ran; P's end %d",
	       stops, inflight, (int)np, cut, F->made, F->ran, r.out);
	EXPECT_EQ(STORM_THREADS, stops);
	EXPECT_EQ(0, r.out);
	EXPECT_EQ(0, F->bad);
	EXPECT_EQ(STORM_THREADS, F->made);
	EXPECT_EQ(STORM_THREADS, F->ran);
	EXPECT_TRUE(r.b_ended);
	/* where there is a notifier, the stops reached it and B took its
	 * next wait */
	struct rlimit rl;
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	EXPECT_EQ(kernel_has_addfd() && !kernel_addfd_forced_off() && rl.rlim_max >= SM_FD_TOP,
		  np != 0);
	if (np)
		EXPECT_LE(1, cut);
}

/* ------------------------------------------ limits and /proc at start */

static int set_nofile(long n)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	rl.rlim_cur = (rlim_t)n;
	return setrlimit(RLIMIT_NOFILE, &rl);
}

/* this process's address space size (VmSize), bytes */
static long vm_size(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *c = strstr(buf, "VmSize:");
	return c ? atol(c + 7) * 1024 : -1;
}

/* the limit: VmSize at this point plus arg bytes */
static int set_as(long extra)
{
	long v = vm_size();
	struct rlimit rl;
	if (v < 0 || getrlimit(RLIMIT_AS, &rl))
		return -1;
	rl.rlim_cur = (rlim_t)(v + extra);
	return setrlimit(RLIMIT_AS, &rl);
}

/* Runs P with prepare(arg) over and over, each to an allowed end: either
 * it ran 200 rounds of calls, all answered right, or it ended at once
 * with a reason that names cause.  Counts each end in ends[]. */
static void edge_runs(struct __test_metadata *_metadata, int (*prepare)(long), const long *args,
		      int nargs, const char *cause, int ends[4])
{
	for (int i = 0; i < nargs; i++) {
		struct run r = { 0 };
		int errfd = err_file();
		ASSERT_LE(0, errfd);
		F->calls = F->wrong = F->done = 0;
		F->start_rc = 0;
		F->start_msg[0] = 0;
		F->stop_at = 200;
		r.p = start_p(prepare, args[i], body_calls, errfd);
		ASSERT_LT(0, r.p);
		finish(&r, errfd, 20);
		int e = classify(&r);
		ends[e]++;
		if (e == OTHER || (e == RAN && (F->wrong || F->calls != 200)) || !r.b_ended)
			TH_LOG("limit %ld: end %d, %ld calls, %ld wrong, B ended %d; start: %s; stderr: %s",
			       args[i], r.out, F->calls, F->wrong, r.b_ended, F->start_msg, r.err);
		EXPECT_NE(OTHER, e);
		EXPECT_EQ(0, F->wrong) TH_LOG("first wrong answer %ld", F->first_got);
		if (e == RAN)
			EXPECT_EQ(200, F->calls);
		EXPECT_TRUE(r.b_ended);
		if (e == REFUSED)
			EXPECT_NE(NULL, strstr(F->start_msg, cause)) TH_LOG("limit %ld: %s", args[i], F->start_msg);
		if (e == KILLED_WITH_REASON)
			EXPECT_NE(NULL, strstr(r.err, cause)) TH_LOG("limit %ld: %s", args[i], r.err);
		if (e == REFUSED && getenv("FAULT_VERBOSE"))
			TH_LOG("limit %ld refused: %s", args[i], F->start_msg);
	}
}

/* RLIMIT_NOFILE from far too few descriptors to enough: every start either
 * refuses with a reason or runs right; the edge is crossed (both seen). */
TEST_F_TIMEOUT(fault, rlimit_nofile_at_the_edge_refuses_or_runs, 120)
{
	long n[48];
	int ends[4] = { 0 };
	for (int i = 0; i < 48; i++)
		n[i] = 3 + 2 * i;
	edge_runs(_metadata, set_nofile, n, 48, strerror(EMFILE), ends);
	TH_LOG("RLIMIT_NOFILE 3..97: %d ran, %d refused, %d killed with a reason", ends[RAN],
	       ends[REFUSED], ends[KILLED_WITH_REASON]);
	EXPECT_LT(0, ends[RAN]);
	EXPECT_LT(0, ends[REFUSED] + ends[KILLED_WITH_REASON]);
}

/* RLIMIT_AS from no room above the child's size to 128 MB of it */
TEST_F_TIMEOUT(fault, rlimit_as_at_the_edge_refuses_or_runs, 120)
{
	long n[24];
	int ends[4] = { 0 };
	for (int i = 0; i < 24; i++)
		n[i] = i ? (64L << 10) << (i / 2) : 0; /* 0, 64 KB .. 128 MB */
	edge_runs(_metadata, set_as, n, 24, strerror(ENOMEM), ends);
	TH_LOG("RLIMIT_AS size + 0..128 MB: %d ran, %d refused, %d killed with a reason", ends[RAN],
	       ends[REFUSED], ends[KILLED_WITH_REASON]);
	EXPECT_LT(0, ends[RAN]);
	EXPECT_LT(0, ends[REFUSED] + ends[KILLED_WITH_REASON]);
}

/* /proc unmounted in a mount namespace of P's own (root only) */
static int no_proc(long arg)
{
	(void)arg;
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    umount2("/proc", MNT_DETACH))
		return -1;
	return access("/proc/self", F_OK) == 0 ? -1 : 0;
}

TEST_F_TIMEOUT(fault, proc_unmounted_refuses_or_runs, 60)
{
	struct run r = { 0 };
	if (geteuid() != 0)
		SKIP(return, "unmounting /proc needs root (a mount namespace of its own)");
	int errfd = err_file();
	ASSERT_LE(0, errfd);
	F->stop_at = 200;
	r.p = start_p(no_proc, 0, body_calls, errfd);
	ASSERT_LT(0, r.p);
	finish(&r, errfd, 20);
	if (r.out == KSFT_SKIP)
		SKIP(return, "no mount namespace here (unshare or umount refused)");
	int e = classify(&r);
	TH_LOG("/proc unmounted: end %d (%d), %ld calls; start: %s; stderr: %s", r.out, e, F->calls,
	       F->start_msg, r.err);
	EXPECT_NE(OTHER, e);
	if (e == REFUSED)
		EXPECT_NE(NULL, strstr(F->start_msg, "/proc"));
	EXPECT_EQ(0, F->wrong) TH_LOG("first wrong answer %ld", F->first_got);
	if (e == RAN)
		EXPECT_EQ(200, F->calls);
	EXPECT_TRUE(r.b_ended);
}

TEST_HARNESS_MAIN
