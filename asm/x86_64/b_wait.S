/* One system call the trusted process B makes on U's behalf that may wait
 * for another process (the open of a FIFO: user/trusted/write_open.c),
 * with a flag that ends it.  B's wake signal may come at any instant; its
 * handler (b_woken, user/trusted/b_wait.c) moves a thread it finds between
 * the look at the flag and the syscall instruction to the -EINTR return,
 * so a wake that comes before the call is made is never lost, and one
 * that comes during it ends it with EINTR (no SA_RESTART). */
#include <asm/unistd.h>
#include <asm/errno.h>

	.text

/* long b_wait_syscall4(long nr, long a0, long a1, long a2, const int *stop) */
	.globl b_wait_syscall4
	.hidden b_wait_syscall4
	.type b_wait_syscall4,@function
b_wait_syscall4:
	.cfi_startproc
	mov %rdi, %rax
	mov %rsi, %rdi
	mov %rdx, %rsi
	mov %rcx, %rdx
	.globl b_wait_look
	.hidden b_wait_look
b_wait_look:
	cmpl $0, (%r8)
	jne b_wait_stopped
	.globl b_wait_call
	.hidden b_wait_call
b_wait_call:
	syscall
	ret
	.globl b_wait_stopped
	.hidden b_wait_stopped
b_wait_stopped:
	mov $-EINTR, %rax
	ret
	.cfi_endproc
	.size b_wait_syscall4, .-b_wait_syscall4

	.section .note.GNU-stack,"",@progbits
