/* Namespace calls inside write grants, made by the trusted process B itself
 * (mkdir, mknod of a FIFO, rmdir, unlink, rename, link, symlink, truncate,
 * chmod, utimensat).  Runs in B. */
#ifndef SANDPIT_PATH_OP_H
#define SANDPIT_PATH_OP_H
#include <sys/types.h>

#include "user/layout/secure_mem.h"

struct policy_proc_arg;

/* The call in sp (B's private copy of U's request, kind PK_PATH_OP): B
 * resolves each path, checks it against the write grants, opens the parent
 * directory with openat2(RESOLVE_NO_SYMLINKS) and makes the call on the
 * last component relative to it.  Returns SP_V_ACK (done, 0), a negative
 * errno (the kernel's, or -EACCES for what the policy refuses), or 0 with
 * the call rewritten in sp for T to make (utimensat on a descriptor).  s
 * is the slot: its process's paths, and the explanation of a refusal. */
long path_op(int s, const struct policy_proc_arg *pa, struct secure_page *sp);

/* An absolute path B resolved without links, opened O_PATH with oflags
 * (O_DIRECTORY, O_NOFOLLOW for its last component) so that no link is
 * followed: a descriptor, or -errno (ELOOP, ENOTDIR: a link swapped in). */
long path_open_no_links(const char *path, int oflags);

/* the umask of slot s's process P (its main thread's, from /proc/P/status;
 * 077 before Linux 4.7), for what B makes on P's behalf */
mode_t path_p_umask(int s);
#endif
