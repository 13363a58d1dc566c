/* rev21b: an outside review of give_back (sandpit_start failing before T
 * runs gives back what its steps made).  Each attempt runs in a child P
 * (this process a child subreaper, so sandpit's orphans come here and are
 * counted); P's start is made to fail at a point after the patching
 * (RLIMIT_NPROC: B's thread or T's clone refused; B killed from outside),
 * and then P, as a caller would, runs ordinary calls through the patched
 * sites, checks that its own state (signal handler and mask, environment,
 * cwd, RLIMIT_NOFILE, subreaper flag, descriptors it holds above its soft
 * limit) is as before, and starts again: the second start must run the
 * sandbox (a file outside the grants refused) and keep invariant 3 for
 * the trampolines the failed start wrote (they stay in use).  Each test
 * counts the attempts that reached the failure point and asserts the
 * precise outcome. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"

/* P's report */
struct shared {
	volatile int phase; /* 1 P forked, 2 B may be killed, 3 P returned from the first start */
	int rc, rc2, open2, tramp_attack, workload, state, post;
	uintptr_t tramp;
	char msg[512], why[256];
};
static struct shared *S;

/* a message refusing after the patching (as start_failure_test names them) */
static int after_patching(const char *m)
{
	static const char *const post[] = { "cannot patch system calls", "the trusted process did not start",
					    "run-time patcher", "too many protected ranges",
					    "the trusted process is gone", "cannot start the trusted thread",
					    "needs the trusted process to set thread pointers" };
	for (size_t i = 0; i < sizeof(post) / sizeof(post[0]); i++)
		if (strstr(m, post[i]))
			return 1;
	return 0;
}

/* The trampoline of libc's munmap wrapper (T checks munmap: patched in
 * either mode), from its site's jmp rel32; 0 if the site is not patched. */
static uintptr_t munmap_trampoline(void)
{
	const uint8_t *p = (const uint8_t *)munmap;
	for (int i = 0; i < 16; i++)
		if (p[i] == 0xe9) {
			int32_t rel;
			memcpy(&rel, p + i + 1, 4);
			return (uintptr_t)(p + i + 5) + rel;
		}
	return 0;
}

long u_call_trusted(long nr, const long args[6]);

/* invariant 3 on the page of addr, as invariants_test attacks it: 0 when
 * every attempt is refused with EPERM, else the first that was not */
