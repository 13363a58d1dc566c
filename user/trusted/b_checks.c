/* B's checks of one request's memory arguments (user/trusted/b_checks.h):
 * a path copied, resolved and checked against the grants (then answered
 * by B, opened by B, or handed to T beneath the grants without links), a
 * sigaction's handler kept out of sandpit's memory.  The reads of P are
 * b_read.c's, the resolution b_resolve.c's, the answers b_answer.c's; the
 * servers that call these are in b_serve.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat/compat.h"
#include "policy/policy.h"
#include "user/trusted/b_answer.h"
#include "user/trusted/b_checks.h"
#include "user/trusted/b_exe.h"
#include "user/trusted/b_read.h"
#include "user/trusted/b_refusal.h"
#include "user/trusted/b_resolve.h"
#include "user/trusted/b_state.h"
#include "user/trusted/path_op.h"
#include "user/trusted/write_open.h"
#include "user/untrusted/runtime.h"

/* The resolved path has no symlink in it.  An open goes to T as openat2
 * with RESOLVE_NO_SYMLINKS, so that a component swapped for a symlink after
 * the check (U may rename in a write grant) fails the open with ELOOP
 * instead of leading it out of the grant.  The path stays where
 * b_check_path put it; struct open_how follows it in S. */
static long open_beneath_no_links(struct secure_page *sp, size_t pathlen, long flags, long mode)
{
	size_t at = (pathlen + 7) & ~(size_t)7;
	struct open_how how = {
		.flags = (uint64_t)(uint32_t)flags,
		.mode = (flags & (O_CREAT | O_TMPFILE)) ? (uint64_t)mode : 0,
		.resolve = RESOLVE_NO_SYMLINKS,
	};
	if (at + sizeof(how) > SP_DATA_SIZE)
		return -ENAMETOOLONG;
	memcpy(sp->data + at, &how, sizeof(how));
	sp->nr = SYS_openat2;
	sp->args[0] = (uint64_t)(int64_t)AT_FDCWD;
	b_arg_into_data(sp, 1, sp->data);
	b_arg_into_data(sp, 2, sp->data + at);
	sp->args[3] = sizeof(how);
	sp->args[4] = sp->args[5] = 0;
	return 0;
}


/* A call on the descriptor itself, with no path to check: fstatat(fd, "",
 * AT_EMPTY_PATH) and its friends, readlinkat(fd, "") (the link an O_PATH
 * descriptor holds; ENOENT for any other); with a NULL path and
 * AT_EMPTY_PATH, what the kernel makes of it (the descriptor from 6.11,
 * EFAULT before) */
static int on_the_descriptor(const struct policy_proc_arg *pa, const struct secure_page *sp,
			     int access)
{
	if (pa->access == PA_OPEN || access != PA_READ)
		return 0;
	if (sp->nr == SYS_readlinkat)
		return 1;
	return pa->flags_arg >= 0 && (sp->args[pa->flags_arg] & AT_EMPTY_PATH);
}

static const char setid_why[] = "a set-id file is never opened for writing";

/* A path argument: copy, resolve as the kernel will, check, and hand T the
 * resolved absolute path in S so the kernel reads exactly what was checked. */
