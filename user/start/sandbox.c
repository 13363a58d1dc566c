/* sandpit_start and the rest of the public API (include/sandpit.h): set up
 * B, S, T and the patched entry, then put the calling thread into seccomp
 * strict mode or under the policy's filter.  The steps are here, in
 * order; the memory, the CPUs, the patching and the failing are in the
 * files user/start/start.h names. */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/auxv.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <asm/prctl.h>

#include <seccomp.h>

#include "sandpit.h"
#include "compat/compat.h"
#include "policy/policy.h"
#include "policy/t_table.h"
#include "user/start/caps.h"
#include "user/start/notifier.h"
#include "user/patch/patch.h"
#include "user/patch/plan_cache.h"
#include "user/untrusted/runtime.h"
#include "user/start/sandbox.h"
#include "user/trusted/fs_base.h"
#include "user/layout/slots.h"
#include "user/start/start.h"
#include "user/start/start_policy.h"
#include "user/trusted/slot_init.h"
#include "user/trusted/trusted_process.h"


static int started;
static enum sandpit_mode mode_in_force = SANDPIT_MODE_NONE;


enum sandpit_mode sandpit_mode(void) { return mode_in_force; }

int sandpit_supported(void)
{
	return compat_init(NULL, 0) == 0 && compat_has(COMPAT_STRICT);
}

size_t sandpit_slot_bytes(void) { return 2 * SM_PAGE + SM_ALT_SIZE; }

/* strict, filter or auto (filter if the kernel has seccomp-bpf with
 * SECCOMP_RET_TRAP, else strict); asking for filter mode where it cannot
 * run is an error, never a quiet strict or unsandboxed run */
static int resolve_mode(const struct sandpit_options *o, enum sandpit_mode *out, int *chosen)
{
	enum sandpit_mode m = o ? o->mode : SANDPIT_MODE_AUTO;
	const char *env = getenv("SANDPIT_MODE");
	char cerr[256];
	if (env && *env) {
		if (!strcmp(env, "strict"))
			m = SANDPIT_MODE_STRICT;
		else if (!strcmp(env, "filter"))
			m = SANDPIT_MODE_FILTER;
		else if (!strcmp(env, "auto"))
			m = SANDPIT_MODE_AUTO;
		else
			return start_fail(-EINVAL, "SANDPIT_MODE=%s: expected strict, filter or auto", env);
	}
	if (m != SANDPIT_MODE_AUTO && m != SANDPIT_MODE_STRICT && m != SANDPIT_MODE_FILTER)
		return start_fail(-EINVAL, "unknown mode %d", (int)m);
	int r = compat_init(cerr, sizeof(cerr));
	if (r < 0)
		return start_fail(r, "%s", cerr);
	int filter_ok = compat_has(COMPAT_FILTER) && compat_has(COMPAT_RET_TRAP);
	if (m == SANDPIT_MODE_FILTER && !filter_ok) {
		const char *k = getenv("SANDPIT_KERNEL");
		return start_fail(-EOPNOTSUPP,
			    "filter mode needs seccomp-bpf with SECCOMP_RET_TRAP, which this kernel %s",
			    k && *k ? "has turned off (SANDPIT_KERNEL)" : "lacks");
	}
	if (!compat_has(COMPAT_STRICT))
		return start_fail(-ENOSYS, "this kernel has no seccomp strict mode");
	*out = m == SANDPIT_MODE_AUTO ? (filter_ok ? SANDPIT_MODE_FILTER : SANDPIT_MODE_STRICT) : m;
	*chosen = m == SANDPIT_MODE_AUTO;
	/* under someone else's filter already (systemd, a container): strict
	 * mode can no longer be entered, and finding out after T exists would
	 * cost the process its life */
	if (*out == SANDPIT_MODE_STRICT && prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2)
		return start_fail(-EPERM, "this process already runs under a seccomp filter, so strict mode "
				    "cannot be entered; use filter mode");
	return 0;
}

static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -errno;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}



static int b_sibling; /* sandpit_trusted_process_as_sibling */

void sandpit_trusted_process_as_sibling(void) { b_sibling = 1; }

static int program_fd = -1; /* sandpit_program_file */

void sandpit_program_file(int fd)
{
	if (program_fd >= 0)
		close(program_fd);
	program_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
}



static long raw(long nr, long a0, long a1, long a2, long a3, long a4)
{
	return sandpit_raw_syscall6(nr, a0, a1, a2, a3, a4, 0);
}

/* One of sandpit's own handlers, with its own restorer; after the point of
 * no return, so a failure kills the process. */
static void install_handler(int sig, void (*fn)(int, void *, void *), unsigned long flags,
			    uint64_t mask, const char *what)
{
	struct k_sigaction sa = { (uint64_t)(uintptr_t)fn, SA_SIGINFO | SANDPIT_SA_RESTORER | flags,
				  (uint64_t)(uintptr_t)sandpit_restorer, mask };
	long r = raw(SYS_rt_sigaction, sig, (long)&sa, 0, 8, 0);
	if (r < 0)
		start_die(what, r);
}

