/* `sandpit bench`: --quick must run every group, in seconds, and
 * its JSON must parse and hold every row with sane statistics and every
 * DESIGN §10 target with a verdict; --markdown and --plot write what
 * `make bench-docs` turns into docs/BENCHMARKS.md; bad options are usage
 * errors.  This proves the benchmark works, not what it measures. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "selftests/build_dir.h"


/* argv[0] is the sandpit command; stdout to out, stderr to err; the status */
static int run(const char *const *argv, const char *out, const char *err)
{
	int st;
	pid_t p = fork();
	if (p == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(99);
		unsetenv("SANDPIT_MODE");
		execv(argv[0], (char *const *)argv);
		_exit(98);
	}
	if (p < 0 || waitpid(p, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *slurp(const char *file)
{
	static char buf[1 << 20];
	int fd = open(file, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

/* The rows `sandpit bench` must give, checked in Python (json is its own
 * parser, not ours): every (name, mode), n > 0, p10 <= median <= p90, a
 * time above zero, a ratio for every sandboxed per-call row, and a held
 * true or false for every target. */
static const char checker[] =
	"import json, os, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"rows = {(r['name'], r['mode']): r for r in d['rows']}\n"
	"calls = ['getppid', 'socket(AF_INET) denied', 'fcntl(F_GETFL)', 'mmap+munmap 4 KiB',\n"
	"         'open+close', 'stat', 'statx', 'newfstatat(dirfd, name)', 'access', 'readlink',\n"
	"         'fstat', 'clock_gettime',\n"
	"         'rdtsc, left in the code', 'arch_prctl(ARCH_SET_FS)']\n"
	"want = [(c, m) for c in calls for m in ('native', 'strict', 'filter')]\n"
	"want += [('getppid', 'strict-1cpu')] + [(c, 'strict-2cpu') for c in calls]\n"
	"want += [('getppid', m) for m in ('libseccomp allow', 'seccomp TRAP + SIGSYS',\n"
	"         'USER_NOTIF, CONTINUE', 'USER_NOTIF, emulated', 'Syscall User Dispatch')]\n"
	"want += [('gettid, unpatched site', m) for m in ('native', 'filter')]\n"
	"want += [('arch_prctl(ARCH_SET_FS)', 'strict-no-fsgsbase')]\n"
	"want += [('sandpit_start', 'strict'), ('sandpit_start', 'filter')]\n"
	"three = ['/bin/true, fork+exec+wait', 'RSS per thread', 'kernel stack per thread',\n"
	"         'tasks per thread'] + ['stat, %d thread%s' % (n, '' if n == 1 else 's at once')\n"
	"         for n in (1, 2, 4, 8)]\n"
	"want += [(n, m) for n in three for m in ('native', 'strict', 'filter')]\n"
	"want += [('reserved per slot at start', 'layout')]\n"
	"# the floor needs a second CPU (bench/floor.c)\n"
	"two = len(os.sched_getaffinity(0)) > 1\n"
	"if two:\n"
	"    want += [(n, 'floor') for n in ('word round trip, two CPUs', 'round trip via a 2nd process')]\n"
	"for prog in ('sha256sum', 'xz -T2', \"python3 -c 'import json'\", 'tar cf', 'sqlite3',\n"
	"             'ls -l /usr/bin', \"python3 -c 'import json, email, http.client'\"):\n"
	"    for m in ('native', 'strict', 'filter'):\n"
	"        hit = [k for k in rows if k[1] == m and\n"
	"               (k[0] == prog or k[0].startswith(prog + ' ')) and\n"
	"               not k[0].endswith(', busy CPUs')]\n"
	"        assert len(hit) == 1, ('program row', prog, m, hit)\n"
	"        want.append(hit[0])\n"
	"busy = ['getppid', 'stat', 'open+close', \"python3 -c 'import json, email, http.client'\",\n"
	"        'tar cf - /usr/include/linux']\n"
	"want += [(b + ', busy CPUs', m) for b in busy for m in ('native', 'strict', 'filter')]\n"
	"for k in want:\n"
	"    assert k in rows, ('missing row', k)\n"
	"    r = rows[k]\n"
	"    assert r['n'] > 0 and r['median'] is not None, ('no samples', k)\n"
	"    assert r['p10'] <= r['median'] <= r['p90'], ('quantiles out of order', k, r)\n"
	"    if r['unit'] == 'ns':\n"
	"        assert r['median'] > 0, ('no time', k)\n"
	"    if r['group'] == 'per-call' and r['mode'] != 'native':\n"
	"        assert r['ratio'] and r['ratio'] > 0, ('no ratio', k)\n"
	"assert d['quick'] is True and d['seconds'] > 0 and 0 <= d['cpu_busy'] <= 1\n"
	"assert len(d['targets']) == 15, d['targets']\n"
	"for t in d['targets']:\n"
	"    assert t['held'] in (True, False), ('target not judged', t)\n"
	"    assert t['measured'], t\n"
	"    if t['path'].startswith('memory-argument call via B'):\n"
	"        assert ('the hand-off alone' in t['measured']) == two, t\n"
	"print('%d rows, %d targets' % (len(d['rows']), len(d['targets'])))\n";

FIXTURE(bench)
{
	char dir[64], out[128], err[128], sandpit[PATH_MAX + 16];
};

FIXTURE_SETUP(bench)
{
	snprintf(self->dir, sizeof(self->dir), "/tmp/bench_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->out, sizeof(self->out), "%s/out", self->dir);
	snprintf(self->err, sizeof(self->err), "%s/err", self->dir);
	snprintf(self->sandpit, sizeof(self->sandpit), "%s/sandpit", bindir);
}

FIXTURE_TEARDOWN(bench)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	if (system(cmd))
		TH_LOG("cannot remove %s", self->dir);
}

TEST_F_TIMEOUT(bench, quick_json_has_every_row_and_target, 120)
{
	const char *argv[] = { self->sandpit, "bench", "--quick", "--json", NULL };
	char check[128], result[128];
	snprintf(check, sizeof(check), "%s/check.py", self->dir);
	snprintf(result, sizeof(result), "%s/check.out", self->dir);
	FILE *f = fopen(check, "w");
	ASSERT_NE(NULL, f);
	fputs(checker, f);
	fclose(f);

	ASSERT_EQ(0, run(argv, self->out, self->err)) TH_LOG("stderr: %s", slurp(self->err));
	const char *py[] = { "/usr/bin/python3", check, self->out, NULL };
	int rc = run(py, result, self->err);
	EXPECT_EQ(0, rc) TH_LOG("%s", slurp(self->err));
	if (!rc)
		TH_LOG("%s", slurp(result));
}

TEST_F_TIMEOUT(bench, markdown_and_plot_data, 60)
{
	char plot[128], opt[160];
	snprintf(plot, sizeof(plot), "%s/per-call.dat", self->dir);
	snprintf(opt, sizeof(opt), "--plot=%s", plot);
	const char *argv[] = { self->sandpit, "bench", "--quick", "--markdown", "--only=calls", opt, NULL };

	ASSERT_EQ(0, run(argv, self->out, self->err)) TH_LOG("stderr: %s", slurp(self->err));
	const char *md = slurp(self->out);
	EXPECT_NE(NULL, strstr(md, "# sandpit benchmarks"));
	EXPECT_NE(NULL, strstr(md, "## DESIGN §10 targets"));
	EXPECT_NE(NULL, strstr(md, "![per-call cost by path and mode"));
	EXPECT_NE(NULL, strstr(md, "| getppid | filter |"));

	/* a quoted call name, then median p10 p90 for native, strict, filter */
	FILE *f = fopen(plot, "r");
	ASSERT_NE(NULL, f);
	char line[512];
	int rows = 0;
	while (fgets(line, sizeof(line), f)) {
		double v[9];
		char *q;
		if (line[0] == '#')
			continue;
		ASSERT_EQ('"', line[0]);
		ASSERT_NE(NULL, (q = strchr(line + 1, '"')));
		ASSERT_EQ(9, sscanf(q + 1, "%lf %lf %lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2],
				    &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]))
			TH_LOG("%s", line);
		/* strict mode has no net, so no figure for an unpatched site */
		int no_strict = !strncmp(line, "\"gettid, unpatched site\"", 24);
		for (int i = 0; i < 9; i += 3) {
			if (i == 3 && no_strict) {
				EXPECT_TRUE(v[3] == 0 && v[4] == 0 && v[5] == 0) TH_LOG("%s", line);
			} else {
				EXPECT_TRUE(v[i] > 0 && v[i + 1] <= v[i] && v[i] <= v[i + 2])
					TH_LOG("%s", line);
			}
		}
		rows++;
	}
	fclose(f);
	EXPECT_EQ(15, rows); /* the per-call rows: one a call (access, readlink and statx
			      * among them) */
}

TEST_F(bench, bad_options_are_usage_errors)
{
	const char *a1[] = { self->sandpit, "bench", "--frobnicate", NULL };
	const char *a2[] = { self->sandpit, "bench", "--only=nosuchgroup", NULL };
	const char *a3[] = { self->sandpit, "bench", "--json", "--markdown", NULL };
	EXPECT_EQ(2, run(a1, self->out, self->err));
	EXPECT_NE(NULL, strstr(slurp(self->err), "unknown option '--frobnicate'"));
	EXPECT_EQ(2, run(a2, self->out, self->err));
	EXPECT_NE(NULL, strstr(slurp(self->err), "no group 'nosuchgroup'"));
	EXPECT_EQ(2, run(a3, self->out, self->err));
	EXPECT_EQ(0, slurp(self->out)[0]);
}

TEST_HARNESS_MAIN
