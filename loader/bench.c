/* `sandpit bench`: the options; the measuring is in bench/. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "loader/bench.h"

#define EXIT_USAGE 2

const char bench_usage[] =
	"usage: sandpit bench [--quick] [--json | --markdown] [--plot=FILE] [--only=GROUP,...]\n"
	"                     [--verbose]\n"
	"Measures, in one run, what the sandbox costs against native and against the\n"
	"alternatives (seccomp-bpf alone, SECCOMP_RET_TRAP, USER_NOTIF, Syscall User Dispatch):\n"
	"medians, p10, p90 and the ratio to native, and DESIGN section 10's targets.\n"
	"  --quick        few rounds, small files: seconds, not minutes (a smoke test)\n"
	"  --json         the rows and targets as JSON instead of the table\n"
	"  --markdown     docs/BENCHMARKS.md's text instead of the table\n"
	"  --plot=FILE    also write the per-call rows for gnuplot to FILE\n"
	"  --only=GROUPS  some of: calls (per-call and sandpit_start), alternatives, startup,\n"
	"                 memory, programs, scaling, busy (calls and programs with a busy\n"
	"                 loop per CPU)\n"
	"  --verbose      progress, and the programs' stderr, on stderr\n"
	"Exit status: 0, 1 if a measurement failed (the rest is still printed), 2 bad usage.\n";

static const struct {
	const char *name;
	int (*fn)(const struct bench_cfg *);
} groups[] = {
	{ "calls", bench_calls },	    { "alternatives", bench_alternatives },
	{ "startup", bench_startup },   { "memory", bench_memory },
	{ "programs", bench_programs }, { "scaling", bench_scaling },
	{ "busy", bench_busy },
};
#define NGROUPS (int)(sizeof(groups) / sizeof(groups[0]))

/* the "cpu" line of /proc/stat: busy, stolen and all jiffies */
static void cpu_times(double t[3])
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	if (!f || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
			 &v[4], &v[5], &v[6], &v[7]) != 8)
		memset(v, 0, sizeof(v));
	if (f)
		fclose(f);
	t[0] = v[0] + v[1] + v[2] + v[5] + v[6];
	t[1] = v[7];
	t[2] = t[0] + t[1] + v[3] + v[4];
}

static int bad(const char *fmt, const char *arg)
{
	fputs("sandpit bench: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (see sandpit bench --help)\n", stderr);
	return EXIT_USAGE;
}

/* --only=a,b: a bit per group */
static int parse_only(const char *list, unsigned *mask)
{
	char buf[256];
	*mask = 0;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *save, *g = strtok_r(buf, ",", &save); g; g = strtok_r(NULL, ",", &save)) {
		int i = 0;
		while (i < NGROUPS && strcmp(groups[i].name, g))
			i++;
		if (i == NGROUPS)
			return bad("--only: no group '%s'", g);
		*mask |= 1u << i;
	}
	return *mask ? 0 : bad("--only=%s: no group named", list);
}

int bench_main(int argc, char **argv)
{
	struct bench_cfg c = { 0 };
	unsigned only = ~0u;
	int json = 0, md = 0, rc = 0;
	const char *plot = NULL, *v;
	char self[PATH_MAX], tmpl[PATH_MAX];

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(bench_usage, stdout);
			return 0;
		} else if (!strcmp(a, "--quick")) {
			c.quick = 1;
		} else if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--markdown")) {
			md = 1;
		} else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
			c.verbose = 1;
		} else if (!strncmp(a, "--plot=", 7)) {
			if (!*(plot = a + 7))
				return bad("%s needs a file", a);
		} else if (!strncmp(a, "--only=", 7)) {
			if ((rc = parse_only(a + 7, &only)))
				return rc;
		} else {
			return bad("unknown option '%s'", a);
		}
	}
	if (json && md)
		return bad("%s: --json and --markdown exclude each other", "options");

	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0) {
		fprintf(stderr, "sandpit bench: /proc/self/exe: %s\n", strerror(errno));
		return 1;
	}
	self[n] = 0;
	c.self = self;
	c.rounds = c.quick ? 2 : 5;
	c.batches = c.quick ? 3 : 10;
	c.batch_ns = c.quick ? 1e6 : 5e6;
	v = getenv("TMPDIR");
	snprintf(tmpl, sizeof(tmpl), "%s/sandpit-bench.XXXXXX", v && *v ? v : "/tmp");
	if (!(c.tmpdir = mkdtemp(tmpl))) {
		fprintf(stderr, "sandpit bench: %s: %s\n", tmpl, strerror(errno));
		return 1;
	}

	double t0 = bench_now_ns(), j0[3], j1[3];
	cpu_times(j0);
	for (int i = 0; i < NGROUPS; i++)
		if (only & (1u << i) && groups[i].fn(&c) < 0)
			rc = 1;
	cpu_times(j1);
	c.seconds = (bench_now_ns() - t0) / 1e9;
	if (j1[2] > j0[2]) {
		c.busy = (j1[0] - j0[0]) / (j1[2] - j0[2]);
		c.steal = (j1[1] - j0[1]) / (j1[2] - j0[2]);
	}
	rmdir(c.tmpdir);
	bench_finish();
	if (json)
		bench_print_json(stdout, &c);
	else if (md)
		bench_print_markdown(stdout, &c, plot ? "bench-per-call.svg" : NULL);
	else
		bench_print_table(stdout, &c);
	if (plot && bench_write_plot(plot) < 0)
		rc = 1;
	bench_progress(&c, "done in %.0f s", c.seconds);
	return rc;
}
