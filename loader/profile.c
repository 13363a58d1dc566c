/* `sandpit profile`: runs a program natively under the BPF profiler
 * (policy/profiler.bpf.c, loaded with libbpf through its generated
 * skeleton) and writes the policy it needs (loader/profile_policy.c).
 *
 * The child is forked stopped on a pipe; its tid goes into the traced set
 * before it execs PROGRAM, so nothing PROGRAM does escapes the profile,
 * and the tasks it creates are traced from their creation on.  Without
 * root or BPF, or without the tracepoints, nothing is run. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader/profile.h"
#include "loader/run.h"
#include "loader/tracepoint.h"
#include "policy/policy.h"
#include "profiler.skel.h"

const char profile_usage[] =
	"usage: sandpit profile [--output=FILE] -- PROGRAM [ARGS...]\n"
	"Runs PROGRAM natively (not sandboxed) under a BPF profiler and writes the policy\n"
	"it needs (sandpit.policy(5)): the system calls it made, and path grants for\n"
	"what it read and wrote.  Needs root.\n"
	"  --output=FILE  where the policy goes (default: PROGRAM.policy here; - is stdout)\n"
	"Exit status: the program's own, or 128+N if signal N killed it;\n"
	"  124 the profiler cannot run (not root, no BPF, no tracepoint): PROGRAM was not run,\n"
	"  125 sandpit itself failed, 126 PROGRAM cannot be run, 127 PROGRAM not found.\n";

#define fail(status, fmt, ...) run_fail(status, "profile: " fmt, ##__VA_ARGS__)

/* --- the profiler's tracepoints --- */

enum { TP_SYS_ENTER, TP_SYS_EXIT, TP_FORK, TP_EXIT, TP_N };

/* Loads and attaches the profiler; the message says what is missing. */
static struct profiler *start_profiler(char *err, size_t errlen)
{
	struct tracepoint tp[TP_N] = {
		[TP_SYS_ENTER] = { "raw_syscalls", "sys_enter", { "id", "args" }, 0, { 0 } },
		[TP_SYS_EXIT] = { "raw_syscalls", "sys_exit", { "id", "ret" }, 0, { 0 } },
		[TP_FORK] = { "sched", "sched_process_fork", { "child_pid", NULL }, 0, { 0 } },
		[TP_EXIT] = { "sched", "sched_process_exit", { NULL, NULL }, 0, { 0 } },
	};
	struct profiler *skel;
	int rc;

	err[0] = 0;
	rc = tracepoints_find(tp, TP_N, err, errlen);
	if (rc < 0) {
		if (!err[0])
			snprintf(err, errlen, "cannot read the tracepoints from tracefs: %s",
				 strerror(-rc));
		return NULL;
	}
	/* the records as profiler.bpf.c declares them */
	if (tp[TP_SYS_ENTER].off[0] != 8 || tp[TP_SYS_ENTER].off[1] != 16 ||
	    tp[TP_SYS_EXIT].off[0] != 8 || tp[TP_SYS_EXIT].off[1] != 16 || tp[TP_FORK].off[0] < 8) {
		snprintf(err, errlen, "this kernel's raw_syscalls or sched_process_fork records "
				      "are not laid out as the profiler expects");
		return NULL;
	}
	tracepoint_libbpf_quiet();
	skel = profiler__open();
	if (!skel) {
		snprintf(err, errlen, "cannot open the BPF profiler: %s", strerror(errno));
		return NULL;
	}
	skel->rodata->fork_child_pid_off = tp[TP_FORK].off[0];
	rc = profiler__load(skel);
	if (rc < 0) {
		int perm = rc == -EPERM || rc == -EACCES;
		const char *last = tracepoint_libbpf_last();
		snprintf(err, errlen, "cannot load the BPF profiler: %s%s%s%s", strerror(-rc),
			 perm ? " (it needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN)" : "",
			 last[0] && !perm ? "; " : "", perm ? "" : last);
		profiler__destroy(skel);
		return NULL;
	}
	if (tracepoint_attach(skel->progs.sys_enter, &tp[TP_SYS_ENTER], &skel->links.sys_enter, err,
			      errlen) ||
	    tracepoint_attach(skel->progs.sys_exit, &tp[TP_SYS_EXIT], &skel->links.sys_exit, err,
			      errlen) ||
	    tracepoint_attach(skel->progs.process_fork, &tp[TP_FORK], &skel->links.process_fork, err,
			      errlen) ||
	    tracepoint_attach(skel->progs.process_exit, &tp[TP_EXIT], &skel->links.process_exit, err,
			      errlen)) {
		profiler__destroy(skel);
		return NULL;
	}
	return skel;
}

