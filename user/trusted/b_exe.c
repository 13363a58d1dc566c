/* The program's own executable under `sandpit run` (user/trusted/b_exe.h).
 *
 * The loader maps the program into the `sandpit` command's own process,
 * so the kernel's /proc/<P>/exe is the command, and the kernel lets no
 * unprivileged process change it.  B answers for that link instead
 * (policy/path.c's walk stops at it, path_proc_exe names it): from the
 * descriptor of the program's file the loader opened and mapped, which B
 * inherited at its start (its record's exe_fd) and P closed before the program
 * ran.  Never from a name: the file may be renamed, replaced or swapped
 * for a link after start, and a name opened again would then be another
 * file, maybe one no grant lets the program read; the descriptor is the
 * file the program was loaded from, whatever happens to its name since.
 * The name is used only where the kernel shows one (readlink) and for
 * a `path deny`, which wins here too.
 *
 * The program may read its own file (the loader read it): an open for
 * reading is B's open of /proc/self/fd/<exe_fd> with the program's flags,
 * a new open file of that same file, with the kernel's permission check
 * for P's credentials (B's), handed over as B's write opens are
 * (write_open.c); anything that writes is EACCES. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "policy/path.h"
#include "policy/policy.h"
#include "user/layout/secure_mem.h"
#include "user/trusted/b_answer.h"
#include "user/trusted/b_exe.h"
#include "user/trusted/b_refusal.h"
#include "user/trusted/b_state.h"
#include "user/trusted/write_open.h"

static const char write_why[] = "the program's own file is only ever opened for reading";

int b_exe_link(int s, const char *resolved)
{
	const struct b_proc *p = b_proc_of_slot(s);
	return p->exe_fd >= 0 && path_proc_exe(p->pid, resolved);
}

/* B's own magic link to the file: nothing of U's on the way */
static void own_link(int s, char *proc, size_t len)
{
	snprintf(proc, len, "/proc/self/fd/%d", b_proc_of_slot(s)->exe_fd);
}

/* the kernel's name of the file now, as /proc/<pid>/exe shows it */
static long exe_name(int s, char *name, size_t len)
{
	char proc[40];
	own_link(s, proc, sizeof(proc));
	ssize_t n = readlink(proc, name, len - 1);
	if (n < 0)
		return -errno;
	name[n] = '\0';
	return n;
}

/* a `path deny` that matches the file's name refuses it, as everywhere */
static long denied(int s, const struct policy_proc_arg *pa, const struct secure_page *sp,
		   const char *path, const char *name)
{
	const char *deny = policy_path_denied(b_cfg()->policy, b_proc_of_slot(s)->pid, name);
	if (!deny)
		return 0;
	b_path_denial(s, pa, sp, path, name, PA_READ, deny);
	return -EACCES;
}

long b_exe_readlink(int s, const struct policy_proc_arg *pa, struct secure_page *sp,
		    const char *path)
{
	char name[PATH_MAX];
	long n = exe_name(s, name, sizeof(name));
	if (n < 0)
		return n;
	long r = denied(s, pa, sp, path, name);
	if (r)
		return r;
	uint32_t buf_arg = sp->nr == SYS_readlink ? 1 : 2;
	size_t size = (size_t)(int)sp->args[buf_arg + 1]; /* > 0: b_einval_first */
	size_t len = (size_t)n < size ? (size_t)n : size;
	if (len > SP_ANSWER_MAX)
		return -ENAMETOOLONG; /* no room in the answer, and T has no way to it */
	return b_answered(sp, (long)len, name, (uint32_t)len, buf_arg);
}

long b_exe_call(int s, const struct policy_proc_arg *pa, struct secure_page *sp, const char *path)
{
	char name[PATH_MAX], proc[40];
	long r = exe_name(s, name, sizeof(name));
	if (r < 0)
		return r;
	if ((r = denied(s, pa, sp, path, name)))
		return r;
	if (policy_proc_access(pa, sp->args) != PA_READ) {
		b_path_refused(s, pa, sp, path, name, write_why);
		return -EACCES;
	}
	own_link(s, proc, sizeof(proc));
	int fd = b_proc_of_slot(s)->exe_fd;
	switch (sp->nr) {
	case SYS_open:
	case SYS_openat: {
		/* read-only flags (policy_open_access): O_PATH, O_NONBLOCK,
		 * O_NOATIME, O_DIRECTORY (ENOTDIR) are the kernel's to take */
		long flags = (long)sp->args[pa->flags_arg];
		int f = open(proc, (int)flags | O_CLOEXEC);
		if (f < 0)
			return -errno;
		return b_hand_over(s, sp, f, flags);
	}
	case SYS_access:
	case SYS_faccessat:
	case SYS_faccessat2: {
		/* B's ids are P's; libc asks faccessat2 for AT_EACCESS, or
		 * works it out where the kernel has none */
		int mode = (int)sp->args[sp->nr == SYS_access ? 1 : 2];
		int flags = sp->nr == SYS_faccessat2 ? (int)sp->args[3] & AT_EACCESS : 0;
		int ok = faccessat(AT_FDCWD, proc, mode, flags);
		return b_answered(sp, ok < 0 ? -errno : 0, NULL, 0, 0);
	}
	case SYS_statfs: {
		struct statfs sfs;
		_Static_assert(sizeof(sfs) == 120, "the kernel's struct statfs");
		if (fstatfs(fd, &sfs) < 0)
			return -errno;
		return b_answered(sp, 0, &sfs, sizeof(sfs), 1);
	}
	case SYS_listxattr: {
		char list[SP_ANSWER_MAX];
		size_t size = (size_t)sp->args[2];
		size_t ask = size < sizeof(list) ? size : sizeof(list);
		ssize_t n = listxattr(proc, ask ? list : NULL, ask);
		if (n < 0)
			return errno == ERANGE && size > sizeof(list) ? -E2BIG : -errno;
		return b_answered(sp, n, list, size ? (uint32_t)n : 0, 1);
	}
	case SYS_chdir:
		return -ENOTDIR; /* a program's file is a regular file */
	}
	enum answer_kind kind = b_answer_kind((long)sp->nr);
	if (kind == ANSWER_STAT || kind == ANSWER_STATX || kind == ANSWER_XATTR) {
		r = b_answer(s, kind, fd, "", sp);
		/* T has no way to this file: what B cannot answer is refused */
		return r ? r : -EACCES;
	}
	return -EACCES;
}
