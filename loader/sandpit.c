/* The sandpit command: a thin layer over libsandpit (DESIGN §7). */
#include <stdio.h>
#include <string.h>
#include "sandpit.h"
#include "compat/compat.h"
#include "policy/policy.h"
#include "loader/run.h"

#define EXIT_USAGE 2

static int usage(FILE *f)
{
	fputs("usage: sandpit probe\n"
	      "       sandpit policy show\n"
	      "       sandpit run [--mode=strict|filter|auto] [--policy=FILE] [--allow-read=PATH]...\n"
	      "                   [--allow-write=PATH]... [--log=denials] -- PROGRAM [ARGS]\n",
	      f);
	return f == stdout ? 0 : EXIT_USAGE;
}

static int policy_show(void)
{
	struct policy *p;
	char err[256];
	if (policy_new_default(&p, NULL, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "sandpit: %s\n", err);
		return 1;
	}
	policy_dump(p, stdout);
	policy_free(p);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr);
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "help"))
		return usage(stdout);
	if (!strcmp(cmd, "probe")) {
		char err[512];
		if (compat_init(err, sizeof(err)) < 0) {
			fprintf(stderr, "sandpit: %s\n", err);
			return EXIT_USAGE;
		}
		compat_print_table(stdout);
		return 0;
	}
	if (!strcmp(cmd, "policy") && argc == 3 && !strcmp(argv[2], "show"))
		return policy_show();
	if (!strcmp(cmd, "run"))
		return run_main(argc - 2, argv + 2);
	if (!strcmp(cmd, "profile") || !strcmp(cmd, "bench") ||
	    !strcmp(cmd, "policy")) {
		fprintf(stderr, "sandpit: '%s' is not implemented yet\n", cmd);
		return EXIT_USAGE;
	}
	fprintf(stderr, "sandpit: unknown command '%s'\n", cmd);
	return usage(stderr);
}
