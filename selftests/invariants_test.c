/* Attacks on the security invariants of DESIGN §6 that need more than a
 * single refused call: sandpit's own memory and descriptors, the trusted
 * process's death, missed system calls, TOCTOU on path arguments.  The
 * API's own refusals are api_test. */
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
#include "swap_race.h"
#include "elf_craft.h"

void sandpit_syscall_stub(void); /* T's code and the stub: section sandpit_text */

/* The address of the mapping whose /proc/self/maps line contains `name`. */
static uintptr_t find_mapping(const char *name)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uintptr_t lo = 0;
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, name)) {
			lo = strtoul(line, NULL, 16);
			break;
		}
	if (f)
		fclose(f);
	return lo;
}

/* The trampoline of libc's munmap wrapper (a call T checks, so patched in
 * either mode): its site is now a jmp rel32. */
static uintptr_t munmap_trampoline(void)
{
	const uint8_t *p = (const uint8_t *)munmap;
	for (int i = 0; i < 16; i++)
		if (p[i] == 0xe9) {
			int32_t rel;
			memcpy(&rel, p + i + 1, 4);
			return (uintptr_t)(p + i + 5) + rel;
		}
	return 0;
}

/* sandpit's own request to T (user/untrusted/u_entry.c), as U could make it */
long u_call_trusted(long nr, const long args[6]);

static int attack_range(uintptr_t addr)
{
	void *page = (void *)(addr & ~4095UL);
	if (!addr)
		return 10;
	if (mprotect(page, 4096, PROT_READ | PROT_WRITE) != -1 || errno != EPERM)
		return 11;
	/* writable and executable, as a JIT's memory may be: not sandpit's,
	 * through the entry or straight to T */
	if (mprotect(page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) != -1 || errno != EPERM)
		return 20;
	long wx[6] = { (long)page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC };
	if (u_call_trusted(SYS_mprotect, wx) != -EPERM)
		return 21;
	if (mprotect(page, 4096, PROT_NONE) != -1 || errno != EPERM)
		return 12;
	if (munmap(page, 4096) != -1 || errno != EPERM)
		return 13;
	if (mmap(page, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
		    MAP_FAILED || errno != EPERM)
		return 14;
	if (syscall(SYS_mremap, page, 4096, 4096, 0) != -1 || errno != EPERM)
		return 15;
	if (madvise(page, 4096, MADV_DONTNEED) != -1 || errno != EPERM)
		return 16;
	/* a range that only overlaps the protected page counts too */
	if (munmap((char *)page - 4096 * 4, 4096 * 5) != -1 || errno != EPERM)
		return 17;
	/* and mremap may not move something on top of it */
	void *mine = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mine == MAP_FAILED)
		return 18;
	if (syscall(SYS_mremap, mine, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, page) != -1 ||
	    errno != EPERM)
		return 19;
	return 0;
}

static int body_secure_page(void *a)
{
	(void)a;
	uintptr_t s = find_mapping("sandpit-secure");
	int r = attack_range(s);
	if (r)
		return r;
	/* still read-only: a write must fault, so check the kernel agrees */
	return 0;
}

TEST(inv3_secure_page_cannot_be_reprotected_unmapped_or_replaced)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_secure_page, NULL)));
}

static int body_write_secure_page(void *a)
{
	(void)a;
	volatile uint64_t *s = (volatile uint64_t *)find_mapping("sandpit-secure");
	if (!s)
		return 1;
	*s = 0; /* must fault: S page 1 is read-only in P */
	return 2;
}

TEST(inv2_secure_page_is_read_only_for_u)
{
	EXPECT_EQ(KILLED(SIGSEGV), outcome(run_sandboxed(body_write_secure_page, NULL)));
}

static int body_t_code(void *a)
{
	(void)a;
	return attack_range((uintptr_t)sandpit_syscall_stub);
}

TEST(inv3_trusted_thread_code_cannot_be_reprotected_or_replaced)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_t_code, NULL)));
}

static int body_trampoline(void *a)
{
	(void)a;
	return attack_range(munmap_trampoline());
}

TEST(inv3_trampolines_cannot_be_reprotected_or_replaced)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_trampoline, NULL)));
}

static int body_table(void *a)
{
	(void)a;
	return attack_range(find_mapping("sandpit-table"));
}

