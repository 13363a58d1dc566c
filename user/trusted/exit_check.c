/* B's check that a thread which asked to exit can only end by exit
 * (user/trusted/exit_check.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "user/trusted/exit_check.h"

/* every signal but SIGKILL and SIGSTOP, which no mask holds */
#define ALL_BLOCKED (~((1ULL << (9 - 1)) | (1ULL << (19 - 1))))

/* /proc/TID, not /proc/PID/task/TID (see task_status in fs_base.c); whose
 * thread it is, the status file's Tgid says */
static ssize_t read_proc(pid_t tid, const char *file, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)tid, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	ssize_t n = read(fd, buf, len - 1);
	int e = errno;
	close(fd);
	if (n < 0)
		return e == ESRCH || e == ENOENT ? -ESRCH : -e;
	buf[n] = 0;
	return n;
}

struct task_view {
	uint64_t blocked;       /* SigBlk */
	unsigned long switches; /* voluntary + involuntary: bumped each time it leaves a CPU */
};

static const char *field(const char *buf, const char *name)
{
	const char *f = strstr(buf, name);
	return f ? f + strlen(name) : NULL;
}

static int view(pid_t pid, pid_t tid, struct task_view *v)
{
	char buf[4096];
	ssize_t n = read_proc(tid, "status", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	const char *tg = field(buf, "\nTgid:"), *blk = field(buf, "\nSigBlk:"),
		   *vol = field(buf, "\nvoluntary_ctxt_switches:"),
		   *inv = field(buf, "\nnonvoluntary_ctxt_switches:");
	if (!tg || strtol(tg, NULL, 10) != (long)pid)
		return -ESRCH; /* not a thread of pid (any more) */
	if (!blk || !vol || !inv)
		return -EPROTO;
	v->blocked = strtoull(blk, NULL, 16);
	v->switches = strtoul(vol, NULL, 10) + strtoul(inv, NULL, 10);
	return 0;
}

/* The kernel shows a thread's call only while the thread is off its CPU
 * ("running" otherwise), and its mask in another file: read the mask, the
 * call, the mask again.  A thread that was off its CPU when the call was
 * read and left no CPU between the first and the last read (the switch
 * counts are equal) did not run at all between the first read and the
 * call's: the first mask is the one it waits with. */
int exit_check_waits_at(pid_t pid, pid_t tid, uintptr_t site)
{
	struct task_view a, b;
	char buf[512];
	long nr;
	unsigned long arg[6], sp, ip;
	int r = view(pid, tid, &a);
	if (r < 0)
		return r;
	if (a.blocked != ALL_BLOCKED)
		return 0;
	ssize_t n = read_proc(tid, "syscall", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	/* "nr args... sp pc" in a call; "running", or "-1 sp pc" outside one */
	if (sscanf(buf, "%ld 0x%lx 0x%lx 0x%lx 0x%lx 0x%lx 0x%lx 0x%lx 0x%lx", &nr, &arg[0], &arg[1],
		   &arg[2], &arg[3], &arg[4], &arg[5], &sp, &ip) != 9 ||
	    nr != 0 /* read */ || ip != site)
		return 0;
	r = view(pid, tid, &b);
	if (r < 0)
		return r;
	return b.blocked == ALL_BLOCKED && b.switches == a.switches;
}

int exit_check_call_at(pid_t pid, pid_t tid, uintptr_t site, long nr, unsigned long arg0)
{
	struct task_view a;
	char buf[512];
	long got;
	unsigned long arg[6], sp, ip;
	int r = view(pid, tid, &a);
	if (r < 0)
		return r;
	ssize_t n = read_proc(tid, "syscall", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	/* one consistent look: the kernel shows the registers only while the
	 * thread is off its CPU, "running" otherwise */
	if (sscanf(buf, "%ld 0x%lx 0x%lx 0x%lx 0x%lx 0x%lx 0x%lx 0x%lx 0x%lx", &got, &arg[0], &arg[1],
		   &arg[2], &arg[3], &arg[4], &arg[5], &sp, &ip) != 9)
		return 0;
	return (got == nr || got == SYS_restart_syscall) && arg[0] == arg0 && ip == site;
}
