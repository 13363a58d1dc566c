/* One file over 700 lines: every test, on libc and ld.so, on a live process or on
 * hand-made code, checks the plan against the same test stub, configuration and independent
 * decoder (its first 300 lines); split, each part would need all of them. */
/* The patcher: every `syscall` found, every trampoline equivalent to the code
 * it replaces, branch targets never split, sandpit's own code never touched,
 * and a patched process still works. */
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <Zydis/Zydis.h>
#include <kselftest_harness.h>
#include "user/patch/patch.h"
#include "user/layout/tramp_layout.h"
#include "vdso_clock.h"

/* The test's syscall stub: count, then do the call.  Unlike sandpit's stub it
 * clobbers flags (incq, cmp), which no libc code relies on across a syscall. */
extern char sandpit_test_stub[], sandpit_test_stub_end[];
unsigned long sandpit_test_calls __attribute__((visibility("hidden")));
__asm__(".text\n"
	".globl sandpit_test_stub\n"
	".hidden sandpit_test_stub\n"
	"sandpit_test_stub:\n"
	"	incq sandpit_test_calls(%rip)\n"
	"	cmp $15, %rax\n"
	"	jne 1f\n"
	/* rt_sigreturn: drop the return address and the red zone, go native */
	"	lea 136(%rsp), %rsp\n"
	"	syscall\n"
	"1:	syscall\n"
	"	ret\n"
	".globl sandpit_test_stub_end\n"
	".hidden sandpit_test_stub_end\n"
	"sandpit_test_stub_end:\n");

static const struct patch_config test_cfg = {
	.stub = (uintptr_t)sandpit_test_stub,
	.skip_lo = (uintptr_t)sandpit_test_stub,
	.skip_hi = (uintptr_t)sandpit_test_stub_end,
};

struct text {
	const char *name;
	uintptr_t lo, hi;
};

static int find_text_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct text *t = arg;
	const char *slash = strrchr(info->dlpi_name, '/');

	(void)size;
	if (strcmp(slash ? slash + 1 : info->dlpi_name, t->name))
		return 0;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			t->lo = info->dlpi_addr + ph->p_vaddr;
			t->hi = t->lo + ph->p_memsz;
		}
	}
	return 1;
}

static struct text find_text(const char *name)
{
	struct text t = { .name = name };

	dl_iterate_phdr(find_text_cb, &t);
	return t;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- checking a plan against an independent decode ---- */

static ZydisDecoder decoder;
static ZydisFormatter formatter;

static void zydis_init(void)
{
	ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	ZydisFormatterInit(&formatter, ZYDIS_FORMATTER_STYLE_INTEL);
}

struct insn {
	ZydisDecodedInstruction in;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	char text[128];   /* absolute addresses: equal text means equal semantics */
};

static int decode(const void *bytes, size_t len, uintptr_t at, struct insn *x)
{
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&decoder, bytes, len, &x->in, x->op)))
		return -1;
	ZydisFormatterFormatInstruction(&formatter, &x->in, x->op, x->in.operand_count_visible,
					x->text, sizeof x->text, at, NULL);
	return x->in.length;
}

static uint64_t absolute(const struct insn *x, unsigned op, uintptr_t at)
{
	ZyanU64 v = 0;

	ZydisCalcAbsoluteAddress(&x->in, &x->op[op], at, &v);
	return v;
}

/* A linear decode of a whole text: instruction starts and branch targets. */
struct linear {
	uintptr_t lo, hi;
	uint8_t *start, *target;   /* one byte per text byte */
	unsigned syscalls;
};

static void linear_decode(struct linear *l, uintptr_t lo, uintptr_t hi)
{
	ZydisDecodedInstruction in;

	l->lo = lo;
	l->hi = hi;
	l->start = calloc(hi - lo, 1);
	l->target = calloc(hi - lo + 16, 1);
	l->syscalls = 0;
	for (uintptr_t a = lo; a < hi;) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&decoder, NULL, (void *)a, hi - a,
								&in))) {
			a++;
			continue;
		}
		l->start[a - lo] = 1;
		l->syscalls += in.mnemonic == ZYDIS_MNEMONIC_SYSCALL;
		if ((in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) && in.raw.imm[0].is_relative) {
			uintptr_t t = a + in.length + in.raw.imm[0].value.s;

			if (t >= lo && t < hi)
				l->target[t - lo] = 1;
		}
		if (in.meta.category == ZYDIS_CATEGORY_CALL)
			l->target[a + in.length - lo] = 1;
		a += in.length;
	}
}

