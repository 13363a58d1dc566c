/* The trusted process B (DESIGN §1, §2 path 4): one per sandbox, forked
 * from P before the sandbox starts.  B owns the policy, copies every memory
 * argument out of P with process_vm_readv, checks the copy, writes it into
 * the secure page and lets T execute it from there.  It also hands out the
 * slots (S, sockets) of new threads and watches every U and T.  What P
 * calls of B's: its start (here) and its configuration (b_config.h); a
 * slot's page is made by slot_init.h. */
#ifndef SANDPIT_TRUSTED_PROCESS_H
#define SANDPIT_TRUSTED_PROCESS_H
#include <sys/types.h>

#include "user/trusted/b_config.h"

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
/* The intermediate child reaped now (its exit is B's orphaning): 0, or
 * -errno / -ECHILD when it did not exit with 0 */
int trusted_process_reap(pid_t mid);

/* Strict mode without FSGSBASE (cfg->fs_by_ptrace): once P has named B
 * its ptracer, B must show that it can stop P's thread by ptrace, or
 * nothing could set a thread pointer.  P's side, on its end of cfg->fd:
 * 0 or -errno. */
int trusted_process_check_ptrace(int fd);

/* A start that failed, P's side, on its end of cfg->fd: B told there is
 * nothing to serve (P's end shut for writing: B reads its end and exits
 * wherever it is in its start), and waited for until its end of the pair,
 * which only B holds, has closed: B's descriptors are gone and it is
 * exiting.  b: B's pid if known (else 0), killed if B has not ended
 * within a second.  Only a B stopped from outside, its pid unknown, is
 * not waited for past 10 s: it exits as soon as it runs again. */
void trusted_process_end(int fd, pid_t b);

/* P's word on its end of cfg->fd that it has patched and clones slot 0's
 * T next: until it, B's watchers leave slot 0 alone (nothing of it runs
 * while P patches).  0 or -EPIPE. */
int trusted_process_t_next(int fd);

#endif
