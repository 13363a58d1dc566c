/* Kernel feature probes (DESIGN §4).  Every probe leaves the calling process
 * as it found it: a call that would change the caller is made with an
 * argument the kernel rejects only once it has recognised the feature, or
 * it is made in a throwaway child. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#if __has_include(<sys/pidfd.h>)
/* glibc's header, not <linux/pidfd.h>: with the 6.1 uapi headers of Debian 12
 * the latter redefines struct flock next to <fcntl.h>. */
#include <sys/pidfd.h>
#endif
#include "compat/compat.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* kernel ABI since 6.9 */
#endif
#ifndef __NR_mseal
#define __NR_mseal 462 /* x86-64, since 6.10 */
#endif

#define ACTIONS_AVAIL_FILE "/proc/sys/kernel/seccomp/actions_avail"
#define NONE (-1)

struct feature_def {
	const char *name;
	const char *fallback;
	int needs; /* the feature this one is useless without, or NONE */
	int (*probe)(void);
	int lazy; /* the probe needs a child process: made when first asked */
};

static struct {
	enum compat_state state[COMPAT_NFEATURES];
	int decided[COMPAT_NFEATURES];
	int forced[COMPAT_NFEATURES];
	int landlock_abi;
	int actions_by_syscall; /* SECCOMP_GET_ACTION_AVAIL answered */
	int result;
	char msg[512];
	char applied[256]; /* $SANDPIT_KERNEL as applied, for the table */
} cache;

static atomic_int probed;
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;

static int present_now(enum compat_feature f)
{
	return cache.state[f] == COMPAT_PRESENT;
}

static long seccomp_raw(unsigned op, unsigned flags, void *args)
{
	return syscall(__NR_seccomp, op, flags, args);
}

/* Runs fn in a child that shares nothing and reports its wait status.  The
 * child has no exit signal, so it never reaches a SIGCHLD handler of the
 * caller, is not reaped by SIG_IGN, and waitpid(-1) without __WALL cannot
 * steal it.  The child makes only raw, async-signal-safe calls. */
