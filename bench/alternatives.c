/* What a user would build instead of sandpit, timed by the same harness on
 * the same call (getppid through libc): a plain libseccomp filter that
 * allows it; SECCOMP_RET_TRAP with a SIGSYS handler that makes the call
 * itself; SECCOMP_RET_USER_NOTIF answered by a supervisor thread; Syscall
 * User Dispatch with a SIGSYS handler.  Each runs in a native child of its
 * own: filters cannot be taken off again. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/groups.h"

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_ON 1
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#define SA_RESTORER_FLAG 0x04000000

/* The escape hatch the handlers use: a raw system call whose return address
 * the TRAP filter lets through, and (with the restorer) the range Syscall
 * User Dispatch leaves alone.  rdi = nr, then the six arguments. */
extern long alt_syscall6(long nr, long a, long b, long c, long d, long e, long f);
extern char alt_syscall6_ret[], alt_range_lo[], alt_range_hi[];
extern void alt_restorer(void);
__asm__(".text\n"
	".p2align 4\n"
	".globl alt_range_lo, alt_syscall6, alt_syscall6_ret, alt_restorer, alt_range_hi\n"
	".hidden alt_range_lo, alt_syscall6, alt_syscall6_ret, alt_restorer, alt_range_hi\n"
	"alt_range_lo:\n"
	"alt_syscall6:\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	mov %rdx, %rsi\n"
	"	mov %rcx, %rdx\n"
	"	mov %r8, %r10\n"
	"	mov %r9, %r8\n"
	"	mov 8(%rsp), %r9\n"
	"	syscall\n"
	"alt_syscall6_ret:\n"
	"	ret\n"
	"alt_restorer:\n"
	"	mov $15, %eax\n" /* rt_sigreturn */
	"	syscall\n" /* its return address must be inside the range too */
	"	ud2\n"
	"alt_range_hi:\n");

/* SIGSYS from TRAP or SUD: make the call through the escape hatch and put
 * the result where the interrupted syscall would have */
static void emulate(int sig, siginfo_t *si, void *ctx)
{
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
	(void)sig;
	g[REG_RAX] = alt_syscall6(si->si_syscall, g[REG_RDI], g[REG_RSI], g[REG_RDX], g[REG_R10],
				  g[REG_R8], g[REG_R9]);
}

