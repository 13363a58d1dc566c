/* Signals pending together inside a request are delivered as the kernel
 * delivers them (below); each body runs natively in a child first, then
 * sandboxed, and the two answers must be the same. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "u_state.h"
#include "signals_util.h"

/* ------------------------------- signals pending together inside a request
 *
 * Several signals that land while the thread waits for T are put off until
 * the request is done; they must then be delivered as the kernel delivers
 * signals pending together: the lowest first, each handler's sa_mask and
 * the thread's mask respected (a blocked one waits until unblocked), a
 * standard signal once however often it came, a real-time one once per
 * instance, SA_ONSTACK on the alternate stack, and the action (SIG_IGN,
 * SIG_DFL, SA_RESETHAND's reset, a handler set meanwhile) decided at
 * delivery.  The child blocks in an open of a FIFO nobody writes (B's
 * check, then T's call, in both modes); the parent waits until a thread of
 * it is in that open, stops it, queues the signals, and continues it: the
 * kernel delivers them all at once, inside the request.  The same runs
 * natively as the reference.  The handlers lack SA_RESTART, so each one
 * put off is counted by the entry (norestart_ran): the proof that they
 * landed inside the request. */

struct pend_proof {
	volatile int ready;
	long landed;
};
static struct pend_proof *PP;
static struct answers *PA;
static int pend_boxed;
static char pend_fifo[96];

static void pend_log(long ev)
{
	long n = PA->v[1]++;
	if (n + 2 < (long)(sizeof(PA->v) / sizeof(PA->v[0])))
		PA->v[n + 2] = ev;
}

static void on_pend(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	pend_log(sig * 100 + (si && si->si_code == SI_QUEUE ? si->si_value.sival_int : 0));
}

static int pend_action(int sig, void (*fn)(int, siginfo_t *, void *), int flags,
		       const int *masked)
{
	struct sigaction sa = { .sa_sigaction = fn, .sa_flags = SA_SIGINFO | flags };
	sigemptyset(&sa.sa_mask);
	for (; masked && *masked; masked++)
		sigaddset(&sa.sa_mask, *masked);
	return sigaction(sig, &sa, NULL);
}

/* the body: the scene's actions, then the open that blocks in T */
static int body_pending(void *a)
{
	int (*install)(void) = (int (*)(void))a;
	if (install())
		return 3;
	uint64_t ran0 = pend_boxed ? state_of(my_mailbox())->norestart_ran : 0;
	PP->ready = 1;
	int fd = open(pend_fifo, O_RDONLY);
	PA->v[0] = fd < 0 ? -errno : 0;
	if (pend_boxed)
		PP->landed = (long)(state_of(my_mailbox())->norestart_ran - ran0);
	pend_log(9999); /* the call returned */
	return 0;
}

/* a thread of pid in open, openat or openat2 */
static int in_open(pid_t pid)
{
	char path[384], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *d = opendir(path);
	struct dirent *e;
	int found = 0;
	while (d && !found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/syscall", pid, e->d_name);
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = 0;
		/* T makes it as openat2 */
		found = !strncmp(buf, "257 ", 4) || !strncmp(buf, "2 ", 2) ||
			!strncmp(buf, "437 ", 4);
	}
	if (d)
		closedir(d);
	return found;
}

struct pend_signal {
	int sig, value;
};

/* one run, native or sandboxed: the outcome, or -1 on a setup failure */
static int pending_run(int (*install)(void), const struct pend_signal *sigs, int n, int boxed,
		       struct answers *ans, const char *dir)
{
	PA = ans;
	memset((void *)PP, 0, sizeof(*PP));
	pend_boxed = boxed;
	fflush(NULL);
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		if (boxed) {
			const char *r[] = { dir, NULL };
			struct sandpit_options o = { .mode = suite_mode(), .allow_read = r };
			if (sandpit_start(&o) < 0)
				_exit(SANDBOX_START_FAILED);
		}
		_exit(body_pending((void *)install));
	}
	int st, ok = 0;
	for (int i = 0; i < 2000 && !ok; i++) {
		if (waitpid(p, &st, WNOHANG) == p)
			return outcome(st);
		ok = PP->ready && in_open(p);
		if (!ok)
			usleep(5000);
	}
	if (ok) {
		kill(p, SIGSTOP);
		ok = waitpid(p, &st, WUNTRACED) == p && WIFSTOPPED(st);
	}
	for (int i = 0; ok && i < n; i++)
		ok = sigqueue(p, sigs[i].sig, (union sigval){ .sival_int = sigs[i].value }) == 0;
	if (!ok) {
		kill(p, SIGKILL);
		waitpid(p, &st, 0);
		return -1;
	}
	kill(p, SIGCONT);
	for (int i = 0; i < 2000; i++) {
		if (waitpid(p, &st, WNOHANG) == p)
			return ok ? outcome(st) : -1;
		usleep(5000);
	}
	kill(p, SIGKILL);
	waitpid(p, &st, 0);
	return -2;
}