static int run_in_child(int (*fn)(uintptr_t), uintptr_t arg, int *status)
{
	long pid = syscall(SYS_clone, 0UL, NULL, NULL, NULL, 0UL);
	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(fn(arg));
	while (waitpid((pid_t)pid, status, __WALL) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

static int child_exits_zero(int (*fn)(uintptr_t), uintptr_t arg)
{
	int status;
	return run_in_child(fn, arg, &status) == 0 && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

static int probe_strict(void)
{
	return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
}

/* A NULL program fails its copy-in (EFAULT) before anything is installed;
 * a kernel without the mode or the flag says EINVAL first. */
static int probe_filter(void)
{
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0) < 0 && errno == EFAULT;
}

static int probe_seccomp_syscall(void)
{
	return seccomp_raw(SECCOMP_SET_MODE_FILTER, 0, NULL) < 0 && errno == EFAULT;
}

static int probe_tsync(void)
{
	return seccomp_raw(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, NULL) < 0 &&
	       errno == EFAULT;
}

static int probe_actions_avail(void)
{
	uint32_t allow = SECCOMP_RET_ALLOW;
	cache.actions_by_syscall = present_now(COMPAT_SECCOMP_SYSCALL) &&
				   seccomp_raw(SECCOMP_GET_ACTION_AVAIL, 0, &allow) == 0;
	return cache.actions_by_syscall || access(ACTIONS_AVAIL_FILE, R_OK) == 0;
}

static int sysctl_lists_action(const char *word)
{
	char buf[256];
	int fd = open(ACTIONS_AVAIL_FILE, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (char *save, *w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
		if (!strcmp(w, word))
			return 1;
	return 0;
}

/* The child's filter answers getppid with the action under test and allows
 * the rest; it only has to live until the child exits. */
static int install_probe_filter(uint32_t action)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]), .filter = insns };
	struct rlimit no_core = { 0, 0 };
	sigset_t sigsys;

	/* a kill action dumps core by default */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	setrlimit(RLIMIT_CORE, &no_core);
	/* a blocked SIGSYS turns RET_TRAP into a kill */
	sigemptyset(&sigsys);
	sigaddset(&sigsys, SIGSYS);
	sigprocmask(SIG_UNBLOCK, &sigsys, NULL);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

static void exit_on_sigsys(int sig)
{
	(void)sig;
	_exit(0);
}

static int child_trap_reaches_handler(uintptr_t action)
{
	struct sigaction sa = { .sa_handler = exit_on_sigsys };
	if (sigaction(SIGSYS, &sa, NULL) || install_probe_filter((uint32_t)action))
		return 2;
	syscall(__NR_getppid);
	return 1;
}

/* For RET_LOG: before 4.14 the kernel treats it as unknown and kills. */
static int child_call_survives(uintptr_t action)
{
	if (install_probe_filter((uint32_t)action))
		return 2;
	return syscall(__NR_getppid) >= 0 ? 0 : 1;
}

static int thread_calls_getppid(void *unused)
{
	(void)unused;
	syscall(__NR_getppid);
	return 0;
}

/* Before 4.14 RET_KILL_PROCESS reads as RET_KILL and ends only the calling
 * thread: the child's main thread sees its sibling's tid word cleared and
 * exits 1.  With the action, SIGSYS ends the whole child. */
static int child_thread_call_kills_all(uintptr_t action)
{
	static char stack[16384] __attribute__((aligned(16)));
	static volatile pid_t tid = -1;
	if (install_probe_filter((uint32_t)action))
		return 2;
	if (clone(thread_calls_getppid, stack + sizeof(stack),
		  CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
			  CLONE_SYSVSEM | CLONE_CHILD_CLEARTID,
		  NULL, NULL, NULL, &tid) < 0)
		return 2;
	for (pid_t t; (t = tid) != 0;)
		syscall(SYS_futex, &tid, FUTEX_WAIT, t, NULL, NULL, 0);
	return 1;
}

static int action_tried_in_child(uint32_t action)
{
	int status;
	switch (action) {
	case SECCOMP_RET_KILL_PROCESS:
		return run_in_child(child_thread_call_kills_all, action, &status) == 0 &&
		       WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS;
	case SECCOMP_RET_TRAP:
		return child_exits_zero(child_trap_reaches_handler, action);
	default:
		return child_exits_zero(child_call_survives, action);
	}
}

static int action_available(uint32_t action, const char *sysctl_word)
{
	if (cache.actions_by_syscall)
		return seccomp_raw(SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
	/* a file that cannot be read now (no descriptor left, /proc gone)
	 * says nothing about the kernel: the action is tried instead */
	int listed = present_now(COMPAT_ACTIONS_AVAIL) ? sysctl_lists_action(sysctl_word) : -1;
	return listed >= 0 ? listed : action_tried_in_child(action);
}

static int probe_kill_process(void)
{
	return action_available(SECCOMP_RET_KILL_PROCESS, "kill_process");
}

static int probe_ret_trap(void)
{
	return action_available(SECCOMP_RET_TRAP, "trap");
}

static int probe_ret_log(void)
{
	return action_available(SECCOMP_RET_LOG, "log");
}

static int probe_user_notif(void)
{
	struct seccomp_notif_sizes sizes;
	return seccomp_raw(SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0;
}

static int pidfd_opens(pid_t pid, unsigned flags)
{
	long fd = syscall(SYS_pidfd_open, pid, flags);
	if (fd < 0)
		return 0;
	close((int)fd);
	return 1;
}

/* A thread of a child under a filter that notifies getppid waits there;
 * the child puts a descriptor at a number of its choosing into its own
 * table through the thread's notification, as B does into P's
 * (user/start/notifier.c) */
static int child_addfd(uintptr_t unused)
{
	static char stack[16384] __attribute__((aligned(16)));
	static volatile pid_t tid = -1;
	(void)unused;
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]), .filter = insns };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 2;
	long listener = seccomp_raw(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (listener < 0)
		return 2;
	if (clone(thread_calls_getppid, stack + sizeof(stack),
		  CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
			  CLONE_SYSVSEM | CLONE_CHILD_CLEARTID,
		  NULL, NULL, NULL, &tid) < 0)
		return 2;
	struct seccomp_notif n;
	memset(&n, 0, sizeof(n));
	if (ioctl((int)listener, SECCOMP_IOCTL_NOTIF_RECV, &n) < 0)
		return 2;
	int want = (int)listener + 7;
	struct seccomp_notif_addfd a = { .id = n.id, .flags = SECCOMP_ADDFD_FLAG_SETFD,
					 .srcfd = (uint32_t)listener, .newfd = (uint32_t)want };
	int got = ioctl((int)listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
	struct seccomp_notif_resp r = { .id = n.id };
	ioctl((int)listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
	for (pid_t t; (t = tid) != 0;)
		syscall(SYS_futex, &tid, FUTEX_WAIT, t, NULL, NULL, 0);
	return got == want && fcntl(want, F_GETFD) >= 0 ? 0 : 1;
}

static int probe_addfd(void)
{
	return child_exits_zero(child_addfd, 0);
}

static int probe_pidfd(void)
{
	return pidfd_opens(getpid(), 0);
}

static int probe_pidfd_thread(void)
{
	return pidfd_opens(gettid(), PIDFD_THREAD);
}

/* no pidfd at all: EBADF from a kernel that has the call, ENOSYS before 5.6 */
static int probe_pidfd_getfd(void)
{
	return syscall(SYS_pidfd_getfd, -1, 0, 0) == -1 && errno == EBADF;
}

/* The selector byte says "allow", so the child's calls, the one that turns
 * dispatch off included, still reach the kernel. */
static int child_user_dispatch(uintptr_t unused)
{
	static char selector = SYSCALL_DISPATCH_FILTER_ALLOW;
	(void)unused;
	if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, 0, 0, &selector))
		return 1;
	return prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0) ? 1 : 0;
}

