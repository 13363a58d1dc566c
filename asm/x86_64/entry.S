/* The syscall stub.  Every patched site's trampoline replaces `syscall` with
 *     lea -128(%rsp),%rsp ; call *slot(%rip) ; lea 128(%rsp),%rsp
 * and the slot points here.  Registers arrive as for `syscall`; like the
 * instruction, the stub returns in rax, clobbers only rcx and r11, and keeps
 * the flags.  rt_sigreturn must run natively on the very stack the kernel
 * built the frame on, so the stub undoes the call and the red-zone step and
 * issues it itself.
 *
 * For debuggers, profilers and crash reporters (not for anything sandpit
 * decides: it is U's own stack) the stub looks as if the program's code had
 * called it from the syscall: a frame-pointer frame whose return slot holds
 * the program's address after the syscall and whose saved rbp is the
 * program's, and DWARF CFI that gives the caller's rsp as the program's at
 * its syscall and its pc as that address, skipping the trampoline (which
 * has no unwind information; see docs/design/patcher.md, "Unwinding"). */

#include <asm/unistd.h>
#include "user/layout/secure_mem.h"
#include "user/layout/tramp_layout.h"

/* what the call and the red-zone step put between the program's rsp and ours */
#define STEP (8 + TRAMP_RED_ZONE)

	.section sandpit_text,"ax",@progbits

	.globl sandpit_syscall_stub
	.hidden sandpit_syscall_stub
	.type sandpit_syscall_stub,@function
sandpit_syscall_stub:
	.cfi_startproc
	/* CFA: the program's rsp at its syscall; until the frame below is
	 * built the return address is the trampoline's */
	.cfi_def_cfa %rsp, STEP
	.cfi_offset %rip, -STEP
	pushfq
	.cfi_adjust_cfa_offset 8
	cmp $15, %rax
	je 2f
	cmp $__NR_clone, %rax
	je 3f
	.cfi_remember_state
1:	cld
	push %rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbx, 0
	push %rdi
	.cfi_adjust_cfa_offset 8
	push %rsi
	.cfi_adjust_cfa_offset 8
	push %rdx
	.cfi_adjust_cfa_offset 8
	push %r10
	.cfi_adjust_cfa_offset 8
	push %r8
	.cfi_adjust_cfa_offset 8
	push %r9
	.cfi_adjust_cfa_offset 8
	mov %rsp, %rbx
	.cfi_def_cfa_register %rbx	/* rbx + STEP + 64 */
	/* The frame: the program's address after its syscall, found from the
	 * trampoline's jmp back when no displaced instruction comes after the
	 * syscall (else the return into the trampoline stays), and its rbp. */
	mov 64(%rbx), %rcx
	cmpb $TRAMP_JMP_OP, TRAMP_UP_LEN(%rcx)
	jne 4f
	movslq TRAMP_UP_LEN + 1(%rcx), %r11
	lea TRAMP_UP_LEN + TRAMP_JMP_LEN(%rcx, %r11), %rcx
4:	push %rcx
	.cfi_offset %rip, -(STEP + 72)
	push %rbp
	.cfi_offset %rbp, -(STEP + 80)
	mov %rsp, %rbp
	and $-16, %rsp
	push 64(%rbx)		/* where the site returns to: explains a refusal */
	push %r9
	mov %r8, %r9
	mov %r10, %r8
	mov %rdx, %rcx
	mov %rsi, %rdx
	mov %rdi, %rsi
	mov %rax, %rdi
	call sandpit_entry_from
	mov -16(%rbx), %rbp
	.cfi_restore %rbp
	mov %rbx, %rsp
	.cfi_def_cfa %rsp, STEP + 64
	.cfi_offset %rip, -STEP
	pop %r9
	.cfi_adjust_cfa_offset -8
	pop %r8
	.cfi_adjust_cfa_offset -8
	pop %r10
	.cfi_adjust_cfa_offset -8
	pop %rdx
	.cfi_adjust_cfa_offset -8
	pop %rsi
	.cfi_adjust_cfa_offset -8
	pop %rdi
	.cfi_adjust_cfa_offset -8
	pop %rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbx
	popfq
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_restore_state
2:	popfq
	.cfi_adjust_cfa_offset -8
	lea STEP(%rsp), %rsp
	.cfi_adjust_cfa_offset -STEP
	syscall
	ud2
	.cfi_adjust_cfa_offset STEP + 8
