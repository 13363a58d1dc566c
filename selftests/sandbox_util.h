/* Helpers for selftests that run code inside the sandbox.
 *
 * The harness already runs each TEST in its own child; run_sandboxed forks
 * once more so that the test body stays outside the sandbox and can check
 * what the sandboxed side could not (that a file does not exist, how the
 * sandboxed process ended). */
#ifndef SANDPIT_SELFTEST_UTIL_H
#define SANDPIT_SELFTEST_UTIL_H
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <sandpit.h>
#include "harness_main.h"
#include "kernel_probe.h"
#include "bench/bench.h"

#define SANDBOX_START_FAILED 200

/* write grants need openat2; a forced legacy kernel has none */
static inline int suite_has_openat2(void)
{
	const char *k = getenv("SANDPIT_KERNEL");
	return !k || (strcmp(k, "legacy") && !strstr(k, "no-openat2"));
}

/* First in a test that gives a write grant: skipped where the kernel (or
 * SANDPIT_KERNEL) has no openat2, which write grants need */
#define NEED_OPENAT2()                                        \
	do {                                                  \
		if (!suite_has_openat2())                     \
			SKIP(return, "write grants need openat2"); \
	} while (0)

/* The mode this run of the suite sandboxes in: $SANDPIT_MODE, where auto
 * (or nothing) means filter when the kernel has it -- a forced legacy
 * kernel does not, nor does a real one without seccomp-bpf. */
static inline enum sandpit_mode suite_mode(void)
{
	const char *m = getenv("SANDPIT_MODE");
	const char *k = getenv("SANDPIT_KERNEL");
	if (m && !strcmp(m, "strict"))
		return SANDPIT_MODE_STRICT;
	if (m && !strcmp(m, "filter"))
		return SANDPIT_MODE_FILTER;
	if (k && !strcmp(k, "legacy"))
		return SANDPIT_MODE_STRICT;
	return kernel_has_filter() ? SANDPIT_MODE_FILTER : SANDPIT_MODE_STRICT;
}

/* Shared with the sandboxed child: it writes results here. */
static inline void *shared_page(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Runs fn(arg) in a sandboxed child and returns its wait status.  fn's
 * return value becomes the exit status.  Gives up (SIGKILL) after timeout_s. */
static inline int run_sandboxed_opts(int (*fn)(void *), void *arg,
				     const struct sandpit_options *o, int timeout_s)
{
	fflush(NULL);
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		if (sandpit_start(o) < 0) {
			fprintf(stderr, "sandpit_start: %s\n", sandpit_error());
			_exit(SANDBOX_START_FAILED);
		}
		_exit(fn(arg));
	}
	int st;
	for (int i = 0; i < timeout_s * suite_timeout_scale() * 100; i++) {
		pid_t w = waitpid(p, &st, WNOHANG);
		if (w == p)
			return st;
		usleep(10000);
	}
	kill(p, SIGKILL);
	waitpid(p, &st, 0);
	return -2; /* hung */
}

static inline int run_sandboxed(int (*fn)(void *), void *arg)
{
	return run_sandboxed_opts(fn, arg, NULL, 20);
}

/* A hexadecimal field ("SigCgt:", "SigBlk:", ...) of a /proc status file,
 * read with plain open and read (no stdio: callers may run sandboxed). */
static inline int proc_status_hex(const char *path, const char *field, unsigned long long *v)
{
	char buf[4096];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *c = strstr(buf, field);
	if (!c)
		return -1;
	*v = strtoull(c + strlen(field), NULL, 16);
	return 0;
}

/* exit status, or 1000 + signal, or the negative run_sandboxed error */
/* fn(arg) sandboxed in a child that is uid (without supplementary groups;
 * a suite run by another user than root stays that user, who can become
 * no other) with RLIMIT_NOFILE soft:hard (0: as inherited) before
 * sandpit_start: the wait status, -2 if it ran past timeout_s */
