/* Whole programs, timed from outside (fork to wait, bench_program):
 * natively, and under `sandpit run` (this very executable) in strict and in
 * filter mode.  A program's output goes into a pipe the bench drains, so
 * nothing can take a short cut for /dev/null (GNU tar does); its exit
 * status must be 0. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/groups.h"
#include "bench/syscount.h"
#include "sandpit.h"

#define MAX_ARGS 16

static const char *const modes[3] = { "native", "strict", "filter" };
static pid_t run_pid; /* the last run's process */

/* One run of argv (with stdin from `in`, or /dev/null) by bench_program;
 * its wall time in ns, or -1 with a message.  Under a sandbox mode, argv
 * runs as `sandpit run --mode=M --allow-read=TMPDIR -- argv...`. */
static double run_once(const struct bench_cfg *c, int mode, const char *const *argv, const char *in)
{
	const char *av[MAX_ARGS + 8];
	char modeopt[32], readopt[4200], what[160];
	int n = 0;

	if (mode) {
		snprintf(modeopt, sizeof(modeopt), "--mode=%s", modes[mode]);
		snprintf(readopt, sizeof(readopt), "--allow-read=%s", c->tmpdir);
		av[n++] = c->self;
		av[n++] = "run";
		av[n++] = modeopt;
		av[n++] = readopt;
		av[n++] = "--";
	}
	for (int i = 0; i < MAX_ARGS && argv[i]; i++)
		av[n++] = argv[i];
	av[n] = NULL;
	snprintf(what, sizeof(what), "%s (%s)", argv[0], modes[mode]);
	return bench_program(c, what, av, &(struct bench_io){ .in = in }, &run_pid);
}

/* ---- start-up with a cold and a warm plan cache ---- */

/* The plan cache the start-up rows use: a directory of the bench's own,
 * emptied before each cold run. */
static char plan_dir[4200];

