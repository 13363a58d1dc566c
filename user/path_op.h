/* Namespace calls inside write grants, made by the trusted process B itself
 * (mkdir, mknod of a FIFO, rmdir, unlink, rename, link, symlink, truncate,
 * chmod, utimensat).  Runs in B. */
#ifndef SANDPIT_PATH_OP_H
#define SANDPIT_PATH_OP_H
#include "user/secure_mem.h"

struct trusted_process_config;
struct policy_proc_arg;

/* The call in sp (B's private copy of U's request, kind PK_PATH_OP): B
 * resolves each path, checks it against the write grants, opens the parent
 * directory with openat2(RESOLVE_NO_SYMLINKS) and makes the call on the
 * last component relative to it.  Returns SP_V_ACK (done, 0), a negative
 * errno (the kernel's, or -EACCES for what the policy refuses), or 0 with
 * the call rewritten in sp for T to make (utimensat on a descriptor). */
long path_op(const struct trusted_process_config *cfg, const struct policy_proc_arg *pa,
	     struct secure_page *sp);
#endif
