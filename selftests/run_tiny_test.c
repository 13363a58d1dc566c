/* `sandpit run` under the smallest policies: sandpit's own calls in U
 * work under any policy the parser accepts, and a call the policy refuses
 * or kills is named (selftests/programs/tiny.c). */
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


/* ---- sandpit's own calls under the smallest policies ----
 *
 * What sandpit needs for itself in U (the run-time patcher's reads of
 * /proc/self/maps, its wake-ups and sleeps on its eventfds, a thread's
 * exit, signal returns) works under any policy, and a call the policy
 * refuses or kills is named on stderr: the four smallest policies that run
 * a program, in both modes, with the program's exact output and status.
 * selftests/programs/tiny.c makes only the calls it is asked to. */

FIXTURE(tiny) {
	char dir[64], file[96], cat[96], rw[96], kill[96], wr[96], wr_sig[96], mj[96], mj_line[96];
	char tiny[PATH_MAX + 32];
};
FIXTURE_VARIANT(tiny) {
	const char *mode;
};
FIXTURE_VARIANT_ADD(tiny, strict) { .mode = "strict" };
FIXTURE_VARIANT_ADD(tiny, filter) { .mode = "filter" };

/* minijail's examples/cat.policy, with what cat and ld.so of a current
 * glibc call besides (minijail's own file predates openat); no grant of
 * /proc/self, which the run-time patcher's maps used to need */
static const char cat_policy[] =
	"# cat, in minijail's format\n"
	"read: 1\nwrite: 1\nrt_sigreturn: 1\nexit_group: 1\n"
	"openat: 1\nclose: 1\nfstat: 1\nnewfstatat: 1\n"
	"# Enforce W^X.\n"
	"mmap: arg2 in ~PROT_EXEC || arg2 in ~PROT_WRITE\n"
	"mprotect: arg2 in ~PROT_EXEC || arg2 in ~PROT_WRITE\n"
	"munmap: 1\nbrk: 1\narch_prctl: 1\nfadvise64: 1\naccess: 1\npread64: 1\nlseek: 1\n"
	"execve: 1\nset_robust_list: 1\nrseq: 1\nprlimit64: 1\ngetrandom: 1\nfutex: 1\n"
	"copy_file_range: 1\n"
	"exit: 1\n";

FIXTURE_SETUP(tiny)
{
	SKIP_FILTER_VARIANT_WITHOUT_FILTER(variant->mode);
	strcpy(self->dir, "/tmp/sandpit-tiny-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->file, sizeof self->file, "%s/file.txt", self->dir);
	snprintf(self->cat, sizeof self->cat, "%s/cat.policy", self->dir);
	snprintf(self->rw, sizeof self->rw, "%s/rw.policy", self->dir);
	snprintf(self->kill, sizeof self->kill, "%s/kill.policy", self->dir);
	snprintf(self->wr, sizeof self->wr, "%s/wr.policy", self->dir);
	snprintf(self->wr_sig, sizeof self->wr_sig, "%s/wr_sig.policy", self->dir);
	snprintf(self->mj, sizeof self->mj, "%s/mj.policy", self->dir);
	snprintf(self->mj_line, sizeof self->mj_line, "%s/mj_line.policy", self->dir);
	snprintf(self->tiny, sizeof self->tiny, "%s/selftests/tiny", bindir);
	write_file(_metadata, self->file, "two lines\nof a file\n", 0644);
	write_file(_metadata, self->cat, cat_policy, 0644);
	/* what seccomp's strict mode allows (which strict mode needs named),
	 * and nothing sandpit needs more (docs/sandpit.policy.5) */
	write_file(_metadata, self->rw,
		   "read: allow\nwrite: allow\nexit: allow\nexit_group: allow\nrt_sigreturn: allow\n",
		   0644);
	write_file(_metadata, self->kill,
		   "default: kill\nread: allow\nwrite: allow\nexit_group: allow\nexit: allow\n"
		   "rt_sigreturn: allow\n",
		   0644);
	write_file(_metadata, self->wr, "read: allow\nwrite: arg0 == 1\nexit_group: allow\n", 0644);
	/* minijail's: a call no line names is killed, and one named kill */
	write_file(_metadata, self->mj,
		   "# tiny, in minijail's format\nread: 1\nwrite: 1\nexit_group: 1\nexit: 1\n"
		   "rt_sigreturn: 1\n",
		   0644);
	write_file(_metadata, self->mj_line,
		   "read: 1\nwrite: 1\n\n# refused by name\ngetppid: kill\nexit_group: 1\nexit: 1\n"
		   "rt_sigreturn: 1\n",
		   0644);
	write_file(_metadata, self->wr_sig,
		   "read: allow\nwrite: arg0 == 1\nexit_group: allow\nrt_sigaction: process\n", 0644);
}

FIXTURE_TEARDOWN(tiny)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", self->dir);
	EXPECT_EQ(0, system(cmd));
}

