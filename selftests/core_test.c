/* Attacks on the trusted core (invariant 8, with 1, 2 and 5): a second
 * thread keeps rewriting the words of sandpit's that U can write (the
 * mailbox) while a first makes calls.  Nothing T or B decides, waits on or
 * executes may come from there, except one copy of a request that is then
 * checked in full.  Each test counts the rewrites that landed, so that a
 * pass means the race was run, not missed. */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "u_state.h"

/* Runs fn sandboxed with its stderr (and B's) in a file: the outcome, and
 * what sandpit said in msg. */
static int run_capture(int (*fn)(void *), void *arg, const struct sandpit_options *o, int timeout_s,
		       char *msg, size_t len)
{
	char tmpl[] = "/tmp/sandpit-core-errXXXXXX";
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
		if (sandpit_start(o) < 0)
			_exit(SANDBOX_START_FAILED);
		_exit(fn(arg));
	}
	int st = 0, done = 0;
	for (int i = 0; i < timeout_s * suite_timeout_scale() * 100 && !done; i++) {
		done = waitpid(p, &st, WNOHANG) == p;
		if (!done)
			usleep(10000);
	}
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

/* counters shared with the test body outside the sandbox */
struct race {
	volatile long writes, landed, calls, bad, done, phase;
	volatile int victim_slot;
	volatile long snapshots, torn; /* the secure page as a reader sees it */
	volatile int pause, paused;
	volatile int stopped; /* the rewriter has left its loop */
};
static struct race *R;
static struct mailbox *volatile victim_mb;

/* ------------------------------------------------ forged THREAD_EXIT */

static void *forge_exit(void *a)
{
	(void)a;
	while (!victim_mb)
		;
	struct mailbox *mb = victim_mb;
	const struct secure_page *sp = state_of(mb)->sp;
	while (!R->done) {
		mb->nr = SANDPIT_NR_THREAD_EXIT;
		mb->payload.nr = SANDPIT_NR_THREAD_EXIT;
		R->writes++;
		/* T sent it on to B, and waits for B (the victim's own calls
		 * are T's alone, so this is the exit) */
		if (__atomic_load_n(&mb->t_wait_b, __ATOMIC_ACQUIRE))
			R->phase = 1;
		if (__atomic_load_n(&sp->exiting, __ATOMIC_ACQUIRE)) {
			R->landed++; /* B accepted it: the slot is exiting */
			break;
		}
	}
	return NULL;
}

/* a call that goes through T in either mode (T's range rule) */
static char t_page[4096] __attribute__((aligned(4096)));
static int call_via_t(void)
{
	return mprotect(t_page, sizeof(t_page), PROT_READ | PROT_WRITE);
}

static void *calls_then_missed_call(void *a)
{
	(void)a;
	victim_mb = my_mailbox();
	for (int i = 0; i < 200000 && !R->landed; i++) {
		call_via_t();
		R->calls++;
	}
	/* strict mode: the kernel kills this thread; filter mode: the net */
	missed_fn f = missed_code(SYS_socket);
	if (f)
		f(AF_INET, SOCK_STREAM, 0);
	R->done = 1;
	return NULL;
}

static int body_forged_exit(void *a)
{
	(void)a;
	pthread_t f, v;
	if (pthread_create(&f, NULL, forge_exit, NULL) || pthread_create(&v, NULL, calls_then_missed_call, NULL))
		return 1;
	pthread_join(v, NULL);
	return 7; /* went on: only right if the forgery never landed, in filter mode */
}

/* A request rewritten into an exit is U's request: T takes it to B and
 * serves nothing more.  B accepts an exit only from a thread that waits
 * where it can only end by exit, which this one (waiting for its call's
 * result) never does: P dies.  A forged exit never lets a thread die
 * unnoticed (invariant 5) nor run on without its T. */
TEST(inv8_forged_thread_exit_leaves_no_thread_running_unserved)
{
	char msg[4096];
	R = shared_page(4096);
	ASSERT_NE(NULL, R);
	int o = run_capture(body_forged_exit, NULL, NULL, 20, msg, sizeof(msg));
	TH_LOG("writes %ld, T waited for B %ld, accepted %ld, calls %ld; %s", R->writes, R->phase,
	       R->landed, R->calls, msg);
	EXPECT_LT(0, R->writes);
	/* the forged exit reached B: its line below says so (the forger sees
	 * T waiting for B only when it runs beside T, on another CPU) */
	EXPECT_EQ(0, R->landed);
	EXPECT_EQ(KILLED(SIGKILL), o);
	EXPECT_TRUE(strstr(msg, "a thread that asked to exit did not end") != NULL);
}

/* -------------------------- an exit posted into another thread's mailbox */

/* the victim: calls through T (so T is awake), then program code alone
 * while another thread posts an exit request for it, then a call the
 * patcher missed */
static void *idle_then_missed_call(void *a)
{
	(void)a;
	missed_fn f = missed_code(SYS_socket);
	if (!f)
		return NULL;
	/* its page patched now (the first fetch of new code faults and the
	 * patcher asks T): the ret at 9 is all that runs */
	((void (*)(void))((uint8_t *)f + 9))();
	victim_mb = my_mailbox();
	do {
		call_via_t();
		R->calls++;
	} while (!R->phase);
	R->paused = 1;
	while (R->phase < 2)
		;
	/* strict mode: the kernel kills this thread; filter mode: the
	 * filter refuses it */
	long r = f(AF_INET, SOCK_STREAM, 0);
	R->bad = r;
	R->stopped = 1;
	return NULL;
}