TEST(inv3_policy_table_cannot_be_reprotected_or_replaced)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_table, NULL)));
}

/* sandpit's descriptors: the socket to B, its placeholder, the eventfds (anonymous
 * inodes, no file type) */
static int sandpit_fds(int *fds, int max)
{
	int n = 0;
	for (int fd = 3; fd < 4096 && n < max; fd++) {
		struct stat sb;
		if (fstat(fd, &sb) == 0 && (S_ISSOCK(sb.st_mode) || (sb.st_mode & S_IFMT) == 0 ||
					 (fd > 900 && S_ISCHR(sb.st_mode))))
			fds[n++] = fd;
	}
	return n;
}

static int body_fds(void *a)
{
	(void)a;
	int fds[8];
	int n = sandpit_fds(fds, 8);
	if (n < 3)
		return 1;
	for (int i = 0; i < n; i++) {
		if (close(fds[i]) != -1 || errno != EBADF)
			return 2;
		if (dup2(0, fds[i]) != -1 || errno != EBADF)
			return 3;
		if (dup3(0, fds[i], O_CLOEXEC) != -1 || errno != EBADF)
			return 4;
		if (fcntl(fds[i], F_SETFL, O_NONBLOCK) != -1 || errno != EBADF)
			return 5;
		if (shutdown(fds[i], SHUT_RDWR) != -1)
			return 6;
	}
	/* still working after the attempts */
	return getppid() > 0 ? 0 : 7;
}

TEST(inv3_sandpit_descriptors_cannot_be_closed_or_dup2ed_over)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_fds, NULL)));
}

static int body_tgkill_t(void *a)
{
	(void)a;
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return 1;
	struct dirent *e;
	int other = 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != getpid())
			other = atoi(e->d_name);
	closedir(d);
	if (!other)
		return 2;
	if (syscall(SYS_tgkill, getpid(), other, SIGKILL) != -1 || errno != ESRCH)
		return 3;
	if (syscall(SYS_tkill, other, SIGKILL) != -1)
		return 4;
	return 0;
}

TEST(inv7_signal_to_trusted_thread_refused)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_tgkill_t, NULL)));
}

static int body_sigaction_into_sandpit(void *a)
{
	(void)a;
	struct sigaction sa = { .sa_handler = (void (*)(int))sandpit_syscall_stub };
	if (sigaction(SIGUSR1, &sa, NULL) != -1 || errno != EPERM)
		return 1;
	struct sigaction ok = { .sa_handler = SIG_IGN };
	if (sigaction(SIGUSR1, &ok, NULL) != 0)
		return 2;
	return 0;
}

TEST(inv1_sigaction_handler_in_sandpit_memory_refused)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_sigaction_into_sandpit, NULL)));
}

/* ------------------------------------------------------- fail closed (5) */

static int *ready_pipe;

static int body_wait_forever(void *a)
{
	(void)a;
	if (write(ready_pipe[1], "r", 1) != 1)
		return 1;
	for (;;)
		getppid();
}

static void kill_b_case(struct __test_metadata *_metadata, int (*body)(void *))
{
	int p[2];
	ASSERT_EQ(0, pipe(p));
	ready_pipe = p;
	/* B is double-forked; as subreaper we inherit it and can find it */
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	fflush(NULL);
	pid_t child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		if (sandpit_start(NULL) < 0)
			_exit(SANDBOX_START_FAILED);
		_exit(body(NULL));
	}
	char c;
	ASSERT_EQ(1, read(p[0], &c, 1));
	pid_t b = 0;
	for (int i = 0; i < 100 && !b; i++) {
		b = find_child_named("sandpit-B");
		if (!b)
			usleep(10000);
	}
	ASSERT_LT(0, b);
	ASSERT_EQ(0, kill(b, SIGKILL));
	int st = 0, done = 0;
	for (int i = 0; i < 500 && !done; i++) {
		done = waitpid(child, &st, WNOHANG) == child;
		if (!done)
			usleep(10000);
	}
	if (!done)
		kill(child, SIGKILL);
	EXPECT_TRUE(done);
	EXPECT_EQ(KILLED(SIGKILL), outcome(st));
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

TEST(inv5_killing_trusted_process_kills_busy_p)
{
	kill_b_case(_metadata, body_wait_forever);
}

