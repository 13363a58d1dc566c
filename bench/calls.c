/* One file over 700 lines: every row measured inside a forked child, by
 * the one protocol below (the shared page, the rounds, the counted run).
 *
 * Per-call cost by path, sandpit_start, memory per thread and scaling:
 * everything measured inside forked children, native ones and ones that
 * called sandpit_start in strict or in filter mode.  A child reports through
 * memory it shares with the bench; a sandboxed child makes no call for it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandpit.h"
#include "bench/bench.h"
#include "bench/groups.h"
#include "bench/syscount.h"
#include "user/start/sandbox.h"
#include "compat/compat.h"

#define MAX_BATCHES 64
#define B_PATH "/usr/lib/os-release" /* readable under the default policy */

/* ---- the calls ---- */

enum call { C_GETPPID, C_DENIED, C_FCNTL, C_NET, C_MMAP, C_OPEN, C_STAT, C_STATX, C_FSTATAT, C_ACCESS,
	    C_READLINK, C_FSTAT, C_CLOCK, C_RDTSC, C_FS, NCALLS };

static const struct {
	const char *name, *note;
	int via_b; /* checked by the trusted process B */
} calls[NCALLS] = {
	[C_GETPPID] = { "getppid", "allow; strict: through T; filter: the BPF filter allows it" },
	[C_DENIED] = { "socket(AF_INET) denied",
		       "deny(EAFNOSUPPORT); strict: the entry answers, no round trip; filter: the filter's "
		       "SECCOMP_RET_ERRNO; native: the call succeeds, so the figure includes closing "
		       "the socket" },
	[C_FCNTL] = { "fcntl(F_GETFL)",
		      "register rules (the fd is not sandpit's, the command): strict: the patched "
		      "wrapper sends it to T; filter: the wrapper's site stays native and the filter "
		      "decides the rules itself" },
	[C_NET] = { "gettid, unpatched site",
		    "emulated (U's tid), from code laid out so that the patcher must leave it: the "
		    "filter traps it and the SIGSYS handler sends it to the entry (the net), on every "
		    "call; compare the TRAP + SIGSYS alternative. Strict mode has no net (such a call "
		    "is killed)" },
	[C_MMAP] = { "mmap+munmap 4 KiB",
		     "register rules (flags, protected ranges): T in both modes" },
	[C_OPEN] = { "open+close", B_PATH "; open checked by B; close by T in strict mode, by the filter in "
				      "filter mode", 1 },
	[C_STAT] = { "stat", B_PATH "; checked and answered by B in both modes", 1 },
	[C_STATX] = { "statx", "statx(AT_FDCWD, " B_PATH ", AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, "
			       "STATX_BASIC_STATS, buf), as ls -l makes it; checked and answered by B "
			       "in both modes", 1 },
	[C_FSTATAT] = { "newfstatat(dirfd, name)",
			"fstatat(fd of /usr/lib, \"os-release\", buf, 0): a path relative to a directory "
			"fd, which B resolves from the fd; checked by B in both modes", 1 },
	[C_ACCESS] = { "access", B_PATH ", R_OK; checked and answered by B in both modes (by T "
				   "before 5.8: no faccessat2)", 1 },
	[C_READLINK] = { "readlink", "/etc/os-release (a link to " B_PATH "); checked and answered "
				     "by B in both modes", 1 },
	[C_FSTAT] = { "fstat", "through glibc 2.36: newfstatat(fd, \"\", buf, AT_EMPTY_PATH); the entry "
			       "reads the empty path once and makes it fstat(fd): T in strict mode, "
			       "the filter allows it in filter mode" },
	[C_CLOCK] = { "clock_gettime",
		      "CLOCK_MONOTONIC through the vDSO; strict: the vDSO's rdtscp is patched into a "
		      "call that asks T for the counter (one round trip, no fault); filter: native" },
	[C_RDTSC] = { "rdtsc, left in the code",
		      "an rdtsc no patch window fits (bench.h): strict: it faults and the SIGSEGV "
		      "handler asks T (the net; what every vDSO clock read cost before); native and "
		      "filter: the instruction" },
	[C_FS] = { "arch_prctl(ARCH_SET_FS)",
		   "the thread's own FS base, set again (what ld.so and libc do once per thread); "
		   "strict: wrfsbase in U where the CPU has FSGSBASE, else B by ptrace (the "
		   "strict-no-fsgsbase row forces that fallback); filter: the filter allows it" },
};

