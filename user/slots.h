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

/* sandpit's descriptor block [fd_lo, fd_lo + 3 + 2 * nslots): P's end of
 * T<->B, the placeholder for B's end, then each slot's two eventfds, and
 * last /proc/self/maps, opened before the sandbox so that the run-time
 * patcher's reads need nothing of the policy (SANDPIT_NR_MAPS_READ).  T's
 * FD_FREE rule and the filter refuse the whole block from the start, made
 * or not (invariant 3). */
static inline int slots_t_fd(int fd_lo, int slot) { return fd_lo + 2 + 2 * slot; }
static inline int slots_u_fd(int fd_lo, int slot) { return fd_lo + 3 + 2 * slot; }
static inline int slots_maps_fd(int fd_lo, int nslots) { return fd_lo + 2 + 2 * nslots; }

/* The block lies below SM_FD_TOP and RLIMIT_NOFILE's soft limit (raised
 * towards SM_FD_TOP when it is lower and the hard limit allows, so that
 * 1,024 slots fit), above the first 64 descriptors, in the run of numbers
 * no descriptor uses yet that holds the most slots (the highest of
 * equals); when fewer slots fit, fewer threads run at once.  fds[0..1] (the T<->B pair) and fds[2..3] (slot 0's T and
 * U eventfds) are moved to the block's first four numbers, fds[4] (the
 * maps) to its last.  Returns 0, or -EMFILE when not even one slot fits. */
#define SLOTS_PLACED 5
int slots_place_fds(int fds[SLOTS_PLACED], int *fd_lo, int *nslots);
/* The rest of the block held: a placeholder on each number no slot has
 * made yet, so that the kernel hands none of them to the program.  Until
 * then nothing may open a descriptor that stays open (the kernel could
 * give it one of those numbers).  0 or -errno. */
int slots_hold_block(int fd_lo, int nslots);
#endif
