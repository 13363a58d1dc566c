/* Programs without .eh_frame under `sandpit run`: a Go program
 * (static; the runtime's own assembly makes the calls), a stripped static
 * C program without unwind tables, and a hand-written assembly program.
 * The patcher must find every `syscall` they hold, each by the method the
 * program offers (Go's .gopclntab; a linear decode from a known boundary),
 * as SANDPIT_DEBUG=1 reports it; and each gives its native output and
 * status in strict and in filter mode.  The true sites of each program are
 * listed at build time by objdump (build/selftests/PROGRAM.sites). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "selftests/build_dir.h"
#include "selftests/run_util.h"

#define MAX_SITES 512

FIXTURE(prog) {
	char path[PATH_MAX];
};

FIXTURE_VARIANT(prog) {
	const char *mode;
};
FIXTURE_VARIANT_ADD(prog, strict) { .mode = "strict" };
FIXTURE_VARIANT_ADD(prog, filter) { .mode = "filter" };

FIXTURE_SETUP(prog) { }
FIXTURE_TEARDOWN(prog) { }

/* build/selftests/NAME */
static const char *prog_path(FIXTURE_DATA(prog) *self, const char *name)
{
	snprintf(self->path, sizeof self->path, "%s/selftests/%s", bindir, name);
	return self->path;
}

/* The addresses objdump found a `syscall` at, from NAME.sites. */
static int true_sites(const char *prog, unsigned long *v)
{
	char path[PATH_MAX + 8], line[64];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof path, "%s.sites", prog);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (n < MAX_SITES && fgets(line, sizeof line, f))
		v[n++] = strtoul(line, NULL, 16);
	fclose(f);
	return n;
}

/* The line SANDPIT_DEBUG wrote for the syscall at a, NULL if none. */
static const char *site_line(const char *err, unsigned long a)
{
	char key[64];

	snprintf(key, sizeof key, "sandpit: patcher: syscall at 0x%lx (", a);
	return strstr(err, key);
}

/* Every site of the program is reported, found by `method`, and patched
 * (or, in filter mode, left to run natively where the filter allows it;
 * an rt_sigreturn always is); the summary counts at least as many for the
 * method.  Returns how many sites were checked. */
static int check_sites(struct __test_metadata *_metadata, const char *mode, const char *prog,
		       const char *method)
{
	unsigned long site[MAX_SITES];
	int n = true_sites(prog, site), found = 0;
	char *argv[] = { (char *)prog, NULL }, want[64];
	struct result r;
	const char *sum;

	ASSERT_LT(0, n) TH_LOG("%s.sites: no sites listed", prog);
	/* the lines are written at start-up: how the run ends is not asked */
	want_stderr = 1;
	run_timeout = 10;
	ASSERT_EQ(0, sandboxed(mode, NULL, argv, NULL, NULL, "SANDPIT_DEBUG=1", &r));
	run_timeout = 0;
	want_stderr = 0;
	result_text(&r);
	for (int i = 0; i < n; i++) {
		const char *l = site_line(r.out, site[i]);

		EXPECT_NE(NULL, l) TH_LOG("%s: the syscall at 0x%lx was not found", prog, site[i]);
		if (!l)
			continue;
		found++;
		l = strchr(l, '(') + 1;
		EXPECT_EQ(0, strncmp(l, method, strlen(method)))
			TH_LOG("%s: 0x%lx found by %.12s, not %s", prog, site[i], l, method);
		l = strchr(l, ':') + 2;
		EXPECT_TRUE(!strncmp(l, "patched\n", 8) || !strncmp(l, "left native (rt_sigreturn)", 26) ||
			    (!strcmp(mode, "filter") &&
			     !strncmp(l, "left native (allowed in the filter)", 35)))
			TH_LOG("%s: 0x%lx: %.60s", prog, site[i], l);
	}
	EXPECT_EQ(n, found);
	snprintf(want, sizeof want, "%s ", method);
	sum = strstr(r.out, "found by eh_frame");
	ASSERT_NE(NULL, sum) TH_LOG("%s: no summary line", prog);
	sum = strstr(sum, want);
	ASSERT_NE(NULL, sum);
	EXPECT_LE((unsigned long)n, strtoul(sum + strlen(want), NULL, 10));
	free(r.out);
	return found;
}

/* Native and sandboxed: the same stdout and exit status. */
static void same_as_native(struct __test_metadata *_metadata, const char *mode, char *const argv[])
{
	struct result n, s;

	ASSERT_EQ(0, capture(argv, NULL, NULL, NULL, &n));
	ASSERT_EQ(0, sandboxed(mode, NULL, argv, NULL, NULL, NULL, &s));
	EXPECT_EQ(n.status, s.status);
	EXPECT_EQ(n.len, s.len);
	EXPECT_EQ(0, n.len == s.len ? memcmp(n.out, s.out, n.len) : 1)
		TH_LOG("%s: output differs: native '%.*s' sandboxed '%.*s'", argv[0], (int)n.len,
		       n.out, (int)s.len, s.out);
	free(n.out);
	free(s.out);
}

TEST_F(prog, go_every_syscall_found_by_gopclntab)
{
	/* the Go runtime of Debian 12's golang-go 1.19 has about 40 */
	EXPECT_LE(20, check_sites(_metadata, variant->mode, prog_path(self, "go_workers"),
				  "gopclntab"));
}

TEST_F(prog, go_workers_as_native)
{
	char *argv[] = { (char *)prog_path(self, "go_workers"), NULL };
	struct result n, s;

	ASSERT_EQ(0, capture(argv, NULL, NULL, NULL, &n));
	ASSERT_EQ(0, n.status);
	run_timeout = 20;
	ASSERT_EQ(0, sandboxed(variant->mode, NULL, argv, NULL, NULL, NULL, &s));
	run_timeout = 0;
	/* a hang (killed after run_timeout) is a failure: it was a handler
	 * that asked sandpit's own handler for a mask change while the thread
	 * it interrupted waited for one (user/untrusted/u_entry.c, ask_own_handler) */
	EXPECT_NE(128 + SIGKILL, s.status) TH_LOG("the Go program hung");
	EXPECT_EQ(n.status, s.status);
	EXPECT_EQ(n.len, s.len);
	EXPECT_EQ(0, n.len == s.len ? memcmp(n.out, s.out, n.len) : 1)
		TH_LOG("output differs: native '%.*s' sandboxed '%.*s'", (int)n.len, n.out,
		       (int)s.len, s.out);
	free(n.out);
	free(s.out);
}

TEST_F(prog, stripped_static_c_every_syscall_found_by_linear_decode)
{
	EXPECT_LE(50, check_sites(_metadata, variant->mode, prog_path(self, "no_unwind_static"),
				  "linear"));
}

TEST_F(prog, stripped_static_c_as_native)
{
	same_as_native(_metadata, variant->mode,
		       (char *const[]){ (char *)prog_path(self, "no_unwind_static"), NULL });
}

TEST_F(prog, assembly_every_syscall_found_by_linear_decode)
{
	EXPECT_EQ(4, check_sites(_metadata, variant->mode, prog_path(self, "asm_calls"), "linear"));
}

TEST_F(prog, assembly_as_native)
{
	same_as_native(_metadata, variant->mode,
		       (char *const[]){ (char *)prog_path(self, "asm_calls"), NULL });
}

TEST_HARNESS_MAIN