enum { M_NATIVE, M_STRICT, M_FILTER, M_STRICT_1CPU, M_STRICT_2CPU, M_STRICT_NO_FSGSBASE, NMODES };
static const char *mode_names[NMODES] = { "native", "strict", "filter", "strict-1cpu",
					  "strict-2cpu", "strict-no-fsgsbase" };

struct calls_shm {
	int mode, mask, batches;
	int up[2], go[2]; /* strict-2cpu: the child is in the sandbox; it is pinned */
	double batch_ns;
	double start_ns; /* sandpit_start */
	int n[NCALLS];
	double v[NCALLS][MAX_BATCHES];
	char err[256];
};

static int fd_kept = -1, dir_kept = -1;
static rdtsc_fn rdtsc_left;
static uint64_t fs_base_kept;
static missed_fn net_gettid; /* made after sandpit_start, like code a program maps */

static void one(int call, long n)
{
	struct stat sb;
	struct timespec ts;
	for (long i = 0; i < n; i++) {
		switch (call) {
		case C_GETPPID:
			getppid();
			break;
		case C_DENIED: {
			int s = socket(AF_INET, SOCK_STREAM, 0);
			if (s >= 0)
				close(s);
			break;
		}
		case C_FCNTL:
			fcntl(fd_kept, F_GETFL);
			break;
		case C_NET:
			net_gettid(0, 0, 0);
			break;
		case C_MMAP: {
			void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p != MAP_FAILED)
				munmap(p, 4096);
			break;
		}
		case C_OPEN: {
			int fd = open(B_PATH, O_RDONLY);
			if (fd >= 0)
				close(fd);
			break;
		}
		case C_STAT:
			stat(B_PATH, &sb);
			break;
		case C_STATX: {
			struct statx stx;
			statx(AT_FDCWD, B_PATH, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_BASIC_STATS,
			      &stx);
			break;
		}
		case C_FSTATAT:
			fstatat(dir_kept, "os-release", &sb, 0);
			break;
		case C_ACCESS:
			(void)access(B_PATH, R_OK);
			break;
		case C_READLINK: {
			char link[64];
			if (readlink("/etc/os-release", link, sizeof(link)) < 0)
				link[0] = 0;
			break;
		}
		case C_FSTAT:
			fstat(fd_kept, &sb);
			break;
		case C_RDTSC:
			rdtsc_left();
			break;
		case C_CLOCK:
			clock_gettime(CLOCK_MONOTONIC, &ts);
			break;
		case C_FS:
			syscall(SYS_arch_prctl, 0x1002 /* ARCH_SET_FS */, fs_base_kept);
			break;
		}
	}
}

static void one_call(long n, void *arg)
{
	one(*(int *)arg, n);
}

static int enter(int mode, char *err, size_t len)
{
	struct sandpit_options o = { .mode = mode == M_FILTER ? SANDPIT_MODE_FILTER :
							      SANDPIT_MODE_STRICT };
	if (mode == M_STRICT_1CPU) {
		cpu_set_t s;
		CPU_ZERO(&s);
		CPU_SET(0, &s);
		/* before the start: T and B inherit it */
		if (sched_setaffinity(0, sizeof(s), &s) < 0) {
			snprintf(err, len, "sched_setaffinity: %s", strerror(errno));
			return -1;
		}
	}
	if (mode == M_NATIVE)
		return 0;
	unsetenv("SANDPIT_MODE");
	if (mode == M_STRICT_NO_FSGSBASE) {
		/* B sets the thread pointer by ptrace, whatever this CPU has */
		const char *k = getenv("SANDPIT_KERNEL");
		char kernel[256];
		snprintf(kernel, sizeof(kernel), "%s%sno-fsgsbase", k ? k : "", k ? "," : "");
		setenv("SANDPIT_KERNEL", kernel, 1);
		compat_reset();
	}
	if (sandpit_start(&o) < 0) {
		snprintf(err, len, "sandpit_start: %s", sandpit_error());
		return -1;
	}
	return 0;
}