static int attack_range(uintptr_t addr)
{
	void *page = (void *)(addr & ~4095UL);
	if (!addr)
		return 10;
	S->tramp_attack = -__LINE__;
	if (mprotect(page, 4096, PROT_READ | PROT_WRITE) != -1 || errno != EPERM)
		return 11;
	S->tramp_attack = -__LINE__;
	if (mprotect(page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) != -1 || errno != EPERM)
		return 20;
	S->tramp_attack = -__LINE__;
	if (mprotect(page, 4096, PROT_NONE) != -1 || errno != EPERM)
		return 12;
	S->tramp_attack = -__LINE__;
	if (munmap(page, 4096) != -1 || errno != EPERM)
		return 13;
	S->tramp_attack = -__LINE__;
	if (mmap(page, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
		    MAP_FAILED || errno != EPERM)
		return 14;
	S->tramp_attack = -__LINE__;
	if (madvise(page, 4096, MADV_DONTNEED) != -1 || errno != EPERM)
		return 16;
	return 0;
}

/* ---- the caller's state, before and after ---- */

static volatile int usr1_seen;
static void on_usr1(int sig) { (void)sig; usr1_seen++; }

struct caller_state {
	void *handler;
	int flags;
	sigset_t mask;
	char env[64], cwd[256];
	struct rlimit nofile;
	int reaper, dumpable;
	struct stat high[3];
};
/* descriptors the caller holds at and above its soft limit (it lowered the
 * limit after opening them), where sandpit's block may go */
static const int high_fds[3] = { 1024, 2048, 4095 };

static void caller_state(struct caller_state *c)
{
	struct sigaction sa;
	memset(c, 0, sizeof(*c));
	sigaction(SIGUSR1, NULL, &sa);
	c->handler = (void *)sa.sa_handler;
	c->flags = sa.sa_flags;
	sigprocmask(SIG_SETMASK, NULL, &c->mask);
	const char *e = getenv("REV21B_MARK");
	snprintf(c->env, sizeof(c->env), "%s", e ? e : "(none)");
	if (!getcwd(c->cwd, sizeof(c->cwd)))
		c->cwd[0] = 0;
	getrlimit(RLIMIT_NOFILE, &c->nofile);
	prctl(PR_GET_CHILD_SUBREAPER, &c->reaper);
	c->dumpable = prctl(PR_GET_DUMPABLE);
	for (int i = 0; i < 3; i++)
		if (fstat(high_fds[i], &c->high[i]) < 0)
			c->high[i].st_ino = 0;
}

static const char *state_differs(const struct caller_state *a, const struct caller_state *b)
{
	if (a->handler != b->handler || a->flags != b->flags)
		return "SIGUSR1's handler";
	if (memcmp(&a->mask, &b->mask, sizeof(a->mask)))
		return "the signal mask";
	if (strcmp(a->env, b->env))
		return "the environment";
	if (strcmp(a->cwd, b->cwd))
		return "the cwd";
	if (a->nofile.rlim_cur != b->nofile.rlim_cur || a->nofile.rlim_max != b->nofile.rlim_max)
		return "RLIMIT_NOFILE";
	if (a->reaper != b->reaper)
		return "the subreaper flag";
	if (a->dumpable != b->dumpable)
		return "the dumpable flag";
	for (int i = 0; i < 3; i++)
		if (!a->high[i].st_ino || a->high[i].st_ino != b->high[i].st_ino ||
		    a->high[i].st_dev != b->high[i].st_dev)
			return "a descriptor the caller holds above its soft limit";
	return NULL;
}

/* ---- ordinary calls through the patched sites ---- */

static void *thread_body(void *a)
{
	int *fd = a;
	return (void *)(intptr_t)write(*fd, "t", 1);
}

/* 0, or the step that went wrong; each call's effect is checked once, so a
 * call made twice (or not at all) shows */
static int workload(const char *file)
{
	int p[2], n = 0;
	S->workload = -1;
	S->workload = -101;
	if (pipe(p))
		return 1;
	S->workload = -102;
	if (write(p[1], "x", 1) != 1 || ioctl(p[0], FIONREAD, &n) || n != 1)
		return 2; /* written once, exactly */
	char c;
	S->workload = -103;
	if (read(p[0], &c, 1) != 1 || c != 'x')
		return 3;
	S->workload = -104;
	int fd = open(file, O_RDONLY);
	char buf[16] = "";
	struct stat a, b;
	S->workload = -105;
	if (fd < 0 || read(fd, buf, sizeof(buf)) != 5 || memcmp(buf, "rev21", 5) || fstat(fd, &a) ||
	    stat(file, &b) || a.st_ino != b.st_ino || lseek(fd, 0, SEEK_CUR) != 5)
		return 4; /* the read advanced the offset once */
	close(fd);
	S->workload = -106;
	char *m = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	S->workload = -107;
	if (m == MAP_FAILED)
		return 5;
	m[4096] = 1;
	S->workload = -108;
	if (mprotect(m + 4096, 4096, PROT_READ) || munmap(m, 3 * 4096))
		return 6;
	struct timespec t1, t2;
	S->workload = -109;
	if (clock_gettime(CLOCK_MONOTONIC, &t1) || syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t2) ||
	    t2.tv_sec - t1.tv_sec > 2 || t2.tv_sec < t1.tv_sec)
		return 7; /* the vDSO's patched copy still tells the time */
	struct timeval tv;
	S->workload = -110;
	if (gettimeofday(&tv, NULL) || time(NULL) < tv.tv_sec - 2)
		return 8;
	usr1_seen = 0;
	S->workload = -112;
	if (raise(SIGUSR1) || usr1_seen != 1)
		return 10; /* the handler ran once */
	sigset_t s2;
	sigemptyset(&s2);
	sigaddset(&s2, SIGUSR2);
	S->workload = -113;
	if (kill(getpid(), SIGUSR2) || sigpending(&s2) || !sigismember(&s2, SIGUSR2))
		return 11; /* SIGUSR2, blocked, pending */
	signal(SIGUSR2, SIG_IGN);
	S->workload = -114;
	pid_t k = fork();
	S->workload = -115;
	if (k == 0)
		_exit(7);
	int st;
	S->workload = -116;
	if (k < 0 || waitpid(k, &st, 0) != k || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
		return 12;
	/* vfork, posix_spawn and system (a clone that shares memory, on a
	 * stack of its own), a thread (glibc tries clone3 first): the new
	 * task must not return through the entry's frames on the parent's
	 * stack */
	S->workload = -120;
	k = vfork();
	if (k == 0)
		_exit(8);
	if (k < 0 || waitpid(k, &st, 0) != k || !WIFEXITED(st) || WEXITSTATUS(st) != 8)
		return 14;
	S->workload = -121;
	char *argv[] = { "true", NULL };
	extern char **environ;
	if (posix_spawn(&k, "/bin/true", NULL, NULL, argv, environ) || waitpid(k, &st, 0) != k ||
	    !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 15;
	S->workload = -122;
	if (system("exit 3") != 3 << 8)
		return 16;
	pthread_t th;
	void *ret;
	S->workload = -111;
	if (pthread_create(&th, NULL, thread_body, &p[1]) || pthread_join(th, &ret) || (intptr_t)ret != 1 ||
	    read(p[0], &c, 1) != 1 || c != 't')
		return 9;
	signal(SIGUSR2, SIG_DFL);
	S->workload = -117;
	if (getpid() != (pid_t)syscall(SYS_gettid))
		return 13;
	close(p[0]);
	close(p[1]);
	return 0;
}

/* ---- P ---- */

enum kind { NPROC, KILL_B };
static char file[64];

static void __attribute__((noreturn)) p_main(enum kind k, long arg)
{
	static const char *r[] = { "/tmp", NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = r };
	struct rlimit rl;

	sandpit_supported();
	/* the caller's state: a handler, a blocked signal, an environment
	 * variable, a cwd, descriptors above its soft limit, a subreaper */
	signal(SIGUSR1, on_usr1);
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, SIGUSR2);
	sigprocmask(SIG_BLOCK, &m, NULL);
	setenv("REV21B_MARK", "kept", 1);
	if (chdir("/tmp"))
		_exit(KSFT_SKIP);
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_max < 4096 + 1)
		_exit(KSFT_SKIP);
	rl.rlim_cur = 4096 + 1;
	setrlimit(RLIMIT_NOFILE, &rl);
	int f = open(file, O_RDONLY);
	for (int i = 0; i < 3; i++)
		if (f < 0 || dup2(f, high_fds[i]) != high_fds[i])
			_exit(KSFT_SKIP);
	close(f);
	rl.rlim_cur = 1000; /* below them all: the block goes above */
	setrlimit(RLIMIT_NOFILE, &rl);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (k == NPROC) {
		uid_t uid = (uid_t)(arg >> 16);
		if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid) ||
		    prctl(PR_SET_DUMPABLE, 1))
			_exit(KSFT_SKIP);
		struct rlimit np = { (rlim_t)(arg & 0xffff), 4096 };
		if (setrlimit(RLIMIT_NPROC, &np))
			_exit(KSFT_SKIP);
	}
	struct caller_state before, after;
	caller_state(&before);
	S->phase = 2;
	S->rc = sandpit_start(&o);
	snprintf(S->msg, sizeof(S->msg), "%s", S->rc < 0 ? sandpit_error() : "");
	S->phase = 3;
	if (S->rc == 0) {
		/* started: it enforces (or B is gone and P dies) */
		int fd = open("/var", O_RDONLY | O_DIRECTORY);
		S->open2 = fd < 0 ? -errno : fd;
		_exit(0);
	}
	S->post = after_patching(S->msg);
	caller_state(&after);
	const char *d = state_differs(&before, &after);
	S->state = d ? 1 : 0;
	snprintf(S->why, sizeof(S->why), "%s", d ? d : "");
	if (k == NPROC) {
		struct rlimit np = { 4096, 4096 };
		setrlimit(RLIMIT_NPROC, &np);
	}
	S->workload = S->rc2 = S->open2 = S->tramp_attack = -1000;
	S->tramp = munmap_trampoline();
	S->workload = workload(file);
	S->rc2 = sandpit_start(&o);
	if (S->rc2 == 0) {
		int fd = open("/var", O_RDONLY | O_DIRECTORY);
		S->open2 = fd < 0 ? -errno : fd;
		S->tramp_attack = attack_range(S->tramp ? S->tramp : munmap_trampoline());
	} else {
		snprintf(S->why, sizeof(S->why), "second start: %s", sandpit_error());
	}
	_exit(0);
}

