/* `sandpit bench`: what the sandbox costs, measured in one run on this
 * machine against native and against the alternatives a user would
 * consider.  Every figure is a set of samples (batches, or whole runs);
 * a row reports their median, p10 and p90, and its ratio to the native
 * row of the same name.
 *
 * This header is the bench's bottom floor (bench/bench.c): the run's
 * configuration, its rows, and what every group uses.  Above it the groups
 * (bench/groups.h), the report (bench/report.h), and bench/suite.h, which
 * runs the groups asked for; the command (loader/bench.c) only parses
 * options. */
#ifndef SANDPIT_BENCH_H
#define SANDPIT_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>

enum bench_unit {
	BENCH_NS,    /* time, in nanoseconds */
	BENCH_BYTES, /* memory */
	BENCH_COUNT, /* tasks */
};

/* The system calls a row's work made, counted (bench/syscount.c), by who
 * made them: the program's own threads (P before the sandbox, U after),
 * the trusted threads, the trusted process, and `sandpit run`'s own
 * process around the program. */
enum bench_side { SIDE_U, SIDE_T, SIDE_B, SIDE_CMD, BENCH_NSIDES };

#define BENCH_TOP_CALLS 6

struct bench_syscalls {
	int state;              /* 0 not counted for this row, 1 counted, -1 could not be */
	double v[BENCH_NSIDES]; /* per unit of the row: per call, or per run */
	struct {
		int nr;         /* -1: none */
		double v;
	} top[BENCH_NSIDES][BENCH_TOP_CALLS]; /* each side's most frequent calls */
	char why[120];          /* state -1: why not */
};

struct bench_row {
	const char *group; /* "per-call", "alternatives", "start-up", ... */
	const char *name;  /* what is measured: "getppid", "sha256sum 200 MB" */
	const char *mode;  /* "native", "strict", "filter", or an alternative */
	const char *note;  /* how, in a few words; may be NULL */
	enum bench_unit unit;
	double *v;         /* the samples */
	int n, cap;
	char skipped[160]; /* no samples: not measurable on this machine, and why */
	double median, p10, p90, ratio; /* by bench_finish; ratio 0: no native row */
	struct bench_syscalls calls;    /* from a counted run of the same work */
	int via_b;                      /* a per-call row whose call the trusted process checks */
};

struct bench_cfg {
	int quick;          /* seconds, not minutes: few rounds, small files */
	int rounds;         /* each group is run this many times, modes interleaved */
	double batch_ns;    /* a per-call batch lasts about this long */
	int batches;        /* per-call batches a child measures per round */
	const char *self;   /* the sandpit executable, for `sandpit run` */
	const char *tmpdir; /* scratch files (the data the programs read) */
	int verbose;        /* progress on stderr */
	double seconds;     /* how long the run took, for the output */
	double busy, steal; /* share of all CPUs' time busy (the bench's own
			     * work included) and stolen by the host meanwhile */
};

/* Every row of this run, in the order they were first given a sample. */
struct bench_row *bench_row(const char *group, const char *name, const char *mode,
			    enum bench_unit unit, const char *note);
