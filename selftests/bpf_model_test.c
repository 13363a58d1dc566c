/* The BPF back end (policy/bpf.c) against T's rules: model tests run the
 * exported program in a small classic-BPF interpreter over many argument
 * vectors and compare every answer with what T would do
 * (policy/rule_eval.c, the rules as trusted_thread.S checks them): BPF may
 * answer exactly as T, or trap; it may never allow what T refuses.  The
 * prebuilt default filter must equal a fresh one.  The live tests are
 * bpf_test. */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <limits.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <ucontext.h>
#include <unistd.h>

#include <kselftest_harness.h>

#include "policy/policy.h"
#include "policy/rule_eval.h"
#include "policy/t_table.h"
#include "user/layout/secure_mem.h"

#include "bpf_consts.h"
#include "policy_eval.h"
#include "policy_util.h"

/* ---------------------------------------------------------------------------
 * Model: the exported program run against T's rules.
 */

#define RET_ERRNO(e) (SECCOMP_RET_ERRNO | (uint32_t)(e))

/* What T answers for a thread-class call (policy/rule_eval.c, the rules'
 * one definition): RET_ALLOW, RET_ERRNO(e), or RET_TRAP when the answer
 * depends on what only T knows (protected ranges, trusted tids). */
static uint32_t t_thread(const struct policy_call *c, const struct policy_runtime *rt,
			 const __u64 a[6])
{
	const struct rule_world w = { .rt = *rt };
	const uint64_t args[6] = { a[0], a[1], a[2], a[3], a[4], a[5] };
	int err = 0;

	switch (policy_call_check(c, args, &w, &err)) {
	case RULE_PASS: return SECCOMP_RET_ALLOW;
	case RULE_FAIL: return RET_ERRNO(err);
	default: return SECCOMP_RET_TRAP;
	}
}