/* this process's children other than p (sandpit's orphans), reaped; those
 * that had not ended within 3 s killed and counted */
static int reap_others(pid_t p)
{
	char path[64], kids[4096];
	int stuck = 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", getpid(), getpid());
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, kids, sizeof(kids) - 1);
	if (fd >= 0)
		close(fd);
	kids[n > 0 ? n : 0] = 0;
	for (char *c = kids; *c;) {
		pid_t k = (pid_t)strtol(c, &c, 10);
		while (*c == ' ')
			c++;
		if (k <= 0 || k == p)
			continue;
		int done = 0;
		for (int i = 0; i < 300 && !done; i++) {
			done = waitpid(k, NULL, WNOHANG | __WALL) == k;
			if (!done)
				usleep(10000);
		}
		if (!done) {
			stuck++;
			kill(k, SIGKILL);
			waitpid(k, NULL, __WALL);
		}
	}
	return stuck;
}

/* B, as this process's child (an orphan of P's), by its name */
static pid_t find_b(pid_t p)
{
	char path[96], kids[4096], st[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", getpid(), getpid());
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, kids, sizeof(kids) - 1);
	if (fd >= 0)
		close(fd);
	kids[n > 0 ? n : 0] = 0;
	for (char *c = kids; *c;) {
		pid_t k = (pid_t)strtol(c, &c, 10);
		while (*c == ' ')
			c++;
		if (k <= 0 || k == p)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", k);
		fd = open(path, O_RDONLY);
		n = fd < 0 ? -1 : read(fd, st, sizeof(st) - 1);
		if (fd >= 0)
			close(fd);
		st[n > 0 ? n : 0] = 0;
		if (strstr(st, "(sandpit-B)"))
			return k;
	}
	return 0;
}

