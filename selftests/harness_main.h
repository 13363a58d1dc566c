/* Included before every selftest (the Makefile's -include): the kernel's
 * harness, with a main that first stretches each test's timeout by
 * $SANDPIT_TEST_TIMEOUT_SCALE.  The kernel-matrix guests run under qemu's
 * TCG, several times slower than the host; a security test killed by its
 * timeout proves nothing, so there it gets the time to finish its bounded
 * number of attempts instead of being skipped. */
#ifndef SANDPIT_HARNESS_MAIN_H
#define SANDPIT_HARNESS_MAIN_H
#include <stdlib.h>
#include "kselftest_harness.h"

/* how many times longer than on the host the tests may take (>= 1); the
 * tests' own give-up times (a hung sandboxed child) scale by it too */
static inline int suite_timeout_scale(void)
{
	const char *s = getenv("SANDPIT_TEST_TIMEOUT_SCALE");
	int k = s ? atoi(s) : 1;

	return k > 1 ? k : 1;
}

static inline void harness_scale_timeouts(void)
{
	int k = suite_timeout_scale();

	if (k == 1)
		return;
	for (struct __fixture_metadata *f = __fixture_list; f; f = f->next)
		for (struct __test_metadata *t = f->tests; t; t = t->next)
			t->timeout *= k;
}

#undef TEST_HARNESS_MAIN
#define TEST_HARNESS_MAIN                                   \
	static void __attribute__((constructor))            \
	__constructor_order_last(void)                      \
	{                                                   \
		if (!__constructor_order)                   \
			__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD; \
	}                                                   \
	int main(int argc, char **argv)                     \
	{                                                   \
		harness_scale_timeouts();                   \
		return test_harness_run(argc, argv);        \
	}
#endif
