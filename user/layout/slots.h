/* Thread slots: what a thread of U's needs besides its T (DESIGN §1): its
 * secure page and mailbox (S), T's alternate signal stack, and two
 * eventfds, U's (U sleeps on it, T wakes it) and T's (the other way).
 * Address space for all SM_NSLOTS slots is reserved when the sandbox
 * starts, and every slot's eventfds are made then; a slot's pages are
 * touched when a thread first uses it.  B hands slots out
 * (user/trusted/b_serve.c); this is where their descriptors live. */
#ifndef SANDPIT_SLOTS_H
#define SANDPIT_SLOTS_H
#include <sys/resource.h>

#include "user/layout/secure_mem.h"

/* sandpit's descriptor block [fd_lo, fd_lo + 3 + 2 * nslots): P's end of
 * T<->B, the placeholder for B's end, then each slot's two eventfds, and
 * last /proc/self/maps, opened before the sandbox so that the run-time
 * patcher's reads need nothing of the policy (SANDPIT_NR_MAPS_READ).  T's
 * FD_FREE rule and the filter refuse the whole block (invariant 3). */
static inline int slots_t_fd(int fd_lo, int slot) { return fd_lo + 2 + 2 * slot; }
static inline int slots_u_fd(int fd_lo, int slot) { return fd_lo + 3 + 2 * slot; }
static inline int slots_maps_fd(int fd_lo, int nslots) { return fd_lo + 2 + 2 * nslots; }

/* Where the block goes.  The kernel never hands a process a new number at
 * or above its soft RLIMIT_NOFILE (open, dup2, F_DUPFD fail there), yet a
 * descriptor that is already there stays usable.  So, where the hard limit
 * leaves room, the block lies at or above the program's soft limit (ending
 * at SM_FD_TOP when it fits there, the numbers the prebuilt filter is
 * for): P raises the soft limit just far enough, makes every descriptor of
 * the block, and puts the limit back (slots_restore_limit) before any
 * instruction of the program's runs.  The program then has every number
 * below its own unchanged limit, and sandpit's never meet its own.
 *
 * Where the hard limit leaves no room for at least as many slots as the
 * old way would give ("below"), the block lies below the soft limit as it
 * always did: under min(soft, SM_FD_TOP), above the first 64 numbers, in
 * the run no descriptor uses yet that holds the most slots (the highest
 * of equals), at most SM_NSLOTS slots and as many as a quarter of those
 * numbers; the program then has fewer numbers than its limit says.
 *
 * fds[0..1] (the T<->B pair) and fds[2..3] (slot 0's T and U eventfds) are
 * moved to the block's first four numbers, fds[4] (the maps) to its last.
 * Returns 0, or -EMFILE when not even one slot fits. */
#define SLOTS_PLACED 5
struct slots_place {
	int fd_lo, nslots;
	int above;           /* the block is at or above the program's soft limit */
	struct rlimit limit; /* the program's RLIMIT_NOFILE, as it was */
	int raised;          /* P's soft limit is raised until slots_restore_limit */
};
int slots_place_fds(int fds[SLOTS_PLACED], struct slots_place *pl);
/* Slots 1 .. nslots - 1's eventfds, made now, each moved onto its number
 * in the block; nothing may be made there later (that would need the
 * limit raised while the program runs).  0 or -errno. */
int slots_make_eventfds(const struct slots_place *pl);
/* The program's soft limit back, if it was raised.  0 or -errno. */
int slots_restore_limit(struct slots_place *pl);
#endif
