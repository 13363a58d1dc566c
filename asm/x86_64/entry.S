/* The syscall stub.  Every patched site's trampoline replaces `syscall` with
 *     lea -128(%rsp),%rsp ; call *slot(%rip) ; lea 128(%rsp),%rsp
 * and the slot points here.  Registers arrive as for `syscall`; like the
 * instruction, the stub returns in rax, clobbers only rcx and r11, and keeps
 * the flags.  rt_sigreturn must run natively on the very stack the kernel
 * built the frame on, so the stub undoes the call and the red-zone step and
 * issues it itself. */

#include <asm/unistd.h>
#include "user/secure_mem.h"

	.section sandpit_text,"ax",@progbits

	.globl sandpit_syscall_stub
	.hidden sandpit_syscall_stub
	.type sandpit_syscall_stub,@function
sandpit_syscall_stub:
	pushfq
	cmp $15, %rax
	je 2f
	cmp $__NR_clone, %rax
	je 3f
1:	cld
	push %rbx
	push %rdi
	push %rsi
	push %rdx
	push %r10
	push %r8
	push %r9
	mov %rsp, %rbx
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
	mov %rbx, %rsp
	pop %r9
	pop %r8
	pop %r10
	pop %rdx
	pop %rsi
	pop %rdi
	pop %rbx
	popfq
	ret
2:	popfq
	lea 136(%rsp), %rsp
	syscall
	ud2
/* clone: keep U's registers where the new thread will find them (the
 * mailbox); it resumes at our return address with rax = 0 */
3:	cmpl $0, sandpit_u_active(%rip)
	je 1b
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
	.size sandpit_syscall_stub, .-sandpit_syscall_stub

/* Patched rdtscp and rdtsc sites (strict mode, where the TSC is off for U):
 * the same trampoline shape, the counter from u_read_tsc.  Like the
 * instructions they set eax, edx (and ecx for rdtscp), zero-extended, and
 * keep every other register and the flags.  They live in sandpit_text, which
 * the patcher leaves alone, so their own rdtscp stays one. */
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
