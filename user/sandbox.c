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
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/auxv.h>
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
#include "user/patch.h"
#include "user/runtime.h"
#include "user/fs_base.h"
#include "user/trusted_process.h"

#define SPIN_TARGET_NS 30000 /* about one blocking hand-off (DESIGN §9) */
/* P's end of T<->B, a placeholder for B's, then U's and T's ends per slot */
#define NFDS SM_NFDS
#define S_LEN ((size_t)SM_NSLOTS * SM_PAGE)

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

/* strict, filter or auto (filter if the kernel has seccomp-bpf with
 * SECCOMP_RET_TRAP, else strict); asking for filter mode where it cannot
 * run is an error, never a quiet strict or unsandboxed run */
static int resolve_mode(const struct sandpit_options *o, enum sandpit_mode *out)
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
	/* under someone else's filter already (systemd, a container): strict
	 * mode can no longer be entered, and finding out after T exists would
	 * cost the process its life */
	if (*out == SANDPIT_MODE_STRICT && prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2)
		return fail(-EPERM, "this process already runs under a seccomp filter, so strict mode "
				    "cannot be entered; use filter mode");
	return 0;
}

/* Refusals are counted and explained by B (user/denial_log.c) when
 * --log=denials asks for lines or `sandpit run` for the count
 * (SANDPIT_REPORT_FD, a descriptor only B keeps). */
static int log_wanted(void)
{
	const char *log = getenv("SANDPIT_LOG");
	return log && !strcmp(log, "denials");
}

static int report_fd(void)
{
	const char *e = getenv("SANDPIT_REPORT_FD");
	char *end;
	long fd = e && *e ? strtol(e, &end, 10) : -1;
	if (fd < 3 || fd > INT_MAX || *end || fcntl((int)fd, F_GETFD) < 0)
		return -1;
	return (int)fd;
}

static int denials_wanted(void)
{
	return log_wanted() || report_fd() >= 0;
}

/* Filter mode's program: built by libseccomp from the same policy as the T
 * table, kept in a sealed memfd so that the nursery can install it on new
 * threads from memory U can never change. */
extern const char sandpit_default_filter[]; /* policy/default_filter.S */
extern const uint64_t sandpit_default_filter_len;