static struct policy *policy;
static struct trusted_process_config tp;



/* the signals the caller had handlers for as it called (SigCgt) */
static uint64_t caught_before = ~0ull;

/* B reads P and its threads in /proc under the numbers they see as their
 * pids, and a grant of /proc/self means /proc/<P's pid>: a /proc of
 * another pid namespace (one made without a /proc of its own) shows other
 * processes under those numbers, the grant would reach them, and B would
 * watch them.  The kernel's /proc/self link says which number /proc gives
 * this process.  *threads: its threads, from the status file it reads (0
 * where it has no Threads line). */
static int proc_is_ours(int *threads)
{
	char b[32];
	struct statfs sf;
	/* a procfs at all (a tmpfs there could hold any self link) */
	int bad = statfs("/proc", &sf) < 0 ? errno : sf.f_type != PROC_SUPER_MAGIC ? -1 : 0;
	if (bad)
		return start_fail(-EOPNOTSUPP, "sandpit_start: /proc is no procfs (%s)",
				  bad > 0 ? strerror(bad) : "another file system");
	ssize_t n = readlink("/proc/self", b, sizeof(b) - 1);
	if (n < 0)
		return start_fail(-errno, "sandpit_start: /proc/self: %s", strerror(errno));
	b[n] = 0;
	if (strtol(b, NULL, 10) != getpid())
		return start_fail(-EOPNOTSUPP,
				  "sandpit_start: /proc is of another pid namespace (it names this process "
				  "%s, not %d): mount a /proc of this one (unshare --pid --fork --mount-proc)",
				  b, (int)getpid());
	/* the number alone can match: clone3's set_tid gives a process the
	 * same pid in its namespace and the one above, whose /proc it may
	 * still have (its threads' tids then differ).  NSpid lists this
	 * process's pids from /proc's namespace down to its own: one field
	 * when they are the same namespace (no line before Linux 4.1) */
	/* read to its end: a long Groups line (hundreds of groups) put NSpid
	 * past one 4 KiB read, and the check was skipped as on a kernel
	 * without the line */
	static char st[65536];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n1 = 0;
	while (fd >= 0 && got < sizeof(st) - 1 &&
	       ((n1 = read(fd, st + got, sizeof(st) - 1 - got)) > 0 || (n1 < 0 && errno == EINTR)))
		got += n1 > 0 ? (size_t)n1 : 0;
	int whole = fd >= 0 && n1 == 0, err = fd < 0 || n1 < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	if (err) /* no descriptor left (RLIMIT_NOFILE), say */
		return start_fail(-err, "sandpit_start: /proc/self/status: %s", strerror(err));
	st[got] = 0;
	/* the threads, from the same read (else counted in /proc/self/task):
	 * only a line read whole, its newline in the buffer.  A read cut
	 * inside the number (a long Groups line puts it at the 4095th byte)
	 * would give 1 for 12 */
	const char *th = strstr(st, "\nThreads:\t");
	char *th_end = NULL;
	long th_n = th ? strtol(th + 10, &th_end, 10) : 0;
	*threads = th && *th_end == '\n' && th_n > 0 && th_n < INT_MAX ? (int)th_n : 0;
	/* the signals with a handler (keep_handlers), from the same read: a
	 * line read whole, else every signal asked */
	const char *cg = strstr(st, "\nSigCgt:\t");
	char *cg_end = NULL;
	unsigned long long cg_v = cg ? strtoull(cg + 9, &cg_end, 16) : 0;
	caught_before = cg && cg_end == cg + 9 + 16 && *cg_end == '\n' ? cg_v : ~0ull;
	const char *ns = strstr(st, "\nNSpid:");
	if (!ns && !whole)
		return start_fail(-EOPNOTSUPP, "sandpit_start: /proc/self/status is longer than sandpit "
				  "reads (%zu bytes): cannot tell its pid namespace", got);
	if (ns) {
		ns += 7;
		int fields = 0;
		const char *c = ns;
		for (; *c && *c != '\n'; c++)
			if (*c != ' ' && *c != '\t' && (c == ns || c[-1] == ' ' || c[-1] == '\t'))
				fields++;
		if (!*c && !whole) /* the line cut by the buffer's end */
			fields = -1;
		if (fields != 1)
			return start_fail(-EOPNOTSUPP,
					  "sandpit_start: /proc is of another pid namespace (NSpid shows "
					  "%d levels): mount a /proc of this one (unshare --pid --fork --mount-proc)",
					  fields);
	}
	return 0;
}

/* Single thread, a mode that can run, grants the kernel can
 * keep, a /proc of this process's own. */
