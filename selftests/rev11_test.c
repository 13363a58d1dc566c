// SPDX-License-Identifier: GPL-2.0
/* One file over 700 lines: one outside review of one decision of B's, every
 * attack built from the same thread states and timing proofs.
 *
 * Outside review of B's wait for P's own end (user/trusted/b_state.c
 * p_is_exiting, p_threads_dying): when a U dies without exit, B waits
 * longer than 200 ms (up to 5 s) only while every thread of P left has
 * SIGKILL pending, is in its exit or is gone, and says nothing when P ends
 * by itself.  Each attack puts P's other threads in a state that could be
 * taken for dying (a zombie leader, a thread spinning in program code, a
 * group stop, an exit in progress, many threads, a clone racing B's look
 * at /proc/P/task), makes a U die without exit, and asserts that B ends P
 * with SIGKILL and its one line well within 5 s, with a thread proved to
 * run program code in the window.  The last tests are the other side: a
 * program's own exit_group is quiet, and a death it makes at the same
 * moment as its exit_group is hidden (by design: counted and reported). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "u_state.h"

/* B's line for a U that ended without exit */
#define LINE_ENDED "sandpit: a sandboxed thread ended without exit (killed by the kernel for a " \
		   "system call that escaped the sandbox?) (slot "
#define LINE_KILLING "); killing the process\n"

/* well under B's 5 s, well over its 200 ms and a loaded machine's delays */
#define KILL_BOUND_MS 2000

struct shared {
	volatile int leader_z;   /* the test saw P's leader a zombie */
	volatile int go;         /* the victim may die */
	volatile int stop_self;  /* a thread stops P after the death */
	volatile long t_death;   /* CLOCK_MONOTONIC ns just before the death */
	volatile long t_last;    /* the spinner's last look at the clock */
	volatile long spins_after; /* the spinner's rounds after t_death */
	volatile long spinner_tid, threads, made_after, done_after, done_before, saw_stopped, refused, bad, tasks_at_look, tasks_at_release;
	struct mailbox *volatile victim_mb, *volatile waiter_mb;
};
static struct shared *S;

static long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* how many threads /proc/P/task lists now */
static long count_tasks(pid_t p)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)p);
	DIR *d = opendir(path);
	long n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* fn sandboxed with its stderr (and B's) in a file; the test watches P's
 * leader for a zombie meanwhile (S->leader_z).  The outcome, the time of
 * P's end (ns), and what sandpit said in msg. */
static int run_watched_opts(int (*fn)(void *), const struct sandpit_options *o, rlim_t soft,
			    rlim_t hard, int timeout_s, char *msg, size_t len, long *t_end)
{
	char tmpl[] = "/tmp/sandpit-rev11-errXXXXXX";
	int fd = mkstemp(tmpl);
	if (fd < 0)
		return -1;
	unlink(tmpl);
	fflush(NULL);
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		dup2(fd, 2);
		struct rlimit rl = { soft, hard };
		if (soft && setrlimit(RLIMIT_NOFILE, &rl))
			_exit(SANDBOX_START_FAILED + 3);
		if (sandpit_start(o) < 0)
			_exit(SANDBOX_START_FAILED);
		_exit(fn(NULL));
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)p, (int)p);
	int st = 0, done = 0;
	long limit = now_ns() + (long)timeout_s * suite_timeout_scale() * 1000000000L;
	while (!done && now_ns() < limit) {
		done = waitpid(p, &st, WNOHANG) == p;
		if (done)
			break;
		if (!S->leader_z) {
			char buf[512];
			int f = open(path, O_RDONLY);
			ssize_t n = f < 0 ? -1 : read(f, buf, sizeof(buf) - 1);
			if (f >= 0)
				close(f);
			if (n > 0) {
				buf[n] = 0;
				char *c = strrchr(buf, ')');
				if (c && c[1] == ' ' && c[2] == 'Z')
					S->leader_z = 1;
			}
		}
		if (S->stop_self && S->spinner_tid && !S->saw_stopped) {
			/* the spinner as B sees it: stopped (T) */
			char sp[64], buf[512];
			snprintf(sp, sizeof(sp), "/proc/%d/task/%ld/stat", (int)p, S->spinner_tid);
			int f = open(sp, O_RDONLY);
			ssize_t n = f < 0 ? -1 : read(f, buf, sizeof(buf) - 1);
			if (f >= 0)
				close(f);
			if (n > 0) {
				buf[n] = 0;
				char *c = strrchr(buf, ')');
				S->saw_stopped = c && c[1] == ' ' && c[2] == 'T';
			}
		}
		if (S->t_death && !S->tasks_at_release && now_ns() > S->t_death + 185000000L)
			S->tasks_at_release = count_tasks(p);
		if (S->t_death && !S->tasks_at_look && now_ns() > S->t_death + 200000000L)
			S->tasks_at_look = count_tasks(p);
		usleep(1000);
	}
	*t_end = now_ns();
	if (!done) {
		kill(p, SIGKILL);
		waitpid(p, &st, 0);
	}
	usleep(50000); /* B's last line */
	ssize_t n = pread(fd, msg, len - 1, 0);
	msg[n > 0 ? n : 0] = 0;
	close(fd);
	return done ? outcome(st) : -2;
}