static void linear_free(struct linear *l)
{
	free(l->start);
	free(l->target);
}

/* Check `n` relocated instructions at *t against the originals at `orig`.
 * Returns the number of instructions that did not match. */
static int check_moved(const struct patch_plan *pl, size_t *t, uintptr_t orig, unsigned n,
		       const struct linear *l)
{
	int bad = 0;

	for (unsigned j = 0; j < n; j++) {
		struct insn a, b;
		int la = decode((void *)orig, 15, orig, &a);
		int lb = decode(pl->code + *t, pl->code_len - *t, pl->region + *t, &b);

		if (la < 0 || lb < 0 || a.in.mnemonic != b.in.mnemonic || strcmp(a.text, b.text) ||
		    (l && !l->start[orig - l->lo])) {
			fprintf(stderr, "# moved %lx: '%s' became '%s'\n", (unsigned long)orig,
				a.text, b.text);
			bad++;
			break;
		}
		orig += la;
		*t += lb;
	}
	return bad;
}

/* The fixed part: lea -128(%rsp),%rsp; call *slot(%rip); lea 128(%rsp),%rsp */
static int check_call(const struct patch_plan *pl, size_t *t)
{
	static const ZydisMnemonic want[3] = { ZYDIS_MNEMONIC_LEA, ZYDIS_MNEMONIC_CALL,
					       ZYDIS_MNEMONIC_LEA };
	static const int64_t disp[3] = { -128, 0, 128 };

	for (unsigned j = 0; j < 3; j++) {
		struct insn x;
		int len = decode(pl->code + *t, pl->code_len - *t, pl->region + *t, &x);

		if (len < 0 || x.in.mnemonic != want[j])
			return 1;
		/* the stub reads the jmp back at this distance (tramp_layout.h) */
		if (j == 2 && len != TRAMP_UP_LEN)
			return 1;
		if (j == 1 ? absolute(&x, 0, pl->region + *t) != pl->region
			   : x.op[0].reg.value != ZYDIS_REGISTER_RSP ||
				     x.op[1].mem.base != ZYDIS_REGISTER_RSP ||
				     x.op[1].mem.disp.value != disp[j])
			return 1;
		*t += len;
	}
	return 0;
}

static int check_site(const struct patch_plan *pl, const struct patch_site *s,
		      const struct linear *l)
{
	size_t t = s->tramp;
	struct insn x;
	int bad = 0;

	if (s->hi - s->lo < 5 || s->addr < s->lo || s->addr + 2 > s->hi ||
	    memcmp((void *)s->addr, "\x0f\x05", 2))
		return 1;
	bad += check_moved(pl, &t, s->lo, s->n_pre, l);
	bad += check_call(pl, &t);
	bad += check_moved(pl, &t, s->addr + 2, s->n_post, l);
	if (decode(pl->code + t, pl->code_len - t, pl->region + t, &x) < 0 ||
	    x.in.mnemonic != ZYDIS_MNEMONIC_JMP || absolute(&x, 0, pl->region + t) != s->hi)
		bad++;
	/* with nothing after the syscall, that jmp (e9 rel32) goes to the
	 * address after it: the return slot of the stub's frame */
	else if (!s->n_post && (x.in.length != TRAMP_JMP_LEN || pl->code[t] != TRAMP_JMP_OP ||
				s->hi != s->addr + 2))
		bad++;
	else
		t += x.in.length;
	if (t - s->tramp != s->tramp_len)
		bad++;
	if (l) {
		/* against the whole text: no target inside, the ends are boundaries */
		for (uintptr_t a = s->lo + 1; a < s->hi; a++)
			bad += l->target[a - l->lo];
		bad += !l->start[s->lo - l->lo] || !l->start[s->addr - l->lo];
		bad += s->hi < l->hi && !l->start[s->hi - l->lo];
	}
	return bad;
}

/* Plan a real object's text in place and check every trampoline. */
static struct patch_stats plan_and_check(struct __test_metadata *_metadata, const char *name)
{
	struct text t = find_text(name);
	struct patch_plan pl;
	struct linear l;
	unsigned bad = 0;