/* The one answer the filter must give, and whether a trap would do too. */
static uint32_t expected(const struct policy *p, const struct policy_runtime *rt,
			 const struct seccomp_data *d, uint32_t kill, int *may_trap)
{
	const struct policy_call *c;

	*may_trap = 0;
	if (d->arch != AUDIT_ARCH_X86_64)
		return kill;
	if ((d->nr & X32_BIT) && d->nr != -1)
		return kill;
	if (d->nr < 0 || d->nr >= POLICY_MAX_NR)
		return SECCOMP_RET_TRAP;
	c = policy_call(p, d->nr);
	/* arch_prctl's codes for the thread pointer are sandpit's (the entry
	 * answers them before T); the filter lets them through and leaves the
	 * other codes to T */
	if (d->nr == SYS_arch_prctl && c->cls != POLICY_ALLOW && c->cls != POLICY_NATIVE) {
		uint32_t code = (uint32_t)d->args[0];
		*may_trap = 1;
		return code == 0x1002 || code == 0x1003 ? SECCOMP_RET_ALLOW
		       : c->cls == POLICY_DENY          ? RET_ERRNO(c->err)
							: SECCOMP_RET_TRAP;
	}
	/* sandpit's own calls in U (bpf.c): exit and rt_sigreturn whole, its
	 * wake-ups and sleeps on its descriptors; the rest of read and write
	 * then traps (T answers as the policy says), or the policy's allow set
	 * is kept where it fits one shape with them */
	if (rt->own_n > 0 && c->cls != POLICY_ALLOW && c->cls != POLICY_NATIVE) {
		uint32_t fd = (uint32_t)d->args[0], t0 = (uint32_t)rt->own_t;
		int rd = d->nr == SYS_read, wr = d->nr == SYS_write;
		int sig = policy_call(p, SYS_rt_sigaction)->cls;

		if (d->nr == SYS_exit || d->nr == SYS_rt_sigreturn)
			return SECCOMP_RET_ALLOW;
		if (rd || wr) {
			/* sandpit's descriptors are small: with the upper half set
			 * a trap will do (T decides) */
			*may_trap = (d->args[0] >> 32) != 0;
			if (fd >= t0 + rd && fd < t0 + 2 * (uint32_t)rt->own_n && (fd - t0 - rd) % 2 == 0)
				return SECCOMP_RET_ALLOW;
			if (wr && fd == (uint32_t)rt->own_tb && sig != POLICY_DENY && sig != POLICY_KILL)
				return SECCOMP_RET_ALLOW;
			*may_trap = 1;
			return c->cls == POLICY_THREAD && t_thread(c, rt, d->args) == SECCOMP_RET_ALLOW
				       ? SECCOMP_RET_ALLOW
				       : SECCOMP_RET_TRAP;
		}
	}
	/* beyond the T table, which answers ENOSYS, the filter may leave it to T */
	*may_trap = d->nr >= TT_MAX_NR && c->cls == POLICY_DENY && c->err == ENOSYS;
	switch (c->cls) {
	case POLICY_NATIVE:
	case POLICY_ALLOW: return SECCOMP_RET_ALLOW;
	case POLICY_DENY:
		/* on a descriptor that is not open it says EBADF: T decides */
		if (c->err != EBADF && c->err != ENOSYS && syscall_refusal_checks_fd(d->nr))
			return SECCOMP_RET_TRAP;
		return RET_ERRNO(c->err);
	case POLICY_KILL: return SECCOMP_RET_TRAP; /* T names it, then kills */
	case POLICY_THREAD:
		*may_trap = 1;
		return t_thread(c, rt, d->args);
	default: return SECCOMP_RET_TRAP;
	}
}

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Argument values near every edge a rule of the call (or the runtime) has. */
static size_t edge_values(const struct policy_call *c, const struct policy_runtime *rt,
			  uint64_t *v, size_t max)
{
	static const uint64_t common[] = {
		0, 1, 2, 3, 7, 8, 0x10, 0x22, 511, 512, 1030, TCGETS, TIOCGWINSZ, FIONREAD,
		FIONBIO, 0x5402, FIOCLEX, AF_UNIX, AF_INET, 0x7fffffff, 0x80000000, 0xffffffff,
		~0ULL, (uint64_t)-100, 0xffffff9c, 1ULL << 32, 1ULL << 63, 0xffffffff00000000ULL,
	};
	size_t n = 0;

#define ADD(x)                                                                               \
	do {                                                                                 \
		if (n < max)                                                                 \
			v[n++] = (x);                                                        \
	} while (0)
	for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		ADD(common[i]);
	for (int64_t f = (int64_t)rt->fd_lo - 2; f <= (int64_t)rt->fd_hi + 2; f++) {
		ADD((uint64_t)f);
		ADD((uint32_t)f);
		ADD((1ULL << 32) | (uint32_t)f);
	}
	ADD((uint64_t)rt->pid);
	ADD((uint64_t)rt->pid ^ 1);
	ADD((uint64_t)rt->pid ^ (1ULL << 31));
	ADD((uint64_t)rt->pid | (1ULL << 32));
	ADD((uint64_t)rt->pid | 0xffffffff00000000ULL);
	for (int i = 0; c && i < c->nrules; i++) {
		const struct policy_rule *r = &c->rules[i];

		ADD(r->val);
		ADD(r->val + 1);
		ADD(r->val - 1);
		ADD(r->val & r->mask);
		ADD((r->val & r->mask) ^ (r->mask & -r->mask));
		ADD(r->mask);
		ADD(~r->mask);
		ADD(r->cmask);
		ADD(r->cmask & -r->cmask);
		ADD(r->val ^ (1ULL << 32));
		for (int b = 0; b < 64; b++)
			if (r->op == RULE_BITSET && ((r->mask >> b) & 1))
				ADD(r->val + b);
	}
#undef ADD
	return n;
}

struct tally {
	long vectors, allow, errno_, trap, wrong;
};

/* One syscall number: its edges in every argument, then random mixtures. */
static void check_nr(const struct prog *prog, const struct policy *p,
		     const struct policy_runtime *rt, uint32_t kill, int nr, int rounds,
		     struct tally *t)
{
	const struct policy_call *c = nr >= 0 && nr < POLICY_MAX_NR ? policy_call(p, nr) : NULL;
	uint64_t v[256];
	size_t nv = edge_values(c, rt, v, 256);