/* `sandpit run --mode=MODE --policy=POLICY [grants] -- argv`: stdout, stderr
 * and the status */
struct both {
	char out[16384], err[16384];
	int status;
};

static void read_memfd(int fd, char *buf, size_t n)
{
	ssize_t got = pread(fd, buf, n - 1, 0);
	buf[got > 0 ? got : 0] = 0;
	close(fd);
}

static int run_both(const char *mode, const char *policy, const char *const grants[],
		    char *const argv[], struct both *b)
{
	char sandpit[PATH_MAX + 16], modeopt[32], secs[16], polopt[128];
	const char *extra[MAX_ARGS] = { polopt };
	char *av[2 * MAX_ARGS + 4];
	snprintf(polopt, sizeof polopt, "--policy=%s", policy);
	for (int i = 0; grants && grants[i] && i + 2 < MAX_ARGS; i++)
		extra[i + 1] = grants[i];
	sandpit_run_argv(av, sandpit, modeopt, secs, mode, 20, extra, argv);
	int fo = memfd_create("out", 0), fe = memfd_create("err", 0);
	if (fo < 0 || fe < 0)
		return -1;
	pid_t c = fork();
	if (c == 0) {
		int null = open("/dev/null", O_RDONLY);
		if (null < 0 || dup2(null, 0) < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
			_exit(99);
		execvp(av[0], av);
		_exit(98);
	}
	int st;
	if (c < 0 || waitpid(c, &st, 0) < 0)
		return -1;
	b->status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
	read_memfd(fo, b->out, sizeof b->out);
	read_memfd(fe, b->err, sizeof b->err);
	return 0;
}

#define TINY(what) ((char *const[]){ self->tiny, what, NULL })

/* cat of a file under a minijail policy: ld.so maps libc inside the
 * sandbox, and the run-time patcher reads /proc/self/maps on sandpit's own
 * descriptor, not through the policy (in strict mode an unpatched libc
 * would be killed at its first call); a file outside the grants is
 * refused, and the refusal named */
TEST_F(tiny, cat_a_file_under_a_minijail_policy)
{
	char dir_grant[96];
	snprintf(dir_grant, sizeof dir_grant, "--allow-read=%s", self->dir);
	const char *grants[] = { "--allow-read=/usr", "--allow-read=/lib", "--allow-read=/etc",
				 dir_grant, NULL };
	struct both b;
	ASSERT_EQ(0, run_both(variant->mode, self->cat, grants, (char *const[]){ "/bin/cat", self->file, NULL }, &b));
	EXPECT_EQ(0, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("two lines\nof a file\n", b.out);
	EXPECT_EQ(NULL, strstr(b.err, "killed")) TH_LOG("%s", b.err);

	/* the same file without its directory's grant */
	const char *no_dir[] = { "--allow-read=/usr", "--allow-read=/lib", "--allow-read=/etc", NULL };
	ASSERT_EQ(0, run_both(variant->mode, self->cat, no_dir, (char *const[]){ "/bin/cat", self->file, NULL }, &b));
	EXPECT_EQ(1, b.status);
	EXPECT_STREQ("", b.out);
	char want[512];
	snprintf(want, sizeof want, "the last: openat(AT_FDCWD, \"%s\", O_RDONLY, 0) = -EACCES, by "
		 "%s:6; --allow-read=%s would allow the last;", self->file, self->cat, self->file);
	EXPECT_NE(NULL, strstr(b.err, want)) TH_LOG("%s", b.err);
}

/* read, write and exit only: nothing else for sandpit either */
TEST_F(tiny, read_write_exit_only)
{
	struct both b;
	ASSERT_EQ(0, run_both(variant->mode, self->rw, NULL, TINY("hello"), &b));
	EXPECT_EQ(3, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("hello\n", b.out);
	EXPECT_STREQ("", b.err);
	ASSERT_EQ(0, run_both(variant->mode, self->rw, NULL, TINY("refused"), &b));
	EXPECT_EQ(4, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("before\nafter -38\n", b.out);
	EXPECT_NE(NULL, strstr(b.err, "sandpit: 1 call refused; the first: getppid() = -ENOSYS, by "
				      "not in the policy: default;"))
	TH_LOG("%s", b.err);
}

/* default: kill and the minimum: a call the default kills is named, with
 * its number and the line, before P dies; in filter mode also one the
 * patcher could not patch, which the filter traps (it used to kill it
 * with SIGSYS and no word).  In strict mode such a call is the kernel's
 * to kill, which names nothing: sandpit says a thread ended without exit. */
TEST_F(tiny, default_kill_and_the_minimum)
{
	struct both b;
	char want[256];
	snprintf(want, sizeof want, "sandpit: killed getppid(), system call 110; by not in the "
		 "policy: default (%s:1); from tiny+", self->kill);
	ASSERT_EQ(0, run_both(variant->mode, self->kill, NULL, TINY("hello"), &b));
	EXPECT_EQ(3, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("hello\n", b.out);
	EXPECT_STREQ("", b.err);
	ASSERT_EQ(0, run_both(variant->mode, self->kill, NULL, TINY("refused"), &b));
	EXPECT_EQ(128 + SIGKILL, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("before\n", b.out);
	EXPECT_NE(NULL, strstr(b.err, want)) TH_LOG("%s", b.err);
	EXPECT_EQ(1, count(b.err, "sandpit: killed ")) TH_LOG("%s", b.err);
	if (strcmp(variant->mode, "filter"))
		return;
	ASSERT_EQ(0, run_both(variant->mode, self->kill, NULL, TINY("missed"), &b));
	EXPECT_EQ(128 + SIGKILL, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("before\n", b.out);
	EXPECT_NE(NULL, strstr(b.err, want)) TH_LOG("%s", b.err);
}

/* A minijail file's kill, by its default (no line names the call) and by
 * a line, with --log=denials in text and in JSON: one line names the
 * call, its number, what decided it and the caller, in both modes, before
 * P dies of SIGKILL; without --log the same line, and the closing one. */
TEST_F(tiny, a_minijail_kill_names_the_call_in_text_and_json)
{
	struct both b;
	char want[PATH_MAX + 128];
	const char *text[] = { "--policy-format=minijail", "--log=denials", NULL };
	const char *json[] = { "--policy-format=minijail", "--log=denials", "--log-format=json", NULL };
	const char *quiet[] = { "--policy-format=minijail", NULL };

	ASSERT_EQ(0, run_both(variant->mode, self->mj, text, TINY("hello"), &b));
	EXPECT_EQ(3, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("hello\n", b.out);

	ASSERT_EQ(0, run_both(variant->mode, self->mj, text, TINY("refused"), &b));
	EXPECT_EQ(128 + SIGKILL, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("before\n", b.out);
	EXPECT_NE(NULL, strstr(b.err, "sandpit: killed getppid(), system call 110; by not in the "
				      "policy: default; from tiny+0x"))
	TH_LOG("%s", b.err);
	EXPECT_EQ(1, count(b.err, "sandpit: killed ")) TH_LOG("%s", b.err);

	ASSERT_EQ(0, run_both(variant->mode, self->mj, json, TINY("refused"), &b));
	EXPECT_EQ(128 + SIGKILL, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("before\n", b.out);
	EXPECT_NE(NULL, strstr(b.err, "{\"sandpit\":\"killed\",\"pid\":"));
	EXPECT_NE(NULL, strstr(b.err, ",\"call\":\"getppid\",\"nr\":110,\"args\":[],"))
	TH_LOG("%s", b.err);
	EXPECT_NE(NULL, strstr(b.err, ",\"decided\":\"not in the policy: default\","))
	TH_LOG("%s", b.err);
	snprintf(want, sizeof want, ",\"module\":\"%s\",\"offset\":\"0x", self->tiny);
	EXPECT_NE(NULL, strstr(b.err, want)) TH_LOG("%s", b.err);
	EXPECT_EQ(1, count(b.err, "\"killed\"")) TH_LOG("%s", b.err);

	/* named by a line: that line, in text and in JSON */
	snprintf(want, sizeof want, "sandpit: killed getppid(), system call 110; by %s:5; from tiny+0x",
		 self->mj_line);
	ASSERT_EQ(0, run_both(variant->mode, self->mj_line, text, TINY("refused"), &b));
	EXPECT_EQ(128 + SIGKILL, b.status) TH_LOG("%s", b.err);
	EXPECT_NE(NULL, strstr(b.err, want)) TH_LOG("%s", b.err);
	ASSERT_EQ(0, run_both(variant->mode, self->mj_line, quiet, TINY("refused"), &b));
	EXPECT_EQ(128 + SIGKILL, b.status) TH_LOG("%s", b.err);
	EXPECT_NE(NULL, strstr(b.err, want)) TH_LOG("%s", b.err);
	snprintf(want, sizeof want, "sandpit: 1 call refused; the first: getppid(): killed, by %s:5;",
		 self->mj_line);
	EXPECT_NE(NULL, strstr(b.err, want)) TH_LOG("%s", b.err);
	ASSERT_EQ(0, run_both(variant->mode, self->mj_line, json, TINY("refused"), &b));
	EXPECT_EQ(128 + SIGKILL, b.status) TH_LOG("%s", b.err);
	snprintf(want, sizeof want, ",\"call\":\"getppid\",\"nr\":110,\"args\":[],\"result\":0,"
		 "\"errno\":\"0\",\"decided\":\"%s:5\",", self->mj_line);
	EXPECT_NE(NULL, strstr(b.err, want)) TH_LOG("%s", b.err);
}

/* A rule on write, in filter mode (strict mode cannot keep a rule on
 * write, which seccomp's strict mode lets U make itself: its refusal of
 * such a policy is another change's, and this test leaves strict mode to
 * it).  sandpit's own writes pass the filter (every program used to die of
 * SIGSEGV, the net trapping its own wake-up write); the program's own code,
 * from a site the patcher cannot patch, straight to the filter, may write
 * to exactly T's eventfds of its threads (one thread: one descriptor): a
 * wake-up of its own T, as every call it makes through T sends, after
 * which T answers each of 200 refused calls as before.  Nothing else of
 * sandpit's block: not U's eventfds, not the maps, not B's socket (which
 * U writes only to interrupt T for one of the program's handlers, so only
 * where the policy lets it install handlers: then also B's socket, two
 * below T's eventfd, whose worst is a spurious restart of one of its own
 * T's waits). */
/* tiny's "fds" report: the numbers its writes reached, then its counts;
 * the number of numbers, *tail the last line */
static int wrote_fds(const char *out, int *fdv, int max, long *eperm, long *ebadf, long *other,
		     const char **tail)
{
	static char last[64];
	const char *p = out;
	int n = 0;
	last[0] = 0;
	*tail = last;
	if (strncmp(p, "wrote:", 6))
		return -1;
	p += 6;
	while (*p == ' ' && n < max) {
		char *e;
		fdv[n++] = (int)strtol(p + 1, &e, 10);
		p = e;
	}
	if (sscanf(p, "\neperm %ld ebadf %ld other %ld\n%63[^\n]", eperm, ebadf, other, last) != 4)
		return -1;
	return n;
}

TEST_F(tiny, write_rule_in_filter_mode)
{
	struct both b;
	if (strcmp(variant->mode, "filter"))
		SKIP(return, "strict mode refuses a rule on write (another change's test)");
	ASSERT_EQ(0, run_both(variant->mode, self->wr, NULL, TINY("hello"), &b));
	EXPECT_EQ(3, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("hello\n", b.out);
	EXPECT_STREQ("", b.err);
	ASSERT_EQ(0, run_both(variant->mode, self->wr, NULL, TINY("refused"), &b));
	EXPECT_EQ(4, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("before\nafter -38\n", b.out);
	EXPECT_NE(NULL, strstr(b.err, "the first: getppid() = -ENOSYS, by not in the policy: default;"))
	TH_LOG("%s", b.err);

	/* the program's own writes (through a site the patcher never saw, so
	 * the filter judges them) reach only T's eventfds, every slot's (all
	 * made at start): a wake-up T checks against its own word, which the
	 * program cannot forge (rev4_test: sandpits_eventfds_filled_and_rung_*) */
	long eperm = -1, ebadf = -1, other = -1;
	int fdv[1100], n;
	const char *tail;
	ASSERT_EQ(0, run_both(variant->mode, self->wr, NULL, TINY("fds"), &b));
	EXPECT_EQ(0, b.status) TH_LOG("%s", b.err);
	n = wrote_fds(b.out, fdv, 1100, &eperm, &ebadf, &other, &tail);
	ASSERT_LE(1, n) TH_LOG("%s", b.out);
	EXPECT_LE(64, fdv[0]);
	for (int i = 1; i < n; i++)
		EXPECT_EQ(fdv[0] + 2 * i, fdv[i]); /* slots_t_fd(fd_lo, i) */
	EXPECT_GT(4096, fdv[n - 1]);
	/* every other descriptor below 4096 but 1 refused: EPERM by the rule
	 * (0, 2 and those the test runner left open), EBADF in sandpit's
	 * block and where nothing is open */
	EXPECT_EQ(4095 - n, eperm + ebadf);
	EXPECT_LE(2, eperm);
	EXPECT_EQ(0, other);
	EXPECT_STREQ("then 200 of 200 refused", tail);

	/* with sandpit's own signal in use, T<->B's end too */
	int t0 = fdv[0], m = n;
	ASSERT_EQ(0, run_both(variant->mode, self->wr_sig, NULL, TINY("fds"), &b));
	EXPECT_EQ(0, b.status) TH_LOG("%s", b.err);
	n = wrote_fds(b.out, fdv, 1100, &eperm, &ebadf, &other, &tail);
	ASSERT_EQ(m + 1, n) TH_LOG("%s", b.out);
	EXPECT_EQ(t0 - 2, fdv[0]);
	EXPECT_EQ(t0, fdv[1]);
	EXPECT_EQ(4095 - n, eperm + ebadf);
	EXPECT_EQ(0, other);
	EXPECT_STREQ("then 200 of 200 refused", tail);
}

TEST_HARNESS_MAIN
