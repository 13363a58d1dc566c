/* `sandpit bench`: the options, parsed; the run is bench/suite.c's. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/suite.h"
#include "loader/bench.h"

#define EXIT_USAGE 2

const char bench_usage[] =
	"usage: sandpit bench [--quick] [--json | --markdown] [--plot=FILE] [--only=GROUP,...]\n"
	"                     [--verbose]\n"
	"Measures, in one run, what the sandbox costs against native and against the\n"
	"alternatives (seccomp-bpf alone, SECCOMP_RET_TRAP, USER_NOTIF, Syscall User Dispatch)\n"
	"and the peers (bubblewrap, firejail; skipped, with the reason, where they cannot run):\n"
	"medians, p10, p90 and the ratio to native, and DESIGN section 10's targets;\n"
	"beside them, the system calls of each call and of start-up by side (the program,\n"
	"T, B, the command), counted with BPF (as root; otherwise 'not counted' and why).\n"
	"  --quick        few rounds, small files: seconds, not minutes (a smoke test)\n"
	"  --json         the rows and targets as JSON instead of the table\n"
	"  --markdown     docs/BENCHMARKS.md's text instead of the table\n"
	"  --plot=FILE    also write the per-call rows for gnuplot to FILE\n"
	"  --only=GROUPS  some of: calls (per-call and sandpit_start), alternatives, startup,\n"
	"                 memory, programs, peers (bubblewrap and firejail beside sandpit on\n"
	"                 three programs), scaling, busy (calls and programs with a busy\n"
	"                 loop per CPU)\n"
	"  --verbose      progress, and the programs' stderr, on stderr\n"
	"Exit status: 0, 1 if a measurement failed (the rest is still printed), 2 bad usage.\n";

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
		while (bench_group_name(i) && strcmp(bench_group_name(i), g))
			i++;
		if (!bench_group_name(i))
			return bad("--only: no group '%s'", g);
		*mask |= 1u << i;
	}
	return *mask ? 0 : bad("--only=%s: no group named", list);
}

int bench_main(int argc, char **argv)
{
	struct bench_options o = { .only = ~0u };
	int rc;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(bench_usage, stdout);
			return 0;
		} else if (!strcmp(a, "--quick")) {
			o.quick = 1;
		} else if (!strcmp(a, "--json")) {
			o.json = 1;
		} else if (!strcmp(a, "--markdown")) {
			o.markdown = 1;
		} else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
			o.verbose = 1;
		} else if (!strncmp(a, "--plot=", 7)) {
			if (!*(o.plot = a + 7))
				return bad("%s needs a file", a);
		} else if (!strncmp(a, "--only=", 7)) {
			if ((rc = parse_only(a + 7, &o.only)))
				return rc;
		} else {
			return bad("unknown option '%s'", a);
		}
	}
	if (o.json && o.markdown)
		return bad("%s: --json and --markdown exclude each other", "options");
	return bench_run(&o);
}
