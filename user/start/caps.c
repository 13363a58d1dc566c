/* Dropping every capability (user/start/caps.h).  Capabilities are per thread:
 * this runs in the only thread of P, before B is forked and T cloned, so
 * both inherit the empty sets, and the threads T clones later too.  Root
 * keeps its uid (files root owns stay its own); what the capabilities
 * gave beyond that (reading any file, tracing any process, ...) is gone,
 * and no_new_privs keeps an exec from giving them back. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "user/start/caps.h"

static int step(char *what, size_t whatlen, const char *name, int err)
{
	snprintf(what, whatlen, "%s", name);
	return -err;
}

/* whether the bounding set still holds a capability: 1 or 0 as the
 * kernel's CapBnd line says (three calls), else asked one capability at a
 * time up to the first number the kernel does not know; -errno where
 * neither can tell */
static int bounding_left(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	const char *b = strstr(buf, "\nCapBnd:\t");
	if (b) {
		char *end;
		unsigned long long v = strtoull(b + 9, &end, 16);
		if (end != b + 9 && *end == '\n')
			return v != 0;
	}
	for (int cap = 0;; cap++) {
		int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
		if (r < 0)
			return errno == EINVAL && cap > CAP_SETPCAP ? 0 : -errno;
		if (r > 0)
			return 1;
	}
}

int caps_drop_all(char *what, size_t whatlen)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return step(what, whatlen, "prctl(PR_SET_NO_NEW_PRIVS)", errno);
	/* before 4.3 there is no ambient set, and so nothing in it */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return step(what, whatlen, "prctl(PR_CAP_AMBIENT_CLEAR_ALL)", errno);
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) < 0)
		return step(what, whatlen, "capget", errno);
	/* without CAP_SETPCAP the bounding set cannot shrink; with no_new_privs
	 * and nothing permitted it can give nothing back either */
	int bounding = (data[0].permitted >> CAP_SETPCAP) & 1;
	if (bounding) {
		data[0].effective |= 1u << CAP_SETPCAP;
		if (syscall(SYS_capset, &hdr, data) < 0)
			return step(what, whatlen, "capset (raising CAP_SETPCAP)", errno);
		/* up to the first number the kernel has no capability for
		 * (EINVAL): one call a capability, none to read it first */
		for (int cap = 0;; cap++)
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
				if (errno == EINVAL && cap > CAP_SETPCAP)
					break;
				return step(what, whatlen, "prctl(PR_CAPBSET_DROP)", errno);
			}
	}
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) < 0)
		return step(what, whatlen, "capset", errno);
	/* what the kernel says now, not what was asked; the ambient set lies
	 * within permitted and inheritable, so it is empty with them */
	if (syscall(SYS_capget, &hdr, data) < 0)
		return step(what, whatlen, "capget", errno);
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		if (data[i].effective || data[i].permitted || data[i].inheritable)
			return step(what, whatlen, "capset (a capability is still there)", EPERM);
	int left = bounding ? bounding_left() : 0;
	if (left)
		return step(what, whatlen, "prctl(PR_CAPBSET_DROP) (still in the set)",
			    left < 0 ? -left : EPERM);
	return 0;
}
