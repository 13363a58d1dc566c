/* The profiler's BPF side (`sandpit profile`, loader/profile.c): counts
 * every system call the traced tasks make, and reports the calls with a
 * path argument with that path, their flags and their result.  Tasks are
 * traced by tid: the profiler puts its child in `traced` before the child
 * execs PROGRAM, and every task a traced task creates (thread or process)
 * is traced too.  No CO-RE and no kernel BTF: only tracepoints, whose
 * records are declared by hand as the kernel's format files give them. */
#include <linux/types.h>
#include <linux/bpf.h>
#include <asm/unistd.h>
#include <bpf/bpf_helpers.h>

#include "policy/profiler_event.h"
#include "profiler_paths.h" /* generated */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define AT_FDCWD (-100)
#define CLONE_THREAD 0x00010000

/* raw_syscalls:sys_enter and sys_exit (the format files; the profiler
 * checks the offsets before it loads this) */
struct sys_enter_rec {
	__u64 common;
	long id;
	unsigned long args[6];
};

struct sys_exit_rec {
	__u64 common;
	long id;
	long ret;
};

/* where sched:sched_process_fork keeps child_pid: it moved between kernels
 * (6.1: after two char[16] comms; later: after __data_loc strings), so the
 * profiler reads it from the format file */
const volatile __u32 fork_child_pid_off = 0;

/* counters the profiler reads when the program is done */
__u64 calls[PROF_NR_SLOTS];
__u64 calls_beyond;     /* numbers from PROF_NR_SLOTS on (x32, int $0x80 numbers) */
__u64 lost_events;      /* the ring buffer was full */
__u64 lost_tasks;       /* `traced` was full: a task went untraced */
__u64 unreadable_paths; /* a path argument could not be read */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROF_MAX_TASKS);
	__type(key, __u32);
	__type(value, __u32);
} traced SEC(".maps");

/* a call between its entry and its return: the path is read at the return,
 * when the kernel has faulted its page in (a tracepoint cannot fault) */
struct pending {
	long nr;
	unsigned long args[6];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROF_MAX_TASKS);
	__type(key, __u32);
	__type(value, struct pending);
} inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PROF_RINGBUF);
} events SEC(".maps");

/* an event is built here (too big for the stack), then copied out whole */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct prof_event);
} scratch SEC(".maps");

/* The path argument, its directory and flags, of the calls whose path is
 * recorded (profiler_paths.h, generated from policy/syscall_kinds.c), and
 * fchdir's descriptor (it changes the directory relative paths start
 * from); 0 for the others. */
static __always_inline int path_call(const struct pending *p, unsigned long *path, long *dirfd,
				     __u64 *flags)
{
	const unsigned long *a = p->args;

	*dirfd = AT_FDCWD;
	*flags = 0;
	switch (p->nr) {
#define PATH_CALL(nr, path_arg, dirfd_arg, flags_arg, flags_in_memory, oflags, exec)        \
	case nr:                                                                             \
		*path = a[path_arg];                                                         \
		if ((dirfd_arg) >= 0)                                                        \
			*dirfd = (int)a[(dirfd_arg) < 0 ? 0 : (dirfd_arg)];                  \
		*flags = (oflags);                                                           \
		if ((flags_arg) >= 0 && (flags_in_memory)) {                                 \
			if (bpf_probe_read_user(flags, sizeof(*flags),                       \
						(void *)a[(flags_arg) < 0 ? 0 : (flags_arg)]) < 0) \
				*flags = 0;                                                  \
		} else if ((flags_arg) >= 0) {                                               \
			*flags = a[(flags_arg) < 0 ? 0 : (flags_arg)];                        \
		}                                                                            \
		return 1;
	PROF_PATH_CALLS(PATH_CALL)
#undef PATH_CALL
	case __NR_fchdir:
		*dirfd = (int)a[0];
		*path = 0;
		return 1;
	default:
		return 0;
	}
}

/* a call that runs a program: its path is read at the entry */
static __always_inline int exec_call(long nr)
{
	switch (nr) {
#define EXEC_CALL(nr, path_arg, dirfd_arg, flags_arg, flags_in_memory, oflags, exec) \
	case nr:                                                                      \
		return exec;
	PROF_PATH_CALLS(EXEC_CALL)
#undef EXEC_CALL
	default:
		return 0;
	}
}

static __always_inline int wanted_at_exit(long nr)
{
	struct pending p = { .nr = nr };
	unsigned long path;
	long dirfd;
	__u64 flags;

	return nr == __NR_clone || nr == __NR_clone3 || path_call(&p, &path, &dirfd, &flags);
}

