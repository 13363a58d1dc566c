/* The library as a user links it: build examples/checklist.c with the
 * plain gcc line from the README against build/libsandpit.so, run it with
 * SANDPIT_MODE=strict, and expect every check right and nothing created. */
#include <kselftest_harness.h>
#include <stdlib.h>
#include <unistd.h>

TEST(outside_program_linked_with_libsandpit_passes_checklist)
{
	unlink("/tmp/sandpit-checklist");
	ASSERT_EQ(0, system("gcc examples/checklist.c -Iinclude -Lbuild -lsandpit "
			    "-o build/checklist"));
	FILE *p = popen("SANDPIT_MODE=strict LD_LIBRARY_PATH=build build/checklist 2>&1", "r");
	ASSERT_NE(NULL, p);
	char line[256];
	int oks = 0, fails = 0;
	while (fgets(line, sizeof(line), p)) {
		TH_LOG("%.*s", (int)strcspn(line, "\n"), line);
		oks += !strncmp(line, "ok  ", 4);
		fails += !strncmp(line, "FAIL", 4);
	}
	int st = pclose(p);
	EXPECT_EQ(0, WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st));
	EXPECT_EQ(12, oks);
	EXPECT_EQ(0, fails);
	EXPECT_EQ(-1, access("/tmp/sandpit-checklist", F_OK));
}

TEST_HARNESS_MAIN