static int check_caller(struct start *s)
{
	const struct sandpit_options *opts = s->opts;
	int r;

	if ((r = resolve_mode(opts, &s->mode, &s->auto_chose)) < 0)
		return r;
	if (opts && (opts->flags & ~SANDPIT_OPT_CONNECT))
		return start_fail(-EINVAL, "sandpit_start: unknown flags 0x%x",
				  opts->flags & ~SANDPIT_OPT_CONNECT);
	/* in a write grant U can swap a directory for a symlink between B's
	 * check and the open; only openat2's RESOLVE_NO_SYMLINKS stops that */
	if (opts && opts->allow_write && opts->allow_write[0] && !compat_has(COMPAT_OPENAT2))
		return start_fail(-EOPNOTSUPP, "write grants (%s) need openat2, which this kernel %s",
			    opts->allow_write[0],
			    getenv("SANDPIT_KERNEL") ? "has turned off (SANDPIT_KERNEL)" : "lacks");
	int threads = 0;
	if ((r = proc_is_ours(&threads)) < 0)
		return r;
	/* a failure to count (no /proc, no descriptor left) is not a count */
	if ((r = threads > 0 ? threads : count_threads()) < 0)
		return start_fail(r, "sandpit_start: cannot count this process's threads in /proc/self/task: %s",
			    strerror(-r));
	if (r != 1)
		return start_fail(-EBUSY, "sandpit_start: %d threads exist; call it before creating any", r);
	return 0;
}

static int has_connects(const struct sandpit_options *opts)
{
	return opts && (opts->flags & SANDPIT_OPT_CONNECT) && opts->allow_connect &&
	       opts->allow_connect[0];
}

/* The connect grants, which only B can apply.  The default policy's
 * socket (AF_UNIX only) becomes B's, which allows AF_INET and AF_INET6
 * with a grant; a policy file must say `process` for socket and connect
 * itself: otherwise the grants would go unused, and the program would run
 * without what its caller asked for; and for setsockopt (or deny it),
 * whose source route would take a granted connection elsewhere. */
static int add_connects(struct start *s)
{
	const struct sandpit_options *opts = s->opts;
	if (!has_connects(opts))
		return 0;
	int r = policy_add_connects(policy, opts->allow_connect, s->perr, sizeof(s->perr));
	if (r == 0 && !opts->policy_file) {
		static const struct policy_proc_arg net = { .kind = PK_NET,
			.path_arg = POLICY_NOARG, .dirfd_arg = POLICY_NOARG, .flags_arg = POLICY_NOARG };
		r = policy_set_process(policy, "socket", &net, s->perr, sizeof(s->perr));
	}
	/* and setsockopt, whose source route would send packets elsewhere
	 * first, unless the file denies it */
	const struct policy_proc_arg *sock = policy_proc_arg(policy, SYS_socket),
				     *conn = policy_proc_arg(policy, SYS_connect),
				     *sopt = policy_proc_arg(policy, SYS_setsockopt);
	const struct policy_call *sc = policy_call(policy, SYS_setsockopt);
	int sopt_ok = (sopt && sopt->kind == PK_NET) ||
		      (sc && (sc->cls == POLICY_DENY || sc->cls == POLICY_KILL));
	if (r == 0 && (!sock || sock->kind != PK_NET || !conn || conn->kind != PK_NET || !sopt_ok)) {
		snprintf(s->perr, sizeof(s->perr),
			 "--allow-connect=%s needs a policy whose socket, connect and setsockopt "
			 "are 'process' (this one's %s)", opts->allow_connect[0],
			 !sock || sock->kind != PK_NET ? "socket is not"
			 : !conn || conn->kind != PK_NET ? "connect is not" : "setsockopt is not");
		r = -EINVAL;
	}
	if (r < 0)
		return start_fail(r, "policy: %s", s->perr);
	return 0;
}

/* The policy: the caller's file, or the default, with the grants. */
static int build_policy(struct start *s)
{
	const struct sandpit_options *opts = s->opts;
	int r;

	if (opts && opts->policy_file) {
		/* the parser's message is "FILE:LINE:COL: ..." */
		r = policy_new_file(&policy, opts->policy_file, opts->allow_read, opts->allow_write,
				    s->perr, sizeof(s->perr));
		if (r < 0)
			return start_fail(r, "%s", s->perr);
		for (size_t i = 0; i < policy_ngrants(policy); i++) {
			const struct policy_grant *g = policy_grant_at(policy, i);
			if (g->writable && !g->exact && !compat_has(COMPAT_OPENAT2)) {
				return start_fail(-EOPNOTSUPP, "%s: the write grant %s needs openat2, "
						  "which this kernel %s", opts->policy_file, g->path,
						  getenv("SANDPIT_KERNEL") ? "has turned off (SANDPIT_KERNEL)"
									   : "lacks");
			}
		}
		/* read, write, exit and rt_sigreturn reach the kernel past the
		 * patcher in strict mode: only `allow` of them holds there */
		if (s->mode == SANDPIT_MODE_STRICT &&
		    (r = policy_strict_check(policy, opts->policy_file, NULL, NULL, s->perr,
					     sizeof(s->perr))) < 0) {
			return start_fail(r, "%s%s", s->perr,
				    !s->auto_chose ? ""
				    : getenv("SANDPIT_KERNEL") && *getenv("SANDPIT_KERNEL")
					    ? " (auto mode chose strict: SANDPIT_KERNEL has turned "
					      "seccomp-bpf off)"
					    : " (auto mode chose strict: this kernel lacks seccomp-bpf)");
		}
	} else {
		r = policy_new_default(&policy, opts ? opts->allow_read : NULL,
				       opts ? opts->allow_write : NULL, s->perr, sizeof(s->perr));
		if (r < 0)
			return start_fail(r, "policy: %s", s->perr[0] ? s->perr : strerror(-r));
	}
	if ((r = add_connects(s)) < 0)
		return r;
	/* the plan cache is outside every grant, whatever the policy says */
	s->perr[0] = 0;
	if ((r = deny_plan_cache(policy, s->perr, sizeof(s->perr))) < 0)
		return start_fail(r, "policy: %s", s->perr[0] ? s->perr : strerror(-r));
	return 0;
}