static int run_watched(int (*fn)(void *), int timeout_s, char *msg, size_t len, long *t_end)
{
	return run_watched_opts(fn, NULL, 0, 0, timeout_s, msg, len, t_end);
}

static int said_ended(const char *msg)
{
	const char *a = strstr(msg, LINE_ENDED);
	return a && strstr(a, LINE_KILLING) != NULL;
}

/* the tests with many threads, or waits, take their own time: a thousand
 * threads made through B take 20-40 s on a loaded 2-CPU machine
 * (slots_test) */
FIXTURE(many) {};
FIXTURE_SETUP(many) {}
FIXTURE_TEARDOWN(many) {}

/* a thread that runs program code, and nothing else, until P ends */
static void *spinner(void *a)
{
	(void)a;
	S->spinner_tid = gettid();
	__atomic_add_fetch(&S->threads, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		long t = now_ns();
		S->t_last = t;
		if (S->t_death && t >= S->t_death)
			S->spins_after++;
	}
	return NULL;
}

/* the death: a U ends without asking sandpit.  Strict mode: a call the
 * kernel kills the thread for (socket(AF_INET) where the patcher cannot
 * see it) or a raw exit; filter mode: a raw exit (the filter allows exit
 * as it is, the net traps the socket call and refuses it) */
static int raw_death;
static void *victim(void *a)
{
	(void)a;
	missed_fn f = missed_code(raw_death || suite_mode() != SANDPIT_MODE_STRICT ? SYS_exit
										: SYS_socket);
	if (!f)
		return (void *)1L;
	/* the page patched now (the first fetch faults): only its ret runs */
	((void (*)(void))((uint8_t *)f + 9))();
	S->victim_mb = my_mailbox();
	while (!S->go)
		;
	S->t_death = now_ns();
	long r = f(raw_death || suite_mode() != SANDPIT_MODE_STRICT ? 0 : AF_INET, SOCK_STREAM, 0);
	S->bad = r ? r : -1; /* not reached: the thread is gone */
	return NULL;
}

/* the program's main thread leaves with pthread_exit (sandpit's exit: its
 * T rings the bell, B accepts it): the leader stays a zombie, as /proc
 * shows, while the spinner and the victim run on.  Then the victim dies,
 * and the spinner goes on until B ends P. */
static int body_zombie_leader(void *a)
{
	(void)a;
	pthread_t t;
	if (pthread_create(&t, NULL, spinner, NULL) || pthread_create(&t, NULL, victim, NULL))
		return 1;
	pthread_exit(NULL);
}

