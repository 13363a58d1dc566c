/* `sandpit run`: an unmodified program in the sandbox.  A parent waits and
 * passes on the exit status; the child maps the program (and for a dynamic
 * one its interpreter) itself, enters the sandbox, which patches every
 * executable mapping, and only then jumps to the program's entry point:
 * nothing of the program runs before the sandbox is in force. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandpit.h"
#include "loader/elf.h"
#include "loader/run.h"
#include "compat/compat.h"
#include "policy/policy.h"
#include "user/layout/denial_report.h"
#include "user/start/sandbox.h"

#define MAX_GRANTS 64

const char run_usage[] =
	"usage: sandpit run [--mode=strict|filter|auto] [--policy=FILE]\n"
	"                   [--policy-format=minijail|sandpit] [--allow-read=PATH]...\n"
	"                   [--allow-write=PATH]... [--allow-connect=ADDR:PORT]...\n"
	"                   [--log=denials] [--log-format=text|json]\n"
	"                   -- PROGRAM [ARGS...]\n"
	"Runs PROGRAM (a dynamic or static x86-64 ELF program, or a #! script) in the sandbox.\n"
	"  --mode=MODE         strict, filter or auto (default: auto, or $SANDPIT_MODE)\n"
	"  --policy=FILE       a policy file instead of the built-in default policy\n"
	"  --policy-format=minijail|sandpit\n"
	"                      read FILE in that format (without it: detected, sandpit.policy(5))\n"
	"  --allow-read=PATH   also allow reading under PATH: open for reading, stat, readlink,\n"
	"                      statfs, extended attributes\n"
	"  --allow-write=PATH  also allow, under PATH, what --allow-read does and: open for\n"
	"                      writing, create (also O_TMPFILE), mkdir, rmdir, unlink, rename and\n"
	"                      link (both names under PATH), symlink, mkfifo, truncate, chmod\n"
	"                      (no set-id bits), utimensat (touch); never through a symlink out\n"
	"                      of PATH, and never chown or devices\n"
	"  --allow-connect=ADDR:PORT\n"
	"                      allow TCP and UDP sockets to connect to ADDR (numeric IPv4, [IPv6],\n"
	"                      or localhost for both loopbacks) on PORT; without one, no network\n"
	"  --log=denials       one line on stderr for each call the policy refuses, and why\n"
	"  --log-format=FMT    text (default) or json: one JSON object a line\n"
	"A `path deny` of the policy wins over every grant (the default denies /etc's\n"
	"secrets); every capability is dropped: root keeps its uid and nothing more.\n"
	"Exit status: the program's own, or 128+N if signal N killed it;\n"
	"  125 sandpit itself failed (bad option, policy, mode not available on this kernel),\n"
	"  126 PROGRAM cannot be run (not an ELF program, no permission), 127 PROGRAM not found.\n";

struct run_args {
	struct sandpit_options opts;
	const char *read[MAX_GRANTS + 2], *write[MAX_GRANTS + 1], *connect[MAX_GRANTS + 1];
	int nread, nwrite, nconnect, mode_given, log_denials, log_json;
	char **prog; /* PROGRAM [ARGS...] */
};

