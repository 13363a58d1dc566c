/* Raw system call wrappers and the signal restorer for the untrusted-side
 * runtime.  They live in section sandpit_text, which the patcher never
 * touches: these are the only `syscall` instructions U may run natively
 * (seccomp strict allows read, write, exit and rt_sigreturn), and the ones
 * sandpit_start uses before the sandbox is in force.  The wrappers a U
 * thread blocks in have CFI (they are leaves: the return address at rsp), so
 * that a debugger stopping there unwinds through the entry to the program. */
#include <asm/unistd.h>

	.section sandpit_text,"ax",@progbits

/* long sandpit_raw_syscall6(long nr, long a0, long a1, long a2, long a3, long a4, long a5) */
	.globl sandpit_raw_syscall6
	.hidden sandpit_raw_syscall6
	.type sandpit_raw_syscall6,@function
sandpit_raw_syscall6:
	.cfi_startproc
	mov %rdi, %rax
	mov %rsi, %rdi
	mov %rdx, %rsi
	mov %rcx, %rdx
	mov %r8, %r10
	mov %r9, %r8
	mov 8(%rsp), %r9
	syscall
	ret
	.cfi_endproc
	.size sandpit_raw_syscall6, .-sandpit_raw_syscall6

/* long sandpit_call_on_stack(void *top, long (*fn)(void *), void *arg) */
	.globl sandpit_call_on_stack
	.hidden sandpit_call_on_stack
	.type sandpit_call_on_stack,@function
sandpit_call_on_stack:
	push %rbp
	mov %rsp, %rbp
	and $-16, %rdi
	mov %rdi, %rsp
	mov %rdx, %rdi
	call *%rsi
	mov %rbp, %rsp
	pop %rbp
	ret
	.size sandpit_call_on_stack, .-sandpit_call_on_stack

/* What the kernel calls for every signal U catches (the program's, and
 * SIGSEGV, SIGSYS and SANDPIT_SIG, which sandpit keeps).  u_signal_enter
 * does sandpit's part and names the program's handler, if one is to run
 * now; that handler then runs in the kernel's own frame, with the
 * kernel's registers (rdi signal, rsi siginfo, rdx ucontext, rsp at the
 * return address with the ucontext above it), with or without SA_SIGINFO,
 * as natively.  It returns to sandpit_signal_after instead of the
 * restorer, which finishes sandpit's part (u_signal_leave) and returns
 * from the signal.  Entry: rsp = 8 mod 16, as after a call. */
	.globl sandpit_signal_entry
	.hidden sandpit_signal_entry
	.type sandpit_signal_entry,@function
sandpit_signal_entry:
	push %rdi
	push %rsi
	push %rdx
	call u_signal_enter
	pop %rdx
	pop %rsi
	pop %rdi
	test %rax, %rax
	jz 1f
	lea sandpit_signal_after(%rip), %rcx
	mov %rcx, (%rsp)
	jmp *%rax
1:	ret /* to the frame's restorer, sandpit_restorer */
	.size sandpit_signal_entry, .-sandpit_signal_entry

	.globl sandpit_signal_after
	.hidden sandpit_signal_after
	.type sandpit_signal_after,@function
sandpit_signal_after:
	/* rsp = the frame's ucontext (16-aligned), as in a restorer */
	mov %rsp, %rdi
	call u_signal_leave
	mov $__NR_rt_sigreturn, %eax
	syscall
	ud2
	.size sandpit_signal_after, .-sandpit_signal_after

/* the sa_restorer of sandpit's own signal handlers */
	.globl sandpit_restorer
	.hidden sandpit_restorer
	.type sandpit_restorer,@function
sandpit_restorer:
	mov $__NR_rt_sigreturn, %eax
	syscall
	ud2
	.size sandpit_restorer, .-sandpit_restorer

/* unsigned sandpit_getcpu(void): the CPU we run on, without a system call and
 * without the TSC (which strict mode turns off): the limit of the per-CPU
 * GDT segment the kernel sets up for the vDSO's getcpu. */
	.globl sandpit_getcpu
	.hidden sandpit_getcpu
	.type sandpit_getcpu,@function
sandpit_getcpu:
	mov $0x7b, %eax
	lsl %eax, %eax
	and $0xfff, %eax
	ret
	.size sandpit_getcpu, .-sandpit_getcpu