static int body_posted_exit(void *a)
{
	(void)a;
	pthread_t v;
	static const uint64_t one = 1;
	if (pthread_create(&v, NULL, idle_then_missed_call, NULL))
		return 1;
	while (!victim_mb)
		;
	struct mailbox *mb = victim_mb;
	R->phase = 1;
	while (!R->paused)
		;
	/* a request as U's entry posts one: the call, its sequence number,
	 * and a wake-up for T on its eventfd (T may sleep by now) */
	mb->nr = SANDPIT_NR_THREAD_EXIT;
	for (int i = 0; i < 6; i++)
		mb->args[i] = 0;
	__atomic_add_fetch(&mb->req_seq, 1, __ATOMIC_SEQ_CST);
	R->writes = write(state_of(mb)->t_fd, &one, sizeof(one));
	/* T took it to B: it waits for B's verdict (or B accepted it); in
	 * filter mode B's verdict may come at once, so the wait is looked
	 * for without sleeping, and B's line proves it there too.  T shows
	 * its wait only after its yields to B (asm/x86_64/trusted_thread.S,
	 * B_YIELDS), which on a loaded machine can outlast B's own 2 s for
	 * the thread to exit: in strict mode the victim is held up to 10 s
	 * for it, and B's line, which it says only for an exit request T
	 * brought it, is the proof when B ends P first.  In filter mode the
	 * victim makes its call after 1 s, well before B gives up on it
	 * (2 s from the bell) */
	const struct secure_page *sp = state_of(mb)->sp;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		R->landed |= (int)__atomic_load_n(&mb->t_wait_b, __ATOMIC_ACQUIRE);
		if (R->landed || __atomic_load_n(&sp->exiting, __ATOMIC_ACQUIRE))
			break;
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 <
		 (suite_mode() == SANDPIT_MODE_STRICT ? 10000 : 1000));
	R->victim_slot = (int)__atomic_load_n(&sp->exiting, __ATOMIC_ACQUIRE);
	R->phase = 2;
	pthread_join(v, NULL);
	return 7; /* P lives on after its thread's end */
}

/* Any thread can post an exit request into another's mailbox; T takes it
 * to B, which accepts an exit only from a thread the kernel shows waiting
 * where nothing but exit can follow.  The victim never does: strict mode,
 * the kernel kills it for the call the patcher missed, and P dies as for
 * any U the kernel kills (invariant 5); filter mode, the filter refuses
 * that call itself (socket(AF_INET) is the policy's deny), and B ends P
 * when the thread does not come to its exit. */
TEST(inv5_exit_posted_for_another_thread_never_hides_its_death)
{
	char msg[4096];
	R = shared_page(4096);
	ASSERT_NE(NULL, R);
	int o = run_capture(body_posted_exit, NULL, NULL, 20, msg, sizeof(msg));
	TH_LOG("calls %ld; posted %ld, T waited for B %ld, accepted %d; the missed call returned %d "
	       "(%ld); outcome %d; %s",
	       R->calls, R->writes, R->landed, R->victim_slot, R->stopped, R->bad, o, msg);
	/* the attack ran: T was awake, the request posted and taken to B
	 * (T seen waiting for B; in filter mode B's line below says so too) */
	EXPECT_LT(0, R->calls);
	EXPECT_EQ(8, R->writes);
	const char *did_not_end = "sandpit: a thread that asked to exit did not end (slot 1); "
				  "killing the process\n";
	/* B never accepted it, and P died of the thread that went on */
	EXPECT_EQ(0, R->victim_slot);
	EXPECT_EQ(KILLED(SIGKILL), o);
	if (suite_mode() == SANDPIT_MODE_STRICT) {
		/* the kernel killed the thread at its call (or, T's wait not
		 * seen, B ended P first, for the thread held before its call) */
		EXPECT_EQ(0, R->stopped);
		int killed = strstr(msg, "sandpit: a sandboxed thread ended without exit (killed by the "
					 "kernel for a system call that escaped the sandbox?) (slot 1); "
					 "killing the process\n") != NULL;
		EXPECT_TRUE(R->landed ? killed || strstr(msg, did_not_end) : !!strstr(msg, did_not_end));
	} else {
		/* the filter refused the call (the policy's deny), and B ended P
		 * for the thread that did not come to its exit */
		EXPECT_EQ(1, R->stopped);
		EXPECT_EQ(-EAFNOSUPPORT, R->bad);
		EXPECT_TRUE(strstr(msg, did_not_end) != NULL);
	}
}

/* ------------------------------------------------- forged ctid words */

static void *forge_ctid(void *a)
{
	(void)a;
	while (!victim_mb)
		;
	struct mailbox *mb = victim_mb;
	while (!R->done) {
		if (__atomic_exchange_n(&mb->ctid, 0, __ATOMIC_SEQ_CST))
			R->landed++;
		if (__atomic_exchange_n(&mb->t_ctid, 0, __ATOMIC_SEQ_CST))
			R->landed++;
		R->writes++;
	}
	return NULL;
}

static void *calls_until_told(void *a)
{
	(void)a;
	struct mailbox *mb = my_mailbox();
	R->victim_slot = state_of(mb)->slot;
	victim_mb = mb;
	while (R->phase < 2) {
		if (call_via_t() != 0)
			R->bad++; /* its T must go on serving it */
		R->calls++;
	}
	missed_fn f = missed_code(SYS_socket);
	long r = f ? f(AF_INET, SOCK_STREAM, 0) : 0;
	if (r != -EAFNOSUPPORT)
		R->bad++;
	return NULL;
}

static void *report_slot(void *a)
{
	*(int *)a = state_of(my_mailbox())->slot;
	return NULL;
}