static int body_idle_forever(void *a)
{
	(void)a;
	if (write(ready_pipe[1], "r", 1) != 1)
		return 1;
	int mine[2];
	char c;
	if (pipe(mine) != 0)
		return 2;
	return (int)read(mine[0], &c, 1) + 100; /* blocks in U itself: nobody writes */
}

TEST(inv5_killing_trusted_process_kills_idle_p)
{
	kill_b_case(_metadata, body_idle_forever);
}

/* code mapped after start that the patcher cannot patch */
static int run_new_code(long nr)
{
	missed_fn f = missed_code(nr);
	if (!f)
		return 1;
	f(0, 0, 0);
	return 3; /* the missed call ran: the sandbox failed open */
}

static int body_missed_getppid(void *a)
{
	(void)a;
	return run_new_code(SYS_getppid);
}

/* strict mode: the kernel kills U, sandpit ends P.  Filter mode: the
 * filter sends the call to sandpit's net (SIGSYS), an allowed call runs. */
TEST(inv5_missed_syscall_kills_process_or_is_caught_by_the_filter)
{
	int want = suite_mode() == SANDPIT_MODE_STRICT ? KILLED(SIGKILL) : 3;
	EXPECT_EQ(want, outcome(run_sandboxed(body_missed_getppid, NULL)));
}

/* Code mapped executable after start is patched before it runs (DESIGN
 * §3): in strict mode an unpatched syscall would be killed, in filter
 * mode it would trap; no 0f 05 is left at the site. */
static int body_new_code_patched(void *a)
{
	(void)a;
	uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* gettid: sandpit answers it, so filter mode patches it too */
	uint8_t code[] = { 0xb8, SYS_gettid, 0, 0, 0, 0x0f, 0x05, 0xc3 }; /* mov; syscall; ret */
	if (page == MAP_FAILED)
		return 1;
	memcpy(page, code, sizeof(code));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
		return 2;
	if (((long (*)(void))page)() != syscall(SYS_gettid))
		return 3;
	return page[5] == 0x0f && page[6] == 0x05 ? 4 : 0;
}

TEST(new_executable_code_is_patched_before_it_runs)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_new_code_patched, NULL)));
}

/* The same made executable by pkey_mprotect (with the default key 0,
 * which every process has): patched before it runs, as by mprotect; in
 * strict mode the unpatched call would be killed */
static int body_new_code_pkey(void *a)
{
	(void)a;
	uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t code[] = { 0xb8, SYS_gettid, 0, 0, 0, 0x0f, 0x05, 0xc3 }; /* mov; syscall; ret */
	if (page == MAP_FAILED)
		return 1;
	memcpy(page, code, sizeof(code));
	long r = syscall(SYS_pkey_mprotect, page, 4096, PROT_READ | PROT_EXEC, 0);
	if (r != 0)
		return errno == ENOSYS || errno == EINVAL ? 0 : 2; /* no pkeys here: as mprotect */
	if (((long (*)(void))page)() != syscall(SYS_gettid))
		return 3;
	return page[5] == 0x0f && page[6] == 0x05 ? 4 : 0;
}

TEST(code_made_executable_by_pkey_mprotect_is_patched_before_it_runs)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_new_code_pkey, NULL)));
}

/* Invariant 9 at run time: a library whose .eh_frame_hdr claims 2^31 FDEs
 * and whose hash table claims 2^31 symbols is mapped inside the sandbox;
 * the patcher (in U, on its own stack) reads its tables within the
 * mapping, does not believe them, decodes the code from its start, and the
 * library runs, patched. */
