/* What the signals_*_test binaries share: the kernel's sigaction struct,
 * a body run natively in a child, the answers a body writes, natively and
 * sandboxed, compared, and the signals sandpit keeps for itself. */
#ifndef SANDPIT_SELFTEST_SIGNALS_UTIL_H
#define SANDPIT_SELFTEST_SIGNALS_UTIL_H
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sandbox_util.h"

#define K_SA_RESTORER 0x04000000
struct k_act {
	uint64_t handler, flags, restorer, mask;
};

/* fn's status when run natively in a child */
static inline int run_native(int (*fn)(void *), void *arg)
{
	fflush(NULL);
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0)
		_exit(fn(arg));
	int st;
	if (waitpid(p, &st, 0) != p)
		return -1;
	return st;
}

/* the answers a body writes, natively and sandboxed */
struct answers {
	long v[1024];
};

static inline struct answers *shared_answers(void)
{
	struct answers *a = shared_page(sizeof(struct answers));
	if (a)
		memset(a, 0, sizeof(*a));
	return a;
}

static inline int first_difference(const struct answers *a, const struct answers *b)
{
	for (unsigned i = 0; i < sizeof(a->v) / sizeof(a->v[0]); i++)
		if (a->v[i] != b->v[i])
			return (int)i;
	return -1;
}

/* runs fn natively, then sandboxed, with fresh answers each time; both
 * outcomes and answer sets must agree */
#define EXPECT_SAME_AS_NATIVE(fn, native_outcome)                                        \
	do {                                                                             \
		struct answers *nat = shared_answers(), *box = shared_answers();         \
		ASSERT_NE(NULL, nat);                                                    \
		ASSERT_NE(NULL, box);                                                    \
		int n = outcome(run_native(fn, nat));                                    \
		ASSERT_EQ(native_outcome, n);                                            \
		int b = outcome(run_sandboxed(fn, box));                                 \
		EXPECT_EQ(n, b);                                                         \
		int d = first_difference(nat, box);                                      \
		EXPECT_EQ(-1, d)                                                         \
		TH_LOG("answer %d: native %ld, sandboxed %ld", d, d < 0 ? 0 : nat->v[d], \
		       d < 0 ? 0 : box->v[d]);                                           \
	} while (0)

/* the signals sandpit keeps for itself: SIGSEGV, SIGSYS and 64 */
#define KEPT ((1ull << (SIGSEGV - 1)) | (1ull << (SIGSYS - 1)) | (1ull << 63))
#endif