	zydis_init();
	EXPECT_NE(0UL, t.lo) TH_LOG("%s not loaded", name);
	if (!t.lo)
		return (struct patch_stats){0};
	/* the region need not exist for a dry run, only be within reach */
	EXPECT_EQ(0, patch_plan_range(&test_cfg, t.lo, t.hi, t.lo - (1UL << 24), &pl));
	linear_decode(&l, t.lo, t.hi);
	for (unsigned i = 0; i < pl.n_site; i++)
		bad += check_site(&pl, &pl.site[i], &l) != 0;
	EXPECT_EQ(0u, bad) TH_LOG("%s: %u trampolines differ from the code they replace", name, bad);
	EXPECT_EQ(0, memcmp(pl.code, &test_cfg.stub, PATCH_SLOT_SIZE));
	EXPECT_EQ(l.syscalls, pl.st.sites) TH_LOG("%s: linear decode finds %u syscalls",
						   name, l.syscalls);
	EXPECT_EQ(pl.st.sites, pl.st.patched + pl.st.skipped_target + pl.st.skipped_other +
				       pl.st.native_sigreturn);
	EXPECT_EQ(pl.n_site, pl.st.patched);
	TH_LOG("%s: %u candidates, %u sites, %u patchable, %u skipped (target), "
	       "%u skipped (other), %u native rt_sigreturn, %zu trampoline bytes",
	       name, pl.st.candidates, pl.st.sites, pl.st.patched, pl.st.skipped_target,
	       pl.st.skipped_other, pl.st.native_sigreturn, pl.code_len);
	linear_free(&l);
	struct patch_stats st = pl.st;
	patch_plan_free(&pl);
	return st;
}

TEST(patch_roundtrip_libc_ldso)
{
	struct patch_stats libc = plan_and_check(_metadata, "libc.so.6");
	struct patch_stats ldso = plan_and_check(_metadata, "ld-linux-x86-64.so.2");

	EXPECT_GE(libc.sites, 500u);
	EXPECT_GE(libc.patched * 100, (libc.sites - libc.native_sigreturn) * 99);
	EXPECT_GE(ldso.sites, 40u);
	EXPECT_GE(ldso.patched * 100, (ldso.sites - ldso.native_sigreturn) * 99);
}

static unsigned method_sum(const struct patch_stats *st)
{
	unsigned n = 0;

	for (unsigned i = 0; i < PATCH_N_METHODS; i++)
		n += st->by_method[i];
	return n;
}

/* Each method of finding a function's start, on code that offers it:
 * libc and ld.so have .eh_frame tables for almost every function (glibc
 * 2.36's libc: 523 of its 526 sites, the rest from its symbols and the
 * gaps between FDEs); Go's .gopclntab, a dynamic symbol without .eh_frame
 * and malformed tables are elf_test's crafted objects; programs without
 * tables, no_unwind_test's */
TEST(patch_method_eh_frame_for_libc_and_ldso)
{
	struct patch_stats libc = plan_and_check(_metadata, "libc.so.6");
	struct patch_stats ldso = plan_and_check(_metadata, "ld-linux-x86-64.so.2");

	EXPECT_EQ(libc.sites, method_sum(&libc));
	EXPECT_EQ(ldso.sites, method_sum(&ldso));
	EXPECT_GE(libc.by_method[PATCH_BY_EH_FRAME] * 100, libc.sites * 99);
	EXPECT_GE(ldso.by_method[PATCH_BY_EH_FRAME] * 100, ldso.sites * 99);
	EXPECT_EQ(0u, libc.by_method[PATCH_BY_GOPCLNTAB] + ldso.by_method[PATCH_BY_GOPCLNTAB]);
}

/* ---- a patched process ---- */

static volatile sig_atomic_t got_signal;
static unsigned regions, bad_regions;

/* a region arrives finished: its first word is the stub's address */
static void count_region(void *ctx, uintptr_t lo, uintptr_t hi)
{
	(void)ctx;
	regions++;
	bad_regions += hi <= lo || *(const uintptr_t *)lo != test_cfg.stub;
}

static void on_usr1(int sig)
{
	got_signal = sig;
}

