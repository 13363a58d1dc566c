/* What the patcher takes from x86-64 (internal to the patcher, through
 * user/patch/arch.h): the lengths of the instructions a site is found by
 * and replaced with, the fixed part of a trampoline, and the decoder's mode
 * and the registers the planner and the encoder name.  One header an
 * architecture: a port adds its own beside this one.  (The trampoline's
 * shape as the stub reads it is user/layout/tramp_layout.h.) */
#ifndef SANDPIT_USER_PATCH_ARCH_X86_64_H
#define SANDPIT_USER_PATCH_ARCH_X86_64_H
#include <stdint.h>
#include <Zydis/Zydis.h>

#define JMP_LEN 5           /* jmp rel32 (e9): what a site's first bytes become */
#define SYSCALL_LEN 2       /* syscall (0f 05), and rdtsc (0f 31) */
#define TRAMP_FIXED 32      /* lea + call + lea + jmp = 24 bytes, rounded up */

/* The decoder's and the encoder's mode: 64-bit code, 64-bit stack. */
#define ARCH_MACHINE_MODE ZYDIS_MACHINE_MODE_LONG_64
#define ARCH_STACK_WIDTH ZYDIS_STACK_WIDTH_64

#define ARCH_REG_PC ZYDIS_REGISTER_RIP   /* pc-relative operands move with the code */
#define ARCH_REG_SP ZYDIS_REGISTER_RSP   /* the trampoline steps over the red zone */
/* `mov $nr,%eax` (or %rax) before a syscall: its static number */
#define ARCH_REG_NR ZYDIS_REGISTER_EAX
#define ARCH_REG_NR_WIDE ZYDIS_REGISTER_RAX

/* The length of the instruction a candidate's bytes b stand for: syscall
 * (0f 05) or rdtsc (0f 31), 2; rdtscp (0f 01 f9), 3. */
static inline unsigned site_len(const uint8_t *b)
{
	return b[1] == 0x01 ? 3 : SYSCALL_LEN;
}
#endif
