/* An outside review (rev4_test says more): the signals U puts off while a
 * request is in flight (user/untrusted/u_signal.c).  Each test attacks one
 * property from the sandboxed program and checks what is left afterwards
 * (sandpit still serving, the program's own signals as natively). */
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
#include "rev4_util.h"

/* ================= surface: signals put off ================= */

/* The queue lies in u_state, which the program can write: it forges an
 * entry (a signal number out of range, a signal sandpit keeps, SIGKILL)
 * and ends a request, so that U delivers it.  Only U reads the queue: T
 * and B never act on it, sandpit's own handlers stay the kernel's, and
 * what the program gets is what it could do natively (a signal to itself,
 * a fault in its own memory). */
struct forge_out {
	int sig;
	long returned;
	unsigned long long cgt_before, cgt_after;
	long works;
};

#define KEPT_MASK ((1ull << 10) | (1ull << 30) | (1ull << 62) | (1ull << 63))

static int body_forge(void *a)
{
	struct forge_out *o = a;
	proc_status_hex("/proc/thread-self/status", "SigCgt:", &o->cgt_before);
	struct u_state *st = state_of(my_mailbox());
	st->deferred[0].sig = o->sig;
	memset(st->deferred[0].info, 0x41, sizeof(st->deferred[0].info));
	st->ndeferred = 1;
	struct stat sb;
	stat("/", &sb); /* a request; its end delivers what is queued */
	o->returned = 1;
	proc_status_hex("/proc/thread-self/status", "SigCgt:", &o->cgt_after);
	o->works = sandpit_works();
	return 0;
}

/* (SIGSTOP left out: it stops the program, as raise(SIGSTOP) would) */
static const int forged[] = { 65, 1000, 0x7fffffff, -1, -1000000, 63, 64, 11, 31, 9 };

TEST(forged_entries_in_the_deferred_queue_do_only_what_the_program_could)
{
	for (unsigned i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
		struct forge_out *o = shared_page(sizeof(*o));
		ASSERT_NE(NULL, o);
		o->sig = forged[i];
		int st = run_sandboxed_opts(body_forge, o, NULL, 30);
		int out = outcome(st);
		TH_LOG("forged %d: outcome %d, returned %ld, SigCgt %llx -> %llx, works %ld", forged[i],
		       out, o->returned, o->cgt_before, o->cgt_after, o->works);
		ASSERT_NE(-2, st);
		/* the program's own ends: its forged signal's default, or a
		 * fault in its own memory; never hung */
		if (out != 0) {
			int s = out - 1000;
			EXPECT_TRUE(s == SIGSEGV || s == forged[i] || s == SIGKILL || s == SIGSYS);
			continue;
		}
		EXPECT_EQ(KEPT_MASK, o->cgt_after & KEPT_MASK);
		EXPECT_EQ(1, o->works);
		munmap(o, sizeof(*o));
	}
}

/* SIGUSR1 and SIGTSTP both pending (put off while a request was in
 * flight: written into the queue here, as U's handler writes them), the
 * first with SIGTSTP in its sa_mask.  SIGUSR1, the lower, is delivered
 * first; its handler sets SIGTSTP to SIG_DFL; once it returns SIGTSTP is
 * delivered with the action decided then: the process stops, goes on
 * after SIGCONT, and SIGTSTP's handler never runs.  The same natively,
 * with both raised while blocked. */
struct tstp_out {
	int usr1_ran, tstp_ran, order_ok;
};

static struct tstp_out *tstp;
static void tstp_handler(int s) { (void)s; tstp->tstp_ran++; }
static void usr1_handler(int s)
{
	(void)s;
	tstp->usr1_ran++;
	tstp->order_ok = tstp->tstp_ran == 0;
	signal(SIGTSTP, SIG_DFL);
}

static int body_tstp(void *a)
{
	tstp = a;
	struct sigaction u = { .sa_handler = usr1_handler }, t = { .sa_handler = tstp_handler };
	sigemptyset(&u.sa_mask);
	sigaddset(&u.sa_mask, SIGTSTP);
	sigemptyset(&t.sa_mask);
	if (sigaction(SIGUSR1, &u, NULL) || sigaction(SIGTSTP, &t, NULL))
		return 1;
	if (sandpit_mode() == SANDPIT_MODE_NONE) {
		sigset_t both, old;
		sigemptyset(&both);
		sigaddset(&both, SIGUSR1);
		sigaddset(&both, SIGTSTP);
		sigprocmask(SIG_BLOCK, &both, &old);
		raise(SIGTSTP);
		raise(SIGUSR1);
		sigprocmask(SIG_SETMASK, &old, NULL);
	} else {
		struct u_state *st = state_of(my_mailbox());
		memset(st->deferred[0].info, 0, sizeof(st->deferred[0].info));
		memset(st->deferred[1].info, 0, sizeof(st->deferred[1].info));
		st->deferred[0].sig = SIGTSTP;
		st->deferred[1].sig = SIGUSR1;
		st->ndeferred = 2;
		struct stat sb;
		stat("/", &sb);
	}
	return 0;
}

static int stop_then_cont(pid_t p, int *stopped)
{
	int st;
	*stopped = 0;
	for (int i = 0; i < 3000; i++) {
		pid_t w = waitpid(p, &st, WNOHANG | WUNTRACED);
		if (w == p && WIFSTOPPED(st)) {
			*stopped = WSTOPSIG(st);
			kill(p, SIGCONT);
			continue;
		}
		if (w == p)
			return st;
		usleep(10000);
	}
	kill(p, SIGKILL);
	waitpid(p, &st, 0);
	return -2;
}

static int run_tstp(struct tstp_out *o, int boxed, int *stopped)
{
	fflush(NULL);
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		if (boxed && sandpit_start(NULL) < 0)
			_exit(SANDBOX_START_FAILED);
		_exit(body_tstp(o));
	}
	return stop_then_cont(p, stopped);
}

TEST(a_pending_sigtstp_set_to_sig_dfl_before_delivery_stops_the_process_as_natively)
{
	struct tstp_out *nat = shared_page(sizeof(*nat)), *box = shared_page(sizeof(*box));
	ASSERT_NE(NULL, nat);
	ASSERT_NE(NULL, box);
	int nstop, bstop;
	int n = run_tstp(nat, 0, &nstop), b = run_tstp(box, 1, &bstop);
	TH_LOG("native: status %d stopped %d usr1 %d tstp %d; sandboxed: status %d stopped %d "
	       "usr1 %d tstp %d", n, nstop, nat->usr1_ran, nat->tstp_ran, b, bstop, box->usr1_ran,
	       box->tstp_ran);
	ASSERT_EQ(0, outcome(n));
	EXPECT_EQ(SIGTSTP, nstop);
	EXPECT_EQ(1, nat->usr1_ran);
	EXPECT_EQ(0, nat->tstp_ran);
	ASSERT_EQ(0, outcome(b));
	EXPECT_EQ(nstop, bstop);
	EXPECT_EQ(nat->usr1_ran, box->usr1_ran);
	EXPECT_EQ(nat->tstp_ran, box->tstp_ran);
	EXPECT_EQ(1, box->order_ok);
}

TEST_HARNESS_MAIN
