/* What start-up compiles the policy into (see start_policy.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <seccomp.h>
#include "compat/compat.h"
#include "user/patch/plan_cache.h"
#include "user/layout/secure_mem.h"
#include "user/start/start_policy.h"

/* A deny of exactly the path `path` (its wildcard characters quoted). */
static int deny_exactly(struct policy *pol, const char *path, char *err, size_t errlen)
{
	char pat[2 * PATH_MAX];
	size_t n = 0;

	for (const char *c = path; *c; c++) {
		if (n + 3 > sizeof pat)
			return -ENAMETOOLONG;
		if (strchr("*?[\\", *c))
			pat[n++] = '\\';
		pat[n++] = *c;
	}
	pat[n] = 0;
	return policy_deny(pol, pat, err, errlen);
}

int deny_plan_cache(struct policy *pol, char *err, size_t errlen)
{
	char dirs[PLAN_CACHE_DIRS][PLAN_PATH_MAX], norm[PATH_MAX], real[PATH_MAX];
	int n = plan_cache_dirs(dirs, PLAN_CACHE_DIRS), r = 0;

	if (n < 0) {
		snprintf(err, errlen, "the plan cache's directory: %s", strerror(-n));
		return n;
	}
	for (int i = 0; i < n && !r; i++) {
		r = path_normalise(dirs[i], norm, sizeof norm);
		r = r ? r : deny_exactly(pol, norm, err, errlen);
		r = r ? r : policy_resolve_existing(pol, norm, real);
		if (!r && strcmp(real, norm))
			r = deny_exactly(pol, real, err, errlen);
		if (r < 0 && !err[0])
			snprintf(err, errlen, "the plan cache's directory %s: %s", dirs[i],
				 strerror(-r));
	}
	return r;
}

/* The T table in a memfd sealed against every write: mapped read-only,
 * it can never be made writable again (invariant 3). */
int make_table(const struct policy *pol, const struct tt_table **out, size_t *len,
	       char *err, size_t errlen)
{
	size_t sz = (sizeof(struct tt_table) + SM_PAGE - 1) & ~(size_t)(SM_PAGE - 1);
	int fd = memfd_create("sandpit-table", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	int r = 0;
	void *rw = MAP_FAILED;
	if (ftruncate(fd, (off_t)sz) < 0 ||
	    (rw = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		r = -errno;
		goto out;
	}
	r = policy_compile_table(pol, rw, err, errlen);
	munmap(rw, sz);
	if (r < 0)
		goto out;
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		r = -errno;
		goto out;
	}
	void *ro = mmap(NULL, sz, PROT_READ, MAP_SHARED, fd, 0);
	if (ro == MAP_FAILED) {
		r = -errno;
		goto out;
	}
	*out = ro;
	*len = sz;
out:
	close(fd);
	return r;
}

int denials_logged(void)
{
	const char *log = getenv("SANDPIT_LOG");
	return log && !strcmp(log, "denials");
}

int denials_report_fd(void)
{
	const char *e = getenv("SANDPIT_REPORT_FD");
	char *end;
	long fd = e && *e ? strtol(e, &end, 10) : -1;
	if (fd < 3 || fd > INT_MAX || *end || fcntl((int)fd, F_GETFD) < 0)
		return -1;
	return (int)fd;
}

/* Filter mode's program: built by libseccomp from the same policy as the T
 * table, kept in a sealed memfd so that the nursery can install it on new
 * threads from memory U can never change. */
extern const char sandpit_default_filter[]; /* policy/default_filter.S */
extern const uint64_t sandpit_default_filter_len;

int make_filter(const struct policy *pol, int builtin, const struct policy_runtime *rt,
		uint64_t fprog[2], char *err, size_t errlen)
{
	uint32_t flags = compat_has(COMPAT_KILL_PROCESS) ? 0 : POLICY_BPF_NO_KILL_PROCESS;
	if (denials_logged() || denials_report_fd() >= 0)
		flags |= POLICY_BPF_TRAP_DENY; /* so that the entry sees, B counts and logs them */
	int fd = memfd_create("sandpit-filter", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	/* the default policy's program was built with the library: only the
	 * pid goes in; anything else is compiled now */
	int r = builtin ? policy_bpf_from_template(sandpit_default_filter,
						   (size_t)sandpit_default_filter_len, rt->pid,
						   rt->fd_lo, rt->fd_hi, flags, fd)
			: -ENOENT;
	if (r == -ENOENT) {
		scmp_filter_ctx ctx = NULL;
		r = policy_compile_bpf(pol, rt, flags, &ctx, err, errlen);
		if (r >= 0) {
			r = seccomp_export_bpf(ctx, fd);
			seccomp_release(ctx);
		}
	}
	struct stat sb;
	if (r >= 0 && (fstat(fd, &sb) < 0 || sb.st_size == 0 || sb.st_size % 8))
		r = -EINVAL;
	if (r >= 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		r = -errno;
	void *prog = MAP_FAILED;
	if (r >= 0 && (prog = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0)) == MAP_FAILED)
		r = -errno;
	close(fd);
	if (r < 0)
		return r;
	fprog[0] = (uint64_t)sb.st_size / 8; /* sock_fprog.len, then the pointer */
	fprog[1] = (uint64_t)(uintptr_t)prog;
	return 0;
}