static void *go_when_leader_zombie(void *a)
{
	(void)a;
	while (!S->leader_z)
		usleep(1000);
	S->go = 1;
	return NULL;
}

static int body_zombie_leader_go(void *a)
{
	pthread_t t;
	if (pthread_create(&t, NULL, go_when_leader_zombie, NULL))
		return 1;
	return body_zombie_leader(a);
}

static void check_killed_within_bound(struct __test_metadata *_metadata, int o, const char *msg,
				      long t_end, int stopped)
{
	long ms = S->t_death ? (t_end - S->t_death) / 1000000 : -1;
	long ran_ms = S->t_death && S->t_last > S->t_death ? (S->t_last - S->t_death) / 1000000 : 0;
	TH_LOG("outcome %d; leader zombie %d; threads %ld; P ended %ld ms after the death, the "
	       "spinner ran %ld ms (%ld rounds) after it; bad %ld; %s",
	       o, S->leader_z, S->threads, ms, ran_ms, S->spins_after, S->bad, msg);
	/* the attack reached its window: the leader a zombie, the death made,
	 * program code running after it */
	EXPECT_EQ(1, S->leader_z);
	EXPECT_LT(0, S->t_death);
	if (stopped) {
		EXPECT_EQ(1, S->saw_stopped); /* P stopped after the death, as B saw it */
	} else {
		EXPECT_LT(0, S->spins_after);
	}
	EXPECT_EQ(0, S->bad);
	/* B ended P, with its line, in about its 200 ms, not its 5 s */
	EXPECT_EQ(KILLED(SIGKILL), o);
	EXPECT_TRUE(said_ended(msg));
	EXPECT_LE(0, ms);
	EXPECT_GT(KILL_BOUND_MS * suite_timeout_scale(), ms);
	EXPECT_GT(KILL_BOUND_MS * suite_timeout_scale(), ran_ms);
}

/* A zombie leader looks dying (State Z); every other thread must be
 * looked at too.  The spinner never sleeps, never asks sandpit anything:
 * no SIGKILL pending, not in its exit. */
TEST(death_while_the_leader_is_a_zombie_and_a_thread_spins_ends_p_at_once)
{
	char msg[4096];
	long t_end;
	S = shared_page(4096);
	ASSERT_NE(NULL, S);
	int o = run_watched(body_zombie_leader_go, 20, msg, sizeof(msg), &t_end);
	check_killed_within_bound(_metadata, o, msg, t_end, 0);
}

/* the same with a raw exit as the death in both modes */
TEST(raw_exit_while_the_leader_is_a_zombie_ends_p_at_once)
{
	char msg[4096];
	long t_end;
	S = shared_page(4096);
	ASSERT_NE(NULL, S);
	raw_death = 1;
	int o = run_watched(body_zombie_leader_go, 20, msg, sizeof(msg), &t_end);
	check_killed_within_bound(_metadata, o, msg, t_end, 0);
}

/* The leader itself the death: a raw exit from the main thread, which
 * leaves it a zombie, as a pthread_exit would, but without sandpit's exit:
 * a zombie leader is the death here, not a dying P */
static int body_leader_raw_exit(void *a)
{
	(void)a;
	pthread_t t;
	missed_fn f = missed_code(SYS_exit);
	if (!f || pthread_create(&t, NULL, spinner, NULL))
		return 1;
	((void (*)(void))((uint8_t *)f + 9))();
	while (!S->threads)
		usleep(1000);
	S->t_death = now_ns();
	f(0, 0, 0);
	S->bad = 1;
	return 2;
}

TEST(leader_raw_exit_while_a_thread_spins_ends_p_at_once)
{
	char msg[4096];
	long t_end;
	S = shared_page(4096);
	ASSERT_NE(NULL, S);
	int o = run_watched(body_leader_raw_exit, 20, msg, sizeof(msg), &t_end);
	check_killed_within_bound(_metadata, o, msg, t_end, 0);
}

