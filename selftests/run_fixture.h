/* The fixture of `sandpit run` on real programs and attacks (run_test,
 * run_command_test, run_attack_test): a directory of input files (32 MB
 * of text, a small one, a script, a secret outside every grant, jq's and
 * bc's input) and a read grant on it, in strict and in filter mode. */
#ifndef SANDPIT_SELFTEST_RUN_FIXTURE_H
#define SANDPIT_SELFTEST_RUN_FIXTURE_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "selftests/run_util.h"
#include "selftests/kernel_probe.h"

FIXTURE(run) {
	char dir[64];
	char big[128], small[128], script[128], secret[128], jq_in[128], bc_in[128];
	char grant[160];
};

FIXTURE_VARIANT(run) {
	const char *mode;
};
FIXTURE_VARIANT_ADD(run, strict) { .mode = "strict" };
FIXTURE_VARIANT_ADD(run, filter) { .mode = "filter" };

FIXTURE_SETUP(run)
{
	SKIP_FILTER_VARIANT_WITHOUT_FILTER(variant->mode);
	strcpy(self->dir, "/tmp/sandpit-run-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->big, sizeof self->big, "%s/big.txt", self->dir);
	snprintf(self->small, sizeof self->small, "%s/small.txt", self->dir);
	snprintf(self->script, sizeof self->script, "%s/script.sh", self->dir);
	snprintf(self->secret, sizeof self->secret, "%s/secret", self->dir);
	snprintf(self->jq_in, sizeof self->jq_in, "%s/in.json", self->dir);
	snprintf(self->bc_in, sizeof self->bc_in, "%s/in.bc", self->dir);
	snprintf(self->grant, sizeof self->grant, "--allow-read=%s", self->dir);
	/* 32 MB of text, some of it compressible */
	FILE *f = fopen(self->big, "w");
	ASSERT_NE(NULL, f);
	unsigned long x = 88172645463325252UL;
	for (long i = 0; i < 1000000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		fprintf(f, "line %ld %016lx %s\n", i, x, (i & 7) ? "same same" : "different");
	}
	fclose(f);
	f = fopen(self->small, "w");
	ASSERT_NE(NULL, f);
	for (int i = 0; i < 20000; i++)
		fprintf(f, "%d %s\n", (i * 7919) % 20000, i % 3 ? "beta" : "alpha");
	fclose(f);
	write_file(_metadata, self->script, "#!/bin/sh\necho \"script says $1\"\nexit 4\n", 0755);
	write_file(_metadata, self->secret, "SECRET\n", 0600);
	write_file(_metadata, self->jq_in, "{\"a\": [1, 2, 3], \"b\": {\"c\": \"d\"}}\n", 0644);
	write_file(_metadata, self->bc_in, "scale=20\n2^200\n4*a(1)\n", 0644);
}

FIXTURE_TEARDOWN(run)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", self->dir);
	EXPECT_EQ(0, system(cmd));
}
#endif