/* The T table, in a sealed memfd. */
static int build_table(struct start *s)
{
	int r = make_table(policy, &s->table, &s->table_len, s->perr, sizeof(s->perr));

	if (r < 0)
		return start_fail(r, "cannot build the T table: %s", s->perr[0] ? s->perr : strerror(-r));
	/* the path argument of each call B checks a path of, for U's entry to
	 * send with the request (MB_PATH; only a hint: B uses the copy only
	 * for the argument it reads itself) */
	for (int nr = 0; nr < TT_MAX_NR; nr++) {
		const struct policy_proc_arg *pa = policy_proc_arg(policy, nr);
		sandpit_u_path_arg[nr] = pa && pa->kind == PK_PATH && pa->path_arg >= 0 &&
							 pa->path_arg < 6 ?
						 (unsigned char)pa->path_arg :
						 0xff;
	}
	return 0;
}


/* Under SANDPIT_DEBUG: where sandpit's descriptors are, and, when the
 * hard limit left no room above the program's soft limit, how many
 * numbers below it the program lost to them. */
static void debug_nofile(const struct start *s)
{
	const struct slots_place *pl = &s->place;
	unsigned long long soft = (unsigned long long)pl->limit.rlim_cur;
	unsigned long long hard = (unsigned long long)pl->limit.rlim_max;

	if (pl->above)
		fprintf(stderr,
			"sandpit: descriptors %d..%d (%d thread slots), at or above the program's "
			"RLIMIT_NOFILE %llu (hard %llu): all its numbers are its own\n",
			s->fd_lo, s->fd_hi, s->nslots, soft, hard);
	else
		fprintf(stderr,
			"sandpit: descriptors %d..%d (%d thread slots) lie BELOW the program's "
			"RLIMIT_NOFILE %llu: its hard limit %llu leaves no room above; the "
			"program has %d fewer descriptors than its limit says\n",
			s->fd_lo, s->fd_hi, s->nslots, soft, hard, s->fd_hi - s->fd_lo + 1);
}

/* P's end of T<->B and B's, slot 0's eventfds (T's never blocks: T polls
 * it) and /proc/self/maps, moved to sandpit's block of descriptors; the
 * other slots' are made once B is started (make_slot_descriptors), so that
 * B neither copies nor closes two thousand eventfds.  The maps are opened
 * here, outside the sandbox, so that the run-time patcher's reads ask
 * nothing of the policy: a policy without a read grant for /proc/self would
 * leave code mapped later unpatched (strict mode then kills it).  From here
 * until make_slot_descriptors the soft RLIMIT_NOFILE may be raised
 * (user/layout/slots.h); sandpit_start puts it back on every way out. */
static int make_descriptors(struct start *s)
{
	int r;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s->fds) < 0)
		return start_fail(-errno, "socketpair: %s", strerror(errno));
	if ((s->fds[2] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    (s->fds[3] = eventfd(0, EFD_CLOEXEC)) < 0)
		return start_fail(-errno, "eventfd: %s", strerror(errno));
	if ((s->fds[4] = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)) < 0)
		return start_fail(-errno, "/proc/self/maps: %s", strerror(errno));
	s->fd_lo = -1;
	if ((r = slots_place_fds(s->fds, &s->place)) < 0)
		return start_fail(r, "cannot place sandpit's descriptors: %s", strerror(-r));
	s->fd_lo = s->place.fd_lo;
	s->nslots = s->place.nslots;
	s->tb_fd = s->fds[0];
	s->b_fd = s->fds[1];
	s->maps_fd = s->fds[4];
	s->fd_hi = s->maps_fd;
	if (getenv("SANDPIT_DEBUG"))
		debug_nofile(s);
	return 0;
}


/* T's configuration in slot 0's secure page (filter mode: the filter too),
 * B's configuration, and slot 0 for the calling thread. */
