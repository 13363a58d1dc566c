/* sandpit_start and the rest of the public API (include/sandpit.h): set up
 * B, S, T and the patched entry, then put the calling thread into seccomp
 * strict mode or under the policy's filter. */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
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
#include "user/patch/patch.h"
#include "user/untrusted/runtime.h"
#include "user/start/sandbox.h"
#include "user/trusted/fs_base.h"
#include "user/layout/slots.h"
#include "user/start/start_policy.h"
#include "user/trusted/slot_init.h"
#include "user/trusted/trusted_process.h"

#define SPIN_TARGET_NS 30000 /* about one blocking hand-off (DESIGN §9) */
/* the secure memfd (secure pages and the T tid table), the mailboxes */
#define S_LEN ((size_t)SM_S_LEN)
#define MB_LEN ((size_t)SM_NSLOTS * SM_PAGE)

static char errbuf[512];
static int started;
static enum sandpit_mode mode_in_force = SANDPIT_MODE_NONE;

static int fail(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	return err;
}

/* After T runs, backing out is no longer possible: never continue
 * unsandboxed (invariant 5). */
static void __attribute__((noreturn)) die(const char *what, long err)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "sandpit: %s failed (%s); killing the process\n",
			 what, strerror((int)-err));
	sandpit_raw_syscall6(SYS_write, 2, (long)msg, n, 0, 0, 0);
	sandpit_raw_syscall6(SYS_kill, getpid(), SIGKILL, 0, 0, 0, 0);
	for (;;)
		;
}

const char *sandpit_error(void) { return errbuf; }
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
			return fail(-EINVAL, "SANDPIT_MODE=%s: expected strict, filter or auto", env);
	}
	if (m != SANDPIT_MODE_AUTO && m != SANDPIT_MODE_STRICT && m != SANDPIT_MODE_FILTER)
		return fail(-EINVAL, "unknown mode %d", (int)m);
	int r = compat_init(cerr, sizeof(cerr));
	if (r < 0)
		return fail(r, "%s", cerr);
	int filter_ok = compat_has(COMPAT_FILTER) && compat_has(COMPAT_RET_TRAP);
	if (m == SANDPIT_MODE_FILTER && !filter_ok) {
		const char *k = getenv("SANDPIT_KERNEL");
		return fail(-EOPNOTSUPP,
			    "filter mode needs seccomp-bpf with SECCOMP_RET_TRAP, which this kernel %s",
			    k && *k ? "has turned off (SANDPIT_KERNEL)" : "lacks");
	}
	if (!compat_has(COMPAT_STRICT))
		return fail(-ENOSYS, "this kernel has no seccomp strict mode");
	*out = m == SANDPIT_MODE_AUTO ? (filter_ok ? SANDPIT_MODE_FILTER : SANDPIT_MODE_STRICT) : m;
	*chosen = m == SANDPIT_MODE_AUTO;
	/* under someone else's filter already (systemd, a container): strict
	 * mode can no longer be entered, and finding out after T exists would
	 * cost the process its life */
	if (*out == SANDPIT_MODE_STRICT && prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2)
		return fail(-EPERM, "this process already runs under a seccomp filter, so strict mode "
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

/* T's alternate stacks and the secure pages, in one region aligned so that
 * T's interrupt handler can find its secure page from its stack pointer
 * (secure_mem.h).  Returns the region's address, 0 on failure. */
static uintptr_t map_region(int smfd)
{
	size_t len = SM_ALT_REGION + S_LEN, resv = len + SM_REGION_ALIGN;
	char *r = mmap(NULL, resv, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return 0;
	uintptr_t base = ((uintptr_t)r + SM_REGION_ALIGN - 1) & ~(uintptr_t)(SM_REGION_ALIGN - 1);
	if (mmap((void *)base, SM_ALT_REGION, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ||
	    mmap((void *)(base + SM_ALT_REGION), S_LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 smfd, 0) == MAP_FAILED) {
		munmap(r, resv);
		return 0;
	}
	if (base > (uintptr_t)r)
		munmap(r, base - (uintptr_t)r);
	munmap((void *)(base + len), (uintptr_t)r + resv - (base + len));
	return base;
}

static unsigned calibrate_spin(void)
{
	struct timespec a, b;
	const unsigned n = 250; /* ≈ 6 µs here, far above the clock's resolution */
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned i = 0; i < n; i++)
		__asm__ volatile("pause" ::: "memory");
	clock_gettime(CLOCK_MONOTONIC, &b);
	long ns = (b.tv_sec - a.tv_sec) * 1000000000L + b.tv_nsec - a.tv_nsec;
	if (ns <= 0)
		ns = 1;
	unsigned long it = (unsigned long)SPIN_TARGET_NS * n / (unsigned long)ns;
	return it < 100 ? 100 : it > 1000000 ? 1000000 : (unsigned)it;
}

/* Filter mode's shortcut (DESIGN §3): a site that can only make a call the
 * policy allows outright stays as it is and runs at native speed, the
 * filter deciding.  Calls sandpit must see itself (exit, the signal-mask
 * family, gettid, clone) are never allow-class. */
/* sandpit_patch_only: `sandpit run` patches the program it loaded and the
 * vDSO, not sandpit's own libraries, which never run again in P */
static uintptr_t only[4][2];
static unsigned nonly;
static int b_sibling; /* sandpit_trusted_process_as_sibling */

void sandpit_trusted_process_as_sibling(void) { b_sibling = 1; }

void sandpit_patch_only(uintptr_t lo, uintptr_t hi)
{
	if (nonly < 4) {
		only[nonly][0] = lo;
		only[nonly++][1] = hi;
	}
}

/* Where the vDSO ends, from its program headers (it is linked at 0): a
 * library the kernel happened to map right after it is not the vDSO. */
static uintptr_t vdso_end(uintptr_t vdso)
{
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)vdso;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(vdso + eh->e_phoff);
	uintptr_t end = vdso;
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && vdso + ph[i].p_vaddr + ph[i].p_memsz > end)
			end = vdso + ph[i].p_vaddr + ph[i].p_memsz;
	return end;
}