/* --- following the program's processes: their cwd and directory fds --- */

struct fd_path {
	int fd;
	char *path;
};

struct proc {
	pid_t tgid;
	char *cwd;
	struct fd_path *fds;
	size_t nfds;
};

struct profile_state {
	struct profile_record rec;
	struct proc *procs;
	size_t nprocs;
	char start_cwd[PATH_MAX];
	int nomem;
};

static struct proc *find_proc(struct profile_state *s, pid_t tgid)
{
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].tgid == tgid)
			return &s->procs[i];
	return NULL;
}

/* A new process, with a copy of `from`'s cwd and descriptors (or the
 * profiler's cwd). */
static struct proc *new_proc(struct profile_state *s, pid_t tgid, const struct proc *from)
{
	size_t fi = from ? (size_t)(from - s->procs) : 0;
	struct proc *v = realloc(s->procs, (s->nprocs + 1) * sizeof(*v));

	if (!v)
		return NULL;
	s->procs = v;
	from = from ? &v[fi] : NULL;
	struct proc *p = &v[s->nprocs];
	*p = (struct proc){ .tgid = tgid, .cwd = strdup(from ? from->cwd : s->start_cwd) };
	if (!p->cwd)
		return NULL;
	if (from && from->nfds) {
		p->fds = calloc(from->nfds, sizeof(*p->fds));
		if (!p->fds)
			return NULL;
		for (size_t i = 0; i < from->nfds; i++)
			p->fds[i] = (struct fd_path){ from->fds[i].fd, strdup(from->fds[i].path) };
		p->nfds = from->nfds;
	}
	s->nprocs++;
	return p;
}

static struct proc *get_proc(struct profile_state *s, pid_t tgid)
{
	struct proc *p = find_proc(s, tgid);
	return p ? p : new_proc(s, tgid, NULL);
}

static void set_fd(struct proc *p, int fd, const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return;
	for (size_t i = 0; i < p->nfds; i++)
		if (p->fds[i].fd == fd) {
			free(p->fds[i].path);
			p->fds[i].path = copy;
			return;
		}
	struct fd_path *v = realloc(p->fds, (p->nfds + 1) * sizeof(*v));
	if (!v) {
		free(copy);
		return;
	}
	p->fds = v;
	p->fds[p->nfds++] = (struct fd_path){ fd, copy };
}

/* The path a directory descriptor was opened with, or what /proc says. */
static const char *fd_dir(const struct proc *p, pid_t tid, int fd, char *buf, size_t len)
{
	char link[64];

	for (size_t i = 0; i < p->nfds; i++)
		if (p->fds[i].fd == fd)
			return p->fds[i].path;
	snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)tid, fd);
	ssize_t n = readlink(link, buf, len - 1);
	if (n <= 0 || buf[0] != '/')
		return NULL;
	buf[n] = 0;
	return buf;
}

/* what the kinds (policy/syscall_kinds.c) say of the call */
static int is_open(int nr)
{
	struct syscall_path sp;

	return syscall_path(nr, &sp) == 0 && sp.opens;
}

static int is_exec(int nr)
{
	const struct syscall_kinds *k = syscall_kinds(nr);

	return k && (k->effects & SE_EXEC);
}

/* /proc/<the program's pid>/... and /proc/thread-self are /proc/self in
 * the sandbox */
static void proc_self(char *abs, const struct prof_event *e)
{
	char pfx[32];
	size_t n;
	const char *rest = NULL;

	for (int i = 0; i < 3 && !rest; i++) {
		if (i == 2)
			snprintf(pfx, sizeof(pfx), "/proc/thread-self");
		else
			snprintf(pfx, sizeof(pfx), "/proc/%u", i ? e->tid : e->tgid);
		n = strlen(pfx);
		if (!strncmp(abs, pfx, n) && (abs[n] == '/' || !abs[n]))
			rest = abs + n;
	}
	if (rest) {
		memmove(abs + 10, rest, strlen(rest) + 1);
		memcpy(abs, "/proc/self", 10);
	}
}

