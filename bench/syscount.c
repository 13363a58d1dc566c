/* Counting system calls for the bench (see syscount.h): the BPF counter
 * loaded through its libbpf skeleton, windows, and a window's counts
 * split by side.
 *
 * Who is who.  The counter records, for every task it followed, the
 * process that created it; the bench says which process P is (its own
 * child, or that child's child under `sandpit run`).  In P, the main
 * thread is the program's (P before sandpit_start, U after: the bench's
 * children and /bin/true have no other thread of their own); every other
 * thread of P is a trusted thread T, which sandpit_start clones for it.
 * The trusted process B names itself "sandpit-B"; a process between P
 * and B (the intermediate of B's double fork) is B's too; any other
 * process P made is the program's.  The rest (the `sandpit run` command
 * around P, and its planners) is the command's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench/syscount.h"
#include "loader/tracepoint.h"
#include "policy/syscount_event.h"
#include "syscount.skel.h"

static struct syscount *skel;
static char why[256];
static unsigned last_window;

const char *syscount_why(void)
{
	return why[0] ? why : "the counter was not started";
}

int syscount_begin(void)
{
	enum { TP_ENTER, TP_RETURN, TP_FORK, TP_EXIT, TP_N };
	struct tracepoint tp[TP_N] = {
		[TP_ENTER] = { "raw_syscalls", "sys_enter", { "id", NULL }, 0, { 0 } },
		[TP_RETURN] = { "raw_syscalls", "sys_exit", { "id", "ret" }, 0, { 0 } },
		[TP_FORK] = { "sched", "sched_process_fork", { "child_pid", NULL }, 0, { 0 } },
		[TP_EXIT] = { "sched", "sched_process_exit", { NULL, NULL }, 0, { 0 } },
	};
	int rc;

	why[0] = 0;
	if (skel)
		return 0;
	rc = tracepoints_find(tp, TP_N, why, sizeof(why));
	if (rc < 0) {
		char was[sizeof(why)];
		snprintf(was, sizeof(was), "%s", why[0] ? why : strerror(-rc));
		snprintf(why, sizeof(why), "%s%.200s", geteuid() ? "not root: " : "", was);
		return -1;
	}
	/* the records as syscount.bpf.c declares them */
	if (tp[TP_ENTER].off[0] != 8 || tp[TP_RETURN].off[0] != 8 || tp[TP_RETURN].off[1] != 16 ||
	    tp[TP_FORK].off[0] < 8) {
		snprintf(why, sizeof(why), "this kernel's raw_syscalls or sched_process_fork records "
					   "are not laid out as the counter expects");
		return -1;
	}
	tracepoint_libbpf_quiet();
	if (!(skel = syscount__open())) {
		snprintf(why, sizeof(why), "cannot open the BPF counter: %s", strerror(errno));
		return -1;
	}
	skel->rodata->fork_child_pid_off = tp[TP_FORK].off[0];
	rc = syscount__load(skel);
	if (rc < 0) {
		int perm = rc == -EPERM || rc == -EACCES;
		snprintf(why, sizeof(why), "cannot load BPF: %s%s", strerror(-rc),
			 perm ? ", not root (CAP_BPF and CAP_PERFMON needed)" : "");
		goto fail;
	}
	/* the children write the window into the mapping libbpf made of
	 * .bss; a copy that is not the map's would count nothing */
	if (!(bpf_map__map_flags(skel->maps.bss) & BPF_F_MMAPABLE)) {
		snprintf(why, sizeof(why), "this kernel cannot map BPF globals");
		goto fail;
	}
	skel->bss->window = 0;
	skel->bss->bench_tgid = getpid();
	if (tracepoint_attach(skel->progs.process_exit, &tp[TP_EXIT], &skel->links.process_exit, why,
			      sizeof(why)) ||
	    tracepoint_attach(skel->progs.process_fork, &tp[TP_FORK], &skel->links.process_fork, why,
			      sizeof(why)) ||
	    tracepoint_attach(skel->progs.sys_enter, &tp[TP_ENTER], &skel->links.sys_enter, why,
			      sizeof(why)) ||
	    tracepoint_attach(skel->progs.sys_exit, &tp[TP_RETURN], &skel->links.sys_exit, why,
			      sizeof(why)))
		goto fail;
	return 0;
fail:
	syscount__destroy(skel);
	skel = NULL;
	return -1;
}

void syscount_end(void)
{
	if (skel)
		syscount__destroy(skel);
	skel = NULL;
}

void syscount_not_counted(struct bench_syscalls *out, const char *reason)
{
	memset(out, 0, sizeof(*out));
	for (int s = 0; s < BENCH_NSIDES; s++)
		for (int j = 0; j < BENCH_TOP_CALLS; j++)
			out->top[s][j].nr = -1;
	out->state = -1;
	snprintf(out->why, sizeof(out->why), "%s", reason);
}

unsigned syscount_new_window(void)
{
	return ++last_window;
}

void syscount_window(unsigned w)
{
	if (!skel)
		return;
	__atomic_store_n(&skel->bss->window, w, __ATOMIC_SEQ_CST);
}