struct tally {
	int runs, refused, post, started, killed, skipped;
};

/* one attempt; kill_after_us >= 0: B killed that long after it is seen */
static void attempt(struct __test_metadata *_metadata, struct tally *t, enum kind k, long arg,
		    long kill_after_us, const char *what)
{
	memset(S, 0, sizeof(*S));
	fflush(NULL);
	pid_t p = fork();
	if (p == 0)
		p_main(k, arg);
	int st = 0, gone = 0, b_killed = 0;
	for (long i = 0; i < 60L * 20000 && !gone; i++) {
		if (kill_after_us >= 0 && !b_killed && S->phase == 2) {
			pid_t b = find_b(p);
			if (b > 0) {
				if (kill_after_us)
					usleep((useconds_t)kill_after_us);
				kill(b, SIGKILL);
				b_killed = 1;
			}
		}
		gone = waitpid(p, &st, WNOHANG) == p;
		if (!gone && (kill_after_us < 0 || b_killed))
			usleep(1000);
	}
	if (!gone) {
		kill(p, SIGKILL);
		waitpid(p, &st, 0);
	}
	int stuck = reap_others(p);
	if (WIFEXITED(st) && WEXITSTATUS(st) == KSFT_SKIP) {
		t->skipped++;
		return;
	}
	t->runs++;
	EXPECT_EQ(0, stuck) TH_LOG("%s: %d of sandpit's processes still ran 3 s after P", what, stuck);
	if (S->phase < 3) {
		/* killed inside the start: past T, with sandpit's reason */
		EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) TH_LOG("%s: P ended %#x inside sandpit_start", what, st);
		t->killed++;
		return;
	}
	if (S->rc == 0) {
		t->started++;
		/* it ran sandboxed, or B's end killed it */
		EXPECT_TRUE((WIFEXITED(st) && S->open2 == -EACCES) || (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL))
			TH_LOG("%s: started, then P ended %#x with /var open: %d", what, st, S->open2);
		return;
	}
	t->refused++;
	t->post += S->post;
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("%s (%s): P ended %#x after the refusal", what, S->msg, st);
	EXPECT_EQ(0, S->state) TH_LOG("%s (%s): %s changed", what, S->msg, S->why);
	EXPECT_EQ(0, S->workload) TH_LOG("%s (%s): step %d of the calls after it went wrong", what, S->msg, S->workload);
	EXPECT_EQ(0, S->rc2) TH_LOG("%s (%s): %s", what, S->msg, S->why);
	EXPECT_EQ(-EACCES, S->open2) TH_LOG("%s (%s): /var after the second start", what, S->msg);
	EXPECT_EQ(0, S->tramp_attack) TH_LOG("%s (%s): the failed start's trampoline %#lx not protected "
					    "in the second sandbox (attack step %d)", what, S->msg,
					    (unsigned long)S->tramp, S->tramp_attack);
}