static void on_path(struct profile_state *s, const struct prof_event *e, size_t len)
{
	char joined[2 * PATH_MAX + 2], abs[PATH_MAX], buf[PATH_MAX];
	struct proc *p = get_proc(s, e->tgid);
	const char *path = e->path, *base;

	if (!p) {
		s->nomem = 1;
		return;
	}
	if (e->nr == __NR_fchdir) {
		if (e->ret == 0 && (base = fd_dir(p, e->tid, e->dirfd, buf, sizeof(buf)))) {
			char *cwd = strdup(base);
			if (cwd) {
				free(p->cwd);
				p->cwd = cwd;
			}
		}
		return;
	}
	if (!e->path_len || len < PROF_EVENT_HEAD + e->path_len || e->path[e->path_len - 1])
		return; /* counted as unreadable by the BPF side */
	if (!path[0])
		return; /* AT_EMPTY_PATH: the descriptor itself */
	if (path[0] == '/') {
		snprintf(joined, sizeof(joined), "%s", path);
	} else {
		base = e->dirfd == AT_FDCWD ? p->cwd : fd_dir(p, e->tid, e->dirfd, buf, sizeof(buf));
		if (!base) {
			s->rec.unresolved_paths++;
			return;
		}
		snprintf(joined, sizeof(joined), "%s/%s", base, path);
	}
	if (path_normalise(joined, abs, sizeof(abs)) < 0) {
		s->rec.unresolved_paths++;
		return;
	}
	proc_self(abs, e);

	if (is_exec(e->nr)) {
		if (profile_add_exec(&s->rec, abs) < 0)
			s->nomem = 1;
		return;
	}
	if (getenv("SANDPIT_DEBUG"))
		fprintf(stderr, "sandpit: profile: %d: call %d \"%s\" flags %#llx = %lld -> %s\n",
			(int)e->tid, e->nr, e->path, (unsigned long long)e->flags, (long long)e->ret,
			abs);
	int write = 0, create = 0, dir = e->nr == __NR_chdir;
	if (is_open(e->nr)) {
		write = policy_open_access((long)e->flags) == PA_WRITE;
		create = !!(e->flags & O_CREAT);
		dir = !!(e->flags & O_DIRECTORY);
		if (e->ret >= 0)
			set_fd(p, (int)e->ret, abs);
	} else {
		/* mkdir, unlink, rename, ... need a write grant of the directory
		 * (the profiler records the first path of rename and link only) */
		const struct policy_guard *g = policy_guard(e->nr);
		write = create = g && g->proc && g->proc->kind == PK_PATH_OP;
	}
	if (e->nr == __NR_chdir && e->ret == 0) {
		char *cwd = strdup(abs);
		if (cwd) {
			free(p->cwd);
			p->cwd = cwd;
		}
	}
	if (profile_add_access(&s->rec, abs, write, create, dir, e->ret < 0) < 0)
		s->nomem = 1;
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct profile_state *s = ctx;
	const struct prof_event *e = data;

	if (len < PROF_EVENT_HEAD)
		return 0;
	if (e->kind == PROF_EV_PATH) {
		on_path(s, e, len);
	} else if (e->kind == PROF_EV_FORK && !(e->flags & PROF_FORK_THREAD)) {
		struct proc *parent = get_proc(s, e->tgid);
		if (!parent || !new_proc(s, (pid_t)e->ret, parent))
			s->nomem = 1;
	}
	return 0;
}

static void free_state(struct profile_state *s)
{
	for (size_t i = 0; i < s->nprocs; i++) {
		for (size_t j = 0; j < s->procs[i].nfds; j++)
			free(s->procs[i].fds[j].path);
		free(s->procs[i].fds);
		free(s->procs[i].cwd);
	}
	free(s->procs);
	profile_record_free(&s->rec);
}

/* --- the command --- */