/* Each step exits with its own status, so a failure names itself. */
static int live_child(pid_t parent)
{
	struct patch_config cfg = test_cfg;
	struct patch_stats st = {0}, again = {0};
	struct timespec a, b, cpu;
	unsigned long before;
	char buf[4];
	void *mem;
	int fd;

	cfg.on_region = count_region;
	if (patch_process(&cfg, &st) || !st.patched || !regions || bad_regions)
		return 10;
	before = sandpit_test_calls;
	if (getppid() != parent || sandpit_test_calls == before)
		return 11;
	fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0 || read(fd, buf, 4) != 4 || memcmp(buf, "\177ELF", 4) || close(fd))
		return 12;
	if (clock_gettime(CLOCK_MONOTONIC, &a) || clock_gettime(CLOCK_MONOTONIC, &b) ||
	    (b.tv_sec == a.tv_sec ? b.tv_nsec < a.tv_nsec : b.tv_sec < a.tv_sec))
		return 13;
	before = sandpit_test_calls;
	/* not in the vDSO's fast path: takes its syscall fallback */
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) || sandpit_test_calls == before ||
	    (cpu.tv_sec == 0 && cpu.tv_nsec == 0))
		return 14;
	before = sandpit_test_calls;
	if (printf("# patched child: %u sites patched\n", st.patched) <= 0 || fflush(stdout) ||
	    sandpit_test_calls == before)
		return 15;
	mem = malloc(1 << 20);
	if (!mem)
		return 16;
	memset(mem, 0x5a, 1 << 20);
	free(mem);
	/* the handler returns through the native rt_sigreturn */
	if (signal(SIGUSR1, on_usr1) == SIG_ERR || raise(SIGUSR1) || got_signal != SIGUSR1)
		return 17;
	/* nothing left to patch the second time */
	if (patch_process(&cfg, &again) || again.patched || again.modules != st.modules)
		return 18;
	return 0;
}

static int run_child(int (*fn)(pid_t))
{
	pid_t parent = getpid(), pid = fork();
	int status;

	if (pid == 0)
		_exit(fn(parent));
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(patch_live_process)
{
	ASSERT_EQ(0, run_child(live_child));
}

/* The plan cache: a second pass over code already patched finds only what
 * is left, and must not replace the file's plans with that; a fresh
 * process then patches from the cache exactly what the first pass did. */
static unsigned *pass_counts;

static int two_passes_child(pid_t parent)
{
	struct patch_stats st = {0}, again = {0};

	(void)parent;
	if (patch_process(&test_cfg, &st) || !st.patched)
		return 10;
	if (patch_process(&test_cfg, &again) || again.patched)
		return 11;
	pass_counts[0] = st.patched;
	pass_counts[1] = st.sites;
	return 0;
}

static int one_pass_child(pid_t parent)
{
	struct patch_stats st = {0};

	(void)parent;
	if (patch_process(&test_cfg, &st))
		return 10;
	pass_counts[2] = st.patched;
	pass_counts[3] = st.sites;
	return 0;
}

TEST(patch_second_pass_leaves_the_plan_cache_whole)
{
	char dir[] = "/tmp/sandpit-plans-XXXXXX", cmd[64];

	pass_counts = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pass_counts);
	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, setenv("SANDPIT_PLAN_CACHE", dir, 1));
	ASSERT_EQ(0, run_child(two_passes_child));
	ASSERT_EQ(0, run_child(one_pass_child));
	EXPECT_EQ(pass_counts[0], pass_counts[2]);
	EXPECT_EQ(pass_counts[1], pass_counts[3]);
	unsetenv("SANDPIT_PLAN_CACHE");
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	EXPECT_EQ(0, system(cmd));
}

static int timed_child(pid_t parent)
{
	struct patch_stats st = {0};
	double t0, t1;
	int r;

	(void)parent;
	t0 = now_ms();
	r = patch_process(&test_cfg, &st);
	t1 = now_ms();
	ksft_print_msg("patch_process: %.3f ms, %u modules, %u candidates, %u sites, %u patched, "
		       "%u skipped (target), %u skipped (other), %u native rt_sigreturn\n",
		       t1 - t0, st.modules, st.candidates, st.sites, st.patched,
		       st.skipped_target, st.skipped_other, st.native_sigreturn);
	fflush(stdout);
	return r ? 1 : 0;
}

/* Not an assertion: the budget for all of sandpit_start is 5 ms. */
TEST(patch_process_time)
{
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, run_child(timed_child));
}