int run_fail(int status, const char *fmt, ...)
{
	va_list ap;
	fputs("sandpit: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}

static const char *opt_value(const char *arg, const char *name)
{
	size_t n = strlen(name);
	return !strncmp(arg, name, n) && arg[n] == '=' ? arg + n + 1 : NULL;
}

/* Sets the format policy files are read in; 1 if arg is the option. */
int policy_format_option(const char *arg, int *bad)
{
	const char *v = "--policy-format=";

	*bad = 0;
	if (strncmp(arg, v, strlen(v)))
		return 0;
	v = arg + strlen(v);
	if (!strcmp(v, "minijail"))
		policy_set_file_format(POLICY_FORMAT_MINIJAIL);
	else if (!strcmp(v, "sandpit"))
		policy_set_file_format(POLICY_FORMAT_SANDPIT);
	else
		*bad = 1;
	return 1;
}

static void count_note(void *ctx, const char *msg)
{
	(void)msg;
	(*(int *)ctx)++;
}

/* A minijail file is translated, never silently: one line says how many of
 * its lines were, and where to read how (sandpit policy check). */
static void say_translated(const char *file)
{
	struct policy *p = NULL;
	char *text = NULL;
	size_t len = 0;
	int notes = 0;

	if (policy_read_file(file, &text, &len) < 0)
		return; /* sandpit_start says why */
	if (policy_text_is_minijail(text, len) &&
	    policy_parse_minijail(file, text, len, &p, NULL, count_note, &notes, NULL, 0) == 0 &&
	    notes)
		fprintf(stderr, "sandpit: %s: minijail's format, %d translation%s (sandpit policy "
				"check %s says which)\n", file, notes, notes == 1 ? "" : "s", file);
	policy_free(p);
	free(text);
}

/* A read grant through a symbolic link also grants where the link leads,
 * which may not be what was meant (the link may be another program's
 * doing): one line says where.  A write grant through one is refused
 * (policy_grant says why, through sandpit_start). */
static void say_read_links(const struct run_args *a)
{
	char to[PATH_MAX];

	for (int i = 0; i < a->nread; i++)
		if (policy_grant_target(a->read[i], to, sizeof to) == 1)
			fprintf(stderr, "sandpit: --allow-read=%s goes through a symbolic link; it "
					"resolves to %s, which is what it grants\n", a->read[i], to);
}

static int parse(int argc, char **argv, struct run_args *a)
{
	const char *v;
	int i, bad;

	memset(a, 0, sizeof *a);
	a->opts.mode = SANDPIT_MODE_AUTO;
	for (i = 0; i < argc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "--")) {
			i++;
			break;
		}
		if (arg[0] != '-')
			break;
		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			fputs(run_usage, stdout);
			exit(0);
		} else if ((v = opt_value(arg, "--mode"))) {
			if (!strcmp(v, "strict"))
				a->opts.mode = SANDPIT_MODE_STRICT;
			else if (!strcmp(v, "filter"))
				a->opts.mode = SANDPIT_MODE_FILTER;
			else if (!strcmp(v, "auto"))
				a->opts.mode = SANDPIT_MODE_AUTO;
			else
				return run_fail(RUN_EXIT_SANDPIT, "--mode=%s: expected strict, filter or auto", v);
			a->mode_given = 1;
		} else if ((v = opt_value(arg, "--policy"))) {
			a->opts.policy_file = v;
		} else if (policy_format_option(arg, &bad)) {
			if (bad)
				return run_fail(RUN_EXIT_SANDPIT, "%s: expected minijail or sandpit", arg);
		} else if ((v = opt_value(arg, "--allow-read")) || (v = opt_value(arg, "--allow-write"))) {
			int w = arg[8] == 'w';
			if (!*v)
				return run_fail(RUN_EXIT_SANDPIT, "%s needs a path", arg);
			if ((w ? a->nwrite : a->nread) >= MAX_GRANTS)
				return run_fail(RUN_EXIT_SANDPIT, "more than %d grants", MAX_GRANTS);
			if (w)
				a->write[a->nwrite++] = v;
			else
				a->read[a->nread++] = v;
		} else if ((v = opt_value(arg, "--allow-connect"))) {
			if (!*v)
				return run_fail(RUN_EXIT_SANDPIT, "%s needs ADDR:PORT", arg);
			if (a->nconnect >= MAX_GRANTS)
				return run_fail(RUN_EXIT_SANDPIT, "more than %d connect grants", MAX_GRANTS);
			a->connect[a->nconnect++] = v;
		} else if ((v = opt_value(arg, "--log"))) {
			if (strcmp(v, "denials"))
				return run_fail(RUN_EXIT_SANDPIT, "--log=%s: only --log=denials is known", v);
			a->log_denials = 1;
		} else if ((v = opt_value(arg, "--log-format"))) {
			if (strcmp(v, "text") && strcmp(v, "json"))
				return run_fail(RUN_EXIT_SANDPIT, "--log-format=%s: expected text or json", v);
			a->log_json = !strcmp(v, "json");
		} else {
			return run_fail(RUN_EXIT_SANDPIT, "unknown option '%s' (see sandpit run --help)", arg);
		}
	}
	if (i >= argc)
		return run_fail(RUN_EXIT_SANDPIT, "no program given (see sandpit run --help)");
	a->prog = argv + i;
	return 0;
}

int run_find_program(const char *name, char *out, size_t outlen)
{
	if (strchr(name, '/')) {
		if (snprintf(out, outlen, "%s", name) >= (int)outlen)
			return -ENAMETOOLONG;
		return access(out, F_OK) ? -errno : 0;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	int err = -ENOENT;
	for (const char *p = path; *p;) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		struct stat st;
		if (snprintf(out, outlen, "%.*s/%s", (int)n, n ? p : ".", name) < (int)outlen &&
		    !stat(out, &st) && S_ISREG(st.st_mode)) {
			if (!access(out, X_OK))
				return 0;
			err = -EACCES;
		}
		p += n + (e ? 1 : 0);
	}
	return err;
}

