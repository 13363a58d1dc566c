/* The BPF back end (policy/bpf.c): the filter-mode seccomp filter that
 * libseccomp builds from the policy model, loaded live and exported.
 *
 * Live tests load the default policy's filter in a forked child (never in
 * the test process) and check one call's exact outcome there: the value,
 * the errno, whether SIGSYS came (the child's handler records it and makes
 * the call return -ENOSYS), or how the child died.  The export tests check
 * the text and the program the library hands out.  bpf_model_test runs the
 * exported program against T's rules. */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <limits.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <ucontext.h>
#include <unistd.h>

#include <kselftest_harness.h>

#include "policy/policy.h"
#include "policy/rule_eval.h"
#include "policy/t_table.h"
#include "user/layout/secure_mem.h"

#include "bpf_consts.h"
#include "policy_eval.h"
#include "policy_util.h"

/* ---------------------------------------------------------------------------
 * Live: the filter loaded in a child.
 */

static struct {
	volatile sig_atomic_t count;
	volatile int nr, code;
	volatile unsigned int arch;
} traps;

static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	traps.count++;
	traps.nr = si->si_syscall;
	traps.code = si->si_code;
	traps.arch = si->si_arch;
	uc->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
}

/* In the child: the call's outcome is wrong; say which and exit non-zero. */
#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			dprintf(2, "%s:%d: in the filtered child: %s (errno %d, traps %d)\n", \
				__FILE__, __LINE__, #cond, errno, (int)traps.count);         \
			_exit(1);                                                            \
		}                                                                            \
	} while (0)

#define NO_TRAP() CHECK(traps.count == 0)
#define TRAPPED(name)                                                                        \
	CHECK(traps.count == 1 && traps.nr == SYS_##name && traps.code == SYS_SECCOMP &&     \
	      traps.arch == AUDIT_ARCH_X86_64)

/* Child side: sandpit's fake descriptors in place, the SIGSYS handler, the
 * default policy's filter loaded, and proof that it is in force. */
static void enter_filter(void)
{
	struct rlimit no_core = { 0, 0 };
	struct sigaction sa = { 0 };
	struct policy_runtime rt = { .pid = getpid(), .fd_lo = FD_LO, .fd_hi = FD_HI };
	scmp_filter_ctx ctx;
	struct policy *p;
	char err[256] = "", status[4096];
	int fd, rc;
	ssize_t n;

	alarm(20);
	setrlimit(RLIMIT_CORE, &no_core); /* KILL_PROCESS dumps core */
	fd = open("/dev/null", O_RDWR);
	CHECK(fd >= 0);
	for (int i = FD_LO; i <= FD_HI; i++)
		CHECK(dup2(fd, i) == i);
	close(fd);
	fd = open("/proc/self/status", O_RDONLY);
	CHECK(fd >= 0);
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	CHECK(sigaction(SIGSYS, &sa, NULL) == 0);

	p = default_policy();
	rc = policy_compile_bpf(p, &rt, 0, &ctx, err, sizeof(err));
	if (rc < 0)
		dprintf(2, "policy_compile_bpf: %s\n", err);
	CHECK(rc == 0);
	policy_free(p);
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
	rc = seccomp_load(ctx);
	if (rc < 0)
		dprintf(2, "seccomp_load: %s\n", strerror(-rc));
	CHECK(rc == 0);
	traps.count = 0;

	/* /proc/<pid>/status is produced at read time: pread64 sees the filter */
	n = pread(fd, status, sizeof(status) - 1, 0);
	CHECK(n > 0);
	status[n] = 0;
	CHECK(strstr(status, "\nSeccomp:\t2\n") != NULL);
	CHECK(strstr(status, "\nSeccomp_filters:\t1\n") != NULL);
	NO_TRAP();
}

/* Runs fn in a forked child; returns its wait status. */
static int run_filtered(void (*fn)(void))
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		fn();
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return st;
}

#define EXITS_CLEANLY(st) (WIFEXITED(st) && WEXITSTATUS(st) == 0)