	for (int i = 0; i < rounds; i++) {
		struct seccomp_data d = { .nr = nr, .arch = AUDIT_ARCH_X86_64 };
		uint32_t want, got;
		int may_trap;

		for (int k = 0; k < 6; k++) {
			uint64_t r = rnd();

			d.args[k] = (r & 7) == 0 ? rnd() : v[(r >> 8) % nv];
			if ((r & 0x70) == 0x10)
				d.args[k] ^= rnd() & 0xffffffff00000000ULL; /* upper half only */
		}
		if (i < (int)nv) /* the edges one argument at a time, others zero */
			for (int k = 0; k < 6; k++)
				d.args[k] = (k == i % 6) ? v[i] : 0;
		want = expected(p, rt, &d, kill, &may_trap);
		got = run_prog(prog, &d);
		t->vectors++;
		t->allow += got == SECCOMP_RET_ALLOW;
		t->errno_ += (got & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO;
		t->trap += got == SECCOMP_RET_TRAP;
		if (got != want && !(may_trap && got == SECCOMP_RET_TRAP)) {
			if (t->wrong++ < 10)
				fprintf(stderr,
					"nr %d args %#llx %#llx %#llx %#llx %#llx %#llx: "
					"BPF %#x, T %#x%s\n",
					nr, (unsigned long long)d.args[0],
					(unsigned long long)d.args[1], (unsigned long long)d.args[2],
					(unsigned long long)d.args[3], (unsigned long long)d.args[4],
					(unsigned long long)d.args[5], got, want,
					may_trap ? " (or trap)" : "");
		}
	}
}

static void check_policy(const struct prog *prog, const struct policy *p,
			 const struct policy_runtime *rt, uint32_t kill, struct tally *t)
{
	static const int odd[] = { -1, POLICY_MAX_NR, 5000, 0x3fffffff };

	for (int nr = 0; nr < POLICY_MAX_NR; nr++)
		check_nr(prog, p, rt, kill, nr,
			 policy_call(p, nr)->cls == POLICY_THREAD ? 3000 : 4, t);
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		check_nr(prog, p, rt, kill, odd[i], 4, t);
	for (int nr = 0; nr < 512; nr += 37) /* x32 numbers */
		check_nr(prog, p, rt, kill, (int)(nr | X32_BIT), 2, t);
	for (int nr = 0; nr < 400; nr += 13) { /* another architecture */
		struct seccomp_data d = { .nr = nr, .arch = AUDIT_ARCH_I386 };

		t->vectors++;
		if (run_prog(prog, &d) != kill)
			t->wrong++;
	}
}

TEST(default_policy_bpf_answers_as_t_or_traps)
{
	static struct prog prog;
	struct policy_runtime rt = { .pid = 4242, .fd_lo = FD_LO, .fd_hi = FD_HI };
	struct policy *p = default_policy();
	struct tally t = { 0 };

	rnd_state = 0x5eed;
	ASSERT_EQ(0, load_prog(p, &rt, 0, &prog));
	check_policy(&prog, p, &rt, SECCOMP_RET_KILL_PROCESS, &t);
	TH_LOG("%ld vectors: %ld allowed, %ld errno, %ld trapped", t.vectors, t.allow, t.errno_,
	       t.trap);
	EXPECT_EQ(0, t.wrong);
	policy_free(p);
}

/* Without FSGSBASE a thread sets its own FS base with arch_prctl: the
 * filter allows exactly ARCH_SET_FS and ARCH_GET_FS (the low 32 bits of
 * the code, as the kernel reads it) and nothing else of arch_prctl. */
TEST(filter_allows_exactly_arch_prctl_set_and_get_fs)
{
	static struct prog prog;
	static const struct {
		uint64_t code;
		int allowed;
	} cases[] = {
		{ 0x1002, 1 },        { 0x1003, 1 },          { 0xdead00001002ULL, 1 },
		{ 0xffffffff00001003ULL, 1 }, { 0x1001, 0 } /* SET_GS */, { 0x1004, 0 } /* GET_GS */,
		{ 0x3001, 0 },        { 0x1012, 0 },          { 0x11002, 0 },
		{ 0, 0 },
	};
	struct policy_runtime rt = { .pid = 4242, .fd_lo = FD_LO, .fd_hi = FD_HI };
	struct policy *p = default_policy();
	int n = 0;

	ASSERT_EQ(0, load_prog(p, &rt, 0, &prog));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct seccomp_data d = { .nr = SYS_arch_prctl, .arch = AUDIT_ARCH_X86_64,
					  .args = { cases[i].code, 0x7f0000001000ULL } };
		uint32_t got = run_prog(&prog, &d);

		EXPECT_EQ(cases[i].allowed, got == SECCOMP_RET_ALLOW) {
			TH_LOG("code %#llx: %#x", (unsigned long long)cases[i].code, got);
		}
		n++;
	}
	EXPECT_EQ(10, n);
	policy_free(p);
}