int profile_main(int argc, char **argv)
{
	const char *output = NULL;
	char prog[PATH_MAX], outbuf[PATH_MAX], err[1024];
	int i;

	for (i = 0; i < argc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "--")) {
			i++;
			break;
		}
		if (arg[0] != '-')
			break;
		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			fputs(profile_usage, stdout);
			return 0;
		}
		if (!strncmp(arg, "--output=", 9) && arg[9])
			output = arg + 9;
		else
			return fail(RUN_EXIT_SANDPIT, "unknown option '%s' (see sandpit profile --help)",
				    arg);
	}
	if (i >= argc)
		return fail(RUN_EXIT_SANDPIT, "no program given (see sandpit profile --help)");
	char **args = argv + i;
	if (!output) {
		const char *b = strrchr(args[0], '/');
		snprintf(outbuf, sizeof(outbuf), "%s.policy", b ? b + 1 : args[0]);
		output = outbuf;
	}

	if (geteuid() != 0)
		return fail(PROFILE_EXIT_NO_PROFILER,
			    "needs root (it loads a BPF program on the system's tracepoints); "
			    "%s was not run", args[0]);
	int rc = run_find_program(args[0], prog, sizeof(prog));
	rc = rc == -ENOENT ? RUN_EXIT_NOTFOUND : rc ? RUN_EXIT_CANNOT : 0;
	if (rc)
		return fail(rc, "%s: %s", args[0],
			    rc == RUN_EXIT_NOTFOUND ? "not found" : "cannot be run");

	struct profiler *skel = start_profiler(err, sizeof(err));
	if (!skel)
		return fail(PROFILE_EXIT_NO_PROFILER, "%s; %s was not run", err, args[0]);

	FILE *out = strcmp(output, "-") ? fopen(output, "w") : stdout;
	if (!out) {
		int e = errno;
		profiler__destroy(skel);
		return fail(RUN_EXIT_SANDPIT, "cannot write %s: %s", output, strerror(e));
	}

	static struct profile_state s;
	memset(&s, 0, sizeof(s));
	s.rec.argv = args;
	if (!getcwd(s.start_cwd, sizeof(s.start_cwd)))
		snprintf(s.start_cwd, sizeof(s.start_cwd), "/");
	struct ring_buffer *rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, &s, NULL);
	if (!rb) {
		profiler__destroy(skel);
		return fail(PROFILE_EXIT_NO_PROFILER, "cannot read the profiler's ring buffer: %s",
			    strerror(errno));
	}

	/* the program's Ctrl-C is its own; the profile is written after it */
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	int go[2], ex[2];
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ex, O_CLOEXEC) < 0)
		return fail(RUN_EXIT_SANDPIT, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t child = fork();
	if (child < 0)
		return fail(RUN_EXIT_SANDPIT, "fork: %s", strerror(errno));
	if (child == 0) {
		char c;
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		close(go[1]);
		close(ex[0]);
		/* the profiler traces this task from here: its only call is the
		 * execve, which the BPF side does not count */
		if (read(go[0], &c, 1) != 1)
			_exit(RUN_EXIT_SANDPIT);
		extern char **environ;
		execve(prog, args, environ);
		int e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(RUN_EXIT_CANNOT);
		_exit(RUN_EXIT_CANNOT);
	}
	close(go[0]);
	close(ex[1]);
	__u32 tid = child, state = PROF_TASK_PRE_EXEC;
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.traced), &tid, &state, BPF_NOEXIST) < 0) {
		int e = errno;
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return fail(PROFILE_EXIT_NO_PROFILER, "cannot trace the child: %s; %s was not run",
			    strerror(e), args[0]);
	}
	int exec_err = 0;
	if (write(go[1], "g", 1) != 1 || read(ex[0], &exec_err, sizeof(exec_err)) < 0)
		exec_err = errno;
	close(go[1]);
	close(ex[0]);

	/* until the program and every process it started have ended */
	int status = 0;
	for (;;) {
		int st;
		pid_t w;
		ring_buffer__poll(rb, 100);
		while ((w = waitpid(-1, &st, WNOHANG)) > 0)
			if (w == child)
				status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
		if (w < 0 && errno == ECHILD)
			break;
	}
	ring_buffer__consume(rb);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);

	if (exec_err) {
		ring_buffer__free(rb);
		profiler__destroy(skel);
		if (out != stdout) {
			fclose(out);
			unlink(output);
		}
		return fail(exec_err == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_CANNOT, "%s: %s",
			    args[0], strerror(exec_err));
	}
	memcpy(s.rec.calls, skel->bss->calls, sizeof(s.rec.calls));
	s.rec.calls_beyond = skel->bss->calls_beyond;
	s.rec.lost_events = skel->bss->lost_events;
	s.rec.lost_tasks = skel->bss->lost_tasks;
	s.rec.unreadable_paths = skel->bss->unreadable_paths;
	ring_buffer__free(rb);
	profiler__destroy(skel);

	rc = s.nomem ? -ENOMEM : profile_write_policy(&s.rec, out);
	int to_stdout = out == stdout;
	if ((to_stdout ? fflush(out) : fclose(out)) && !rc)
		rc = -EIO;
	if (rc < 0) {
		free_state(&s);
		return fail(RUN_EXIT_SANDPIT, "cannot write the policy to %s: %s", output,
			    strerror(-rc));
	}
	if (s.rec.lost_events || s.rec.lost_tasks || s.rec.unreadable_paths ||
	    s.rec.unresolved_paths)
		fail(0, "the profile is incomplete (see the end of %s): grants may be missing",
		     output);
	free_state(&s);
	return status;
}