static int body_forged_ctid(void *a)
{
	(void)a;
	pthread_t f, v;
	if (pthread_create(&v, NULL, calls_until_told, NULL))
		return 1;
	while (!victim_mb)
		;
	if (pthread_create(&f, NULL, forge_ctid, NULL))
		return 1;
	while (R->landed < 2)
		sched_yield();
	usleep(300000); /* B's watcher has looked at the words meanwhile */
	/* new threads never get the slot of a thread that lives */
	for (int i = 0; i < 40; i++) {
		pthread_t t;
		int slot = -1;
		if (pthread_create(&t, NULL, report_slot, &slot))
			return 2;
		pthread_join(t, NULL);
		if (slot == R->victim_slot || slot < 0)
			R->bad++;
	}
	R->phase = 2; /* strict mode: the kernel kills the victim, B must see it */
	pthread_join(v, NULL);
	R->done = 1;
	pthread_join(f, NULL);
	return R->bad ? 3 : 0;
}

/* U writes 0 into its clear-child-tid words: the slot is not freed, not
 * handed out again, and the thread's real death is still noticed. */
TEST(inv8_forged_clear_child_tid_words_neither_free_the_slot_nor_hide_a_death)
{
	char msg[4096];
	R = shared_page(4096);
	ASSERT_NE(NULL, R);
	int o = run_capture(body_forged_ctid, NULL, NULL, 30, msg, sizeof(msg));
	TH_LOG("writes %ld, landed %ld, calls %ld, bad %ld; %s", R->writes, R->landed, R->calls, R->bad,
	       msg);
	EXPECT_LT(0, R->landed);
	EXPECT_LT(0, R->calls);
	EXPECT_EQ(0, R->bad);
	if (suite_mode() == SANDPIT_MODE_STRICT) {
		EXPECT_EQ(KILLED(SIGKILL), o);
		EXPECT_TRUE(strstr(msg, "ended without exit") != NULL);
	} else {
		EXPECT_EQ(0, o);
	}
}

/* ------------------------------------------------------ the spin hints */

/* U's CPU and its "busy" word (MB_U_CPU, MB_U_BUSY) only tell T whether to
 * spin for U's next request or sleep until U wakes it: rewritten all the
 * time, they may cost U wake-ups, never an answer. */
#define HINT_CALLS 500
static void *forge_hints(void *a)
{
	(void)a;
	while (!victim_mb)
		;
	struct mailbox *mb = victim_mb;
	for (uint32_t i = 0; !R->done; i++) {
		__atomic_store_n(&mb->u_busy, i & 1, __ATOMIC_RELAXED);
		__atomic_store_n(&mb->u_cpu, i & 2 ? ~0u : __atomic_load_n(&mb->t_cpu, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
		R->writes++;
		/* T asleep while the hints say so: the forgery reached it */
		if (__atomic_load_n(&mb->t_sleep, __ATOMIC_RELAXED) && (i & 1))
			R->landed++;
	}
	return NULL;
}

static void *calls_counted(void *a)
{
	(void)a;
	victim_mb = my_mailbox();
	while (R->writes < 1000)
		;
	for (int i = 0; i < HINT_CALLS; i++) {
		if (call_via_t() != 0)
			R->bad++;
		R->calls++;
	}
	R->done = 1;
	return NULL;
}

static int body_forged_hints(void *a)
{
	(void)a;
	pthread_t f, v;
	if (pthread_create(&v, NULL, calls_counted, NULL) ||
	    pthread_create(&f, NULL, forge_hints, NULL))
		return 1;
	pthread_join(v, NULL);
	pthread_join(f, NULL);
	return R->bad ? 3 : 0;
}

TEST(inv8_forged_spin_hints_cost_wake_ups_never_an_answer)
{
	char msg[4096];
	R = shared_page(4096);
	ASSERT_NE(NULL, R);
	int o = run_capture(body_forged_hints, NULL, NULL, 60, msg, sizeof(msg));
	TH_LOG("writes %ld, landed %ld, calls %ld, bad %ld; %s", R->writes, R->landed, R->calls,
	       R->bad, msg);
	EXPECT_EQ(0, o);
	EXPECT_LT(0, R->writes);
	EXPECT_LT(0, R->landed);
	EXPECT_EQ(HINT_CALLS, R->calls);
	EXPECT_EQ(0, R->bad);
}

/* T's CPU (MB_T_CPU) tells a slot's server in B which CPU to run on, so
 * that B is not woken onto U's.  Rewritten all the time, to each of the
 * process's CPUs in turn and to numbers that are none of them, it moves B's
 * server among B's own CPUs only, and every call is answered. */
#define FOLLOW_CALLS 300
struct follow {
	cpu_set_t cpus;          /* the process's, as B started with them */
	unsigned target[2];      /* the CPU forged in each phase */
	unsigned none[3];        /* numbers that are not among them */
	ino_t ino;               /* /usr's, seen from outside */
	volatile int phase, done;
	volatile long writes, hits[2], calls[2], outside, bad;
};

static void *forge_t_cpu(void *a)
{
	struct follow *f = a;
	while (!victim_mb)
		;
	struct mailbox *mb = victim_mb;
	for (uint32_t i = 0; !f->done; i++) {
		unsigned v = i % 4 == 3 ? f->none[(i / 4) % 3] : f->target[f->phase];
		__atomic_store_n(&mb->t_cpu, v, __ATOMIC_RELAXED);
		f->writes++;
	}
	return NULL;
}

static int body_forged_t_cpu(void *a)
{
	struct follow *f = a;
	pthread_t w;
	victim_mb = my_mailbox();
	const volatile struct secure_page *sp = state_of(victim_mb)->sp;
	if (pthread_create(&w, NULL, forge_t_cpu, f))
		return 1;
	while (f->writes < 1000)
		;
	/* FOLLOW_CALLS a phase, and on until the rewrite has landed (for 20 s
	 * at most): on a loaded machine the rewriter may not run for a while */
	for (int ph = 0; ph < 2; ph++) {
		f->phase = ph;
		time_t until = time(NULL) + 20;
		for (int i = 0; i < FOLLOW_CALLS || (!f->hits[ph] && time(NULL) < until); i++) {
			struct stat sb;
			if (stat("/usr", &sb) != 0 || sb.st_ino != f->ino)
				f->bad++;
			f->calls[ph]++;
			/* the CPU B's server took this request on */
			unsigned cpu = __atomic_load_n(&sp->b_cpu, __ATOMIC_RELAXED);
			if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &f->cpus))
				f->outside++;
			else if (cpu == f->target[ph])
				f->hits[ph]++;
		}
	}
	f->done = 1;
	pthread_join(w, NULL);
	return f->bad || f->outside ? 3 : 0;
}