/* Thread-class calls where BPF decides the common case itself. */
TEST(default_policy_bpf_decides_common_register_checks)
{
	static struct prog prog;
	struct policy_runtime rt = { .pid = 4242, .fd_lo = FD_LO, .fd_hi = FD_HI };
	struct policy *p = default_policy();
	const struct {
		const char *name;
		uint64_t a[6];
		uint32_t ret;
	} cases[] = {
		{ "close", { 5 }, SECCOMP_RET_ALLOW },
		{ "close", { FD_LO }, RET_ERRNO(EBADF) },
		{ "close", { (1ULL << 32) | FD_HI }, RET_ERRNO(EBADF) },
		{ "close", { ~0ULL }, SECCOMP_RET_ALLOW },
		{ "dup2", { 3, 10 }, SECCOMP_RET_ALLOW },
		{ "dup2", { 3, FD_LO + 2 }, RET_ERRNO(EBADF) },
		{ "fcntl", { 3, F_GETFL }, SECCOMP_RET_ALLOW },
		{ "fcntl", { 3, F_DUPFD_CLOEXEC }, SECCOMP_RET_ALLOW },
		{ "fcntl", { 3, F_ADD_SEALS, F_SEAL_WRITE }, SECCOMP_RET_ALLOW },
		{ "fcntl", { 3, F_GETPIPE_SZ }, SECCOMP_RET_ALLOW },
		/* refused: T says EINVAL, or EBADF when the descriptor is not open */
		{ "fcntl", { 3, F_GET_SEALS + 1 }, SECCOMP_RET_TRAP },
		{ "mmap", { 0, 4096, 3, MAP_PRIVATE | MAP_ANONYMOUS, ~0ULL, 0 }, SECCOMP_RET_ALLOW },
		{ "mmap", { 0, 4096, 3, MAP_PRIVATE | MAP_FIXED, 3, 0 }, SECCOMP_RET_TRAP },
		{ "mmap", { 0, 4096, 3, MAP_SHARED, FD_LO, 0 }, RET_ERRNO(EBADF) },
		{ "ioctl", { 1, TIOCGWINSZ }, SECCOMP_RET_ALLOW },
		/* refused: T says ENOTTY, or EBADF when the descriptor is not open */
		{ "ioctl", { 1, 0x5402 }, SECCOMP_RET_TRAP },
		{ "kill", { 4242, 0 }, SECCOMP_RET_ALLOW },
		{ "kill", { 1, 9 }, SECCOMP_RET_TRAP },   /* T refuses it */
		{ "tgkill", { 1, 1, 9 }, SECCOMP_RET_TRAP },
		{ "tgkill", { 4242, 4242, 9 }, SECCOMP_RET_TRAP },
		{ "prctl", { PR_SET_NAME }, SECCOMP_RET_ALLOW },
		{ "prctl", { PR_SET_PDEATHSIG, SIGKILL }, RET_ERRNO(EPERM) },
		{ "futex", { 0x1000, 0 }, SECCOMP_RET_TRAP },
		{ "sendto", { 3, 0, 1, 0, 0, 0 }, SECCOMP_RET_ALLOW },
		{ "sendto", { 3, 0, 1, 0, 0x1000, 16 }, SECCOMP_RET_TRAP }, /* as ioctl's */
	};

	ASSERT_EQ(0, load_prog(p, &rt, 0, &prog));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct seccomp_data d = { .nr = nr_of(cases[i].name), .arch = AUDIT_ARCH_X86_64 };

		memcpy(d.args, cases[i].a, sizeof(d.args));
		EXPECT_EQ(cases[i].ret, run_prog(&prog, &d))
		TH_LOG("%s(%#llx, %#llx)", cases[i].name, (unsigned long long)d.args[0],
		       (unsigned long long)d.args[1]);
	}
	policy_free(p);
}