/* what the calls use, made before the sandbox */
static int prepare(char *err, size_t len)
{
	fd_kept = open(B_PATH, O_RDONLY);
	dir_kept = open("/usr/lib", O_RDONLY | O_DIRECTORY);
	if (fd_kept < 0 || dir_kept < 0 || !(rdtsc_left = unpatched_rdtsc())) {
		snprintf(err, len, "opening %s or /usr/lib, or mapping rdtsc: %s", B_PATH,
			 strerror(errno));
		return -1;
	}
	syscall(SYS_arch_prctl, 0x1003 /* ARCH_GET_FS */, &fs_base_kept);
	return 0;
}

static int calls_child(void *arg)
{
	struct calls_shm *s = arg;
	if (prepare(s->err, sizeof(s->err)) < 0)
		return 1;
	double t0 = bench_now_ns();
	if (enter(s->mode, s->err, sizeof(s->err)) < 0)
		return 1;
	s->start_ns = bench_now_ns() - t0;
	if ((s->mask & (1 << C_NET)) && !(net_gettid = missed_code(SYS_gettid))) {
		snprintf(s->err, sizeof(s->err), "mapping the unpatched site failed");
		return 1;
	}
	if (s->mode == M_STRICT_2CPU) {
		char b = 0;
		/* read and write are strict mode's own: no T involved */
		if (write(s->up[1], &b, 1) != 1 || read(s->go[0], &b, 1) != 1)
			return 1;
	}
	for (int c = 0; c < NCALLS; c++) {
		if (!(s->mask & (1 << c)))
			continue;
		bench_batches(one_call, &c, s->batch_ns, s->batches, s->v[c]);
		s->n[c] = s->batches;
	}
	return 0;
}

static int pin(pid_t tid, int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(tid, sizeof(set), &set);
}

/* strict-2cpu, in the bench: once the child is in the sandbox, its U (the
 * main thread) goes to CPU 0 and its T (the other task) to CPU 1 */
static int pin_u_and_t(pid_t pid, void *arg)
{
	struct calls_shm *s = arg;
	char dir[64], b = 0;
	int n = 0, rc = 0;
	close(s->up[1]);
	close(s->go[0]);
	if (read(s->up[0], &b, 1) != 1)
		return -1;
	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));) {
		pid_t tid = atoi(e->d_name);
		if (tid <= 0)
			continue;
		n++;
		if (pin(tid, tid == pid ? 0 : 1) < 0)
			rc = -1;
	}
	if (d)
		closedir(d);
	if (n != 2 || rc < 0) {
		snprintf(s->err, sizeof(s->err), "pinning U and T: %d tasks, %s", n,
			 rc < 0 ? strerror(errno) : "expected 2");
		return -1;
	}
	return write(s->go[1], &b, 1) == 1 ? 0 : -1;
}

/* the calls of mask (bits of enum call) in a child in mode: s->v, s->n */
static int measure_calls(const struct bench_cfg *c, int mode, int mask, struct calls_shm *s)
{
	char what[64];
	int rc;
	memset(s, 0, sizeof(*s));
	s->mode = mode;
	s->mask = mask;
	if (mode == M_STRICT_2CPU && (pipe(s->up) < 0 || pipe(s->go) < 0))
		return -1;
	s->batches = c->batches < MAX_BATCHES ? c->batches : MAX_BATCHES;
	s->batch_ns = c->batch_ns;
	snprintf(what, sizeof(what), "per-call child (%s)", mode_names[mode]);
	rc = bench_child(calls_child, s, what, mode == M_STRICT_2CPU ? pin_u_and_t : NULL);
	if (mode == M_STRICT_2CPU) {
		close(s->up[0]);
		close(s->go[1]);
	}
	if (rc && s->err[0])
		fprintf(stderr, "sandpit bench: %s: %s\n", what, s->err);
	return rc ? -1 : 0;
}