TEST(inv8_forged_t_cpu_moves_b_only_among_its_own_cpus)
{
	struct follow *f = shared_page(sizeof(*f));
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(f->cpus), &f->cpus));
	int n = 0;
	unsigned first = 0, last = 0;
	for (unsigned c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &f->cpus)) {
			if (!n++)
				first = c;
			last = c;
		}
	f->target[0] = last;
	f->target[1] = first;
	unsigned missing = 0;
	while (missing < CPU_SETSIZE && CPU_ISSET(missing, &f->cpus))
		missing++;
	f->none[0] = ~0u;
	f->none[1] = CPU_SETSIZE + 3;
	f->none[2] = missing < CPU_SETSIZE ? missing : ~0u;
	struct stat sb;
	ASSERT_EQ(0, stat("/usr", &sb));
	f->ino = sb.st_ino;
	char msg[4096];
	int o = run_capture(body_forged_t_cpu, f, &(struct sandpit_options){ .mode = suite_mode() }, 60,
			    msg, sizeof(msg));
	TH_LOG("%d CPUs; rewrites %ld; B on the forged CPU %ld of %ld, then %ld of %ld; outside %ld, "
	       "bad %ld; %s",
	       n, f->writes, f->hits[0], f->calls[0], f->hits[1], f->calls[1], f->outside, f->bad, msg);
	EXPECT_EQ(0, o);
	EXPECT_LT(1000, f->writes);
	EXPECT_LE(FOLLOW_CALLS, f->calls[0]);
	EXPECT_LE(FOLLOW_CALLS, f->calls[1]);
	EXPECT_EQ(0, f->bad);
	EXPECT_EQ(0, f->outside);
	/* B went where the forgery said, in both phases: the hint reached it
	 * (on one CPU both phases name that CPU, and B never moves) */
	EXPECT_LT(0, f->hits[0]);
	EXPECT_LT(0, f->hits[1]);
}

/* U's CPU (MB_U_CPU) tells T it shares U's CPU, and in strict mode T then
 * leaves it with a mask from the sealed secure memory.  Rewritten all the
 * time to say so, it moves T among the process's CPUs only; the program
 * still sees its own CPUs (sched_getaffinity of itself, which T makes in
 * strict mode), a thread it creates gets all of them, and every call is
 * answered.  In filter mode T never moves. */
#define MOVE_CALLS 500
struct moves {
	cpu_set_t cpus;    /* the process's */
	int ncpus, moves; /* moves: T may move (strict mode, two CPUs or more) */
	volatile int done;
	volatile long writes, calls, moved, outside, bad, thread_bad;
};

static void *forge_u_cpu(void *a)
{
	struct moves *m = a;
	while (!victim_mb)
		;
	struct mailbox *mb = victim_mb;
	while (!m->done) {
		__atomic_store_n(&mb->u_cpu, __atomic_load_n(&mb->t_cpu, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
		m->writes++;
	}
	return NULL;
}

static void *own_cpus(void *a)
{
	struct moves *m = a;
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0 || !CPU_EQUAL(&set, &m->cpus))
		m->thread_bad++;
	return NULL;
}

static int body_forged_u_cpu(void *a)
{
	struct moves *m = a;
	pthread_t w, t;
	victim_mb = my_mailbox();
	/* T's tid, as the kernel writes it when T first runs */
	pid_t ttid;
	while ((ttid = (pid_t)__atomic_load_n(&victim_mb->t_ctid, __ATOMIC_RELAXED)) == -1)
		sched_yield();
	if (pthread_create(&w, NULL, forge_u_cpu, m))
		return 1;
	while (m->writes < 1000)
		;
	/* MOVE_CALLS, and on until T has moved (for 20 s at most): the
	 * rewrite must land between T's note of its CPU and its check */
	time_t until = time(NULL) + 20;
	for (int i = 0; i < MOVE_CALLS || (!m->moved && m->moves && time(NULL) < until); i++) {
		cpu_set_t set, both;
		if (call_via_t() != 0)
			m->bad++;
		m->calls++;
		/* T's CPUs, as the kernel has them */
		if (sched_getaffinity(ttid, sizeof(set), &set) != 0) {
			m->bad++;
			continue;
		}
		CPU_AND(&both, &set, &m->cpus);
		if (!CPU_EQUAL(&both, &set) || !CPU_COUNT(&set))
			m->outside++;
		else if (!CPU_EQUAL(&set, &m->cpus))
			m->moved++;
		/* the program's own, whatever T's are */
		if (sched_getaffinity(0, sizeof(set), &set) != 0 || !CPU_EQUAL(&set, &m->cpus))
			m->bad++;
	}
	/* a thread made once T has moved gets the process's CPUs */
	if (pthread_create(&t, NULL, own_cpus, m) || pthread_join(t, NULL))
		m->thread_bad++;
	m->done = 1;
	pthread_join(w, NULL);
	return m->bad || m->outside || m->thread_bad ? 3 : 0;
}

TEST(inv8_forged_u_cpu_moves_t_only_among_the_process_cpus)
{
	struct moves *m = shared_page(sizeof(*m));
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(m->cpus), &m->cpus));
	m->ncpus = CPU_COUNT(&m->cpus);
	m->moves = suite_mode() == SANDPIT_MODE_STRICT && m->ncpus > 1;
	char msg[4096];
	int o = run_capture(body_forged_u_cpu, m, &(struct sandpit_options){ .mode = suite_mode() }, 60,
			    msg, sizeof(msg));
	TH_LOG("%d CPUs; rewrites %ld; calls %ld, after which T had left a CPU %ld; outside %ld, "
	       "bad %ld, thread %ld; %s",
	       m->ncpus, m->writes, m->calls, m->moved, m->outside, m->bad, m->thread_bad, msg);
	EXPECT_EQ(0, o);
	EXPECT_LT(1000, m->writes);
	EXPECT_LE(MOVE_CALLS, m->calls);
	EXPECT_EQ(0, m->bad);
	EXPECT_EQ(0, m->outside);
	EXPECT_EQ(0, m->thread_bad);
	/* the forgery reached T: it left the CPU it was told U was on (on one
	 * CPU there is nowhere to go, and in filter mode T stays) */
	if (m->moves) {
		EXPECT_LT(0, m->moved);
	} else {
		EXPECT_EQ(0, m->moved);
	}
}

