/* Start-up in P, sandpit_start's steps (user/start/sandbox.c), and the
 * files its jobs are split into: start_memory.c (S, the mailboxes, the
 * protected ranges, the seal), start_cpu.c (U's spin, T's CPU masks),
 * start_patch.c (the patching and its result), start_fail.c (how a step
 * fails).  Only start-up includes it. */
#ifndef SANDPIT_START_H
#define SANDPIT_START_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "sandpit.h"
#include "user/layout/secure_mem.h"
#include "user/layout/slots.h"
#include "user/patch/patch.h"

/* the secure memfd (secure pages and the T tid table), the mailboxes */
#define S_LEN ((size_t)SM_S_LEN)
#define MB_LEN ((size_t)SM_NSLOTS * SM_PAGE)

struct tt_table;

/* What sandpit_start's steps hand on to each other. */
struct start {
	const struct sandpit_options *opts;
	enum sandpit_mode mode;
	int auto_chose;                 /* auto mode chose it */
	char perr[512];                 /* the policy's, the table's, the filter's message */
	const struct tt_table *table;
	size_t table_len;
	int smfd;                       /* the secure pages' memfd */
	uintptr_t region;               /* T's alternate stacks, then the secure pages */
	struct secure_page *sp;         /* slot 0's */
	struct mailbox *mb;             /* slot 0's */
	int fds[SLOTS_PLACED], nslots, fd_lo, fd_hi, tb_fd, b_fd, maps_fd;
	struct slots_place place;       /* where they are; the program's RLIMIT_NOFILE */
	pid_t pid, tid;
	pid_t mid;                      /* B's intermediate child, if any, until reaped */
	int reaper;                     /* a subreaper, not one while sandpit's orphans are made */
	pid_t bpid;                     /* B, as clone said it (0 if not yet known), then as B says */
	/* what a failed start gives back besides the above (sandbox.c,
	 * give_back): N made, P's copy of its listener, B forked, B named
	 * ptracer, the handler table */
	int n_made, n_held, b_forked, ptracer;
	uint64_t caller_mask;           /* the caller's signal mask, while start-up blocks all */
	void *sigtab;
	struct patch_config pc;
	struct patch_stats ps;
	int patched;                    /* patch_process's result */
	struct timespec t0, t1;         /* around it */
};

/* start_fail.c: the message sandpit_error gives, set by start_fail, which
 * returns err; start_die, after T runs, kills the process with one line */
extern char start_errbuf[512];
int start_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void __attribute__((noreturn)) start_die(const char *what, long err);

/* start_memory.c */
int start_map_secure_memory(struct start *s);
/* what start_map_secure_memory made, given back (a start that failed) */
void start_unmap_secure_memory(struct start *s);
/* a range U may never write, remap or re-protect, in sp's list */
void start_add_range(void *sp, uintptr_t lo, uintptr_t hi);
void start_protect_ranges(struct start *s);
void start_seal_secure_memory(struct start *s);

/* start_cpu.c: U's spin for T's answer (iterations of cpu_relax), and T's
 * CPU masks in slot 0's secure page */
unsigned start_spin(void);
void start_cpu_masks(struct secure_page *sp, enum sandpit_mode mode);

/* start_patch.c */
void start_patch_code(struct start *s);
int start_finish_patching(struct start *s);
#endif