/* native first, then sandboxed: same outcome, same events, and the
 * sandboxed run's signals landed inside the request */
static void pending_case(struct __test_metadata *_metadata, int (*install)(void),
			 const struct pend_signal *sigs, int n, int native_outcome)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/tmp/sandpit-pend-%d", getpid());
	ASSERT_EQ(0, mkdir(dir, 0700));
	snprintf(pend_fifo, sizeof(pend_fifo), "%s/fifo", dir);
	ASSERT_EQ(0, mkfifo(pend_fifo, 0600));
	PP = shared_page(sizeof(*PP));
	ASSERT_NE(NULL, PP);
	struct answers *nat = shared_answers(), *box = shared_answers();
	ASSERT_NE(NULL, nat);
	ASSERT_NE(NULL, box);
	int no = pending_run(install, sigs, n, 0, nat, dir);
	int bo = pending_run(install, sigs, n, 1, box, dir);
	long landed = PP->landed;
	unlink(pend_fifo);
	rmdir(dir);
	ASSERT_EQ(native_outcome, no);
	EXPECT_EQ(no, bo);
	int d = first_difference(nat, box);
	EXPECT_EQ(-1, d)
	TH_LOG("event %d: native %ld, sandboxed %ld", d, d < 0 ? 0 : nat->v[d], d < 0 ? 0 : box->v[d]);
	for (long i = 0; i < nat->v[1] && i < 16; i++)
		TH_LOG("native %ld sandboxed %ld", nat->v[i + 2], box->v[i + 2]);
	/* the open ended with EINTR, natively and sandboxed */
	if (native_outcome == 0)
		EXPECT_EQ(-EINTR, nat->v[0]);
	/* the attack ran: the signals landed inside the request */
	if (bo == 0)
		EXPECT_LE(1, landed);
}

/* 1. nesting: SIGUSR1's handler blocks SIGUSR2 and SIGTERM (sa_mask),
 * then unblocks SIGTERM in its body; SIGUSR2 waits for its end. */
static void on_pend_usr1_nest(int sig, siginfo_t *si, void *uc)
{
	(void)si, (void)uc;
	pend_log(sig * 100);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	pend_log(sig * 100 + 1);
}

static int install_nest(void)
{
	static const int m[] = { SIGUSR2, SIGTERM, 0 };
	return pend_action(SIGUSR1, on_pend_usr1_nest, 0, m) || pend_action(SIGUSR2, on_pend, 0, 0) ||
	       pend_action(SIGTERM, on_pend, 0, 0);
}

TEST(deferred_signals_nest_under_the_first_handlers_sa_mask_and_the_thread_mask)
{
	static const struct pend_signal s[] = { { SIGUSR2, 0 }, { SIGTERM, 0 }, { SIGUSR1, 0 } };
	pending_case(_metadata, install_nest, s, 3, 0);
}

/* 2. order: lowest first, standard merged, real-time queued */
static int install_order(void)
{
	return pend_action(SIGUSR1, on_pend, 0, 0) || pend_action(SIGUSR2, on_pend, 0, 0) ||
	       pend_action(SIGRTMIN + 1, on_pend, 0, 0) || pend_action(SIGRTMIN + 2, on_pend, 0, 0);
}

TEST(deferred_signals_delivered_lowest_first_standard_merged_realtime_queued)
{
	const struct pend_signal s[] = { { SIGRTMIN + 2, 1 }, { SIGRTMIN + 1, 2 }, { SIGUSR2, 3 },
					 { SIGRTMIN + 2, 4 }, { SIGUSR1, 5 },	   { SIGUSR2, 6 },
					 { SIGRTMIN + 1, 7 }, { SIGRTMIN + 1, 8 } };
	pending_case(_metadata, install_order, s, 8, 0);
}

/* 3. SA_ONSTACK: on the alternate stack, which reports SS_ONSTACK */
static char *pend_alt;
#define PEND_ALT_SIZE (64 * 1024)

