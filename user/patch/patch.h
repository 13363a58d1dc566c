/* The patcher: before U enters seccomp, every `syscall` instruction in the
 * process's executable code is redirected to a per-site trampoline that calls
 * sandpit's syscall stub instead (DESIGN §3).  Runs in P with libc available,
 * single-threaded: nothing else may execute the code being patched.
 *
 * In strict mode rdtsc and rdtscp sites, which would fault there, are
 * redirected the same way to stubs that behave as the instruction.
 * A site's trampoline is
 *     <displaced instructions before the syscall, re-encoded>
 *     lea -128(%rsp),%rsp ; call *SLOT(%rip) ; lea 128(%rsp),%rsp
 *     <displaced instructions after the syscall, re-encoded>
 *     jmp <end of the displaced bytes>
 * and the site itself becomes `jmp trampoline` plus nops.  SLOT is the first
 * word of the trampoline region and holds cfg->stub.  The stub sees the
 * registers exactly as `syscall` would, returns the result in rax, clobbers
 * only rcx and r11 and preserves flags; for rax == 15 (rt_sigreturn) it drops
 * the 136 bytes (red zone + return address) and runs the real syscall. */
#ifndef SANDPIT_USER_PATCH_H
#define SANDPIT_USER_PATCH_H
#include <stddef.h>
#include <stdint.h>

#include "user/patch/patch_types.h"

/* Patch every loaded object dl_iterate_phdr reports: the main program
 * (static or dynamic), the shared objects, and the vDSO (which can not be
 * made writable, so it is replaced in place by an anonymous copy; nothing may
 * call into it meanwhile).  Executable memory
 * that no object describes (JIT code, anonymous mappings) is left to
 * patch_range.  Patched sites no longer hold 0f 05, so calling it again
 * patches only what is new.  0 or -errno; stats are added to *st (may be
 * NULL). */
int patch_process(const struct patch_config *cfg, struct patch_stats *st);

/* Patch the executable range [lo, hi), using the unwind and symbol tables
 * of the loaded object that contains it; without one, [lo, hi) is decoded
 * linearly from lo, which must be an instruction boundary. */
int patch_range(const struct patch_config *cfg, uintptr_t lo, uintptr_t hi,
		struct patch_stats *st);

/* Dry run: plan [lo, hi) as patch_range would, with the trampolines encoded
 * for a region at `region` (which need not be mapped, only within ±2 GiB),
 * and write nothing.  0 or -errno; free the plan with patch_plan_free. */
int patch_plan_range(const struct patch_config *cfg, uintptr_t lo, uintptr_t hi,
		     uintptr_t region, struct patch_plan *plan);
void patch_plan_free(struct patch_plan *plan);

/* Outside the sandbox: plan the code of the object mapped at bias with
 * these program headers (mapped by the loader, never run) for the plan
 * cache, and write nothing else.  0 or -errno. */
int patch_cache_object(uintptr_t bias, const void *phdr, unsigned phnum);
#endif
