/* The sandpit command: a thin layer over libsandpit (DESIGN §7). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sandpit.h"
#include "compat/compat.h"
#include "policy/policy.h"
#include "loader/bench.h"
#include "loader/profile.h"
#include "loader/run.h"

#define EXIT_USAGE 2

static int usage(FILE *f)
{
	fputs("usage: sandpit probe\n"
	      "       sandpit policy [--policy-format=minijail|sandpit] SUBCOMMAND ...\n"
	      "       sandpit policy check FILE       check a policy file (sandpit.policy(5)),\n"
	      "                                       and say how a minijail file was translated\n"
	      "       sandpit policy show [FILE]      each call's action, rules and path per mode\n"
	      "                                       (the built-in default without FILE)\n"
	      "       sandpit policy export-bpf FILE  the filter-mode BPF program, raw, to stdout\n"
	      "       sandpit policy export-pfc FILE  the same as libseccomp's pseudo code\n"
	      "       sandpit policy export-minijail [FILE]\n"
	      "                                       the policy in minijail's format (the default\n"
	      "                                       without FILE)\n"
	      "       sandpit run [--mode=strict|filter|auto] [--policy=FILE]\n"
	      "                   [--policy-format=minijail|sandpit] [--allow-read=PATH]...\n"
	      "                   [--allow-write=PATH]... [--allow-connect=ADDR:PORT]...\n"
	      "                   [--log=denials] [--log-format=text|json]\n"
	      "                   -- PROGRAM [ARGS]\n"
	      "       sandpit profile [--output=FILE] -- PROGRAM [ARGS]\n"
	      "                                       run PROGRAM natively and write the policy it needs\n"
	      "       sandpit bench [--quick] [--json | --markdown] [--plot=FILE] [--only=GROUP,...]\n",
	      f);
	return f == stdout ? 0 : EXIT_USAGE;
}

static void print_error(void *ctx, const char *msg)
{
	(*(int *)ctx)++;
	fprintf(stderr, "%s\n", msg);
}

static void print_note(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "%s\n", msg);
}

/* The file's policy (or the default's); errors on stderr, then NULL.  A
 * minijail file's translations are noted on stderr when `notes` is set. */
static struct policy *load(const char *file, int notes)
{
	struct policy *p = NULL;
	char err[512];
	int n = 0;

	if (!file) {
		if (policy_new_default(&p, NULL, NULL, err, sizeof(err)) < 0)
			fprintf(stderr, "sandpit: %s\n", err);
		return p;
	}
	char *text = NULL;
	size_t len;
	int mj = policy_read_file(file, &text, &len) == 0 && policy_text_is_minijail(text, len);

	free(text);
	if ((mj ? policy_parse_minijail_file(file, &p, print_error, notes ? print_note : NULL, &n,
					     err, sizeof(err))
		: policy_parse_file(file, &p, print_error, &n, err, sizeof(err))) < 0)
		fprintf(stderr, "%s: %d error%s\n", file, n, n == 1 ? "" : "s");
	return p;
}

/* sandpit policy [--policy-format=F] check|show|export-bpf|export-pfc|export-minijail [FILE] */
static int policy_cmd(int argc, char **argv)
{
	int bad;

	if (argc >= 4 && policy_format_option(argv[2], &bad)) {
		if (bad) {
			fprintf(stderr, "sandpit: %s: expected minijail or sandpit\n", argv[2]);
			return EXIT_USAGE;
		}
		argv++;
		argc--;
	}
	const char *sub = argv[2], *file = argc > 3 ? argv[3] : NULL;
	int show = !strcmp(sub, "show"), mj = !strcmp(sub, "export-minijail"), rc = 0;
	struct policy *p;

	if (argc > 4 || (!show && !mj && !file) ||
	    (!show && !mj && strcmp(sub, "check") && strcmp(sub, "export-bpf") &&
	     strcmp(sub, "export-pfc")))
		return usage(stderr);
	p = load(file, !strcmp(sub, "check"));
	if (!p)
		return 1;
	if (!strcmp(sub, "check"))
		/* run accepts it in filter mode only: said, not an error */
		policy_strict_check(p, file, print_note, NULL, NULL, 0);
	if (show) {
		policy_dump(p, stdout);
	} else if (mj) {
		rc = policy_export_minijail(p, stdout);
	} else if (strcmp(sub, "check")) {
		/* SELF_PID compares with this process's pid, and there are no
		 * sandpit descriptors to keep free: a program to read or to load
		 * on its own, not the one sandpit_start builds */
		struct policy_runtime rt = { .pid = getpid(), .fd_lo = 1, .fd_hi = 0 };
		char err[512] = "";

		fflush(stdout);
		rc = (sub[7] == 'b' ? policy_export_bpf : policy_export_pfc)(p, &rt, 1, err,
									   sizeof(err));
		if (rc < 0)
			fprintf(stderr, "sandpit: %s\n", err);
	}
	policy_free(p);
	return rc < 0;
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
	if (!strcmp(cmd, "policy"))
		return argc >= 3 ? policy_cmd(argc, argv) : usage(stderr);
	if (!strcmp(cmd, "run"))
		return run_main(argc - 2, argv + 2);
	if (!strcmp(cmd, "profile"))
		return profile_main(argc - 2, argv + 2);
	if (!strcmp(cmd, "bench"))
		return bench_main(argc - 2, argv + 2);
	fprintf(stderr, "sandpit: unknown command '%s'\n", cmd);
	return usage(stderr);
}