/* ------------------------------------- a request rewritten during B's check */

#define DEPTH 40
#define HOPS 15 /* /proc/self and root are two links each; the kernel follows 40 */
struct slow {
	char dir[64], in_grant[80], slow_path[4096], evil[128];
};

static void *rewrite_request(void *a)
{
	struct slow *sl = a;
	while (!victim_mb)
		;
	struct mailbox *mb = victim_mb;
	uint64_t args[6] = { (uint64_t)AT_FDCWD, (uint64_t)(uintptr_t)sl->evil, O_WRONLY | O_CREAT, 0644 };
	while (!R->done) {
		mb->payload.nr = SYS_openat;
		memcpy(mb->payload.args, args, sizeof(args));
		mb->nr = SYS_openat;
		memcpy(mb->args, args, sizeof(args));
		R->writes++;
	}
	R->stopped = 1;
	return NULL;
}

/* S is published complete: a reader that sees the same even sequence
 * number before and after reading the verdict must always read the same
 * verdict for that number (B once wrote the raw request into S under the
 * old number, and left it there while it resolved a path). */
static void *watch_secure_page(void *a)
{
	(void)a;
	while (!victim_mb)
		;
	const volatile struct secure_page *sp = state_of(victim_mb)->sp;
	uint64_t seen_seq = ~0ull, seen[8];
	while (!R->done) {
		uint64_t s1 = __atomic_load_n(&sp->seq, __ATOMIC_ACQUIRE), v[8];
		v[0] = (uint64_t)sp->verdict;
		v[1] = sp->nr;
		for (int i = 0; i < 6; i++)
			v[2 + i] = sp->args[i];
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (s1 & 1 || __atomic_load_n(&sp->seq, __ATOMIC_ACQUIRE) != s1)
			continue;
		if (s1 != seen_seq) {
			seen_seq = s1;
			memcpy(seen, v, sizeof(seen));
			R->snapshots++;
		} else if (memcmp(seen, v, sizeof(seen))) {
			R->torn++;
			memcpy(seen, v, sizeof(seen));
		}
	}
	return NULL;
}

static int body_slow_check(void *a)
{
	struct slow *sl = a;
	pthread_t w, o;
	victim_mb = my_mailbox();
	/* the watcher first: once the rewriting starts, this thread's own
	 * requests are rewritten too */
	if (pthread_create(&o, NULL, watch_secure_page, NULL) || pthread_create(&w, NULL, rewrite_request, sl))
		return 1;
	/* 200 calls, and on until a rewrite has landed (for 20 s at most): on
	 * one CPU the rewriter can go a whole round without being scheduled */
	time_t until = time(NULL) + 20;
	for (int i = 0; i < 200 || (!R->landed && time(NULL) < until); i++) {
		int fd = open(sl->slow_path, O_RDONLY);
		if (fd >= 0) {
			close(fd);
			R->calls++;
		} else if (errno == EACCES) {
			R->landed++; /* B checked the rewritten request, and refused it */
		} else {
			R->bad++;
		}
	}
	R->done = 1;
	/* no call before the rewriter's last write has landed: it would be
	 * the rewritten openat (glibc aborts a futex wait that says EACCES) */
	while (!R->stopped)
		;
	pthread_join(w, NULL);
	pthread_join(o, NULL);
	return 0;
}

/* The observed attack: B took ~10 ms over a path while the request in the
 * mailbox was rewritten into a create outside every grant.  B checks its
 * one copy in full and publishes S complete: EACCES, and no file. */
