/* What a policy file is made into outside the sandbox: the dump of each
 * call's path in both modes, and the BPF export, loaded by the kernel and
 * through the command (export-bpf, check, show). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kselftest_harness.h>

#include "policy/policy.h"
#include "policy/t_table.h"

#include "build_dir.h"
#include "default_expected.h"
#include "policy_util.h"
#include "sandbox_util.h"
#include "selftests/build_dir.h"
#include "policyfile_util.h"

/* --- the dump: action, rule and path in each mode --- */

TEST(show_gives_each_calls_path_in_both_modes)
{
	struct policy *p = default_policy();
	char *buf = dump_of(p);

	EXPECT_TRUE(dump_line_has(buf, "read", "allow          native  native"));
	EXPECT_TRUE(dump_line_has(buf, "getppid", "allow          T       native"));
	EXPECT_TRUE(dump_line_has(buf, "execve", "deny(EACCES)   errno   BPF errno"));
	EXPECT_TRUE(dump_line_has(buf, "openat", "process        B       B"));
	EXPECT_TRUE(dump_line_has(buf, "close", "trap           T       BPF+T"));
	EXPECT_TRUE(dump_line_has(buf, "munmap", "trap           T       T"));
	EXPECT_TRUE(dump_line_has(buf, "gettid", "emulate        T       T"));
	EXPECT_TRUE(dump_line_has(buf, "default", "deny(ENOSYS)   errno   BPF errno"));
	free(buf);
	policy_free(p);
}

/* --- the BPF export, loaded by the kernel --- */

static const char bpf_policy[] = "default: deny(ENOSYS)\n"
				 "exit_group: allow\n"
				 "getpid: allow\n"
				 "getppid: deny(EXDEV)\n"
				 "getuid: arg0 == 7; deny(ENOTTY)\n"
				 "read: allow\nwrite: allow\nexit: allow\nrt_sigreturn: allow\n";

/* Loads the program in `fd` in a child under NO_NEW_PRIVS and tries the
 * policy's calls: 0 if each answered as the policy says. */
static int load_and_try(int fd)
{
	struct stat st;
	pid_t pid;
	int status;

	if (fstat(fd, &st) < 0 || st.st_size == 0 || st.st_size % 8)
		return 1;
	void *prog = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (prog == MAP_FAILED)
		return 2;
	struct sock_fprog fp = { .len = (unsigned short)(st.st_size / 8), .filter = prog };
	pid = fork();
	if (pid == 0) {
		pid_t me = (pid_t)syscall(SYS_getpid);

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp))
			syscall(SYS_exit_group, 10);
		if (syscall(SYS_getpid) != me)
			syscall(SYS_exit_group, 11);
		if (syscall(SYS_getppid) != -1 || errno != EXDEV)
			syscall(SYS_exit_group, 12);
		if (syscall(SYS_getpriority, 0, 0) != -1 || errno != ENOSYS)
			syscall(SYS_exit_group, 13);
		if (syscall(SYS_getuid, 1) != -1 || errno != ENOTTY)
			syscall(SYS_exit_group, 14);
		syscall(SYS_exit_group, 0);
	}
	munmap(prog, (size_t)st.st_size);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 3;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

TEST(export_bpf_is_accepted_by_the_kernel_and_enforces_the_file)
{
	struct msgs m;
	struct policy *p = policy_of_text(bpf_policy, &m, NULL);
	struct policy_runtime rt = { .pid = getpid(), .fd_lo = 1, .fd_hi = 0 };
	char err[256] = "";
	int fd = memfd_create("bpf", MFD_CLOEXEC);

	ASSERT_NE(NULL, p) TH_LOG("%s", m.text);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, policy_export_bpf(p, &rt, fd, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0, load_and_try(fd));
	close(fd);
	policy_free(p);
}

/* build/sandpit, next to build/selftests/ */
static int sandpit_cli(char *out, size_t n)
{
	if (!*bindir || (size_t)snprintf(out, n, "%s/sandpit", bindir) >= n)
		return -1;
	return access(out, X_OK);
}

