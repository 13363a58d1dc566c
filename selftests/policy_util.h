/* Helpers shared by the policy model's tests and its BPF back end's. */
#ifndef SANDPIT_SELFTEST_POLICY_UTIL_H
#define SANDPIT_SELFTEST_POLICY_UTIL_H
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include "policy/policy.h"

static inline int nr_of(const char *name)
{
	return seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name);
}

static inline struct policy *default_policy(void)
{
	struct policy *p = NULL;
	char err[256] = "";

	if (policy_new_default(&p, NULL, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "policy_new_default: %s\n", err);
		abort();
	}
	return p;
}
#endif