FIXTURE(r) { struct tally t; };
FIXTURE_SETUP(r)
{
	S = shared_page(sizeof(*S));
	ASSERT_NE(NULL, S);
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	snprintf(file, sizeof(file), "/tmp/rev21b-%d", getpid());
	FILE *f = fopen(file, "w");
	ASSERT_NE(NULL, f);
	fputs("rev21", f);
	fclose(f);
	memset(&self->t, 0, sizeof(self->t));
}
FIXTURE_TEARDOWN(r)
{
	unlink(file);
	munmap(S, sizeof(*S));
}

static void report(struct __test_metadata *_metadata, const struct tally *t, const char *name)
{
	TH_LOG("%s: %d attempts (%d skipped), %d refused (%d after the patching), %d started, %d killed",
	       name, t->runs, t->skipped, t->refused, t->post, t->started, t->killed);
}

/* RLIMIT_NPROC from 1 up to the first start, for a user of P's own: B's
 * own thread refused, T's clone refused (after the patching, and after
 * B was told T is next); each refusal followed by the caller's calls, its
 * state compared, and a second start that must enforce and protect the
 * failed start's trampolines */
TEST_F_TIMEOUT(r, nproc_refusals_then_calls_state_and_a_second_start, 600)
{
	if (geteuid() != 0)
		SKIP(return, "a user of its own for P needs root");
	long uid = 0x7800 + getpid() % 0x400;
	for (long n = 1; n <= 64 && !self->t.started; n++) {
		char what[64];
		snprintf(what, sizeof(what), "RLIMIT_NPROC %ld", n);
		attempt(_metadata, &self->t, NPROC, n | uid << 16, -1, what);
	}
	report(_metadata, &self->t, "RLIMIT_NPROC");
	EXPECT_EQ(1, self->t.started);
	EXPECT_LE(2, self->t.post);
}

/* B killed from outside at chosen moments after it appears (while P
 * patches, before and after its word to P): sandpit_start refuses (and
 * then everything above holds), or it started and P is killed with it;
 * never a start that runs unsandboxed */
TEST_F_TIMEOUT(r, b_killed_at_chosen_moments, 600)
{
	static const long delays[] = { 0, 0, 0, 100, 300, 1000, 3000, 10000, 30000, 100000 };
	for (size_t i = 0; i < sizeof(delays) / sizeof(delays[0]); i++) {
		char what[64];
		snprintf(what, sizeof(what), "B killed %ld us after it appeared", delays[i]);
		attempt(_metadata, &self->t, KILL_B, 0, delays[i], what);
	}
	report(_metadata, &self->t, "B killed");
	EXPECT_EQ(10, self->t.runs);
	EXPECT_LE(1, self->t.post);
}

/* ---- the caller's signal handlers while sandpit_start runs ---- */

static volatile long ticks, chld_reaped, handler_ppid;
static void on_alrm(int sig)
{
	(void)sig;
	int e = errno;
	struct stat st;
	struct timespec t;
	ticks++;
	handler_ppid = getppid();
	fstat(0, &st);
	clock_gettime(CLOCK_MONOTONIC, &t);
	errno = e;
}

static void on_chld(int sig)
{
	(void)sig;
	int e = errno;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		chld_reaped++;
	errno = e;
}

struct sig_report {
	int rc, open_err, wrong;
	long before, during, after, reaped, last_wrong;
	char msg[256];
};

/* P with a handler of its own: a timer's every 50 us (a profiler's, much
 * faster), or a SIGCHLD handler that reaps whatever ends (a server's).
 * The start must run (the timer's handler, run while start-up patched,
 * crashed P each time; the SIGCHLD handler reaped B's intermediate child
 * and every start failed with ECHILD); then the sandbox enforces. */