static void getppid_child(void)
{
	pid_t parent = getppid();

	enter_filter();
	CHECK(getppid() == parent);
	CHECK(syscall(SYS_getppid) == parent);
	NO_TRAP();
}

TEST(allow_getppid_runs_natively)
{
	int st = run_filtered(getppid_child);

	ASSERT_TRUE(EXITS_CLEANLY(st));
}

static void execve_child(void)
{
	char *const argv[] = { "true", NULL };

	enter_filter();
	CHECK(execve("/bin/true", argv, environ) == -1 && errno == EACCES);
	NO_TRAP();
}

TEST(inv7_execve_denied_eacces_by_bpf)
{
	int st = run_filtered(execve_child);

	ASSERT_TRUE(EXITS_CLEANLY(st));
}

static void unmentioned_child(void)
{
	enter_filter();
	CHECK(syscall(400) == -1 && errno == ENOSYS); /* a gap in the x86-64 numbers */
	CHECK(syscall(500) == -1 && errno == ENOSYS); /* no kernel has it yet */
	NO_TRAP();
}

TEST(unmentioned_syscall_enosys_without_trap)
{
	struct policy *p = default_policy();
	int st;

	/* the property needs numbers the policy does not mention (it names
	 * every one libseccomp knows) */
	ASSERT_EQ(0, policy_call(p, 400)->mentioned);
	ASSERT_EQ(0, policy_call(p, 500)->mentioned);
	policy_free(p);
	st = run_filtered(unmentioned_child);
	ASSERT_TRUE(EXITS_CLEANLY(st));
}

static void openat_child(void)
{
	enter_filter();
	CHECK(openat(AT_FDCWD, "/etc/hostname", O_RDONLY) == -1 && errno == ENOSYS);
	TRAPPED(openat);
}

TEST(process_class_openat_traps_to_sigsys)
{
	int st = run_filtered(openat_child);

	ASSERT_TRUE(EXITS_CLEANLY(st));
}

static void gettid_child(void)
{
	enter_filter();
	CHECK(syscall(SYS_gettid) == -1 && errno == ENOSYS);
	TRAPPED(gettid);
}

TEST(emu_class_gettid_traps_to_sigsys)
{
	int st = run_filtered(gettid_child);

	ASSERT_TRUE(EXITS_CLEANLY(st));
}

static void close_protected_child(void)
{
	struct stat sb;

	enter_filter();
	errno = 0;
	CHECK(close(FD_LO + 1) == -1);
	/* refused by BPF, or handed to T: never executed */
	CHECK((errno == EBADF && traps.count == 0) || traps.count == 1);
	if (traps.count)
		TRAPPED(close);
	CHECK(syscall(SYS_fstat, FD_LO + 1, &sb) == 0); /* glibc's fstat is newfstatat */
}

TEST(inv3_close_of_sandpit_fd_never_executed)
{
	int st = run_filtered(close_protected_child);

	ASSERT_TRUE(EXITS_CLEANLY(st));
}

static void close_own_child(void)
{
	struct stat sb;
	int fd = open("/dev/null", O_RDONLY);

	CHECK(fd >= 0 && fd < FD_LO);
	enter_filter();
	CHECK(close(fd) == 0);
	NO_TRAP();
	CHECK(syscall(SYS_fstat, fd, &sb) == -1 && errno == EBADF);
}

TEST(close_of_own_fd_runs_natively)
{
	int st = run_filtered(close_own_child);

	ASSERT_TRUE(EXITS_CLEANLY(st));
}

static void mmap_child(void)
{
	char *m;

	enter_filter();
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED);
	m[0] = 1;
	NO_TRAP();
}

TEST(mmap_without_map_fixed_runs_natively)
{
	int st = run_filtered(mmap_child);

	ASSERT_TRUE(EXITS_CLEANLY(st));
}

static void mmap_fixed_child(void)
{
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(m != MAP_FAILED);
	m[0] = 42;
	enter_filter();
	CHECK(mmap(m, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
		   0) == MAP_FAILED &&
	      errno == ENOSYS);
	TRAPPED(mmap);
	CHECK(m[0] == 42); /* not replaced */
}