static int run_calls(const struct bench_cfg *c, int mode, struct calls_shm *s)
{
	int mask = mode == M_STRICT_1CPU	? 1 << C_GETPPID :
		   mode == M_STRICT_NO_FSGSBASE ? 1 << C_FS :
						  (1 << NCALLS) - 1;
	if (mode == M_STRICT || mode == M_STRICT_2CPU)
		mask &= ~(1 << C_NET);
	if (measure_calls(c, mode, mask, s) < 0)
		return -1;
	for (int k = 0; k < NCALLS; k++) {
		if (!s->n[k])
			continue;
		const char *note = mode == M_STRICT_1CPU ? "the child pinned to CPU 0 before "
							   "sandpit_start, so U, T and B share one CPU" :
				   mode == M_STRICT_2CPU ? "U pinned to CPU 0 and T to CPU 1 by the "
							   "bench after sandpit_start; B not pinned" :
				   mode == M_STRICT_NO_FSGSBASE ? "SANDPIT_KERNEL=no-fsgsbase: B stops "
							   "U by ptrace, sets fs_base, lets it go" :
							   calls[k].note;
		struct bench_row *r = bench_row("per-call", calls[k].name, mode_names[mode], BENCH_NS,
						note);
		r->via_b = calls[k].via_b;
		for (int b = 0; b < s->n[k]; b++)
			bench_add(r, s->v[k][b]);
	}
	if (mode == M_STRICT || mode == M_FILTER)
		bench_add(bench_row("start-up", "sandpit_start", mode_names[mode], BENCH_NS,
				    "in a child of the sandpit command: policy, probes, B, T, patching "
				    "the command, its libraries, ld.so and the vDSO"),
			  s->start_ns);
	return 0;
}

/* ---- the system calls of each call, counted ---- */

/* Calls each counted loop makes: enough that the few calls T or B make
 * as a window opens or closes (a wait begun before, a wake-up after)
 * weigh nothing per call. */
#define COUNT_ITERATIONS 2000

struct count_shm {
	int mode, mask;
	pid_t pid;                   /* the child: P, its main thread U */
	unsigned start_w, w[NCALLS]; /* windows: sandpit_start, each call */
	char err[256];
};

/* sandpit_start, then each call of the mask in a loop of its own, each in
 * its own window: the same calls as the timed child's, with the same
 * descriptors; a few calls first, uncounted, as the timed child's warm-up */
static int count_child(void *arg)
{
	struct count_shm *s = arg;
	if (prepare(s->err, sizeof(s->err)) < 0)
		return 1;
	/* sandpit_start's window stays open for 50 ms after it returns: B
	 * goes on starting its threads meanwhile, which belongs to the start,
	 * not to the first loop (U's sleep adds a call or two of its own) */
	syscount_window(s->start_w);
	int rc = enter(s->mode, s->err, sizeof(s->err));
	if (rc == 0)
		usleep(50000);
	syscount_window(0);
	if (rc < 0)
		return 1;
	if ((s->mask & (1 << C_NET)) && !(net_gettid = missed_code(SYS_gettid))) {
		snprintf(s->err, sizeof(s->err), "mapping the unpatched site failed");
		return 1;
	}
	for (int c = 0; c < NCALLS; c++) {
		if (!(s->mask & (1 << c)))
			continue;
		one(c, 8);
		syscount_window(s->w[c]);
		one(c, COUNT_ITERATIONS);
		syscount_window(0);
	}
	return 0;
}

static int count_pid(pid_t pid, void *arg)
{
	((struct count_shm *)arg)->pid = pid;
	return 0;
}

/* The rows of the three main modes and sandpit_start, their calls counted
 * in one child per mode, after the timed rounds (the counter slows every
 * system call down while it is attached, so no time is taken with it). */
