/* rev17: an outside review of the notifier process N (CLONE_VM |
 * CLONE_FILES child of P, no exit signal) that makes slots on demand.
 * Each test counts the attempts that reached the call and asserts the
 * precise outcome. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "user/layout/secure_mem.h"
#include "block_util.h"
#include "kernel_probe.h"

FIXTURE(r17) {};
FIXTURE_SETUP(r17) {}
FIXTURE_TEARDOWN(r17) {}

static int soft_1024(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_max < SM_FD_TOP + 1)
		return 0;
	rl.rlim_cur = 1024;
	return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

/* ---- 1. the program's waits see N (a clone child of P's) ---- */

struct w_out {
	long ntid;
	long wid_r, wid_e, wid_pid;     /* waitid(P_ALL, WEXITED|WNOHANG|__WALL) */
	long w4_r, w4_e;                /* wait4(-1, WNOHANG|__WALL) */
	long w4c_r, w4c_e;              /* wait4(-1, WNOHANG|__WCLONE) */
	long w4n_r, w4n_e;              /* wait4(N, WNOHANG|__WALL) */
	long blocking_done, blocking_r, blocking_e; /* wait4(-1, __WALL) from a thread */
};
static struct w_out *wo;

static void *blocking_wait(void *a)
{
	(void)a;
	int st;
	errno = 0;
	long r = wait4(-1, &st, __WALL, NULL);
	wo->blocking_e = errno;
	wo->blocking_r = r;
	__atomic_store_n(&wo->blocking_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int body_wait(void *a)
{
	struct w_out *o = wo = a;
	o->ntid = notifier_tid();
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	errno = 0;
	o->wid_r = syscall(SYS_waitid, P_ALL, 0, &si, WEXITED | WNOHANG | __WALL, NULL);
	o->wid_e = errno;
	o->wid_pid = si.si_pid;
	int st;
	errno = 0;
	o->w4_r = wait4(-1, &st, WNOHANG | __WALL, NULL);
	o->w4_e = errno;
	errno = 0;
	o->w4c_r = wait4(-1, &st, WNOHANG | __WCLONE, NULL);
	o->w4c_e = errno;
	errno = 0;
	o->w4n_r = o->ntid ? wait4((pid_t)o->ntid, &st, WNOHANG | __WALL, NULL) : -1;
	o->w4n_e = o->ntid ? errno : ECHILD;
	/* a program that reaps every child with __WALL before it ends: it has
	 * none, and natively the wait ends at once with ECHILD */
	pthread_t t;
	if (pthread_create(&t, NULL, blocking_wait, NULL))
		return 90;
	for (int i = 0; i < 3000 && !__atomic_load_n(&o->blocking_done, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	return 0; /* exit_group: the waiting thread ends with it */
}

/* A program with no child of its own asks the kernel for any child with
 * __WALL/__WCLONE: natively every wait is ECHILD.  N is P's child (its
 * exit signal 0 makes it a "clone" child), so where it is present the
 * program sees it: waitid's WNOHANG answers 0 (a child that has not
 * ended), wait4 answers 0, and a blocking wait4(-1, __WALL) (a reaper's
 * loop) does not end while N lives */
TEST_F_TIMEOUT(r17, program_waits_with___WALL_see_no_child, 60)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	struct w_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	struct sandpit_options opts = { .mode = suite_mode() };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_wait, o, &opts, 30)));
	TH_LOG("N %ld; waitid %ld/%ld pid %ld; wait4 __WALL %ld/%ld; __WCLONE %ld/%ld; N's pid "
	       "%ld/%ld; blocking wait ended %ld (%ld/%ld)",
	       o->ntid, o->wid_r, o->wid_e, o->wid_pid, o->w4_r, o->w4_e, o->w4c_r, o->w4c_e, o->w4n_r,
	       o->w4n_e, o->blocking_done, o->blocking_r, o->blocking_e);
	EXPECT_EQ(kernel_has_addfd() && !kernel_addfd_forced_off(), o->ntid != 0);
	/* native answers */
	EXPECT_EQ(-1, o->wid_r);
	EXPECT_EQ(ECHILD, o->wid_e);
	EXPECT_EQ(-1, o->w4_r);
	EXPECT_EQ(ECHILD, o->w4_e);
	EXPECT_EQ(-1, o->w4c_r);
	EXPECT_EQ(ECHILD, o->w4c_e);
	EXPECT_EQ(-1, o->w4n_r);
	EXPECT_EQ(ECHILD, o->w4n_e);
	EXPECT_EQ(1, o->blocking_done);
	EXPECT_EQ(-1, o->blocking_r);
	EXPECT_EQ(ECHILD, o->blocking_e);
}