/* No thread ever waits in a vfork (its parent would sleep until the child
 * execs or ends, neither dying nor running): vfork, a process clone with
 * CLONE_VFORK and a thread clone with it are all refused */
static int body_vfork(void *a)
{
	(void)a;
	static char stack[16384] __attribute__((aligned(16)));
	long thread = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
		      CLONE_SYSVSEM;
	int refused = 0;
	refused += syscall(SYS_vfork) == -1 && errno == EPERM;
	refused += syscall(SYS_clone, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0, 0, 0) == -1 &&
		   errno == EPERM;
	refused += syscall(SYS_clone, thread | CLONE_VFORK, stack + sizeof(stack), 0, 0, 0) == -1 &&
		   errno == EPERM;
	return 10 + refused;
}

TEST(vfork_in_every_form_is_refused)
{
	EXPECT_EQ(13, outcome(run_sandboxed(body_vfork, NULL)));
}

/* A T that dies ends P: could U make its own T die while P runs on, and
 * take the T's end for part of P's?  T makes no exit but its own after an
 * accepted one: exit (and the pseudo-exit's number) sent straight to T is
 * not a call T makes (ENOSYS), and T goes on serving its U. */
long u_call_trusted(long nr, const long args[6]);
static char t_page[4096] __attribute__((aligned(4096)));

static int body_exit_to_t(void *a)
{
	(void)a;
	const long args[6] = { 0 };
	long r1 = u_call_trusted(SYS_exit, args);
	long r2 = u_call_trusted(SYS_exit, args);
	/* T still serves: a call only T makes (its range rule) */
	long r3 = mprotect(t_page, sizeof(t_page), PROT_READ | PROT_WRITE);
	return r1 == -ENOSYS && r2 == -ENOSYS && r3 == 0 ? 0 : 1;
}

TEST(exit_sent_to_the_trusted_thread_is_enosys_and_it_serves_on)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_exit_to_t, NULL)));
}

/* ------------------------------------------------ P stopped after the death */

static void *stop_after_death(void *a)
{
	(void)a;
	struct mailbox *mb;
	while (!(mb = S->victim_mb))
		;
	/* the kernel clears the victim's word as it goes */
	while (__atomic_load_n(&mb->ctid, __ATOMIC_ACQUIRE))
		;
	S->stop_self = 1;
	kill(getpid(), SIGSTOP); /* every thread stops: no SIGKILL, not exiting */
	return NULL;
}

static int body_stopped(void *a)
{
	pthread_t t;
	if (pthread_create(&t, NULL, stop_after_death, NULL))
		return 1;
	return body_zombie_leader_go(a);
}

/* A stopped thread is no dying one: SIGKILL ends a stopped P */
TEST(death_then_p_stopped_by_itself_ends_p_at_once)
{
	char msg[4096];
	long t_end;
	S = shared_page(4096);
	ASSERT_NE(NULL, S);
	int o = run_watched(body_stopped, 20, msg, sizeof(msg), &t_end);
	TH_LOG("stopped %d, seen stopped %ld", S->stop_self, S->saw_stopped);
	EXPECT_EQ(1, S->stop_self);
	check_killed_within_bound(_metadata, o, msg, t_end, 1);
}

/* ------------- P's end of the socket B polls for P's end, shut down */

/* B takes a hang-up of its socket pair as P's end (POLLHUP, POLLRDHUP,
 * POLLERR): P's end shut down from inside would make any death look like
 * P's own.  Every way to shut it down is refused (EBADF), through libc and
 * (filter mode; strict mode's kernel would kill the thread) as a raw call
 * the net catches; then the death, which B must still end P for. */
