/* The notifier thread N (user/start/notifier.c): a thread of P that
 * only ever waits in getppid under its own filter, which hands the call to
 * B as a seccomp user notification.  While N waits there, B can put a
 * descriptor at an exact number of P's table with
 * SECCOMP_IOCTL_NOTIF_ADDFD (a new thread slot's eventfds, made when the
 * slot is first used, not all at start-up).
 *
 * N has no stack and touches no memory after its start: its registers
 * hold all it needs, every signal is blocked (the caller blocks them all
 * around the clone, and N inherits that mask), and its code is in
 * sandpit_text, which U can never write or remap.  Whatever getppid
 * returns (B's answer when the last U has gone, or ENOSYS when B's end
 * of the notification closes), N exits. */
#include <asm/unistd.h>

#define CLONE_N_FLAGS 0x350f00 /* VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|PARENT_SETTID|CHILD_CLEARTID */
#define SECCOMP_SET_MODE_FILTER 1
#define SECCOMP_FILTER_FLAG_NEW_LISTENER 8
#define FUTEX_WAKE_PRIVATE 129

	.section sandpit_text,"ax",@progbits

/* long sandpit_clone_notifier(const struct sock_fprog *prog, int32_t words[2])
 * Called with every signal blocked.  words[0] gets N's tid (and is cleared
 * when N exits), words[1] the listener N's filter gave, or -errno, after
 * which N wakes one waiter on it.  Returns N's tid or -errno. */
	.globl sandpit_clone_notifier
	.hidden sandpit_clone_notifier
	.type sandpit_clone_notifier,@function
sandpit_clone_notifier:
	.cfi_startproc
	mov %rdi, %r9
	mov %rsi, %rdx          /* parent_tid */
	mov %rsi, %r10          /* child_tid */
	mov $CLONE_N_FLAGS, %edi
	xor %esi, %esi          /* no stack: N never uses one */
	xor %r8d, %r8d
	mov $__NR_clone, %eax
	syscall
	test %rax, %rax
	jz 1f
	ret
1:	/* N: r9 = the filter, r10 = words */
	mov $__NR_seccomp, %eax
	mov $SECCOMP_SET_MODE_FILTER, %edi
	mov $SECCOMP_FILTER_FLAG_NEW_LISTENER, %esi
	mov %r9, %rdx
	syscall
	mov %rax, %rbx
	mov %eax, 4(%r10)
	mov $__NR_futex, %eax
	lea 4(%r10), %rdi
	mov $FUTEX_WAKE_PRIVATE, %esi
	mov $1, %edx
	syscall
	test %rbx, %rbx
	js 2f                   /* no filter: nothing to wait in */
	mov $__NR_getppid, %eax
	syscall
2:	mov $__NR_exit, %eax
	xor %edi, %edi
	syscall
	ud2
	.cfi_endproc
	.size sandpit_clone_notifier, .-sandpit_clone_notifier

	.section .note.GNU-stack, "", @progbits
