/* `sandpit bench` as a whole (bench/suite.c): the options the command
 * parses, the groups by name, and one run of those asked for, printed. */
#ifndef SANDPIT_BENCH_SUITE_H
#define SANDPIT_BENCH_SUITE_H

struct bench_options {
	int quick;        /* few rounds, small files: seconds, not minutes */
	int verbose;      /* progress, and the programs' stderr, on stderr */
	int json, markdown; /* the output: a table unless one of them */
	const char *plot; /* also the per-call rows for gnuplot, to this file */
	unsigned only;    /* bit i: run the group named bench_group_name(i) */
};

/* The groups in the order they run: the name of group i, NULL past the last. */
const char *bench_group_name(int i);

/* Runs the groups of o->only and prints what they measured.  The exit
 * status: 0, or 1 if a measurement failed (the rest is still printed). */
int bench_run(const struct bench_options *o);
#endif