/* ---- 2. N's code and words in P's memory, which N shares ---- */

#include <sys/mman.h>
long sandpit_clone_notifier(const void *prog, int32_t words[2]);

struct m_out {
	long ntid, n_after;
	long r[6], e[6];
	long threads_ok;
};

static void *ret_one(void *a)
{
	(void)a;
	return (void *)1L;
}

static int body_mem(void *a)
{
	struct m_out *o = a;
	o->ntid = notifier_tid();
	long pg = sysconf(_SC_PAGESIZE);
	void *code = (void *)((uintptr_t)sandpit_clone_notifier & ~(uintptr_t)(pg - 1));
	errno = 0;
	o->r[0] = munmap(code, (size_t)pg);
	o->e[0] = errno;
	errno = 0;
	o->r[1] = mprotect(code, (size_t)pg, PROT_NONE);
	o->e[1] = errno;
	errno = 0;
	o->r[2] = mmap(code, (size_t)pg, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
				  MAP_FAILED
			  ? -1
			  : 0;
	o->e[2] = errno;
	errno = 0;
	o->r[3] = madvise(code, (size_t)pg, MADV_DONTNEED);
	o->e[3] = errno;
	errno = 0;
	o->r[4] = mremap(code, (size_t)pg, (size_t)pg, MREMAP_MAYMOVE | MREMAP_FIXED, (char *)code + 64 * pg) ==
				  MAP_FAILED
			  ? -1
			  : 0;
	o->e[4] = errno;
	errno = 0;
	o->r[5] = mprotect(code, (size_t)pg, PROT_READ | PROT_WRITE | PROT_EXEC);
	o->e[5] = errno;
	/* each new thread's slot is put in through N's wait */
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	pthread_t t[20];
	for (int i = 0; i < 20; i++)
		if (pthread_create(&t[i], &at, ret_one, NULL))
			return 91;
	for (int i = 0; i < 20; i++) {
		void *rv = NULL;
		o->threads_ok += !pthread_join(t[i], &rv) && rv == (void *)1L;
	}
	o->n_after = notifier_tid();
	return 0;
}

/* The program unmaps, protects, maps over, drops and moves the page of
 * N's code (sandpit_text): each refused, N still waits, and every slot
 * made through it afterwards works */
TEST_F_TIMEOUT(r17, notifier_code_page_cannot_be_unmapped_or_changed, 60)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	struct m_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	struct sandpit_options opts = { .mode = suite_mode() };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_mem, o, &opts, 30)));
	for (int i = 0; i < 6; i++)
		TH_LOG("call %d: %ld errno %ld", i, o->r[i], o->e[i]);
	TH_LOG("N %ld then %ld, threads %ld", o->ntid, o->n_after, o->threads_ok);
	EXPECT_EQ(kernel_has_addfd() && !kernel_addfd_forced_off(), o->ntid != 0);
	for (int i = 0; i < 6; i++) {
		EXPECT_EQ(-1, o->r[i]) TH_LOG("call %d", i);
		EXPECT_EQ(EPERM, o->e[i]) TH_LOG("call %d", i);
	}
	EXPECT_EQ(o->ntid, o->n_after);
	EXPECT_EQ(20, o->threads_ok);
}

TEST_HARNESS_MAIN
