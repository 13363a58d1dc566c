/* What every group of `sandpit bench` shares (see bench.h): the rows of a
 * run and their statistics, progress lines, the clock, memory shared with
 * children, a measurement in a forked child, a whole program timed from
 * outside, and timed batches of calls. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"

#define MAX_ROWS 256 /* every group of a full run is about 170 */

static struct bench_row rows[MAX_ROWS];
static int nrows;

struct bench_row *bench_find(const char *name, const char *mode)
{
	for (int i = 0; i < nrows; i++)
		if (!strcmp(rows[i].name, name) && !strcmp(rows[i].mode, mode))
			return &rows[i];
	return NULL;
}

struct bench_row *bench_row(const char *group, const char *name, const char *mode,
			    enum bench_unit unit, const char *note)
{
	struct bench_row *r = bench_find(name, mode);
	if (r)
		return r;
	if (nrows == MAX_ROWS) {
		fprintf(stderr, "sandpit bench: more than %d rows\n", MAX_ROWS);
		exit(1);
	}
	r = &rows[nrows++];
	*r = (struct bench_row){ .group = group, .name = name, .mode = mode, .unit = unit,
				 .note = note };
	return r;
}

int bench_add(struct bench_row *r, double v)
{
	if (r->n == r->cap) {
		int cap = r->cap ? 2 * r->cap : 64;
		double *nv = realloc(r->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		r->v = nv;
		r->cap = cap;
	}
	r->v[r->n++] = v;
	return 0;
}

int bench_nrows(void)
{
	return nrows;
}

struct bench_row *bench_row_at(int i)
{
	return i >= 0 && i < nrows ? &rows[i] : NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* the q-quantile by linear interpolation between the closest ranks */
static double quantile(const double *sorted, int n, double q)
{
	double pos = q * (n - 1);
	int lo = (int)pos;
	if (lo >= n - 1)
		return sorted[n - 1];
	return sorted[lo] + (pos - lo) * (sorted[lo + 1] - sorted[lo]);
}

void bench_finish(void)
{
	for (int i = 0; i < nrows; i++) {
		struct bench_row *r = &rows[i];
		if (!r->n)
			continue;
		qsort(r->v, r->n, sizeof(r->v[0]), cmp_double);
		r->median = quantile(r->v, r->n, 0.5);
		r->p10 = quantile(r->v, r->n, 0.1);
		r->p90 = quantile(r->v, r->n, 0.9);
	}
	for (int i = 0; i < nrows; i++) {
		struct bench_row *nat = bench_find(rows[i].name, "native");
		rows[i].ratio = nat && nat->n && nat->median > 0 && rows[i].n ?
					rows[i].median / nat->median :
					0;
	}
}

void bench_progress(const struct bench_cfg *c, const char *fmt, ...)
{
	va_list ap;
	if (!c->verbose)
		return;
	fputs("sandpit bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

double bench_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

void *bench_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "sandpit bench: mmap: %s\n", strerror(errno));
		exit(1);
	}
	return p;
}

int bench_child(int (*fn)(void *arg), void *arg, const char *what,
		int (*parent)(pid_t pid, void *arg))
{
	int st, rc = 0;
	fflush(NULL);
	pid_t p = fork();
	if (p < 0) {
		fprintf(stderr, "sandpit bench: fork: %s\n", strerror(errno));
		return -1;
	}
	if (p == 0) {
		alarm(BENCH_CHILD_TIMEOUT);
		_exit(fn(arg));
	}
	if (parent && parent(p, arg) < 0) {
		kill(p, SIGKILL);
		rc = -1;
	}
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == BENCH_UNAVAILABLE)
		return BENCH_UNAVAILABLE;
	if (WIFEXITED(st) && !WEXITSTATUS(st))
		return rc;
	if (WIFSIGNALED(st))
		fprintf(stderr, "sandpit bench: %s: killed by signal %d\n", what, WTERMSIG(st));
	else
		fprintf(stderr, "sandpit bench: %s: exit status %d\n", what, WEXITSTATUS(st));
	return -1;
}

double bench_program(const struct bench_cfg *c, const char *what, const char *const *av,
		     const struct bench_io *io, pid_t *pid_out)
{
	int p[2], st;
	char buf[65536];
	size_t got = 0;

	if (pipe2(p, O_CLOEXEC) < 0) {
		fprintf(stderr, "sandpit bench: pipe: %s\n", strerror(errno));
		return -1;
	}
	fflush(NULL);
	double t0 = bench_now_ns();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "sandpit bench: fork: %s\n", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		int i = open(io->in ? io->in : "/dev/null", O_RDONLY);
		int nul = open("/dev/null", O_WRONLY);
		int out = io->err || io->out_null ? nul : p[1];
		int err = io->err ? p[1] : c->verbose ? 2 : nul;
		if (i < 0 || nul < 0 || dup2(i, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(120);
		unsetenv("SANDPIT_MODE");
		execv(av[0], (char *const *)av);
		_exit(121);
	}
	if (pid_out)
		*pid_out = pid;
	close(p[1]);
	for (;;) {
		ssize_t k = read(p[0], buf, sizeof(buf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		for (ssize_t j = 0; io->err && j < k && got + 1 < io->errlen; j++)
			io->err[got++] = buf[j];
	}
	close(p[0]);
	if (io->err && io->errlen)
		io->err[got] = 0;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	double t = bench_now_ns() - t0;
	if (WIFEXITED(st) && !WEXITSTATUS(st))
		return t;
	char why[64];
	snprintf(why, sizeof(why), "%s %d", WIFEXITED(st) ? "exit status" : "killed by signal",
		 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	if (!io->err)
		fprintf(stderr, "sandpit bench: %s: %s\n", what, why);
	else if (!got)
		snprintf(io->err, io->errlen, "%s", why);
	return -1;
}

static double batch(void (*fn)(long, void *), void *arg, long n)
{
	double t0 = bench_now_ns();
	fn(n, arg);
	return bench_now_ns() - t0;
}

/* calls per batch so that a batch lasts about want ns */
long bench_calibrate(void (*fn)(long, void *), void *arg, double want)
{
	long n = 1;
	double t;
	fn(4, arg); /* warm */
	while ((t = batch(fn, arg, n)) < want / 8 && n < (1L << 30))
		n *= 2;
	n = (long)(n * want / (t > 1 ? t : 1));
	return n < 1 ? 1 : n;
}

void bench_batches(void (*fn)(long n, void *arg), void *arg, double batch_ns, int batches,
		   double *out)
{
	long n = bench_calibrate(fn, arg, batch_ns);
	for (int b = 0; b < batches; b++)
		out[b] = batch(fn, arg, n) / n;
}
