/* compat/: the kernel probes, $SANDPIT_KERNEL forcing, and `sandpit probe`.
 * The harness forks each test, so each starts with an empty probe cache. */
#include <kselftest_harness.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <linux/futex.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "compat/compat.h"
#include "selftests/build_dir.h"

#ifndef __NR_mseal
#define __NR_mseal 462
#endif

/* compat_state as an int: the enum is unsigned, the harness compares with int */
static int state(enum compat_feature f)
{
	return (int)compat_state(f);
}

static int init_with(const char *kernel_switches, char *err, size_t errlen)
{
	if (kernel_switches)
		setenv("SANDPIT_KERNEL", kernel_switches, 1);
	else
		unsetenv("SANDPIT_KERNEL");
	compat_reset();
	return compat_init(err, errlen);
}

/* The "Name:" line of /proc/self/status as a number, -1 if missing. */
static long status_field(const char *name)
{
	char line[256];
	long v = -1;
	size_t n = strlen(name);
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

static int open_fd_count(void)
{
	int n = 0;
	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

static int sealed_mappings(void)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmFlags:", 8) && strstr(line, " sl"))
			n++;
	fclose(f);
	return n;
}

/* Direct checks, by other means than the module's, for features this
 * kernel may or may not have. */
static int raw_landlock(void)
{
	return syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) > 0;
}

static int raw_mseal(void)
{
	/* flags must be 0: EINVAL once the call exists, ENOSYS before */
	return syscall(__NR_mseal, NULL, 0UL, 1UL) < 0 && errno == EINVAL;
}

static int raw_pidfd_thread(void)
{
	long fd = syscall(SYS_pidfd_open, gettid(), O_EXCL);
	if (fd >= 0)
		close((int)fd);
	return fd >= 0;
}

static int raw_futex_waitv(void)
{
	uint32_t word = 1;
	struct futex_waitv w = { .val = 0, .uaddr = (uintptr_t)&word, .flags = FUTEX_32 };
	return syscall(__NR_futex_waitv, &w, 1, 0, NULL, 0) == -1 && errno == EAGAIN;
}

static int raw_mm_map(void)
{
	unsigned size = 0;
	return prctl(PR_SET_MM, PR_SET_MM_MAP_SIZE, &size, 0, 0) == 0 && size > 0;
}

static int raw_pidfd_getfd(void)
{
	int self = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (self < 0)
		return 0;
	int fd = (int)syscall(SYS_pidfd_getfd, self, self, 0);
	close(self);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static int raw_user_dispatch(void)
{
	static char selector = SYSCALL_DISPATCH_FILTER_ALLOW;
	if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, 0, 0, &selector))
		return 0;
	return prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0) == 0;
}

/* Runs build/sandpit probe (found next to this binary) and returns its wait
 * status; its stdout and stderr go to out. */
static int run_sandpit_probe(const char *kernel_switches, char *out, size_t outlen)
{
	char cmd[2 * PATH_MAX];
	const char *build = bindir;
	if (!*build)
		return -1;
	if (kernel_switches)
		snprintf(cmd, sizeof(cmd), "SANDPIT_KERNEL='%s' %s/sandpit probe 2>&1",
			 kernel_switches, build);
	else
		snprintf(cmd, sizeof(cmd), "env -u SANDPIT_KERNEL %s/sandpit probe 2>&1", build);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	size_t got = fread(out, 1, outlen - 1, p);
	out[got] = '\0';
	return pclose(p);
}

/* seccomp-bpf, asked without sandpit: a NULL filter program is EFAULT
 * where filters exist, EINVAL on a kernel built without SECCOMP_FILTER */
static int raw_filter(void)
{
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0) < 0 && errno == EFAULT;
}

/* Every kernel since 5.8 has these, and sandpit must find them; of them,
 * what is built on seccomp-bpf (the seccomp(2) filter operations included)
 * is absent -- probed absent, not forced off -- on a kernel without it,
 * the strict-only kernel of the kernel matrix. */