static int count_calls(const struct bench_cfg *c)
{
	static const int modes[] = { M_NATIVE, M_STRICT, M_FILTER };
	struct count_shm *s = bench_shared(sizeof(*s));
	int rc = 0, counting = syscount_begin() == 0;
	bench_progress(c, "per-call: counting system calls%s%s", counting ? "" : ": not counted, ",
		       counting ? "" : syscount_why());
	for (int i = 0; i < 3; i++) {
		int mode = modes[i];
		memset(s, 0, sizeof(*s));
		s->mode = mode;
		s->mask = (1 << NCALLS) - 1;
		if (mode == M_STRICT)
			s->mask &= ~(1 << C_NET);
		s->start_w = syscount_new_window();
		for (int k = 0; k < NCALLS; k++)
			s->w[k] = syscount_new_window();
		int ok = counting && !bench_child(count_child, s, "counting child", count_pid);
		if (counting && !ok) {
			if (s->err[0])
				fprintf(stderr, "sandpit bench: counting child (%s): %s\n",
					mode_names[mode], s->err);
			rc = -1;
		}
		for (int k = 0; k < NCALLS; k++) {
			struct bench_row *r;
			if (!(s->mask & (1 << k)) || !(r = bench_find(calls[k].name, mode_names[mode])))
				continue;
			if (!ok)
				syscount_not_counted(&r->calls, counting ? "the counting child failed" :
									   syscount_why());
			else
				syscount_take(s->w[k], s->pid, SYSCOUNT_P_ROOT, COUNT_ITERATIONS,
					      &r->calls);
		}
		struct bench_row *r = mode != M_NATIVE ? bench_find("sandpit_start", mode_names[mode]) : NULL;
		if (r && !ok)
			syscount_not_counted(&r->calls, counting ? "the counting child failed" :
								   syscount_why());
		else if (r)
			syscount_take(s->start_w, s->pid, SYSCOUNT_P_ROOT, 1, &r->calls);
	}
	syscount_end();
	munmap(s, sizeof(*s));
	return rc;
}

/* The busy group's per-call rows (bench/busy.c): a T call and two B
 * calls, native, strict and filter, while every CPU has a busy loop */
int bench_calls_busy(const struct bench_cfg *c)
{
	static const int pick[] = { C_GETPPID, C_STAT, C_OPEN };
	static char names[3][64];
	struct calls_shm *s = bench_shared(sizeof(*s));
	int rc = 0, mask = 0;
	for (int i = 0; i < 3; i++) {
		mask |= 1 << pick[i];
		snprintf(names[i], sizeof(names[i]), "%s, busy CPUs", calls[pick[i]].name);
	}
	for (int r = 0; r < c->rounds; r++) {
		bench_progress(c, "busy: per-call round %d/%d", r + 1, c->rounds);
		for (int i = 0; i < 3; i++) {
			int mode = (r + i) % 3; /* native, strict, filter */
			if (measure_calls(c, mode, mask, s) < 0) {
				rc = -1;
				continue;
			}
			for (int k = 0; k < 3; k++) {
				struct bench_row *row = bench_row("busy", names[k], mode_names[mode], BENCH_NS,
								  mode ? calls[pick[k]].note : NULL);
				for (int b = 0; b < s->n[pick[k]]; b++)
					bench_add(row, s->v[pick[k]][b]);
			}
		}
	}
	munmap(s, sizeof(*s));
	return rc;
}

int bench_calls(const struct bench_cfg *c)
{
	struct calls_shm *s = bench_shared(sizeof(*s));
	int rc = 0;
	for (int r = 0; r < c->rounds; r++) {
		bench_progress(c, "per-call round %d/%d", r + 1, c->rounds);
		for (int i = 0; i < NMODES; i++)
			rc |= run_calls(c, (r + i) % NMODES, s);
		rc |= bench_floor_round(c);
	}
	munmap(s, sizeof(*s));
	rc |= count_calls(c);
	return rc;
}

/* ---- memory per thread ---- */

#define MEM_THREADS 8

struct proc_mem {
	double rss, vsize, threads, kstack; /* bytes, bytes, tasks, bytes (system-wide) */
};