static int probe_user_dispatch(void)
{
	return child_exits_zero(child_user_dispatch, 0);
}

static int probe_landlock(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	cache.landlock_abi = abi > 0 ? (int)abi : 0;
	return abi > 0;
}

static int probe_memfd_future_write(void)
{
	int fd = memfd_create("sandpit-probe", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return 0;
	int sealed = fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE) == 0;
	close(fd);
	return sealed;
}

static int probe_openat2(void)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
	long fd = syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));
	if (fd < 0)
		return 0;
	close((int)fd);
	return 1;
}

/* A sealed page can never be unmapped, so seal one in a child; the seal
 * counts only if munmap is then refused. */
static int child_mseal(uintptr_t unused)
{
	size_t len = (size_t)getpagesize();
	(void)unused;
	void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 2;
	if (syscall(__NR_mseal, p, len, 0UL))
		return 1;
	return munmap(p, len) < 0 && errno == EPERM ? 0 : 1;
}

static int probe_mseal(void)
{
	return child_exits_zero(child_mseal, 0);
}

/* One word whose value is not the one expected: EAGAIN at once where the
 * call exists */
static int probe_futex_waitv(void)
{
	uint32_t word = 1;
	struct futex_waitv w = { .val = 0, .uaddr = (uintptr_t)&word, .flags = FUTEX_32 };
	return syscall(SYS_futex_waitv, &w, 1, 0, NULL, 0) < 0 && errno == EAGAIN;
}

/* B's access answer: the object an O_PATH descriptor holds, asked with an
 * empty path (5.8+) */
