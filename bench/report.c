/* One file over 700 lines: the same rows printed four ways, each beside the
 * others so that a column added to one is added to all.
 *
 * The four ways of printing a run's rows: a table, JSON, the Markdown of
 * docs/BENCHMARKS.md, gnuplot data; and DESIGN section 10's targets checked
 * against them.  The rows themselves are bench/bench.c's. */
#include <errno.h>
#include <math.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/report.h"

static const char *unit_name(enum bench_unit u)
{
	return u == BENCH_NS ? "ns" : u == BENCH_BYTES ? "bytes" : "count";
}

/* v in a unit a reader takes in at a glance */
static const char *human(char *buf, size_t len, double v, enum bench_unit u)
{
	double a = fabs(v);
	if (u == BENCH_COUNT)
		snprintf(buf, len, "%.2f", v);
	else if (u == BENCH_BYTES)
		snprintf(buf, len, a < 1024 ? "%.0f B" : a < 1 << 20 ? "%.1f KiB" : "%.1f MiB",
			 a < 1024 ? v : a < 1 << 20 ? v / 1024 : v / (1 << 20));
	else if (a < 1e3)
		snprintf(buf, len, "%.0f ns", v);
	else if (a < 1e6)
		snprintf(buf, len, "%.*f us", a < 1e4 ? 2 : 1, v / 1e3);
	else if (a < 1e9)
		snprintf(buf, len, "%.*f ms", a < 1e7 ? 2 : 1, v / 1e6);
	else
		snprintf(buf, len, "%.2f s", v / 1e9);
	return buf;
}

static const char *ratio_str(char *buf, size_t len, const struct bench_row *r)
{
	if (r->ratio <= 0 || !strcmp(r->mode, "native"))
		snprintf(buf, len, "%s", strcmp(r->mode, "native") ? "-" : "1");
	else
		snprintf(buf, len, r->ratio < 0.1 ? "%.3fx" : "%.2fx", r->ratio);
	return buf;
}

/* ---- system calls ---- */

static double calls_all(const struct bench_syscalls *c)
{
	double all = 0;
	for (int i = 0; i < BENCH_NSIDES; i++)
		all += c->v[i];
	return all;
}

/* a count: whole, or to two decimals (per call, over a loop) */
static const char *count_str(char *buf, size_t len, double v)
{
	snprintf(buf, len, v == (double)(long)v ? "%.0f" : "%.2f", v);
	return buf;
}

/* "U 1, T 3, B 5, in all 9" (P/U where the row's work includes the start
 * of the sandbox; the command's own where there is one), or "not counted
 * (why)"; "" if the row's calls are not counted at all */
static const char *calls_str(char *buf, size_t len, const struct bench_row *r)
{
	const struct bench_syscalls *c = &r->calls;
	char u[24], t[24], b[24], cmd[24], all[24];
	if (!c->state)
		snprintf(buf, len, "%s", "");
	else if (c->state < 0)
		snprintf(buf, len, "not counted (%s)", c->why);
	else
		snprintf(buf, len, "%s %s, T %s, B %s%s%s, in all %s",
			 strcmp(r->group, "start-up") ? "U" : "P/U", count_str(u, sizeof(u), c->v[SIDE_U]),
			 count_str(t, sizeof(t), c->v[SIDE_T]), count_str(b, sizeof(b), c->v[SIDE_B]),
			 c->v[SIDE_CMD] ? ", sandpit run " : "",
			 c->v[SIDE_CMD] ? count_str(cmd, sizeof(cmd), c->v[SIDE_CMD]) : "",
			 count_str(all, sizeof(all), calls_all(c)));
	return buf;
}

static const char *const side_names[BENCH_NSIDES] = { "U", "T", "B", "sandpit run" };

/* side's most frequent calls, "dup3 2052, eventfd2 2049" (those of at
 * least 0.01 a call); "" if none */
static const char *top_str(char *buf, size_t len, const struct bench_syscalls *c, int side)
{
	size_t used = 0;
	char v[24];
	buf[0] = 0;
	for (int j = 0; j < BENCH_TOP_CALLS && used < len; j++) {
		int nr = c->top[side][j].nr;
		if (nr < 0 || c->top[side][j].v < 0.01)
			break;
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr), num[16];
		snprintf(num, sizeof(num), "#%d", nr);
		used += snprintf(buf + used, len - used, "%s%s %s", j ? ", " : "", name ? name : num,
				 count_str(v, sizeof(v), c->top[side][j].v));
		free(name);
	}
	return buf;
}

/* the rows whose calls are worth breaking down: a call through B, the
 * sandbox's start, `sandpit run -- /bin/true`, counted, not native */
