/* Filter templates (see policy.h): the program compiled for two pids and
 * stored with the places where the pid is, so that start-up writes the
 * program for its own pid without compiling it (policy/bpf.c compiles). */
#include <errno.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/filter.h>

#include "policy/policy.h"
#include "policy/bpf_internal.h"

/* The exported program for pid, in memory (free it). */
static int export_mem(const struct policy *p, pid_t pid, int fd_lo, int fd_hi, uint32_t flags,
		      struct sock_filter **prog, size_t *n, char *err, size_t errlen)
{
	struct policy_runtime rt = { .pid = pid, .fd_lo = fd_lo, .fd_hi = fd_hi };
	scmp_filter_ctx ctx;
	int rc = policy_compile_bpf(p, &rt, flags, &ctx, err, errlen);
	int fd;
	off_t len;

	if (rc < 0)
		return rc;
	fd = memfd_create("sandpit-template", MFD_CLOEXEC);
	rc = fd < 0 ? -errno : seccomp_export_bpf(ctx, fd);
	seccomp_release(ctx);
	if (rc < 0)
		goto out;
	len = lseek(fd, 0, SEEK_END);
	*prog = len > 0 && len % 8 == 0 ? malloc((size_t)len) : NULL;
	if (!*prog || pread(fd, *prog, (size_t)len, 0) != len) {
		free(*prog);
		rc = -EIO;
		goto out;
	}
	*n = (size_t)len / 8;
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		bpf_fail_msg(err, errlen, -1, rc, "exporting the filter");
	return rc;
}

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int policy_bpf_write_template(const struct policy *p, int fd_lo, int fd_hi, uint32_t flags, int fd,
			      char *err, size_t errlen)
{
	/* two pids no other constant of the program is likely to equal */
	static const pid_t pid_a = 0x1b2d3c4, pid_b = 0x2c3e4d5;
	struct sock_filter *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	uint32_t *slot = NULL, nslots = 0;
	int rc = 0;

	/* built without sandpit's own descriptors, which start-up chooses: a
	 * template holds only for a policy that allows their calls whole */
	for (size_t i = 0; i < 4; i++) {
		static const char *const own[] = { "read", "write", "exit", "rt_sigreturn" };
		int cls = policy_call(p, seccomp_syscall_resolve_name(own[i]))->cls;

		if (cls != POLICY_ALLOW && cls != POLICY_NATIVE)
			return bpf_fail_msg(err, errlen, -1, -EINVAL, "a template needs read, write, "
				       "exit and rt_sigreturn allowed");
	}
	rc = export_mem(p, pid_a, fd_lo, fd_hi, flags, &a, &na, err, errlen);

	rc = rc < 0 ? rc : export_mem(p, pid_b, fd_lo, fd_hi, flags, &b, &nb, err, errlen);
	if (rc < 0)
		goto out;
	slot = calloc(na ? na : 1, sizeof(*slot));
	if (!slot) {
		rc = -ENOMEM;
		goto out;
	}
	rc = na == nb ? 0 : -EINVAL;
	for (size_t i = 0; !rc && i < na; i++) {
		if (!memcmp(&a[i], &b[i], sizeof(a[i])))
			continue;
		/* the only difference a pid may make: the constant itself */
		if (a[i].code != b[i].code || a[i].jt != b[i].jt || a[i].jf != b[i].jf ||
		    a[i].k != (uint32_t)pid_a || b[i].k != (uint32_t)pid_b)
			rc = -EINVAL;
		slot[nslots++] = (uint32_t)i;
	}
	if (rc < 0) {
		bpf_fail_msg(err, errlen, -1, rc, "the program changes shape with the pid");
		goto out;
	}
	struct policy_bpf_template h = { POLICY_BPF_TEMPLATE_MAGIC, flags, fd_lo, fd_hi,
					 (uint32_t)na, nslots };
	rc = write_all(fd, &h, sizeof(h));
	rc = rc < 0 ? rc : write_all(fd, slot, nslots * sizeof(*slot));
	rc = rc < 0 ? rc : write_all(fd, a, na * sizeof(*a));
	if (rc < 0)
		bpf_fail_msg(err, errlen, -1, rc, "writing the template");
out:
	free(a);
	free(b);
	free(slot);
	return rc;
}

int policy_bpf_from_template(const void *blob, size_t len, pid_t pid, int fd_lo, int fd_hi,
			     uint32_t flags, int fd)
{
	const uint8_t *at = blob, *end = at + len;

	while ((size_t)(end - at) >= sizeof(struct policy_bpf_template)) {
		struct policy_bpf_template h;
		memcpy(&h, at, sizeof(h));
		size_t body = (size_t)h.nslots * 4 + (size_t)h.ninsn * sizeof(struct sock_filter);
		if (h.magic != POLICY_BPF_TEMPLATE_MAGIC || h.nslots > h.ninsn ||
		    body > (size_t)(end - at) - sizeof(h))
			return -EINVAL;
		const uint8_t *slots = at + sizeof(h), *insns = slots + (size_t)h.nslots * 4;
		at = insns + (size_t)h.ninsn * sizeof(struct sock_filter);
		if (h.flags != flags || h.fd_lo != fd_lo || h.fd_hi != fd_hi)
			continue;
		struct sock_filter *prog = malloc((size_t)h.ninsn * sizeof(*prog));
		if (!prog)
			return -ENOMEM;
		memcpy(prog, insns, (size_t)h.ninsn * sizeof(*prog));
		for (uint32_t i = 0; i < h.nslots; i++) {
			uint32_t s;
			memcpy(&s, slots + 4 * (size_t)i, 4);
			if (s >= h.ninsn) {
				free(prog);
				return -EINVAL;
			}
			prog[s].k = (uint32_t)pid;
		}
		int rc = write_all(fd, prog, (size_t)h.ninsn * sizeof(*prog));
		free(prog);
		return rc;
	}
	return -ENOENT;
}
