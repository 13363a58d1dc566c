/* Start-up's patching (user/start/start.h): every executable mapping, or
 * those sandpit_patch_only names, and the vDSO, patched while B starts; in
 * filter mode the sites the filter decides itself left native; the result
 * judged, and the run-time patcher given its memory, once B is up. */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

#include "sandpit.h"
#include "user/patch/patch.h"
#include "user/start/sandbox.h"
#include "user/start/start.h"
#include "user/untrusted/runtime.h"

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

/* Filter mode's shortcut (DESIGN §3): a site that can only make a call the
 * policy allows outright stays as it is and runs at native speed, the
 * filter deciding.  Calls sandpit must see itself (exit, the signal-mask
 * family, gettid, clone) are never allow-class. */
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


/* Every trampoline region this process's starts have made: a start that
 * failed after patching leaves its trampolines in use (the patched sites
 * jump there), and the next start, which finds those sites patched and
 * makes no trampolines for them, must protect them too (invariant 3).
 * Past SM_MAX_RANGES only counted: such a start then has too many ranges
 * and fails (start_finish_patching). */
static uintptr_t made[SM_MAX_RANGES][2];
static unsigned nmade;

static void note_region(void *ctx, uintptr_t lo, uintptr_t hi)
{
	if (nmade < SM_MAX_RANGES) {
		made[nmade][0] = lo;
		made[nmade][1] = hi;
	}
	nmade++;
	start_add_range(ctx, lo, hi);
}

/* Every executable mapping (or those sandpit_patch_only names, and the
 * vDSO); each trampoline region becomes a protected range, with those of
 * an earlier start that failed.  The result is
 * judged once B is up (finish_patching). */
void start_patch_code(struct start *s)
{
	clock_gettime(CLOCK_MONOTONIC, &s->t0);
	for (unsigned i = 0; i < nmade; i++)
		start_add_range(s->sp, i < SM_MAX_RANGES ? made[i][0] : 0, i < SM_MAX_RANGES ? made[i][1] : 0);
	int strict = s->mode == SANDPIT_MODE_STRICT;
	s->pc = (struct patch_config){ .stub = (uintptr_t)sandpit_syscall_stub,
				       .rdtsc_stub = strict ? (uintptr_t)sandpit_rdtsc_stub : 0,
				       .rdtscp_stub = strict ? (uintptr_t)sandpit_rdtscp_stub : 0,
				       .skip_lo = (uintptr_t)__start_sandpit_text,
				       .skip_hi = (uintptr_t)__stop_sandpit_text,
				       .on_region = note_region, .ctx = s->sp,
				       .leave_native = s->mode == SANDPIT_MODE_FILTER ? leave_native
										: NULL,
				       .want = nonly ? want_module : NULL };
	struct rlimit rl;
	s->pc.stack_limit = getrlimit(RLIMIT_STACK, &rl) == 0 ? rl.rlim_cur : 0;
	s->pc.brk = (uint64_t)sandpit_raw_syscall6(SYS_brk, 0, 0, 0, 0, 0, 0);
	shortcut_table = s->table;
	s->ps = (struct patch_stats){ 0 };
	s->patched = patch_process(&s->pc, &s->ps);
	clock_gettime(CLOCK_MONOTONIC, &s->t1);
}

/* The patching worked, the run-time patcher has its memory, the protected
 * ranges fit; SANDPIT_DEBUG says what was patched. */
int start_finish_patching(struct start *s)
{
	struct patch_stats *ps = &s->ps;
	int r = s->patched;

	if (r < 0)
		return start_fail(r, "cannot patch system calls: %s", strerror(-r));
	if (!r && (r = sandpit_exec_patch_init(&s->pc, sandpit_entry)) < 0)
		return start_fail(r, "cannot reserve the run-time patcher's memory: %s", strerror(-r));
	if (s->sp->nranges > SM_MAX_RANGES)
		return start_fail(-E2BIG, "too many protected ranges (%lu)", (unsigned long)s->sp->nranges);
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