static inline int run_sandboxed_as(uid_t uid, rlim_t soft, rlim_t hard, int (*fn)(void *),
				   void *arg, const struct sandpit_options *o, int timeout_s)
{
	if (geteuid())
		uid = geteuid();
	fflush(NULL);
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		struct rlimit rl = { soft, hard };
		if (soft && setrlimit(RLIMIT_NOFILE, &rl))
			_exit(SANDBOX_START_FAILED + 3);
		if (uid != geteuid() && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
			_exit(SANDBOX_START_FAILED + 1);
		/* setuid made the child undumpable, which a program started as
		 * that user is not: B could not trace it (strict mode without
		 * FSGSBASE needs to) */
		if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
			_exit(SANDBOX_START_FAILED + 2);
		if (sandpit_start(o) < 0) {
			fprintf(stderr, "sandpit_start: %s\n", sandpit_error());
			_exit(SANDBOX_START_FAILED);
		}
		_exit(fn(arg));
	}
	int st;
	for (int i = 0; i < timeout_s * 100; i++) {
		if (waitpid(p, &st, WNOHANG) == p)
			return st;
		usleep(10000);
	}
	kill(p, SIGKILL);
	waitpid(p, &st, 0);
	return -2;
}

static inline int outcome(int st)
{
	if (st < 0)
		return st;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 1000 + WTERMSIG(st);
}
#define KILLED(sig) (1000 + (sig))

/* fn run twice on the same files: natively on nat in a child, then on box
 * in the sandbox with dir granted for reading.  0 when both ended with 0;
 * else the sandboxed run's outcome, or 5000 + the native one's (the
 * comparison of the two is the caller's). */
static inline int run_native_then_sandboxed(int (*fn)(void *), void *nat, void *box,
					     const char *dir)
{
	int st;
	pid_t pid = fork();
	if (pid < 0)
		return 5000 - 1;
	if (pid == 0)
		_exit(fn(nat));
	if (waitpid(pid, &st, 0) != pid)
		return 5000 - 1;
	if (outcome(st))
		return 5000 + outcome(st);
	const char *r[] = { dir, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = r };
	return outcome(run_sandboxed_opts(fn, box, &o, 60));
}

/* For tests that run each mode themselves (not run per mode by make check):
 * strict mode asked for, filter mode, and auto on a kernel without
 * seccomp-bpf, which picks strict. */
struct mode_case {
	const char *mode, *kernel;
	int strict;
};
#define NMODE_CASES 3
static inline const struct mode_case *mode_case(int i)
{
	static const struct mode_case c[NMODE_CASES] = {
		{ "strict", NULL, 1 }, { "filter", NULL, 0 }, { "auto", "legacy", 1 }
	};
	return &c[i];
}

static inline void set_mode(const struct mode_case *m)
{
	setenv("SANDPIT_MODE", m->mode, 1);
	if (m->kernel)
		setenv("SANDPIT_KERNEL", m->kernel, 1);
	else
		unsetenv("SANDPIT_KERNEL");
}

/* sandpit_start in a child: its return and message, in a shared page */
struct start_result {
	int rc;
	char msg[1024];
};

static inline int start_in_child(const struct sandpit_options *o, struct start_result *out)
{
	int st;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		out->rc = sandpit_start(o);
		snprintf(out->msg, sizeof(out->msg), "%s", out->rc < 0 ? sandpit_error() : "");
		_exit(0);
	}
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? 0 : -1;
}

#ifdef __KSELFTEST_HARNESS_H
/* Policy o, in each mode case: where the case runs strict, sandpit_start
 * refuses it with -EOPNOTSUPP and a message that starts with `want`, and
 * starts nothing; elsewhere body(a) runs sandboxed and ends with 0, having
 * counted in the first int of *a (alen bytes, cleared first) the attempts
 * that reached the call: `attempts` of them. */