static int broken_down(const struct bench_row *r)
{
	return r->calls.state > 0 && strcmp(r->mode, "native") &&
	       (r->via_b || !strcmp(r->name, "sandpit_start") || !strcmp(r->name, BENCH_TRUE_ROW));
}

static int group_counted(const char *group)
{
	for (int i = 0; i < bench_nrows(); i++)
		if (!strcmp(bench_row_at(i)->group, group) && bench_row_at(i)->calls.state)
			return 1;
	return 0;
}

/* ---- DESIGN §10 ---- */

static const struct bench_row *got(const char *name, const char *mode)
{
	const struct bench_row *r = bench_find(name, mode);
	return r && r->n ? r : NULL;
}

static int target_ratio(struct bench_target *t, const char *path, const char *target,
			const char *name, double limit)
{
	const struct bench_row *s = got(name, "strict"), *f = got(name, "filter");
	char a[32], b[32];
	*t = (struct bench_target){ .path = path, .target = target, .held = -1 };
	if (!s || !f || s->ratio <= 0 || f->ratio <= 0)
		return 1;
	snprintf(t->measured, sizeof(t->measured), "strict %s (%.2fx), filter %s (%.2fx)",
		 human(a, sizeof(a), s->median, s->unit), s->ratio, human(b, sizeof(b), f->median, f->unit),
		 f->ratio);
	t->held = s->ratio <= limit && f->ratio <= limit;
	return 1;
}

/* What this run's floor rows (bench/floor.c) say under a target: the
 * least any implementation of the path can cost on this machine. */
static void with_floor(struct bench_target *t, const char *floor_row, const char *native_row)
{
	const struct bench_row *f = got(floor_row, "floor"), *n = got(native_row, "native");
	size_t used = strlen(t->measured);
	char a[32];
	if (!f || !n || n->median <= 0 || !used)
		return;
	snprintf(t->measured + used, sizeof(t->measured) - used, "; the hand-off alone: %s (%.2fx)",
		 human(a, sizeof(a), f->median, f->unit), f->median / n->median);
}