static void *shut_then_die(void *a)
{
	(void)a;
	int fd = state_of(my_mailbox())->sp->tb_fd;
	missed_fn raw = suite_mode() == SANDPIT_MODE_STRICT ? NULL : missed_code(SYS_shutdown);
	for (int how = SHUT_RD; how <= SHUT_RDWR; how++) {
		S->made_after++;
		if (shutdown(fd, how) == -1 && errno == EBADF)
			S->refused++;
		if (raw) {
			S->made_after++;
			if (raw(fd, how, 0) == -EBADF)
				S->refused++;
		}
	}
	S->stop_self = 1;
	return victim(a);
}

static int body_shut(void *a)
{
	(void)a;
	pthread_t t;
	if (pthread_create(&t, NULL, go_when_leader_zombie, NULL) ||
	    pthread_create(&t, NULL, spinner, NULL) || pthread_create(&t, NULL, shut_then_die, NULL))
		return 1;
	pthread_exit(NULL);
}

TEST(shutdown_of_the_socket_b_polls_is_refused_and_a_death_still_ends_p_at_once)
{
	char msg[4096];
	long t_end;
	S = shared_page(4096);
	ASSERT_NE(NULL, S);
	int o = run_watched(body_shut, 20, msg, sizeof(msg), &t_end);
	TH_LOG("shutdowns tried %ld, refused with EBADF %ld", S->made_after, S->refused);
	EXPECT_EQ(1, S->stop_self);
	EXPECT_EQ(suite_mode() == SANDPIT_MODE_STRICT ? 3 : 6, S->made_after);
	EXPECT_EQ(S->made_after, S->refused);
	check_killed_within_bound(_metadata, o, msg, t_end, 0);
}

/* ------------------- threads exiting and being made while B looks at P */

/* Threads that exit by sandpit's exit (their U, then their T, leave
 * /proc/P/task) and new ones made, without pause, from the moment of the
 * death: B's look at /proc/P/task meets entries that go while it reads
 * them and clones racing the read.  B's watchers take 127 slots each, and
 * the one that sees the death waits in the alarm: the victim's slot is in
 * the first group, which parked threads fill, so that the new threads'
 * slots are another watcher's, which goes on confirming them.  The
 * spinner runs throughout. */
#define GROUP_FILL 121
static void *short_thread(void *a)
{
	(void)a;
	return NULL;
}

static void *park_forever(void *a)
{
	(void)a;
	__atomic_add_fetch(&S->threads, 1, __ATOMIC_SEQ_CST);
	for (;;)
		usleep(100000);
	return NULL;
}

static void *churn(void *a)
{
	(void)a;
	for (;;) {
		pthread_t t[8];
		int n = 0, after = S->t_death != 0;
		for (; n < 8; n++) {
			if (S->t_death)
				S->made_after++; /* a clone asked for after the death */
			if (pthread_create(&t[n], NULL, short_thread, NULL))
				break;
		}
		if (n < 8)
			S->refused++;
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		if (after)
			S->done_after += n; /* made and ended after it */
		else
			S->done_before += n;
	}
	return NULL;
}

static int body_churn(void *a)
{
	(void)a;
	pthread_t t;
	if (pthread_create(&t, NULL, go_when_leader_zombie, NULL) ||
	    pthread_create(&t, NULL, spinner, NULL) || pthread_create(&t, NULL, victim, NULL))
		return 1;
	for (int i = 0; i < GROUP_FILL; i++)
		if (pthread_create(&t, NULL, park_forever, NULL))
			return 2;
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t, NULL, churn, NULL))
			return 3;
	while (S->threads < GROUP_FILL + 1 || S->done_before < 32)
		usleep(1000);
	pthread_exit(NULL);
}

/* A round whose churners were all inside B calls when the victim died
 * (a loaded machine: 8 clones and joins can take longer than B's 200 ms)
 * asks for no clone during B's look; the rounds run on until one has
 * (5 at most), each held to the bound. */