void syscount_settle(void)
{
	__u32 key;
	for (int i = 0; skel && i < 1000; i++) {
		if (bpf_map_get_next_key(bpf_map__fd(skel->maps.followed), NULL, &key) < 0)
			return;
		usleep(1000);
	}
}

/* ---- a window's records ---- */

/* call numbers told apart in a side's most frequent; the last stands for
 * itself and every number above it (none on x86-64 but x32's) */
#define TOP_NRS 512

struct rec {
	struct syscount_key k;
	struct syscount_val v;
};

/* the process that created process (or task) t, or 0; -1 not recorded */
static long creator(int fd, pid_t t)
{
	__u32 key = t, val;
	return bpf_map_lookup_elem(fd, &key, &val) < 0 ? -1 : (long)val;
}

/* B's: named so, or between P and a process so named */
static int is_b(int cfd, const struct rec *r, int n, pid_t tgid, pid_t p)
{
	for (int i = 0; i < n; i++)
		if (r[i].v.tgid == (__u32)tgid && !strncmp(r[i].v.comm, "sandpit-B", 9))
			return 1;
	/* an intermediate: a process made by P that made a B */
	for (int i = 0; i < n; i++) {
		if (strncmp(r[i].v.comm, "sandpit-B", 9))
			continue;
		for (long x = r[i].v.tgid, depth = 0; x > 0 && depth < 8; depth++) {
			long up = creator(cfd, x);
			if (up == p)
				break;
			if (up == tgid)
				return 1;
			x = up;
		}
	}
	return 0;
}

/* P's process or one of its descendants */
static int is_programs(int cfd, pid_t tgid, pid_t p)
{
	for (long x = tgid, depth = 0; x > 0 && depth < 16; depth++) {
		if (x == p)
			return 1;
		x = creator(cfd, x);
	}
	return 0;
}

int syscount_take(unsigned w, pid_t root, enum syscount_p which, double per,
		  struct bench_syscalls *out)
{
	int fd, cfd, n = 0, cap = 0;
	struct syscount_key k, next, *prev = NULL;
	struct rec *r = NULL;
	pid_t p = which == SYSCOUNT_P_ROOT ? root : -1;

	syscount_not_counted(out, "the counter is not loaded");
	if (!skel)
		return -1;
	fd = bpf_map__fd(skel->maps.counts);
	cfd = bpf_map__fd(skel->maps.creators);
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (next.window != w)
			continue;
		if (n == cap) {
			struct rec *nr = realloc(r, (cap = cap ? 2 * cap : 64) * sizeof(*r));
			if (!nr) {
				free(r);
				return -1;
			}
			r = nr;
		}
		r[n].k = next;
		if (bpf_map_lookup_elem(fd, &next, &r[n].v) == 0)
			n++;
	}
	for (int i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &r[i].k);
	/* `sandpit run`'s P: the process the command made that is, or made,
	 * the one named sandpit-B */
	for (int i = 0; i < n && p < 0; i++) {
		if (strncmp(r[i].v.comm, "sandpit-B", 9))
			continue;
		for (long x = r[i].v.tgid, depth = 0; x > 0 && depth < 8; depth++) {
			long up = creator(cfd, x);
			if (up == root) {
				p = x;
				break;
			}
			x = up;
		}
	}
	static double by_nr[BENCH_NSIDES][TOP_NRS];
	memset(by_nr, 0, sizeof(by_nr));
	for (int i = 0; i < n; i++) {
		pid_t tgid = r[i].v.tgid, tid = r[i].k.tid;
		enum bench_side s;
		if (tgid == p)
			s = tid == p ? SIDE_U : SIDE_T;
		else if (p > 0 && is_b(cfd, r, n, tgid, p))
			s = SIDE_B;
		else if (p > 0 && is_programs(cfd, tgid, p))
			s = SIDE_U;
		else
			s = SIDE_CMD;
		out->v[s] += r[i].v.calls;
		by_nr[s][r[i].k.nr < TOP_NRS ? r[i].k.nr : TOP_NRS - 1] += r[i].v.calls;
	}
	/* each side's most frequent numbers */
	for (int s = 0; s < BENCH_NSIDES; s++)
		for (int j = 0; j < BENCH_TOP_CALLS; j++) {
			int best = -1;
			for (int nr = 0; nr < TOP_NRS; nr++)
				if (by_nr[s][nr] > 0 && (best < 0 || by_nr[s][nr] > by_nr[s][best]))
					best = nr;
			out->top[s][j].nr = best;
			out->top[s][j].v = best < 0 ? 0 : by_nr[s][best] / (per > 0 ? per : 1);
			if (best >= 0)
				by_nr[s][best] = 0;
		}
	free(r);
	if (skel->bss->lost) {
		snprintf(why, sizeof(why), "the counter lost %llu tasks or records",
			 (unsigned long long)skel->bss->lost);
		syscount_not_counted(out, why);
		return -1;
	}
	for (int s = 0; s < BENCH_NSIDES; s++)
		out->v[s] /= per > 0 ? per : 1;
	out->state = 1;
	out->why[0] = 0;
	return 0;
}
