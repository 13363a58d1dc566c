/* B sets a strict-mode U's FS base by ptrace (user/trusted/fs_base.h). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "user/trusted/fs_base.h"

uint64_t fs_base_task_size(void)
{
	/* only a 5-level machine can map above 47 bits, and only when asked
	 * with a hint there */
	void *hint = (void *)(1UL << 48);
	void *p = mmap(hint, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		return (1UL << 47) - 4096;
	munmap(p, 4096);
	return p == hint ? (1UL << 56) - 4096 : (1UL << 47) - 4096;
}

int task_status(pid_t pid, pid_t tid, const char *field)
{
	char path[64], buf[2048];
	/* /proc/TID, not /proc/PID/task/TID: a dentry under P's directory
	 * that belongs to another thread's pid is invalidated by that
	 * thread's release while P's reaper walks P's directory, and the
	 * reaper then spins until the other is done (milliseconds when it
	 * was preempted: sandpit run's parent waited up to 25 ms for its
	 * child's exit status).  Whose thread it is, Tgid says, from the
	 * same read. */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	const char *tg = strstr(buf, "\nTgid:");
	if (!tg || strtol(tg + 6, NULL, 10) != (long)pid)
		return -1; /* not a thread of pid (any more) */
	const char *f = strstr(buf, field);
	return f ? (int)strtol(f + strlen(field), NULL, 0) : -2; /* base 0: Umask is octal */
}

int fs_base_ptrace(pid_t pid, pid_t tid, int seccomp_mode, int set, uint64_t *val)
{
	int r = 0, st, sig = 0;

	if (tid <= 0)
		return -EPERM;
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0)
		return -errno;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0) {
		r = -errno;
		goto out;
	}
	for (;;) {
		pid_t w = waitpid(tid, &st, __WALL);
		if (w == tid)
			break;
		if (w < 0 && errno != EINTR) {
			r = -errno;
			goto out;
		}
	}
	if (!WIFSTOPPED(st))
		return -ESRCH; /* it ended: nothing to detach from */
	/* a signal-delivery stop (no event in the high bits) holds a signal
	 * for the thread: it goes back with the detach; the interrupt's own
	 * stop and a group stop hold none */
	if ((st >> 16) == 0)
		sig = WSTOPSIG(st);
	/* stopped and traced by us, its tid cannot go to another thread:
	 * now ask the kernel what it is */
	int mode = task_status(pid, tid, "Seccomp:");
	if (mode == -1 || (seccomp_mode >= 0 && mode != seccomp_mode)) {
		r = -EPERM;
		goto out;
	}
	const size_t off = offsetof(struct user, regs.fs_base);
	if (set) {
		if (ptrace(PTRACE_POKEUSER, tid, (void *)off, (void *)(uintptr_t)*val) < 0)
			r = errno == EIO ? -EPERM : -errno; /* EIO: a base past TASK_SIZE_MAX */
	} else {
		errno = 0;
		long v = ptrace(PTRACE_PEEKUSER, tid, (void *)off, NULL);
		if (errno)
			r = -errno;
		else
			*val = (uint64_t)v;
	}
out:
	ptrace(PTRACE_DETACH, tid, NULL, (void *)(uintptr_t)sig);
	return r;
}
