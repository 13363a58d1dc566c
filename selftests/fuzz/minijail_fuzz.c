/* libFuzzer target for minijail's policy format (policy/minijail.c): any
 * text either compiles into a policy that the T-table back end, the dump
 * and export-minijail accept, or is refused with at least one FILE:LINE
 * message; nothing crashes, leaks or is half-applied.
 *     make fuzz            (clang, -fsanitize=fuzzer,address,undefined)
 * make check runs it for a few seconds from the seeds in minijail_seeds/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy/policy.h"
#include "policy/t_table.h"

/* every message names a file and a line: "FILE:LINE: " */
static int located(const char *msg)
{
	for (const char *p = strchr(msg, ':'); p; p = strchr(p + 1, ':')) {
		const char *q = p + 1;
		int digits = 0;

		while (*q >= '0' && *q <= '9')
			q++, digits++;
		if (digits && q[0] == ':' && q[1] == ' ')
			return 1;
	}
	return 0;
}

static void count(void *ctx, const char *msg)
{
	if (!located(msg))
		abort();
	(*(int *)ctx)++;
}

static void noted(void *ctx, const char *msg)
{
	(void)ctx;
	if (!located(msg) || !strstr(msg, ": note: "))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tt_table table;
	static FILE *null;
	struct policy *p = (struct policy *)1;
	char err[512];
	int n = 0;
	int rc = policy_parse_minijail("fuzz.policy", (const char *)data, size, &p, count, noted, &n,
				       err, sizeof(err));

	if (rc < 0) {
		if (p || n == 0 || !err[0])
			abort();
		return 0;
	}
	if (!p || n)
		abort();
	if (!null)
		null = fopen("/dev/null", "w");
	if (policy_compile_table(p, &table, err, sizeof(err)) < 0)
		abort(); /* the parser must refuse what the table cannot hold */
	if (null) {
		policy_dump(p, null);
		if (policy_export_minijail(p, null) < 0)
			abort();
	}
	policy_free(p);
	return 0;
}