int bench_targets(struct bench_target *out, int max)
{
	struct bench_target t[24];
	const struct bench_row *r, *r2, *n, *n2;
	char a[32], b[32], c1[32];
	int k = 0;

	/* filter mode, allow, patched libc wrapper */
	t[k] = (struct bench_target){ "filter mode, `allow` syscall through a patched libc wrapper (getppid)",
				      "<= 1.3x native", "", -1 };
	if ((r = got("getppid", "filter")) && r->ratio > 0) {
		snprintf(t[k].measured, sizeof(t[k].measured), "%s (%.2fx)",
			 human(a, sizeof(a), r->median, r->unit), r->ratio);
		t[k].held = r->ratio <= 1.3;
	}
	k++;
	/* strict, register-only via T, U and T on two CPUs: the bench pins
	 * them there; unpinned is the scheduler's choice, shown beside it */
	t[k] = (struct bench_target){ "strict mode, register-only call via T (getppid), U and T on two CPUs (pinned by the bench)",
				      "<= 1 us", "", -1 };
	if ((r = got("getppid", "strict-2cpu"))) {
		r2 = got("getppid", "strict");
		snprintf(t[k].measured, sizeof(t[k].measured), "%s (p10 %s; unpinned: %s)",
			 human(a, sizeof(a), r->median, r->unit), human(b, sizeof(b), r->p10, r->unit),
			 r2 ? human(c1, sizeof(c1), r2->median, r2->unit) : "not measured");
		t[k].held = r->median <= 1000;
	}
	k++;
	t[k] = (struct bench_target){ "strict mode, the same, U and T pinned to one CPU",
				      "<= 35 us (the blocking floor), never the 8 ms tick", "", -1 };
	if ((r = got("getppid", "strict-1cpu"))) {
		snprintf(t[k].measured, sizeof(t[k].measured), "%s (p90 %s)",
			 human(a, sizeof(a), r->median, r->unit), human(b, sizeof(b), r->p90, r->unit));
		t[k].held = r->median <= 35000 && r->p90 < 8e6;
	}
	k++;
	k += target_ratio(&t[k], "memory-argument call via B: `open`+`close`", "<= 4x native in either mode",
			  "open+close", 4);
	with_floor(&t[k - 1], BENCH_FLOOR_ROW, "open+close");
	k += target_ratio(&t[k], "memory-argument call via B: `stat`", "<= 4x native in either mode", "stat",
			  4);
	with_floor(&t[k - 1], BENCH_FLOOR_ROW, "stat");
	k += target_ratio(&t[k], "the same, `stat` from 8 threads at once", "<= 8x native",
			  "stat, 8 threads at once", 8);
	/* fstat: a T round trip in strict mode is what getppid costs over native */
	t[k] = (struct bench_target){ "`fstat` through glibc (`newfstatat` with an empty path)",
				      "<= 1.5x native in filter mode; in strict mode (two CPUs) the T-path "
				      "cost: getppid's round trip + native fstat, +25%", "", -1 };
	if ((r = got("fstat", "filter")) && (r2 = got("fstat", "strict-2cpu")) &&
	    (n = got("fstat", "native")) && (n2 = got("getppid", "strict-2cpu")) &&
	    got("getppid", "native") && r->ratio > 0) {
		double tpath = n2->median - got("getppid", "native")->median + n->median;
		snprintf(t[k].measured, sizeof(t[k].measured), "filter %s (%.2fx), strict %s (T path %s)",
			 human(a, sizeof(a), r->median, r->unit), r->ratio,
			 human(b, sizeof(b), r2->median, r2->unit), human(c1, sizeof(c1), tpath, r->unit));
		t[k].held = r->ratio <= 1.5 && r2->median <= 1.25 * tpath;
	}
	k++;
	t[k] = (struct bench_target){ "`clock_gettime` in strict mode (U and T on two CPUs, pinned)",
				      "<= 0.5 us", "", -1 };
	if ((r = got("clock_gettime", "strict-2cpu"))) {
		r2 = got("clock_gettime", "strict");
		snprintf(t[k].measured, sizeof(t[k].measured), "%s (p10 %s; unpinned: %s)",
			 human(a, sizeof(a), r->median, r->unit), human(b, sizeof(b), r->p10, r->unit),
			 r2 ? human(c1, sizeof(c1), r2->median, r2->unit) : "not measured");
		t[k].held = r->median <= 500;
		with_floor(&t[k], BENCH_FLOOR_CPUS_ROW, "clock_gettime");
	}
	k++;
	/* the data-heavy program: whichever size this run used */
	t[k] = (struct bench_target){ "data-heavy program (sha256sum of a large file)", "<= 1.05x native",
				      "", -1 };
	for (int i = 0; i < bench_nrows(); i++)
		if (!strncmp(bench_row_at(i)->name, "sha256sum", 9) &&
		    !strcmp(bench_row_at(i)->mode, "native"))
			k += target_ratio(&t[k], t[k].path, t[k].target, bench_row_at(i)->name, 1.05) - 1;
	k++;
	/* file-heavy programs: the tar row of whichever tree this run used */
	t[k] = (struct bench_target){ "file-heavy program: `tar cf -` of a tree", "<= 2.5x native",
				      "", -1 };
	for (int i = 0; i < bench_nrows(); i++)
		if (!strncmp(bench_row_at(i)->name, BENCH_TAR_PREFIX, strlen(BENCH_TAR_PREFIX)) &&
		    !strstr(bench_row_at(i)->name, BENCH_BUSY_SUFFIX) &&
		    !strcmp(bench_row_at(i)->mode, "native"))
			k += target_ratio(&t[k], t[k].path, t[k].target, bench_row_at(i)->name, 2.5) - 1;
	k++;
	k += target_ratio(&t[k], "file-heavy program: `" BENCH_PYTHON_IMPORTS "`", "<= 2x native",
			  BENCH_PYTHON_IMPORTS, 2);
	/* a busy machine: the same program's ratio to native, busy against
	 * quiet (both ratios from this run) */
	t[k] = (struct bench_target){ "busy machine (a busy loop per CPU): `" BENCH_PYTHON_IMPORTS
				      "` slows down about as much as natively",
				      "ratio to native (busy) <= 1.5x the quiet ratio, either mode", "", -1 };
	{
		static char busy[96];
		snprintf(busy, sizeof(busy), "%s" BENCH_BUSY_SUFFIX, BENCH_PYTHON_IMPORTS);
		const struct bench_row *qs = got(BENCH_PYTHON_IMPORTS, "strict"),
				       *qf = got(BENCH_PYTHON_IMPORTS, "filter"), *bs = got(busy, "strict"),
				       *bf = got(busy, "filter");
		if (qs && qf && bs && bf && qs->ratio > 0 && qf->ratio > 0 && bs->ratio > 0 &&
		    bf->ratio > 0) {
			snprintf(t[k].measured, sizeof(t[k].measured),
				 "strict %.2fx busy, %.2fx quiet; filter %.2fx busy, %.2fx quiet", bs->ratio,
				 qs->ratio, bf->ratio, qf->ratio);
			t[k].held = bs->ratio <= 1.5 * qs->ratio && bf->ratio <= 1.5 * qf->ratio;
		}
	}
	k++;
	t[k] = (struct bench_target){ "sandbox start-up (sandpit_start: policy, B, T, patching)", "<= 5 ms",
				      "", -1 };
	if ((r = got("sandpit_start", "strict")) && (r2 = got("sandpit_start", "filter"))) {
		snprintf(t[k].measured, sizeof(t[k].measured), "strict %s, filter %s",
			 human(a, sizeof(a), r->median, r->unit), human(b, sizeof(b), r2->median, r2->unit));
		t[k].held = r->median <= 5e6 && r2->median <= 5e6;
	}
	k++;
	t[k] = (struct bench_target){ "`sandpit run -- /bin/true`", "<= native + 5 ms", "", -1 };
	if ((n = got(BENCH_TRUE_ROW, "native")) && (r = got(BENCH_TRUE_ROW, "strict")) &&
	    (r2 = got(BENCH_TRUE_ROW, "filter"))) {
		snprintf(t[k].measured, sizeof(t[k].measured), "strict native + %s, filter native + %s",
			 human(a, sizeof(a), r->median - n->median, r->unit),
			 human(b, sizeof(b), r2->median - n->median, r2->unit));
		t[k].held = r->median - n->median <= 5e6 && r2->median - n->median <= 5e6;
	}
	k++;
	/* system calls: `sandpit run -- /bin/true` in all, and what a call
	 * through B makes beyond the program's own call */
	t[k] = (struct bench_target){ "`sandpit run -- /bin/true`: system calls, every side (the "
				      "command, P/U, T, B), counted",
				      "<= 300 in either mode", "", -1 };
	{
		const struct bench_row *tn = bench_find(BENCH_TRUE_ROW, "native"),
				       *ts = bench_find(BENCH_TRUE_ROW, "strict"),
				       *tf = bench_find(BENCH_TRUE_ROW, "filter");
		char sa[160], fa[160];
		if (ts && tf && tn && ts->calls.state > 0 && tf->calls.state > 0 && tn->calls.state > 0) {
			snprintf(t[k].measured, sizeof(t[k].measured), "strict %s (%s), filter %s (%s); natively %s",
				 count_str(a, sizeof(a), calls_all(&ts->calls)), calls_str(sa, sizeof(sa), ts),
				 count_str(b, sizeof(b), calls_all(&tf->calls)), calls_str(fa, sizeof(fa), tf),
				 count_str(c1, sizeof(c1), calls_all(&tn->calls)));
			t[k].held = calls_all(&ts->calls) <= 300 && calls_all(&tf->calls) <= 300;
		} else if (ts && ts->calls.state < 0) {
			snprintf(t[k].measured, sizeof(t[k].measured), "not counted (%s)", ts->calls.why);
		}
	}
	k++;
	t[k] = (struct bench_target){ "a call through B: system calls per call beyond the "
				      "program's own (U, T and B against the native row's; every B row)",
				      "<= 4 in either mode", "", -1 };
	{
		static const char *const sm[2] = { "strict", "filter" };
		const struct bench_row *worst[2] = { NULL, NULL };
		double extra[2] = { 0, 0 }, nat[2] = { 0, 0 };
		const char *why = NULL;
		int rows = 0;
		for (int i = 0; i < bench_nrows(); i++) {
			r = bench_row_at(i);
			for (int m = 0; m < 2; m++) {
				if (!r->via_b || strcmp(r->mode, sm[m]) || !r->calls.state)
					continue;
				n = bench_find(r->name, "native");
				if (r->calls.state < 0 || !n || n->calls.state <= 0) {
					why = r->calls.state < 0 ? r->calls.why : "no native count";
					continue;
				}
				double d = calls_all(&r->calls) - calls_all(&n->calls);
				rows++;
				if (!worst[m] || d > extra[m]) {
					worst[m] = r;
					extra[m] = d;
					nat[m] = calls_all(&n->calls);
				}
			}
		}
		if (worst[0] && worst[1] && !why) {
			char sa[160], fa[160];
			snprintf(t[k].measured, sizeof(t[k].measured),
				 "worst of %d rows: strict `%s` +%.2f (%s; native %s), filter `%s` +%.2f (%s; "
				 "native %s)",
				 rows, worst[0]->name, extra[0], calls_str(sa, sizeof(sa), worst[0]),
				 count_str(a, sizeof(a), nat[0]), worst[1]->name, extra[1],
				 calls_str(fa, sizeof(fa), worst[1]), count_str(b, sizeof(b), nat[1]));
			t[k].held = extra[0] <= 4 && extra[1] <= 4;
		} else if (why) {
			snprintf(t[k].measured, sizeof(t[k].measured), "not counted (%s)", why);
		}
	}
	k++;
	/* memory: what a sandboxed thread costs more than a native one, counted
	 * high: the kernel stack of T, any RSS a sandboxed thread has over a
	 * native one, and the slot's reserved pages as if all were resident */
	t[k] = (struct bench_target){ "memory per sandboxed thread (T stack + S): T's kernel stack + "
				      "extra RSS (measured) + the slot's reserved pages (layout)",
				      "<= 64 KiB", "", -1 };
	n = got("RSS per thread", "native");
	n2 = got("kernel stack per thread", "native");
	const struct bench_row *lay = got("reserved per slot at start", "layout");
	if (n && n2 && lay) {
		double worst = 0;
		int ok = 1;
		char *m = t[k].measured;
		size_t len = sizeof(t[k].measured), used = 0;
		for (int i = 0; i < 2 && ok; i++) {
			const char *mode = i ? "filter" : "strict";
			r = got("RSS per thread", mode);
			r2 = got("kernel stack per thread", mode);
			if (!r || !r2) {
				ok = 0;
				break;
			}
			double ks = r2->median - n2->median, rss = r->median - n->median;
			double d = ks + (rss > 0 ? rss : 0) + lay->median;
			worst = d > worst ? d : worst;
			used += snprintf(m + used, len - used, "%s%s %s (kernel stack %s)", i ? ", " : "",
					 mode, human(a, sizeof(a), d, BENCH_BYTES),
					 human(c1, sizeof(c1), ks, BENCH_BYTES));
		}
		if (ok)
			t[k].held = worst <= 64 * 1024;
	}
	k++;
	for (int i = 0; i < k && i < max; i++)
		out[i] = t[i];
	return k < max ? k : max;
}

