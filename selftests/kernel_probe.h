/* What the kernel the suite runs on has, asked without sandpit. */
#ifndef SANDPIT_KERNEL_PROBE_H
#define SANDPIT_KERNEL_PROBE_H
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* 1 if the kernel has seccomp-bpf, asked the way sandpit's probe asks: a
 * NULL filter program is EFAULT where filters exist and EINVAL where they
 * do not (a kernel built without SECCOMP_FILTER, as before 3.5) */
static inline int kernel_has_filter(void)
{
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0) < 0 && errno == EFAULT;
}

/* 1 if a seccomp supervisor can put a descriptor at a number of its
 * choosing into the table of a task waiting in a notification
 * (SECCOMP_IOCTL_NOTIF_ADDFD with SECCOMP_ADDFD_FLAG_SETFD, 5.9): tried
 * in a child, whose forked grandchild waits in getppid */
static inline int kernel_has_addfd(void)
{
	pid_t c = fork();
	if (c < 0)
		return 0;
	if (c == 0) {
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = { .len = 4, .filter = f };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			_exit(2);
		int l = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				     SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
		if (l < 0)
			_exit(2);
		pid_t g = fork();
		if (g == 0)
			_exit(syscall(SYS_getppid) == 0 ? 0 : 1);
		struct seccomp_notif n;
		memset(&n, 0, sizeof(n));
		if (g < 0 || ioctl(l, SECCOMP_IOCTL_NOTIF_RECV, &n) < 0)
			_exit(2);
		struct seccomp_notif_addfd a = { .id = n.id, .flags = SECCOMP_ADDFD_FLAG_SETFD,
						 .srcfd = (unsigned)l, .newfd = 100 };
		int got = ioctl(l, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
		struct seccomp_notif_resp r = { .id = n.id };
		ioctl(l, SECCOMP_IOCTL_NOTIF_SEND, &r);
		int st;
		waitpid(g, &st, 0);
		_exit(got == 100 ? 0 : 1);
	}
	int st;
	return waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* SANDPIT_KERNEL, as the suite's mode sets it, turns off what sandpit's
 * notifier needs (compat/probe.c's names; whole tokens: no-pidfd-thread
 * is not no-pidfd) */
static inline int kernel_addfd_forced_off(void)
{
	const char *e = getenv("SANDPIT_KERNEL");
	static const char *const off[] = { "legacy", "no-addfd", "no-user-notif",
					   "no-seccomp-syscall", "no-filter", "no-pidfd" };
	while (e && *e) {
		size_t n = strcspn(e, ",");
		for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
			if (strlen(off[i]) == n && !strncmp(e, off[i], n))
				return 1;
		e += n + (e[n] == ',');
	}
	return 0;
}

#ifdef __KSELFTEST_HARNESS_H
/* First in a fixture's setup: its filter variant on a kernel without
 * seccomp-bpf is skipped, with the reason, before anything is made (exit
 * status 255 is how the harness's child reports a skip; the body must not
 * run).  That sandpit refuses filter mode there is checked on its own, by
 * the kernel matrix's guest checks. */
#define SKIP_FILTER_VARIANT_WITHOUT_FILTER(mode)                                                  \
	do {                                                                                      \
		if (!strcmp((mode), "filter") && !kernel_has_filter())                            \
			SKIP(_exit(255), "no seccomp-bpf on this kernel: no filter mode to run"); \
	} while (0)
#endif
#endif
