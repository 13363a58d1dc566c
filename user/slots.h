/* Thread slots: what a thread of U's needs besides its T (DESIGN §1): its
 * secure page and mailbox (S), T's alternate signal stack, and two
 * eventfds, U's (U sleeps on it, T wakes it) and T's (the other way).
 * Address space for all SM_NSLOTS slots is reserved when the sandbox
 * starts; a slot's pages are touched, and its eventfds made by the T that
 * clones the thread, when a thread first uses it.  B hands slots out
 * (user/trusted_process.c); this is where their descriptors live. */
#ifndef SANDPIT_SLOTS_H
#define SANDPIT_SLOTS_H
#include "user/secure_mem.h"

/* sandpit's descriptor block [fd_lo, fd_lo + 2 + 2 * nslots): P's end of
 * T<->B, the placeholder for B's end, then each slot's two eventfds.  T's
 * FD_FREE rule and the filter refuse the whole block from the start, made
 * or not (invariant 3). */
static inline int slots_t_fd(int fd_lo, int slot) { return fd_lo + 2 + 2 * slot; }
static inline int slots_u_fd(int fd_lo, int slot) { return fd_lo + 3 + 2 * slot; }

/* The block lies below SM_FD_TOP and RLIMIT_NOFILE's soft limit (raised
 * towards SM_FD_TOP when it is lower and the hard limit allows, so that
 * 1,024 slots fit), above the first 64 descriptors, in the run of numbers
 * no descriptor uses yet that holds the most slots (the highest of
 * equals); when fewer slots fit, fewer threads run at once.  fds[0..1] (the T<->B pair) and fds[2..3] (slot 0's T and
 * U eventfds) are moved to the block's first four numbers; *spare says how
 * many numbers below the block are free.  Returns 0, or -EMFILE when not
 * even one slot fits.  The rest of the block is held by slots_hold_*. */
int slots_place_fds(int fds[4], int *fd_lo, int *nslots, int *spare);

/* Holding the block: every number from fd_lo + 4 on gets a placeholder, a
 * read-only /dev/null descriptor, close-on-exec, so that the kernel never
 * hands a number of the block to the program.  About 2,000 dup3s (0.35 ms
 * here): slots_hold_start makes them on a thread of its own (all signals
 * blocked, raw calls) while start-up goes on, when at least
 * SLOTS_HOLD_SPARE numbers below the block are free (spare) so that
 * start-up's own descriptors cannot land in it meanwhile, else at once;
 * slots_hold_end makes what that thread has not claimed yet (it may not
 * have run at all on a busy machine), waits for it and says how it went:
 * 0, or -errno with none of the block's placeholders made.  No thread of the program's
 * may run in between, and T only after slots_hold_end. */
#define SLOTS_HOLD_SPARE 32
struct slots_hold {
	int ph;           /* the placeholder's source */
	long lo, end;     /* the numbers to hold */
	long next;        /* the first not claimed yet by either thread */
	long result;      /* 0, or the first failure (-errno) */
	int tid;          /* the holding thread's, cleared by the kernel when it ends */
	void *stack;
};
int slots_hold_start(struct slots_hold *h, int fd_lo, int nslots, int spare);
int slots_hold_end(struct slots_hold *h);
#endif