static const char *group_titles[][2] = {
	{ "per-call", "Per-call cost by path" },
	{ "alternatives", "The alternatives a user would consider (getppid, same harness)" },
	{ "start-up", "Start-up" },
	{ "memory", "Memory per sandboxed thread" },
	{ "programs", "Real programs under `sandpit run` (wall clock, whole run)" },
	{ "peers", "The peers: bubblewrap and firejail beside sandpit, as a user runs them (wall clock, whole run)" },
	{ "scaling", "Scaling: `stat` through B from several threads at once" },
	{ "floor", "The hand-off floor: a call through a second process, nothing checked (bench/floor.c)" },
	{ "busy", "A busy machine: calls and programs with a busy loop per CPU (bench/busy.c)" },
};

#define NGROUPS (sizeof(group_titles) / sizeof(group_titles[0]))

/* ---- the table ---- */

void bench_print_table(FILE *f, const struct bench_cfg *c)
{
	const char *group = "";
	char m[32], lo[32], hi[32], ra[32], cs[192];
	struct bench_target t[24];
	int nt = bench_targets(t, 24);

	fprintf(f, "sandpit bench%s: medians, p10 and p90 over %d rounds; modes interleaved;\n"
		   "ratio = median / the native median of the same row, measured in the same run\n",
		c->quick ? " --quick (few samples, small files: a smoke test, not a measurement)" : "",
		c->rounds);
	for (size_t g = 0; g < NGROUPS; g++)
		for (int i = 0; i < bench_nrows(); i++) {
			const struct bench_row *r = bench_row_at(i);
			if (strcmp(r->group, group_titles[g][0]))
				continue;
			if (strcmp(group, r->group)) {
				group = r->group;
				fprintf(f, "\n%-34s %-36s %11s %11s %11s %8s %5s%s\n", group, "mode",
					"median", "p10", "p90", "ratio", "n",
					group_counted(group) ? "  system calls (counted)" : "");
			}
			if (!r->n) {
				fprintf(f, "%-34s %-36s %11s%s%s\n", r->name, r->mode,
					r->skipped[0] ? "skipped" : "failed", r->skipped[0] ? ": " : "",
					r->skipped);
				continue;
			}
			fprintf(f, "%-34s %-36s %11s %11s %11s %8s %5d%s%s\n", r->name, r->mode,
				human(m, sizeof(m), r->median, r->unit),
				human(lo, sizeof(lo), r->p10, r->unit),
				human(hi, sizeof(hi), r->p90, r->unit), ratio_str(ra, sizeof(ra), r), r->n,
				r->calls.state ? "  " : "", calls_str(cs, sizeof(cs), r));
		}
	int heading = 0;
	for (int i = 0; i < bench_nrows(); i++) {
		const struct bench_row *r = bench_row_at(i);
		char top[256];
		if (!broken_down(r))
			continue;
		if (!heading++)
			fprintf(f, "\nwhere the system calls go: each side's most frequent calls (per call, "
				   "or per run)\n");
		fprintf(f, "  %s (%s):", r->name, r->mode);
		for (int sd = 0, first = 1; sd < BENCH_NSIDES; sd++)
			if (top_str(top, sizeof(top), &r->calls, sd)[0]) {
				fprintf(f, "%s %s %s", first ? "" : ";",
					sd == SIDE_U && !strcmp(r->group, "start-up") ? "P/U" : side_names[sd],
					top);
				first = 0;
			}
		fputc('\n', f);
	}
	fprintf(f, "\n%.0f s; CPUs busy %.0f%% meanwhile (the bench included), stolen %.1f%%\n",
		c->seconds, 100 * c->busy, 100 * c->steal);
	fprintf(f, "\nDESIGN section 10 targets\n");
	for (int i = 0; i < nt; i++)
		fprintf(f, "  %-7s %s: %s; measured %s\n",
			t[i].held < 0 ? "n/a" : t[i].held ? "held" : "MISSED", t[i].path, t[i].target,
			t[i].held < 0 ? "(not measured)" : t[i].measured);
}