static int sig_p(void *arg)
{
	struct sig_report *r = arg;
	static const char *rd[] = { "/tmp", NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = rd };
	int timer = r->rc == 1;
	struct sigaction sa = { .sa_handler = timer ? on_alrm : on_chld, .sa_flags = SA_RESTART };
	sigaction(timer ? SIGALRM : SIGCHLD, &sa, NULL);
	struct itimerval it = { { 0, 50 }, { 0, 50 } }, off = { { 0, 0 }, { 0, 0 } };
	if (timer) {
		setitimer(ITIMER_REAL, &it, NULL);
		while (ticks < 20)
			;
	}
	r->before = ticks;
	r->rc = sandpit_start(&o);
	r->during = ticks - r->before;
	r->reaped = chld_reaped;
	snprintf(r->msg, sizeof(r->msg), "%s", r->rc ? sandpit_error() : "");
	if (timer)
		setitimer(ITIMER_REAL, &off, NULL);
	r->after = ticks;
	if (r->rc == 0) {
		int fd = open("/var", O_RDONLY | O_DIRECTORY);
		r->open_err = fd < 0 ? errno : -fd;
	}
	return 0;
}

TEST(timer_handler_never_runs_inside_sandpit_start)
{
	struct sig_report *r = shared_page(sizeof(*r));
	ASSERT_NE(NULL, r);
	for (int i = 0; i < 5; i++) {
		memset(r, 0, sizeof(*r));
		r->rc = 1;
		fflush(NULL);
		pid_t p = fork();
		if (p == 0)
			_exit(sig_p(r));
		int st;
		ASSERT_EQ(p, waitpid(p, &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("attempt %d: P ended %#x", i, st);
		EXPECT_LE(20, r->before); /* the timer ran before the call */
		EXPECT_EQ(0, r->rc) TH_LOG("%s", r->msg);
		EXPECT_LT(r->before, r->after); /* and across the call */
		EXPECT_EQ(EACCES, r->open_err);
	}
	munmap(r, sizeof(*r));
}

TEST(sigchld_handler_that_reaps_does_not_take_sandpits_children)
{
	struct sig_report *r = shared_page(sizeof(*r));
	ASSERT_NE(NULL, r);
	for (int i = 0; i < 3; i++) {
		memset(r, 0, sizeof(*r));
		fflush(NULL);
		pid_t p = fork();
		if (p == 0)
			_exit(sig_p(r));
		int st;
		ASSERT_EQ(p, waitpid(p, &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("attempt %d: P ended %#x", i, st);
		EXPECT_EQ(0, r->rc) TH_LOG("%s", r->msg);
		EXPECT_EQ(0, r->reaped);
		EXPECT_EQ(EACCES, r->open_err);
	}
	munmap(r, sizeof(*r));
}

/* A handler the program installed before sandpit_start (a profiler's, a
 * crash reporter's), whose own call (getppid) lands while a call of the
 * program's is in flight (an open B refuses): it must not answer that
 * call.  The kernel ran such a handler past sandpit's signal entry, in
 * the middle of the request, and strict mode's open returned the
 * handler's getppid. */
static void on_alrm_ppid(int sig)
{
	(void)sig;
	int e = errno;
	ticks++;
	handler_ppid = getppid();
	errno = e;
}

static int handler_before_start(struct sig_report *r)
{
	static const char *rd[] = { "/tmp", NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = rd };
	struct sigaction sa = { .sa_handler = on_alrm_ppid, .sa_flags = SA_RESTART };
	sigaction(SIGALRM, &sa, NULL);
	r->rc = sandpit_start(&o);
	if (r->rc)
		return 1;
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < 8; i++) {
		/* the handler lands in the program's own code too */
		for (volatile int k = 0; k < 3000000; k++)
			;
		errno = 0;
		int fd = open("/var", O_RDONLY);
		if (fd != -1 || errno != EACCES) {
			r->wrong++;
			r->last_wrong = fd;
		}
	}
	r->during = ticks;
	r->after = handler_ppid;
	return 0;
}

TEST(handler_installed_before_start_never_answers_an_interrupted_call)
{
	struct sig_report *r = shared_page(sizeof(*r));
	ASSERT_NE(NULL, r);
	fflush(NULL);
	pid_t p = fork();
	if (p == 0)
		_exit(handler_before_start(r));
	int st;
	ASSERT_EQ(p, waitpid(p, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("P ended %#x (start %d)", st, r->rc);
	TH_LOG("%ld handler runs; %d of 8 opens answered otherwise (last %ld; the handler's getppid %ld)",
	       r->during, r->wrong, r->last_wrong, r->after);
	EXPECT_LT(0, r->during);
	EXPECT_EQ(getpid(), r->after); /* the handler's call ran, in the sandbox */
	EXPECT_EQ(0, r->wrong);
	munmap(r, sizeof(*r));
}

TEST_HARNESS_MAIN