static int want_module(void *ctx, uintptr_t lo, uintptr_t hi)
{
	(void)ctx;
	uintptr_t vdso = getauxval(AT_SYSINFO_EHDR);
	if (vdso && lo >= vdso && lo < vdso_end(vdso))
		return 1;
	for (unsigned i = 0; i < nonly; i++)
		if (lo < only[i][1] && hi > only[i][0])
			return 1;
	return 0;
}

static const struct tt_table *shortcut_table;

/* Filter mode: a site whose number the filter decides itself stays
 * native, so the kernel asks the filter and the call never waits for T:
 * an allowed number, or one with register rules only (the descriptor not
 * sandpit's, a command in a set, ...) that BPF evaluates as T would
 * (policy/bpf.c).  What the filter cannot decide for some arguments (a
 * descriptor in or above sandpit's block, a refusal that may be EBADF, a
 * clause cut) it traps, and the SIGSYS handler takes the call to T, the
 * same path as a site the patcher missed.  Rules on address ranges or
 * the program's tids are T's alone: those sites are patched. */
static int leave_native(void *ctx, long nr)
{
	(void)ctx;
	if (nr >= TT_MAX_NR)
		return 0;
	const struct tt_entry *e = &shortcut_table->entries[nr];
	if (e->cls == TT_ALLOW)
		return 1;
	if (e->cls != TT_THREAD)
		return 0;
	for (unsigned i = 0; i < e->nrules; i++) {
		uint8_t op = shortcut_table->rules[e->first + i].op;
		if (op == TR_RANGE_FREE || op == TR_U_TID)
			return 0;
	}
	return 1;
}