/* ---- JSON ---- */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

void bench_print_json(FILE *f, const struct bench_cfg *c)
{
	struct bench_target t[24];
	int nt = bench_targets(t, 24);
	struct utsname u;
	uname(&u);

	fprintf(f, "{\n  \"quick\": %s,\n  \"rounds\": %d,\n  \"seconds\": %.1f,\n  \"cpu_busy\": %.3f,\n"
		   "  \"cpu_steal\": %.3f,\n  \"kernel\": ",
		c->quick ? "true" : "false", c->rounds, c->seconds, c->busy, c->steal);
	json_str(f, u.release);
	fprintf(f, ",\n  \"cpus\": %ld,\n  \"rows\": [\n", sysconf(_SC_NPROCESSORS_ONLN));
	for (int i = 0; i < bench_nrows(); i++) {
		const struct bench_row *r = bench_row_at(i);
		fputs("    {\"group\": ", f);
		json_str(f, r->group);
		fputs(", \"name\": ", f);
		json_str(f, r->name);
		fputs(", \"mode\": ", f);
		json_str(f, r->mode);
		fprintf(f, ", \"unit\": \"%s\", \"n\": %d", unit_name(r->unit), r->n);
		if (r->n)
			fprintf(f, ", \"median\": %.6g, \"p10\": %.6g, \"p90\": %.6g", r->median, r->p10,
				r->p90);
		else
			fputs(", \"median\": null, \"p10\": null, \"p90\": null", f);
		if (r->ratio > 0)
			fprintf(f, ", \"ratio\": %.4g", r->ratio);
		else
			fputs(", \"ratio\": null", f);
		if (r->calls.state > 0)
			fprintf(f, ", \"syscalls\": {\"U\": %.6g, \"T\": %.6g, \"B\": %.6g, "
				   "\"command\": %.6g, \"all\": %.6g}",
				r->calls.v[SIDE_U], r->calls.v[SIDE_T], r->calls.v[SIDE_B],
				r->calls.v[SIDE_CMD], calls_all(&r->calls));
		if (r->calls.state > 0) {
			fputs(", \"syscalls_top\": {", f);
			for (int sd = 0; sd < BENCH_NSIDES; sd++) {
				fprintf(f, "%s\"%s\": {", sd ? ", " : "", sd == SIDE_CMD ? "command" : side_names[sd]);
				for (int j = 0; j < BENCH_TOP_CALLS && r->calls.top[sd][j].nr >= 0; j++) {
					int nr = r->calls.top[sd][j].nr;
					char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr),
					     num[16];
					snprintf(num, sizeof(num), "#%d", nr);
					fprintf(f, "%s\"%s\": %.6g", j ? ", " : "", name ? name : num,
						r->calls.top[sd][j].v);
					free(name);
				}
				fputc('}', f);
			}
			fputc('}', f);
		}
		else if (r->calls.state < 0) {
			fputs(", \"syscalls\": null, \"syscalls_not_counted\": ", f);
			json_str(f, r->calls.why);
		}
		if (r->skipped[0]) {
			fputs(", \"skipped\": ", f);
			json_str(f, r->skipped);
		}
		fputs(", \"note\": ", f);
		if (r->note)
			json_str(f, r->note);
		else
			fputs("null", f);
		fprintf(f, "}%s\n", i + 1 < bench_nrows() ? "," : "");
	}
	fputs("  ],\n  \"targets\": [\n", f);
	for (int i = 0; i < nt; i++) {
		fputs("    {\"path\": ", f);
		json_str(f, t[i].path);
		fputs(", \"target\": ", f);
		json_str(f, t[i].target);
		fputs(", \"measured\": ", f);
		json_str(f, t[i].measured);
		fprintf(f, ", \"held\": %s}%s\n", t[i].held < 0 ? "null" : t[i].held ? "true" : "false",
			i + 1 < nt ? "," : "");
	}
	fputs("  ]\n}\n", f);
}

