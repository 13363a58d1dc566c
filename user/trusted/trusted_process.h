/* The trusted process B (DESIGN §1, §2 path 4): one per sandbox, forked
 * from P before the sandbox starts.  B owns the policy, copies every memory
 * argument out of P with process_vm_readv, checks the copy, writes it into
 * the secure page and lets T execute it from there.  It also hands out the
 * slots (S, sockets) of new threads and watches every U and T. */
#ifndef SANDPIT_TRUSTED_PROCESS_H
#define SANDPIT_TRUSTED_PROCESS_H
#include <stdint.h>
#include <sys/types.h>
#include "user/layout/secure_mem.h"

struct policy;

struct trusted_process_config {
	pid_t pid;                  /* P */
	int fd;                     /* B's end of the socket pair: P's end hangs up when P ends */
	int pass_fd, pass_peer;     /* B's end of the descriptor hand-over (SP_V_RECV), and P's (B closes it) */
	int fd_lo, fd_hi;           /* P's sandpit descriptors: B closes its copies */
	int nslots;                 /* slots that fit sandpit's descriptor block (user/layout/slots.h) */
	struct secure_page *sp;     /* SM_NSLOTS secure pages, read-write in B */
	struct mailbox *mb;         /* SM_NSLOTS mailboxes */
	const struct policy *policy;
	struct sigtab *sigtab;      /* the program's own handlers */
	int fs_by_ptrace;           /* strict mode without FSGSBASE: B sets U's FS base */
	uint64_t task_size;         /* the kernel's TASK_SIZE_MAX (fs_base_task_size) */
	int log, log_json;          /* --log=denials, --log-format=json: B explains refusals */
	int report_fd;              /* the command's count of refusals (denial_log.h), or -1 */
};

/* Start B, never as a child P could wait for: with sibling set (`sandpit
 * run`, whose parent is sandpit's own and waits for P alone) by one
 * clone(CLONE_PARENT), so B is P's parent's child; else, or where that is
 * refused (P is its pid namespace's init), by a fork through an
 * intermediate child that exits at once, so B is init's (or a
 * subreaper's).  Returns a handle for trusted_process_started (the
 * intermediate child's pid, or 0 when there is none), or -errno; B starts
 * while the caller goes on (with the patching).  *b is B's pid when it was
 * cloned directly, else 0.  trusted_process_started(mid, b, the other end
 * of cfg->fd) then reaps the intermediate child, if there was one, and
 * returns B's pid, which B writes when it is ready (and which must be *b
 * when that is known), or -errno. */
pid_t trusted_process_spawn(const struct trusted_process_config *cfg, int sibling, pid_t *b);
pid_t trusted_process_started(pid_t mid, pid_t b, int fd);

/* Strict mode without FSGSBASE (cfg->fs_by_ptrace): once P has named B
 * its ptracer, B must show that it can stop P's thread by ptrace, or
 * nothing could set a thread pointer.  P's side, on its end of cfg->fd:
 * 0 or -errno. */
int trusted_process_check_ptrace(int fd);

/* Fill slot `slot`'s secure page configuration and U-side state from slot
 * 0's (which sandpit_start writes).  Used by B for each new thread. */
void trusted_process_init_slot(const struct trusted_process_config *cfg, int slot);

/* In B only: the tid of slot `slot`'s U as the kernel confirmed it when the
 * slot started, 0 if the slot is not running. */
int32_t b_slot_u_tid(int slot);
/* In B only: whether a thread has ever run in slot `slot`. */
int b_slot_ever_ran(int slot);

struct policy_proc_arg;

/* In B only: a call that may wait for another process, made for slot s's
 * U (the open of a FIFO).  Between b_wait_begin and b_wait_end,
 * b_wait_call4 makes the call (-errno on failure) and ends it with -EINTR
 * when U asks to be interrupted, whether the ask comes before the call or
 * during it; b_wait_interrupted then says whether U asked since B took the
 * request (B answers -ERESTARTSYS: the kernel's answer for such a call,
 * made again unless a handler without SA_RESTART ran) or the call is to
 * be made again. */
void b_wait_begin(int slot);
long b_wait_call4(int slot, long nr, long a0, long a1, long a2);
int b_wait_interrupted(int slot);
void b_wait_end(int slot);
/* asm/x86_64/b_wait.S: the call, or -EINTR without it when *stop is set */
long b_wait_syscall4(long nr, long a0, long a1, long a2, const int *stop);

/* In B only, for the checks of user/trusted/path_op.c: U's string at addr, as
 * process_vm_readv reads it (its length or -errno); the text of P's
 * /proc/P/<what> link, which must be a path; U's path made absolute from
 * dirfd (AT_FDCWD: P's cwd) and resolved as the kernel will (path_resolve),
 * into out (PATH_MAX), and with fd non-NULL the descriptor the resolution
 * opened, or -1 (path_resolve_fd); with leaf non-NULL too (a stat, not
 * followed), *fd may instead be the directory and *leaf the one component
 * in it to ask about (else *leaf is ""); a --log=denials line for a path
 * refused. */
long b_read_string(char *buf, size_t max, uint64_t addr);
/* n bytes at addr in P, all or nothing: 0, or -EFAULT */
long b_read_mem(void *dst, uint64_t addr, size_t n);
int b_proc_link(char *out, size_t len, const char *what);
int b_resolve(int dirfd, const char *path, int nofollow, char *out, int *fd, const char **leaf);
/* a path slot s's call may not use: counted and explained (user/trusted/denial_log.c);
 * resolved is B's resolution of path, deny the `path deny` that refused it */
void b_path_denial(int s, const struct policy_proc_arg *pa, const struct secure_page *sp,
		   const char *path, const char *resolved, int access, const char *deny);
/* the same, for a write that no grant added would allow: why says what
 * refused it (a grant's root, a device node), and no grant is suggested */
void b_path_refused(int s, const struct policy_proc_arg *pa, const struct secure_page *sp,
		    const char *path, const char *resolved, const char *why);
#endif
