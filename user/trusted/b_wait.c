/* Waits B makes on U's behalf, ended when U asks (user/trusted/b_wait.h). */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <unistd.h>

#include "user/layout/secure_mem.h"
#include "user/trusted/b_wait.h"

/* Interrupts asked for each slot (watch_p), and the count when the slot's
 * last answer was published: one asked in between is for the request B
 * holds (b_wait_begin).  A late one for the answered request only makes a
 * wait restart (-ERESTARTSYS, made again as no handler ran for it). */
static uint32_t intr_asked[SM_NSLOTS], intr_answered[SM_NSLOTS];
/* the server thread of a slot while it waits on U's behalf (b_wait_begin) */
static pid_t b_waiter[SM_NSLOTS];

/* Ends a wait B makes on U's behalf (b_wait_begin): sent by watch_p to
 * the waiting thread; B's threads block it but for the wait itself. */
#define B_SIG_WAKE SIGUSR1
/* set by watch_p, before it sends the wake, for the slot's waiter */
static int b_wake_flag[SM_NSLOTS];

/* b_wait_syscall4's labels (asm/x86_64/b_wait.S) */
extern const char b_wait_look[], b_wait_call[], b_wait_stopped[];

/* The wake's handler: a thread between b_wait_syscall4's look at its flag
 * and the syscall instruction has not made the call yet, and is sent to
 * its -EINTR return; one in the call sees EINTR from the kernel (no
 * SA_RESTART); anywhere else the wake only ends whatever blocks. */
static void b_woken(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	ucontext_t *uc = ctx;
	uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	if (ip >= (uintptr_t)b_wait_look && ip <= (uintptr_t)b_wait_call)
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)b_wait_stopped;
}

void b_wait_install(void)
{
	struct sigaction wake = { .sa_sigaction = b_woken, .sa_flags = SA_SIGINFO };
	sigaction(B_SIG_WAKE, &wake, NULL);
}

void b_wait_begin(int s)
{
	__atomic_store_n(&b_wake_flag[s], 0, __ATOMIC_SEQ_CST);
	/* published before the look at the count (b_wait_interrupted):
	 * watch_p sees the waiter, or the waiter sees watch_p's count */
	__atomic_store_n(&b_waiter[s], (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	sigset_t wake;
	sigemptyset(&wake);
	sigaddset(&wake, B_SIG_WAKE);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
}

int b_wait_interrupted(int s)
{
	return __atomic_load_n(&intr_asked[s], __ATOMIC_SEQ_CST) != intr_answered[s];
}

long b_wait_call4(int s, long nr, long a0, long a1, long a2)
{
	return b_wait_syscall4(nr, a0, a1, a2, &b_wake_flag[s]);
}

void b_wait_end(int s)
{
	sigset_t wake;
	sigemptyset(&wake);
	sigaddset(&wake, B_SIG_WAKE);
	pthread_sigmask(SIG_BLOCK, &wake, NULL);
	__atomic_store_n(&b_waiter[s], 0, __ATOMIC_SEQ_CST);
}

int b_wait_asked(int s)
{
	__atomic_add_fetch(&intr_asked[s], 1, __ATOMIC_SEQ_CST);
	pid_t w = __atomic_load_n(&b_waiter[s], __ATOMIC_SEQ_CST);
	if (!w)
		return 0;
	/* B waits for U, T for B's answer: B's wait ends */
	__atomic_store_n(&b_wake_flag[s], 1, __ATOMIC_SEQ_CST);
	syscall(SYS_tgkill, getpid(), w, B_SIG_WAKE);
	return 1;
}

void b_wait_answered(int s)
{
	intr_answered[s] = __atomic_load_n(&intr_asked[s], __ATOMIC_SEQ_CST);
}
