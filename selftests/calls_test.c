/* One file over 700 lines: one call per property of DESIGN §6, and the
 * strict-only kernel guest runs it again in mode auto on the real kernel (check-kernels.sh); split,
 * each part would need that run too. */
/* System calls in the sandbox (run in strict and in filter mode): each test
 * attacks one property of DESIGN §6 or checks
 * that an allowed call still works inside the sandbox. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/seccomp.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "vdso_clock.h"

/* ---------------------------------------------------------------- allowed */

static pid_t parent_pid;

static int body_getppid(void *a)
{
	(void)a;
	if (getppid() != parent_pid)
		return 1;
	if (raw_syscall(SYS_getppid, 0, 0, 0) != parent_pid)
		return 2;
	if (getpid() <= 0 || syscall(SYS_gettid) != getpid())
		return 3;
	return 0;
}

TEST(allowed_getppid_libc_and_raw)
{
	parent_pid = getpid();
	EXPECT_EQ(0, outcome(run_sandboxed(body_getppid, NULL)));
}

static int body_read_passwd(void *a)
{
	(void)a;
	FILE *f = fopen("/etc/passwd", "r");
	if (!f)
		return 1;
	char line[512];
	if (!fgets(line, sizeof(line), f) || strncmp(line, "root:", 5))
		return 2;
	fclose(f);
	return 0;
}

TEST(allowed_read_etc_passwd)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_read_passwd, NULL)));
}

static int body_stat(void *a)
{
	(void)a;
	struct stat sb;
	if (stat("/etc/passwd", &sb) != 0 || !S_ISREG(sb.st_mode))
		return 1;
	if (lstat("/usr/bin", &sb) != 0)
		return 2;
	if (access("/etc/passwd", R_OK) != 0)
		return 3;
	if (stat("/root", &sb) != -1 || errno != EACCES)
		return 4;
	int fd = open("/etc/hostname", O_RDONLY);
	if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
		return 5;
	close(fd);
	return 0;
}

TEST(allowed_stat_in_grants_refused_outside)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_stat, NULL)));
}

static int body_malloc(void *a)
{
	(void)a;
	for (int i = 0; i < 16; i++) {
		char *p = malloc(1 << 20);
		if (!p)
			return 1;
		memset(p, i, 1 << 20);
		if (p[12345] != i)
			return 2;
		free(p);
	}
	char *small = malloc(100);
	return small ? 0 : 3;
}

TEST(allowed_malloc_1mib_mmap_munmap)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_malloc, NULL)));
}

static struct timespec before_rt;

static int body_time(void *a)
{
	(void)a;
	struct timespec m1, m2, rt;
	if (clock_gettime(CLOCK_MONOTONIC, &m1) || clock_gettime(CLOCK_REALTIME, &rt))
		return 1;
	if (rt.tv_sec < before_rt.tv_sec || rt.tv_sec > before_rt.tv_sec + 60)
		return 2;
	usleep(2000);
	if (clock_gettime(CLOCK_MONOTONIC, &m2))
		return 3;
	long d = (m2.tv_sec - m1.tv_sec) * 1000000000L + m2.tv_nsec - m1.tv_nsec;
	if (d < 2000000 || d > 2000000000L)
		return 4;
	time_t t = time(NULL);
	if (t < before_rt.tv_sec || t > before_rt.tv_sec + 60)
		return 5;
	struct timespec cpu;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu))
		return 6;
	return 0;
}

TEST(time_clock_gettime_consistent_with_real_clock)
{
	clock_gettime(CLOCK_REALTIME, &before_rt);
	EXPECT_EQ(0, outcome(run_sandboxed(body_time, NULL)));
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static inline uint64_t rdtscp(uint32_t *aux)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(*aux));
	return (uint64_t)hi << 32 | lo;
}

static int body_rdtsc(void *a)
{
	(void)a;
	uint32_t aux;
	uint64_t t1 = rdtsc();
	usleep(1000);
	uint64_t t2 = rdtscp(&aux);
	uint64_t t3 = rdtsc();
	return t1 && t2 > t1 && t3 >= t2 ? 0 : 1;
}

TEST(time_rdtsc_rdtscp_emulated_under_strict)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_rdtsc, NULL)));
}

static struct vdso_clock vdso_before;
static struct timespec mono_before;

