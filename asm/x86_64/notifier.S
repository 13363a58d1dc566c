/* The notifier N (user/start/notifier.c): a process that shares P's
 * memory and descriptor table (CLONE_VM | CLONE_FILES, no exit signal) and
 * only ever waits in getppid under its own filter, which hands the call to
 * B as a seccomp user notification.  While N waits there, B can put a
 * descriptor at an exact number of the table N shares with P
 * (SECCOMP_IOCTL_NOTIF_ADDFD): a new thread slot's eventfds, made when the
 * slot is first used, not all at start-up.  The kernel checks that number
 * against N's own RLIMIT_NOFILE, which N took from P while start-up had
 * raised P's over the block; P's own limit never moves again.
 *
 * N is no child of P's: an intermediate process X, made like N, makes N
 * and exits at once, so N is an orphan (init's, or a subreaper's, whose
 * SIGCHLD the kernel sets when it takes N in).  A wait of the program's
 * for any child, with __WALL or __WCLONE, never finds N.
 *
 * X and N have no stack and touch no memory after their start: their
 * registers hold all they need, every signal is blocked (the caller blocks
 * them all around the clone, and both inherit that mask), and their code
 * is in sandpit_text, which U can never write or remap.  Whatever getppid
 * returns (B's answer once P needs it no more, or ENOSYS when B's end of
 * the notification closes), N exits. */
#include <asm/unistd.h>

#define CLONE_X_FLAGS 0x000500 /* VM|FILES, no exit signal */
#define CLONE_N_FLAGS 0x300500 /* VM|FILES|PARENT_SETTID|CHILD_CLEARTID, no exit signal */
#define PR_SET_NAME 15
#define SECCOMP_SET_MODE_FILTER 1
#define SECCOMP_FILTER_FLAG_NEW_LISTENER 8
#define FUTEX_WAKE_PRIVATE 129

	.section sandpit_text,"ax",@progbits

/* long sandpit_clone_notifier(const struct sock_fprog *prog, int32_t words[2])
 * Called with every signal blocked.  Makes X, which makes N and exits:
 * with 0 once N is made, else with clone's errno.  words[0] gets N's pid
 * (and is cleared when N exits), words[1] the listener N's filter gave, or
 * -errno, after which N wakes one waiter on it.  Returns X's pid, for the
 * caller to reap (__WALL), or -errno. */
	.globl sandpit_clone_notifier
	.hidden sandpit_clone_notifier
	.type sandpit_clone_notifier,@function
sandpit_clone_notifier:
	.cfi_startproc
	mov %rdi, %r9
	mov %rsi, %rdx          /* parent_tid */
	mov %rsi, %r10          /* child_tid */
	mov $CLONE_X_FLAGS, %edi
	xor %esi, %esi          /* no stack: X never uses one */
	xor %r8d, %r8d
	mov $__NR_clone, %eax
	syscall
	test %rax, %rax
	jz 3f
	ret
3:	/* X: r9 = the filter, rdx = r10 = words */
	mov $CLONE_N_FLAGS, %edi
	mov $__NR_clone, %eax
	syscall
	test %rax, %rax
	jz 1f
	xor %edi, %edi          /* N made */
	test %rax, %rax
	jns 4f
	mov %eax, %edi
	neg %edi                /* clone's errno */
4:	mov $__NR_exit, %eax
	syscall
	ud2
1:	/* N: r9 = the filter, r10 = words; named first, as ps shows it */
	mov $__NR_prctl, %eax
	mov $PR_SET_NAME, %edi
	lea notifier_name(%rip), %rsi
	syscall
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

notifier_name:
	.asciz "sandpit-N"

	.section .note.GNU-stack, "", @progbits