/* ---- hand-made code, assembled with the Zydis encoder ---- */

struct as {
	uint8_t *buf;
	size_t off;
};

static uintptr_t as_here(const struct as *a)
{
	return (uintptr_t)a->buf + a->off;
}

static void as_emit(struct as *a, ZydisMnemonic mn, unsigned n, const ZydisEncoderOperand *ops,
		    ZydisBranchWidth bw)
{
	ZydisEncoderRequest r;
	ZyanUSize len = 32;

	memset(&r, 0, sizeof r);
	r.machine_mode = ZYDIS_MACHINE_MODE_LONG_64;
	r.mnemonic = mn;
	r.operand_count = n;
	r.branch_width = bw;
	if (n)
		memcpy(r.operands, ops, n * sizeof *ops);
	if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstructionAbsolute(&r, a->buf + a->off, &len,
								 as_here(a))))
		abort();
	a->off += len;
}

static ZydisEncoderOperand R(ZydisRegister reg)
{
	return (ZydisEncoderOperand){ .type = ZYDIS_OPERAND_TYPE_REGISTER, .reg.value = reg };
}

static ZydisEncoderOperand I(uint64_t v)
{
	return (ZydisEncoderOperand){ .type = ZYDIS_OPERAND_TYPE_IMMEDIATE, .imm.u = v };
}

static ZydisEncoderOperand M(ZydisRegister base, int64_t disp, unsigned size)
{
	return (ZydisEncoderOperand){ .type = ZYDIS_OPERAND_TYPE_MEMORY, .mem.base = base,
				      .mem.displacement = disp, .mem.size = size };
}

static void as0(struct as *a, ZydisMnemonic mn)
{
	as_emit(a, mn, 0, NULL, ZYDIS_BRANCH_WIDTH_NONE);
}

static void as2(struct as *a, ZydisMnemonic mn, ZydisEncoderOperand x, ZydisEncoderOperand y)
{
	ZydisEncoderOperand ops[2] = { x, y };

	as_emit(a, mn, 2, ops, ZYDIS_BRANCH_WIDTH_NONE);
}

static void as_jcc(struct as *a, ZydisMnemonic mn, uintptr_t to)
{
	ZydisEncoderOperand op = I(to);

	as_emit(a, mn, 1, &op, ZYDIS_BRANCH_WIDTH_8);
}

/* nops up to `off`, so a linear decode stays in step */
static void as_skip(struct as *a, size_t off)
{
	ZydisEncoderNopFill(a->buf + a->off, off - a->off);
	a->off = off;
}

static uint8_t *code_page(void)
{
	uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		ZydisEncoderNopFill(p, 4096);
	return p == MAP_FAILED ? NULL : p;
}

/* getpid the plain way: mov $39,%eax; syscall; ret */
static uintptr_t as_getpid(struct as *a)
{
	uintptr_t f = as_here(a);

	as2(a, ZYDIS_MNEMONIC_MOV, R(ZYDIS_REGISTER_EAX), I(SYS_getpid));
	as0(a, ZYDIS_MNEMONIC_SYSCALL);
	as0(a, ZYDIS_MNEMONIC_RET);
	return f;
}

TEST(patch_skip_range)
{
	uint8_t *page = code_page(), before[16];
	struct as a = { .buf = page };
	struct patch_config cfg = test_cfg;
	struct patch_stats st = {0};
	long (*mine)(void), (*theirs)(void);
	unsigned long calls;

	ASSERT_NE(NULL, page);
	mine = (long (*)(void))as_getpid(&a);
	as_skip(&a, 64);
	theirs = (long (*)(void))as_getpid(&a);
	memcpy(before, page, sizeof before);
	/* page[0, 64) is "sandpit's own code" */
	cfg.skip_lo = (uintptr_t)page;
	cfg.skip_hi = (uintptr_t)page + 64;
	ASSERT_EQ(0, patch_range(&cfg, (uintptr_t)page, (uintptr_t)page + 4096, &st));
	EXPECT_EQ(1u, st.candidates);
	EXPECT_EQ(1u, st.sites);
	EXPECT_EQ(1u, st.patched);
	EXPECT_EQ(0, memcmp(before, page, sizeof before));
	EXPECT_EQ(0xe9, page[64]);
	calls = sandpit_test_calls;
	EXPECT_EQ(getpid(), mine());
	EXPECT_EQ(calls, sandpit_test_calls);
	EXPECT_EQ(getpid(), theirs());
	EXPECT_LT(calls, sandpit_test_calls);
}