TEST(inv2_request_rewritten_during_a_slow_check_never_creates_outside_grants)
{
	struct slow *sl = shared_page(sizeof(*sl));
	R = shared_page(4096);
	ASSERT_NE(NULL, sl);
	ASSERT_NE(NULL, R);
	snprintf(sl->dir, sizeof(sl->dir), "/tmp/sandpit-core-%d", getpid());
	snprintf(sl->in_grant, sizeof(sl->in_grant), "%s/in", sl->dir);
	snprintf(sl->evil, sizeof(sl->evil), "%s/out/evil", sl->dir);
	char p[1024];
	ASSERT_EQ(0, mkdir(sl->dir, 0755));
	snprintf(p, sizeof(p), "%s/out", sl->dir);
	ASSERT_EQ(0, mkdir(p, 0755));
	snprintf(p, sizeof(p), "%s", sl->in_grant);
	ASSERT_EQ(0, mkdir(p, 0755));
	for (int i = 0; i < DEPTH; i++) {
		strcat(p, "/d");
		ASSERT_EQ(0, mkdir(p, 0755));
	}
	strcat(p, "/f");
	int fd = open(p, O_CREAT | O_WRONLY, 0644);
	ASSERT_LE(0, fd);
	close(fd);
	char *s = sl->slow_path;
	for (int i = 0; i < HOPS; i++)
		s += sprintf(s, "/proc/self/root");
	strcpy(s, p);

	const char *reads[] = { sl->in_grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = reads };
	char msg[4096];
	int r = run_capture(body_slow_check, sl, &o, 60, msg, sizeof(msg));
	TH_LOG("outcome %d, writes %ld, refused %ld, opened %ld, other %ld, verdicts seen %ld, "
	       "changed under one number %ld; %s",
	       r, R->writes, R->landed, R->calls, R->bad, R->snapshots, R->torn, msg);
	EXPECT_EQ(0, r);
	EXPECT_LT(1, R->snapshots);
	EXPECT_EQ(0, R->torn);
	EXPECT_LT(0, R->writes);
	EXPECT_LT(0, R->landed);
	EXPECT_EQ(-1, access(sl->evil, F_OK));
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", sl->dir);
	EXPECT_EQ(0, system(cmd));
}

/* ------------------------------- the path copy sent with a request, rewritten */

struct carried {
	char dir[64], in_path[96], out_path[96];
	ino_t out_ino;
};

/* U's entry copies a path B checks into the mailbox (MB_PATH); another
 * thread keeps replacing that copy with a path outside every grant, for
 * the victim's own pointer, so that B takes it for the victim's argument */
static void *rewrite_path_copy(void *a)
{
	struct carried *c = a;
	while (!victim_mb)
		;
	struct mailbox *mb = victim_mb;
	size_t len = strlen(c->out_path);
	while (!R->done) {
		memcpy(mb->path.bytes, c->out_path, len + 1);
		mb->path.len = (uint32_t)len;
		mb->path.addr = (uint64_t)(uintptr_t)c->in_path;
		R->writes++;
	}
	return NULL;
}

static int body_path_copy(void *a)
{
	struct carried *c = a;
	pthread_t w;
	victim_mb = my_mailbox();
	if (pthread_create(&w, NULL, rewrite_path_copy, c))
		return 1;
	time_t until = time(NULL) + 20;
	for (int i = 0; i < 400 || (!R->landed && time(NULL) < until); i++) {
		char buf[16] = { 0 };
		struct stat sb;
		int fd = open(c->in_path, O_RDONLY);
		if (fd >= 0) {
			if (read(fd, buf, sizeof(buf) - 1) < 0 || strcmp(buf, "inside"))
				R->bad++; /* the file outside: B checked one path, T opened another */
			else
				R->calls++;
			close(fd);
		} else if (errno == EACCES) {
			R->landed++; /* B checked the rewritten copy in full, and refused it */
		} else {
			R->bad++;
		}
		if (stat(c->in_path, &sb) == 0) {
			if (sb.st_ino == c->out_ino)
				R->bad++;
			else
				R->calls++;
		} else if (errno == EACCES) {
			R->landed++;
		} else {
			R->bad++;
		}
	}
	R->done = 1;
	pthread_join(w, NULL);
	return 0;
}

/* The copy is U's request: B copies it once and checks that copy, so a
 * rewrite is either refused (EACCES) or too late for this call; the file
 * outside the grant is never opened or stat'ed. */
TEST(inv2_path_copy_rewritten_in_the_mailbox_never_reaches_a_file_outside_grants)
{
	struct carried *c = shared_page(sizeof(*c));
	R = shared_page(4096);
	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, R);
	snprintf(c->dir, sizeof(c->dir), "/tmp/sandpit-core-copy-%d", getpid());
	snprintf(c->in_path, sizeof(c->in_path), "%s/in0/f", c->dir);
	snprintf(c->out_path, sizeof(c->out_path), "%s/out/f", c->dir);
	char p[128];
	ASSERT_EQ(0, mkdir(c->dir, 0755));
	snprintf(p, sizeof(p), "%s/in0", c->dir);
	ASSERT_EQ(0, mkdir(p, 0755));
	snprintf(p, sizeof(p), "%s/out", c->dir);
	ASSERT_EQ(0, mkdir(p, 0755));
	const char *files[2][2] = { { c->in_path, "inside" }, { c->out_path, "secret" } };
	for (int i = 0; i < 2; i++) {
		int fd = open(files[i][0], O_CREAT | O_WRONLY, 0644);
		ASSERT_LE(0, fd);
		ASSERT_EQ(6, write(fd, files[i][1], 6));
		close(fd);
	}
	struct stat sb;
	ASSERT_EQ(0, stat(c->out_path, &sb));
	c->out_ino = sb.st_ino;

	snprintf(p, sizeof(p), "%s/in0", c->dir);
	const char *reads[] = { p, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = reads };
	char msg[4096];
	int r = run_capture(body_path_copy, c, &o, 60, msg, sizeof(msg));
	TH_LOG("outcome %d, rewrites %ld, refused %ld, inside %ld, outside or other %ld; %s", r,
	       R->writes, R->landed, R->calls, R->bad, msg);
	EXPECT_EQ(0, r);
	EXPECT_LT(0, R->writes);
	EXPECT_LT(0, R->landed);
	EXPECT_EQ(0, R->bad);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", c->dir);
	EXPECT_EQ(0, system(cmd));
}