TEST(every_feature_this_kernel_has_is_present)
{
	static const enum compat_feature surely[] = {
		COMPAT_STRICT,	   COMPAT_PIDFD, COMPAT_OPENAT2, COMPAT_MEMFD_FUTURE_WRITE,
		COMPAT_FACCESSAT2,
	};
	static const enum compat_feature on_filter[] = {
		COMPAT_FILTER,	COMPAT_SECCOMP_SYSCALL, COMPAT_TSYNC,	 COMPAT_ACTIONS_AVAIL,
		COMPAT_KILL_PROCESS, COMPAT_RET_TRAP,	COMPAT_RET_LOG, COMPAT_USER_NOTIF,
	};
	int filter = raw_filter();

	ASSERT_EQ(0, init_with(NULL, NULL, 0));
	if (!filter)
		TH_LOG("no seccomp-bpf on this kernel: its features must be absent");
	for (size_t i = 0; i < sizeof(surely) / sizeof(surely[0]); i++) {
		EXPECT_EQ(COMPAT_PRESENT, state(surely[i])) {
			TH_LOG("%s", compat_name(surely[i]));
		}
	}
	for (size_t i = 0; i < sizeof(on_filter) / sizeof(on_filter[0]); i++) {
		EXPECT_EQ(filter ? COMPAT_PRESENT : COMPAT_ABSENT, state(on_filter[i])) {
			TH_LOG("%s", compat_name(on_filter[i]));
		}
	}
	EXPECT_EQ(raw_landlock(), compat_has(COMPAT_LANDLOCK));
	EXPECT_EQ(raw_mseal(), compat_has(COMPAT_MSEAL));
	EXPECT_EQ(raw_pidfd_thread(), compat_has(COMPAT_PIDFD_THREAD));
	EXPECT_EQ(raw_pidfd_getfd(), compat_has(COMPAT_PIDFD_GETFD));
	EXPECT_EQ(raw_user_dispatch(), compat_has(COMPAT_USER_DISPATCH));
	EXPECT_EQ(raw_futex_waitv(), compat_has(COMPAT_FUTEX_WAITV));
	EXPECT_EQ(raw_mm_map(), compat_has(COMPAT_MM_MAP));
}

TEST(landlock_abi_is_the_kernels)
{
	ASSERT_EQ(0, init_with(NULL, NULL, 0));
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	EXPECT_EQ(abi > 0 ? abi : 0, compat_landlock_abi());
}

TEST(legacy_leaves_only_strict_mode)
{
	ASSERT_EQ(0, init_with("legacy", NULL, 0));
	EXPECT_EQ(COMPAT_PRESENT, state(COMPAT_STRICT));
	for (int f = COMPAT_STRICT + 1; f < COMPAT_NFEATURES; f++) {
		EXPECT_EQ(COMPAT_FORCED_OFF, state(f)) {
			TH_LOG("%s", compat_name(f));
		}
		EXPECT_EQ(0, compat_has(f));
	}
	EXPECT_EQ(0, compat_landlock_abi());
}

TEST(no_tsync_no_kill_process_turns_exactly_those_off)
{
	int plain[COMPAT_NFEATURES];
	ASSERT_EQ(0, init_with(NULL, NULL, 0));
	for (int f = 0; f < COMPAT_NFEATURES; f++)
		plain[f] = state(f);
	ASSERT_EQ(0, init_with("no-tsync,no-kill-process", NULL, 0));
	for (int f = 0; f < COMPAT_NFEATURES; f++) {
		int want = f == COMPAT_TSYNC || f == COMPAT_KILL_PROCESS ? COMPAT_FORCED_OFF : plain[f];
		EXPECT_EQ(want, state(f)) {
			TH_LOG("%s", compat_name(f));
		}
	}
}

TEST(each_no_switch_turns_its_own_feature_off)
{
	for (int f = 0; f < COMPAT_NFEATURES; f++) {
		char sw[64];
		snprintf(sw, sizeof(sw), "no-%s", compat_name(f));
		ASSERT_EQ(0, init_with(sw, NULL, 0));
		EXPECT_EQ(COMPAT_FORCED_OFF, state(f)) {
			TH_LOG("%s", sw);
		}
	}
}

