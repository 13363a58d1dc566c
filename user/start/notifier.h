/* The notifier N, a process sharing P's memory and descriptor table,
 * through which B puts a thread slot's eventfds into that table when the
 * slot is first used (docs/design/threads-and-slots.md, "Slots on
 * demand").  Start-up in P makes it; B uses it (user/trusted/slot_fds.c). */
#ifndef SANDPIT_START_NOTIFIER_H
#define SANDPIT_START_NOTIFIER_H
#include "user/start/start.h"
#include "user/trusted/b_config.h"

/* Before B is forked, with no_new_privs set and the block placed: where the
 * block lies above the program's soft limit, the policy lets the program
 * change that limit only through B, the program takes in no orphans (not
 * its pid namespace's init, no subreaper: N, an orphan, would be its
 * child), and the kernel can (its first SECCOMP_IOCTL_NOTIF_ADDFD is the
 * probe) and has pidfds, N waits in a notification that B inherits;
 * c->notif_fd, notif_id and notif_pid (N's pid) say which, and
 * c->slots_made is 1 (slot 0's eventfds are made with the block).  Else
 * c->notif_fd is -1 and every slot's eventfds are made at start-up.  Never
 * fails: without N, start-up makes them all. */
struct policy;
void start_notifier(struct start *s, const struct policy *pol, struct trusted_process_config *c);
/* P's copy of the listener closed, if it still holds it (once B is
 * forked, or when start-up fails); N ends when no one holds it. */
void start_notifier_let_go(struct start *s, const struct trusted_process_config *c);
/* A start that failed: once P and B have let the listener go, N (if this
 * start made one) waited for until it has ended. */
void start_notifier_ended(struct start *s);
/* N's pid while N lives, else 0 (the kernel clears it); then N's listener
 * or -errno, as N's start-up left it */
extern int32_t sandpit_notifier_words[2];
#endif