/* In strict mode (the TSC off for U) each of the vDSO's clock reads is
 * redirected to T instead of faulting; filter mode keeps the TSC and the
 * vDSO as it is.  Either way clock_gettime tells the time at full
 * resolution, no other timer and no coarser one. */
static int body_vdso_clock(void *a)
{
	long *reads = a;
	unsigned left = vdso_clock_left(&vdso_before);
	struct timespec t[64];

	if (suite_mode() == SANDPIT_MODE_STRICT ? left != 0 : left != vdso_before.n)
		return 10 + (int)left;
	for (int i = 0; i < 64; i++, (*reads)++)
		if (clock_gettime(CLOCK_MONOTONIC, &t[i]))
			return 1;
	long first = (t[0].tv_sec - mono_before.tv_sec) * 1000000000L + t[0].tv_nsec -
		     mono_before.tv_nsec;
	if (first <= 0 || first > 60000000000L)
		return 2;
	unsigned distinct = 0;
	for (int i = 1; i < 64; i++) {
		long d = (t[i].tv_sec - t[i - 1].tv_sec) * 1000000000L + t[i].tv_nsec -
			 t[i - 1].tv_nsec;
		if (d < 0)
			return 3;
		distinct += d > 0;
	}
	/* a coarse clock would repeat its tick; this one moves between reads */
	return distinct >= 32 ? 0 : 4;
}

TEST(time_vdso_clock_reads_redirected_in_strict_mode_not_faulted)
{
	long *reads = shared_page(4096);

	ASSERT_NE(NULL, reads);
	vdso_clock_find(&vdso_before);
	ASSERT_LT(0u, vdso_before.n) TH_LOG("this vDSO reads no TSC: nothing to redirect");
	ASSERT_EQ(vdso_before.n, vdso_clock_left(&vdso_before));
	clock_gettime(CLOCK_MONOTONIC, &mono_before);
	EXPECT_EQ(0, outcome(run_sandboxed(body_vdso_clock, reads)));
	EXPECT_EQ(64, *reads);
	/* the parent's own vDSO is untouched */
	EXPECT_EQ(vdso_before.n, vdso_clock_left(&vdso_before));
}

/* An rdtsc no patch window can hold (bench.h): it stays in the code and, in
 * strict mode, faults and is emulated through T. */
static rdtsc_fn rdtsc_left;

static int body_rdtsc_net(void *a)
{
	uint64_t *out = a;
	const uint8_t *insn = (const uint8_t *)rdtsc_left + UNPATCHED_RDTSC_AT;

	if (insn[0] != 0x0f || insn[1] != 0x31)
		return 1; /* patched after all: this test would prove nothing */
	out[0] = rdtsc_left();
	usleep(1000);
	out[1] = rdtsc_left();
	out[2] = 2;
	return 0;
}

TEST(time_rdtsc_left_in_the_code_is_still_emulated)
{
	uint64_t *out = shared_page(4096);

	ASSERT_NE(NULL, out);
	rdtsc_left = unpatched_rdtsc();
	ASSERT_TRUE(rdtsc_left != NULL);
	uint64_t tsc_before = rdtsc_left();
	EXPECT_EQ(0, outcome(run_sandboxed(body_rdtsc_net, out)));
	uint64_t tsc_after = rdtsc_left();
	ASSERT_EQ(2u, out[2]);
	/* the one counter the CPU keeps, read by T: between the parent's reads,
	 * and moving */
	EXPECT_LT(tsc_before, out[0]);
	EXPECT_LT(out[0], out[1]);
	EXPECT_LT(out[1], tsc_after);
}

/* ---------------------------------------------------------------- refused */

#define FORBIDDEN_FILE "/tmp/sandpit-selftest-created"

static int body_create(void *a)
{
	(void)a;
	int fd = open(FORBIDDEN_FILE, O_CREAT | O_WRONLY, 0644);
	if (fd != -1 || errno != EACCES)
		return 1;
	if (creat(FORBIDDEN_FILE, 0644) != -1)
		return 2;
	if (fopen(FORBIDDEN_FILE, "w") != NULL)
		return 3;
	return 0;
}

