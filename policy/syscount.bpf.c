/* `sandpit bench`'s system-call counter (bench/syscount.c): counts the
 * system calls of every task the bench's children are and create, per task,
 * per call number and per window.  The window is a number in this program's .bss that the
 * bench and its children write through the mapping libbpf makes of it
 * (shared across fork): a sandboxed child marks the start and the end of a
 * loop with a store, no system call.  Window 0 is not counted.  A call
 * counts in the window that is open when it returns.  No CO-RE
 * and no kernel BTF: only tracepoints, whose records the bench checks
 * against tracefs' format files. */
#include <linux/types.h>
#include <linux/bpf.h>
#include <asm/unistd.h>
#include <bpf/bpf_helpers.h>

#include "policy/syscount_event.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* where sched:sched_process_fork keeps child_pid (read from its format file) */
const volatile __u32 fork_child_pid_off = 0;

/* written by the bench: whose children are followed, and the window */
volatile __u32 bench_tgid;
volatile __u32 window;
__u64 lost; /* a task or a key that did not fit */

/* a followed task: the process that created it */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SYSCOUNT_MAX_TASKS);
	__type(key, __u32);
	__type(value, __u32);
} followed SEC(".maps");

/* every task followed this pass, gone or not: the process that created
 * it (the bench reads the processes' ancestry from it) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SYSCOUNT_MAX_TASKS);
	__type(key, __u32);
	__type(value, __u32);
} creators SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SYSCOUNT_MAX_KEYS);
	__type(key, struct syscount_key);
	__type(value, struct syscount_val);
} counts SEC(".maps");

/* raw_syscalls:sys_enter and sys_exit (the format files; the bench checks
 * the offsets before it loads this) */
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

static __always_inline void count(long nr)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, *ptgid = bpf_map_lookup_elem(&followed, &tid);
	struct syscount_key k = { .tid = tid, .window = window, .nr = (__u32)nr };

	if (!ptgid || !k.window)
		return;
	struct syscount_val *v = bpf_map_lookup_elem(&counts, &k);
	if (v) {
		__sync_fetch_and_add(&v->calls, 1);
		bpf_get_current_comm(v->comm, sizeof(v->comm));
		return;
	}
	struct syscount_val n = { .calls = 1, .tgid = id >> 32, .ptgid = *ptgid };
	bpf_get_current_comm(n.comm, sizeof(n.comm));
	if (bpf_map_update_elem(&counts, &k, &n, BPF_NOEXIST) < 0 &&
	    !(v = bpf_map_lookup_elem(&counts, &k)))
		__sync_fetch_and_add(&lost, 1);
	else if (v)
		__sync_fetch_and_add(&v->calls, 1);
}

/* A call is counted at its return: the kernel skips the entry's
 * tracepoint for a call seccomp refuses (an error, or SIGSYS), but not the
 * return's, and such a call is a kernel entry like any other.  The calls
 * that never return are counted at their entry. */
SEC("tracepoint/raw_syscalls/sys_enter")
int sys_enter(struct sys_enter_rec *ctx)
{
	if (ctx->id == __NR_exit || ctx->id == __NR_exit_group)
		count(ctx->id);
	return 0;
}

/* A new task returns from its creator's clone, fork or vfork as well,
 * with 0: that is not a call of its own. */
SEC("tracepoint/raw_syscalls/sys_exit")
int sys_exit(struct sys_exit_rec *ctx)
{
	if (ctx->ret == 0 && (ctx->id == __NR_clone || ctx->id == __NR_clone3 ||
			      ctx->id == __NR_fork || ctx->id == __NR_vfork))
		return 0;
	count(ctx->id);
	return 0;
}

/* in the creating task, before the new one first runs */
SEC("tracepoint/sched/sched_process_fork")
int process_fork(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	__s32 child = 0;

	if (tgid != bench_tgid && !bpf_map_lookup_elem(&followed, &tid))
		return 0;
	if (bpf_probe_read_kernel(&child, sizeof(child), (char *)ctx + fork_child_pid_off) < 0 ||
	    child <= 0)
		return 0;
	__u32 from = tgid == bench_tgid ? 0 : tgid;
	if (bpf_map_update_elem(&followed, &child, &from, BPF_ANY) < 0 ||
	    bpf_map_update_elem(&creators, &child, &from, BPF_ANY) < 0)
		__sync_fetch_and_add(&lost, 1);
	return 0;
}

/* a tid that is gone may come back as somebody else's */
SEC("tracepoint/sched/sched_process_exit")
int process_exit(void *ctx __attribute__((unused)))
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&followed, &tid);
	return 0;
}
