/* The bottom of the trusted process B: the configuration it was started
 * with (the tree's: the policy, the denial log's settings), its record of
 * the sandboxed process P (P's pidfd, descriptors, secure pages and slots,
 * which the watchers (b_watch.c) and the servers (b_serve.c) read and
 * write under one lock); and B's alarm, which ends P with one line.  Every
 * other file of B reads from here; this file calls nothing of B's but the
 * denial log's last count.  Only B includes it. */
#ifndef SANDPIT_B_STATE_H
#define SANDPIT_B_STATE_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "user/layout/secure_mem.h"
#include "user/trusted/b_config.h"

/* the configuration B was started with (b_set_cfg, once, before B runs):
 * of it, B reads through b_cfg only what is the tree's (the policy, the
 * log's settings, task_size, fs_by_ptrace, report_fd); what is P's is in
 * P's record */
extern const struct trusted_process_config *b_config;
static inline const struct trusted_process_config *b_cfg(void)
{
	return b_config;
}

/* B's own record of the slots: never in memory P can reach.  A slot's U
 * and T, as the kernel confirmed them when the slot started (b_watch.c),
 * 0 when free: B's own copies, never re-read from P.  With b_lock held. */
enum { SLOT_FREE, SLOT_STARTING, SLOT_ACTIVE };
#define START_MARK 0xffffffffu /* a clear-child-tid word before its thread runs */
struct b_slot {
	int state;
	int exiting; /* T said U asks to exit (its exit bell): U's end is no alarm */
	int32_t u_tid, t_tid;
	/* U asked for its T to be interrupted (watch_p) while the slot was
	 * still starting, before B knew T's tid: sent when the kernel confirms
	 * the slot's threads (watch_step).  U asks once a request, so an
	 * interrupt dropped here would leave U's handler waiting on T's call
	 * for ever. */
	char intr_pending;
};

/* B's record of one sandboxed process (its P-record), made from the
 * configuration as B starts.  A request arrives on a slot, and a slot
 * belongs to one process: a check finds the record from the slot's
 * number (b_proc_of_slot), never from anything U wrote, and reads P (its
 * memory, its /proc entries) through it.  B's functions that serve a slot
 * take its number; those of a process (its watcher, its notifier, its
 * end) take its record. */
struct b_proc {
	pid_t pid;
	int pidfd;                  /* P's, or -1 (no pidfds; before b_open_pidfd) */
	int fd;                     /* B's end of the socket pair: P's end hangs up when P ends */
	int pass_fd;                /* B's end of the descriptor hand-over (SP_V_RECV) */
	int fd_lo, fd_hi;           /* P's sandpit descriptors */
	int nslots;                 /* slots that fit sandpit's descriptor block */
	struct secure_page *sp;     /* SM_NSLOTS secure pages, read-write in B */
	struct mailbox *mb;         /* SM_NSLOTS mailboxes */
	struct sigtab *sigtab;      /* the program's own handlers */
	int exe_fd;                 /* the program's file (b_exe.c), or -1 */
	/* the notifier N (slot_fds.c): its listener (-1: every slot's
	 * eventfds were made at start-up), its pid and pidfd, the
	 * notification it waits in, whether B has let it go */
	int notif_fd;
	int32_t notif_pid;
	int notif_pidfd;
	uint64_t notif_id;
	int notif_released;
	int slots_made;             /* slots whose eventfds P has (slot_fds.c) */
	struct b_slot slots[SM_NSLOTS]; /* with b_lock held */
};

/* B's configuration set, and P's record made from it: returned */
struct b_proc *b_set_cfg(const struct trusted_process_config *c);
/* the record of the process slot s belongs to */
struct b_proc *b_proc_of_slot(int s);
/* P's pidfd opened, once as B starts; without pidfds (before 5.3) B
 * kills by pid */
void b_open_pidfd(struct b_proc *p);

extern pthread_mutex_t b_lock;
/* broadcast when a slot's start is decided or a slot is freed */
extern pthread_cond_t b_slot_freed;

/* In B only: the tid of slot `slot`'s U as the kernel confirmed it when the
 * slot started, 0 if the slot is not running.  Takes the lock. */
int32_t b_slot_u_tid(int slot);
/* In B only: whether a thread has ever run in slot `slot`, without the
 * lock; b_slot_ran records that one has (the watcher, at its start). */
int b_slot_ever_ran(int slot);
void b_slot_ran(int slot);

/* The U tid table every T's U_TID rule reads; with the lock held. */
void b_publish_tids(struct b_proc *p);
/* B has decided slot s's start (after b_publish_tids) */
void b_slot_start_decided(int s);
/* FUTEX_WAKE of every waiter on w */
void b_wake_all(uint32_t *w);

/* The fields of a /proc stat file (path) after the thread's name, from its
 * state letter on, read into buf; NULL if there are none: errno ENOENT (or
 * the open's) when it could not be opened, ESRCH when it read empty (the
 * thread went), EPROTO when it has no name in parentheses. */
const char *b_stat_fields(const char *path, char *buf, size_t len);

/* A check's argument i pointed at `at`, in the data of B's copy of the
 * page (sp): marked so, publish points it at the same place in S's data,
 * where T makes the call (if the argument still points there).  Only
 * marked arguments move: a value of the program's that happens to be an
 * address in B's copy (on B's stack, which B made where P's memory may
 * have the program's: a new thread's TLS, say) is the program's. */
static inline void b_arg_into_data(struct secure_page *sp, int i, const void *at)
{
	sp->data_args |= 1u << i;
	sp->args[i] = (uint64_t)(uintptr_t)at;
}

/* argument i of B's copy out as publish writes it into S (s) */
static inline uint64_t b_arg_for_s(const struct secure_page *out, int i, const struct secure_page *s)
{
	uint64_t a = out->args[i], lo = (uintptr_t)out->data;
	if ((out->data_args & (1u << i)) && a >= lo && a < lo + sizeof(out->data))
		return (uintptr_t)s->data + (a - lo);
	return a;
}

/* P killed (by its pidfd, else by pid) */
void b_kill_p(const struct b_proc *p);
/* one line on stderr: fmt with one long */
void b_say(const char *fmt, long a);
/* Something only the kernel's killing of a sandboxed thread, or a forged
 * word, explains: one line (slot s, why), P killed unless it is ending by
 * itself, and B ends. */
void __attribute__((noreturn)) b_slot_alarm(const char *why, int s);
#endif