TEST(inv2_create_outside_grants_refused_and_nothing_created)
{
	unlink(FORBIDDEN_FILE);
	EXPECT_EQ(0, outcome(run_sandboxed(body_create, NULL)));
	EXPECT_EQ(-1, access(FORBIDDEN_FILE, F_OK));
}

static int body_raw_open(void *a)
{
	(void)a;
	long r = raw_syscall(SYS_open, (long)FORBIDDEN_FILE, O_CREAT | O_WRONLY, 0644);
	if (r != -EACCES)
		return 1;
	r = raw_syscall(SYS_openat, AT_FDCWD, (long)"/etc/passwd", O_WRONLY);
	return r == -EACCES ? 0 : 2;
}

TEST(raw_syscall_open_creat_from_program_code_refused)
{
	unlink(FORBIDDEN_FILE);
	EXPECT_EQ(0, outcome(run_sandboxed(body_raw_open, NULL)));
	EXPECT_EQ(-1, access(FORBIDDEN_FILE, F_OK));
}

static int body_write_existing(void *a)
{
	(void)a;
	int fd = open("/etc/passwd", O_RDWR);
	if (fd != -1 || errno != EACCES)
		return 1;
	fd = open("/etc/passwd", O_RDONLY | O_APPEND | O_TRUNC);
	return fd == -1 && errno == EACCES ? 0 : 2;
}

TEST(write_open_of_read_only_grant_refused)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_write_existing, NULL)));
}

static int body_allow_write(void *a)
{
	const char *dir = a;
	char path[256];
	snprintf(path, sizeof(path), "%s/made-inside", dir);
	int fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (fd < 0)
		return 1;
	if (write(fd, "hello", 5) != 5)
		return 2;
	close(fd);
	snprintf(path, sizeof(path), "%s/../escape", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	return fd == -1 && errno == EACCES ? 0 : 3;
}

TEST(allow_write_grant_creates_inside_only)
{
	if (!suite_has_openat2())
		SKIP(return, "write grants need openat2");
	char dir[] = "/tmp/sandpit-grant-XXXXXX";
	ASSERT_NE(NULL, mkdtemp(dir));
	const char *w[] = { dir, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	EXPECT_EQ(0, outcome(run_sandboxed_opts(body_allow_write, dir, &o, 20)));
	char path[256];
	snprintf(path, sizeof(path), "%s/made-inside", dir);
	EXPECT_EQ(0, access(path, F_OK));
	EXPECT_EQ(-1, access("/tmp/escape", F_OK));
	unlink(path);
	rmdir(dir);
}

static int body_execve(void *a)
{
	(void)a;
	char *argv[] = { "/bin/true", NULL };
	execve("/bin/true", argv, NULL);
	return errno == EACCES ? 0 : 1;
}

TEST(inv7_execve_refused)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_execve, NULL)));
}

static int body_socket(void *a)
{
	(void)a;
	if (socket(AF_INET, SOCK_STREAM, 0) != -1 || errno != EAFNOSUPPORT)
		return 1;
	if (raw_syscall(SYS_socket, AF_INET6, SOCK_DGRAM, 0) != -EAFNOSUPPORT)
		return 2;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 3;
	if (write(sv[0], "x", 1) != 1)
		return 4;
	char c;
	return read(sv[1], &c, 1) == 1 && c == 'x' ? 0 : 5;
}

TEST(socket_inet_refused_unix_socketpair_allowed)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_socket, NULL)));
}

static int body_ptrace(void *a)
{
	(void)a;
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != -1 || errno != EPERM)
		return 1;
	return raw_syscall(SYS_ptrace, PTRACE_ATTACH, getppid(), 0) == -EPERM ? 0 : 2;
}

TEST(inv7_ptrace_refused)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_ptrace, NULL)));
}

static int body_kill_other(void *a)
{
	(void)a;
	if (kill(parent_pid, 0) != -1 || errno != EPERM)
		return 1;
	if (kill(-1, SIGKILL) != -1 || errno != EPERM)
		return 2;
	if (kill(0, SIGKILL) != -1 || errno != EPERM)
		return 3;
	return kill(getpid(), 0) == 0 ? 0 : 4;
}

TEST(inv7_kill_other_process_refused)
{
	parent_pid = getpid();
	EXPECT_EQ(0, outcome(run_sandboxed(body_kill_other, NULL)));
}

