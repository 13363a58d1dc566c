/* Attacks on the trusted core (invariant 8, with 1, 2 and 5): a second
 * thread keeps rewriting the words of sandpit's that U can write (the
 * mailbox) while a first makes calls.  Nothing T or B decides, waits on or
 * executes may come from there, except one copy of a request that is then
 * checked in full.  Each test counts the rewrites that landed, so that a
 * pass means the race was run, not missed.  Here: forged thread exits,
 * an exit posted into another thread's mailbox, forged clear-child-tid
 * words.  The rest, by subject: core_cpu_test (the spin hints and CPU
 * moves), core_request_test (a request and its path copy rewritten during
 * B's check), core_signal_test (SIGSEGV's action, T's poll descriptors,
 * signals routed to T). */
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

TEST_HARNESS_MAIN