static int make_filter(const struct policy *pol, int builtin, pid_t pid, int fd_lo, int fd_hi,
		       uint64_t fprog[2], char *err, size_t errlen)
{
	struct policy_runtime rt = { .pid = pid, .fd_lo = fd_lo, .fd_hi = fd_hi };
	uint32_t flags = compat_has(COMPAT_KILL_PROCESS) ? 0 : POLICY_BPF_NO_KILL_PROCESS;
	if (denials_wanted())
		flags |= POLICY_BPF_TRAP_DENY; /* so that the entry sees, B counts and logs them */
	int fd = memfd_create("sandpit-filter", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	/* the default policy's program was built with the library: only the
	 * pid goes in; anything else is compiled now */
	int r = builtin ? policy_bpf_from_template(sandpit_default_filter,
						   (size_t)sandpit_default_filter_len, pid, fd_lo,
						   fd_hi, flags, fd)
			: -ENOENT;
	if (r == -ENOENT) {
		scmp_filter_ctx ctx = NULL;
		r = policy_compile_bpf(pol, &rt, flags, &ctx, err, errlen);
		if (r >= 0) {
			r = seccomp_export_bpf(ctx, fd);
			seccomp_release(ctx);
		}
	}
	struct stat sb;
	if (r >= 0 && (fstat(fd, &sb) < 0 || sb.st_size == 0 || sb.st_size % 8))
		r = -EINVAL;
	if (r >= 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		r = -errno;
	void *prog = MAP_FAILED;
	if (r >= 0 && (prog = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0)) == MAP_FAILED)
		r = -errno;
	close(fd);
	if (r < 0)
		return r;
	fprog[0] = (uint64_t)sb.st_size / 8; /* sock_fprog.len, then the pointer */
	fprog[1] = (uint64_t)(uintptr_t)prog;
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

/* The T table in a memfd sealed against every write: mapped read-only,
 * it can never be made writable again (invariant 3). */
static int make_table(const struct policy *pol, const struct tt_table **out, size_t *len,
		      char *err, size_t errlen)
{
	size_t sz = (sizeof(struct tt_table) + SM_PAGE - 1) & ~(size_t)(SM_PAGE - 1);
	int fd = memfd_create("sandpit-table", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	int r = 0;
	void *rw = MAP_FAILED;
	if (ftruncate(fd, (off_t)sz) < 0 ||
	    (rw = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		r = -errno;
		goto out;
	}
	r = policy_compile_table(pol, rw, err, errlen);
	munmap(rw, sz);
	if (r < 0)
		goto out;
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		r = -errno;
		goto out;
	}
	void *ro = mmap(NULL, sz, PROT_READ, MAP_SHARED, fd, 0);
	if (ro == MAP_FAILED) {
		r = -errno;
		goto out;
	}
	*out = ro;
	*len = sz;
out:
	close(fd);
	return r;
}

/* Move the four descriptors sandpit uses to a block at the top of the
 * descriptor space, out of the program's way; T refuses close/dup2/fcntl
 * on [lo, lo + NFDS) (invariant 3). */
static int park_fds(int fds[NFDS], int *lo)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	long top = rl.rlim_cur > SM_FD_TOP ? SM_FD_TOP : (long)rl.rlim_cur;
	for (long base = top - NFDS; base >= 3; base -= NFDS) {
		int i;
		for (i = 0; i < NFDS; i++)
			if (fcntl((int)base + i, F_GETFD) >= 0)
				break;
		if (i < NFDS)
			continue;
		for (i = 0; i < NFDS; i++) {
			if (dup3(fds[i], (int)base + i, O_CLOEXEC) < 0)
				return -errno;
			close(fds[i]);
			fds[i] = (int)base + i;
		}
		*lo = (int)base;
		return 0;
	}
	return -EMFILE;
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
	const unsigned n = 2000;
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

static int leave_native(void *ctx, long nr)
{
	(void)ctx;
	return nr < TT_MAX_NR && shortcut_table->entries[nr].cls == TT_ALLOW;
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

int sandpit_start(const struct sandpit_options *opts)
{
	enum sandpit_mode mode = SANDPIT_MODE_NONE;
	char perr[512] = "";
	int r;

	errbuf[0] = 0;
	if (started)
		return fail(-EBUSY, "sandpit_start: the sandbox is already running");
	if ((r = resolve_mode(opts, &mode)) < 0)
		return r;
	if (opts && opts->flags)
		return fail(-EINVAL, "sandpit_start: unknown flags 0x%x", opts->flags);
	/* in a write grant U can swap a directory for a symlink between B's
	 * check and the open; only openat2's RESOLVE_NO_SYMLINKS stops that */
	if (opts && opts->allow_write && opts->allow_write[0] && !compat_has(COMPAT_OPENAT2))
		return fail(-EOPNOTSUPP, "write grants (%s) need openat2, which this kernel %s",
			    opts->allow_write[0],
			    getenv("SANDPIT_KERNEL") ? "has turned off (SANDPIT_KERNEL)" : "lacks");
	if ((r = count_threads()) != 1)
		return fail(r < 0 ? r : -EBUSY,
			    "sandpit_start: %d threads exist; call it before creating any", r);

	if (opts && opts->policy_file) {
		/* the parser's message is "FILE:LINE:COL: ..." */
		r = policy_new_file(&policy, opts->policy_file, opts->allow_read, opts->allow_write,
				    perr, sizeof(perr));
		if (r < 0)
			return fail(r, "%s", perr);
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
	} else {
		r = policy_new_default(&policy, opts ? opts->allow_read : NULL,
				       opts ? opts->allow_write : NULL, perr, sizeof(perr));
		if (r < 0)
			return fail(r, "policy: %s", perr);
	}

	const struct tt_table *table = NULL;
	size_t table_len = 0;
	if ((r = make_table(policy, &table, &table_len, perr, sizeof(perr))) < 0)
		return fail(r, "cannot build the T table: %s", perr[0] ? perr : strerror(-r));

	/* S for every slot: secure pages in a sealable memfd, mailboxes shared
	 * anonymous (B sees both) */
	int smfd = memfd_create("sandpit-secure", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	struct secure_page *sp = MAP_FAILED;
	struct mailbox *mb = MAP_FAILED;
	uintptr_t region = 0;
	if (smfd < 0 || ftruncate(smfd, (off_t)S_LEN) < 0 || !(region = map_region(smfd)) ||
	    (mb = mmap(NULL, S_LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)) ==
		    MAP_FAILED)
		return fail(-errno, "cannot allocate secure memory: %s", strerror(errno));
	sp = (struct secure_page *)(region + SM_ALT_REGION);

	int fds[NFDS], tb[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, tb) < 0)
		return fail(-errno, "socketpair: %s", strerror(errno));
	fds[0] = tb[0];
	fds[1] = tb[1];
	for (int i = 0; i < SM_NSLOTS; i++)
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds + 2 + 2 * i) < 0)
			return fail(-errno, "socketpair: %s", strerror(errno));
	int fd_lo = -1;
	if ((r = park_fds(fds, &fd_lo)) < 0)
		return fail(r, "cannot place sandpit's descriptors: %s", strerror(-r));
	int tb_fd = fds[0], b_fd = fds[1];

	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
	sp->tb_fd = tb_fd;
	sp->fd_lo = fd_lo;
	sp->fd_hi = fd_lo + NFDS - 1;
	sp->pid = pid;
	sp->spin = calibrate_spin();
	sp->table = (uint64_t)(uintptr_t)table;
	if (mode == SANDPIT_MODE_FILTER &&
	    (r = make_filter(policy, !(opts && opts->policy_file), pid, fd_lo, fd_lo + NFDS - 1,
			     sp->fprog, perr, sizeof(perr))) < 0)
		return fail(r, "cannot build the seccomp filter: %s", perr[0] ? perr : strerror(-r));
	if (mode == SANDPIT_MODE_FILTER)
		add_range(sp, (uintptr_t)sp->fprog[1], (uintptr_t)sp->fprog[1] + sp->fprog[0] * 8);

	struct sigtab *sigtab = mmap(NULL, sizeof(struct sigtab), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sigtab == MAP_FAILED)
		return fail(-errno, "cannot allocate the handler table: %s", strerror(errno));
	sandpit_sigtab = sigtab;
	tp = (struct trusted_process_config){ .pid = pid, .fd = b_fd, .fd_lo = fd_lo,
					      .fd_hi = fd_lo + NFDS - 1, .sp = sp, .mb = mb,
					      .policy = policy, .sigtab = sigtab,
					      .fs_by_ptrace = mode == SANDPIT_MODE_STRICT &&
							      !compat_has(COMPAT_FSGSBASE),
					      .task_size = fs_base_task_size(),
					      .log = log_wanted(), .report_fd = report_fd() };
	const char *fmt = getenv("SANDPIT_LOG_FORMAT");
	tp.log_json = fmt && !strcmp(fmt, "json");
	for (int i = 0; i < SM_NSLOTS; i++) {
		tp.u_fd[i] = fds[2 + 2 * i];
		tp.t_fd[i] = fds[3 + 2 * i];
	}
	trusted_process_init_slot(&tp, 0);
	struct u_state *st = (struct u_state *)mb->u_state;
	sp->u_tid = tid;
	st->tid = tid;
	mb->ctid = (uint32_t)tid;
	mb->t_ctid = 0xffffffffu; /* T is not there yet: B waits for its tid */

	/* B: forked before anything is patched, so it runs plain libc; it
	 * starts up while P patches */
	pid_t mid = trusted_process_spawn(&tp);
	if (mid < 0)
		return fail(mid, "cannot start the trusted process: %s", strerror(-mid));
	/* P must not hold B's end, or T would never see B hang up; a
	 * placeholder keeps the slot inside sandpit's block */
	int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null_fd < 0 || dup3(null_fd, b_fd, O_CLOEXEC) < 0) {
		r = -errno;
		close(tb_fd); /* B sees P's end go and exits */
		trusted_process_started(mid, -1);
		return fail(r, "cannot close the trusted process's descriptor");
	}
	close(null_fd);
	/* the count is B's: P (and so U) keeps no descriptor to it */
	if (tp.report_fd >= 0) {
		close(tp.report_fd);
		unsetenv("SANDPIT_REPORT_FD");
	}

	add_range(sp, region, (uintptr_t)sp + S_LEN);
	add_range(sp, (uintptr_t)mb, (uintptr_t)mb + S_LEN);
	add_range(sp, (uintptr_t)table, (uintptr_t)table + table_len);
	add_range(sp, (uintptr_t)__start_sandpit_text, (uintptr_t)__stop_sandpit_text);
	add_range(sp, (uintptr_t)&sandpit_ro_page, (uintptr_t)&sandpit_ro_page + SM_PAGE);
	sandpit_ro_page.ro = (struct sandpit_ro){ .t_alt_lo = region, .t_alt_hi = region + SM_ALT_REGION,
						  .pid = pid };

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct patch_config pc = { .stub = (uintptr_t)sandpit_syscall_stub,
				   .skip_lo = (uintptr_t)__start_sandpit_text,
				   .skip_hi = (uintptr_t)__stop_sandpit_text,
				   .on_region = add_range, .ctx = sp,
				   .leave_native = mode == SANDPIT_MODE_FILTER ? leave_native : NULL,
				   .want = nonly ? want_module : NULL };
	shortcut_table = table;
	struct patch_stats ps = { 0 };
	r = patch_process(&pc, &ps);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pid_t bpid = trusted_process_started(mid, tb_fd);
	if (bpid < 0)
		return fail(bpid, "the trusted process did not start");
	prctl(PR_SET_PTRACER, bpid, 0, 0, 0); /* Yama: let B read our memory */
	int r2 = tp.fs_by_ptrace ? trusted_process_check_ptrace(tb_fd) : 0;
	if (r2 < 0) {
		kill(bpid, SIGKILL);
		return fail(r2, "strict mode on a CPU without FSGSBASE needs the trusted process to "
				"set thread pointers by ptrace, and ptrace is refused here (%s; Yama "
				"ptrace_scope 3, a tracer already attached, or a container that forbids "
				"it?): use filter mode",
			    strerror(-r2));
	}
	if (r < 0) {
		kill(bpid, SIGKILL);
		return fail(r, "cannot patch system calls: %s", strerror(-r));
	}
	if (!r && (r = sandpit_exec_patch_init(&pc)) < 0) {
		kill(bpid, SIGKILL);
		return fail(r, "cannot reserve the run-time patcher's memory: %s", strerror(-r));
	}
	if (sp->nranges > SM_MAX_RANGES) {
		kill(bpid, SIGKILL);
		return fail(-E2BIG, "too many protected ranges (%lu)", (unsigned long)sp->nranges);
	}
	if (getenv("SANDPIT_DEBUG"))
		fprintf(stderr,
			"sandpit: patched %u of %u sites in %u modules in %ld us (left: %u sigreturn, "
			"%u allowed in the filter, %u where a branch target is in the way, %u other)\n",
			ps.patched, ps.sites, ps.modules,
			((t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec) / 1000,
			ps.native_sigreturn, ps.native_allowed, ps.skipped_target, ps.skipped_other);


	/* a filter needs no_new_privs (unless root); T inherits it, harmless */
	if (mode == SANDPIT_MODE_FILTER && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		kill(bpid, SIGKILL);
		return fail(-errno, "prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
	}
	/* T: cloned with every signal blocked, so it never runs a handler */
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	long ttid = sandpit_clone_trusted(sp);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (ttid < 0) {
		kill(bpid, SIGKILL);
		return fail((int)ttid, "cannot start the trusted thread: %s", strerror((int)-ttid));
	}
	sp->tids[0] = (int32_t)ttid; /* B publishes it to later slots */
	sp->ntids = 1;

	/* ---- point of no return: T runs */
	/* without F_SEAL_FUTURE_WRITE (before 5.1) the read-only mapping and
	 * T's range checks are what keeps U from making it writable */
	if (compat_has(COMPAT_MEMFD_FUTURE_WRITE) &&
	    fcntl(smfd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		die("sealing secure memory", -errno);
	if (mmap(sp, S_LEN, PROT_READ, MAP_SHARED | MAP_FIXED, smfd, 0) != sp)
		die("mapping secure memory read-only", -errno);
	close(smfd);
	if (mprotect(&sandpit_ro_page, SM_PAGE, PROT_READ) < 0)
		die("making sandpit's handler facts read-only", -errno);

	if ((r = (int)raw(SYS_arch_prctl, ARCH_SET_GS, (long)mb, 0, 0, 0)) < 0)
		die("arch_prctl(ARCH_SET_GS)", r);
	raw(SYS_set_tid_address, (long)&mb->ctid, 0, 0, 0, 0);

	/* rdtsc emulation and the program's SIGSEGV handler, on the alternate
	 * stack if the thread has one (the program's handler may be there for
	 * stack overflows) */
	install_handler(SIGSEGV, u_sigsegv, SA_ONSTACK, 0, "installing the SIGSEGV handler");
	install_handler(SANDPIT_SIG, u_sandpit_sig, SA_RESTART, 0, "installing sandpit's signal handler");
	/* T's interrupt: on T's alternate stack, nothing else on top of it */
	install_handler(SANDPIT_SIG_INTR, sandpit_intr_handler, SA_ONSTACK, ~0ull,
			"installing sandpit's interrupt handler");
	/* filter mode's net under the patcher */
	install_handler(SIGSYS, u_sigsys, SA_ONSTACK, 0, "installing the SIGSYS handler");
	uint64_t unblock = (1ull << (SANDPIT_SIG - 1)) | (1ull << (SIGSYS - 1));
	if ((r = (int)raw(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&unblock, 0, 8, 0)) < 0)
		die("unblocking sandpit's signal", r);

	__atomic_store_n(&sandpit_u_filter, mode == SANDPIT_MODE_FILTER, __ATOMIC_SEQ_CST);
	sandpit_exec_patch_on = 1;
	sandpit_u_report = tp.log ? SANDPIT_U_REPORT_ALL : tp.report_fd >= 0 ? SANDPIT_U_REPORT_COUNT : 0;
	sandpit_u_fsgsbase = compat_has(COMPAT_FSGSBASE);
	sandpit_u_task_size = tp.task_size;
	__atomic_store_n(&sandpit_u_active, 1, __ATOMIC_SEQ_CST);
	if (mode == SANDPIT_MODE_FILTER) {
		/* this thread only, never TSYNC: T stays outside the filter */
		if (compat_has(COMPAT_SECCOMP_SYSCALL))
			r = (int)raw(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, (long)sp->fprog, 0, 0);
		else /* before 3.17 */
			r = (int)raw(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, (long)sp->fprog, 0, 0);
		if (r < 0)
			die("installing the seccomp filter", r);
	} else if ((r = (int)raw(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0)) < 0) {
		die("prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT)", r);
	}
	started = 1;
	mode_in_force = mode;
	return 0;
}
