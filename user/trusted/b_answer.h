/* The path calls the trusted process B answers itself (a stat, statx,
 * access, readlink, getxattr, statfs or listxattr), from the descriptor its resolution opened
 * (RESOLVE_NO_SYMLINKS, the last component not followed where the call
 * does not follow it; after a walk through links, the checked text opened
 * the same way), so that the kernel walks the path once and what is
 * answered is the object B checked: a directory swapped for a link after
 * the check fails (ELOOP) instead of leading T's second walk out of the
 * grants.  B has P's credentials (forked from P after its capabilities
 * were dropped).  Only B includes it. */
#ifndef SANDPIT_B_ANSWER_H
#define SANDPIT_B_ANSWER_H
#include <stdint.h>

struct secure_page;

enum answer_kind {
	ANSWER_NONE,
	ANSWER_STAT,
	ANSWER_STATX,
	ANSWER_ACCESS,
	ANSWER_READLINK,
	ANSWER_XATTR,
	ANSWER_STATFS,
	ANSWER_LISTXATTR,
};

/* what B answers of call nr itself (ANSWER_NONE: T makes the call) */
enum answer_kind b_answer_kind(long nr);
/* The EINVALs the kernel gives before it looks at the path (path_read 0)
 * or just after reading it (1): -EINVAL, or 0 */
long b_einval_first(const struct secure_page *sp, int path_read);
/* The answer to slot s's call about the object B checked, written into
 * sp's data: -SP_ANSWERED, a -errno, or 0 when T makes the call after all. */
long b_answer(int s, enum answer_kind kind, int fd, const char *leaf, struct secure_page *sp);
/* An answer B worked out itself: the call's result and len bytes for the
 * program's buffer, argument arg (len 0: none).  -SP_ANSWERED. */
long b_answered(struct secure_page *sp, long result, const void *bytes, uint32_t len,
		uint32_t arg);
#endif