TEST(switch_off_filter_takes_its_dependents_along)
{
	ASSERT_EQ(0, init_with("no-filter", NULL, 0));
	EXPECT_EQ(COMPAT_PRESENT, state(COMPAT_STRICT));
	EXPECT_EQ(COMPAT_FORCED_OFF, state(COMPAT_SECCOMP_SYSCALL));
	EXPECT_EQ(COMPAT_FORCED_OFF, state(COMPAT_TSYNC));
	EXPECT_EQ(COMPAT_FORCED_OFF, state(COMPAT_RET_TRAP));
	EXPECT_EQ(COMPAT_FORCED_OFF, state(COMPAT_USER_NOTIF));
	EXPECT_EQ(COMPAT_PRESENT, state(COMPAT_PIDFD));
	EXPECT_EQ(COMPAT_PRESENT, state(COMPAT_OPENAT2));
}

TEST(without_actions_avail_each_action_is_tried_in_a_child)
{
	/* absent, all three, on a kernel without seccomp-bpf */
	int has = raw_filter() ? COMPAT_PRESENT : COMPAT_ABSENT;

	ASSERT_EQ(0, init_with("no-actions-avail", NULL, 0));
	EXPECT_EQ(COMPAT_FORCED_OFF, state(COMPAT_ACTIONS_AVAIL));
	EXPECT_EQ(has, state(COMPAT_KILL_PROCESS));
	EXPECT_EQ(has, state(COMPAT_RET_TRAP));
	EXPECT_EQ(has, state(COMPAT_RET_LOG));
}

TEST(unknown_switch_is_einval_naming_it)
{
	char err[512] = "";
	EXPECT_EQ(-EINVAL, init_with("no-tsync,no-tsnyc", err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "'no-tsnyc'")) {
		TH_LOG("%s", err);
	}
	EXPECT_EQ(NULL, strstr(err, "'no-tsync'"));
}

TEST(feature_name_without_no_prefix_is_rejected)
{
	char err[512] = "";
	EXPECT_EQ(-EINVAL, init_with("tsync", err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "'tsync'"));
}

TEST(empty_switch_between_commas_is_rejected)
{
	char err[512] = "";
	EXPECT_EQ(-EINVAL, init_with("legacy,,no-tsync", err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "''"));
}

TEST(failed_init_reports_every_feature_absent)
{
	EXPECT_EQ(-EINVAL, init_with("legasy", NULL, 0));
	for (int f = 0; f < COMPAT_NFEATURES; f++)
		EXPECT_EQ(0, compat_has(f));
}

TEST(failed_init_fails_again_with_the_same_message)
{
	char first[512], again[512];
	EXPECT_EQ(-EINVAL, init_with("no-bogus", first, sizeof(first)));
	EXPECT_EQ(-EINVAL, compat_init(again, sizeof(again)));
	EXPECT_STREQ(first, again);
}

TEST(probes_are_cached_until_reset)
{
	ASSERT_EQ(0, init_with(NULL, NULL, 0));
	setenv("SANDPIT_KERNEL", "legacy", 1);
	EXPECT_EQ(0, compat_init(NULL, 0));
	EXPECT_EQ(raw_filter() ? COMPAT_PRESENT : COMPAT_ABSENT, state(COMPAT_FILTER));
	compat_reset();
	EXPECT_EQ(0, compat_init(NULL, 0));
	EXPECT_EQ(COMPAT_FORCED_OFF, state(COMPAT_FILTER));
}

TEST(state_without_init_probes_on_demand)
{
	unsetenv("SANDPIT_KERNEL");
	compat_reset();
	EXPECT_EQ(COMPAT_PRESENT, state(COMPAT_STRICT));
}