static int configure(struct start *s)
{
	struct secure_page *sp = s->sp;
	struct mailbox *mb = s->mb;
	int r;

	s->pid = getpid();
	s->tid = (pid_t)syscall(SYS_gettid);
	sp->tb_fd = s->tb_fd;
	sp->pass_fd = s->b_fd; /* P's end of the hand-over, once B is started */
	sp->maps_fd = s->maps_fd;
	sp->fd_lo = s->fd_lo;
	sp->fd_hi = s->fd_hi;
	sp->tids = (uint64_t)(uintptr_t)((char *)sp + (size_t)SM_NSLOTS * SM_PAGE);
	start_cpu_masks(sp, s->mode);
	sp->pid = s->pid;
	sp->spin = start_spin();
	sp->table = (uint64_t)(uintptr_t)s->table;
	/* U's wake-ups and sleeps on its eventfds, and B's socket, pass the
	 * filter whatever the policy says of read and write (policy.h) */
	struct policy_runtime rt = { .pid = s->pid, .fd_lo = s->fd_lo, .fd_hi = s->fd_hi,
				     .own_tb = s->tb_fd, .own_t = slots_t_fd(s->fd_lo, 0),
				     .own_n = s->nslots };
	if (s->mode == SANDPIT_MODE_FILTER &&
	    (r = make_filter(policy, !(s->opts && s->opts->policy_file) && !has_connects(s->opts), &rt, sp->fprog, s->perr,
			     sizeof(s->perr))) < 0)
		return start_fail(r, "cannot build the seccomp filter: %s",
			    s->perr[0] ? s->perr : strerror(-r));
	if (s->mode == SANDPIT_MODE_FILTER)
		start_add_range(sp, (uintptr_t)sp->fprog[1], (uintptr_t)sp->fprog[1] + sp->fprog[0] * 8);

	struct sigtab *sigtab = mmap(NULL, sizeof(struct sigtab), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sigtab == MAP_FAILED)
		return start_fail(-errno, "cannot allocate the handler table: %s", strerror(errno));
	sandpit_sigtab = s->sigtab = sigtab;
	tp = (struct trusted_process_config){ .pid = s->pid, .fd = s->b_fd, .fd_lo = s->fd_lo,
					      .fd_hi = s->fd_hi, .nslots = s->nslots, .sp = sp,
					      .mb = mb,
					      .policy = policy, .sigtab = sigtab,
					      .fs_by_ptrace = s->mode == SANDPIT_MODE_STRICT &&
							      !compat_has(COMPAT_FSGSBASE),
					      .task_size = fs_base_task_size(),
					      .log = denials_logged(), .report_fd = denials_report_fd(),
					      .exe_fd = program_fd, .notif_fd = -1 };
	const char *fmt = getenv("SANDPIT_LOG_FORMAT");
	tp.log_json = fmt && !strcmp(fmt, "json");
	slot_init(sp, mb, s->fd_lo, 0);
	struct u_state *st = (struct u_state *)mb->u_state;
	sp->u_tid = s->tid;
	/* the U tid table's first U: this thread, known before it is
	 * sandboxed (B keeps the table from now on) */
	((int32_t *)(uintptr_t)sp->tids)[0] = s->tid;
	st->tid = s->tid;
	mb->ctid = (uint32_t)s->tid;
	mb->t_ctid = 0xffffffffu; /* T is not there yet: B waits for its tid */
	return 0;
}

/* root is not root inside: no capability for P, nor for B and T, who
 * inherit the empty sets (B needs none: P has the same uid, stays dumpable
 * and now holds nothing B lacks, so B may trace it and read its /proc
 * files).  The steps before return an error with nothing applied; from here
 * on a failure leaves the capabilities dropped. */
static int drop_capabilities(void)
{
	char what[64];
	int r = caps_drop_all(what, sizeof(what));

	if (r < 0)
		return start_fail(r, "cannot drop the capabilities: %s: %s", what, strerror(-r));
	return 0;
}

/* sandpit's orphans (N, through X, and from the library B, through an
 * intermediate child) go to init or the nearest subreaper above P, never
 * to P, whose waits would find them: a program that is a subreaper stops
 * being one while they are made (on), until both intermediates are
 * reaped, and is one again after (off).  A namespace's init takes in
 * every orphan of its namespace: there the notifier is not made
 * (notifier.c), and B is the program's child (docs/LIMITS.md). */
static void orphans_away(struct start *s, int on)
{
	int was = 0;
	if (on)
		s->reaper = prctl(PR_GET_CHILD_SUBREAPER, &was) == 0 && was &&
			    prctl(PR_SET_CHILD_SUBREAPER, 0) == 0;
	else if (s->reaper)
		prctl(PR_SET_CHILD_SUBREAPER, 1);
}

/* B: started before anything is patched, so it runs plain libc; it starts
 * up while P patches */