static double field(const char *file, const char *name)
{
	char line[256];
	double v = -1;
	size_t n = strlen(name);
	FILE *f = fopen(file, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':') {
			v = strtod(line + n + 1, NULL);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

static int sample_mem(pid_t pid, struct proc_mem *m)
{
	char file[64];
	snprintf(file, sizeof(file), "/proc/%d/status", pid);
	m->rss = field(file, "VmRSS") * 1024;
	m->vsize = field(file, "VmSize") * 1024;
	m->threads = field(file, "Threads");
	m->kstack = field("/proc/meminfo", "KernelStack") * 1024;
	return m->rss < 0 || m->vsize < 0 || m->threads < 0 || m->kstack < 0 ? -1 : 0;
}

struct mem_child {
	int mode;
	int up[2], go[2], hold[2];
	char err[256];
};

static void *held(void *arg)
{
	char b;
	/* read is one of strict mode's own four calls: no hand-off while held */
	return read(*(int *)arg, &b, 1) == 1 ? NULL : arg;
}

static int step(struct mem_child *m)
{
	char b = 0;
	return write(m->up[1], &b, 1) == 1 && read(m->go[0], &b, 1) == 1 ? 0 : -1;
}

static int mem_child(void *arg)
{
	struct mem_child *m = arg;
	pthread_t t[MEM_THREADS];
	int n = 0, rc = 0;
	if (step(m) < 0 || enter(m->mode, m->err, sizeof(m->err)) < 0 || step(m) < 0)
		return 1;
	for (; n < MEM_THREADS; n++)
		if ((errno = pthread_create(&t[n], NULL, held, &m->hold[0]))) {
			snprintf(m->err, sizeof(m->err), "pthread_create: %s", strerror(errno));
			rc = 1;
			break;
		}
	if (!rc && step(m) < 0)
		rc = 1;
	char bytes[MEM_THREADS] = { 0 };
	if (write(m->hold[1], bytes, n) != n)
		rc = 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return rc;
}

static int run_mem(int mode)
{
	struct mem_child *m = bench_shared(sizeof(*m));
	struct proc_mem p[3];
	int rc = -1, st;
	char b = 0;

	m->mode = mode;
	if (pipe(m->up) || pipe(m->go) || pipe(m->hold))
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(BENCH_CHILD_TIMEOUT);
		_exit(mem_child(m));
	}
	close(m->up[1]);
	close(m->go[0]);
	for (int i = 0; i < 3; i++) {
		if (read(m->up[0], &b, 1) != 1 || sample_mem(pid, &p[i]) < 0 ||
		    write(m->go[1], &b, 1) != 1)
			goto out;
	}
	rc = 0;
out:
	close(m->up[0]);
	close(m->go[1]);
	close(m->hold[0]);
	close(m->hold[1]);
	waitpid(pid, &st, 0);
	if (rc || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "sandpit bench: memory child (%s) failed%s%s\n", mode_names[mode],
			m->err[0] ? ": " : "", m->err);
		rc = -1;
	} else {
		const char *mn = mode_names[mode];
		const char *kn = "KernelStack in /proc/meminfo, system-wide (other processes' threads "
				 "are noise): each sandboxed thread has a T task too";
		bench_add(bench_row("memory", "RSS per thread", mn, BENCH_BYTES,
				    "VmRSS of the process before and after 8 threads that block in read"),
			  (p[2].rss - p[1].rss) / MEM_THREADS);
		bench_add(bench_row("memory", "virtual memory per thread", mn, BENCH_BYTES,
				    "VmSize, the same way (8 MiB of it is the thread's own stack)"),
			  (p[2].vsize - p[1].vsize) / MEM_THREADS);
		bench_add(bench_row("memory", "kernel stack per thread", mn, BENCH_BYTES, kn),
			  (p[2].kstack - p[1].kstack) / MEM_THREADS);
		bench_add(bench_row("memory", "tasks per thread", mn, BENCH_COUNT,
				    "Threads in /proc/PID/status"),
			  (p[2].threads - p[1].threads) / MEM_THREADS);
		if (mode != M_NATIVE) {
			bench_add(bench_row("memory", "RSS added by sandpit_start", mn, BENCH_BYTES,
					    "VmRSS before and after: slot 0's S, mailbox and T's "
					    "alternate stack (the other slots' address space is only "
					    "reserved), the patched code, the T table; B is another "
					    "process, not counted"),
				  p[1].rss - p[0].rss);
			bench_add(bench_row("memory", "virtual memory added by sandpit_start", mn,
					    BENCH_BYTES, "VmSize, the same way"),
				  p[1].vsize - p[0].vsize);
		}
	}
	munmap(m, sizeof(*m));
	return rc;
}