TEST(probing_installs_no_seccomp_filter_on_caller)
{
	ASSERT_EQ(0, init_with(NULL, NULL, 0));
	EXPECT_EQ(0, status_field("Seccomp"));
	/* a kernel without seccomp-bpf has no Seccomp_filters line */
	EXPECT_EQ(raw_filter() ? 0 : -1, status_field("Seccomp_filters"));
	EXPECT_EQ(0, prctl(PR_GET_SECCOMP, 0, 0, 0, 0));
}

TEST(probing_leaves_no_new_privs_unset)
{
	ASSERT_EQ(0, init_with(NULL, NULL, 0));
	EXPECT_EQ(0, status_field("NoNewPrivs"));
	EXPECT_EQ(0, prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
}

TEST(probing_seals_no_mapping_of_caller)
{
	int before = sealed_mappings();
	ASSERT_EQ(0, init_with(NULL, NULL, 0));
	EXPECT_EQ(before, sealed_mappings());
}

TEST(probing_leaks_no_descriptor)
{
	int before = open_fd_count();
	ASSERT_EQ(0, init_with(NULL, NULL, 0));
	EXPECT_EQ(before, open_fd_count());
}

TEST(probing_leaves_no_child_to_reap)
{
	ASSERT_EQ(0, init_with("no-actions-avail", NULL, 0));
	EXPECT_EQ(-1, waitpid(-1, NULL, __WALL | WNOHANG));
	EXPECT_EQ(ECHILD, errno);
}

TEST(child_probes_answer_when_caller_ignores_sigchld)
{
	int has = raw_filter() ? COMPAT_PRESENT : COMPAT_ABSENT;

	signal(SIGCHLD, SIG_IGN);
	ASSERT_EQ(0, init_with("no-actions-avail", NULL, 0));
	EXPECT_EQ(has, state(COMPAT_KILL_PROCESS));
	EXPECT_EQ(has, state(COMPAT_RET_TRAP));
	EXPECT_EQ(raw_mseal(), compat_has(COMPAT_MSEAL));
	EXPECT_EQ(raw_user_dispatch(), compat_has(COMPAT_USER_DISPATCH));
}

TEST(table_names_every_feature)
{
	char *buf = NULL;
	size_t len = 0;
	ASSERT_EQ(0, init_with("no-mseal", NULL, 0));
	FILE *f = open_memstream(&buf, &len);
	ASSERT_NE(NULL, f);
	compat_print_table(f);
	fclose(f);
	EXPECT_NE(NULL, strstr(buf, "SANDPIT_KERNEL=no-mseal"));
	for (int i = 0; i < COMPAT_NFEATURES; i++) {
		char row[64];
		snprintf(row, sizeof(row), "\n%-20s ", compat_name(i));
		EXPECT_NE(NULL, strstr(buf, row)) {
			TH_LOG("%s", compat_name(i));
		}
	}
	EXPECT_NE(NULL, strstr(buf, compat_fallback(COMPAT_MSEAL)));
	free(buf);
}

TEST(sandpit_probe_exits_0_and_follows_sandpit_kernel)
{
	char plain[4096], legacy[4096];
	int st = run_sandpit_probe(NULL, plain, sizeof(plain));
	ASSERT_TRUE(WIFEXITED(st)) {
		TH_LOG("%s", plain);
	}
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_NE(NULL, strstr(plain, "SANDPIT_KERNEL unset"));
	EXPECT_EQ(NULL, strstr(plain, "forced-off"));

	st = run_sandpit_probe("legacy", legacy, sizeof(legacy));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_NE(NULL, strstr(legacy, "SANDPIT_KERNEL=legacy"));
	EXPECT_NE(NULL, strstr(legacy, "filter               forced-off"));
	EXPECT_STRNE(plain, legacy);
}

TEST(sandpit_probe_with_bad_switch_exits_2_naming_it)
{
	char out[4096];
	int st = run_sandpit_probe("no-tsync,typo", out, sizeof(out));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(2, WEXITSTATUS(st));
	EXPECT_NE(NULL, strstr(out, "'typo'"));
}

TEST_HARNESS_MAIN
