/* Path text and resolution, as B makes them for U's path arguments
 * (policy/path.c): normalising, resolving symbolic links component by
 * component as B sees them, and names resolved from a directory object.
 * Nothing here knows the policy; policy/path_check.c checks the resolved
 * path against its grants and denies. */
#ifndef SANDPIT_POLICY_PATH_H
#define SANDPIT_POLICY_PATH_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A path U sent as bytes with its request (the mailbox's copy, B's own copy
 * of it): `len` says how long it is, `bytes` holds `cap` bytes.  Its length
 * into buf (NUL-terminated) if the bytes hold exactly that string and it
 * fits in buf (max), else -1 (then B reads the path from P). */
long path_from_copy(const char *bytes, size_t cap, uint32_t len, char *buf, size_t max);

/* Lexical only (".", "..", "//"); for grants, never for U's paths. */
int path_normalise(const char *path, char *out, size_t outlen);

#define PATH_NOFOLLOW 1 /* do not follow a symlink in the last component */
#define PATH_OPENAT2  2 /* may prove "no link on the way" with one openat2 */
#define PATH_OWN_EXE  4 /* pid's exe link is never followed: path_proc_exe */

/* Runs in B.  Joins a relative `path` to `cwd` (absolute), removes ".", ".."
 * and "//", and resolves symlinks component by component as B sees them,
 * mapping /proc/self and /proc/thread-self to /proc/<pid>; a missing tail is
 * kept as it is.  Magic links under /proc/<n>/ are followed only to a path
 * that exists (never to a pipe, socket, memfd or deleted file: -EACCES).
 * -ELOOP after 40 links, -ENAMETOOLONG, -ENOTDIR, -ENOENT as the kernel.
 * Under PATH_OWN_EXE the exe link of pid's process (path_proc_exe) is
 * not followed even where the call follows it: the walk ends there, at
 * the link's own text, and anything after it is -ENOTDIR (the kernel's
 * answer for a name under a file): under `sandpit run` it leads to the
 * `sandpit` command, not to the program, which B answers for itself. */
int path_resolve(pid_t pid, const char *cwd, const char *path, int flags, char *out,
		 size_t outlen);
/* The same; where one openat2 that refuses every link reached the path, *fd
 * is that descriptor (O_PATH, the last component not followed under
 * PATH_NOFOLLOW): the object the resolved text named when it was resolved,
 * for the caller to close.  Else -1.  On a failure, out holds the prefix
 * the walk had resolved, the component that failed included ("" if it
 * failed before any lookup): where the error says something about the
 * tree, for B to check against the grants before it tells U. */
int path_resolve_fd(pid_t pid, const char *cwd, const char *path, int flags, char *out,
		    size_t outlen, int *fd);

/* Runs in B: a name resolved from a directory object rather than from the
 * text of its path, so that it names the object the program's dirfd holds now, as the kernel resolves it from a dirfd.
 * path_name_beneath: 1 if `name` is relative and has no ".." and no "self"
 * or "thread-self" component (B's /proc/self is not P's), none longer than
 * NAME_MAX (the walk's ENAMETOOLONG): a name that stays beneath its
 * directory.  path_open_beneath: `name` opened from the
 * directory descriptor `dir` with one openat2 that follows no link, magic
 * or not, and stays beneath `dir` (O_PATH, the last component not followed
 * under PATH_NOFOLLOW): the descriptor; -ENOENT where a component is
 * missing (every one before it is a directory reached without a link);
 * -EAGAIN for anything else (a link, a name that is not beneath, no
 * PATH_OPENAT2 in flags, another error): then path_resolve decides.
 * path_join_beneath: `dir` (absolute: the kernel's name of the directory)
 * joined with such a name and normalised, into out. */
int path_name_beneath(const char *name);
int path_open_beneath(int dir, const char *name, int flags);
int path_join_beneath(const char *dir, const char *name, char *out, size_t outlen);

/* Runs in B: 1 if abs (resolved: absolute, normalised, no link) is the
 * exe link of pid's process in the procfs mounted at /proc:
 * /proc/<n>/exe or /proc/<n>/task/<m>/exe, where n is pid or one of its
 * threads and m one of its threads, each number as procfs spells it (no
 * leading zero).  Only the whole text matches: /proc/<pid>/exex,
 * /proc/<pid>/exe/ or /proc/<other>/exe do not. */
int path_proc_exe(pid_t pid, const char *abs);
#endif
