/* The trusted process B's resolution of U's paths, as the kernel will
 * resolve them (policy/path.c's path_resolve), from P's working directory
 * or descriptors.  Only B includes it. */
#ifndef SANDPIT_B_RESOLVE_H
#define SANDPIT_B_RESOLVE_H
#include <stddef.h>

/* the text of slot s's process's /proc/P/<what> link, which must be a
 * path: 0, -errno, or -EACCES for a socket or pipe */
int b_proc_link(int s, char *out, size_t len, const char *what);
/* Slot s's U's path made absolute from dirfd (AT_FDCWD: P's cwd) and resolved as
 * the kernel will, into out (PATH_MAX), and with fd non-NULL the
 * descriptor the resolution opened, or -1 (path_resolve_fd); with leaf
 * non-NULL too (a stat, not followed), *fd may instead be the directory
 * and *leaf the one component in it to ask about (else *leaf is "") */
int b_resolve(int s, int dirfd, const char *path, int nofollow, char *out, int *fd,
	      const char **leaf);
#endif