/* ---- Markdown (docs/BENCHMARKS.md) ---- */

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];
	snprintf(buf, len, "unknown CPU");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			char *s = strchr(line, ':') + 2;
			s[strcspn(s, "\n")] = 0;
			snprintf(buf, len, "%s", s);
			break;
		}
	if (f)
		fclose(f);
}

static void md_group(FILE *f, const char *group)
{
	char m[32], lo[32], hi[32], ra[32], cs[192];
	int counted = group_counted(group);
	fprintf(f, "| what | mode | median | p10 | p90 | ratio to native | samples |%s\n"
		   "|---|---|---:|---:|---:|---:|---:|%s\n",
		counted ? " system calls |" : "", counted ? "---|" : "");
	for (int i = 0; i < bench_nrows(); i++) {
		const struct bench_row *r = bench_row_at(i);
		if (strcmp(r->group, group))
			continue;
		if (!r->n) {
			fprintf(f, "| %s | %s | %s%s | | | | 0 |%s\n", r->name, r->mode,
				r->skipped[0] ? "skipped: " : "failed", r->skipped, counted ? " |" : "");
			continue;
		}
		fprintf(f, "| %s | %s | %s | %s | %s | %s | %d |%s%s%s\n", r->name, r->mode,
			human(m, sizeof(m), r->median, r->unit), human(lo, sizeof(lo), r->p10, r->unit),
			human(hi, sizeof(hi), r->p90, r->unit), ratio_str(ra, sizeof(ra), r), r->n,
			counted ? " " : "", counted ? calls_str(cs, sizeof(cs), r) : "",
			counted ? " |" : "");
	}
	if (counted)
		fputs("\nSystem calls: counted, not estimated, in one more run of the same work after "
		      "the timed ones (a BPF program follows every task the run's child is and creates "
		      "and counts each call at its return, raw_syscalls:sys_exit, so that a call the "
		      "seccomp filter refuses counts too; exit and exit_group at their entry; it slows "
		      "every call while attached, so nothing is timed with it). Per call for the "
		      "per-call rows (a loop of 2,000 calls, its window opened and closed by a store, "
		      "no call), per run for start-up (`sandpit_start`: until 50 ms after it returns, "
		      "while B finishes starting). **U**: the "
		      "program's thread (**P/U**: sandpit's start-up in P, then U); **T**: the trusted "
		      "threads (every other thread of P); **B**: the trusted process (named "
		      "sandpit-B, and the process between P and it); **sandpit run**: the command "
		      "around P.\n",
		      f);
	fputs("\n", f);
	int notes = 0;
	for (int i = 0; i < bench_nrows(); i++) {
		const struct bench_row *r = bench_row_at(i);
		int seen = 0;
		if (strcmp(r->group, group) || !r->note)
			continue;
		for (int j = 0; j < i; j++)
			seen |= !strcmp(bench_row_at(j)->group, group) && bench_row_at(j)->note &&
				!strcmp(bench_row_at(j)->name, r->name) &&
				!strcmp(bench_row_at(j)->note, r->note);
		if (seen)
			continue;
		fprintf(f, "%s* **%s** (%s): %s\n", notes++ ? "" : "", r->name, r->mode, r->note);
	}
	if (notes)
		fputs("\n", f);
}