long b_check_path(int s, const struct policy_proc_arg *pa, struct secure_page *sp)
{
	char path[PATH_MAX], resolved[PATH_MAX];
	long n = b_einval_first(sp, 0);
	if (n < 0)
		return n;
	if (!sp->args[pa->path_arg] && sp->nr != SYS_readlinkat &&
	    on_the_descriptor(pa, sp, policy_proc_access(pa, sp->args)))
		return b_einval_first(sp, 1); /* T makes it with the NULL path, as asked */
	n = b_read_path(s, path, sizeof(path), sp->args[pa->path_arg]);
	if (n < 0)
		return n;
	long bad = b_einval_first(sp, 1);
	if (bad < 0)
		return bad;
	int dirfd = pa->dirfd_arg >= 0 ? (int)sp->args[pa->dirfd_arg] : AT_FDCWD;
	long flags = pa->flags_arg >= 0 ? (long)sp->args[pa->flags_arg] : 0;
	int access = policy_proc_access(pa, sp->args);
	if (access == PA_NEVER) {
		b_path_denial(s, pa, sp, path, NULL, access, NULL);
		return -EACCES;
	}

	if (n == 0) {
		/* readlinkat(fd, "") of the program's O_PATH descriptor of P's
		 * exe link (the kernel names it by the link's text) */
		char held[PATH_MAX], what[32];
		snprintf(what, sizeof(what), "fd/%d", dirfd);
		if (sp->nr == SYS_readlinkat && dirfd >= 0 && b_proc_of_slot(s)->exe_fd >= 0 &&
		    b_proc_link(s, held, sizeof(held), what) == 0 && b_exe_link(s, held))
			return b_exe_readlink(s, pa, sp, path);
		if (on_the_descriptor(pa, sp, access)) {
			sp->data[0] = 0;
			b_arg_into_data(sp, pa->path_arg, sp->data);
			return 0;
		}
		return -ENOENT;
	}
	enum answer_kind kind = b_answer_kind((long)sp->nr);
	int fd = -1;
	const char *leaf = "";
	int r = b_resolve(s, dirfd, path, !policy_proc_follow(pa, sp->args), resolved,
			  kind != ANSWER_NONE ? &fd : NULL,
			  kind == ANSWER_STAT || kind == ANSWER_STATX ? &leaf : NULL);
	if (r < 0)
		return r;
	/* P's exe link is the program's file, not the sandpit command: B
	 * answers for it from that file (b_exe.c), whatever the grants of
	 * /proc; the link itself (lstat, O_NOFOLLOW) is /proc's as before */
	if (b_exe_link(s, resolved) &&
	    (policy_proc_follow(pa, sp->args) || kind == ANSWER_READLINK)) {
		if (fd >= 0)
			close(fd);
		return kind == ANSWER_READLINK ? b_exe_readlink(s, pa, sp, path)
					       : b_exe_call(s, pa, sp, path);
	}
	pid_t pid = b_proc_of_slot(s)->pid;
	r = policy_check_path(b_cfg()->policy, pid, resolved, access);
	/* the directories on the way to a grant may be looked at, as a program
	 * that resolves its paths by hand does (sqlite, rm -r's "/") */
	if (r == -EACCES && pa->access == PA_READ &&
	    policy_check_ancestor(b_cfg()->policy, pid, resolved) == 0)
		r = 0;
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		if (r == -EACCES)
			b_path_denial(s, pa, sp, path, resolved, access,
				      policy_path_denied(b_cfg()->policy, pid, resolved));
		return r;
	}
	/* U's trailing slash asks the kernel for a directory (EISDIR for a
	 * create, ENOTDIR for a file): resolving drops it, the kernel gets it
	 * back.  The name is the one checked; it has no link left to follow. */
	size_t len = strlen(resolved) + 1;
	if (path[n - 1] == '/' && len > 2) {
		if (len >= sizeof(resolved)) {
			if (fd >= 0)
				close(fd);
			return -ENAMETOOLONG;
		}
		resolved[len - 1] = '/';
		resolved[len++] = '\0';
	}
	if (kind != ANSWER_NONE) {
		/* resolved by the walk (a link on the way), or no openat2: the
		 * checked text, opened without links, so that a link swapped in
		 * since fails (ELOOP) rather than leading the answer out of the
		 * grants */
		if (fd < 0) {
			long o = path_open_no_links(resolved,
						    policy_proc_follow(pa, sp->args) ? 0 : O_NOFOLLOW);
			if (o < 0)
				return o;
			fd = (int)o;
		}
		long v = b_answer(s, kind, fd, leaf, sp);
		close(fd);
		if (v)
			return v;
	} else if (fd >= 0) {
		close(fd);
	}
	if (len > SP_DATA_SIZE)
		return -ENAMETOOLONG;
	memcpy(sp->data, resolved, len);
	b_arg_into_data(sp, pa->path_arg, sp->data);
	if (pa->dirfd_arg >= 0)
		sp->args[pa->dirfd_arg] = (uint64_t)(int64_t)AT_FDCWD;
	if (pa->access == PA_OPEN) {
		/* a name made here never carries a set-id bit: chmod may not
		 * give one (path_op.c), so neither may the mode it is made with */
		if (flags & (O_CREAT | O_TMPFILE))
			sp->args[pa->flags_arg + 1] &= ACCESSPERMS | S_ISVTX;
		/* nor does a set-id file that is there take the program's bytes:
		 * stores through a shared mapping keep its bit, where write(2)
		 * would clear it */
		int writes = (flags & O_ACCMODE) != O_RDONLY || (flags & (O_TRUNC | O_CREAT));
		if (writes && compat_has(COMPAT_OPENAT2) && !(flags & (O_PATH | __O_TMPFILE))) {
			/* decided on the file B opens, and that file handed over:
			 * a name checked and opened again by T could be swapped
			 * in between (user/trusted/write_open.c) */
			const char *why;
			int fd = b_write_open(s, resolved, flags, (long)sp->args[pa->flags_arg + 1], &why);
			if (fd >= 0)
				return b_hand_over(s, sp, fd, flags);
			if (fd == -EACCES && why)
				b_path_refused(s, pa, sp, path, resolved, why);
			return fd;
		}
		struct stat st;
		if (writes && fstatat(AT_FDCWD, resolved, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && B_SETID(st.st_mode)) {
			b_path_refused(s, pa, sp, path, resolved, setid_why);
			return -EACCES;
		}
		if (compat_has(COMPAT_OPENAT2))
			return open_beneath_no_links(sp, len, flags,
						     (long)sp->args[pa->flags_arg + 1]);
	}
	if (sp->nr == SYS_getxattr || sp->nr == SYS_lgetxattr) {
		/* the attribute's name is memory the kernel reads: B's copy too */
		char *name = (char *)sp->data + len;
		n = b_read_string(s, name, SP_DATA_SIZE - len < 256 ? SP_DATA_SIZE - len : 256,
				  sp->args[1]);
		if (n < 0)
			return n == -ENAMETOOLONG ? -ERANGE : n;
		b_arg_into_data(sp, 1, name);
	}
	return 0;
}