static int probe_faccessat2(void)
{
	int fd = open("/", O_PATH | O_CLOEXEC);
	if (fd < 0)
		return 0;
	long r = syscall(SYS_faccessat2, fd, "", F_OK, AT_EMPTY_PATH);
	close(fd);
	return r == 0;
}

/* `sandpit run` tells the kernel where the program's argv, environment
 * and auxiliary vector lie (a kernel built with CHECKPOINT_RESTORE) */
static int probe_mm_map(void)
{
	unsigned size = 0;
	return prctl(PR_SET_MM, PR_SET_MM_MAP_SIZE, &size, 0, 0) == 0 && size > 0;
}

/* A property of the CPU and the hypervisor as much as of the kernel: the
 * kernel says in AT_HWCAP2 whether it lets user space use the instructions */
static int probe_fsgsbase(void)
{
	return !!(getauxval(AT_HWCAP2) & 2 /* HWCAP2_FSGSBASE */);
}

static const struct feature_def features[COMPAT_NFEATURES] = {
	[COMPAT_STRICT] = { "strict", "none: sandpit cannot run", NONE, probe_strict, 0 },
	[COMPAT_FILTER] = { "filter", "strict mode only (auto picks strict)", NONE, probe_filter,
			    0 },
	[COMPAT_SECCOMP_SYSCALL] = { "seccomp-syscall", "prctl(PR_SET_SECCOMP)", COMPAT_FILTER,
				     probe_seccomp_syscall, 0 },
	[COMPAT_TSYNC] = { "tsync", "filter installed per thread before it runs",
			   COMPAT_SECCOMP_SYSCALL, probe_tsync, 0 },
	[COMPAT_ACTIONS_AVAIL] = { "actions-avail", "probe each action", COMPAT_FILTER,
				   probe_actions_avail, 0 },
	[COMPAT_KILL_PROCESS] = { "kill-process",
				  "SECCOMP_RET_KILL (thread) + sandpit ends the process",
				  COMPAT_FILTER, probe_kill_process, 0 },
	[COMPAT_RET_TRAP] = { "ret-trap", "filter mode unavailable", COMPAT_FILTER,
			      probe_ret_trap, 0 },
	[COMPAT_RET_LOG] = { "ret-log", "log denials from sandpit itself", COMPAT_FILTER,
			     probe_ret_log, 0 },
	[COMPAT_USER_NOTIF] = { "user-notif", "trusted thread/process hand-off",
				COMPAT_SECCOMP_SYSCALL, probe_user_notif, 0 },
	[COMPAT_PIDFD] = { "pidfd", "kill(2) by pid", NONE, probe_pidfd, 0 },
	[COMPAT_PIDFD_THREAD] = { "pidfd-thread", "clear-child-tid futex to watch threads",
				  COMPAT_PIDFD, probe_pidfd_thread, 0 },
	[COMPAT_PIDFD_GETFD] = { "pidfd-getfd",
				 "relative paths resolved from the text of /proc/P/fd/N and cwd",
				 COMPAT_PIDFD, probe_pidfd_getfd, 0 },
	[COMPAT_USER_DISPATCH] = { "user-dispatch", "patching + SIGSYS only", NONE,
				   probe_user_dispatch, 1 },
	[COMPAT_LANDLOCK] = { "landlock", "path checks in the trusted process only", NONE,
			      probe_landlock, 0 },
	[COMPAT_MEMFD_FUTURE_WRITE] = { "memfd-future-write",
					"read-only mapping + trusted-thread range checks", NONE,
					probe_memfd_future_write, 0 },
	[COMPAT_OPENAT2] = { "openat2", "component-wise resolution", NONE, probe_openat2, 0 },
	[COMPAT_MSEAL] = { "mseal", "trusted-thread range checks", NONE, probe_mseal, 1 },
	[COMPAT_FUTEX_WAITV] = { "futex-waitv", "a watcher thread in B per sandboxed thread", NONE,
				 probe_futex_waitv, 0 },
	[COMPAT_FSGSBASE] = { "fsgsbase",
			      "filter: arch_prctl(ARCH_SET_FS/GET_FS) allowed natively; strict: B "
			      "sets the FS base by ptrace",
			      NONE, probe_fsgsbase, 0 },
	[COMPAT_FACCESSAT2] = { "faccessat2", "access calls made by the trusted thread", NONE,
				probe_faccessat2, 0 },
	[COMPAT_ADDFD] = { "addfd",
			   "every thread slot's eventfds made at start-up (about 4,100 system calls)",
			   COMPAT_USER_NOTIF, probe_addfd, 1 },
	[COMPAT_MM_MAP] = { "mm-map",
			    "/proc/self/cmdline, environ and auxv show sandpit's own (sandpit run)",
			    NONE, probe_mm_map, 1 },
};

