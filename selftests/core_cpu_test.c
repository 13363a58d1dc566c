/* Attacks on the trusted core (invariant 8): the spin hints and the CPU
 * words in the mailbox, rewritten while calls are made, cost wake-ups and
 * move B and T only among their own CPUs, never an answer.  Each test
 * counts the rewrites that landed (core_test says more). */
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
#include "core_race.h"

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

TEST_HARNESS_MAIN