static int body_seccomp(void *a)
{
	(void)a;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) != -1)
		return 1;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL) != -1 || errno != EPERM)
		return 2;
	return 0;
}

TEST(inv7_own_seccomp_refused)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_seccomp, NULL)));
}

static int body_vm_writev(void *a)
{
	(void)a;
	char src[8] = "attack", dst[8] = "";
	struct iovec l = { src, 8 }, r = { dst, 8 };
	if (syscall(SYS_process_vm_writev, getpid(), &l, 1, &r, 1, 0) != -1 || errno != EPERM)
		return 1;
	if (open("/proc/self/mem", O_RDWR) != -1 || errno != EACCES)
		return 2;
	return dst[0] == 0 ? 0 : 3;
}

TEST(inv7_process_vm_writev_and_proc_mem_write_refused)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_vm_writev, NULL)));
}

static int body_fork(void *a)
{
	(void)a;
	if (fork() != -1 || errno != EPERM)
		return 1;
	if (raw_syscall(SYS_clone3, 0, 0, 0) != -ENOSYS)
		return 2;
	return 0;
}

TEST(inv4_fork_refused_clone3_enosys)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_fork, NULL)));
}

/* ------------------------------------------------ the thread pointer (FS) */

#define ARCH_SET_GS_ 0x1001
#define ARCH_SET_FS_ 0x1002
#define ARCH_GET_FS_ 0x1003

/* SET_FS really moves %fs (a load through it sees the new block), GET_FS
 * reads it back, and the old base comes back: with wrfsbase, the filter's
 * native call, or B's ptrace, whichever this machine and mode use.  No libc
 * between the calls: glibc's TLS is unreachable while %fs points elsewhere. */
static int body_fs_base_moves(void *a)
{
	(void)a;
	static uint64_t fake[8];
	uint64_t old = 0, got = 0, seen = 0, tp = 0;
	long r1, r2, r3;

	if (raw_syscall(SYS_arch_prctl, ARCH_GET_FS_, (long)&old, 0) != 0)
		return 1;
	__asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
	if (tp != old)
		return 2; /* glibc's thread pointer points at itself */
	fake[6] = 0x5a5a5a5a12345678ULL;
	__asm__ volatile("mov $158, %%eax\n\tmov $0x1002, %%edi\n\tmov %[fake], %%rsi\n\tsyscall\n\t"
			 "mov %%rax, %[r1]\n\t"
			 "mov %%fs:0x30, %[seen]\n\t"
			 "mov $158, %%eax\n\tmov $0x1003, %%edi\n\tlea %[got], %%rsi\n\tsyscall\n\t"
			 "mov %%rax, %[r2]\n\t"
			 "mov $158, %%eax\n\tmov $0x1002, %%edi\n\tmov %[old], %%rsi\n\tsyscall\n\t"
			 "mov %%rax, %[r3]"
			 : [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3), [seen] "=&r"(seen),
			   [got] "=m"(got)
			 : [fake] "r"(fake), [old] "r"(old)
			 : "rax", "rdi", "rsi", "rcx", "r11", "memory");
	if (r1 != 0 || r2 != 0 || r3 != 0)
		return 3;
	if (seen != fake[6] || got != (uint64_t)(uintptr_t)fake)
		return 4;
	__asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
	return tp == old ? 0 : 5;
}

TEST(fs_base_set_moves_the_thread_pointer_and_get_reads_it)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_fs_base_moves, NULL)));
}

/* the first FS base the kernel refuses: TASK_SIZE_MAX, 2^47 less a page
 * on 4-level paging, 2^56 less a page where 5-level paging (LA57) is on --
 * only then can a mapping be made above 2^47 (asked for with a hint) */
static uint64_t fs_limit;