/* f(x): ecx = getpid; if (x) edx = 0;  L: eax = ecx; syscall; [edx = eax;] ret
 * The jz lands on the instruction just before the syscall; with `tail`, a
 * region that starts at L and takes one instruction after the syscall fits. */
static uintptr_t as_branchy(struct as *a, bool tail, uintptr_t *label)
{
	uintptr_t f = as_here(a), l = 0;

	for (int pass = 0; pass < 2; pass++) {
		a->off = f - (uintptr_t)a->buf;
		as2(a, ZYDIS_MNEMONIC_MOV, R(ZYDIS_REGISTER_ECX), I(SYS_getpid));
		as2(a, ZYDIS_MNEMONIC_XOR, R(ZYDIS_REGISTER_ESI), R(ZYDIS_REGISTER_ESI));
		as2(a, ZYDIS_MNEMONIC_TEST, R(ZYDIS_REGISTER_EDI), R(ZYDIS_REGISTER_EDI));
		as_jcc(a, ZYDIS_MNEMONIC_JZ, pass ? l : as_here(a) + 4);
		as2(a, ZYDIS_MNEMONIC_XOR, R(ZYDIS_REGISTER_EDX), R(ZYDIS_REGISTER_EDX));
		l = as_here(a);
		as2(a, ZYDIS_MNEMONIC_MOV, R(ZYDIS_REGISTER_EAX), R(ZYDIS_REGISTER_ECX));
		as0(a, ZYDIS_MNEMONIC_SYSCALL);
		if (tail)
			as2(a, ZYDIS_MNEMONIC_MOV, R(ZYDIS_REGISTER_EDX), R(ZYDIS_REGISTER_EAX));
		as0(a, ZYDIS_MNEMONIC_RET);
	}
	*label = l;
	return f;
}

TEST(patch_branch_target_not_split)
{
	uint8_t *page = code_page();
	struct as a = { .buf = page };
	uintptr_t fits_l, stuck_l, lo = (uintptr_t)page, hi = lo + 4096;
	long (*fits)(int), (*stuck)(int);
	struct patch_stats st = {0};
	struct patch_plan pl;
	uint8_t before[32];

	ASSERT_NE(NULL, page);
	fits = (long (*)(int))as_branchy(&a, true, &fits_l);
	as_skip(&a, 128);
	stuck = (long (*)(int))as_branchy(&a, false, &stuck_l);
	memcpy(before, page + 128, sizeof before);

	ASSERT_EQ(0, patch_plan_range(&test_cfg, lo, hi, lo + (1UL << 24), &pl));
	EXPECT_EQ(2u, pl.st.sites);
	EXPECT_EQ(1u, pl.st.patched);
	EXPECT_EQ(1u, pl.st.skipped_target);
	ASSERT_EQ(1u, pl.n_site);
	EXPECT_FALSE(pl.site[0].lo < fits_l && fits_l < pl.site[0].hi);
	EXPECT_EQ(fits_l, pl.site[0].lo);
	EXPECT_EQ(1u, pl.site[0].n_pre);
	EXPECT_EQ(1u, pl.site[0].n_post);
	patch_plan_free(&pl);

	ASSERT_EQ(0, patch_range(&test_cfg, lo, hi, &st));
	EXPECT_EQ(1u, st.patched);
	EXPECT_EQ(0, memcmp(before, page + 128, sizeof before));
	EXPECT_EQ(getpid(), fits(0));
	EXPECT_EQ(getpid(), fits(1));
	EXPECT_EQ(getpid(), stuck(0));
	EXPECT_EQ(getpid(), stuck(1));
}

/* g(): mov nr(%rip),%eax; syscall; ret -- the displaced load is RIP-relative */
static uintptr_t as_riprel(struct as *a, uintptr_t nr)
{
	uintptr_t f = as_here(a);

	as2(a, ZYDIS_MNEMONIC_MOV, R(ZYDIS_REGISTER_EAX), M(ZYDIS_REGISTER_RIP, nr, 4));
	as0(a, ZYDIS_MNEMONIC_SYSCALL);
	as0(a, ZYDIS_MNEMONIC_RET);
	return f;
}