static void plans_clear(void)
{
	DIR *d = opendir(plan_dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

enum plans { PLANS_AS_THEY_ARE, PLANS_WARM, PLANS_COLD };

/* rounds x {native, strict, filter}, the order rotating each round; with
 * PLANS_COLD the plan cache is emptied before each sandboxed run, with
 * PLANS_WARM it is filled first */
static int measure_runs(const struct bench_cfg *c, const char *group, const char *name,
			const char *note, int rounds, const char *const *argv, const char *in,
			enum plans plans)
{
	struct bench_row *r[3];
	int rc = 0;
	for (int m = 0; m < 3; m++)
		r[m] = bench_row(group, name, modes[m], BENCH_NS, m ? note : NULL);
	if (run_once(c, 0, argv, in) < 0) /* warm the page cache */
		return -1;
	if (plans != PLANS_AS_THEY_ARE && run_once(c, 1, argv, in) < 0)
		return -1; /* and the plan cache */
	for (int k = 0; k < rounds; k++)
		for (int i = 0; i < 3; i++) {
			int m = (k + i) % 3;
			if (plans == PLANS_COLD && m)
				plans_clear();
			double t = run_once(c, m, argv, in);
			if (t < 0)
				rc = -1;
			else
				bench_add(r[m], t);
		}
	return rc;
}

static int measure(const struct bench_cfg *c, const char *group, const char *name, const char *note,
		   int rounds, const char *const *argv, const char *in)
{
	return measure_runs(c, group, name, note, rounds, argv, in, PLANS_AS_THEY_ARE);
}

/* argv's start-up under `sandpit run` with a cold or a warm plan cache */
static int measure_cached(const struct bench_cfg *c, const char *name, const char *note,
			  int rounds, const char *const *argv, int cold)
{
	return measure_runs(c, "start-up", name, note, rounds, argv, NULL,
			    cold ? PLANS_COLD : PLANS_WARM);
}

/* sandpit_start in a fresh child, timed there: its ns, or -1 */
static double start_once(int mode)
{
	int p[2], st;
	double ns = -1;
	if (pipe(p) < 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		struct sandpit_options o = { .mode = mode == 1 ? SANDPIT_MODE_STRICT : SANDPIT_MODE_FILTER };
		unsetenv("SANDPIT_MODE");
		double t0 = bench_now_ns();
		double t = sandpit_start(&o) < 0 ? -1 : bench_now_ns() - t0;
		_exit(write(p[1], &t, sizeof t) == sizeof t ? 0 : 1);
	}
	close(p[1]);
	if (pid > 0 && read(p[0], &ns, sizeof ns) != sizeof ns)
		ns = -1;
	close(p[0]);
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return ns;
}

static int measure_start(const struct bench_cfg *c, int rounds, int cold)
{
	const char *name = cold ? "sandpit_start, cold plan cache" : "sandpit_start, warm plan cache";
	struct bench_row *r[3];
	int rc = 0;
	(void)c;
	for (int m = 1; m < 3; m++)
		r[m] = bench_row("start-up", name, modes[m], BENCH_NS,
				 cold ? "in a fresh child of the command, the plan cache emptied before: "
					"every object planned, and its plan written" :
					"in a fresh child of the command: every plan from the cache, "
					"verified against the mapped code");
	start_once(1);
	for (int k = 0; k < rounds; k++)
		for (int m = 1; m < 3; m++) {
			if (cold)
				plans_clear();
			double t = start_once(m);
			if (t < 0)
				rc = -1;
			else
				bench_add(r[m], t);
		}
	return rc;
}

/* One more run of argv in each mode, its system calls counted (after the
 * timed runs: the counter slows every call down while it is attached).
 * Everything from the bench's fork to the last task's end counts: the
 * child's redirections and exec, then natively the program; under
 * `sandpit run`, the command, P (its start-up, then U), T and B. */
static int count_runs(const struct bench_cfg *c, const char *name, const char *const *argv)
{
	int rc = 0, counting = syscount_begin() == 0;
	bench_progress(c, "start-up: counting the system calls of %s%s%s", argv[0],
		       counting ? "" : ": not counted, ", counting ? "" : syscount_why());
	for (int m = 0; m < 3; m++) {
		struct bench_row *r = bench_find(name, modes[m]);
		if (!r)
			continue;
		if (!counting) {
			syscount_not_counted(&r->calls, syscount_why());
			continue;
		}
		unsigned w = syscount_new_window();
		syscount_window(w);
		double t = run_once(c, m, argv, NULL);
		syscount_settle();
		syscount_window(0);
		if (t < 0) {
			syscount_not_counted(&r->calls, "the counted run failed");
			rc = -1;
		} else {
			syscount_take(w, run_pid, m ? SYSCOUNT_P_CHILD : SYSCOUNT_P_ROOT, 1, &r->calls);
		}
	}
	syscount_end();
	return rc;
}

int bench_startup(const struct bench_cfg *c)
{
	static const char *const argv[] = { "/bin/true", NULL };
	const char *old = getenv("SANDPIT_PLAN_CACHE");
	char *saved = old ? strdup(old) : NULL, stat_prog[4200];
	int rounds = c->quick ? 5 : 20, rc;

	bench_progress(c, "start-up: /bin/true");
	rc = measure(c, "start-up", BENCH_TRUE_ROW,
		     "`sandpit run -- /bin/true`: sandpit's own start, its fork, loading the "
		     "program, sandpit_start, the program's ld.so and libc inside the sandbox "
		     "(the user's plan cache, warm)",
		     rounds, argv, NULL);
	rc |= count_runs(c, BENCH_TRUE_ROW, argv);
	snprintf(plan_dir, sizeof plan_dir, "%s/plans", c->tmpdir);
	mkdir(plan_dir, 0700);
	setenv("SANDPIT_PLAN_CACHE", plan_dir, 1);
	bench_progress(c, "start-up: plan cache cold and warm");
	rc |= measure_cached(c, "/bin/true, cold plan cache",
			     "`sandpit run -- /bin/true`, the plan cache emptied before: the "
			     "program, ld.so and libc planned, and libc planned again by the parent "
			     "for the cache", rounds, argv, 1);
	rc |= measure_cached(c, "/bin/true, warm plan cache",
			     "`sandpit run -- /bin/true`: every plan from the cache, verified", rounds,
			     argv, 0);
	rc |= measure_start(c, rounds, 1);
	rc |= measure_start(c, rounds, 0);
	/* a stripped static binary (selftests/programs/static_true.c), decoded linearly when cold */
	snprintf(stat_prog, sizeof stat_prog, "%s", c->self);
	char *slash = strrchr(stat_prog, '/');
	if (slash && (size_t)(slash - stat_prog) + 40 < sizeof stat_prog) {
		strcpy(slash, "/bench_static_true");
		const char *sargv[] = { stat_prog, NULL };
		if (!access(stat_prog, X_OK)) {
			rc |= measure_cached(c, "stripped static binary, cold plan cache",
					     "selftests/programs/static_true.c, static glibc, stripped: its code decoded "
					     "linearly from the start", rounds, sargv, 1);
			rc |= measure_cached(c, "stripped static binary, warm plan cache",
					     "the same, its plan from the cache", rounds, sargv, 0);
		}
	}
	if (saved)
		setenv("SANDPIT_PLAN_CACHE", saved, 1);
	else
		unsetenv("SANDPIT_PLAN_CACHE");
	free(saved);
	return rc;
}

/* ---- data files ---- */

static int write_text(const char *file, size_t size)
{
	static const char *words[] = { "sandbox", "seccomp", "trusted", "thread", "process",
				       "filter", "strict", "policy", "kernel", "syscall",
				       "memory", "page", "the", "a", "of", "and" };
	char buf[1 << 16];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	for (size_t done = 0; done < size;) {
		size_t n = 0;
		while (n < sizeof(buf) - 32) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			const char *w = words[x % 16];
			size_t l = strlen(w);
			memcpy(buf + n, w, l);
			n += l;
			/* a number now and then, so that it is not all dictionary */
			n += (x >> 8) % 4 ? 0 : (size_t)snprintf(buf + n, 24, "%u", (unsigned)(x >> 40));
			buf[n++] = (x >> 20) % 12 ? ' ' : '\n';
		}
		if (n > size - done)
			n = size - done;
		if (write(fd, buf, n) != (ssize_t)n) {
			close(fd);
			return -1;
		}
		done += n;
	}
	return close(fd);
}

static int write_inserts(const char *file, int rows)
{
	FILE *f = fopen(file, "w");
	if (!f)
		return -1;
	fputs("BEGIN;\nCREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v REAL);\n", f);
	for (int i = 0; i < rows; i++)
		fprintf(f, "INSERT INTO t(name, v) VALUES('row %d', %d.5);\n", i, i * 7);
	fputs("COMMIT;\nSELECT count(*), sum(v) FROM t;\n", f);
	return fclose(f);
}

int bench_programs(const struct bench_cfg *c)
{
	size_t big = c->quick ? 8 << 20 : 200 << 20, small = c->quick ? 1 << 20 : 20 << 20;
	int inserts = c->quick ? 1000 : 10000, rounds = c->quick ? 2 : 5, rc = 0;
	char bigf[4096], smallf[4096], sql[4096];
	static char name[7][64];

	snprintf(bigf, sizeof(bigf), "%s/data-big.txt", c->tmpdir);
	snprintf(smallf, sizeof(smallf), "%s/data-small.txt", c->tmpdir);
	snprintf(sql, sizeof(sql), "%s/inserts.sql", c->tmpdir);
	bench_progress(c, "programs: writing %zu MB and %zu MB of text to %s", big >> 20, small >> 20,
		       c->tmpdir);
	if (write_text(bigf, big) < 0 || write_text(smallf, small) < 0 || write_inserts(sql, inserts) < 0) {
		fprintf(stderr, "sandpit bench: cannot write the data files in %s: %s\n", c->tmpdir,
			strerror(errno));
		return -1;
	}

	const char *const sha[] = { "/usr/bin/sha256sum", bigf, NULL };
	const char *const xz[] = { "/usr/bin/xz", "-T2", "-3", "-c", smallf, NULL };
	const char *const py[] = { "/usr/bin/python3", "-c", "import json", NULL };
	const char *tree = c->quick ? "/usr/include/linux" : "/usr/include";
	/* -P: keep the leading '/' rather than remark on it for every round */
	const char *const tar[] = { "/usr/bin/tar", "-Pcf", "-", tree, NULL };
	const char *const sq[] = { "/usr/bin/sqlite3", ":memory:", NULL };
	const char *const ls[] = { "/bin/ls", "-l", "/usr/bin", NULL };
	const char *const py3[] = { "/usr/bin/python3", "-c", "import json, email, http.client", NULL };

	snprintf(name[0], sizeof(name[0]), "sha256sum %zu MB", big >> 20);
	snprintf(name[1], sizeof(name[1]), "xz -T2 -3 of %zu MB", small >> 20);
	snprintf(name[2], sizeof(name[2]), "python3 -c 'import json'");
	snprintf(name[3], sizeof(name[3]), BENCH_TAR_PREFIX "%s", tree);
	snprintf(name[4], sizeof(name[4]), "sqlite3 :memory:, %d inserts", inserts);
	snprintf(name[5], sizeof(name[5]), "ls -l /usr/bin");
	snprintf(name[6], sizeof(name[6]), "%s", BENCH_PYTHON_IMPORTS);

	bench_progress(c, "programs: %s", name[0]);
	rc |= measure(c, "programs", name[0], "reads the file in 32 KiB blocks (read is native in both modes)",
		      rounds, sha, NULL);
	bench_progress(c, "programs: %s", name[1]);
	rc |= measure(c, "programs", name[1], "two compressing threads (-3: 12 MB blocks), output into a pipe",
		      rounds, xz, NULL);
	bench_progress(c, "programs: %s", name[2]);
	rc |= measure(c, "programs", name[2], "/usr/bin/python3; dozens of opens and stats through B",
		      rounds, py, NULL);
	bench_progress(c, "programs: %s", name[3]);
	rc |= measure(c, "programs", name[3], "an open, fstat and reads per file, into a pipe",
		      rounds, tar, NULL);
	bench_progress(c, "programs: %s", name[4]);
	rc |= measure(c, "programs", name[4], "one transaction, statements on stdin", rounds, sq, sql);
	bench_progress(c, "programs: %s", name[5]);
	rc |= measure(c, "programs", name[5],
		      "an lstat, a readlink for links, user and group names per entry, into a pipe",
		      rounds, ls, NULL);
	bench_progress(c, "programs: %s", name[6]);
	rc |= measure(c, "programs", name[6],
		      "/usr/bin/python3; hundreds of stats, opens and fstats of modules", rounds, py3,
		      NULL);

	unlink(bigf);
	unlink(smallf);
	unlink(sql);
	return rc;
}

/* The busy group's programs (bench/busy.c): one that makes hundreds of
 * calls through B and one that makes an open, fstat and reads per file,
 * while every CPU has a busy loop */
int bench_programs_busy(const struct bench_cfg *c)
{
	int rounds = c->quick ? 2 : 5, rc = 0;
	static char name[2][80];
	const char *tree = c->quick ? "/usr/include/linux" : "/usr/include";
	const char *const py3[] = { "/usr/bin/python3", "-c", "import json, email, http.client", NULL };
	const char *const tar[] = { "/usr/bin/tar", "-Pcf", "-", tree, NULL };
	snprintf(name[0], sizeof(name[0]), "%s, busy CPUs", BENCH_PYTHON_IMPORTS);
	snprintf(name[1], sizeof(name[1]), BENCH_TAR_PREFIX "%s, busy CPUs", tree);
	bench_progress(c, "busy: %s", name[0]);
	rc |= measure(c, "busy", name[0], "as in programs, with a busy loop per CPU", rounds, py3, NULL);
	bench_progress(c, "busy: %s", name[1]);
	rc |= measure(c, "busy", name[1], "as in programs, with a busy loop per CPU", rounds, tar, NULL);
	return rc;
}
