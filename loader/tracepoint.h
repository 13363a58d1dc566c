/* Tracepoints for the command's BPF programs (`sandpit profile`'s
 * profiler, `sandpit bench`'s system-call counter): their ids and record
 * layouts from tracefs, and a program attached to one through
 * perf_event_open (no kernel BTF needed).  libbpf messages are kept here
 * too, so that a failed load can say why. */
#ifndef SANDPIT_LOADER_TRACEPOINT_H
#define SANDPIT_LOADER_TRACEPOINT_H

#include <stddef.h>

struct bpf_program;
struct bpf_link;

struct tracepoint {
	const char *cat, *name; /* "raw_syscalls", "sys_enter" */
	const char *field[2];   /* fields whose offsets are wanted, or NULL */
	int id;
	int off[2];             /* their offsets in the record, -1 if absent */
};

/* The ids and offsets of tp[0..n) from tracefs, wherever it is mounted;
 * where it is not, a helper child mounts it in a mount namespace of its
 * own.  0, or -errno with the reason in err. */
int tracepoints_find(struct tracepoint *tp, int n, char *err, size_t errlen);

/* prog attached to tp (*link set), or -errno with the reason in err. */
int tracepoint_attach(struct bpf_program *prog, const struct tracepoint *tp,
		      struct bpf_link **link, char *err, size_t errlen);

/* libbpf's messages: the last warning kept for tracepoint_libbpf_last(),
 * all of them on stderr with SANDPIT_DEBUG=libbpf */
void tracepoint_libbpf_quiet(void);
const char *tracepoint_libbpf_last(void);
#endif
