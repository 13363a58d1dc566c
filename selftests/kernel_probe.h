/* What the kernel the suite runs on has, asked without sandpit. */
#ifndef SANDPIT_KERNEL_PROBE_H
#define SANDPIT_KERNEL_PROBE_H
#include <errno.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>

/* 1 if the kernel has seccomp-bpf, asked the way sandpit's probe asks: a
 * NULL filter program is EFAULT where filters exist and EINVAL where they
 * do not (a kernel built without SECCOMP_FILTER, as before 3.5) */
static inline int kernel_has_filter(void)
{
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0) < 0 && errno == EFAULT;
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