static uint64_t task_size_max(void)
{
	void *hint = (void *)(1UL << 48);
	void *p = mmap(hint, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return (1UL << 47) - 4096;
	munmap(p, 4096);
	return p == hint ? (1UL << 56) - 4096 : (1UL << 47) - 4096;
}

/* As the kernel: GET_FS to memory it cannot write is EFAULT, not a death;
 * a base at or past TASK_SIZE_MAX is EPERM; the code is an int (high bits of the
 * register ignored); SET_GS stays refused (sandpit owns %gs) and changes
 * nothing. */
static int body_fs_base_errors(void *a)
{
	(void)a;
	uint64_t old = 0, got = 0;
	void *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (ro == MAP_FAILED || syscall(SYS_arch_prctl, ARCH_GET_FS_, &old) != 0)
		return 1;
	if (syscall(SYS_arch_prctl, ARCH_GET_FS_, (void *)8) != -1 || errno != EFAULT)
		return 2;
	if (syscall(SYS_arch_prctl, ARCH_GET_FS_, ro) != -1 || errno != EFAULT)
		return 3;
	if (syscall(SYS_arch_prctl, ARCH_SET_FS_, fs_limit) != -1 || errno != EPERM)
		return 4;
	if (syscall(SYS_arch_prctl, ARCH_SET_FS_, 0xffff800000000000UL) != -1 || errno != EPERM)
		return 5;
	if (syscall(SYS_arch_prctl, 0x100000000UL | ARCH_GET_FS_, &got) != 0 || got != old)
		return 6;
	if (syscall(SYS_arch_prctl, ARCH_SET_GS_, 0x10000UL) != -1 || errno != EPERM)
		return 7;
	/* %gs is still sandpit's: a call through T still works */
	if (getppid() != parent_pid)
		return 8;
	if (syscall(SYS_arch_prctl, ARCH_GET_FS_, &got) != 0 || got != old)
		return 9;
	return 0;
}

TEST(fs_base_errors_are_the_kernels)
{
	parent_pid = getpid();
	fs_limit = task_size_max();
	TH_LOG("TASK_SIZE_MAX %#lx", (unsigned long)fs_limit);
	EXPECT_EQ(0, outcome(run_sandboxed(body_fs_base_errors, NULL)));
}

/* Strict mode without FSGSBASE needs B to ptrace U: where that is refused
 * (here: another tracer is attached already) sandpit_start fails with one
 * clear message and runs nothing; filter mode needs no ptrace. */
TEST(fs_base_fallback_without_ptrace_fails_closed)
{
	char kernel[256];
	const char *k = getenv("SANDPIT_KERNEL");
	int st;

	snprintf(kernel, sizeof(kernel), "%s%sno-fsgsbase", k ? k : "", k ? "," : "");
	fflush(NULL);
	pid_t c = fork();
	ASSERT_LE(0, c);
	if (c == 0) {
		raise(SIGSTOP); /* until the parent is our tracer */
		setenv("SANDPIT_KERNEL", kernel, 1);
		struct sandpit_options o = { .mode = suite_mode() };
		if (sandpit_start(&o) < 0) {
			fprintf(stderr, "sandpit_start: %s\n", sandpit_error());
			_exit(strstr(sandpit_error(), "ptrace") ? 42 : 43);
		}
		_exit(getppid() > 0 ? 0 : 44);
	}
	ASSERT_EQ(c, waitpid(c, &st, WUNTRACED));
	ASSERT_EQ(0, ptrace(PTRACE_SEIZE, c, NULL, NULL));
	kill(c, SIGCONT);
	alarm(20 * suite_timeout_scale());
	for (;;) {
		ASSERT_EQ(c, waitpid(c, &st, __WALL));
		if (!WIFSTOPPED(st))
			break;
		int sig = (st >> 16) == 0 ? WSTOPSIG(st) : 0;
		ptrace(PTRACE_CONT, c, NULL, (void *)(long)(sig == SIGSTOP ? 0 : sig));
	}
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(suite_mode() == SANDPIT_MODE_STRICT ? 42 : 0, WEXITSTATUS(st));
}

/* glibc's fstat is newfstatat(fd, "", buf, AT_EMPTY_PATH): the entry makes
 * it fstat(fd) (no trip to B), with the kernel's answers: the same stat as
 * natively, any descriptor (a pipe has no path B could check), EFAULT for
 * an unreadable path; a path with something in it still goes to B. */
static struct stat native_hostname;

static int body_fstat_shortcut(void *a)
{
	(void)a;
	struct stat sb;
	int p[2];
	int fd = open("/etc/hostname", O_RDONLY);

	if (fd < 0 || fstat(fd, &sb) != 0)
		return 1;
	if (sb.st_ino != native_hostname.st_ino || sb.st_size != native_hostname.st_size)
		return 2;
	if (pipe(p) != 0 || fstat(p[0], &sb) != 0 || !S_ISFIFO(sb.st_mode))
		return 3;
	if (syscall(SYS_newfstatat, fd, (void *)8, &sb, AT_EMPTY_PATH) != -1 || errno != EFAULT)
		return 4;
	if (syscall(SYS_newfstatat, fd, "", (void *)8, AT_EMPTY_PATH) != -1 || errno != EFAULT)
		return 5;
	int dir = open("/etc", O_RDONLY | O_DIRECTORY);
	if (dir < 0 || fstatat(dir, "hostname", &sb, 0) != 0 || sb.st_ino != native_hostname.st_ino)
		return 6;
	if (fstatat(dir, "../root", &sb, AT_EMPTY_PATH) != -1 || errno != EACCES)
		return 7; /* outside every grant: B refused it */
	return 0;
}

TEST(fstat_is_fstat_without_a_trip_to_b)
{
	ASSERT_EQ(0, stat("/etc/hostname", &native_hostname));
	EXPECT_EQ(0, outcome(run_sandboxed(body_fstat_shortcut, NULL)));
}

/* A path B checks travels with its request (U's entry copies up to
 * MB_PATH_MAX bytes of it, B reads a longer or unreadable one from P):
 * every length and every unreadable byte gives the kernel's answer, the
 * same natively and in the sandbox, and U never dies of its copy. */
struct carried {
	char *edge; /* two pages, the second PROT_NONE */
	char mid[600], longp[2100], toolong[4200];
};

static int path_results(void *a)
{
	struct carried *c = a;
	struct stat sb, ref;
	if (stat("/etc/hostname", &ref) != 0)
		return 1;
	/* 300 bytes: carried; 2000: read by B; 4200: too long for anyone */
	if (stat(c->mid, &sb) != 0 || sb.st_ino != ref.st_ino)
		return 2;
	if (stat(c->longp, &sb) != 0 || sb.st_ino != ref.st_ino)
		return 3;
	if (stat(c->toolong, &sb) != -1 || errno != ENAMETOOLONG)
		return 4;
	int fd = open(c->mid, O_RDONLY);
	if (fd < 0 || fstat(fd, &sb) != 0 || sb.st_ino != ref.st_ino)
		return 5;
	close(fd);
	if (access(c->mid, R_OK) != 0 || access(c->longp, R_OK) != 0)
		return 6;
	/* unreadable: NULL, a low address, a string running into PROT_NONE */
	if (syscall(SYS_stat, NULL, &sb) != -1 || errno != EFAULT)
		return 7;
	if (syscall(SYS_newfstatat, AT_FDCWD, (void *)8, &sb, 0) != -1 || errno != EFAULT)
		return 8;
	char *end = c->edge + 4096;
	memcpy(end - 14, "/etc/hostname", 14); /* its NUL the page's last byte */
	if (stat(end - 14, &sb) != 0 || sb.st_ino != ref.st_ino)
		return 9;
	memcpy(end - 13, "/etc/hostname", 13); /* no NUL before the hole */
	if (stat(end - 13, &sb) != -1 || errno != EFAULT)
		return 10;
	if (open(end - 13, O_RDONLY) != -1 || errno != EFAULT)
		return 11;
	if (access(end - 13, R_OK) != -1 || errno != EFAULT)
		return 12;
	return 0;
}

static void fill_dots(char *out, size_t len)
{
	strcpy(out, "/etc");
	size_t n = strlen(out);
	while (n + 2 + strlen("/hostname") < len - 1) {
		memcpy(out + n, "/.", 2);
		n += 2;
	}
	strcpy(out + n, "/hostname");
}

TEST(path_carried_with_the_request_reads_as_the_kernel_would)
{
	struct carried *c = shared_page(sizeof(*c));
	ASSERT_NE(NULL, c);
	c->edge = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c->edge);
	ASSERT_EQ(0, mprotect(c->edge + 4096, 4096, PROT_NONE));
	fill_dots(c->mid, 300);
	fill_dots(c->longp, 2000);
	fill_dots(c->toolong, sizeof(c->toolong));
	ASSERT_EQ(0, path_results(c)); /* natively first: the kernel's answers */
	memset(c->edge, 0, 4096);
	EXPECT_EQ(0, outcome(run_sandboxed(path_results, c)));
}

TEST_HARNESS_MAIN
