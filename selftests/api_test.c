/* sandpit_start's API: refused while other threads exist, refused a second
 * time, bad and unavailable modes fail clearly, strict refused under an
 * existing filter, write grants refused without openat2, and auto picks
 * strict on a legacy kernel and filter on this one if it has it. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"

/* ------------------------------------------------------------ the API */

static void *sleeper(void *a)
{
	(void)a;
	pause();
	return NULL;
}

TEST(api_start_refused_while_other_threads_exist)
{
	pthread_t t;
	ASSERT_EQ(0, pthread_create(&t, NULL, sleeper, NULL));
	EXPECT_EQ(-EBUSY, sandpit_start(NULL));
	EXPECT_NE(NULL, strstr(sandpit_error(), "threads"));
	EXPECT_EQ((int)SANDPIT_MODE_NONE, (int)sandpit_mode());
}

static int body_twice(void *a)
{
	(void)a;
	if (sandpit_mode() != suite_mode())
		return 1;
	return sandpit_start(NULL) == -EBUSY ? 0 : 2;
}

TEST(api_second_start_refused)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_twice, NULL)));
}

TEST(api_bad_and_unavailable_modes_fail_clearly)
{
	setenv("SANDPIT_MODE", "bogus", 1);
	EXPECT_EQ(-EINVAL, sandpit_start(NULL));
	EXPECT_NE(NULL, strstr(sandpit_error(), "bogus"));
	/* a kernel without seccomp-bpf (forced): filter mode fails, clearly */
	setenv("SANDPIT_KERNEL", "legacy", 1);
	setenv("SANDPIT_MODE", "filter", 1);
	EXPECT_EQ(-EOPNOTSUPP, sandpit_start(NULL));
	EXPECT_NE(NULL, strstr(sandpit_error(), "filter"));
	EXPECT_NE(NULL, strstr(sandpit_error(), "SANDPIT_KERNEL"));
	unsetenv("SANDPIT_MODE");
	unsetenv("SANDPIT_KERNEL");
	/* nothing was applied: this process is not sandboxed */
	EXPECT_EQ((int)SANDPIT_MODE_NONE, (int)sandpit_mode());
	int fd = open("/tmp/sandpit-selftest-notsandboxed", O_CREAT | O_WRONLY, 0600);
	EXPECT_LE(0, fd);
	close(fd);
	unlink("/tmp/sandpit-selftest-notsandboxed");
}

static int body_mode(void *a)
{
	return sandpit_mode() == *(enum sandpit_mode *)a ? 0 : 1;
}

TEST(api_strict_refused_cleanly_under_an_existing_filter)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { 1, &allow };
	if (!kernel_has_filter())
		SKIP(return, "no seccomp-bpf on this kernel: no process can be under a filter");
	ASSERT_EQ(0, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
	ASSERT_EQ(0, prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog));
	setenv("SANDPIT_MODE", "strict", 1);
	EXPECT_EQ(-EPERM, sandpit_start(NULL));
	EXPECT_NE(NULL, strstr(sandpit_error(), "filter"));
	EXPECT_EQ((int)SANDPIT_MODE_NONE, (int)sandpit_mode());
	/* and nothing was left behind: the process carries on unsandboxed */
	EXPECT_LE(0, getppid());
}

TEST(api_write_grant_refused_without_openat2)
{
	const char *w[] = { "/tmp", NULL };
	struct sandpit_options o = { .allow_write = w };
	setenv("SANDPIT_KERNEL", "no-openat2", 1);
	EXPECT_EQ(-EOPNOTSUPP, sandpit_start(&o));
	EXPECT_NE(NULL, strstr(sandpit_error(), "openat2"));
	EXPECT_EQ((int)SANDPIT_MODE_NONE, (int)sandpit_mode());
}

TEST(api_auto_on_a_legacy_kernel_runs_strict)
{
	enum sandpit_mode want = SANDPIT_MODE_STRICT;
	setenv("SANDPIT_KERNEL", "legacy", 1);
	setenv("SANDPIT_MODE", "auto", 1);
	EXPECT_EQ(0, outcome(run_sandboxed(body_mode, &want)));
}

/* auto is filter where the kernel has seccomp-bpf, strict where it has
 * not (the strict-only kernel of the kernel matrix) */
TEST(api_auto_on_this_kernel_runs_filter_if_it_has_it)
{
	enum sandpit_mode want = kernel_has_filter() ? SANDPIT_MODE_FILTER : SANDPIT_MODE_STRICT;
	unsetenv("SANDPIT_KERNEL");
	setenv("SANDPIT_MODE", "auto", 1);
	EXPECT_EQ(0, outcome(run_sandboxed(body_mode, &want)));
}

TEST_HARNESS_MAIN