TEST(no_kill_process_flag_kills_the_thread)
{
	static struct prog prog;
	struct policy_runtime rt = { .pid = 4242, .fd_lo = FD_LO, .fd_hi = FD_HI };
	struct seccomp_data ptrace_call = { .nr = SYS_ptrace, .arch = AUDIT_ARCH_X86_64 };
	struct seccomp_data i386_call = { .nr = I386_GETPID, .arch = AUDIT_ARCH_I386 };
	struct seccomp_data x32_call = { .nr = SYS_getpid | X32_BIT, .arch = AUDIT_ARCH_X86_64 };
	struct policy *p = NULL;
	char err[256] = "";

	ASSERT_EQ(0, policy_new(&p));
	ASSERT_EQ(0, policy_set(p, "ptrace", POLICY_KILL, 0, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, load_prog(p, &rt, 0, &prog));
	/* a policy's kill traps: T has B name the call, then kills P */
	EXPECT_EQ(SECCOMP_RET_TRAP, run_prog(&prog, &ptrace_call));
	EXPECT_EQ(SECCOMP_RET_KILL_PROCESS, run_prog(&prog, &i386_call));
	EXPECT_EQ(SECCOMP_RET_KILL_PROCESS, run_prog(&prog, &x32_call));
	ASSERT_EQ(0, load_prog(p, &rt, POLICY_BPF_NO_KILL_PROCESS, &prog));
	EXPECT_EQ(SECCOMP_RET_TRAP, run_prog(&prog, &ptrace_call));
	EXPECT_EQ(SECCOMP_RET_KILL_THREAD, run_prog(&prog, &i386_call));
	EXPECT_EQ(SECCOMP_RET_KILL_THREAD, run_prog(&prog, &x32_call));
	policy_free(p);
}

/* sandpit's own calls in U (bpf.c, "sandpit's own calls") pass the filter
 * whatever a policy says of read, write, exit and rt_sigreturn: its
 * wake-ups of T (writes to T's eventfds), its sleeps (reads of U's), B's
 * socket only where the program may have handlers.  Nothing else of the
 * block passes: U's eventfds are not written, T's not read, the maps not
 * touched; a kill traps.  Each policy's program against the model, and
 * the descriptors one by one. */
static void random_rule(struct policy_rule *r);
#define OWN_LO 1000
#define OWN_N 8
TEST(sandpit_own_calls_pass_whatever_the_policy_says)
{
	static const char *const texts[] = {
		"read: allow\nwrite: arg0 == 1\nexit_group: allow\n",
		"read: allow\nwrite: allow\nexit_group: allow\n",
		"default: kill\nread: arg0 == 0\nwrite: arg0 in {1, 2}\nexit_group: allow\n",
		"read: allow\nwrite: arg2 <= 100\nexit_group: allow\nrt_sigaction: process\n",
		"exit: kill\nrt_sigreturn: deny(EPERM)\n",
	};
	/* P's end of T<->B, B's placeholder, 8 slots of {T, U}, the maps */
	struct policy_runtime rt = { .pid = 4242, .fd_lo = OWN_LO, .fd_hi = OWN_LO + 2 + 2 * OWN_N,
				     .own_tb = OWN_LO, .own_t = OWN_LO + 2, .own_n = OWN_N };
	static struct prog prog;
	struct tally t = { 0 };
	long own_allowed = 0;

	rnd_state = 0x0c0ffee;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct policy *p = NULL;
		char err[256] = "";

		ASSERT_EQ(0, policy_parse_text("own.policy", texts[i], strlen(texts[i]), &p, NULL, NULL,
					       err, sizeof(err)))
		TH_LOG("%s", err);
		ASSERT_EQ(0, load_prog(p, &rt, 0, &prog));
		int handlers = i == 3;
		for (int fd = OWN_LO - 1; fd <= rt.fd_hi + 1; fd++) {
			struct seccomp_data w = { .nr = SYS_write, .arch = AUDIT_ARCH_X86_64,
						  .args = { (uint64_t)fd, 0x1000, 8 } };
			struct seccomp_data r = { .nr = SYS_read, .arch = AUDIT_ARCH_X86_64,
						  .args = { (uint64_t)fd, 0x1000, 64 } };
			int k = fd - OWN_LO, t_fd = k >= 2 && k < 2 + 2 * OWN_N && k % 2 == 0,
			    u_fd = k >= 2 && k < 2 + 2 * OWN_N && k % 2 == 1;
			uint32_t gw = run_prog(&prog, &w), gr = run_prog(&prog, &r);

			if (t_fd || (k == 0 && handlers)) {
				EXPECT_EQ(SECCOMP_RET_ALLOW, gw) TH_LOG("policy %zu: write(%d)", i, fd);
				own_allowed += gw == SECCOMP_RET_ALLOW;
			} else if (i != 1) {
				EXPECT_EQ(SECCOMP_RET_TRAP, gw) TH_LOG("policy %zu: write(%d)", i, fd);
			}
			if (u_fd) {
				EXPECT_EQ(SECCOMP_RET_ALLOW, gr) TH_LOG("policy %zu: read(%d)", i, fd);
				own_allowed += gr == SECCOMP_RET_ALLOW;
			} else if (i == 2 || i == 4) {
				EXPECT_EQ(SECCOMP_RET_TRAP, gr) TH_LOG("policy %zu: read(%d)", i, fd);
			}
		}
		struct seccomp_data ex = { .nr = SYS_exit, .arch = AUDIT_ARCH_X86_64, .args = { 3 } };
		struct seccomp_data sr = { .nr = SYS_rt_sigreturn, .arch = AUDIT_ARCH_X86_64 };
		struct seccomp_data pp = { .nr = SYS_getppid, .arch = AUDIT_ARCH_X86_64 };
		EXPECT_EQ(SECCOMP_RET_ALLOW, run_prog(&prog, &ex)) TH_LOG("policy %zu", i);
		EXPECT_EQ(SECCOMP_RET_ALLOW, run_prog(&prog, &sr)) TH_LOG("policy %zu", i);
		if (i == 2) /* the default's kill: T names it, then kills */
			EXPECT_EQ(SECCOMP_RET_TRAP, run_prog(&prog, &pp));
		/* the policy's own allow set stays in the filter where it fits
		 * one shape with sandpit's: the program's writes to stdout never
		 * trap */
		if (i == 0 || i == 2) {
			struct seccomp_data out = { .nr = SYS_write, .arch = AUDIT_ARCH_X86_64,
						    .args = { 1, 0x1000, 5 } };
			EXPECT_EQ(SECCOMP_RET_ALLOW, run_prog(&prog, &out)) TH_LOG("policy %zu", i);
		}
		for (size_t n = 0; n < 4; n++) {
			static const int nrs[] = { SYS_read, SYS_write, SYS_exit, SYS_rt_sigreturn };
			check_nr(&prog, p, &rt, SECCOMP_RET_KILL_PROCESS, nrs[n], 2000, &t);
		}
		policy_free(p);
	}
	/* 8 T eventfds written and 8 U eventfds read in each, B's socket in one */
	EXPECT_EQ(5 * 16 + 1, own_allowed);
	/* random rules on read and write, of every shape: sandpit's own
	 * descriptors pass in each program, whatever it keeps of the rules */
	long random_own = 0;
	for (int round = 0; round < 60; round++) {
		struct policy *p = NULL;
		char err[256] = "";

		ASSERT_EQ(0, policy_new(&p));
		for (int k = 0; k < 2; k++) {
			const char *name = k ? "write" : "read";
			ASSERT_EQ(0, policy_set(p, name, POLICY_THREAD, 1 + rnd() % 100, err, sizeof(err)))
			TH_LOG("%s", err);
			for (int j = 0, n = 1 + rnd() % 3; j < n; j++) {
				struct policy_rule r;

				random_rule(&r);
				ASSERT_EQ(0, policy_add_rule(p, name, &r, err, sizeof(err))) TH_LOG("%s", err);
			}
		}
		ASSERT_EQ(0, load_prog(p, &rt, 0, &prog));
		for (int i = 0; i < OWN_N; i++) {
			struct seccomp_data w = { .nr = SYS_write, .arch = AUDIT_ARCH_X86_64,
						  .args = { (uint64_t)rt.own_t + 2 * i, rnd(), 8 } };
			struct seccomp_data r = { .nr = SYS_read, .arch = AUDIT_ARCH_X86_64,
						  .args = { (uint64_t)rt.own_t + 1 + 2 * i, rnd(), 64 } };
			random_own += run_prog(&prog, &w) == SECCOMP_RET_ALLOW;
			random_own += run_prog(&prog, &r) == SECCOMP_RET_ALLOW;
		}
		check_nr(&prog, p, &rt, SECCOMP_RET_KILL_PROCESS, SYS_read, 400, &t);
		check_nr(&prog, p, &rt, SECCOMP_RET_KILL_PROCESS, SYS_write, 400, &t);
		policy_free(p);
	}
	EXPECT_EQ(60 * 2 * OWN_N, random_own);
	TH_LOG("%ld vectors: %ld allowed, %ld errno, %ld trapped; sandpit's own allowed %ld + %ld",
	       t.vectors, t.allow, t.errno_, t.trap, own_allowed, random_own);
	EXPECT_EQ(0, t.wrong);
}

