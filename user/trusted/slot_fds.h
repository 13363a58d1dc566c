/* B's half of slots on demand: a slot's eventfds put into P's descriptor
 * table when the slot is first used, through the notifier N
 * (user/start/notifier.h; docs/design/threads-and-slots.md).  Only B
 * includes it. */
#ifndef SANDPIT_SLOT_FDS_H
#define SANDPIT_SLOT_FDS_H

struct b_proc;

/* the slots whose eventfds P has: [0, b_slots_made()) (all of them where
 * start-up made them) */
int b_slots_made(const struct b_proc *p);
/* the next slot's two eventfds made in P, at their numbers: 0, -ENOSPC
 * when every slot has them, or another -errno (P gone, B out of
 * descriptors) */
int b_slot_fds_grow(struct b_proc *p);
/* N's pidfd opened, as B starts (N waits in its notification then) */
void b_notifier_open(struct b_proc *p);
/* N let go (killed): once the last U's exit is accepted, when no U is
 * left to make a thread, and when P ends (N holds P's descriptor table:
 * P's end of T<->B hangs up only once N is gone) */
void b_notifier_release(struct b_proc *p);
#endif