int bench_add(struct bench_row *r, double v);
struct bench_row *bench_find(const char *name, const char *mode);
int bench_nrows(void);
struct bench_row *bench_row_at(int i);
void bench_finish(void); /* medians, quantiles, ratios */
void bench_progress(const struct bench_cfg *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* the row names DESIGN §10's targets name (bench/report.c checks them) */
#define BENCH_PYTHON_IMPORTS "python3 -c 'import json, email, http.client'"
#define BENCH_TAR_PREFIX "tar cf - "
#define BENCH_FLOOR_ROW "round trip via a 2nd process"
#define BENCH_FLOOR_CPUS_ROW "word round trip, two CPUs"
#define BENCH_TRUE_ROW "/bin/true, fork+exec+wait"
#define BENCH_BUSY_SUFFIX ", busy CPUs"

/* shared by the groups */
#define BENCH_CHILD_TIMEOUT 300 /* seconds: a hung child is killed by its alarm */
double bench_now_ns(void);
/* Times `batches` batches of fn(n, arg), n calls each, sized to last about
 * batch_ns, into out[] as ns per call. */
void bench_batches(void (*fn)(long n, void *arg), void *arg, double batch_ns, int batches,
		   double *out);
/* Calls of fn per batch so that a batch lasts about want ns. */
long bench_calibrate(void (*fn)(long n, void *arg), void *arg, double want);
/* Zeroed memory shared with the children forked after it. */
void *bench_shared(size_t size);
/* fn(arg) in a forked child, its return value the exit status; then, in the
 * bench, parent(pid, arg) if not NULL; bench_child waits and returns 0 if
 * the child exited 0, BENCH_UNAVAILABLE if it exited with that (a kernel
 * feature this machine lacks), else -1 with a message. */
#define BENCH_UNAVAILABLE 3
int bench_child(int (*fn)(void *arg), void *arg, const char *what,
		int (*parent)(pid_t pid, void *arg));

/* Where a whole program's input and output go (bench_program): stdin from
 * `in`, or /dev/null; stdout into a pipe the bench drains, so that nothing
 * can take a short cut for /dev/null (GNU tar does), or to /dev/null itself
 * with out_null; stderr to /dev/null (kept with --verbose), or with err
 * caught there instead, NUL-terminated, its first errlen - 1 bytes. */
struct bench_io {
	const char *in;
	int out_null;
	char *err;
	size_t errlen;
};
/* One run of av (av[0] a path), timed from outside, fork to wait: its wall
 * time in ns; -1 if it could not be run or did not exit 0, with a message
 * naming `what` on stderr, or with io->err given, that message there when
 * the program wrote nothing to stderr.  *pid (if not NULL): its process. */
double bench_program(const struct bench_cfg *c, const char *what, const char *const *av,
		     const struct bench_io *io, pid_t *pid);

/* A system call the patcher cannot patch, for the bench's missed-syscall
 * rows and the selftests that attack that net.  Code mapped executable
 * after sandpit_start is patched before it runs; this layout is what that
 * patching has to leave alone.
 *
 * `mov $nr,%eax; syscall; ret` (with the caller's rdi, rsi, rdx) mapped
 * after start, laid out so that the patcher cannot patch it: the syscall and
 * the byte after it are both branch targets, so no 5-byte jump fits without
 * splitting one.  What the missed-syscall net (DESIGN §3) is for.  NULL if
 * the mapping failed. */
typedef long (*missed_fn)(long, long, long);
static inline missed_fn missed_code(long nr)
{
	uint8_t code[] = {
		0xb8, 0, 0, 0, 0, /* 0: mov $nr,%eax */
		0xeb, 0x00,       /* 5: jmp 7 */
		0x0f, 0x05,       /* 7: syscall */
		0xc3,             /* 9: ret */
		0xeb, 0xfd,       /* 10: jmp 9, never run */
	};
	uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return NULL;
	memcpy(code + 1, &nr, 4);
	memcpy(page, code, sizeof(code));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
		return NULL;
	return (missed_fn)page;
}

/* rdtsc between two jumps, so that no patch window fits around it, mapped
 * like missed_code: the counter in rax (edx:eax).  In strict mode it faults
 * and is emulated (the net for clock reads the patcher leaves); offset
 * UNPATCHED_RDTSC_AT holds the instruction.  NULL if the mapping failed. */
#define UNPATCHED_RDTSC_AT 2
typedef uint64_t (*rdtsc_fn)(void);
static inline rdtsc_fn unpatched_rdtsc(void)
{
	static const uint8_t code[] = {
		0xeb, 0x00,             /* 0: jmp 2 */
		0x0f, 0x31,             /* 2: rdtsc */
		0xeb, 0x00,             /* 4: jmp 6 */
		0x48, 0xc1, 0xe2, 0x20, /* 6: shl $32,%rdx */
		0x48, 0x09, 0xd0,       /* 10: or %rdx,%rax */
		0xc3,                   /* 13: ret */
	};
	uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return NULL;
	memcpy(page, code, sizeof(code));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
		return NULL;
	return (rdtsc_fn)page;
}
#endif