/* Sends the path event of call p (returning ret). */
static __always_inline void send_path(const struct pending *p, __u64 id, long ret)
{
	__u32 zero = 0;
	unsigned long path = 0;
	long dirfd;
	__u64 flags;

	if (!path_call(p, &path, &dirfd, &flags))
		return;
	struct prof_event *e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return;
	e->kind = PROF_EV_PATH;
	e->tid = (__u32)id;
	e->tgid = id >> 32;
	e->nr = p->nr;
	e->dirfd = dirfd;
	e->flags = flags;
	e->ret = ret;
	e->pad = 0;
	long n = 1;
	e->path[0] = 0;
	if (path) {
		n = bpf_probe_read_user_str(e->path, sizeof(e->path), (void *)path);
		if (n <= 0) {
			__sync_fetch_and_add(&unreadable_paths, 1);
			n = 0;
		}
	}
	if (n > PROF_PATH_MAX)
		n = PROF_PATH_MAX;
	e->path_len = n;
	if (bpf_ringbuf_output(&events, e, PROF_EVENT_HEAD + n, 0) < 0)
		__sync_fetch_and_add(&lost_events, 1);
}

SEC("tracepoint/raw_syscalls/sys_enter")
int sys_enter(struct sys_enter_rec *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, *state = bpf_map_lookup_elem(&traced, &tid);
	long nr = ctx->id;

	if (!state || *state != PROF_TASK_RUNNING)
		return 0; /* the profiler's child makes only its execve before it runs PROGRAM */
	if ((unsigned long)nr < PROF_NR_SLOTS) {
		unsigned long slot = nr;
		/* clang would drop a mask it knows is redundant; the verifier
		 * needs one it can see */
		asm volatile("" : "+r"(slot));
		__sync_fetch_and_add(&calls[slot & (PROF_NR_SLOTS - 1)], 1);
	}
	else
		__sync_fetch_and_add(&calls_beyond, 1);
	if (!wanted_at_exit(nr) && !exec_call(nr))
		return 0;

	struct pending p = { .nr = nr };
	for (int i = 0; i < 6; i++)
		p.args[i] = ctx->args[i];
	/* an exec that works leaves no old memory to read its path from at
	 * the return: read it now (its result is not known) */
	if (exec_call(nr))
		send_path(&p, id, 0);
	else
		bpf_map_update_elem(&inflight, &tid, &p, BPF_ANY);
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_exit")
int sys_exit(struct sys_exit_rec *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, *state = bpf_map_lookup_elem(&traced, &tid);

	if (!state)
		return 0;
	if (*state == PROF_TASK_PRE_EXEC) {
		/* from the return of the execve of PROGRAM on, everything counts */
		if (ctx->id == __NR_execve && ctx->ret == 0)
			*state = PROF_TASK_RUNNING;
		return 0;
	}

	struct pending *p = bpf_map_lookup_elem(&inflight, &tid);
	if (!p)
		return 0;
	if (p->nr == ctx->id && !exec_call(p->nr))
		send_path(p, id, ctx->ret);
	bpf_map_delete_elem(&inflight, &tid);
	return 0;
}

/* Runs in the task that creates the new one, inside its clone, fork or
 * vfork: its pending call says whether the new task is a thread. */
SEC("tracepoint/sched/sched_process_fork")
int process_fork(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, zero = 0, *state = bpf_map_lookup_elem(&traced, &tid);
	__u32 running = PROF_TASK_RUNNING;
	__s32 child = 0;

	if (!state || *state != PROF_TASK_RUNNING)
		return 0;
	if (bpf_probe_read_kernel(&child, sizeof(child), (char *)ctx + fork_child_pid_off) < 0 ||
	    child <= 0)
		return 0;
	if (bpf_map_update_elem(&traced, &child, &running, BPF_NOEXIST) < 0) {
		__sync_fetch_and_add(&lost_tasks, 1);
		return 0;
	}

	__u64 flags = 0;
	struct pending *p = bpf_map_lookup_elem(&inflight, &tid);
	if (p && p->nr == __NR_clone)
		flags = p->args[0];
	else if (p && p->nr == __NR_clone3 &&
		 bpf_probe_read_user(&flags, sizeof(flags), (void *)p->args[0]) < 0)
		flags = 0;

	struct prof_event *e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	e->kind = PROF_EV_FORK;
	e->tid = tid;
	e->tgid = id >> 32;
	e->nr = p ? p->nr : -1;
	e->dirfd = 0;
	e->flags = flags & CLONE_THREAD ? PROF_FORK_THREAD : 0;
	e->ret = child;
	e->path_len = 0;
	if (bpf_ringbuf_output(&events, e, PROF_EVENT_HEAD, 0) < 0)
		__sync_fetch_and_add(&lost_events, 1);
	return 0;
}

/* a tid that is gone may come back as somebody else's */
SEC("tracepoint/sched/sched_process_exit")
int process_exit(void *ctx __attribute__((unused)))
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&traced, &tid);
	bpf_map_delete_elem(&inflight, &tid);
	return 0;
}
