/* Included before every selftest (the Makefile's -include): the kernel's
 * harness, with a main that first stretches each test's timeout by
 * $SANDPIT_TEST_TIMEOUT_SCALE.  The kernel-matrix guests run under qemu's
 * TCG, several times slower than the host; a security test killed by its
 * timeout proves nothing, so there it gets the time to finish its bounded
 * number of attempts instead of being skipped. */
#ifndef SANDPIT_HARNESS_MAIN_H
#define SANDPIT_HARNESS_MAIN_H
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* $SANDPIT_TESTS_ONLY_<binary> (for run_test: SANDPIT_TESTS_ONLY_run_test;
 * names, "test" or "fixture.test", separated by spaces): the tests of this
 * binary that run, the others are left out of the plan, and a line says
 * how many.  The kernel-matrix guests run a
 * named part of the longest binaries with it (docs/KERNELS.md); the 6.1
 * harness has no -t of its own. */
static inline int harness_named(const char *list, const char *fixture, const char *test)
{
	size_t fl = strlen(fixture), tl = strlen(test);

	for (const char *p = list; *p;) {
		while (*p == ' ')
			p++;
		size_t n = strcspn(p, " ");
		if (n && ((n == tl && !strncmp(p, test, n)) ||
			  (n == fl + 1 + tl && !strncmp(p, fixture, fl) && p[fl] == '.' &&
			   !strncmp(p + fl + 1, test, tl))))
			return 1;
		p += n;
	}
	return 0;
}

static inline void harness_select_tests(void)
{
	char var[128];
	int all = 0, kept = 0;

	snprintf(var, sizeof(var), "SANDPIT_TESTS_ONLY_%s", program_invocation_short_name);
	const char *only = getenv(var);

	if (!only || !*only)
		return;
	for (struct __fixture_metadata *f = __fixture_list; f; f = f->next) {
		struct __test_metadata *first = NULL, *last = NULL;
		for (struct __test_metadata *t = f->tests, *next; t; t = next) {
			next = t->next;
			all++;
			if (!harness_named(only, f->name, t->name))
				continue;
			kept++;
			t->next = NULL;
			t->prev = last ? last : t;
			if (last)
				last->next = t;
			else
				first = t;
			last = t;
		}
		if (first)
			first->prev = last;
		f->tests = first;
	}
	printf("# %s: %d of this binary's %d tests\n", var, kept, all);
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
		harness_select_tests();                     \
		harness_scale_timeouts();                   \
		return test_harness_run(argc, argv);        \
	}
#endif