/* Random thread-class rules, to catch both our set algebra and libseccomp's
 * tree building out. */
static void random_rule(struct policy_rule *r)
{
	static const uint64_t masks[] = { ~0ULL, 0xff, 0x7f, 0x10, 0x3, 0xffffffff,
					  0xffffffff00000000ULL, ~7ULL, 0x8000000000000001ULL };
	static const uint64_t vals[] = { 0, 1, 2, 3, 0x10, 0x7f, 1030, 0x5401, ~0ULL, 1ULL << 40 };
	static const int ops[] = { RULE_MASK_ZERO, RULE_MASKED_EQ, RULE_MASKED_NE, RULE_FD_FREE,
				   RULE_RANGE_FREE, RULE_SELF_PID, RULE_U_TID, RULE_LE,
				   RULE_BITSET };

	memset(r, 0, sizeof(*r));
	r->op = ops[rnd() % 9];
	r->arg = rnd() % 4 ? rnd() % 3 : rnd() % 6; /* mostly few: rules meet on one */
	r->arg2 = POLICY_NOARG;
	r->carg = POLICY_NOARG;
	if (r->op == RULE_RANGE_FREE && rnd() % 2)
		r->arg2 = (r->arg + 1) % 6;
	if (rnd() % 3 == 0) {
		r->carg = rnd() % 3;
		r->cmask = masks[rnd() % 9];
	}
	r->err = rnd() % 4 ? (int)(1 + rnd() % 100) : 0;
	r->mask = masks[rnd() % 9];
	r->val = vals[rnd() % 10];
	if (rnd() % 2)
		r->val &= r->mask;
	if (r->op == RULE_BITSET)
		r->mask = rnd() & rnd();
}