static int fork_trusted_process(struct start *s)
{
	int r;

	/* the descriptors B opens for the program (SP_V_RECV): one socket
	 * pair, B's end in B only, P's in sandpit's block where B's end of
	 * T<->B was (P must not hold that, or T would never see B hang up) */
	int pass[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pass) < 0)
		return start_fail(-errno, "socketpair: %s", strerror(errno));
	tp.pass_fd = pass[1];
	tp.pass_peer = pass[0];
	pid_t mid = trusted_process_spawn(&tp, b_sibling, &s->bpid);
	s->b_forked = mid >= 0;
	s->mid = mid > 0 ? mid : 0;
	if (s->mid > 0 && s->reaper) {
		/* B an orphan before the program takes in orphans again */
		mid = trusted_process_reap(s->mid);
		s->mid = 0;
	}
	close(pass[1]);
	/* N's listener is B's alone (or no one's, and N ends) */
	start_notifier_let_go(s, &tp);
	if (mid < 0) {
		close(pass[0]);
		return start_fail(mid, "cannot start the trusted process: %s", strerror(-mid));
	}
	/* B's end of T<->B is B's alone from here on: P's number of it holds
	 * P's end of the pair B opens descriptors on */
	r = dup3(pass[0], s->b_fd, O_CLOEXEC) < 0 ? -errno : 0;
	close(pass[0]);
	if (r < 0)
		return start_fail(r, "cannot close the trusted process's descriptor");
	return 0;
}

/* What is B's alone leaves P once T runs (B has its copies): the
 * program's file (the program gets its own opens of it from B, b_exe.c)
 * and the command's count of refusals. */
static void hand_over_to_b(void)
{
	if (program_fd >= 0) {
		close(program_fd);
		program_fd = -1;
	}
	if (tp.report_fd >= 0) {
		close(tp.report_fd);
		unsetenv("SANDPIT_REPORT_FD");
	}
}

/* Every other slot's eventfds, then the program's soft RLIMIT_NOFILE as
 * it was: nothing of the program's has run since make_descriptors, so no
 * number at or above its limit was handed to it. */
static int make_slot_descriptors(struct start *s)
{
	/* with N, B makes each when its slot is first used (slot_fds.c) */
	int r = tp.notif_fd < 0 ? slots_make_eventfds(&s->place) : 0;

	if (r >= 0)
		r = slots_restore_limit(&s->place);
	if (r < 0)
		return start_fail(r, "cannot make sandpit's descriptors: %s", strerror(-r));
	return 0;
}



/* B has started; it may ptrace P (Yama), and where strict mode needs it to
 * set thread pointers, it can. */
static int trusted_process_ready(struct start *s)
{
	pid_t b = trusted_process_started(s->mid, s->bpid, s->tb_fd);
	s->mid = 0; /* reaped */
	if (b < 0)
		return start_fail(b, "the trusted process did not start");
	s->bpid = b;
	/* Yama: let B read our memory */
	s->ptracer = prctl(PR_SET_PTRACER, s->bpid, 0, 0, 0) == 0;
	int r2 = tp.fs_by_ptrace ? trusted_process_check_ptrace(s->tb_fd) : 0;
	if (r2 < 0)
		return start_fail(r2, "strict mode on a CPU without FSGSBASE needs the trusted process to "
				"set thread pointers by ptrace, and ptrace is refused here (%s; Yama "
				"ptrace_scope 2 or 3, a tracer already attached, or a container "
				"that forbids it?): use filter mode",
			    strerror(-r2));
	return 0;
}



/* T: cloned with every signal blocked, so it never runs a handler.  The
 * raw call: glibc's sigprocmask leaves its own two (32, 33) open, and T,
 * which inherits the mask, would take a process-directed one while every
 * other thread blocks it, until its first BLOCK_ALL.  After it runs there
 * is no way back.  no_new_privs, which a filter needs, was set with the
 * capabilities. */
static int clone_trusted_thread(struct start *s)
{
	uint64_t all = ~0ull, old;
	raw(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, 8, 0);
	long ttid = sandpit_clone_trusted(s->sp);
	raw(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0);
	if (ttid < 0)
		return start_fail((int)ttid, "cannot start the trusted thread: %s", strerror((int)-ttid));
	return 0;
}