static void list_names(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int f = 0; f < COMPAT_NFEATURES && used < len; f++) {
		int n = snprintf(buf + used, len - used, "%s%s", f ? ", " : "", features[f].name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

static int find_feature(const char *name, size_t len)
{
	for (int f = 0; f < COMPAT_NFEATURES; f++)
		if (strlen(features[f].name) == len && !memcmp(features[f].name, name, len))
			return f;
	return NONE;
}

static int apply_switch(const char *tok, size_t len, int forced[])
{
	if (len == 6 && !memcmp(tok, "legacy", 6)) {
		for (int f = 0; f < COMPAT_NFEATURES; f++)
			forced[f] |= f != COMPAT_STRICT;
		return 0;
	}
	if (len < 3 || memcmp(tok, "no-", 3))
		return -EINVAL;
	int f = find_feature(tok + 3, len - 3);
	if (f == NONE)
		return -EINVAL;
	forced[f] = 1;
	return 0;
}

static int parse_switches(const char *env, int forced[])
{
	char names[256];
	for (const char *tok = env;;) {
		const char *end = strchrnul(tok, ',');
		size_t len = (size_t)(end - tok);
		if (apply_switch(tok, len, forced) < 0) {
			list_names(names, sizeof(names));
			snprintf(cache.msg, sizeof(cache.msg),
				 "SANDPIT_KERNEL: unknown switch '%.*s' (expected 'legacy' or "
				 "'no-<feature>', comma-separated; features: %s)",
				 (int)len, tok, names);
			return -EINVAL;
		}
		if (!*end)
			return 0;
		tok = end + 1;
	}
}

/* with probe_lock held; what a feature needs is decided before it */
static void decide(enum compat_feature f)
{
	const struct feature_def *d = &features[f];
	if (cache.forced[f])
		cache.state[f] = COMPAT_FORCED_OFF;
	else if (d->needs != NONE && cache.state[d->needs] != COMPAT_PRESENT)
		cache.state[f] = cache.state[d->needs];
	else
		cache.state[f] = d->probe() ? COMPAT_PRESENT : COMPAT_ABSENT;
	__atomic_store_n(&cache.decided[f], 1, __ATOMIC_RELEASE); /* after the state */
}

static int probe_all(void)
{
	const char *env = getenv("SANDPIT_KERNEL");

	cache.msg[0] = '\0';
	snprintf(cache.applied, sizeof(cache.applied), "%s", env && *env ? env : "");
	if (env && *env && parse_switches(env, cache.forced) < 0) {
		for (int f = 0; f < COMPAT_NFEATURES; f++) {
			cache.state[f] = COMPAT_ABSENT;
			cache.decided[f] = 1;
		}
		return -EINVAL;
	}
	for (int f = 0; f < COMPAT_NFEATURES; f++)
		if (!features[f].lazy)
			decide((enum compat_feature)f);
	if (!present_now(COMPAT_LANDLOCK))
		cache.landlock_abi = 0;
	return 0;
}

int compat_init(char *err, size_t errlen)
{
	pthread_mutex_lock(&probe_lock);
	if (!atomic_load_explicit(&probed, memory_order_relaxed)) {
		cache.result = probe_all();
		atomic_store_explicit(&probed, 1, memory_order_release);
	}
	int r = cache.result;
	if (err && errlen)
		snprintf(err, errlen, "%s", cache.msg);
	pthread_mutex_unlock(&probe_lock);
	return r;
}

void compat_reset(void)
{
	pthread_mutex_lock(&probe_lock);
	memset(&cache, 0, sizeof(cache));
	atomic_store_explicit(&probed, 0, memory_order_release);
	pthread_mutex_unlock(&probe_lock);
}

static void ensure_probed(void)
{
	if (!atomic_load_explicit(&probed, memory_order_acquire))
		compat_init(NULL, 0);
}

enum compat_state compat_state(enum compat_feature f)
{
	if ((unsigned)f >= COMPAT_NFEATURES)
		return COMPAT_ABSENT;
	ensure_probed();
	if (!__atomic_load_n(&cache.decided[f], __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&probe_lock);
		if (!cache.decided[f])
			decide(f);
		pthread_mutex_unlock(&probe_lock);
	}
	return cache.state[f];
}

enum compat_state compat_state_unprobed(enum compat_feature f)
{
	if ((unsigned)f >= COMPAT_NFEATURES)
		return COMPAT_ABSENT;
	ensure_probed();
	if (__atomic_load_n(&cache.decided[f], __ATOMIC_ACQUIRE))
		return cache.state[f];
	if (cache.forced[f])
		return COMPAT_FORCED_OFF;
	int needs = features[f].needs;
	return needs == NONE ? COMPAT_PRESENT : compat_state(needs);
}

void compat_learned(enum compat_feature f, int present)
{
	if ((unsigned)f >= COMPAT_NFEATURES)
		return;
	pthread_mutex_lock(&probe_lock);
	if (!cache.decided[f]) {
		cache.state[f] = present ? COMPAT_PRESENT : COMPAT_ABSENT;
		__atomic_store_n(&cache.decided[f], 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&probe_lock);
}

int compat_has(enum compat_feature f)
{
	return compat_state(f) == COMPAT_PRESENT;
}

int compat_landlock_abi(void)
{
	ensure_probed();
	return cache.landlock_abi;
}

const char *compat_name(enum compat_feature f)
{
	return (unsigned)f < COMPAT_NFEATURES ? features[f].name : "?";
}

const char *compat_fallback(enum compat_feature f)
{
	return (unsigned)f < COMPAT_NFEATURES ? features[f].fallback : "?";
}

static const char *state_word(enum compat_state s)
{
	return s == COMPAT_PRESENT ? "present" : s == COMPAT_FORCED_OFF ? "forced-off" : "absent";
}

static void print_row(FILE *out, enum compat_feature f)
{
	enum compat_state s = compat_state(f);
	fprintf(out, "%-20s %-11s ", features[f].name, state_word(s));
	if (s != COMPAT_PRESENT)
		fprintf(out, "%s\n", features[f].fallback);
	else if (f == COMPAT_LANDLOCK)
		fprintf(out, "- (ABI %d)\n", cache.landlock_abi);
	else
		fputs("-\n", out);
}

void compat_print_table(FILE *out)
{
	ensure_probed();
	if (cache.result < 0) {
		fprintf(out, "kernel probes not applied: %s\n", cache.msg);
		return;
	}
	if (cache.applied[0])
		fprintf(out, "kernel features (SANDPIT_KERNEL=%s)\n", cache.applied);
	else
		fputs("kernel features (SANDPIT_KERNEL unset: nothing forced off)\n", out);
	fprintf(out, "%-20s %-11s %s\n", "feature", "state", "fallback in use");
	for (int f = 0; f < COMPAT_NFEATURES; f++)
		print_row(out, (enum compat_feature)f);
}