/* With bpf.c's shape rule turned off, libseccomp's accumulator bug showed
 * after 45 to 301 rounds depending on the seed; with this one, within 300. */
#define ROUNDS 300

TEST(random_policies_bpf_never_allows_what_t_refuses)
{
	static struct prog prog;
	static const char *const names[] = { "close",   "dup2",	    "fcntl",	"ioctl",
					     "mmap",	"kill",	    "prctl",	"lseek",
					     "madvise", "socketpair", "dup3",	"mprotect",
					     "futex",	"tgkill",   "sendto",	"recvfrom",
					     "shutdown", "prlimit64", "epoll_ctl", "getdents64" };
	struct tally t = { 0 };
	size_t longest = 0;

	rnd_state = 0xb5f;
	for (int round = 0; round < ROUNDS; round++) {
		struct policy_runtime rt = { .pid = 100 + (int)(rnd() % 70000) };
		struct policy *p = NULL;
		char err[256] = "";

		rt.fd_lo = round % 3 == 0 ? 5 : FD_LO;
		rt.fd_hi = round % 3 == 0 ? 5 : round % 3 == 1 ? FD_HI : FD_LO - 1;
		ASSERT_EQ(0, policy_new(&p));
		/* a few calls, or many (then the instruction budget decides) */
		for (size_t i = 0; i < (round % 2 ? 20 : 6); i++) {
			int n = 1 + rnd() % 4;

			ASSERT_EQ(0, policy_set(p, names[i], POLICY_THREAD, 1 + rnd() % 100, err,
						sizeof(err)))
			TH_LOG("%s", err);
			for (int j = 0; j < n; j++) {
				struct policy_rule r;

				random_rule(&r);
				ASSERT_EQ(0, policy_add_rule(p, names[i], &r, err, sizeof(err)))
				TH_LOG("%s", err);
			}
		}
		ASSERT_EQ(0, load_prog(p, &rt, 0, &prog));
		longest = prog.n > longest ? prog.n : longest;
		for (size_t i = 0; i < (round % 2 ? 20 : 6); i++)
			check_nr(&prog, p, &rt, SECCOMP_RET_KILL_PROCESS, nr_of(names[i]), 400, &t);
		policy_free(p);
	}
	TH_LOG("%ld vectors: %ld allowed, %ld errno, %ld trapped; longest program %zu", t.vectors,
	       t.allow, t.errno_, t.trap, longest);
	EXPECT_EQ(0, t.wrong);
	/* the property must not hold by trapping everything */
	EXPECT_LT(t.vectors / 20, t.allow);
	EXPECT_LT(t.vectors / 20, t.errno_);
}

/* The default policy's filter built with the library (policy/default_filter.S)
 * is, for any pid, exactly what libseccomp builds at run time. */
extern const char sandpit_default_filter[];
extern const uint64_t sandpit_default_filter_len;