int bench_memory(const struct bench_cfg *c)
{
	int rc = 0;
	/* not measured: the pages user/layout/secure_mem.h gives a slot; address
	 * space for all SM_NSLOTS is reserved at start, a slot's pages are
	 * touched when a thread first uses it (user/layout/slots.h) */
	bench_add(bench_row("memory", "reserved per slot at start", "layout", BENCH_BYTES,
			    "from user/layout/secure_mem.h, not measured: secure page + mailbox (S, 2 "
			    "pages) + T's alternate signal stack, address space reserved for each "
			    "of the 1,024 slots at start and touched when a thread first uses the "
			    "slot; T itself has no stack"),
		  (double)sandpit_slot_bytes());
	for (int r = 0; r < c->rounds; r++) {
		bench_progress(c, "memory round %d/%d", r + 1, c->rounds);
		for (int i = 0; i < 3; i++)
			rc |= run_mem((r + i) % 3);
	}
	return rc;
}

/* ---- scaling: stat through B from 1, 2, 4, 8 threads at once ---- */

#define SCALE_MAX 8
#define SCALE_SAMPLES 3

struct scale_shm {
	int mode;
	double batch_ns;
	double v[4][SCALE_SAMPLES]; /* per call, per thread: wall / calls each */
	char err[256];
};

struct stat_worker {
	int gate;
	long n;
};

static void *stat_worker(void *arg)
{
	struct stat_worker *w = arg;
	char b;
	if (read(w->gate, &b, 1) != 1)
		return arg;
	one(C_STAT, w->n);
	return NULL;
}

static int scale_child(void *arg)
{
	struct scale_shm *s = arg;
	int gate[2];
	if (pipe(gate) < 0 || enter(s->mode, s->err, sizeof(s->err)) < 0)
		return 1;
	int call = C_STAT;
	long n = bench_calibrate(one_call, &call, s->batch_ns);
	for (int k = 0; k < 4; k++) {
		int nt = 1 << k;
		for (int j = 0; j < SCALE_SAMPLES; j++) {
			pthread_t t[SCALE_MAX];
			struct stat_worker w = { gate[0], n };
			char bytes[SCALE_MAX] = { 0 };
			for (int i = 0; i < nt; i++)
				if ((errno = pthread_create(&t[i], NULL, stat_worker, &w))) {
					snprintf(s->err, sizeof(s->err), "pthread_create: %s",
						 strerror(errno));
					return 1;
				}
			double t0 = bench_now_ns();
			if (write(gate[1], bytes, nt) != nt)
				return 1;
			for (int i = 0; i < nt; i++)
				pthread_join(t[i], NULL);
			s->v[k][j] = (bench_now_ns() - t0) / n;
		}
	}
	return 0;
}

int bench_scaling(const struct bench_cfg *c)
{
	static const char *names[4] = { "stat, 1 thread", "stat, 2 threads at once",
					"stat, 4 threads at once", "stat, 8 threads at once" };
	struct scale_shm *s = bench_shared(sizeof(*s));
	int rc = 0;
	for (int r = 0; r < c->rounds; r++) {
		bench_progress(c, "scaling round %d/%d", r + 1, c->rounds);
		for (int i = 0; i < 3; i++) {
			int mode = (r + i) % 3;
			memset(s, 0, sizeof(*s));
			s->mode = mode;
			s->batch_ns = c->batch_ns;
			if (bench_child(scale_child, s, "scaling child", NULL)) {
				if (s->err[0])
					fprintf(stderr, "sandpit bench: scaling (%s): %s\n",
						mode_names[mode], s->err);
				rc = -1;
				continue;
			}
			for (int k = 0; k < 4; k++)
				for (int j = 0; j < SCALE_SAMPLES; j++)
					bench_add(bench_row("scaling", names[k], mode_names[mode], BENCH_NS,
							    k ? NULL :
								"each thread makes the same number "
								"of stat calls; the figure is the "
								"wall time from release to the last "
								"join divided by that number: the "
								"latency a thread sees"),
						  s->v[k][j]);
		}
	}
	munmap(s, sizeof(*s));
	return rc;
}
