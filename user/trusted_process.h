/* The trusted process B (DESIGN §1, §2 path 4): one per sandbox, forked
 * from P before the sandbox starts.  B owns the policy, copies every memory
 * argument out of P with process_vm_readv, checks the copy, writes it into
 * the secure page and lets T execute it from there. */
#ifndef SANDPIT_TRUSTED_PROCESS_H
#define SANDPIT_TRUSTED_PROCESS_H
#include <sys/types.h>
#include "user/secure_mem.h"

struct policy;

struct trusted_process_config {
	pid_t pid;                  /* P */
	int fd;                     /* B's end of T<->B (SOCK_SEQPACKET) */
	int spare_fd_lo, spare_fd_hi; /* P's sandpit descriptors: B closes them */
	struct secure_page *sp;     /* read-write in B */
	struct mailbox *mb;
	const struct policy *policy;
};

/* Fork B (via an intermediate child, so B is never a child P could wait
 * for).  Returns B's pid, or -errno.  B reports readiness by sending its
 * pid over cfg->fd's peer, which the caller reads with trusted_process_wait. */
pid_t trusted_process_spawn(const struct trusted_process_config *cfg);

/* Check one request the way B does, against policy and P's memory; writes
 * the verdict into sp.  Exposed for tests. */
long trusted_process_check(const struct trusted_process_config *cfg,
			   const struct b_request *req);
#endif