TEST(cli_export_bpf_check_and_show)
{
	static char out[1 << 18], errs[1 << 14];
	char cli[PATH_MAX], want[PATH_MAX + 128];
	struct tmp t;
	int fd = memfd_create("out", MFD_CLOEXEC), efd = memfd_create("err", MFD_CLOEXEC);

	if (sandpit_cli(cli, sizeof(cli)) < 0)
		SKIP(return, "no sandpit command next to this test");
	tmp_init(&t);
	const char *good = tmp_file(&t, "good.policy", bpf_policy);
	const char *bad = tmp_file(&t, "bad.policy", "getppid: allow\nopenat: allow\nfoo: kill\n");

	EXPECT_EQ(0, run_cli(cli, (const char *[]){ cli, "policy", "export-bpf", good, NULL }, fd,
			     efd));
	EXPECT_EQ(0, load_and_try(fd));

	ASSERT_EQ(0, ftruncate(fd, 0));
	EXPECT_EQ(0, run_cli(cli, (const char *[]){ cli, "policy", "export-pfc", good, NULL }, fd,
			     efd));
	read_all(fd, out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "action ERRNO(18);")); /* getppid: EXDEV */

	ASSERT_EQ(0, ftruncate(fd, 0));
	EXPECT_EQ(0, run_cli(cli, (const char *[]){ cli, "policy", "check", good, NULL }, fd, efd));
	read_all(efd, errs, sizeof(errs));
	EXPECT_STREQ("", errs);

	/* a policy strict mode cannot enforce: accepted, with a note per line */
	const char *loose = tmp_file(&t, "loose.policy",
				     "default: kill\nread: allow\nwrite: arg0 == 1\nexit: allow\n");
	ASSERT_EQ(0, ftruncate(efd, 0));
	ASSERT_EQ(0, lseek(efd, 0, SEEK_SET));
	EXPECT_EQ(0, run_cli(cli, (const char *[]){ cli, "policy", "check", loose, NULL }, fd,
			     efd));
	read_all(efd, errs, sizeof(errs));
	snprintf(want, sizeof(want),
		 "%s:3: note: write: strict mode cannot enforce a rule on its arguments: seccomp "
		 "strict mode lets the program make write itself; allow it, or use filter mode\n"
		 "%s:1: note: rt_sigreturn: no line names it, and strict mode cannot enforce the "
		 "default, kill: seccomp strict mode lets the program make rt_sigreturn itself; "
		 "allow it, or use filter mode\n",
		 loose, loose);
	EXPECT_STREQ(want, errs);
	ASSERT_EQ(0, ftruncate(fd, 0));
	ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
	EXPECT_EQ(0, run_cli(cli, (const char *[]){ cli, "policy", "show", loose, NULL }, fd, efd));
	read_all(fd, out, sizeof(out));
	EXPECT_TRUE(dump_line_has(out, "write", "refused")) TH_LOG("%s", out);
	EXPECT_FALSE(dump_line_has(out, "read", "refused")) TH_LOG("%s", out);

	ASSERT_EQ(0, ftruncate(efd, 0));
	ASSERT_EQ(0, lseek(efd, 0, SEEK_SET));
	EXPECT_EQ(1, run_cli(cli, (const char *[]){ cli, "policy", "check", bad, NULL }, fd, efd));
	read_all(efd, errs, sizeof(errs));
	snprintf(want, sizeof(want), "%s:2:9: openat: 'allow' refused", bad);
	EXPECT_NE(NULL, strstr(errs, want)) TH_LOG("%s", errs);
	snprintf(want, sizeof(want), "%s:3:1: unknown system call 'foo'", bad);
	EXPECT_NE(NULL, strstr(errs, want)) TH_LOG("%s", errs);
	EXPECT_NE(NULL, strstr(errs, "2 errors")) TH_LOG("%s", errs);

	ASSERT_EQ(0, ftruncate(fd, 0));
	EXPECT_EQ(0, run_cli(cli, (const char *[]){ cli, "policy", "show", good, NULL }, fd, efd));
	read_all(fd, out, sizeof(out));
	EXPECT_TRUE(dump_line_has(out, "getppid", "deny(EXDEV)")) TH_LOG("%s", out);
	EXPECT_TRUE(dump_line_has(out, "getuid", "arg0 == 0x7 else ENOTTY")) TH_LOG("%s", out);
	close(fd);
	close(efd);
	tmp_done(&t);
}

/* sandpit policy check names the line of a bad deny; show lists denies */
TEST(cli_check_names_a_bad_deny_line_and_show_lists_denies)
{
	static char out[1 << 18], errs[1 << 14];
	char cli[PATH_MAX], want[PATH_MAX + 128];
	struct tmp t;
	int fd = memfd_create("out", MFD_CLOEXEC), efd = memfd_create("err", MFD_CLOEXEC);

	if (sandpit_cli(cli, sizeof(cli)) < 0)
		SKIP(return, "no sandpit command next to this test");
	tmp_init(&t);
	const char *bad = tmp_file(&t, "bad.policy",
				   "getppid: allow\npath read /etc\npath deny /etc/ssh/[*_key\n");
	const char *good = tmp_file(&t, "good.policy",
				    "getppid: allow\npath read /etc\npath deny /etc/ssh/*_key\n");

	EXPECT_EQ(1, run_cli(cli, (const char *[]){ cli, "policy", "check", bad, NULL }, fd, efd));
	read_all(efd, errs, sizeof(errs));
	snprintf(want, sizeof(want),
		 "%s:3:11: the pattern '/etc/ssh/[*_key' has a '[' that no ']' closes", bad);
	EXPECT_NE(NULL, strstr(errs, want)) TH_LOG("%s", errs);

	EXPECT_EQ(0, run_cli(cli, (const char *[]){ cli, "policy", "check", good, NULL }, fd, efd));
	EXPECT_EQ(0, run_cli(cli, (const char *[]){ cli, "policy", "show", good, NULL }, fd, efd));
	read_all(fd, out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "\npath deny  /etc/ssh/*_key\n")) TH_LOG("%s", out);
	close(fd);
	close(efd);
	tmp_done(&t);
}

TEST_HARNESS_MAIN
