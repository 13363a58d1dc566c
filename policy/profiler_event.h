/* What the profiler's BPF program (policy/profiler.bpf.c) and `sandpit
 * profile` (loader/profile.c) share: the records of the ring buffer and
 * the states of a traced task.  Plain kernel types only: this header is
 * compiled for the BPF target too. */
#ifndef SANDPIT_PROFILER_EVENT_H
#define SANDPIT_PROFILER_EVENT_H

#include <linux/types.h>

#define PROF_NR_SLOTS  512        /* x86-64 numbers counted one by one (POLICY_DEFAULT_NR) */
#define PROF_PATH_MAX  4096       /* PATH_MAX, the NUL included */
#define PROF_MAX_TASKS 16384      /* tasks traced at once */
#define PROF_RINGBUF   (16 << 20) /* bytes */

/* the value of a task in the `traced` map */
enum prof_task_state {
	PROF_TASK_PRE_EXEC = 1, /* the profiler's child, before its execve of PROGRAM */
	PROF_TASK_RUNNING,      /* PROGRAM, its threads and its children */
};

enum prof_event_kind {
	PROF_EV_PATH = 1, /* a call with a path argument (or fchdir), at its return */
	PROF_EV_FORK,     /* a traced task created a task: ret is its tid */
};

#define PROF_FORK_THREAD 1 /* PROF_EV_FORK flags: the new task shares the process */

struct prof_event {
	__u32 kind;     /* enum prof_event_kind */
	__u32 tid;      /* the calling task */
	__u32 tgid;     /* its process */
	__s32 nr;       /* the system call */
	__s64 dirfd;    /* the directory argument, or AT_FDCWD; fchdir: the descriptor */
	__u64 flags;    /* open(2) flags for the opens, AT_* flags for the *at calls */
	__s64 ret;      /* what the call returned */
	__u32 path_len; /* bytes of path with its NUL; 0: the path could not be read */
	__u32 pad;
	char path[PROF_PATH_MAX];
};

#define PROF_EVENT_HEAD __builtin_offsetof(struct prof_event, path)

#endif