TEST_F_TIMEOUT(many, death_while_threads_are_made_and_exit_without_pause_ends_p_at_once, 150)
{
	char msg[4096];
	long t_end;
	S = shared_page(4096);
	ASSERT_NE(NULL, S);
	int round = 0;
	do {
		memset((void *)S, 0, 4096);
		int o = run_watched(body_churn, 20, msg, sizeof(msg), &t_end);
		TH_LOG("round %d: threads made and ended before the death %ld; clones asked for "
		       "after it %ld, made and ended %ld (refused %ld)",
		       ++round, S->done_before, S->made_after, S->done_after, S->refused);
		check_killed_within_bound(_metadata, o, msg, t_end, 0);
	} while (S->made_after == 0 && round < 5 && _metadata->passed);
	/* the race ran: clones were asked for while B looked at P's threads
	 * (whether one also ended before P did depends on the load: a CI run
	 * saw 3 asked for and none ended, with P killed in bound) */
	EXPECT_LT(0, S->made_after);
}

/* --------------------------- many threads: B reads /proc/P/task in parts */

/* Over a thousand threads (each U with its T): the list of /proc/P/task
 * takes B more than one getdents, and its second part starts where the
 * first stopped, by position if that thread has gone (the parked threads
 * exit from the death on, so positions move).  The spinner is made last,
 * at the end of the list. */
#define MANY 600
static int park_fd[2];
static void *parked(void *a)
{
	(void)a;
	__atomic_add_fetch(&S->threads, 1, __ATOMIC_SEQ_CST);
	char c;
	/* read is the program's own in both modes: no T is woken meanwhile */
	if (read(park_fd[0], &c, 1) != 1)
		S->refused++;
	return NULL;
}

/* the parked threads go 190 ms after the death: their exits (through B,
 * U then T) are under way when B looks at P, 200 ms after it */
static void *release_parked(void *a)
{
	(void)a;
	struct mailbox *mb;
	while (!(mb = S->victim_mb))
		usleep(1000);
	while (__atomic_load_n(&mb->ctid, __ATOMIC_ACQUIRE))
		;
	usleep(190000);
	static char go[MANY];
	S->stop_self = 1; /* P may be killed before the write returns */
	if (write(park_fd[1], go, sizeof(go)) != (ssize_t)sizeof(go))
		S->refused++;
	return NULL;
}

static int body_many(void *a)
{
	static pthread_t t[MANY];
	pthread_attr_t at;
	if (pipe(park_fd))
		return 2;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	for (int i = 0; i < MANY; i++)
		if (pthread_create(&t[i], &at, parked, NULL))
			return 1;
	while (S->threads < MANY)
		usleep(1000);
	pthread_t r;
	if (pthread_create(&r, NULL, release_parked, NULL))
		return 3;
	return body_zombie_leader_go(a);
}

TEST_F_TIMEOUT(many, death_with_over_a_thousand_threads_exiting_ends_p_at_once, 200)
{
	char msg[4096];
	long t_end;
	S = shared_page(4096);
	ASSERT_NE(NULL, S);
	int o = run_watched(body_many, 180, msg, sizeof(msg), &t_end);
	TH_LOG("parked threads %ld, released %d; P's tasks 185 ms after the death %ld, 200 ms "
	       "after it %ld",
	       S->threads - 1, S->stop_self, S->tasks_at_release, S->tasks_at_look);
	EXPECT_LE(MANY + 1, S->threads);
	EXPECT_EQ(1, S->stop_self);
	EXPECT_EQ(0, S->refused);
	/* just before the exits began, and B's look at /proc/P/task, there
	 * were more names than one getdents of B's takes (1,022) */
	EXPECT_LT(1022, S->tasks_at_release);
	check_killed_within_bound(_metadata, o, msg, t_end, 0);
}

/* ---------------------------- B out of descriptors when it looks at P */

