/* The library as a user links it: build examples/checklist.c with the
 * plain gcc line from the README against build/libsandpit.so, run it with
 * SANDPIT_MODE=strict, and expect every check right and nothing created. */
#include <kselftest_harness.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "selftests/build_dir.h"

/* Build examples/NAME.c with the README's gcc line, run it with
 * SANDPIT_MODE=strict, count its "ok" and "FAIL" lines.  The source tree's
 * examples/ and include/ sit beside the build directory (as make
 * kselftest-install lays them out too). */
static int run_checklist(struct __test_metadata *_metadata, const char *name, int *oks, int *fails)
{
	char cmd[4 * PATH_MAX + 256];
	if (!bindir[0])
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "gcc %s/../examples/%s.c -I%s/../include -L%s -lsandpit -lpthread -o %s/%s", bindir,
		 name, bindir, bindir, bindir, name);
	if (system(cmd) != 0)
		return -1;
	const char *mode = getenv("SANDPIT_MODE");
	snprintf(cmd, sizeof(cmd), "SANDPIT_MODE=%s LD_LIBRARY_PATH=%s %s/%s 2>&1",
		 mode && *mode ? mode : "strict", bindir, bindir, name);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	char line[256];
	*oks = *fails = 0;
	while (fgets(line, sizeof(line), p)) {
		TH_LOG("%.*s", (int)strcspn(line, "\n"), line);
		*oks += !strncmp(line, "ok  ", 4);
		*fails += !strncmp(line, "FAIL", 4);
	}
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
}

TEST(outside_program_linked_with_libsandpit_passes_checklist)
{
	int oks, fails;
	unlink("/tmp/sandpit-checklist");
	EXPECT_EQ(0, run_checklist(_metadata, "checklist", &oks, &fails));
	EXPECT_EQ(12, oks);
	EXPECT_EQ(0, fails);
	EXPECT_EQ(-1, access("/tmp/sandpit-checklist", F_OK));
}

TEST(outside_program_with_threads_and_signals_passes_checklist)
{
	int oks, fails;
	unlink("/tmp/sandpit-threads-checklist");
	EXPECT_EQ(0, run_checklist(_metadata, "threads_checklist", &oks, &fails));
	EXPECT_EQ(6, oks);
	EXPECT_EQ(0, fails);
	EXPECT_EQ(-1, access("/tmp/sandpit-threads-checklist", F_OK));
}

TEST_HARNESS_MAIN