struct k_sigaction {
	void (*handler)(int, siginfo_t *, void *);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

/* with our own restorer, so that rt_sigreturn comes from inside the range */
static int sigsys_handler(void)
{
	struct k_sigaction ka = { emulate, SA_SIGINFO | SA_RESTORER_FLAG, alt_restorer, 0 };
	return syscall(SYS_rt_sigaction, SIGSYS, &ka, NULL, sizeof(ka.mask));
}

enum alt { A_LIBSECCOMP, A_TRAP, A_NOTIF_CONT, A_NOTIF_EMU, A_NOTIF_SYNC, A_SUD, NALT };

static const struct {
	const char *mode, *note;
} alts[NALT] = {
	[A_LIBSECCOMP] = { "libseccomp allow",
			   "a libseccomp filter (default ERRNO, a dozen calls allowed, arch checked) "
			   "that allows getppid: the cost of seccomp-bpf itself" },
	[A_TRAP] = { "seccomp TRAP + SIGSYS",
		     "SECCOMP_RET_TRAP; the handler makes the call from an address the filter "
		     "allows and returns through rt_sigreturn" },
	[A_NOTIF_CONT] = { "USER_NOTIF, CONTINUE",
			   "SECCOMP_RET_USER_NOTIF; a supervisor thread answers "
			   "SECCOMP_USER_NOTIF_FLAG_CONTINUE (the kernel then runs the call)" },
	[A_NOTIF_EMU] = { "USER_NOTIF, emulated",
			  "the same, the supervisor makes the call and sends its result" },
	[A_NOTIF_SYNC] = { "USER_NOTIF, emulated, sync wake-up",
			   "the same with SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (6.6+): the kernel "
			   "switches to the supervisor on the same CPU" },
	[A_SUD] = { "Syscall User Dispatch",
		    "prctl(PR_SET_SYSCALL_USER_DISPATCH): every call from outside one small range "
		    "raises SIGSYS; the handler makes it from inside" },
};

#define ALT_BATCHES 64

struct alt_shm {
	int alt, batches;
	double batch_ns;
	double v[ALT_BATCHES];
	char err[256];
};

static void getppids(long n, void *arg)
{
	(void)arg;
	for (long i = 0; i < n; i++)
		getppid();
}

#define LD(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define JEQ(k, t, f) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f))
#define RET(k) BPF_STMT(BPF_RET | BPF_K, (k))

/* getppid -> action, unless it comes from the escape hatch; the rest allowed */
static long install(uint32_t action, unsigned flags)
{
	uintptr_t ip = (uintptr_t)alt_syscall6_ret;
	struct sock_filter f[] = {
		LD(offsetof(struct seccomp_data, arch)),
		JEQ(AUDIT_ARCH_X86_64, 1, 0),
		RET(SECCOMP_RET_KILL_PROCESS),
		LD(offsetof(struct seccomp_data, nr)),
		JEQ(__NR_getppid, 0, 5),
		LD(offsetof(struct seccomp_data, instruction_pointer)),
		JEQ((uint32_t)ip, 0, 2),
		LD(offsetof(struct seccomp_data, instruction_pointer) + 4),
		JEQ((uint32_t)(ip >> 32), 1, 0),
		RET(action),
		RET(SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

static int libseccomp_allow(void)
{
	static const int allowed[] = { SCMP_SYS(getppid), SCMP_SYS(read), SCMP_SYS(write),
				       SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(rt_sigreturn),
				       SCMP_SYS(clock_gettime), SCMP_SYS(futex), SCMP_SYS(mmap),
				       SCMP_SYS(munmap), SCMP_SYS(brk), SCMP_SYS(madvise) };
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	int rc = ctx ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	if (!rc)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc < 0 ? (errno = -rc, -1) : 0;
}

struct supervisor {
	int fds[2]; /* the listener's number comes through this pipe */
	int emulate;
};

static void *supervise(void *arg)
{
	struct supervisor *s = arg;
	int fd;
	if (read(s->fds[0], &fd, sizeof(fd)) != sizeof(fd))
		return NULL;
	for (;;) {
		struct seccomp_notif req;
		struct seccomp_notif_resp resp;
		memset(&req, 0, sizeof(req));
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		if (s->emulate)
			resp.val = getppid(); /* this thread is not filtered */
		else
			resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
}

static int user_notif(int alt, char *err, size_t len)
{
	static struct supervisor s;
	pthread_t t;
	long fd;
	s.emulate = alt != A_NOTIF_CONT;
	/* the supervisor first: a thread created later would inherit the filter */
	if (pipe(s.fds) < 0 || (errno = pthread_create(&t, NULL, supervise, &s))) {
		snprintf(err, len, "supervisor: %s", strerror(errno));
		return -1;
	}
	fd = install(SECCOMP_RET_USER_NOTIF, SECCOMP_FILTER_FLAG_NEW_LISTENER);
	if (fd < 0) {
		snprintf(err, len, "seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER): %s", strerror(errno));
		return -1;
	}
	if (alt == A_NOTIF_SYNC &&
	    ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) < 0) {
		snprintf(err, len, "SECCOMP_IOCTL_NOTIF_SET_FLAGS: %s", strerror(errno));
		return errno == EINVAL || errno == ENOTTY ? -BENCH_UNAVAILABLE : -1;
	}
	int ifd = (int)fd;
	return write(s.fds[1], &ifd, sizeof(ifd)) == sizeof(ifd) ? 0 : -1;
}

static int alt_child(void *arg)
{
	struct alt_shm *s = arg;
	int rc = 0;
	switch (s->alt) {
	case A_LIBSECCOMP:
		rc = libseccomp_allow();
		break;
	case A_TRAP:
		rc = sigsys_handler() < 0 || install(SECCOMP_RET_TRAP, 0) < 0 ? -1 : 0;
		break;
	case A_NOTIF_CONT:
	case A_NOTIF_EMU:
	case A_NOTIF_SYNC:
		if ((rc = user_notif(s->alt, s->err, sizeof(s->err))) < 0)
			return rc == -BENCH_UNAVAILABLE ? BENCH_UNAVAILABLE : 1;
		break;
	case A_SUD: {
		/* addresses, not objects: the range is two labels apart */
		uintptr_t lo = (uintptr_t)alt_range_lo, hi = (uintptr_t)alt_range_hi;
		rc = sigsys_handler() < 0 ||
				     prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, lo, hi - lo, 0) < 0 ?
			     -1 :
			     0;
		break;
	}
	}
	if (rc < 0) {
		snprintf(s->err, sizeof(s->err), "%s", strerror(errno));
		/* Syscall User Dispatch came with 5.11 */
		return s->alt == A_SUD && errno == EINVAL ? BENCH_UNAVAILABLE : 1;
	}
	if (getppid() != getppid() || getppid() <= 0) {
		snprintf(s->err, sizeof(s->err), "getppid gives a wrong answer");
		return 1;
	}
	bench_batches(getppids, NULL, s->batch_ns, s->batches, s->v);
	return 0;
}

int bench_alternatives(const struct bench_cfg *c)
{
	struct alt_shm *s = bench_shared(sizeof(*s));
	int rc = 0;
	for (int r = 0; r < c->rounds; r++) {
		bench_progress(c, "alternatives round %d/%d", r + 1, c->rounds);
		for (int i = 0; i < NALT; i++) {
			int a = (r + i) % NALT;
			char what[96];
			memset(s, 0, sizeof(*s));
			s->alt = a;
			s->batches = c->batches < ALT_BATCHES ? c->batches : ALT_BATCHES;
			s->batch_ns = c->batch_ns;
			snprintf(what, sizeof(what), "alternative '%s'", alts[a].mode);
			struct bench_row *row = bench_row("alternatives", "getppid", alts[a].mode,
							  BENCH_NS, alts[a].note);
			int st = bench_child(alt_child, s, what, NULL);
			if (st == BENCH_UNAVAILABLE) {
				snprintf(row->skipped, sizeof(row->skipped),
					 "not available on this kernel (%.100s)", s->err);
				continue;
			}
			if (st) {
				fprintf(stderr, "sandpit bench: %s: %s\n", what,
					s->err[0] ? s->err : "failed");
				rc = -1;
				continue;
			}
			for (int b = 0; b < s->batches; b++)
				bench_add(row, s->v[b]);
		}
	}
	munmap(s, sizeof(*s));
	return rc;
}