/* ------------------------------------ SIGSEGV's default action, rewritten */

static void evil_handler(int sig)
{
	(void)sig;
}

static int segv_caught_by_kernel(void)
{
	unsigned long long m;
	if (proc_status_hex("/proc/self/status", "SigCgt:", &m) < 0)
		return -1;
	return (m >> (SIGSEGV - 1)) & 1;
}

static void *rewrite_sigaction(void *a)
{
	(void)a;
	while (!victim_mb)
		;
	struct k_sigaction evil = { (uint64_t)(uintptr_t)evil_handler, SANDPIT_SA_RESTORER,
				    (uint64_t)(uintptr_t)evil_handler, 0 };
	/* where T used to build it */
	volatile uint64_t *where = (volatile uint64_t *)((uint8_t *)victim_mb + MB_PAYLOAD);
	while (!R->done) {
		if (R->pause) {
			R->paused = 1;
			continue;
		}
		R->paused = 0;
		where[0] = evil.handler;
		where[1] = evil.flags;
		where[2] = evil.restorer;
		where[3] = evil.mask;
		R->writes++;
	}
	/* never ends: see body_segv_dfl */
	for (;;)
		pause();
	return NULL;
}

static int body_segv_dfl(void *a)
{
	(void)a;
	static const long segv[6] = { SIGSEGV };
	pthread_t w;
	victim_mb = my_mailbox();
	if (pthread_create(&w, NULL, rewrite_sigaction, NULL))
		return 1;
	while (!R->writes)
		sched_yield();
	for (int i = 0; i < 1000; i++) {
		u_call_trusted(SANDPIT_NR_SIG_DFL, segv);
		R->calls++;
		/* the check's own open goes through the payload: not while it is
		 * being rewritten */
		R->pause = 1;
		while (!R->paused)
			;
		if (segv_caught_by_kernel() == 1)
			R->bad++; /* the kernel has a handler for SIGSEGV: not the default */
		R->paused = 0;
		R->pause = 0;
	}
	/* Not joined, and the writer never ends: SIGSEGV is at the kernel's
	 * default now, a state sandpit reaches only as P is about to die of
	 * it, and in which it can no longer change a thread's mask (its
	 * SIGSEGV handler answers those, sandpit_ask_self), which a thread's
	 * exit does (u_exit blocks every signal). */
	R->done = 1;
	return 0;
}

TEST(inv8_segv_default_action_is_not_read_from_the_mailbox)
{
	char msg[4096];
	R = shared_page(4096);
	ASSERT_NE(NULL, R);
	int o = run_capture(body_segv_dfl, NULL, NULL, 60, msg, sizeof(msg));
	TH_LOG("writes %ld, calls %ld, handler installed %ld", R->writes, R->calls, R->bad);
	EXPECT_EQ(0, o);
	EXPECT_LT(0, R->writes);
	EXPECT_LT(0, R->calls);
	EXPECT_EQ(0, R->bad);
}

/* ----------------------------- T's poll descriptors rewritten, B killed */

static int quiet_fd;

static void *rewrite_pollfds(void *a)
{
	(void)a;
	while (!victim_mb)
		;
	struct mailbox *mb = victim_mb;
	struct pollfd fake[2] = { { quiet_fd, POLLIN, 0 }, { quiet_fd, POLLIN, 0 } };
	for (;;) {
		/* all of T's scratch, where its poll descriptors used to be */
		for (int off = MB_PAYLOAD; off + (int)sizeof(fake) <= MB_CLONE_REGS; off += 8)
			memcpy((char *)mb + off, fake, sizeof(fake));
		R->writes++;
		if (__atomic_load_n(&mb->t_sleep, __ATOMIC_RELAXED))
			R->landed++; /* while T sleeps in ppoll */
	}
	return NULL;
}

TEST(inv8_poll_descriptors_rewritten_cannot_hide_b_hanging_up)
{
	int p[2], q[2];
	R = shared_page(4096);
	ASSERT_NE(NULL, R);
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(q));
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	fflush(NULL);
	pid_t child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		quiet_fd = q[0];
		if (sandpit_start(NULL) < 0)
			_exit(SANDBOX_START_FAILED);
		victim_mb = my_mailbox();
		pthread_t w;
		if (pthread_create(&w, NULL, rewrite_pollfds, NULL))
			_exit(1);
		if (write(p[1], "r", 1) != 1)
			_exit(2);
		char c;
		_exit((int)read(q[0], &c, 1) + 100); /* idle in U: its T sleeps */
	}
	char c;
	ASSERT_EQ(1, read(p[0], &c, 1));
	usleep(200000);
	pid_t b = 0;
	for (int i = 0; i < 100 && !b; i++) {
		b = find_child_named("sandpit-B");
		if (!b)
			usleep(10000);
	}
	ASSERT_LT(0, b);
	ASSERT_EQ(0, kill(b, SIGKILL));
	int st = 0, done = 0;
	for (int i = 0; i < 500 && !done; i++) {
		done = waitpid(child, &st, WNOHANG) == child;
		if (!done)
			usleep(10000);
	}
	if (!done)
		kill(child, SIGKILL);
	TH_LOG("writes %ld, while T slept %ld", R->writes, R->landed);
	EXPECT_TRUE(done);
	EXPECT_EQ(KILLED(SIGKILL), outcome(st));
	EXPECT_LT(0, R->landed);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* ------------------- a signal routed to T through a mask-carrying call */

enum { VIA_PPOLL, VIA_PSELECT6, VIA_EPOLL_PWAIT };
static volatile pid_t handler_tid;
static volatile int handler_on_other;
static char outside[64];