/* B's look at P's threads opens /proc/P/task and each thread's status and
 * stat.  A failure there is no evidence that P is ending: when B has no
 * descriptor left (EMFILE) it must not take P's threads for dying and
 * wait its 5 s.  The program fills B's descriptor table: under a soft
 * RLIMIT_NOFILE of 64 and a hard one of 600, B's limit is the top of
 * sandpit's block (about 600), each slot costs B two pidfds of its
 * threads (where the kernel has them) and each open of a FIFO for writing
 * in a write grant one more while it waits for a reader, which never
 * comes.  Threads open the FIFO until one gets EMFILE from B (B full);
 * that thread then sleeps (its slot and its pidfds stay), and the death
 * follows while the spinner runs. */
static char fifo_path[64];

static void *fifo_waiter(void *a)
{
	(void)a;
	S->waiter_mb = my_mailbox();
	__atomic_add_fetch(&S->made_after, 1, __ATOMIC_SEQ_CST);
	int fd = open(fifo_path, O_WRONLY);
	if (fd < 0 && errno == EMFILE)
		S->stop_self = 1; /* B is full */
	else
		S->refused++; /* not EMFILE: something else went wrong */
	for (;;)
		usleep(100000);
	return NULL;
}

static int body_b_full(void *a)
{
	pthread_t t;
	if (pthread_create(&t, NULL, spinner, NULL) || pthread_create(&t, NULL, victim, NULL))
		return 1;
	while (!S->victim_mb)
		usleep(1000);
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	for (int i = 0; i < 1000 && !S->stop_self && !S->refused; i++) {
		long before = S->made_after;
		if (pthread_create(&t, &at, fifo_waiter, NULL)) {
			S->bad = 100 + errno;
			return 2;
		}
		while (S->made_after == before)
			usleep(100);
		/* its open reached B (T waits for B's verdict), and B its wait
		 * on the FIFO; or B refused it */
		long until = now_ns() + 200000000L;
		while (now_ns() < until && !S->stop_self && !S->refused &&
		       !__atomic_load_n(&S->waiter_mb->t_wait_b, __ATOMIC_ACQUIRE))
			usleep(1000);
		usleep(20000);
	}
	if (!S->stop_self)
		return 3;
	usleep(20000);
	S->leader_z = 1; /* not watched here */
	S->go = 1;
	for (;;) /* asleep: sandpit's exit would need B's look at /proc too */
		usleep(100000);
	(void)a;
}

