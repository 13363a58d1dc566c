/* The trusted process B's watchers (user/trusted/b_watch.c).  Each slot
 * goes from free through its start (the kernel confirms its U and T) to
 * its end (both threads gone); a U that ends without B having accepted
 * its exit was killed by the kernel, and P ends (invariant 5).  Only B
 * includes it. */
#ifndef SANDPIT_B_WATCH_H
#define SANDPIT_B_WATCH_H
#include <stdint.h>

#include "user/layout/secure_mem.h"

struct b_proc;

/* futex_waitv takes at most 128 words: a watcher per WATCH_GROUP slots (a
 * word each and the idle word), started when its first slot is used */
#define WATCH_GROUP 127
#define WATCH_GROUPS ((SM_NSLOTS + WATCH_GROUP - 1) / WATCH_GROUP)

/* Thread functions: with futex_waitv one watcher for the slots of group
 * (intptr_t)arg, without it one per slot (intptr_t)arg; and the one
 * watcher of P's socket pair (arg: P's record), which ends B when P is
 * gone. */
void *b_watch_group(void *arg);
void *b_watch_slot(void *arg);
void *b_watch_p(void *arg);

/* With the lock held, as slot s is made SLOT_STARTING: by is the slot whose
 * T makes the clone.  b_watch_wake, once the tid table is published, wakes
 * the watchers to look. */
void b_watch_starting(int s, int by);
void b_watch_wake(void);
/* P is about to clone slot 0's T: the watchers look at slot 0 from now */
void b_watch_arm_slot0(void);

/* The kernel says thread tid of p's process is gone (no such thread, or
 * the leader a zombie). */
int b_thread_gone(const struct b_proc *p, int32_t tid);
#endif
