/* What `sandpit bench`'s system-call counter (policy/syscount.bpf.c) and
 * the bench (bench/syscount.c) share.  Plain kernel types only: this
 * header is compiled for the BPF target too. */
#ifndef SANDPIT_SYSCOUNT_EVENT_H
#define SANDPIT_SYSCOUNT_EVENT_H

#include <linux/types.h>

#define SYSCOUNT_MAX_TASKS 4096  /* tasks followed at once */
#define SYSCOUNT_MAX_KEYS  16384 /* (task, window) pairs counted */

/* the calls of one number by one task in one window */
struct syscount_key {
	__u32 tid;
	__u32 window;
	__u32 nr;
};

struct syscount_val {
	__u64 calls;
	__u32 tgid;   /* the task's process */
	__u32 ptgid;  /* the process that created the task (0: a child of the bench) */
	char comm[16]; /* the task's name at its last call */
};
#endif
