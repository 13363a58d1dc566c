/* The sandboxes a user would run instead of sandpit, run as a user runs
 * them, beside native and sandpit's two modes on the same three workloads:
 * start-up (/bin/true), a stat-heavy program (tar into /dev/null: GNU tar
 * then stats every file and reads none) and an open-heavy one (python3
 * importing modules).  Every run is timed from outside, fork to wait
 * (bench_program); in each round every workload runs under every mode, the
 * order rotating.  A peer is probed once on /bin/true first: one that is not
 * installed or that this machine refuses (a kernel without unprivileged user
 * namespaces, firejail's list of allowed users) gives skipped rows with its
 * own reason, the first line of what it said. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/groups.h"

enum peer { P_NATIVE, P_BWRAP, P_FIREJAIL, P_FILTER, P_STRICT, NPEERS };

#define PREFIX_MAX 12

static const struct {
	const char *mode;
	const char *prefix[PREFIX_MAX]; /* argv before the program's; "sandpit": this executable */
	const char *note;
} peers[NPEERS] = {
	[P_NATIVE] = { "native", { NULL }, NULL },
	[P_BWRAP] = { "bwrap",
		      { "/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
			"--unshare-all", "--die-with-parent", "--", NULL },
		      "every workload as `bwrap --ro-bind / / --dev /dev --proc /proc "
		      "--unshare-all --die-with-parent -- PROGRAM` (Debian's bubblewrap): new "
		      "user, mount, pid, network, ipc, uts and cgroup namespaces, / read-only, "
		      "a fresh /dev and /proc" },
	[P_FIREJAIL] = { "firejail",
			 { "/usr/bin/firejail", "--noprofile", "--seccomp", "--quiet", "--", NULL },
			 "every workload as `firejail --noprofile --seccomp --quiet -- PROGRAM` "
			 "(Debian's firejail, setuid root): no profile, its default seccomp "
			 "filter, new mount, pid, uts and ipc namespaces" },
	[P_FILTER] = { "filter",
		       { "sandpit", "run", "--mode=filter", "--", NULL },
		       "every workload as `sandpit run --mode=filter -- PROGRAM`, "
		       "the default policy" },
	[P_STRICT] = { "strict",
		       { "sandpit", "run", "--mode=strict", "--", NULL },
		       "every workload as `sandpit run --mode=strict -- PROGRAM`, "
		       "the default policy" },
};

#define NWORK 3
#define PROG_MAX 8

/* The workloads.  The row names are the commands as run, so that none is
 * the name of another group's row (rows are found by name and mode). */
struct work {
	const char *name;
	const char *argv[PROG_MAX];
	int out_null;
	const char *note;
};

/* the peer's prefix, then the program: into av (PREFIX_MAX + PROG_MAX) */
static void peer_argv(const struct bench_cfg *c, int p, const char *const *prog, const char **av)
{
	int n = 0;
	for (int i = 0; peers[p].prefix[i]; i++)
		av[n++] = strcmp(peers[p].prefix[i], "sandpit") ? peers[p].prefix[i] : c->self;
	for (int i = 0; prog[i]; i++)
		av[n++] = prog[i];
	av[n] = NULL;
}

/* Whether peer p runs /bin/true here; if not, why, in why */
static int probe(const struct bench_cfg *c, int p, char *why, size_t len)
{
	static const char *const prog[] = { "/bin/true", NULL };
	const char *av[PREFIX_MAX + PROG_MAX];
	char err[512];

	if (p == P_NATIVE || p == P_FILTER || p == P_STRICT)
		return 1;
	if (access(peers[p].prefix[0], X_OK) < 0) {
		snprintf(why, len, "%s is not installed (make deps installs it)",
			 peers[p].prefix[0]);
		return 0;
	}
	peer_argv(c, p, prog, av);
	if (bench_program(c, peers[p].mode, av,
			  &(struct bench_io){ .err = err, .errlen = sizeof(err) }, NULL) >= 0)
		return 1;
	err[strcspn(err, "\n")] = 0; /* bench_program's "exit status N" if it said nothing */
	snprintf(why, len, "%.150s", err);
	return 0;
}

int bench_peers(const struct bench_cfg *c)
{
	static char tar_name[96];
	static struct work w[NWORK] = {
		{ .name = "/bin/true",
		  .argv = { "/bin/true", NULL },
		  .note = "start-up alone: fork, exec, the sandbox's set-up, ld.so, libc, wait" },
		{ .name = tar_name,
		  .argv = { "/usr/bin/tar", "-Pcf", "-", NULL, NULL },
		  .out_null = 1,
		  .note = "stdout /dev/null, which GNU tar notices: it stats every file of the "
			  "tree and opens none (the programs group's `tar cf -` row reads them "
			  "into a pipe); -P keeps the leading /" },
		{ .name = "/usr/bin/python3 -c 'import json, email, http.client'",
		  .argv = { "/usr/bin/python3", "-c", "import json, email, http.client", NULL },
		  .note = "the programs group's row again, here beside the peers: hundreds of "
			  "stats, opens and fstats of modules" },
	};
	struct bench_row *row[NWORK][NPEERS];
	int ok[NPEERS], rounds = c->quick ? 3 : 10, rc = 0;
	char why[NPEERS][sizeof(row[0][0]->skipped)];

	/* the tree of the programs group's tar row */
	w[1].argv[3] = c->quick ? "/usr/include/linux" : "/usr/include";
	snprintf(tar_name, sizeof(tar_name), "/usr/bin/tar -Pcf - %s >/dev/null", w[1].argv[3]);
	for (int p = 0; p < NPEERS; p++) {
		ok[p] = probe(c, p, why[p], sizeof(why[p]));
		if (!ok[p])
			bench_progress(c, "peers: skipping %s: %s", peers[p].mode, why[p]);
	}
	/* notes: the workload on its native row, the command on the first workload's rows */
	for (int k = 0; k < NWORK; k++)
		for (int p = 0; p < NPEERS; p++) {
			const char *note = p == P_NATIVE ? w[k].note : k ? NULL : peers[p].note;
			row[k][p] = bench_row("peers", w[k].name, peers[p].mode, BENCH_NS, note);
			if (!ok[p])
				memcpy(row[k][p]->skipped, why[p], sizeof(why[p]));
		}
	for (int k = 0; k < NWORK; k++) /* the page cache */
		if (bench_program(c, w[k].argv[0], w[k].argv,
				  &(struct bench_io){ .out_null = w[k].out_null }, NULL) < 0)
			return -1;
	for (int r = 0; r < rounds; r++) {
		bench_progress(c, "peers round %d/%d", r + 1, rounds);
		for (int k = 0; k < NWORK; k++)
			for (int i = 0; i < NPEERS; i++) {
				int p = (r + i) % NPEERS;
				const char *av[PREFIX_MAX + PROG_MAX];
				char what[160];
				if (!ok[p])
					continue;
				peer_argv(c, p, w[k].argv, av);
				snprintf(what, sizeof(what), "%s (%s)", w[k].name, peers[p].mode);
				double t = bench_program(
					c, what, av,
					&(struct bench_io){ .out_null = w[k].out_null }, NULL);
				if (t < 0)
					rc = -1;
				else
					bench_add(row[k][p], t);
			}
	}
	return rc;
}