static inline void strict_refuses_filter_enforces(struct __test_metadata *_metadata,
						  const struct sandpit_options *o,
						  const char *want, int (*body)(void *), void *a,
						  size_t alen, int attempts)
{
	struct start_result *res = shared_page(sizeof(*res));

	ASSERT_NE(NULL, res);
	for (int i = 0; i < NMODE_CASES; i++) {
		const struct mode_case *m = mode_case(i);

		set_mode(m);
		if (m->strict) {
			ASSERT_EQ(0, start_in_child(o, res));
			EXPECT_EQ(-EOPNOTSUPP, res->rc) TH_LOG("%s mode", m->mode);
			EXPECT_EQ(0, strncmp(res->msg, want, strlen(want)))
			TH_LOG("%s mode: %s", m->mode, res->msg);
			continue;
		}
		memset(a, 0, alen);
		EXPECT_EQ(0, outcome(run_sandboxed_opts(body, a, o, 20))) TH_LOG("%s mode", m->mode);
		EXPECT_EQ(attempts, *(int *)a) TH_LOG("%s mode", m->mode);
	}
	unsetenv("SANDPIT_KERNEL");
}
#endif

/* a raw system call issued from the test program's own code (not libc) */
static inline long raw_syscall(long nr, long a0, long a1, long a2)
{
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a0), "S"(a1), "d"(a2)
			 : "rcx", "r11", "memory");
	return ret;
}

/* An entry's extended attributes, not following a link: each name and its
 * value's first bytes in hex, in the order the file system lists them;
 * appended to out. */
static inline void xattr_signature(const char *path, char *out, size_t len)
{
	char names[1024], val[16];
	ssize_t n = llistxattr(path, names, sizeof(names));
	for (ssize_t k = 0; k < n; k += (ssize_t)strlen(names + k) + 1) {
		ssize_t v = lgetxattr(path, names + k, val, sizeof(val));
		size_t l = strlen(out);
		snprintf(out + l, len - l, " %s=", names + k);
		for (ssize_t b = 0; b < v; b++) {
			l = strlen(out);
			snprintf(out + l, len - l, "%02x", (unsigned char)val[b]);
		}
	}
}

/* Every entry under dir, sorted: its path under dir (start with rel ""),
 * type and mode, owner, size (regular files), link target, extended
 * attributes; appended to out. */
static inline void tree_signature(const char *dir, const char *rel, char *out, size_t len)
{
	struct dirent **ents;
	char path[PATH_MAX], sub[PATH_MAX], target[128];
	int n = scandir(dir, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		const char *nm = ents[i]->d_name;
		struct stat st;
		if (strcmp(nm, ".") && strcmp(nm, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dir, nm);
			snprintf(sub, sizeof(sub), "%s%s/", rel, nm);
			lstat(path, &st);
			ssize_t t = S_ISLNK(st.st_mode) ? readlink(path, target, sizeof(target) - 1) : 0;
			target[t > 0 ? t : 0] = '\0';
			size_t l = strlen(out);
			snprintf(out + l, len - l, "%s %o %u:%u %ld %s", sub, st.st_mode,
				 (unsigned)st.st_uid, (unsigned)st.st_gid,
				 S_ISREG(st.st_mode) ? (long)st.st_size : 0L, target);
			xattr_signature(path, out, len);
			l = strlen(out);
			snprintf(out + l, len - l, "\n");
			if (S_ISDIR(st.st_mode))
				tree_signature(path, sub, out, len);
		}
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
}

/* The entries of a directory (a process's /proc/PID/fd, say), "." and
 * ".." left out; -errno if it cannot be read. */
static inline long count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	long n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* A child of this process whose command name starts with comm (B is
 * "sandpit-B"), found in /proc; 0 if none. */
static inline pid_t find_child_named(const char *comm)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;
	while (d && (e = readdir(d)) && !found) {
		char path[300], buf[512];
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f)) {
			char *c = strchr(buf, '(');
			char *ce = c ? strrchr(c, ')') : NULL;
			int ppid = ce ? atoi(ce + 4) : 0;
			if (c && ce && !strncmp(c + 1, comm, strlen(comm)) && ppid == getpid())
				found = atoi(buf);
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

#endif
