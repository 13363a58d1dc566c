/* Running a program natively and under `sandpit run`, collecting its
 * output and exit status: the run_*_test binaries and no_unwind_test. */
#ifndef SANDPIT_SELFTEST_RUN_UTIL_H
#define SANDPIT_SELFTEST_RUN_UTIL_H
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "selftests/build_dir.h"

struct result {
	char *out;
	size_t len;
	int status; /* exit status, or 128+signal */
};

/* Run argv with stdin from `in` (or /dev/null) in `cwd`, collecting stdout
 * (or, with want_stderr, stderr). */
static int want_stderr;

static inline int capture(char *const argv[], const char *in, const char *cwd, const char *env,
		   struct result *r)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t c = fork();
	if (c == 0) {
		int fd = open(in ? in : "/dev/null", O_RDONLY);
		int null = open("/dev/null", O_WRONLY);
		if (fd < 0 || null < 0 || dup2(fd, 0) < 0 || (cwd && chdir(cwd) < 0))
			_exit(99);
		dup2(p[1], want_stderr ? 2 : 1);
		if (want_stderr)
			dup2(null, 1);
		else if (!getenv("RUN_TEST_VERBOSE"))
			dup2(null, 2);
		close(p[0]);
		if (env)
			putenv((char *)env);
		execvp(argv[0], argv);
		_exit(98);
	}
	close(p[1]);
	size_t cap = 1 << 16;
	r->out = malloc(cap);
	r->len = 0;
	for (;;) {
		if (r->len == cap)
			r->out = realloc(r->out, cap *= 2);
		ssize_t n = read(p[0], r->out + r->len, cap - r->len);
		if (n <= 0)
			break;
		r->len += n;
	}
	close(p[0]);
	int st;
	if (waitpid(c, &st, 0) < 0)
		return -1;
	r->status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
	return 0;
}

#define MAX_ARGS 16

/* When not 0: sandboxed() kills `sandpit run` after this many seconds
 * (status 137), so that a program that hangs fails its test instead of
 * the harness's */
static unsigned run_timeout;

/* The command line of `[timeout -s KILL secs] sandpit run --mode=MODE
 * [extra...] -- argv...` in av (2 * MAX_ARGS + 4 entries), for the
 * strings sandpit, modeopt and secs (PATH_MAX + 16, 32 and 16 bytes) */
static inline void sandpit_run_argv(char **av, char *sandpit, char *modeopt, char *secs,
			     const char *mode, unsigned timeout, const char *const extra[],
			     char *const argv[])
{
	int n = 0;
	snprintf(sandpit, PATH_MAX + 16, "%s/sandpit", bindir);
	snprintf(modeopt, 32, "--mode=%s", mode);
	snprintf(secs, 16, "%u", timeout * suite_timeout_scale());
	if (timeout) {
		av[n++] = "timeout";
		av[n++] = "-s";
		av[n++] = "KILL";
		av[n++] = secs;
	}
	av[n++] = sandpit;
	av[n++] = "run";
	av[n++] = modeopt;
	for (int i = 0; extra && extra[i]; i++)
		av[n++] = (char *)extra[i];
	av[n++] = "--";
	for (int i = 0; argv[i] && n < 2 * MAX_ARGS - 1; i++)
		av[n++] = argv[i];
	av[n] = NULL;
}

/* sandpit run --mode=MODE [extra...] -- argv... */
static inline int sandboxed(const char *mode, const char *const extra[], char *const argv[], const char *in,
		     const char *cwd, const char *env, struct result *r)
{
	char sandpit[PATH_MAX + 16], modeopt[32], secs[16];
	char *av[2 * MAX_ARGS + 4];
	sandpit_run_argv(av, sandpit, modeopt, secs, mode, run_timeout, extra, argv);
	return capture(av, in, cwd, env, r);
}

/* r->out as a C string */
static inline char *result_text(struct result *r)
{
	r->out = realloc(r->out, r->len + 1);
	r->out[r->len] = 0;
	return r->out;
}

/* a file at path holding text, with mode */
static inline void write_file(struct __test_metadata *_metadata, const char *path, const char *text,
			      int mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)strlen(text), write(fd, text, strlen(text)));
	close(fd);
}

/* how many times needle occurs in hay */
static inline int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}
#endif