TEST(inv3_mmap_map_fixed_traps_to_t)
{
	int st = run_filtered(mmap_fixed_child);

	ASSERT_TRUE(EXITS_CLEANLY(st));
}

static void kill_self_child(void)
{
	enter_filter();
	CHECK(kill(getpid(), 0) == 0);
	NO_TRAP();
}

TEST(kill_of_own_pid_runs_natively)
{
	int st = run_filtered(kill_self_child);

	ASSERT_TRUE(EXITS_CLEANLY(st));
}

static void kill_parent_child(void)
{
	pid_t parent = getppid();

	enter_filter();
	/* never carried out: the filter traps it, and T refuses it (EPERM);
	 * "!= pid" in BPF would tie the program's shape to the pid, so the
	 * filter could not be built ahead of time */
	CHECK(kill(parent, 0) == -1 && traps.count == 1 && traps.nr == SYS_kill);
	CHECK(syscall(SYS_kill, (1L << 32) | parent, 0) == -1 && traps.count == 2);
}

TEST(inv7_kill_of_other_pid_never_runs_natively)
{
	int st = run_filtered(kill_parent_child);

	ASSERT_TRUE(EXITS_CLEANLY(st));
}

static void int80_child(void)
{
	long ret = I386_GETPID;

	enter_filter();
	__asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
	dprintf(2, "int $0x80 returned %ld\n", ret);
}

/* Some kernels and hypervisors (no IA32 emulation) kill int $0x80 from a
 * 64-bit process with SIGSEGV before seccomp sees it: what the property
 * needs is that it never runs.  A native child says which this machine is:
 * the signal that killed it, or 0 when int $0x80 ran natively. */
static void int80_native_child(void)
{
	long ret = I386_GETPID;

	__asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
	_exit(ret == getpid() ? 0 : 1);
}

TEST(inv6_int80_from_64bit_process_killed)
{
	int native = run_filtered(int80_native_child);
	int st = run_filtered(int80_child);

	ASSERT_TRUE(WIFSIGNALED(native) || EXITS_CLEANLY(native));
	ASSERT_TRUE(WIFSIGNALED(st));
	if (WIFSIGNALED(native)) {
		TH_LOG("this kernel refuses int $0x80 itself (signal %d): the filter never sees it",
		       WTERMSIG(native));
		ASSERT_EQ(WTERMSIG(native), WTERMSIG(st));
	} else {
		ASSERT_EQ(SIGSYS, WTERMSIG(st));
	}
}

static void x32_child(void)
{
	long ret;

	enter_filter();
	ret = syscall(SYS_getpid | X32_BIT);
	dprintf(2, "x32 getpid returned %ld (errno %d)\n", ret, errno);
}

TEST(inv6_x32_syscall_number_killed)
{
	int st = run_filtered(x32_child);

	ASSERT_TRUE(WIFSIGNALED(st));
	ASSERT_EQ(SIGSYS, WTERMSIG(st));
}

static void socketpair_unix_child(void)
{
	int sv[2];

	enter_filter();
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK(write(sv[0], "x", 1) == 1);
	NO_TRAP();
}

TEST(socketpair_af_unix_runs_natively)
{
	int st = run_filtered(socketpair_unix_child);

	ASSERT_TRUE(EXITS_CLEANLY(st));
}

static void socketpair_inet_child(void)
{
	int sv[2];

	enter_filter();
	CHECK(socketpair(AF_INET, SOCK_STREAM, 0, sv) == -1 && errno == EACCES);
	NO_TRAP();
}

TEST(socketpair_af_inet_eacces_by_bpf)
{
	int st = run_filtered(socketpair_inet_child);

	ASSERT_TRUE(EXITS_CLEANLY(st));
}

/* fd 0 becomes a pty slave, so TCGETS succeeds when it runs */
static void pty_on_stdin(void)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY), s;

	CHECK(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0);
	s = open(ptsname(m), O_RDWR | O_NOCTTY);
	CHECK(s >= 0 && dup2(s, 0) == 0);
}