TEST_F_TIMEOUT(many, death_while_b_has_no_descriptor_left_ends_p_at_once, 200)
{
	if (!suite_has_openat2())
		SKIP(return, "write grants need openat2");
	char dir[] = "/tmp/sandpit-rev11-fifoXXXXXX", msg[4096];
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(fifo_path, sizeof(fifo_path), "%s/f", dir);
	ASSERT_EQ(0, mkfifo(fifo_path, 0600));
	long t_end;
	S = shared_page(4096);
	ASSERT_NE(NULL, S);
	const char *w[] = { dir, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	/* about 150 threads made one after another, each until its open waits
	 * in B: on a loaded machine with B setting thread pointers by ptrace
	 * (no FSGSBASE), 60 s ran out at the 110th */
	int r = run_watched_opts(body_b_full, &o, 64, 600, 150, msg, sizeof(msg), &t_end);
	unlink(fifo_path);
	rmdir(dir);
	TH_LOG("FIFO opens waiting in B %ld, B full (EMFILE) %d, other errors %ld", S->made_after - 1,
	       S->stop_self, S->refused);
	if (r == 2 && S->bad == 100 + EAGAIN && !S->stop_self)
		SKIP(return, "the slots ran out first: B holds pidfds of threads only where the "
			     "kernel has them (6.9), and without them a slot costs B less than "
			     "its share of B's limit");
	/* the attack reached its window: B had no descriptor left */
	EXPECT_EQ(1, S->stop_self);
	EXPECT_EQ(0, S->refused);
	check_killed_within_bound(_metadata, r, msg, t_end, 0);
}

/* -------------------------------------- the program's own end is quiet */

static void *busy(void *a)
{
	(void)a;
	__atomic_add_fetch(&S->threads, 1, __ATOMIC_SEQ_CST);
	while (!S->go)
		usleep(1000);
	for (;;)
		S->spins_after++;
	return NULL;
}

static int body_exit_group(void *a)
{
	(void)a;
	pthread_t t;
	for (int i = 0; i < 32; i++)
		if (pthread_create(&t, NULL, busy, NULL))
			return 1;
	while (S->threads < 32)
		usleep(1000);
	S->go = 1;
	usleep(20000); /* they spin */
	_exit(3); /* exit_group: every U dies without exit, by the kernel's group exit */
}

/* The other side of the wait: P's exit_group while 32 threads hold both
 * CPUs is no alarm; the program's status, and not a word of sandpit's. */
TEST(exit_group_with_busy_threads_is_quiet)
{
	for (int round = 0; round < 5; round++) {
		char msg[4096];
		long t_end;
		S = shared_page(4096);
		ASSERT_NE(NULL, S);
		int o = run_watched(body_exit_group, 20, msg, sizeof(msg), &t_end);
		EXPECT_EQ(32, S->threads);
		EXPECT_EQ(3, o) TH_LOG("round %d: %s", round, msg);
		EXPECT_EQ(NULL, strstr(msg, "sandpit:")) TH_LOG("round %d: %s", round, msg);
		munmap((void *)S, 4096);
	}
}

/* ------------------- a death made at the moment of the program's own end */

static void *exit_group_after_death(void *a)
{
	(void)a;
	struct mailbox *mb;
	while (!(mb = S->victim_mb))
		;
	while (__atomic_load_n(&mb->ctid, __ATOMIC_ACQUIRE))
		;
	S->stop_self = 1;
	_exit(0);
}

static int body_hide(void *a)
{
	(void)a;
	pthread_t t;
	if (pthread_create(&t, NULL, exit_group_after_death, NULL) ||
	    pthread_create(&t, NULL, victim, NULL))
		return 1;
	S->go = 1;
	pthread_join(t, NULL);
	return 9;
}

/* A U killed for a forbidden call (strict mode) or ended by a raw exit,
 * and the program's exit_group(0) the moment the kernel clears its word:
 * P ends either way, within the bound, and never runs on; B's line and
 * SIGKILL, or P's own status 0 without a line when the exit_group came
 * first (B cannot tell the two deaths apart: by design, "P ended by
 * itself").  How often the death went unsaid is counted; with
 * SANDPIT_REV11_KNOWN=1 the test asks that it never does. */
TEST(death_at_the_programs_own_exit_group_ends_p_said_or_not)
{
	int hidden = 0, said = 0, rounds = 10;
	for (int round = 0; round < rounds; round++) {
		char msg[4096];
		long t_end;
		S = shared_page(4096);
		ASSERT_NE(NULL, S);
		S->leader_z = 1; /* not watched */
		int o = run_watched(body_hide, 20, msg, sizeof(msg), &t_end);
		long ms = (t_end - S->t_death) / 1000000;
		EXPECT_EQ(1, S->stop_self) TH_LOG("round %d: %s", round, msg);
		EXPECT_EQ(0, S->bad);
		EXPECT_GT(KILL_BOUND_MS * suite_timeout_scale(), ms);
		if (o == 0 && !strstr(msg, "sandpit:"))
			hidden++;
		else if (o == KILLED(SIGKILL) && said_ended(msg))
			said++;
		else
			EXPECT_TRUE(0) TH_LOG("round %d: outcome %d, %s", round, o, msg);
		munmap((void *)S, 4096);
	}
	TH_LOG("%d rounds: the death said and P killed %d, P's own exit_group(0) and no line %d",
	       rounds, said, hidden);
	EXPECT_EQ(rounds, hidden + said);
	const char *k = getenv("SANDPIT_REV11_KNOWN");
	if (k && !strcmp(k, "1"))
		EXPECT_EQ(0, hidden);
}

TEST_HARNESS_MAIN