/* the sa_flags the kernel keeps (and reports) on x86-64: the others it
 * clears, so that a program can tell which it has */
#define UAPI_SA_FLAGS                                                                        \
	(SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | 0x800 /* SA_EXPOSE_TAGBITS */ | SA_ONSTACK | \
	 SA_RESTART | SA_NODEFER | SA_RESETHAND | SANDPIT_SA_RESTORER)

/* rt_sigaction(sig, act, oact, size).  The struct is copied and checked:
 * no handler or restorer in sandpit's protected memory (invariant 1).  For
 * a caught signal the program's handler goes into the handler table and the
 * kernel gets sandpit's entry (sandpit_signal_entry, u_signal.c), so that
 * sandpit can tell pause and sigsuspend that a handler ran.  The signals
 * sandpit keeps (SANDPIT_KEPT_SIGNALS) are only recorded, whatever the
 * action: the kernel keeps sandpit's handler (DESIGN §6), which calls the
 * program's for the program's own signals; a query of one is answered by
 * U from the table.  What is recorded is what the kernel would report. */
long b_check_sigaction(int s, struct secure_page *sp)
{
	struct k_sigaction act;
	int sig = (int)sp->args[0];
	if (sp->args[3] != 8 || sig < 1 || sig >= SIGTAB_N)
		return -EINVAL;
	int kept = (SANDPIT_KEPT_SIGNALS & SANDPIT_SIGBIT(sig)) != 0;
	if (!sp->args[1])
		return kept ? SP_V_ACK : 0;
	if (b_read_mem(s, &act, sp->args[1], sizeof(act)))
		return -EFAULT;
	if ((act.handler > 1 && b_in_protected(s, act.handler)) ||
	    ((act.flags & SANDPIT_SA_RESTORER) && b_in_protected(s, act.restorer)))
		return -EPERM;
	act.flags &= UAPI_SA_FLAGS;
	act.mask &= ~(SANDPIT_SIGBIT(SIGKILL) | SANDPIT_SIGBIT(SIGSTOP));
	struct k_sigaction *rec = &b_proc_of_slot(s)->sigtab->act[sig];
	if (kept) {
		*rec = act;
		return SP_V_ACK;
	}
	if (act.handler > 1 && sig != SIGKILL && sig != SIGSTOP) {
		*rec = act;
		act.handler = (uint64_t)(uintptr_t)sandpit_signal_entry;
		act.flags |= SA_SIGINFO | SANDPIT_SA_RESTORER;
		/* SA_RESETHAND is U's to apply, at delivery (u_signal.c): the
		 * kernel's reset would come when the signal lands, and one put
		 * off lands before it is delivered */
		act.flags &= ~(uint64_t)SA_RESETHAND;
		act.restorer = (uint64_t)(uintptr_t)sandpit_restorer;
		/* the kept ones stay unblocked for real; the handler's mask for
		 * them is the program's view (u_signal.c) */
		act.mask &= ~SANDPIT_KEPT_SIGNALS;
	} else {
		memset(rec, 0, sizeof(*rec));
		/* SIG_IGN is recorded: a signal put off before it was set is
		 * then discarded at delivery, as the kernel discards a pending
		 * one (u_signal.c), where SIG_DFL is the default action */
		if (act.handler == (uint64_t)(uintptr_t)SIG_IGN)
			rec->handler = act.handler;
	}
	memcpy(sp->data, &act, sizeof(act));
	b_arg_into_data(sp, 1, sp->data);
	return 0;
}