/* h(nr, x): eax = nr; if (x) edx = 0;  L: syscall; test; js neg; ret; neg: -1
 * The jz to L rules out the instructions before the syscall, so the
 * region takes the two after it, and the rel8 js must become a rel32. */
static uintptr_t as_relbranch(struct as *a)
{
	uintptr_t f = as_here(a), neg = 0;

	for (int pass = 0; pass < 2; pass++) {
		uintptr_t l;

		a->off = f - (uintptr_t)a->buf;
		as2(a, ZYDIS_MNEMONIC_MOV, R(ZYDIS_REGISTER_EAX), R(ZYDIS_REGISTER_EDI));
		as2(a, ZYDIS_MNEMONIC_TEST, R(ZYDIS_REGISTER_ESI), R(ZYDIS_REGISTER_ESI));
		as_jcc(a, ZYDIS_MNEMONIC_JZ, as_here(a) + 4);
		as2(a, ZYDIS_MNEMONIC_XOR, R(ZYDIS_REGISTER_EDX), R(ZYDIS_REGISTER_EDX));
		l = as_here(a);
		as0(a, ZYDIS_MNEMONIC_SYSCALL);
		as2(a, ZYDIS_MNEMONIC_TEST, R(ZYDIS_REGISTER_EAX), R(ZYDIS_REGISTER_EAX));
		as_jcc(a, ZYDIS_MNEMONIC_JS, pass ? neg : as_here(a) + 4);
		as0(a, ZYDIS_MNEMONIC_RET);
		neg = as_here(a);
		as2(a, ZYDIS_MNEMONIC_MOV, R(ZYDIS_REGISTER_EAX), I(-1));
		as0(a, ZYDIS_MNEMONIC_RET);
		(void)l;
	}
	return f;
}

TEST(patch_relocates_relative_operands)
{
	uint8_t *page = code_page();
	struct as a = { .buf = page };
	uintptr_t lo = (uintptr_t)page, hi = lo + 4096, nr = lo + 4000;
	long (*g)(void), (*h)(long, int);
	struct patch_stats st = {0};
	struct patch_plan pl;
	struct linear l;

	ASSERT_NE(NULL, page);
	*(uint32_t *)nr = SYS_getpid;
	g = (long (*)(void))as_riprel(&a, nr);
	as_skip(&a, 64);
	h = (long (*)(long, int))as_relbranch(&a);
	as_skip(&a, 128);

	zydis_init();
	ASSERT_EQ(0, patch_plan_range(&test_cfg, lo, hi, lo + (1UL << 24), &pl));
	ASSERT_EQ(2u, pl.n_site);
	EXPECT_EQ(1u, pl.site[0].n_pre);
	EXPECT_EQ(0u, pl.site[1].n_pre);
	EXPECT_EQ(2u, pl.site[1].n_post);
	linear_decode(&l, lo, hi);
	for (unsigned i = 0; i < pl.n_site; i++)
		EXPECT_EQ(0, check_site(&pl, &pl.site[i], &l));
	linear_free(&l);
	patch_plan_free(&pl);

	ASSERT_EQ(0, patch_range(&test_cfg, lo, hi, &st));
	EXPECT_EQ(2u, st.patched);
	EXPECT_EQ(getpid(), g());
	EXPECT_EQ(getpid(), h(SYS_getpid, 0));
	EXPECT_EQ(getpid(), h(SYS_getpid, 1));
	EXPECT_EQ(-1, (int)h(100000, 1));   /* -ENOSYS: the relocated js is taken */
}

/* r(x): movq %rdi,-8(%rsp); getpid; movq -8(%rsp),%rax; ret.  The call into
 * the stub must not land in the red zone. */
TEST(patch_red_zone_kept)
{
	uint8_t *page = code_page();
	struct as a = { .buf = page };
	struct patch_stats st = {0};
	long (*r)(long);

	ASSERT_NE(NULL, page);
	r = (long (*)(long))as_here(&a);
	as2(&a, ZYDIS_MNEMONIC_MOV, M(ZYDIS_REGISTER_RSP, -8, 8), R(ZYDIS_REGISTER_RDI));
	as2(&a, ZYDIS_MNEMONIC_MOV, R(ZYDIS_REGISTER_EAX), I(SYS_getpid));
	as0(&a, ZYDIS_MNEMONIC_SYSCALL);
	as2(&a, ZYDIS_MNEMONIC_MOV, R(ZYDIS_REGISTER_RAX), M(ZYDIS_REGISTER_RSP, -8, 8));
	as0(&a, ZYDIS_MNEMONIC_RET);
	as_skip(&a, 64);
	ASSERT_EQ(0, patch_range(&test_cfg, (uintptr_t)page, (uintptr_t)page + 4096, &st));
	ASSERT_EQ(1u, st.patched);
	EXPECT_EQ(0x1234567890abcdefL, r(0x1234567890abcdefL));
}