static int open_program(const char *path, const char *shown)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -run_fail(errno == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_CANNOT, "%s: %s", shown,
				 strerror(errno));
	if (access(path, X_OK)) {
		close(fd);
		return -run_fail(RUN_EXIT_CANNOT, "%s: not executable", shown);
	}
	return fd;
}

/* A #! line: the interpreter and at most one argument, as the kernel reads it. */
static int read_shebang(int fd, char *interp, size_t ilen, char *arg, size_t alen)
{
	char line[256];
	ssize_t n = pread(fd, line, sizeof line - 1, 0);
	if (n < 2 || line[0] != '#' || line[1] != '!')
		return 0;
	line[n] = 0;
	char *nl = strchr(line, '\n');
	if (!nl && n == sizeof line - 1)
		return -1;
	if (nl)
		*nl = 0;
	char *p = line + 2;
	p += strspn(p, " \t");
	size_t il = strcspn(p, " \t");
	if (!il || il >= ilen)
		return -1;
	memcpy(interp, p, il);
	interp[il] = 0;
	p += il;
	p += strspn(p, " \t");
	size_t al = strlen(p);
	while (al && (p[al - 1] == ' ' || p[al - 1] == '\t'))
		al--;
	if (al >= alen)
		return -1;
	memcpy(arg, p, al);
	arg[al] = 0;
	return 1;
}

/* The file's size is read before anything of it is mapped, but someone
 * who cuts the file short meanwhile makes the loader's touch of its last
 * page a SIGBUS: that is a program that cannot be loaded, not one that
 * died of a signal. */
static void cut_short(int sig)
{
	static const char msg[] = "sandpit: the program was cut short while it was loaded\n";
	ssize_t n = write(2, msg, sizeof msg - 1);

	(void)sig;
	(void)n;
	_exit(RUN_EXIT_CANNOT);
}