static size_t slurp_fd(int fd, char **out)
{
	off_t len = lseek(fd, 0, SEEK_END);
	*out = len > 0 ? malloc((size_t)len) : NULL;
	if (!*out || pread(fd, *out, (size_t)len, 0) != len)
		return 0;
	return (size_t)len;
}

/* Two programs give the same verdict for every call number with each of
 * its first three arguments drawn from values rules compare with. */
static int same_verdicts(const char *pa, size_t na, const char *pb, size_t nb, pid_t pid)
{
	static struct prog a, b;
	const uint64_t v[] = { 0, 1, 2, 3, (uint64_t)pid, (uint64_t)pid + 1, SM_FD_TOP - 1, ~0ULL };
	if (na > sizeof(a.insn) || nb > sizeof(b.insn))
		return -1;
	memcpy(a.insn, pa, na);
	a.n = na / sizeof(a.insn[0]);
	memcpy(b.insn, pb, nb);
	b.n = nb / sizeof(b.insn[0]);
	int differ = 0;
	for (int nr = 0; nr < TT_MAX_NR; nr++)
		for (size_t i = 0; i < 8 * 8 * 8; i++) {
			struct seccomp_data d = { .nr = nr, .arch = AUDIT_ARCH_X86_64,
						  .args = { v[i % 8], v[i / 8 % 8], v[i / 64] } };
			differ += run_prog(&a, &d) != run_prog(&b, &d);
		}
	return differ;
}

TEST(prebuilt_default_filter_equals_a_fresh_one)
{
	static const pid_t pids[] = { 1, 2, 300, 4242, 65536, 4194303 };
	/* denials trapped too: `sandpit run` counts refusals */
	static const uint32_t flags[] = { 0, POLICY_BPF_NO_KILL_PROCESS, POLICY_BPF_TRAP_DENY,
					  POLICY_BPF_NO_KILL_PROCESS | POLICY_BPF_TRAP_DENY };
	struct policy *p;
	char err[256];
	ASSERT_EQ(0, policy_new_default(&p, NULL, NULL, err, sizeof(err)));
	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
		for (size_t i = 0; i < sizeof(pids) / sizeof(pids[0]); i++) {
			struct policy_runtime rt = { .pid = pids[i], .fd_lo = SM_FD_TOP - SM_NFDS,
						     .fd_hi = SM_FD_TOP - 1 };
			int a = memfd_create("prebuilt", 0), b = memfd_create("fresh", 0);
			char *pa = NULL, *pb = NULL;
			scmp_filter_ctx ctx;
			ASSERT_EQ(0, policy_bpf_from_template(sandpit_default_filter,
							      sandpit_default_filter_len, pids[i],
							      rt.fd_lo, rt.fd_hi, flags[f], a));
			ASSERT_EQ(0, policy_compile_bpf(p, &rt, flags[f], &ctx, err, sizeof(err)));
			ASSERT_EQ(0, seccomp_export_bpf(ctx, b));
			seccomp_release(ctx);
			size_t na = slurp_fd(a, &pa), nb = slurp_fd(b, &pb);
			EXPECT_NE(0, (int)na);
			if (flags[f] & POLICY_BPF_TRAP_DENY && (na != nb || memcmp(pa, pb, na))) {
				/* with denials trapped, a pid equal to another call's
				 * constant (kill's arg0 == 1 and one arg0 == 1 elsewhere)
				 * lets libseccomp share the identical block; the
				 * template keeps both: the verdicts must agree */
				EXPECT_EQ(0, same_verdicts(pa, na, pb, nb, pids[i]))
					TH_LOG("pid %d flags %u", pids[i], flags[f]);
			} else {
				EXPECT_EQ(0, na == nb ? memcmp(pa, pb, na) : 1)
					TH_LOG("pid %d flags %u", pids[i], flags[f]);
			}
			free(pa);
			free(pb);
			close(a);
			close(b);
		}
	/* other descriptors or flags: none prebuilt, compiled at run time */
	int fd = memfd_create("none", 0);
	EXPECT_EQ(-ENOENT, policy_bpf_from_template(sandpit_default_filter, sandpit_default_filter_len,
						    1, 100, 133, 0, fd));
	EXPECT_EQ(-ENOENT, policy_bpf_from_template(sandpit_default_filter, sandpit_default_filter_len,
						    1, SM_FD_TOP - SM_NFDS, SM_FD_TOP - 1,
						    POLICY_BPF_TRAP_DENY << 1, fd));
	close(fd);
	policy_free(p);
}

TEST_HARNESS_MAIN