static int body_lying_library(void *a)
{
	int fd = *(int *)a;
	uint8_t *lib = mmap(NULL, CRAFT_SIZE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

	if (lib == MAP_FAILED)
		return 1;
	if (((long (*)(void))(lib + CRAFT_CODE))() != syscall(SYS_gettid))
		return 2;
	return lib[CRAFT_CODE + 5] == 0x0f && lib[CRAFT_CODE + 6] == 0x05 ? 3 : 0;
}

TEST(inv9_library_whose_tables_lie_is_patched_and_runs)
{
	static uint8_t b[CRAFT_SIZE];
	static const uint8_t code[] = { 0xb8, SYS_gettid, 0, 0, 0, 0x0f, 0x05, 0xc3 };
	char path[] = "/tmp/invariants_test.lib.XXXXXX";
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	unlink(path);
	craft_object(b, 0x7fffffff, 0x7fffffff);
	memcpy(b + CRAFT_CODE, code, sizeof(code));
	ASSERT_EQ(CRAFT_SIZE, write(fd, b, CRAFT_SIZE));
	EXPECT_EQ(0, outcome(run_sandboxed(body_lying_library, &fd)));
	close(fd);
}

/* A JIT's memory: writable and executable at once, the program's to
 * rewrite at any time, never patched (user/untrusted/exec_patch.c).  Code
 * written there runs, and runs again as rewritten after it ran; a call
 * made from it is a missed one: strict mode's kernel kills it, filter
 * mode's net gives the policy's answer.  T itself still maps nothing
 * executable (new code comes through mprotect). */
#define WX_FILE "/tmp/sandpit-selftest-wx"
typedef long (*code_fn)(long, long, long);

static int body_wx(void *a)
{
	(void)a;
	const int rwx = PROT_READ | PROT_WRITE | PROT_EXEC;
	const uint8_t ret42[] = { 0xb8, 42, 0, 0, 0, 0xc3 }; /* mov $42, %eax; ret */
	uint8_t *p = mmap(NULL, 4096, rwx, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p, ret42, sizeof(ret42));
	if (((code_fn)p)(0, 0, 0) != 42)
		return 2;
	p[1] = 43;
	if (((code_fn)p)(0, 0, 0) != 43)
		return 3;
	uint8_t *q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED || mprotect(q, 4096, rwx) != 0)
		return 4;
	memcpy(q, ret42, sizeof(ret42));
	if (((code_fn)q)(0, 0, 0) != 42)
		return 5;
	long mm[6] = { 0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0 };
	if (u_call_trusted(SYS_mmap, mm) != -EACCES)
		return 6;
	/* mov $SYS_open, %eax; syscall; ret: written after the memory became
	 * executable, as a JIT writes its code */
	const uint8_t open_code[] = { 0xb8, SYS_open, 0, 0, 0, 0x0f, 0x05, 0xc3 };
	memcpy(p + 64, open_code, sizeof(open_code));
	long r = ((code_fn)(p + 64))((long)WX_FILE, O_CREAT | O_WRONLY, 0600);
	return r == -EACCES ? 0 : 7;
}

TEST(writable_and_executable_memory_is_the_programs_and_its_calls_are_missed_ones)
{
	unlink(WX_FILE);
	int want = suite_mode() == SANDPIT_MODE_STRICT ? KILLED(SIGKILL) : 0;
	EXPECT_EQ(want, outcome(run_sandboxed(body_wx, NULL)));
	EXPECT_EQ(-1, access(WX_FILE, F_OK));
}

#define MISSED_FILE "/tmp/sandpit-selftest-missed"

static int body_missed_forbidden(void *a)
{
	(void)a;
	missed_fn f = missed_code(SYS_open);
	if (!f)
		return 1;
	long r = f((long)MISSED_FILE, O_CREAT | O_WRONLY, 0600);
	return r == -EACCES ? 0 : 4;
}

TEST(inv5_missed_forbidden_call_never_runs)
{
	unlink(MISSED_FILE);
	int want = suite_mode() == SANDPIT_MODE_STRICT ? KILLED(SIGKILL) : 0;
	EXPECT_EQ(want, outcome(run_sandboxed(body_missed_forbidden, NULL)));
	EXPECT_EQ(-1, access(MISSED_FILE, F_OK));
}

static int body_missed_exit_group(void *a)
{
	(void)a;
	return run_new_code(SYS_exit_group);
}

TEST(inv5_missed_exit_group_still_kills_process)
{
	/* strict mode kills only the thread: sandpit must end the rest; the
	 * filter allows exit_group, which ends P itself */
	int st = run_sandboxed(body_missed_exit_group, NULL);
	if (suite_mode() == SANDPIT_MODE_STRICT) {
		EXPECT_EQ(KILLED(SIGKILL), outcome(st));
	} else {
		EXPECT_TRUE(WIFEXITED(st));
	}
}

/* ------------------------------------------------------------- TOCTOU (2) */

#define SECRET "/tmp/sandpit-toctou-secret"
#define SECRET_TEXT "SECRET-CONTENT"

struct flip {
	volatile int stop;
	volatile int opened_secret;
	volatile int opens;
	char path[64];
};