static void ioctl_tcgets_child(void)
{
	struct termios t;

	pty_on_stdin();
	enter_filter();
	CHECK(ioctl(0, TCGETS, &t) == 0);
	NO_TRAP();
}

TEST(ioctl_tcgets_runs_natively)
{
	int st = run_filtered(ioctl_tcgets_child);

	ASSERT_TRUE(EXITS_CLEANLY(st));
}

static void ioctl_other_child(void)
{
	pty_on_stdin();
	enter_filter();
	errno = 0;
	CHECK(ioctl(0, FIOCLEX) == -1);
	/* refused by BPF, or handed to T */
	CHECK((errno == ENOTTY && traps.count == 0) || traps.count == 1);
	if (traps.count)
		TRAPPED(ioctl);
	traps.count = 0;
	CHECK(fcntl(0, F_GETFD) == 0); /* FIOCLEX did not run */
	NO_TRAP();
}

TEST(ioctl_other_request_never_executed)
{
	int st = run_filtered(ioctl_other_child);

	ASSERT_TRUE(EXITS_CLEANLY(st));
}

/* ---------------------------------------------------------------------------
 * Exports.
 */

static char *read_all(int fd, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	ssize_t r;

	lseek(fd, 0, SEEK_SET);
	while (buf && (r = read(fd, buf + n, cap - n)) > 0) {
		n += r;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
		}
	}
	if (buf)
		buf[n] = 0;
	*len = n;
	return buf;
}

TEST(export_pfc_names_syscalls)
{
	struct policy_runtime rt = { .pid = getpid(), .fd_lo = FD_LO, .fd_hi = FD_HI };
	struct policy *p = default_policy();
	int fd = memfd_create("pfc", 0);
	char err[256] = "", *text;
	size_t len;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, policy_export_pfc(p, &rt, fd, err, sizeof(err))) TH_LOG("%s", err);
	text = read_all(fd, &len);
	ASSERT_NE(NULL, text);
	EXPECT_NE(NULL, strstr(text, "\"getppid\""));
	EXPECT_NE(NULL, strstr(text, "\"close\""));
	/* the default action and the bad-architecture action */
	EXPECT_NE(NULL, strstr(text, "# default action\n  action TRAP;"));
	EXPECT_NE(NULL, strstr(text, "# invalid architecture action\naction KILL_PROCESS;"));
	free(text);
	close(fd);
	policy_free(p);
}

TEST(export_bpf_is_whole_instructions_within_kernel_limit)
{
	struct policy_runtime rt = { .pid = getpid(), .fd_lo = FD_LO, .fd_hi = FD_HI };
	struct policy *p = default_policy();
	int fd = memfd_create("bpf", 0);
	char err[256] = "", *prog;
	size_t len;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, policy_export_bpf(p, &rt, fd, err, sizeof(err))) TH_LOG("%s", err);
	prog = read_all(fd, &len);
	ASSERT_NE(NULL, prog);
	EXPECT_LT(0UL, len);
	EXPECT_EQ(0UL, len % sizeof(struct sock_filter));
	EXPECT_GE(BPF_MAXINSNS * sizeof(struct sock_filter), len);
	TH_LOG("default policy: %zu instructions", len / sizeof(struct sock_filter));
	free(prog);
	close(fd);
	policy_free(p);
}

TEST(compile_rejects_unknown_flags_and_bad_pid)
{
	struct policy_runtime rt = { .pid = getpid(), .fd_lo = FD_LO, .fd_hi = FD_HI };
	struct policy *p = default_policy();
	scmp_filter_ctx ctx = (void *)1;
	char err[256] = "";

	EXPECT_EQ(-EINVAL, policy_compile_bpf(p, &rt, 0x80, &ctx, err, sizeof(err)));
	EXPECT_EQ(NULL, ctx);
	EXPECT_NE(0, err[0]);
	rt.pid = 0;
	EXPECT_EQ(-EINVAL, policy_compile_bpf(p, &rt, 0, &ctx, err, sizeof(err)));
	policy_free(p);
}

TEST_HARNESS_MAIN