/* %gs (the mailbox), U's clear-child-tid word, sandpit's signal handlers. */
static void set_up_thread(struct start *s)
{
	int r;

	if ((r = (int)raw(SYS_arch_prctl, ARCH_SET_GS, (long)s->mb, 0, 0, 0)) < 0)
		start_die("arch_prctl(ARCH_SET_GS)", r);
	raw(SYS_set_tid_address, (long)&s->mb->ctid, 0, 0, 0, 0);

	/* rdtsc emulation and the program's SIGSEGV handler, on the alternate
	 * stack if the thread has one (the program's handler may be there for
	 * stack overflows).  sandpit's signals come through one entry and are
	 * never blocked by the kernel (SA_NODEFER): a fault or a trap in a
	 * handler must reach sandpit, and the program's SA_NODEFER must be
	 * honoured; its view of them is virtual (u_signal.c) */
	void (*entry)(int, void *, void *) = (void (*)(int, void *, void *))(void *)sandpit_signal_entry;
	install_handler(SIGSEGV, entry, SA_ONSTACK | SA_NODEFER, 0, "installing the SIGSEGV handler");
	install_handler(SANDPIT_SIG, entry, SA_RESTART | SA_NODEFER, 0,
			"installing sandpit's signal handler");
	/* T's interrupt: on T's alternate stack, nothing else on top of it:
	 * T lets 63 through only while it waits, every other signal blocked,
	 * and the kernel adds 63 itself, so T runs it with all blocked.  No
	 * mask of its own, so that the program's own 63 on a U does not block
	 * SANDPIT_SIG (its handler's mask changes would wait for ever).
	 * SA_RESTART: the kernel then rewinds a call that would restart
	 * (-ERESTARTSYS), and the handler tells U to make it again per the
	 * program's SA_RESTART; the program's own 63 on a U restarts too */
	install_handler(SANDPIT_SIG_INTR, sandpit_intr_handler, SA_ONSTACK | SA_RESTART, 0,
			"installing sandpit's interrupt handler");
	/* filter mode's net under the patcher */
	install_handler(SIGSYS, entry, SA_ONSTACK | SA_NODEFER, 0, "installing the SIGSYS handler");
	uint64_t unblock = (1ull << (SANDPIT_SIG - 1)) | (1ull << (SIGSYS - 1));
	if ((r = (int)raw(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&unblock, 0, 8, 0)) < 0)
		start_die("unblocking sandpit's signal", r);
}

/* The runtime's switches on, then strict mode or the filter on this
 * thread. */
static void enter_seccomp(struct start *s)
{
	int r;

	__atomic_store_n(&sandpit_u_filter, s->mode == SANDPIT_MODE_FILTER, __ATOMIC_SEQ_CST);
	sandpit_exec_patch_on = 1;
	sandpit_u_report = tp.log ? SANDPIT_U_REPORT_ALL : tp.report_fd >= 0 ? SANDPIT_U_REPORT_COUNT : 0;
	sandpit_u_fsgsbase = compat_has(COMPAT_FSGSBASE);
	sandpit_u_task_size = tp.task_size;
	__atomic_store_n(&sandpit_u_active, 1, __ATOMIC_SEQ_CST);
	if (s->mode == SANDPIT_MODE_FILTER) {
		/* this thread only, never TSYNC: T stays outside the filter */
		if (compat_has(COMPAT_SECCOMP_SYSCALL))
			r = (int)raw(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, (long)s->sp->fprog, 0, 0);
		else /* before 3.17 */
			r = (int)raw(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, (long)s->sp->fprog,
				     0, 0);
		if (r < 0)
			start_die("installing the seccomp filter", r);
	} else if ((r = (int)raw(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0)) < 0) {
		start_die("prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT)", r);
	}
}

/* The program's handlers installed before the start: the kernel would
 * run them as they are, past sandpit's signal entry, in the middle of a
 * request to T (whose mailbox a handler's own request overwrote: the
 * interrupted call returned the handler's result).  Read while every
 * signal is blocked, then installed again through the entry once the
 * sandbox runs, as the program would install them then; the caller's
 * mask back last, through the entry too. */
static struct k_sigaction handlers_before[SIGTAB_N];

/* only those the kernel lists as caught (SigCgt, read with the thread
 * count: the caller's one thread changes none of them meanwhile) are
 * asked: 64 calls at every start otherwise */
static void keep_handlers(void)
{
	for (int sig = 1; sig < SIGTAB_N && sig <= 64; sig++)
		if (sig == SIGKILL || sig == SIGSTOP || !(caught_before >> (sig - 1) & 1) ||
		    raw(SYS_rt_sigaction, sig, 0, (long)&handlers_before[sig], 8, 0) < 0)
			handlers_before[sig].handler = 0;
}

static void give_handlers_back(struct start *s)
{
	for (int sig = 1; sig < SIGTAB_N && sig <= 64; sig++)
		if (handlers_before[sig].handler > 1) /* neither SIG_DFL nor SIG_IGN */
			sandpit_entry(SYS_rt_sigaction, sig, (long)&handlers_before[sig], 0, 8, 0, 0);
	sandpit_entry(SYS_rt_sigprocmask, SIG_SETMASK, (long)&s->caller_mask, 0, 8, 0, 0);
}

/* A start that failed before T runs: everything its steps made given
 * back, last first, so that the caller finds its process as it was but
 * for what cannot be taken back (docs/LIMITS.md): the capabilities and
 * no_new_privs once dropped, the code once patched.  B first: told there
 * is nothing to serve and waited for (it alone holds its end of T<->B,
 * and P's number of that end holds the pass socket by then, closed
 * first), then N, which ends once P and B have let its listener go.
 * Every number of the block is sandpit's (slots.c placed it where none
 * was open).  Returns err. */