void bench_print_markdown(FILE *f, const struct bench_cfg *c, const char *svg)
{
	struct bench_target t[24];
	int nt = bench_targets(t, 24);
	struct utsname u;
	char cpu[160], date[64];
	time_t now = time(NULL);

	uname(&u);
	cpu_model(cpu, sizeof(cpu));
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	fprintf(f, "# sandpit benchmarks\n\n"
		   "Generated by `make bench-docs` (`sandpit bench --markdown`) on %s; do not edit by "
		   "hand.\nMachine: %s, %ld vCPUs (shared), kernel %s %s. One run of `sandpit bench%s`, "
		   "%.0f s; meanwhile the CPUs were busy %.0f%% of the time (the bench's own work "
		   "included) and the host stole %.1f%%.\n\n",
		date, cpu, sysconf(_SC_NPROCESSORS_ONLN), u.sysname, u.release,
		c->quick ? " --quick" : "", c->seconds, 100 * c->busy, 100 * c->steal);
	fprintf(f, "How it measures: every figure is a set of samples taken in %d rounds; within a "
		   "round the modes run one after another, so a noisy moment of this shared machine "
		   "falls on all of them; the tables give the median, p10 and p90 of the samples and "
		   "the median's ratio to the native median of the same row. A per-call sample is one "
		   "batch of calls lasting about %.0f ms, timed with one clock read at each end (in "
		   "strict mode a clock read is itself a round trip to T, so it stays out of the "
		   "loop); a sandboxed sample comes from a forked child that called `sandpit_start`, a "
		   "native one from a forked child that did not. Programs, start-up and `sandpit run` "
		   "are timed from outside, fork to wait. Nothing is pinned except the row that says "
		   "so.\n\n",
		c->rounds, c->batch_ns / 1e6);
	fputs("The modes: **native** (no sandbox); **strict** (seccomp strict mode, every call "
	      "but read/write through the trusted thread T, memory arguments through the trusted "
	      "process B; where U and T run is the scheduler's choice); **strict-2cpu** (the same "
	      "with U pinned to CPU 0 and T to CPU 1, the condition of the first strict target); "
	      "**strict-1cpu** (U, T and B all on CPU 0); **filter** (a seccomp-bpf filter lets "
	      "allowed calls run natively, the rest go to T and B as in strict mode). The "
	      "alternatives are what a user might build instead, timed the same way on the same "
	      "call; the peers (**bwrap**, **firejail**) are the sandboxes a user might run "
	      "instead, run as a user runs them, on the same programs in the same rounds.\n\n",
	      f);
	fputs("## DESIGN §10 targets\n\n| path | target | measured | |\n|---|---|---|---|\n", f);
	for (int i = 0; i < nt; i++)
		fprintf(f, "| %s | %s | %s | %s |\n", t[i].path, t[i].target,
			t[i].held < 0 ? "not measured" : t[i].measured,
			t[i].held < 0 ? "n/a" : t[i].held ? "**held**" : "**missed**");
	fputs("\n", f);
	for (size_t g = 0; g < NGROUPS; g++) {
		int any = 0;
		for (int i = 0; i < bench_nrows(); i++)
			any |= !strcmp(bench_row_at(i)->group, group_titles[g][0]);
		if (!any)
			continue;
		fprintf(f, "## %s\n\n", group_titles[g][1]);
		if (!g && svg)
			fprintf(f, "![per-call cost by path and mode, log scale](%s)\n\n", svg);
		md_group(f, group_titles[g][0]);
	}
	int heading = 0;
	for (int i = 0; i < bench_nrows(); i++) {
		const struct bench_row *r = bench_row_at(i);
		char top[256];
		if (!broken_down(r))
			continue;
		if (!heading++)
			fputs("## Where the system calls go\n\nEach side's most frequent calls, counted as "
			      "above: per call for a call through B, per run for start-up.\n\n"
			      "| what | mode | U (P/U) | T | B | sandpit run |\n|---|---|---|---|---|---|\n",
			      f);
		fprintf(f, "| %s | %s |", r->name, r->mode);
		for (int sd = 0; sd < BENCH_NSIDES; sd++)
			fprintf(f, " %s |", top_str(top, sizeof(top), &r->calls, sd));
		fputc('\n', f);
	}
	if (heading)
		fputc('\n', f);
}

/* ---- gnuplot ---- */

/* One line per per-call row name: "name" then median p10 p90 for native,
 * strict and filter (0 where a mode has no figure). */
int bench_write_plot(const char *file)
{
	static const char *modes[] = { "native", "strict", "filter" };
	FILE *f = fopen(file, "w");
	if (!f) {
		fprintf(stderr, "sandpit bench: %s: %s\n", file, strerror(errno));
		return -1;
	}
	fputs("# call native p10 p90 strict p10 p90 filter p10 p90 (ns)\n", f);
	for (int i = 0; i < bench_nrows(); i++) {
		const struct bench_row *r = bench_row_at(i);
		if (strcmp(r->group, "per-call") || strcmp(r->mode, "native"))
			continue;
		fprintf(f, "\"%s\"", r->name);
		for (int m = 0; m < 3; m++) {
			const struct bench_row *x = got(r->name, modes[m]);
			fprintf(f, " %.1f %.1f %.1f", x ? x->median : 0, x ? x->p10 : 0, x ? x->p90 : 0);
		}
		fputs("\n", f);
	}
	return fclose(f) ? -1 : 0;
}