static void on_alarm(int sig)
{
	(void)sig;
	pid_t t = (pid_t)syscall(SYS_gettid);
	if (handler_tid && t != handler_tid)
		handler_on_other = 1;
	R->landed++;
	/* on T (outside seccomp) this would succeed */
	int fd = open(outside, O_WRONLY | O_CREAT, 0600);
	if (fd >= 0)
		close(fd);
}

static void *send_alarms(void *a)
{
	(void)a;
	while (!R->done) {
		kill(getpid(), SIGALRM); /* to the process: any thread not blocking it */
		R->writes++;
		usleep(3000);
	}
	return NULL;
}

static int body_mask_call(void *a)
{
	int via = (int)(intptr_t)a;
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_ONSTACK };
	sigset_t alrm, empty;
	sigemptyset(&alrm);
	sigemptyset(&empty);
	sigaddset(&alrm, SIGALRM);
	handler_tid = (pid_t)syscall(SYS_gettid);
	/* U blocks the signal everywhere but inside the call */
	if (sigaction(SIGALRM, &sa, NULL) || pthread_sigmask(SIG_BLOCK, &alrm, NULL))
		return 1;
	int ep = via == VIA_EPOLL_PWAIT ? epoll_create1(0) : -1;
	if (via == VIA_EPOLL_PWAIT && ep < 0)
		return 2;
	pthread_t s;
	if (pthread_create(&s, NULL, send_alarms, NULL))
		return 3;
	for (int i = 0; i < 100; i++) {
		struct timespec ts = { 0, 20000000 };
		struct epoll_event ev;
		int r = via == VIA_PPOLL	  ? ppoll(NULL, 0, &ts, &empty)
			: via == VIA_PSELECT6 ? pselect(0, NULL, NULL, NULL, &ts, &empty)
					      : epoll_pwait(ep, &ev, 1, 20, &empty);
		if (r < 0 && errno == EINTR)
			R->calls++; /* the signal came during the call */
	}
	R->done = 1;
	pthread_join(s, NULL);
	return handler_on_other ? 4 : 0;
}

static void mask_case(struct __test_metadata *_metadata, int via)
{
	char msg[4096];
	R = shared_page(4096);
	ASSERT_NE(NULL, R);
	snprintf(outside, sizeof(outside), "/tmp/sandpit-core-sig-%d", getpid());
	unlink(outside);
	int o = run_capture(body_mask_call, (void *)(intptr_t)via, NULL, 60, msg, sizeof(msg));
	TH_LOG("signals sent %ld, handled %ld, calls ended by one %ld; %s", R->writes, R->landed,
	       R->calls, msg);
	/* the handler ran on U's thread only (or P was ended by sandpit) */
	if (o == KILLED(SIGKILL)) {
		EXPECT_TRUE(strstr(msg, "reached a trusted thread") != NULL);
	} else {
		EXPECT_EQ(0, o);
	}
	EXPECT_EQ(-1, access(outside, F_OK));
	/* U blocks the signal but inside the call: each run is one the call's
	 * mask let through */
	EXPECT_LT(0, R->landed);
	unlink(outside);
}

TEST(inv1_signal_through_ppoll_mask_never_runs_on_the_trusted_thread)
{
	mask_case(_metadata, VIA_PPOLL);
}

TEST(inv1_signal_through_pselect6_mask_never_runs_on_the_trusted_thread)
{
	mask_case(_metadata, VIA_PSELECT6);
}

TEST(inv1_signal_through_epoll_pwait_mask_never_runs_on_the_trusted_thread)
{
	mask_case(_metadata, VIA_EPOLL_PWAIT);
}

/* ---------------- sandpit's wrapper on a trusted thread's stack */

static long wrapper_on_this_stack(void *a)
{
	(void)a;
	static uint8_t info[128], uc[1024];
	u_signal_enter(SIGUSR1, info, uc);
	return 0;
}

static void on_usr1(int sig)
{
	(void)sig;
	R->landed++;
	int fd = open(outside, O_WRONLY | O_CREAT, 0600);
	if (fd >= 0)
		close(fd);
}

static int body_wrapper_on_t_stack(void *a)
{
	(void)a;
	struct sigaction sa = { .sa_handler = on_usr1 };
	if (sigaction(SIGUSR1, &sa, NULL))
		return 1;
	/* where the kernel would put a handler's frame on a T: the alternate
	 * stack of slot 9 (no thread has it in this test) */
	const struct sandpit_ro *ro = &sandpit_ro_page.ro;
	uintptr_t top = ro->t_alt_lo + 10 * SM_ALT_SIZE - 256;
	if (ro->t_alt_hi - ro->t_alt_lo != SM_ALT_REGION)
		return 2;
	R->calls++;
	sandpit_call_on_stack((void *)top, wrapper_on_this_stack, NULL);
	return 3; /* the wrapper went on as if on U */
}

/* Whatever brings a handler of the program onto T, sandpit's wrapper sees
 * it from the stack pointer alone (not %gs) and ends P before calling it. */
TEST(inv1_program_handler_reaching_a_trusted_thread_ends_the_process)
{
	char msg[4096];
	R = shared_page(4096);
	ASSERT_NE(NULL, R);
	snprintf(outside, sizeof(outside), "/tmp/sandpit-core-usr1-%d", getpid());
	unlink(outside);
	int o = run_capture(body_wrapper_on_t_stack, NULL, NULL, 20, msg, sizeof(msg));
	TH_LOG("%s", msg);
	EXPECT_EQ(1, R->calls);
	EXPECT_EQ(KILLED(SIGKILL), o);
	EXPECT_EQ(0, R->landed);
	EXPECT_TRUE(strstr(msg, "reached a trusted thread") != NULL);
	EXPECT_EQ(-1, access(outside, F_OK));
}

TEST_HARNESS_MAIN