/* long sandpit_wait_signal(int fd, const volatile uint64_t *counter, uint64_t seen)
 * pause and sigsuspend: block until a handler has run.  From
 * sandpit_wait_begin to sandpit_wait_end (the syscall included) sandpit's
 * signal wrapper moves an interrupted thread to sandpit_wait_eintr, so a
 * handler can neither slip in unnoticed before the read nor restart it. */
	.globl sandpit_wait_signal, sandpit_wait_begin, sandpit_wait_end, sandpit_wait_eintr
	.hidden sandpit_wait_signal, sandpit_wait_begin, sandpit_wait_end, sandpit_wait_eintr
	.type sandpit_wait_signal,@function
sandpit_wait_signal:
	.cfi_startproc
	mov %rdx, %r8
	mov %rsi, %r9
	lea -64(%rsp), %rsi
	mov $64, %edx
sandpit_wait_begin:
	cmp (%r9), %r8
	jne sandpit_wait_eintr
	mov $__NR_read, %eax
	syscall
sandpit_wait_end:
	ret
sandpit_wait_eintr:
	mov $-4, %rax
	ret
	.cfi_endproc
	.size sandpit_wait_signal, .-sandpit_wait_signal

/* void sandpit_wait_result(int fd, const volatile uint64_t *res_seq, uint64_t seq)
 * U's sleep while T works: read(fd) unless the result is there.  A
 * handler that runs meanwhile may make requests of its own and eat the
 * wake-up byte meant for this wait, so the wrapper moves a thread caught
 * in [sandpit_wake_begin, sandpit_wake_end) to sandpit_wake_end rather than
 * let the read restart; the caller then looks at res_seq again. */
	.globl sandpit_wait_result, sandpit_wake_begin, sandpit_wake_end
	.hidden sandpit_wait_result, sandpit_wake_begin, sandpit_wake_end
	.type sandpit_wait_result,@function
sandpit_wait_result:
	.cfi_startproc
	mov %rdx, %r8
	mov %rsi, %r9
	lea -64(%rsp), %rsi
	mov $64, %edx
sandpit_wake_begin:
	cmp %r8, (%r9)
	jae sandpit_wake_end
	mov $__NR_read, %eax
	syscall
sandpit_wake_end:
	ret
	.cfi_endproc
	.size sandpit_wait_result, .-sandpit_wait_result

/* void sandpit_exit_wait(int fd, const volatile uint32_t *exiting, long code)
 * A thread's last instructions (invariant 5): read(fd) until *exiting (its
 * secure page's word, which only B writes) says that B accepted the exit,
 * then exit(code).  Entered with every signal blocked, sandpit's too.  B
 * accepts the exit only once the kernel shows the thread blocked in the
 * read here (at sandpit_exit_site, where the syscall returns to) with that
 * mask (user/trusted/exit_check.h).  From there no handler can run, nothing but
 * this loop and the exit follows (sandpit's code, in protected memory),
 * and a fault (a register pointing nowhere) meets a blocked SIGSEGV, which
 * the kernel turns into its default action: P dies.  So a thread B
 * accepted ends by exit and by nothing else, whatever its registers hold
 * (a thread may jump here with its own), and a U the kernel kills for a
 * forbidden call was never accepted: B ends P. */
	.globl sandpit_exit_wait, sandpit_exit_site
	.hidden sandpit_exit_wait, sandpit_exit_site
	.type sandpit_exit_wait,@function
sandpit_exit_wait:
	.cfi_startproc
	mov %edi, %ebx
	mov %rsi, %r12
	mov %rdx, %r13
1:	cmpl $0, (%r12)
	jne 2f
	mov %ebx, %edi
	lea -64(%rsp), %rsi
	mov $64, %edx
	mov $__NR_read, %eax
	syscall
sandpit_exit_site:
	jmp 1b
2:	mov %r13, %rdi
	mov $__NR_exit, %eax
	syscall
	jmp 2b
	.cfi_endproc
	.size sandpit_exit_wait, .-sandpit_exit_wait

/* long sandpit_put_user64(uint64_t *p, uint64_t v): 0, or -EFAULT when p
 * is not writable.  The store is the only instruction that may fault; U's
 * SIGSEGV handler sees the fault at sandpit_put_user64_insn and resumes at
 * sandpit_put_user64_fault, as the kernel's exception table does for its
 * own copies to user memory (arch_prctl(ARCH_GET_FS) to a bad pointer is
 * EFAULT, not a death). */
	.globl sandpit_put_user64, sandpit_put_user64_insn, sandpit_put_user64_fault
	.hidden sandpit_put_user64, sandpit_put_user64_insn, sandpit_put_user64_fault
	.type sandpit_put_user64,@function