static int give_back(struct start *s, int err)
{
	if (s->b_fd >= 0 && s->b_fd == s->fds[1])
		s->fds[1] = -1;
	if (s->b_fd >= 0)
		close(s->b_fd);
	start_notifier_let_go(s, &tp);
	if (s->mid > 0)
		trusted_process_reap(s->mid);
	if (s->b_forked)
		trusted_process_end(s->tb_fd, s->bpid);
	start_notifier_ended(s);
	if (s->ptracer)
		prctl(PR_SET_PTRACER, 0, 0, 0, 0);
	for (int i = 0; i < SLOTS_PLACED; i++)
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	if (s->fd_lo >= 0 && s->nslots > 1)
		syscall(SYS_close_range, slots_t_fd(s->fd_lo, 1), slots_maps_fd(s->fd_lo, s->nslots) - 1, 0);
	slots_restore_limit(&s->place);
	sandpit_exec_patch_release();
	if (s->sigtab) {
		munmap(s->sigtab, sizeof(struct sigtab));
		sandpit_sigtab = NULL;
	}
	if (s->sp && s->sp->fprog[1])
		munmap((void *)(uintptr_t)s->sp->fprog[1], (size_t)s->sp->fprog[0] * 8);
	start_unmap_secure_memory(s);
	if (s->table)
		munmap((void *)s->table, s->table_len);
	if (!started && policy) {
		policy_free(policy);
		policy = NULL;
	}
	tp = (struct trusted_process_config){ .notif_fd = -1 };
	plan_cache_let_go();
	raw(SYS_rt_sigprocmask, SIG_SETMASK, (long)&s->caller_mask, 0, 8, 0);
	return err;
}

/* The steps of start-up, in docs/design/startup.md's order.  A failure
 * before T runs returns an error and gives back what the steps made
 * (give_back), but for the capabilities and no_new_privs once dropped and
 * the code once patched; after it, the process dies rather than run
 * unsandboxed (invariant 5). */
int sandpit_start(const struct sandpit_options *opts)
{
	struct start s = { .opts = opts, .mode = SANDPIT_MODE_NONE, .smfd = -1, .mb = MAP_FAILED,
			   .fds = { -1, -1, -1, -1, -1 }, .fd_lo = -1, .tb_fd = -1, .b_fd = -1,
			   .maps_fd = -1 };
	int r;

	start_errbuf[0] = 0;
	if (started)
		return start_fail(-EBUSY, "sandpit_start: the sandbox is already running");
	/* no handler of the program's runs while start-up patches its code
	 * (it would run code half written) or makes and reaps its children
	 * (a SIGCHLD handler's waitpid(-1) took B's intermediate child, and
	 * no start ever succeeded); what comes meanwhile is delivered once
	 * the caller's mask is back, when T runs or the start has failed.
	 * The raw call: glibc's sigprocmask leaves its own two open.  The
	 * faults' signals stay open: blocked, a fault kills (sandpit asks
	 * itself things by one, sandpit_ask_self) */
	uint64_t all = ~0ull & ~(1ull << (SIGSEGV - 1) | 1ull << (SIGBUS - 1) | 1ull << (SIGFPE - 1) |
				  1ull << (SIGILL - 1) | 1ull << (SIGTRAP - 1) | 1ull << (SIGSYS - 1));
	raw(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&s.caller_mask, 8, 0);
	plan_cache_hold(); /* until T: after it, never a descriptor of sandpit's below the block */
	if ((r = check_caller(&s)) < 0 || (r = build_policy(&s)) < 0 || (r = build_table(&s)) < 0 ||
	    (r = start_map_secure_memory(&s)) < 0 || (r = make_descriptors(&s)) < 0 ||
	    (r = configure(&s)) < 0 || (r = drop_capabilities()) < 0 ||
	    (orphans_away(&s, 1), start_notifier(&s, policy, &tp), r = fork_trusted_process(&s),
	     orphans_away(&s, 0), r) < 0 ||
	    (r = make_slot_descriptors(&s)) < 0)
		return give_back(&s, r);
	start_protect_ranges(&s);
	start_patch_code(&s);
	r = trusted_process_ready(&s);
	if (r >= 0)
		r = start_finish_patching(&s);
	plan_cache_let_go();
	if (r >= 0 && trusted_process_t_next(s.tb_fd) < 0)
		r = start_fail(-EPIPE, "the trusted process is gone");
	if (r >= 0)
		r = clone_trusted_thread(&s);
	if (r < 0)
		return give_back(&s, r);
	/* ---- point of no return: T runs */
	hand_over_to_b();
	start_seal_secure_memory(&s);
	keep_handlers();
	set_up_thread(&s);
	enter_seccomp(&s);
	give_handlers_back(&s);
	started = 1;
	mode_in_force = s.mode;
	return 0;
}