static int wait_child(pid_t child, int may_filter)
{
	int status;
	signal(SIGINT, SIG_IGN); /* the terminal sends it to the child as well */
	signal(SIGQUIT, SIG_IGN);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return run_fail(RUN_EXIT_SANDPIT, "waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS && may_filter)
		/* every call a policy refuses or kills is named (by the entry or
		 * T, through B); only the filter's kill of another architecture
		 * is the kernel's alone, and its siginfo dies with P */
		fprintf(stderr, "sandpit: killed by SIGSYS: a system call made with int $0x80 or "
				"an x32 number, which filter mode kills without naming it (or the "
				"program's own SIGSYS)\n");
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* The trusted process B (P's sibling: clone(CLONE_PARENT)) and the
 * notifier N (an orphan, which the command takes in as the run's
 * subreaper) end once P has; they are reaped here, so that nothing of the
 * run outlives the command: B ended about a millisecond after it, and
 * under a PID 1 that reaps nothing (a container's, this machine's) each
 * run left two zombies for good.  A blocking wait, each one as it ends;
 * bounded by an alarm: one still there after 5 s is said and left to
 * init. */
#define REAP_S 5
static volatile sig_atomic_t reap_late;
static void reap_alarm(int sig)
{
	(void)sig;
	reap_late = 1;
}

static void reap_helpers(void)
{
	struct sigaction sa = { .sa_handler = reap_alarm }; /* no SA_RESTART: the wait ends */
	sigaction(SIGALRM, &sa, NULL);
	alarm(REAP_S);
	pid_t r;
	while ((r = waitpid(-1, NULL, __WALL)) > 0 || (r < 0 && errno == EINTR && !reap_late))
		;
	alarm(0);
	if (reap_late)
		fprintf(stderr, "sandpit: a process of sandpit's has not ended %d s after the "
				"program; left running\n",
			REAP_S);
}

/* Without --log, a program that fails after refusals gets one closing
 * line: how many, the first, what refused it and what would allow it.
 * The count is B's (user/trusted/denial_log.c), written to a pipe whose writing
 * end P closed before the program ran, and whose reading end it never
 * held. */
static void put_entry(const char *which, struct denial_entry *e)
{
	e->call[sizeof(e->call) - 1] = e->decided[sizeof(e->decided) - 1] = 0;
	e->builtin[sizeof(e->builtin) - 1] = e->allow[sizeof(e->allow) - 1] = 0;
	fprintf(stderr, "; %s: %s, by %s%s%s%s", which, e->call, e->decided, e->builtin[0] ? " (" : "",
		e->builtin, e->builtin[0] ? ")" : "");
}

static void closing_line(int fd)
{
	struct denial_report r = { 0 };
	size_t got = 0;
	/* B writes it when it sees P end, then exits: at most a moment */
	while (got < sizeof(r)) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		if (poll(&pfd, 1, 2000) <= 0)
			return;
		ssize_t n = read(fd, (char *)&r + got, sizeof(r) - got);
		if (n <= 0)
			return;
		got += (size_t)n;
	}
	if (r.magic != DENIAL_REPORT_MAGIC || r.size != sizeof(r) || !r.count)
		return;
	fprintf(stderr, "sandpit: %llu call%s refused", (unsigned long long)r.count,
		r.count == 1 ? "" : "s");
	put_entry("the first", &r.first);
	/* the last is the one nearest the failure */
	if (r.count > 1)
		put_entry("the last", &r.last);
	/* a hint is named with the refusal it is for: the last's, else the
	 * first's (a refusal no grant allows has none, and gets none) */
	const char *allow = r.last.allow[0] ? r.last.allow : r.first.allow;
	if (*allow)
		fprintf(stderr, "; %s would allow %s", allow,
			r.count == 1 ? "it" : r.last.allow[0] ? "the last" : "the first");
	fprintf(stderr, "; --log=denials explains %s\n", r.count == 1 ? "it" : "each");
}

/* Our own auxiliary vector with the program's values in it. */
static int make_auxv(uint64_t *out, const struct elf_image *prog, const struct elf_image *interp,
		     const char *execfn, uint8_t random[16])
{
	uint64_t own[2 * ELF_MAX_AUXV];
	int fd = open("/proc/self/auxv", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, own, sizeof own - 16);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	size_t k = 0;
	for (size_t i = 0; 2 * i + 1 < (size_t)n / 8 && own[2 * i] != AT_NULL; i++) {
		uint64_t t = own[2 * i], v = own[2 * i + 1];
		switch (t) {
		case AT_PHDR: v = prog->phdr; break;
		case AT_PHNUM: v = prog->phnum; break;
		case AT_PHENT: v = sizeof(Elf64_Phdr); break;
		case AT_ENTRY: v = prog->entry; break;
		case AT_BASE: v = interp ? interp->bias : 0; break;
		case AT_EXECFN: v = (uint64_t)(uintptr_t)execfn; break;
		case AT_RANDOM: v = (uint64_t)(uintptr_t)random; break;
		case AT_EXECFD: continue;
		}
		out[k++] = t;
		out[k++] = v;
	}
	out[k++] = AT_NULL;
	out[k] = 0;
	return 0;
}

/* The program's own name, argv, environment and auxiliary vector where the
 * kernel shows a process its own (/proc/self/comm, stat, cmdline,
 * environ, auxv), not sandpit's: the name as execve would set it (the
 * basename of what it executed), the rest where the program's stack will
 * hold them (st).  The other fields PR_SET_MM_MAP takes are kept as they
 * are, from /proc/self/stat and brk.  Without PR_SET_MM_MAP (a kernel
 * built without CHECKPOINT_RESTORE, or SANDPIT_KERNEL=no-mm-map) only the
 * name is the program's; a failure is said, and changes nothing else. */
static void show_the_program(const struct elf_stack *st, const char *executed)
{
	const char *base = strrchr(executed, '/');
	prctl(PR_SET_NAME, base ? base + 1 : executed, 0, 0, 0);
	if (!compat_has(COMPAT_MM_MAP))
		return;
	/* fields 26-28 and 45-51 (proc(5)), after the ')' that ends the name */
	char buf[1024];
	unsigned long long f[52] = { 0 };
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (fd >= 0)
		close(fd);
	if (n > 0)
		buf[n] = '\0';
	char *p = n > 0 ? strrchr(buf, ')') : NULL, *save = NULL;
	int k = 2;
	for (char *t = p ? strtok_r(p + 1, " ", &save) : NULL; t && k < 51; t = strtok_r(NULL, " ", &save))
		f[++k] = strtoull(t, NULL, 10);
	struct prctl_mm_map m = {
		.start_code = f[26], .end_code = f[27], .start_stack = st->block,
		.start_data = f[45], .end_data = f[46], .start_brk = f[47],
		.brk = (uint64_t)syscall(SYS_brk, 0),
		.arg_start = st->arg_start, .arg_end = st->arg_end,
		.env_start = st->env_start, .env_end = st->env_end,
		.auxv = (__u64 *)st->auxv, .auxv_size = (uint32_t)st->auxv_bytes,
		.exe_fd = (uint32_t)-1,
	};
	if (k < 51 || prctl(PR_SET_MM, PR_SET_MM_MAP, &m, sizeof m, 0) < 0)
		fprintf(stderr, "sandpit: /proc/self/cmdline will show sandpit's, not %s's: %s\n",
			executed, k < 51 ? "/proc/self/stat unreadable" : strerror(errno));
}

/* The plan cache: plan one library the sandboxed program named (only a
 * name: an untrusted hint), from the file, in a process of its own, so
 * that a file cut short under it (SIGBUS) costs nothing but its plan. */
static int plan_one(const char *path)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		struct elf_image img;
		char err[256];
		int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

		if (fd < 0 || elf_map(fd, path, &img, err, sizeof err))
			_exit(1);
		_exit(sandpit_plan_image(img.bias, img.phdr, img.phnum) ? 1 : 0);
	}
	while (pid > 0 && waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return pid > 0 && WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

int run_main(int argc, char **argv)
{
	struct run_args a;
	char path[PATH_MAX], given[PATH_MAX], interp_path[PATH_MAX], script[PATH_MAX];
	char sb_interp[PATH_MAX], sb_arg[PATH_MAX], scratch[PATH_MAX];
	int r = parse(argc, argv, &a);
	if (r)
		return r;
	say_read_links(&a);
	if ((r = run_find_program(a.prog[0], path, sizeof path)) < 0)
		return run_fail(r == -ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_CANNOT, "%s: %s", a.prog[0],
				r == -EACCES ? "not executable" : strerror(-r));

	int fd = open_program(path, a.prog[0]);
	if (fd < 0)
		return -fd;

	/* argv the program sees; a script's interpreter comes first */
	size_t n = 0;
	while (a.prog[n])
		n++;
	/* static: it is the program's for the life of the process */
	static char **pargv;
	pargv = calloc(n + 3, sizeof *pargv);
	if (!pargv)
		return run_fail(RUN_EXIT_SANDPIT, "out of memory");
	int sb = read_shebang(fd, sb_interp, sizeof sb_interp, sb_arg, sizeof sb_arg);
	if (sb < 0)
		return run_fail(RUN_EXIT_CANNOT, "%s: bad #! line", a.prog[0]);
	if (sb) {
		size_t k = 0;
		close(fd);
		/* the interpreter opens the script inside the sandbox */
		if (!realpath(path, script))
			return run_fail(RUN_EXIT_CANNOT, "%s: %s", path, strerror(errno));
		a.read[a.nread++] = script;
		pargv[k++] = sb_interp;
		if (*sb_arg)
			pargv[k++] = sb_arg;
		snprintf(given, sizeof given, "%s", path);
		pargv[k++] = given;
		for (size_t i = 1; i < n; i++)
			pargv[k++] = a.prog[i];
		snprintf(path, sizeof path, "%s", sb_interp);
		if ((fd = open_program(path, sb_interp)) < 0)
			return -fd;
		if (read_shebang(fd, scratch, sizeof scratch, scratch, sizeof scratch))
			return run_fail(RUN_EXIT_CANNOT, "%s: the interpreter is itself a script", sb_interp);
	} else {
		memcpy(pargv, a.prog, n * sizeof *pargv);
	}
	a.opts.allow_read = a.read;
	a.opts.allow_write = a.write;
	if (a.nconnect) {
		a.opts.allow_connect = a.connect;
		a.opts.flags |= SANDPIT_OPT_CONNECT;
	}

	const char *log_env = getenv("SANDPIT_LOG");
	int logging = a.log_denials || (log_env && !strcmp(log_env, "denials"));
	int report[2] = { -1, -1 };
	if (!logging && pipe2(report, O_CLOEXEC) < 0)
		report[0] = report[1] = -1;
	/* where the run-time patcher names the libraries it had to plan */
	void *hints = mmap(NULL, SANDPIT_PLAN_HINT_BYTES, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fflush(NULL);
	/* N, made an orphan at start, comes to the command (reap_helpers);
	 * not inherited by the child */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid_t child = fork();
	if (child < 0)
		return run_fail(RUN_EXIT_SANDPIT, "fork: %s", strerror(errno));
	if (child) {
		if (report[1] >= 0)
			close(report[1]);
		const char *env_mode = a.mode_given ? NULL : getenv("SANDPIT_MODE");
		int strict = a.opts.mode == SANDPIT_MODE_STRICT ||
			     (env_mode && !strcmp(env_mode, "strict"));
		int status = wait_child(child, !strict);
		reap_helpers();
		if (report[0] >= 0 && status != 0)
			closing_line(report[0]);
		if (hints != MAP_FAILED)
			sandpit_plan_cache_parent(path, hints, plan_one);
		return status;
	}
	sandpit_plan_cache_child(fd, hints != MAP_FAILED ? hints : NULL);
	if (report[0] >= 0)
		close(report[0]); /* the program never reads B's count */

	/* the child becomes the program */
	struct elf_image prog, interp;
	char err[512];
	signal(SIGBUS, cut_short);
	if ((r = elf_map(fd, pargv[0], &prog, err, sizeof err)))
		return run_fail(r == ELF_ERR_NOEXEC ? RUN_EXIT_CANNOT : RUN_EXIT_SANDPIT, "%s", err);
	/* the file mapped is the one the program's /proc/self/exe names, as
	 * execve would have made it: B answers for it from this descriptor */
	sandpit_program_file(fd);
	close(fd);
	if (prog.interp[0]) {
		snprintf(interp_path, sizeof interp_path, "%s", prog.interp);
		int ifd = open(interp_path, O_RDONLY | O_CLOEXEC);
		if (ifd < 0)
			return run_fail(RUN_EXIT_CANNOT, "%s: interpreter %s: %s", pargv[0], interp_path,
					strerror(errno));
		char iname[PATH_MAX + 64];
		snprintf(iname, sizeof iname, "%s: interpreter %s", pargv[0], interp_path);
		if ((r = elf_map(ifd, iname, &interp, err, sizeof err)))
			return run_fail(r == ELF_ERR_NOEXEC ? RUN_EXIT_CANNOT : RUN_EXIT_SANDPIT, "%s", err);
		close(ifd);
		if (interp.interp[0])
			return run_fail(RUN_EXIT_CANNOT, "%s: the interpreter has an interpreter", interp_path);
	}
	signal(SIGBUS, SIG_DFL);

	static uint64_t auxv[2 * ELF_MAX_AUXV + 2];
	static uint8_t random[16];
	if (getrandom(random, sizeof random, 0) != sizeof random ||
	    make_auxv(auxv, &prog, prog.interp[0] ? &interp : NULL, sb ? given : path, random) < 0)
		return run_fail(RUN_EXIT_SANDPIT, "cannot build the auxiliary vector");

	/* the program's environment as it is; an explicit --mode wins over
	 * $SANDPIT_MODE, which sandpit_start would otherwise obey */
	size_t envc = 0;
	while (environ[envc])
		envc++;
	char **penv = calloc(envc + 1, sizeof *penv);
	if (!penv)
		return run_fail(RUN_EXIT_SANDPIT, "out of memory");
	memcpy(penv, environ, envc * sizeof *penv);
	if (a.mode_given)
		unsetenv("SANDPIT_MODE");
	if (a.log_denials)
		setenv("SANDPIT_LOG", "denials", 1);
	if (a.log_json)
		setenv("SANDPIT_LOG_FORMAT", "json", 1);
	if (report[1] >= 0) {
		char n[16];
		snprintf(n, sizeof n, "%d", report[1]);
		setenv("SANDPIT_REPORT_FD", n, 1);
	}

	if (a.opts.policy_file)
		say_translated(a.opts.policy_file);

	static struct elf_stack stack;
	if (elf_stack_plan(&stack, pargv, penv, auxv) < 0)
		return run_fail(RUN_EXIT_SANDPIT, "cannot build the auxiliary vector");
	show_the_program(&stack, sb ? given : path);

	/* sandpit's own libraries never run again in this process */
	sandpit_patch_only(prog.lo, prog.hi);
	if (prog.interp[0])
		sandpit_patch_only(interp.lo, interp.hi);
	/* this command's parent (above) waits for the child by its pid */
	sandpit_trusted_process_as_sibling();
	if ((r = sandpit_start(&a.opts)) < 0)
		return run_fail(RUN_EXIT_SANDPIT, "%s", sandpit_error());
	elf_stack_enter(&stack, prog.interp[0] ? interp.entry : prog.entry);
}