sandpit_put_user64:
	xor %eax, %eax
sandpit_put_user64_insn:
	mov %rsi, (%rdi)
	ret
sandpit_put_user64_fault:
	mov $-14, %rax
	ret
	.size sandpit_put_user64, .-sandpit_put_user64

/* long sandpit_copy_to_user(void *dst, const void *src, size_t n): n bytes
 * from src (sandpit's memory) to U's dst, 0, or -EFAULT when a byte of dst
 * is not writable.  The one rep movsb is the only instruction that may
 * fault; it resumes at sandpit_copy_to_user_fault the same way (an answer
 * of B's copied to the program's buffer, as the kernel's copy_to_user). */
	.globl sandpit_copy_to_user, sandpit_copy_to_user_insn, sandpit_copy_to_user_fault
	.hidden sandpit_copy_to_user, sandpit_copy_to_user_insn, sandpit_copy_to_user_fault
	.type sandpit_copy_to_user,@function
sandpit_copy_to_user:
	mov %rdx, %rcx
	xor %eax, %eax
	cld
sandpit_copy_to_user_insn:
	rep movsb
	ret
sandpit_copy_to_user_fault:
	mov $-14, %rax
	ret
	.size sandpit_copy_to_user, .-sandpit_copy_to_user

/* long sandpit_ask_self(struct self_request *rq): a change of this
 * thread's mask or alternate stack (u_entry.c).  The hlt faults (#GP in
 * user mode, SIGSEGV with SI_KERNEL); sandpit's SIGSEGV handler sees
 * sandpit_ask_self_insn, answers *rq (rdi) in that frame, whose mask and
 * stack rt_sigreturn installs, sets rax and resumes after the hlt.  A
 * synchronous signal, not one sent through T: the kernel delivers a
 * fault before every other pending signal, so its frame always lies
 * right on the asker's context, and the mask it changes is the one the
 * asker returns to (a SANDPIT_SIG sent by T could instead land on top
 * of another signal's fresh frame, change that frame's handler mask, and
 * the program's handler then ran in between and made requests of its own). */
	.globl sandpit_ask_self, sandpit_ask_self_insn
	.hidden sandpit_ask_self, sandpit_ask_self_insn
	.type sandpit_ask_self,@function
sandpit_ask_self:
	.cfi_startproc
sandpit_ask_self_insn:
	hlt
	ret
	.cfi_endproc
	.size sandpit_ask_self, .-sandpit_ask_self

/* long sandpit_get_user8(const void *p): the byte at p, or -EFAULT; the
 * load resumes at sandpit_get_user8_fault the same way */
	.globl sandpit_get_user8, sandpit_get_user8_insn, sandpit_get_user8_fault
	.hidden sandpit_get_user8, sandpit_get_user8_insn, sandpit_get_user8_fault
	.type sandpit_get_user8,@function
sandpit_get_user8:
sandpit_get_user8_insn:
	movzbl (%rdi), %eax
	ret
sandpit_get_user8_fault:
	mov $-14, %rax
	ret
	.size sandpit_get_user8, .-sandpit_get_user8

/* long sandpit_copy_user_str(char *dst, const char *src, size_t max): the
 * string at src copied into dst with its NUL, and its length; -ENAMETOOLONG
 * if it has no NUL in max bytes, -EFAULT if a byte of it is not readable.
 * The load is the only instruction that may fault on U's memory, and
 * resumes at sandpit_copy_user_str_fault the same way. */
	.globl sandpit_copy_user_str, sandpit_copy_user_str_insn, sandpit_copy_user_str_fault
	.hidden sandpit_copy_user_str, sandpit_copy_user_str_insn, sandpit_copy_user_str_fault
	.type sandpit_copy_user_str,@function
sandpit_copy_user_str:
	xor %eax, %eax
1:	cmp %rdx, %rax
	jae 2f
sandpit_copy_user_str_insn:
	movzbl (%rsi,%rax), %ecx
	mov %cl, (%rdi,%rax)
	test %ecx, %ecx
	jz 3f
	inc %rax
	jmp 1b
2:	mov $-36, %rax
3:	ret
sandpit_copy_user_str_fault:
	mov $-14, %rax
	ret
	.size sandpit_copy_user_str, .-sandpit_copy_user_str

	.section .note.GNU-stack,"",@progbits
