/* `sandpit bench` as a whole (see suite.h): the groups by name, and one
 * run of those asked for: the configuration, the groups in order, the CPU
 * time the machine was busy and stolen meanwhile, and the report. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/groups.h"
#include "bench/report.h"
#include "bench/suite.h"

static const struct {
	const char *name;
	int (*fn)(const struct bench_cfg *);
} groups[] = {
	{ "calls", bench_calls },	    { "alternatives", bench_alternatives },
	{ "startup", bench_startup },   { "memory", bench_memory },
	{ "programs", bench_programs }, { "peers", bench_peers },
	{ "scaling", bench_scaling },	{ "busy", bench_busy },
};
#define NGROUPS (int)(sizeof(groups) / sizeof(groups[0]))

const char *bench_group_name(int i)
{
	return i >= 0 && i < NGROUPS ? groups[i].name : NULL;
}

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

int bench_run(const struct bench_options *o)
{
	struct bench_cfg c = { .quick = o->quick, .verbose = o->verbose };
	int rc = 0;
	const char *v;
	char self[PATH_MAX], tmpl[PATH_MAX];

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
		if (o->only & (1u << i) && groups[i].fn(&c) < 0)
			rc = 1;
	cpu_times(j1);
	c.seconds = (bench_now_ns() - t0) / 1e9;
	if (j1[2] > j0[2]) {
		c.busy = (j1[0] - j0[0]) / (j1[2] - j0[2]);
		c.steal = (j1[1] - j0[1]) / (j1[2] - j0[2]);
	}
	rmdir(c.tmpdir);
	bench_finish();
	if (o->json)
		bench_print_json(stdout, &c);
	else if (o->markdown)
		bench_print_markdown(stdout, &c, o->plot ? "bench-per-call.svg" : NULL);
	else
		bench_print_table(stdout, &c);
	if (o->plot && bench_write_plot(o->plot) < 0)
		rc = 1;
	bench_progress(&c, "done in %.0f s", c.seconds);
	return rc;
}