static void on_pend_onstack(int sig, siginfo_t *si, void *uc)
{
	(void)si, (void)uc;
	char here;
	stack_t o;
	int on = &here >= pend_alt && &here < pend_alt + PEND_ALT_SIZE;
	int flags = sigaltstack(NULL, &o) ? -1 : o.ss_flags;
	pend_log(sig * 100 + on * 10 + flags);
}

static int install_onstack(void)
{
	pend_alt = malloc(PEND_ALT_SIZE);
	stack_t ss = { .ss_sp = pend_alt, .ss_size = PEND_ALT_SIZE };
	return !pend_alt || sigaltstack(&ss, NULL) ||
	       pend_action(SIGUSR1, on_pend_onstack, SA_ONSTACK, 0) ||
	       pend_action(SIGUSR2, on_pend_onstack, 0, 0);
}

TEST(deferred_sa_onstack_handler_runs_on_the_alternate_stack)
{
	static const struct pend_signal s[] = { { SIGUSR1, 0 }, { SIGUSR2, 0 } };
	pending_case(_metadata, install_onstack, s, 2, 0);
}

/* 4. SA_RESETHAND at delivery: SIGHUP's handler (SIGUSR1 in its sa_mask)
 * raises SIGUSR1 again while the first is pending (once, merged); the
 * SA_RESETHAND handler then runs once and sets itself again, and a later
 * SIGUSR1 finds it. */
static void on_pend_hup_raise(int sig, siginfo_t *si, void *uc)
{
	(void)si, (void)uc;
	pend_log(sig * 100);
	pend_log(kill(getpid(), SIGUSR1) ? -errno : 1);
}

static void on_pend_oneshot(int sig, siginfo_t *si, void *uc);
static int install_oneshot(void)
{
	static const int m[] = { SIGUSR1, 0 };
	return pend_action(SIGHUP, on_pend_hup_raise, 0, m) ||
	       pend_action(SIGUSR1, on_pend_oneshot, SA_RESETHAND, 0);
}

static void on_pend_oneshot(int sig, siginfo_t *si, void *uc)
{
	(void)si, (void)uc;
	struct sigaction o;
	sigaction(sig, NULL, &o);
	pend_log(sig * 100 + (o.sa_handler == SIG_DFL));
	pend_log(pend_action(SIGUSR1, on_pend_oneshot, SA_RESETHAND, 0));
}

TEST(sa_resethand_resets_at_delivery_and_a_handler_set_again_meanwhile_runs)
{
	static const struct pend_signal s[] = { { SIGUSR1, 0 }, { SIGHUP, 0 } };
	pending_case(_metadata, install_oneshot, s, 2, 0);
}

/* SIG_IGN set while pending discards it; SIG_DFL set while pending is the
 * default action at delivery (SIGUSR2's ends the process) */
static void on_pend_hup_ign(int sig, siginfo_t *si, void *uc)
{
	(void)si, (void)uc;
	pend_log(sig * 100);
	signal(SIGUSR1, SIG_IGN);
	pend_log(sig * 100 + 1);
}

static int install_ign(void)
{
	static const int m[] = { SIGUSR1, 0 };
	return pend_action(SIGHUP, on_pend_hup_ign, 0, m) || pend_action(SIGUSR1, on_pend, 0, 0);
}

TEST(sig_ign_set_while_a_deferred_signal_is_pending_discards_it)
{
	static const struct pend_signal s[] = { { SIGUSR1, 0 }, { SIGHUP, 0 } };
	pending_case(_metadata, install_ign, s, 2, 0);
}

static void on_pend_hup_dfl(int sig, siginfo_t *si, void *uc)
{
	(void)si, (void)uc;
	pend_log(sig * 100);
	signal(SIGUSR2, SIG_DFL);
	pend_log(sig * 100 + 1);
}

static int install_dfl(void)
{
	static const int m[] = { SIGUSR2, 0 };
	return pend_action(SIGHUP, on_pend_hup_dfl, 0, m) || pend_action(SIGUSR2, on_pend, 0, 0);
}

TEST(sig_dfl_set_while_a_deferred_signal_is_pending_takes_the_default_action)
{
	static const struct pend_signal s[] = { { SIGUSR2, 0 }, { SIGHUP, 0 } };
	pending_case(_metadata, install_dfl, s, 2, KILLED(SIGUSR2));
}

TEST_HARNESS_MAIN
