/* `sandpit run` against attacks from inside an unmodified program
 * (selftests/attack/attack.c, linked dynamically and statically): each
 * must be refused, in strict and in filter mode, on the run fixture
 * (selftests/run_fixture.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "selftests/build_dir.h"
#include "selftests/run_util.h"
#include "selftests/sandbox_util.h"
#include "selftests/kernel_probe.h"
#include "compat/compat.h"
#include "user/patch/plan_file.h"
#include "selftests/run_fixture.h"


/* ---- attacks from inside an unmodified program */

static void attack(struct __test_metadata *_metadata, const FIXTURE_DATA(run) *self, const char *mode,
		   const char *name, const char *arg)
{
	static const char *const kinds[] = { "attack_dyn", "attack_static" };
	for (int k = 0; k < 2; k++) {
		char prog[PATH_MAX + 32];
		struct result r;
		snprintf(prog, sizeof prog, "%s/selftests/%s", bindir, kinds[k]);
		char *const argv[] = { prog, (char *)name, (char *)arg, NULL };
		ASSERT_EQ(0, sandboxed(mode, NULL, argv, NULL, NULL, NULL, &r));
		/* 0: refused; killed: refused, fail closed; 1: it got through */
		EXPECT_TRUE(r.status == 0 || r.status > 128) TH_LOG("%s %s: status %d", kinds[k], name, r.status);
		free(r.out);
	}
}

TEST_F(run, attack_raw_syscall_write)
{
	char target[160];
	snprintf(target, sizeof target, "%s/raw-written", self->dir);
	attack(_metadata, self, variant->mode, "raw-write", target);
	EXPECT_NE(0, access(target, F_OK));
}
TEST_F(run, attack_libc_write_outside_grants)
{
	char target[160];
	snprintf(target, sizeof target, "%s/libc-written", self->dir);
	attack(_metadata, self, variant->mode, "libc-write", target);
	EXPECT_NE(0, access(target, F_OK));
}
TEST_F(run, attack_int80_and_x32)
{
	attack(_metadata, self, variant->mode, "int80", NULL);
	attack(_metadata, self, variant->mode, "x32", NULL);
}
TEST_F(run, attack_execve_socket_fork)
{
	attack(_metadata, self, variant->mode, "execve", NULL);
	attack(_metadata, self, variant->mode, "socket", NULL);
	attack(_metadata, self, variant->mode, "fork", NULL);
}
TEST_F(run, attack_signal_to_another_process) { attack(_metadata, self, variant->mode, "kill-parent", NULL); }

/* B is started as P's sibling under `sandpit run` (one clone with
 * CLONE_PARENT), never as P's child: the program has no child at all to
 * wait for, and the call did reach the kernel (it answered ECHILD) */
TEST_F(run, trusted_process_is_no_child_the_program_can_wait_for)
{
	static const char *const kinds[] = { "attack_dyn", "attack_static" };
	for (int k = 0; k < 2; k++) {
		char prog[PATH_MAX + 32];
		struct result r;
		snprintf(prog, sizeof prog, "%s/selftests/%s", bindir, kinds[k]);
		char *const argv[] = { prog, "wait-any", NULL };
		ASSERT_EQ(0, sandboxed(variant->mode, NULL, argv, NULL, NULL, NULL, &r));
		result_text(&r);
		EXPECT_EQ(0, r.status) TH_LOG("%s: %s", kinds[k], r.out);
		EXPECT_NE(NULL, strstr(r.out, "attack: waitid -1 ECHILD\n")) TH_LOG("%s: %s", kinds[k], r.out);
		free(r.out);
	}
}
TEST_F(run, attack_sandpit_memory) { attack(_metadata, self, variant->mode, "secure-memory", NULL); }
TEST_F(run, attack_raw_clone_and_clone3)
{
	attack(_metadata, self, variant->mode, "raw-clone", NULL);
	attack(_metadata, self, variant->mode, "clone3", NULL);
}
/* every number /proc/self/fd lists that the program cannot reach (sandpit's)
 * closed and dup2-ed over: each refused with EBADF; the program reaches
 * exactly the descriptors it reaches natively; every other number below the
 * limit is the program's; threads (each a slot's eventfds) still work */
static void fds_seen(struct __test_metadata *_metadata, const char *mode, const char *prog, int counts[6])
{
	char *const argv[] = { (char *)prog, "sandpit-fds", NULL };
	struct result r;
	int made = mode ? sandboxed(mode, NULL, argv, NULL, NULL, NULL, &r) : capture(argv, NULL, NULL, NULL, &r);
	ASSERT_EQ(0, made);
	const char *line = strstr(result_text(&r), "sandpit-fds:");
	ASSERT_NE(NULL, line) TH_LOG("%s: status %d, said: %s", prog, r.status, r.out);
	ASSERT_EQ(6, sscanf(line, "sandpit-fds: listed %d reachable %d refused %d of %d taken %d threads %d/8",
			    &counts[0], &counts[1], &counts[2], &counts[3], &counts[4], &counts[5]));
	TH_LOG("%s %s: %s", mode ? mode : "native", prog, line);
	EXPECT_EQ(0, r.status);
	free(r.out);
}

TEST_F(run, attack_sandpit_descriptors)
{
	static const char *const kinds[] = { "attack_dyn", "attack_static" };
	for (int k = 0; k < 2; k++) {
		char prog[PATH_MAX + 32];
		int native[6], boxed[6];
		snprintf(prog, sizeof prog, "%s/selftests/%s", bindir, kinds[k]);
		fds_seen(_metadata, NULL, prog, native);
		fds_seen(_metadata, variant->mode, prog, boxed);
		EXPECT_EQ(native[1], boxed[1]); /* what the program reaches */
		EXPECT_GT(boxed[3], 0);		/* the attack reached sandpit's numbers */
		EXPECT_EQ(boxed[3], boxed[2]);
		EXPECT_GT(boxed[4], 100);
		EXPECT_EQ(8, boxed[5]);
	}
}
/* the secret is outside every grant (the test grants nothing here) */
TEST_F(run, attack_toctou_path_flip) { attack(_metadata, self, variant->mode, "toctou", self->secret); }

TEST_HARNESS_MAIN