static int body_toctou(void *a)
{
	struct flip *fl = a;
	char buf[32];
	for (int i = 0; i < 4000; i++) {
		int fd = open(fl->path, O_RDONLY);
		if (fd < 0)
			continue;
		fl->opens++;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			if (strstr(buf, SECRET_TEXT))
				fl->opened_secret++;
		}
	}
	fl->stop = 1;
	return 0;
}

TEST(inv2_toctou_path_flip_never_opens_forbidden_file)
{
	FILE *f = fopen(SECRET, "w");
	ASSERT_NE(NULL, f);
	fputs(SECRET_TEXT, f);
	fclose(f);
	struct flip *fl = shared_page(sizeof(*fl));
	ASSERT_NE(NULL, fl);
	strcpy(fl->path, "/etc/hostname");
	/* the flipper shares the path buffer with the sandboxed process */
	pid_t flipper = fork();
	ASSERT_LE(0, flipper);
	if (flipper == 0) {
		static const char a[] = "/etc/hostname", b[] = SECRET;
		while (!fl->stop) {
			memcpy(fl->path, b, sizeof(b));
			memcpy(fl->path, a, sizeof(a));
		}
		_exit(0);
	}
	int st = run_sandboxed_opts(body_toctou, fl, NULL, 60);
	fl->stop = 1;
	waitpid(flipper, NULL, 0);
	unlink(SECRET);
	EXPECT_EQ(0, outcome(st));
	EXPECT_EQ(0, fl->opened_secret);
	EXPECT_LT(0, fl->opens);
	TH_LOG("%d opens of the allowed name succeeded, %d of the secret", fl->opens,
	       fl->opened_secret);
}

/* A component of a path in a write grant swapped for a symlink out of it
 * between B's check and the open: the swap is one atomic rename. */
struct swap {
	char grant[64], secret[64];
	volatile int stop;
	volatile int writes;
};

static int body_swap(void *a)
{
	struct swap *sw = a;
	char path[128];
	snprintf(path, sizeof(path), "%s/d/file", sw->grant);
	for (int i = 0; i < 3000; i++) {
		int fd = open(path, O_WRONLY | O_APPEND);
		if (fd < 0)
			continue;
		if (write(fd, "X", 1) == 1)
			sw->writes++;
		close(fd);
	}
	sw->stop = 1;
	return 0;
}

TEST(inv2_symlink_swap_in_a_write_grant_never_leads_out)
{
	if (!suite_has_openat2())
		SKIP(return, "write grants need openat2 (see api_write_grant_refused_without_openat2)");
	struct swap *sw = shared_page(sizeof(*sw));
	ASSERT_NE(NULL, sw);
	strcpy(sw->grant, "/tmp/sandpit-grant-XXXXXX");
	strcpy(sw->secret, "/tmp/sandpit-secret-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(sw->grant));
	ASSERT_NE(NULL, mkdtemp(sw->secret));
	char d[128], l[128], file[128], secret_file[128];
	snprintf(d, sizeof(d), "%s/d", sw->grant);
	snprintf(l, sizeof(l), "%s/l", sw->grant);
	snprintf(file, sizeof(file), "%s/d/file", sw->grant);
	snprintf(secret_file, sizeof(secret_file), "%s/file", sw->secret);
	ASSERT_EQ(0, mkdir(d, 0700));
	close(open(file, O_CREAT | O_WRONLY, 0600));
	int fd = open(secret_file, O_CREAT | O_WRONLY, 0600);
	ASSERT_EQ(6, write(fd, "SECRET", 6));
	close(fd);
	ASSERT_EQ(0, symlink(sw->secret, l));
	pid_t swapper = swap_race_start(d, l, &sw->stop);
	ASSERT_LE(0, swapper);
	const char *w[] = { sw->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	int st = run_sandboxed_opts(body_swap, sw, &o, 60);
	sw->stop = 1;
	waitpid(swapper, NULL, 0);
	char buf[64] = "";
	fd = open(secret_file, O_RDONLY);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	EXPECT_EQ(0, outcome(st));
	EXPECT_EQ(6, n);
	EXPECT_STREQ("SECRET", buf);
	TH_LOG("%d writes landed inside the grant", sw->writes);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", sw->grant, sw->secret);
	EXPECT_EQ(0, system(cmd));
}

TEST_HARNESS_MAIN