/* rdtsc and rdtscp are planned only when the config names their stubs
 * (strict mode), and each such trampoline calls the stub of its kind. */
TEST(patch_vdso_clock_sites_only_with_their_stubs)
{
	struct text t = find_text("linux-vdso.so.1");
	struct patch_config cfg = test_cfg;
	struct vdso_clock c;
	struct patch_plan pl;
	unsigned bad = 0, calls = 0;

	zydis_init();
	vdso_clock_find(&c);
	ASSERT_NE(0UL, t.lo);
	ASSERT_LT(0u, c.n) TH_LOG("this vDSO reads no TSC: nothing to plan");
	ASSERT_EQ(0, patch_plan_range(&cfg, t.lo, t.hi, t.lo - (1UL << 24), &pl));
	EXPECT_EQ(0u, pl.st.clock_sites);
	for (unsigned i = 0; i < pl.n_site; i++)
		bad += pl.site[i].kind != PATCH_SYSCALL;
	EXPECT_EQ(0u, bad);
	patch_plan_free(&pl);

	cfg.rdtsc_stub = 0x1111000;
	cfg.rdtscp_stub = 0x2222000;
	ASSERT_EQ(0, patch_plan_range(&cfg, t.lo, t.hi, t.lo - (1UL << 24), &pl));
	EXPECT_EQ(c.n, pl.st.clock_sites);
	EXPECT_LT(0u, pl.st.clock_patched);
	EXPECT_EQ(0, memcmp(pl.code + PATCH_SLOT_SIZE, &cfg.rdtsc_stub, PATCH_SLOT_SIZE));
	EXPECT_EQ(0, memcmp(pl.code + 2 * PATCH_SLOT_SIZE, &cfg.rdtscp_stub, PATCH_SLOT_SIZE));
	for (unsigned i = 0; i < pl.n_site; i++) {
		const struct patch_site *s = &pl.site[i];
		size_t off = s->tramp;
		struct insn x;

		if (s->kind == PATCH_SYSCALL)
			continue;
		bad += memcmp((void *)s->addr, s->kind == PATCH_RDTSC ? "\x0f\x31" : "\x0f\x01\xf9",
			      s->kind == PATCH_RDTSC ? 2 : 3) != 0;
		/* the trampoline's one call goes through the slot of its kind */
		while (off < (size_t)s->tramp + s->tramp_len &&
		       decode(pl.code + off, pl.code_len - off, pl.region + off, &x) > 0) {
			uint64_t to;

			if (x.in.mnemonic == ZYDIS_MNEMONIC_CALL) {
				calls++;
				bad += !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&x.in, &x.op[0],
									     pl.region + off, &to)) ||
				       to != pl.region + s->kind * PATCH_SLOT_SIZE;
			}
			off += x.in.length;
		}
	}
	EXPECT_EQ(0u, bad);
	EXPECT_EQ(pl.st.clock_patched, calls);
	patch_plan_free(&pl);
}

/* Code with no object around it is decoded from the start of the range */
TEST(patch_method_linear_for_bare_code)
{
	uint8_t *page = code_page();
	struct as a = { .buf = page };
	uintptr_t lo = (uintptr_t)page;
	struct patch_plan pl;

	ASSERT_NE(NULL, page);
	as_riprel(&a, lo + 2048);
	as_relbranch(&a);
	ASSERT_EQ(0, patch_plan_range(&test_cfg, lo, lo + 4096, lo + (1UL << 24), &pl));
	EXPECT_EQ(2u, pl.st.sites);
	EXPECT_EQ(2u, pl.st.by_method[PATCH_BY_LINEAR]);
	EXPECT_EQ(2u, pl.st.patched);
	patch_plan_free(&pl);
}

TEST_HARNESS_MAIN
