/* Unwinding through a patched call site: a debugger, a profiler
 * or a crash reporter that stops a thread blocked in a patched read sees
 * the program's own frames.  The program (selftests/unwind/blocked_read.c,
 * frame pointers, not PIE) is stopped with PTRACE_SEIZE + PTRACE_INTERRUPT
 * from here, its parent (never B, which traces P only while it sets an FS
 * base at start-up), and its frame-pointer chain is walked with
 * PTRACE_PEEKDATA; the return addresses are resolved with the program's
 * symbol table (nm).  gdb's `bt` is asked too where gdb is installed.
 * Every case runs natively first, as the reference, then in the suite's
 * mode. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <kselftest_harness.h>
#include "build_dir.h"
#include "sandbox_util.h"

#define MAX_FRAMES 64

struct sym {
	const char *name;
	uintptr_t lo, hi;
};

/* The function symbols we look for, from the program's symbol table. */
static int load_syms(const char *prog, struct sym *s, unsigned n)
{
	char cmd[PATH_MAX + 64], line[512], name[256], type;
	unsigned long a, size;
	int found = 0;
	FILE *f;

	snprintf(cmd, sizeof cmd, "nm -S --defined-only '%s'", prog);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "%lx %lx %c %255s", &a, &size, &type, name) == 4)
			for (unsigned i = 0; i < n; i++)
				if (!strcmp(name, s[i].name) && (type == 'T' || type == 't')) {
					s[i].lo = a;
					s[i].hi = a + size;
					found++;
				}
	pclose(f);
	return found;
}

static const char *sym_of(const struct sym *s, unsigned n, uintptr_t pc)
{
	for (unsigned i = 0; i < n; i++)
		if (pc >= s[i].lo && pc < s[i].hi)
			return s[i].name;
	return NULL;
}

struct stopped {
	pid_t pid;
	int in_fd;                 /* the program's stdin: a byte ends its read */
};

static const char *mode_name(int native)
{
	return native ? "native" : suite_mode() == SANDPIT_MODE_STRICT ? "strict" : "filter";
}

/* Start the program and wait until its main thread sleeps in the read. */
static int start_blocked(struct stopped *p, const char *prog, int native, const char *how)
{
	int in[2], out[2];
	char c, path[64], stat[512];
	struct pollfd pf;

	if (pipe(in) || pipe(out))
		return -1;
	fflush(NULL);
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(prog, prog, mode_name(native), how, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->in_fd = in[1];
	pf = (struct pollfd){ .fd = out[0], .events = POLLIN };
	if (poll(&pf, 1, 20000) != 1 || read(out[0], &c, 1) != 1 || c != 'r')
		return -1;
	close(out[0]);
	/* 'S' in /proc/PID/stat: asleep, in the read or in sandpit's wait */
	snprintf(path, sizeof path, "/proc/%d/stat", p->pid);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(stat, 1, sizeof stat - 1, f) : 0;
		char *rp;

		if (f)
			fclose(f);
		stat[n] = 0;
		rp = strrchr(stat, ')');
		if (rp && rp[1] == ' ' && rp[2] == 'S') {
			usleep(50000);
			return 0;
		}
		usleep(10000);
	}
	return -1;
}

/* Let it finish: the read gets its byte; 0 if it then exited 0. */
static int finish(struct stopped *p)
{
	int st;

	if (write(p->in_fd, "x", 1) != 1)
		return -1;
	close(p->in_fd);
	for (int i = 0; i < 2000; i++) {
		if (waitpid(p->pid, &st, WNOHANG) == p->pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
		usleep(10000);
	}
	kill(p->pid, SIGKILL);
	waitpid(p->pid, &st, 0);
	return -2;
}

struct walk {
	int stopped;               /* the thread reached a ptrace stop: the attack ran */
	uintptr_t pc[MAX_FRAMES];  /* pc[0] the stopped rip, then return addresses */
	unsigned n;
};

/* PTRACE_SEIZE + PTRACE_INTERRUPT, then the rbp chain by PTRACE_PEEKDATA. */
static void fp_walk(pid_t pid, struct walk *w)
{
	struct user_regs_struct regs;
	uintptr_t fp;
	int st;

	memset(w, 0, sizeof *w);
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) || ptrace(PTRACE_INTERRUPT, pid, 0, 0) ||
	    waitpid(pid, &st, __WALL) != pid)
		return;
	w->stopped = WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_STOP;
	if (w->stopped && !ptrace(PTRACE_GETREGS, pid, 0, &regs)) {
		w->pc[w->n++] = regs.rip;
		for (fp = regs.rbp; fp && !(fp & 7) && w->n < MAX_FRAMES;) {
			long ret, next;

			errno = 0;
			ret = ptrace(PTRACE_PEEKDATA, pid, fp + 8, 0);
			next = ptrace(PTRACE_PEEKDATA, pid, fp, 0);
			if (errno)
				break;
			w->pc[w->n++] = (uintptr_t)ret;
			if ((uintptr_t)next <= fp)
				break;
			fp = (uintptr_t)next;
		}
	}
	ptrace(PTRACE_DETACH, pid, 0, 0);
}

