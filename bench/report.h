/* A run's rows printed (bench/report.c), and DESIGN section 10's targets
 * checked against them. */
#ifndef SANDPIT_BENCH_REPORT_H
#define SANDPIT_BENCH_REPORT_H

#include <stdio.h>

#include "bench/bench.h"

struct bench_target {
	const char *path, *target;
	char measured[400];
	int held; /* 1 held, 0 missed, -1 not measured */
};
int bench_targets(struct bench_target *out, int max);

void bench_print_table(FILE *f, const struct bench_cfg *c);
void bench_print_json(FILE *f, const struct bench_cfg *c);
void bench_print_markdown(FILE *f, const struct bench_cfg *c, const char *svg);
int bench_write_plot(const char *file); /* per-call rows for gnuplot */
#endif