static void add_range(void *ctx, uintptr_t lo, uintptr_t hi)
{
	struct secure_page *sp = ctx;
	if (sp->nranges < SM_MAX_RANGES) {
		sp->ranges[sp->nranges].lo = lo & ~(uintptr_t)(SM_PAGE - 1);
		sp->ranges[sp->nranges].hi = (hi + SM_PAGE - 1) & ~(uintptr_t)(SM_PAGE - 1);
	}
	sp->nranges++;
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
		die(what, r);
}

static struct policy *policy;
static struct trusted_process_config tp;

/* What sandpit_start's steps hand on to each other. */
struct start {
	const struct sandpit_options *opts;
	enum sandpit_mode mode;
	int auto_chose;                 /* auto mode chose it */
	char perr[512];                 /* the policy's, the table's, the filter's message */
	const struct tt_table *table;
	size_t table_len;
	int smfd;                       /* the secure pages' memfd */
	uintptr_t region;               /* T's alternate stacks, then the secure pages */
	struct secure_page *sp;         /* slot 0's */
	struct mailbox *mb;             /* slot 0's */
	int fds[SLOTS_PLACED], nslots, fd_lo, fd_hi, tb_fd, b_fd, maps_fd;
	struct slots_place place;       /* where they are; the program's RLIMIT_NOFILE */
	pid_t pid, tid;
	pid_t mid;                      /* B's intermediate child, if any */
	pid_t bpid;                     /* B, as clone said it (0 if not yet known), then as B says */
	struct patch_config pc;
	struct patch_stats ps;
	int patched;                    /* patch_process's result */
	struct timespec t0, t1;         /* around it */
};

/* Single call, single thread, a mode that can run, grants the kernel can
 * keep. */