/* Which of the symbols the walk passed through, in order, as text. */
static void walk_names(const struct walk *w, const struct sym *s, unsigned n, char *out,
		       size_t len)
{
	out[0] = 0;
	for (unsigned i = 0; i < w->n; i++) {
		const char *name = sym_of(s, n, w->pc[i]);

		if (name && strlen(out) + strlen(name) + 2 < len) {
			strcat(out, name);
			strcat(out, " ");
		}
	}
}

static void prog_path(char *buf, size_t len)
{
	snprintf(buf, len, "%s/selftests/unwind_read", bindir);
}

/* Walk the stopped thread; its frames by name.  rip_in: the stopped
 * instruction's function, "" if none of ours (the sandboxed case: sandpit). */
static int walk_case(int native, const char *how, char *names, size_t len, char *rip_in)
{
	char prog[PATH_MAX];
	struct sym s[] = { { .name = "main" }, { .name = "blocked_in_read" },
			   { .name = "blocked_in_libc_read" } };
	struct stopped p;
	struct walk w;
	const char *r;

	prog_path(prog, sizeof prog);
	if (load_syms(prog, s, 3) != 3 || start_blocked(&p, prog, native, how))
		return -1;
	fp_walk(p.pid, &w);
	walk_names(&w, s, 3, names, len);
	r = w.n ? sym_of(s, 3, w.pc[0]) : NULL;
	strcpy(rip_in, r ? r : "");
	if (finish(&p) != 0 || !w.stopped)
		return -1;
	return (int)w.n;
}

/* the program's own syscall: its function and main are on the chain */
static void own_case(struct __test_metadata *_metadata, int native)
{
	char names[1024], rip_in[64];

	ASSERT_LT(1, walk_case(native, "own", names, sizeof names, rip_in));
	TH_LOG("%s: rip in '%s', chain: %s", mode_name(native), rip_in, names);
	if (native) {
		EXPECT_STREQ("blocked_in_read", rip_in);
		EXPECT_STREQ("blocked_in_read main ", names);
	} else {
		/* stopped in sandpit, not at the site: the site was patched */
		EXPECT_STREQ("", rip_in);
		EXPECT_STREQ("blocked_in_read main ", names);
	}
}

TEST(native_fp_walk_from_own_read_reaches_function_and_main)
{
	own_case(_metadata, 1);
}

TEST(sandboxed_fp_walk_from_patched_read_reaches_function_and_main)
{
	own_case(_metadata, 0);
}

/* libc's read (a leaf without a frame): main is on the chain, as natively */
static void libc_case(struct __test_metadata *_metadata, int native)
{
	char names[1024], rip_in[64];

	ASSERT_LT(1, walk_case(native, "libc", names, sizeof names, rip_in));
	TH_LOG("%s: rip in '%s', chain: %s", mode_name(native), rip_in, names);
	EXPECT_STREQ("", rip_in); /* libc natively, sandpit sandboxed */
	EXPECT_STREQ("main ", names);
}

TEST(native_fp_walk_from_libc_read_reaches_main)
{
	libc_case(_metadata, 1);
}

TEST(sandboxed_fp_walk_from_patched_libc_read_reaches_main)
{
	libc_case(_metadata, 0);
}

/* gdb -batch -p PID -ex bt, on the program blocked in the read */
static void gdb_case(struct __test_metadata *_metadata, int native, const char *how)
{
	char prog[PATH_MAX], cmd[256], out[16384];
	struct stopped p;
	size_t n = 0;
	FILE *f;

	if (system("command -v gdb >/dev/null 2>&1"))
		SKIP(return, "gdb is not installed");
	prog_path(prog, sizeof prog);
	ASSERT_EQ(0, start_blocked(&p, prog, native, how));
	snprintf(cmd, sizeof cmd, "timeout 120 gdb -nx -batch -p %d -ex bt 2>&1", p.pid);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	while (n < sizeof out - 1 && fgets(out + n, (int)(sizeof out - n), f))
		n += strlen(out + n);
	pclose(f);
	TH_LOG("%s %s:\n%s", mode_name(native), how, out);
	EXPECT_NE(NULL, strstr(out, " in main ("));
	EXPECT_NE(NULL, strstr(out, strcmp(how, "own") ? "blocked_in_libc_read (" : "blocked_in_read ("));
	/* gdb attached (the backtrace has frames) and let it run on */
	EXPECT_NE(NULL, strstr(out, "#1 "));
	EXPECT_EQ(0, finish(&p));
}

TEST(native_gdb_bt_from_own_read_shows_main)
{
	gdb_case(_metadata, 1, "own");
}

TEST(sandboxed_gdb_bt_from_patched_read_shows_main)
{
	gdb_case(_metadata, 0, "own");
}

TEST(native_gdb_bt_from_libc_read_shows_main)
{
	gdb_case(_metadata, 1, "libc");
}

TEST(sandboxed_gdb_bt_from_patched_libc_read_shows_main)
{
	gdb_case(_metadata, 0, "libc");
}

TEST_HARNESS_MAIN