/* clone: keep U's registers where the new thread will find them (the
 * mailbox); it resumes at our return address with rax = 0 */
3:	cmpl $0, sandpit_u_active(%rip)
	je 5f
	mov %rbx, %gs:MB_CLONE_REGS + CR_RBX
	mov %rbp, %gs:MB_CLONE_REGS + CR_RBP
	mov %r12, %gs:MB_CLONE_REGS + CR_R12
	mov %r13, %gs:MB_CLONE_REGS + CR_R13
	mov %r14, %gs:MB_CLONE_REGS + CR_R14
	mov %r15, %gs:MB_CLONE_REGS + CR_R15
	mov %rdi, %gs:MB_CLONE_REGS + CR_RDI
	mov %rsi, %gs:MB_CLONE_REGS + CR_RSI
	mov %rdx, %gs:MB_CLONE_REGS + CR_RDX
	mov %r10, %gs:MB_CLONE_REGS + CR_R10
	mov %r8, %gs:MB_CLONE_REGS + CR_R8
	mov %r9, %gs:MB_CLONE_REGS + CR_R9
	mov (%rsp), %rcx
	mov %rcx, %gs:MB_CLONE_REGS + CR_FLAGS
	mov 8(%rsp), %rcx
	mov %rcx, %gs:MB_CLONE_REGS + CR_RIP
	jmp 1b
/* clone with no sandbox (a start that failed after patching): with a
 * stack of its own the new task cannot return through the frames below
 * (they are on this one), so the call is made here, each task leaving by
 * the return address, the child's put on its stack where the trampoline's
 * red-zone step back leaves its rsp at the stack it asked for.  Without
 * one the child has this stack, copied (the entry's C path) */
5:	test %rsi, %rsi
	je 1b
	mov 8(%rsp), %rcx
	mov %rcx, -STEP(%rsi)
	lea -STEP(%rsi), %rsi
	popfq
	.cfi_adjust_cfa_offset -8
	syscall
	lea STEP(%rsi), %rsi
	ret
	.cfi_endproc
	.size sandpit_syscall_stub, .-sandpit_syscall_stub

	.globl sandpit_rdtscp_stub
	.hidden sandpit_rdtscp_stub
	.type sandpit_rdtscp_stub,@function
sandpit_rdtscp_stub:
	/* before the sandbox is up (the patcher runs first) U has the TSC */
	cmpl $0, sandpit_u_active(%rip)
	jne 1f
	rdtscp
	ret
1:	pushfq
	push %rbx
	push %rsi
	push %rdi
	push %r8
	push %r9
	push %r10
	push %r11
	mov %rsp, %rbx
	sub $16, %rsp
	and $-16, %rsp
	mov %rsp, %rdi
	cld
	call u_read_tsc
	mov (%rsp), %ecx
	mov %rbx, %rsp
	pop %r11
	pop %r10
	pop %r9
	pop %r8
	pop %rdi
	pop %rsi
	pop %rbx
	mov %rax, %rdx
	shr $32, %rdx
	mov %eax, %eax
	popfq
	ret
	.size sandpit_rdtscp_stub, .-sandpit_rdtscp_stub

	.globl sandpit_rdtsc_stub
	.hidden sandpit_rdtsc_stub
	.type sandpit_rdtsc_stub,@function
sandpit_rdtsc_stub:
	push %rcx
	call sandpit_rdtscp_stub
	pop %rcx
	ret
	.size sandpit_rdtsc_stub, .-sandpit_rdtsc_stub

	.section .note.GNU-stack,"",@progbits
