/* Waits the trusted process B makes on U's behalf (the open of a FIFO,
 * user/trusted/write_open.c), and U's asks to interrupt them.  A leaf of
 * B: it calls nothing of B's other files.  Only B includes it. */
#ifndef SANDPIT_B_WAIT_H
#define SANDPIT_B_WAIT_H
#include <stdint.h>

/* A call that may wait for another process, made for slot s's U.  Between
 * b_wait_begin and b_wait_end, b_wait_call4 makes the call (-errno on
 * failure) and ends it with -EINTR when U asks to be interrupted, whether
 * the ask comes before the call or during it; b_wait_interrupted then says
 * whether U asked since B took the request (B answers -ERESTARTSYS: the
 * kernel's answer for such a call, made again unless a handler without
 * SA_RESTART ran) or the call is to be made again. */
void b_wait_begin(int slot);
long b_wait_call4(int slot, long nr, long a0, long a1, long a2);
int b_wait_interrupted(int slot);
void b_wait_end(int slot);
/* asm/x86_64/b_wait.S: the call, or -EINTR without it when *stop is set */
long b_wait_syscall4(long nr, long a0, long a1, long a2, const int *stop);

/* The wake's handler installed, once, as B starts (B's threads block the
 * wake but for the wait itself). */
void b_wait_install(void);
/* U asked to interrupt slot s (watch_p): counted, and if B waits for that
 * slot, the wait ended: 1; 0 when B does not wait (T's call is the one to
 * interrupt). */
int b_wait_asked(int slot);
/* Slot s's answer is about to be published: an ask counted from now on is
 * for the next request. */
void b_wait_answered(int slot);
#endif