static int check_caller(struct start *s)
{
	const struct sandpit_options *opts = s->opts;
	int r;

	if (started)
		return fail(-EBUSY, "sandpit_start: the sandbox is already running");
	if ((r = resolve_mode(opts, &s->mode, &s->auto_chose)) < 0)
		return r;
	if (opts && opts->flags)
		return fail(-EINVAL, "sandpit_start: unknown flags 0x%x", opts->flags);
	/* in a write grant U can swap a directory for a symlink between B's
	 * check and the open; only openat2's RESOLVE_NO_SYMLINKS stops that */
	if (opts && opts->allow_write && opts->allow_write[0] && !compat_has(COMPAT_OPENAT2))
		return fail(-EOPNOTSUPP, "write grants (%s) need openat2, which this kernel %s",
			    opts->allow_write[0],
			    getenv("SANDPIT_KERNEL") ? "has turned off (SANDPIT_KERNEL)" : "lacks");
	/* a failure to count (no /proc, no descriptor left) is not a count */
	if ((r = count_threads()) < 0)
		return fail(r, "sandpit_start: cannot count this process's threads in /proc/self/task: %s",
			    strerror(-r));
	if (r != 1)
		return fail(-EBUSY, "sandpit_start: %d threads exist; call it before creating any", r);
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
			return fail(r, "%s", s->perr);
		for (size_t i = 0; i < policy_ngrants(policy); i++) {
			const struct policy_grant *g = policy_grant_at(policy, i);
			if (g->writable && !g->exact && !compat_has(COMPAT_OPENAT2)) {
				r = fail(-EOPNOTSUPP, "%s: the write grant %s needs openat2, which "
						      "this kernel %s", opts->policy_file, g->path,
					 getenv("SANDPIT_KERNEL") ? "has turned off (SANDPIT_KERNEL)"
								  : "lacks");
				policy_free(policy);
				policy = NULL;
				return r;
			}
		}
		/* read, write, exit and rt_sigreturn reach the kernel past the
		 * patcher in strict mode: only `allow` of them holds there */
		if (s->mode == SANDPIT_MODE_STRICT &&
		    (r = policy_strict_check(policy, opts->policy_file, NULL, NULL, s->perr,
					     sizeof(s->perr))) < 0) {
			policy_free(policy);
			policy = NULL;
			return fail(r, "%s%s", s->perr,
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
			return fail(r, "policy: %s", s->perr[0] ? s->perr : strerror(-r));
	}
	/* the plan cache is outside every grant, whatever the policy says */
	s->perr[0] = 0;
	if ((r = deny_plan_cache(policy, s->perr, sizeof(s->perr))) < 0) {
		policy_free(policy);
		policy = NULL;
		return fail(r, "policy: %s", s->perr[0] ? s->perr : strerror(-r));
	}
	return 0;
}

/* The T table, in a sealed memfd. */
static int build_table(struct start *s)
{
	int r = make_table(policy, &s->table, &s->table_len, s->perr, sizeof(s->perr));

	if (r < 0)
		return fail(r, "cannot build the T table: %s", s->perr[0] ? s->perr : strerror(-r));
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

/* S for every slot: secure pages in a sealable memfd, mailboxes shared
 * anonymous (B sees both) */
static int map_secure_memory(struct start *s)
{
	s->smfd = memfd_create("sandpit-secure", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	s->mb = MAP_FAILED;
	if (s->smfd < 0 || ftruncate(s->smfd, (off_t)S_LEN) < 0 ||
	    !(s->region = map_region(s->smfd)) ||
	    (s->mb = mmap(NULL, MB_LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
			  0)) == MAP_FAILED)
		return fail(-errno, "cannot allocate secure memory: %s", strerror(errno));
	s->sp = (struct secure_page *)(s->region + SM_ALT_REGION);
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
		return fail(-errno, "socketpair: %s", strerror(errno));
	if ((s->fds[2] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    (s->fds[3] = eventfd(0, EFD_CLOEXEC)) < 0)
		return fail(-errno, "eventfd: %s", strerror(errno));
	if ((s->fds[4] = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)) < 0)
		return fail(-errno, "/proc/self/maps: %s", strerror(errno));
	s->fd_lo = -1;
	if ((r = slots_place_fds(s->fds, &s->place)) < 0)
		return fail(r, "cannot place sandpit's descriptors: %s", strerror(-r));
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

/* The CPU masks T leaves U's CPU with (SM_CPU_ALL): in strict mode, where U
 * and T taking turns on one CPU costs a strict switch each way, and only
 * where the process may run on two CPUs or more, all of them below 64; else
 * T stays where the kernel puts it.  (In filter mode a shared CPU costs
 * ordinary switches, and T's leaving it cost 8 threads at once a fifth.) */
static void set_cpu_masks(struct secure_page *sp, enum sandpit_mode mode)
{
	cpu_set_t set;
	uint64_t all = 0;

	sp->cpu_masks = 0;
	if (mode != SANDPIT_MODE_STRICT || sched_getaffinity(0, sizeof(set), &set) < 0 ||
	    CPU_COUNT(&set) < 2)
		return;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			if (c >= SM_CPU_ALL)
				return;
			all |= 1ull << c;
		}
	uint64_t *m = (uint64_t *)((char *)sp + (size_t)(SM_NSLOTS + SM_TID_PAGES) * SM_PAGE);
	for (int c = 0; c < SM_CPU_ALL; c++)
		m[c] = all & ~(1ull << c);
	m[SM_CPU_ALL] = all;
	sp->cpu_masks = (uint64_t)(uintptr_t)m;
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
	set_cpu_masks(sp, s->mode);
	sp->pid = s->pid;
	sp->spin = calibrate_spin();
	sp->table = (uint64_t)(uintptr_t)s->table;
	/* U's wake-ups and sleeps on its eventfds, and B's socket, pass the
	 * filter whatever the policy says of read and write (policy.h) */
	struct policy_runtime rt = { .pid = s->pid, .fd_lo = s->fd_lo, .fd_hi = s->fd_hi,
				     .own_tb = s->tb_fd, .own_t = slots_t_fd(s->fd_lo, 0),
				     .own_n = s->nslots };
	if (s->mode == SANDPIT_MODE_FILTER &&
	    (r = make_filter(policy, !(s->opts && s->opts->policy_file), &rt, sp->fprog, s->perr,
			     sizeof(s->perr))) < 0)
		return fail(r, "cannot build the seccomp filter: %s",
			    s->perr[0] ? s->perr : strerror(-r));
	if (s->mode == SANDPIT_MODE_FILTER)
		add_range(sp, (uintptr_t)sp->fprog[1], (uintptr_t)sp->fprog[1] + sp->fprog[0] * 8);

	struct sigtab *sigtab = mmap(NULL, sizeof(struct sigtab), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sigtab == MAP_FAILED)
		return fail(-errno, "cannot allocate the handler table: %s", strerror(errno));
	sandpit_sigtab = sigtab;
	tp = (struct trusted_process_config){ .pid = s->pid, .fd = s->b_fd, .fd_lo = s->fd_lo,
					      .fd_hi = s->fd_hi, .nslots = s->nslots, .sp = sp,
					      .mb = mb,
					      .policy = policy, .sigtab = sigtab,
					      .fs_by_ptrace = s->mode == SANDPIT_MODE_STRICT &&
							      !compat_has(COMPAT_FSGSBASE),
					      .task_size = fs_base_task_size(),
					      .log = denials_logged(), .report_fd = denials_report_fd() };
	const char *fmt = getenv("SANDPIT_LOG_FORMAT");
	tp.log_json = fmt && !strcmp(fmt, "json");
	slot_init(&tp, 0);
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
		return fail(r, "cannot drop the capabilities: %s: %s", what, strerror(-r));
	return 0;
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
		return fail(-errno, "socketpair: %s", strerror(errno));
	tp.pass_fd = pass[1];
	tp.pass_peer = pass[0];
	s->mid = trusted_process_spawn(&tp, b_sibling, &s->bpid);
	close(pass[1]);
	if (s->mid < 0) {
		close(pass[0]);
		return fail(s->mid, "cannot start the trusted process: %s", strerror(-s->mid));
	}
	if (dup3(pass[0], s->b_fd, O_CLOEXEC) < 0) {
		r = -errno;
		close(pass[0]);
		close(s->tb_fd); /* B sees P's end go and exits */
		trusted_process_started(s->mid, s->bpid, -1);
		return fail(r, "cannot close the trusted process's descriptor");
	}
	close(pass[0]);
	/* the count is B's: P (and so U) keeps no descriptor to it */
	if (tp.report_fd >= 0) {
		close(tp.report_fd);
		unsetenv("SANDPIT_REPORT_FD");
	}
	return 0;
}

/* Every other slot's eventfds, then the program's soft RLIMIT_NOFILE as
 * it was: nothing of the program's has run since make_descriptors, so no
 * number at or above its limit was handed to it. */
static int make_slot_descriptors(struct start *s)
{
	int r = slots_make_eventfds(&s->place);

	if (r >= 0)
		r = slots_restore_limit(&s->place);
	if (r < 0) {
		close(s->tb_fd); /* B sees P's end go and exits */
		trusted_process_started(s->mid, s->bpid, -1);
		return fail(r, "cannot make sandpit's descriptors: %s", strerror(-r));
	}
	return 0;
}

/* What U may never write, remap or re-protect (invariant 3): S, the
 * mailboxes, the T table, sandpit's code and its handler facts. */
static void protect_ranges(struct start *s)
{
	struct secure_page *sp = s->sp;

	add_range(sp, s->region, (uintptr_t)sp + S_LEN);
	add_range(sp, (uintptr_t)s->mb, (uintptr_t)s->mb + MB_LEN);
	add_range(sp, (uintptr_t)s->table, (uintptr_t)s->table + s->table_len);
	add_range(sp, (uintptr_t)__start_sandpit_text, (uintptr_t)__stop_sandpit_text);
	add_range(sp, (uintptr_t)&sandpit_ro_page, (uintptr_t)&sandpit_ro_page + SM_PAGE);
	sandpit_ro_page.ro = (struct sandpit_ro){ .t_alt_lo = s->region,
						  .t_alt_hi = s->region + SM_ALT_REGION,
						  .pid = s->pid };
}

/* Every executable mapping (or those sandpit_patch_only names, and the
 * vDSO); each trampoline region becomes a protected range.  The result is
 * judged once B is up (finish_patching). */
static void patch_code(struct start *s)
{
	clock_gettime(CLOCK_MONOTONIC, &s->t0);
	int strict = s->mode == SANDPIT_MODE_STRICT;
	s->pc = (struct patch_config){ .stub = (uintptr_t)sandpit_syscall_stub,
				       .rdtsc_stub = strict ? (uintptr_t)sandpit_rdtsc_stub : 0,
				       .rdtscp_stub = strict ? (uintptr_t)sandpit_rdtscp_stub : 0,
				       .skip_lo = (uintptr_t)__start_sandpit_text,
				       .skip_hi = (uintptr_t)__stop_sandpit_text,
				       .on_region = add_range, .ctx = s->sp,
				       .leave_native = s->mode == SANDPIT_MODE_FILTER ? leave_native
										: NULL,
				       .want = nonly ? want_module : NULL };
	struct rlimit rl;
	s->pc.stack_limit = getrlimit(RLIMIT_STACK, &rl) == 0 ? rl.rlim_cur : 0;
	s->pc.brk = (uint64_t)raw(SYS_brk, 0, 0, 0, 0, 0);
	shortcut_table = s->table;
	s->ps = (struct patch_stats){ 0 };
	s->patched = patch_process(&s->pc, &s->ps);
	clock_gettime(CLOCK_MONOTONIC, &s->t1);
}

/* B has started; it may ptrace P (Yama), and where strict mode needs it to
 * set thread pointers, it can. */
static int trusted_process_ready(struct start *s)
{
	s->bpid = trusted_process_started(s->mid, s->bpid, s->tb_fd);
	if (s->bpid < 0)
		return fail(s->bpid, "the trusted process did not start");
	prctl(PR_SET_PTRACER, s->bpid, 0, 0, 0); /* Yama: let B read our memory */
	int r2 = tp.fs_by_ptrace ? trusted_process_check_ptrace(s->tb_fd) : 0;
	if (r2 < 0) {
		kill(s->bpid, SIGKILL);
		return fail(r2, "strict mode on a CPU without FSGSBASE needs the trusted process to "
				"set thread pointers by ptrace, and ptrace is refused here (%s; Yama "
				"ptrace_scope 2 or 3, a tracer already attached, or a container "
				"that forbids it?): use filter mode",
			    strerror(-r2));
	}
	return 0;
}

/* The patching worked, the run-time patcher has its memory, the protected
 * ranges fit; SANDPIT_DEBUG says what was patched. */
static int finish_patching(struct start *s)
{
	struct patch_stats *ps = &s->ps;
	int r = s->patched;

	if (r < 0) {
		kill(s->bpid, SIGKILL);
		return fail(r, "cannot patch system calls: %s", strerror(-r));
	}
	if (!r && (r = sandpit_exec_patch_init(&s->pc)) < 0) {
		kill(s->bpid, SIGKILL);
		return fail(r, "cannot reserve the run-time patcher's memory: %s", strerror(-r));
	}
	if (s->sp->nranges > SM_MAX_RANGES) {
		kill(s->bpid, SIGKILL);
		return fail(-E2BIG, "too many protected ranges (%lu)", (unsigned long)s->sp->nranges);
	}
	if (getenv("SANDPIT_DEBUG"))
		fprintf(stderr,
			"sandpit: patched %u of %u sites in %u modules in %ld us (left: %u sigreturn, "
			"%u allowed in the filter, %u where a branch target is in the way, %u other; "
			"found by %s %u, %s %u, %s %u, %s %u); %u of %u rdtsc/rdtscp\n",
			ps->patched, ps->sites, ps->modules,
			((s->t1.tv_sec - s->t0.tv_sec) * 1000000000L + s->t1.tv_nsec - s->t0.tv_nsec) /
				1000,
			ps->native_sigreturn, ps->native_allowed, ps->skipped_target,
			ps->skipped_other, patch_method_name(PATCH_BY_EH_FRAME),
			ps->by_method[PATCH_BY_EH_FRAME], patch_method_name(PATCH_BY_SYMTAB),
			ps->by_method[PATCH_BY_SYMTAB], patch_method_name(PATCH_BY_GOPCLNTAB),
			ps->by_method[PATCH_BY_GOPCLNTAB], patch_method_name(PATCH_BY_LINEAR),
			ps->by_method[PATCH_BY_LINEAR], ps->clock_patched, ps->clock_sites);
	return 0;
}


/* T: cloned with every signal blocked, so it never runs a handler.  After
 * it runs there is no way back.  no_new_privs, which a filter needs, was set
 * with the capabilities. */
static int clone_trusted_thread(struct start *s)
{
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	long ttid = sandpit_clone_trusted(s->sp);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (ttid < 0) {
		kill(s->bpid, SIGKILL);
		return fail((int)ttid, "cannot start the trusted thread: %s", strerror((int)-ttid));
	}
	return 0;
}

/* The secure pages sealed and read-only in P, the handler facts too. */
static void seal_secure_memory(struct start *s)
{
	/* without F_SEAL_FUTURE_WRITE (before 5.1) the read-only mapping and
	 * T's range checks are what keeps U from making it writable */
	if (compat_has(COMPAT_MEMFD_FUTURE_WRITE) &&
	    fcntl(s->smfd, F_ADD_SEALS,
		  F_SEAL_FUTURE_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		die("sealing secure memory", -errno);
	if (mmap(s->sp, S_LEN, PROT_READ, MAP_SHARED | MAP_FIXED, s->smfd, 0) != s->sp)
		die("mapping secure memory read-only", -errno);
	close(s->smfd);
	if (mprotect(&sandpit_ro_page, SM_PAGE, PROT_READ) < 0)
		die("making sandpit's handler facts read-only", -errno);
}

/* %gs (the mailbox), U's clear-child-tid word, sandpit's signal handlers. */
static void set_up_thread(struct start *s)
{
	int r;

	if ((r = (int)raw(SYS_arch_prctl, ARCH_SET_GS, (long)s->mb, 0, 0, 0)) < 0)
		die("arch_prctl(ARCH_SET_GS)", r);
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
		die("unblocking sandpit's signal", r);
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
			die("installing the seccomp filter", r);
	} else if ((r = (int)raw(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0)) < 0) {
		die("prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT)", r);
	}
}

/* The steps of start-up, in docs/design/startup.md's order.  A failure before T
 * runs returns an error and leaves nothing applied; after it, the process
 * dies rather than run unsandboxed (invariant 5). */
int sandpit_start(const struct sandpit_options *opts)
{
	struct start s = { .opts = opts, .mode = SANDPIT_MODE_NONE };
	int r;

	errbuf[0] = 0;
	if ((r = check_caller(&s)) < 0 || (r = build_policy(&s)) < 0 || (r = build_table(&s)) < 0 ||
	    (r = map_secure_memory(&s)) < 0 || (r = make_descriptors(&s)) < 0 ||
	    (r = configure(&s)) < 0 || (r = drop_capabilities()) < 0 ||
	    (r = fork_trusted_process(&s)) < 0 || (r = make_slot_descriptors(&s)) < 0) {
		slots_restore_limit(&s.place);
		return r;
	}
	protect_ranges(&s);
	patch_code(&s);
	if ((r = trusted_process_ready(&s)) < 0 || (r = finish_patching(&s)) < 0)
		return r;
	if ((r = clone_trusted_thread(&s)) < 0)
		return r;
	/* ---- point of no return: T runs */
	seal_secure_memory(&s);
	set_up_thread(&s);
	enter_seccomp(&s);
	started = 1;
	mode_in_force = s.mode;
	return 0;
}
