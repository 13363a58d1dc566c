/* Counting system calls (bench/syscount.c): the bench's BPF counter
 * (policy/syscount.bpf.c) follows every task a child of the bench is or
 * creates, and counts their calls per task in numbered windows.  A window
 * is opened and closed by a store into memory the BPF program reads, so a
 * sandboxed child can mark its loop without a call of its own.  Where
 * BPF cannot be used (not root, no CAP_BPF, no tracepoints) nothing is
 * counted and syscount_why() says why; the bench goes on. */
#ifndef SANDPIT_BENCH_SYSCOUNT_H
#define SANDPIT_BENCH_SYSCOUNT_H

#include <sys/types.h>

#include "bench/bench.h"

/* Loads and attaches the counter for one counted pass: 0, or -1 and
 * syscount_why() says why.  Only children forked after it are followed. */
int syscount_begin(void);
/* Detaches and unloads it: the timed runs after it go at native speed. */
void syscount_end(void);
/* Why the last syscount_begin failed (a few words). */
const char *syscount_why(void);

/* out marked as not counted, for the reason given */
void syscount_not_counted(struct bench_syscalls *out, const char *why);

/* A window number not used before in this pass. */
unsigned syscount_new_window(void);
/* Opens window w (0: counting stops): a store, no system call, so a child
 * may call it in the sandbox. */
void syscount_window(unsigned w);

/* Waits, up to a second, until every task followed has ended: B may
 * outlive the process the bench waited for by a few calls. */
void syscount_settle(void);

/* Who P is among the processes of a window. */
enum syscount_p {
	SYSCOUNT_P_ROOT,  /* the bench's child itself (it calls sandpit_start, or execs the program) */
	SYSCOUNT_P_CHILD, /* the child of the bench's child that made B: `sandpit run`'s P */
};
/* The calls of window w, by side, divided by `per` (the loop's
 * iterations, or 1), into out (state 1); the window's records are dropped.
 * -1 (out->state -1) if the counter lost tasks. */
int syscount_take(unsigned w, pid_t root, enum syscount_p p, double per,
		  struct bench_syscalls *out);
#endif
