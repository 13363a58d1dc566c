/* The trusted thread T (DESIGN §1, §2).
 *
 * T shares the address space with U, so it trusts only its registers.  Its
 * long-lived state is held in registers that nothing else can change:
 *     r15  secure page  (read-only in P: T's configuration, B's verdicts)
 *     r14  mailbox      (read-write in P: U's requests; never trusted)
 *     r13  T table      (read-only, sealed)
 *     r12  sequence number of the last request T accepted
 * A request is loaded from the mailbox exactly once, into xmm0 (number) and
 * xmm1..xmm6 (arguments); every check and the system call itself use those
 * registers (invariant 2: load, check, use).  T has no stack (rsp = 0): it
 * never pushes, and a stray push faults and, with every signal blocked,
 * kills the whole process (invariant 5).  All signals are blocked in T, so
 * no handler of U's choosing ever runs on it (invariant 1); the one it lets
 * through, during a wait made for U, is sandpit's own interrupt, which never
 * returns through its frame (sandpit_intr_handler).
 * Also here: the nursery every new thread of U's starts in.
 *
 * One file, and longer than the rest, on purpose: T has no stack, so it
 * makes no calls, and none across files; its code is one straight
 * program whose local labels (.Lverdict, .Ldie, the checks, the waits) are
 * jumped to from everywhere inside it, with T's state in the registers
 * above.  Split into files, those jumps would become global symbols any
 * code could reach, and T's path from a request to its system call would
 * no longer be readable in one place.  Its parts are marked by the
 * "---- ... ----" rules below. */
#include <asm/unistd.h>
#include "user/layout/secure_mem.h"
#include "policy/t_table.h"

#define CLONE_THREAD_FLAGS 0x50f00 /* VM|FS|FILES|SIGHAND|THREAD|SYSVSEM */
#define CLONE_CHILD_TID    0x01200000 /* CHILD_SETTID|CHILD_CLEARTID */
#define CLONE_PARENT_SETTID 0x00100000
#define ARCH_SET_GS 0x1001
#define SIG_SETMASK 2
#define SIG_UNBLOCK 1
#define FUTEX_WAIT_BITSET 9
#define ERESTARTSYS SP_ERESTARTSYS
#define ERESTARTNOINTR SP_ERESTARTNOINTR
/* a ucontext's rax, rbx, rcx, rip (uc_mcontext at 40, gregs in the kernel's order) */
#define UC_RAX   (40 + 13 * 8)
#define UC_RBX   (40 + 11 * 8)
#define UC_RCX   (40 + 14 * 8)
#define UC_RIP   (40 + 16 * 8)
#define BLK(nr)  (1 << ((nr) & 63))
#define BLOCKING_CALLS_N 448 /* blocking_calls' bits */
#define PR_SET_SECCOMP 22
#define SECCOMP_MODE_STRICT 1
#define SECCOMP_SET_MODE_FILTER 1
#define SECCOMP_MODE_FILTER 2
#define POLLIN   1
#define POLLERR  8
#define POLLHUP  0x10
#define MSG_NOSIGNAL 0x4000
#define SIGKILL  9
#define SIGSEGV  11
#define SIGSYS   31
#define EINVAL   22
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define ETIMEDOUT 110
#define EAGAIN   11
#define ESRCH    3
#define MSG_PEEK     2
#define MSG_DONTWAIT 0x40
#define EBADF    9
#define ENOSYS   38
#define F_GETFD  1
#define F_SETLKW 7
#define F_OFD_SETLKW 38
#define CLOSE_RANGE_CLOEXEC 4
#define MSG_CTRUNC   8
#define EMFILE   24
#define EIO      5
#define SCM_RIGHTS_HDR 0x100000001 /* cmsg_level SOL_SOCKET (1), cmsg_type SCM_RIGHTS (1) */
#define O_CLOEXEC 02000000
#define EFD_CLOEXEC  O_CLOEXEC
#define EFD_NONBLOCK 04000
/* T's turns of the CPU to B before it sleeps until B publishes (MB_T_WAIT_B):
 * B's server follows T onto its CPU (b_serve.c), so a yield is how B gets
 * it; a check that takes longer (a cold file system, B's first calls) is
 * cheaper slept through, one futex each side, than yielded through, one
 * call a turn (a few hundred at each start when it was 2000) */
#define B_YIELDS 4
/* how long U may take to end after its exit was accepted: a yield costs 1,
 * a 10 ms wait EXIT_WAIT_COST, so about 2 s in all */
#define EXIT_BUDGET    200000
#define EXIT_WAIT_COST 1000

/* CLONE_T: clone T for the thread whose secure page is r15; the child
 * enters trusted_thread_main with r12-r15 as they are.  T's tid goes into
 * the mailbox's T_CTID word, which the kernel clears when T ends: written
 * by the kernel before the clone returns (CLONE_PARENT_SETTID), so before
 * U can enter seccomp, whether T has run yet or not (B's watcher counts on
 * it), and again when T first runs (CLONE_CHILD_SETTID). */
.macro CLONE_T
	mov $(CLONE_THREAD_FLAGS | CLONE_CHILD_TID | CLONE_PARENT_SETTID), %edi
	xor %esi, %esi
	lea MB_T_CTID(%r14), %rdx
	lea MB_T_CTID(%r14), %r10
	xor %r8d, %r8d
	mov $__NR_clone, %eax
	syscall
	test %rax, %rax
	jz trusted_thread_main
.endm

	.section sandpit_text,"ax",@progbits

/* long sandpit_clone_trusted(struct secure_page *sp)
 * Called with every signal blocked.  Returns T's tid (or -errno) in the
 * caller; the child starts in trusted_thread_main with its registers set. */
	.globl sandpit_clone_trusted
	.hidden sandpit_clone_trusted
	.type sandpit_clone_trusted,@function
sandpit_clone_trusted:
	push %r12
	push %r13
	push %r14
	push %r15
	mov %rdi, %r15
	mov SP_CFG_MAILBOX(%r15), %r14
	mov SP_CFG_TABLE(%r15), %r13
	mov MB_REQ_SEQ(%r14), %r12
	CLONE_T
	pop %r15
	pop %r14
	pop %r13
	pop %r12
	ret
	.size sandpit_clone_trusted, .-sandpit_clone_trusted

/* ARG idx, dst: dst = syscall argument number idx (a register holding 0..5).
 * An index out of range (a corrupt table) fails the rule. */
.macro ARG idx, dst
	cmp $0, \idx
	jne .Larg1_\@
	movq %xmm1, \dst
	jmp .Larg_done_\@
.Larg1_\@:
	cmp $1, \idx
	jne .Larg2_\@
	movq %xmm2, \dst
	jmp .Larg_done_\@
.Larg2_\@:
	cmp $2, \idx
	jne .Larg3_\@
	movq %xmm3, \dst
	jmp .Larg_done_\@
.Larg3_\@:
	cmp $3, \idx
	jne .Larg4_\@
	movq %xmm4, \dst
	jmp .Larg_done_\@
.Larg4_\@:
	cmp $4, \idx
	jne .Larg5_\@
	movq %xmm5, \dst
	jmp .Larg_done_\@
.Larg5_\@:
	cmp $5, \idx
	jne .Lrule_fail
	movq %xmm6, \dst
.Larg_done_\@:
.endm

/* CHECK_B: B exited if its end of the socket pair hung up (invariant 5).
 * The kernel answers in rax, from a non-blocking peek (B never writes to
 * it: EAGAIN while B lives, 0 at its end); no word U can write decides it
 * (invariant 8).  Keeps rbx, rbp, r9, r12-r15. */
.macro CHECK_B
	mov SP_CFG_TB_FD(%r15), %edi
	lea MB_DRAIN(%r14), %rsi
	mov $1, %edx
	mov $(MSG_DONTWAIT | MSG_PEEK), %r10d
	xor %r8d, %r8d
	mov $__NR_recvfrom, %eax
	syscall
	cmp $-EAGAIN, %rax
	je .Lcheck_b_ok\@
	test %rax, %rax
	jle .Ldie_b
.Lcheck_b_ok\@:
.endm

/* WAKE_U: one wake-up on U's eventfd, the value from sandpit_text */
.macro WAKE_U
	mov SP_CFG_U_FD(%r15), %edi
	lea eventfd_one(%rip), %rsi
	mov $8, %edx
	mov $__NR_write, %eax
	syscall
.endm

/* SIGMASK how, mask: T's own mask changed by a constant in sandpit_text
 * (clobbers rax, rcx, rdx, rsi, rdi, r10, r11) */
.macro SIGMASK how, mask
	mov $\how, %edi
	lea \mask(%rip), %rsi
	xor %edx, %edx
	mov $8, %r10d
	mov $__NR_rt_sigprocmask, %eax
	syscall
.endm

/* BLOCK_ALL: every signal blocked again */
.macro BLOCK_ALL
	SIGMASK SIG_SETMASK, all_mask
.endm

/* ARGS_FROM_XMM: the request as T loaded it (xmm0 number, xmm1-6 args)
 * into the registers of a system call */
.macro ARGS_FROM_XMM
	movq %xmm0, %rax
	movq %xmm1, %rdi
	movq %xmm2, %rsi
	movq %xmm3, %rdx
	movq %xmm4, %r10
	movq %xmm5, %r8
	movq %xmm6, %r9
.endm

.macro SYSCALL_FROM_XMM
	ARGS_FROM_XMM
	syscall
.endm

/* CPU dst32: the CPU we run on (per-CPU GDT segment limit, as vDSO getcpu) */
.macro CPU dst
	mov $0x7b, \dst
	lsl \dst, \dst
	and $0xfff, \dst
.endm

	.type trusted_thread_main,@function
trusted_thread_main:
	xor %esp, %esp
	/* T's alternate stack, from the secure page: the only place a signal
	 * frame of T's can go (see sandpit_intr_handler) */
	lea SP_ALTSTACK(%r15), %rdi
	xor %esi, %esi
	mov $__NR_sigaltstack, %eax
	syscall
	test %rax, %rax
	jnz .Ldie_proto

	/* T serves its U only once B knows it (invariant 7, .Lop_u_tid): B
	 * writes U's tid here when the kernel has confirmed the slot's
	 * threads, and wakes T.  Until then U's calls wait, a signal to itself
	 * among them.  Slot 0's U is known from the start. */
.Lknown:
	mov SP_CFG_U_TID(%r15), %edx
	test %edx, %edx
	jnz .Lknown_done
	lea SP_CFG_U_TID(%r15), %rdi
	mov $FUTEX_WAIT, %esi
	lea futex_timeout(%rip), %r10
	mov $__NR_futex, %eax
	syscall
	cmp $-ETIMEDOUT, %rax
	jne .Lknown
	CHECK_B
	jmp .Lknown
.Lknown_done:
	xor %ebp, %ebp /* T has not tried to leave U's CPU (.Lshared) */

/* ---- wait for U's next request: spin while U runs on another CPU, then block */
.Lwait:
	mov MB_REQ_SEQ(%r14), %rax
	cmp %rax, %r12
	jne .Lrequest
	CPU %eax
	mov %eax, MB_T_CPU(%r14)
	cmp MB_U_CPU(%r14), %eax
	je .Lshared
	mov SP_CFG_SPIN(%r15), %ecx
.Lspin:
	pause
	mov MB_REQ_SEQ(%r14), %rax
	cmp %rax, %r12
	jne .Lrequest
	/* U says it computes a while (the run-time patcher writing pages):
	 * its next request wakes T.  Only whether T spins comes from this
	 * word, as from MB_U_CPU above: a lie costs U a wake-up, no more */
	cmpl $0, MB_U_BUSY(%r14)
	jne .Lsleep
	dec %ecx
	jnz .Lspin
	jmp .Lsleep
/* T on U's CPU: U would sleep at every call and the two take turns there
 * (≈ 14 µs a round trip in strict mode, against 0.3 µs across two CPUs),
 * while the kernel leaves them so.  T leaves that CPU for the process's
 * others, once between two requests (ebp), with a mask from the sealed
 * secure memory (invariant 8): unless someone pinned T (the bench's
 * strict-2cpu, a `taskset -a`), which the kernel says, its CPUs being
 * neither all the process's nor all of them but one.  U's CPU is a hint U
 * can forge, like the spin's, and so is the kernel's answer, written where
 * U can write: a lie moves T among the process's CPUs, or keeps it, no
 * more. */
.Lshared:
	test %ebp, %ebp
	jnz .Lsleep
	cmpq $0, SP_CFG_CPU_MASKS(%r15)
	je .Lsleep
	cmp $SM_CPU_ALL, %eax
	jae .Lsleep
	mov $1, %ebp
	mov %eax, %ebx
	xor %edi, %edi
	mov $8, %esi
	lea MB_DRAIN(%r14), %rdx
	mov $__NR_sched_getaffinity, %eax
	syscall
	cmp $8, %rax
	jne .Lsleep
	mov SP_CFG_CPU_MASKS(%r15), %rdx
	mov SM_CPU_ALL * 8(%rdx), %rcx
	xor MB_DRAIN(%r14), %rcx /* the process's CPUs T lacks, and any it has beyond */
	lea -1(%rcx), %rsi
	test %rsi, %rcx /* none, or exactly one */
	jnz .Lsleep
	lea (%rdx,%rbx,8), %rdx
	xor %edi, %edi
	mov $8, %esi
	mov $__NR_sched_setaffinity, %eax
	syscall
	jmp .Lwait
.Lsleep:
	movl $1, MB_T_SLEEP(%r14)
	mfence
	mov MB_REQ_SEQ(%r14), %rax
	cmp %rax, %r12
	jne .Lawake
	/* invariant 8: the descriptors the kernel watches come from S, so U
	 * cannot make T watch others (and miss B's hang-up).  S is read-only
	 * in P, so the kernel cannot write the results back (EFAULT after the
	 * wait): T needs none of them, it asks the kernel below. */
	lea SP_POLLFD(%r15), %rdi
	mov $2, %esi
	xor %edx, %edx
	xor %r10d, %r10d
	mov $8, %r8d
	mov $__NR_ppoll, %eax
	syscall
	/* B never writes to its socket; it only hangs up by exiting, which
	 * must end P (invariant 5) */
	CHECK_B
	/* U's wake-ups, drained from T's eventfd (non-blocking) */
	mov SP_CFG_T_FD(%r15), %edi
	lea MB_DRAIN(%r14), %rsi
	mov $64, %edx
	mov $__NR_read, %eax
	syscall
.Lawake:
	movl $0, MB_T_SLEEP(%r14)
	jmp .Lwait

/* ---- a request: load it once into registers, then classify */
.Lrequest:
	mov %rax, %r12
	movq MB_NR(%r14), %xmm0
	movq MB_ARGS + 0(%r14), %xmm1
	movq MB_ARGS + 8(%r14), %xmm2
	movq MB_ARGS + 16(%r14), %xmm3
	movq MB_ARGS + 24(%r14), %xmm4
	movq MB_ARGS + 32(%r14), %xmm5
	movq MB_ARGS + 40(%r14), %xmm6
	movq %xmm0, %rax
	cmp $SANDPIT_NR_RDTSC, %rax
	je .Lrdtsc
	cmp $SANDPIT_NR_SIG_DFL, %rax
	je .Lsig_dfl
	cmp $SANDPIT_NR_THREAD_EXIT, %rax
	je .Lexit_req
	/* strict mode without FSGSBASE: B sets or reads U's FS base by ptrace,
	 * on the U of its own records for this slot, never one U names */
	cmp $SANDPIT_NR_FS_BASE, %rax
	je .Lprocess
	/* a refusal to count and explain: B only reads the slot's report */
	cmp $SANDPIT_NR_DENIED, %rax
	je .Lprocess
	cmp $SANDPIT_NR_MAPS_READ, %rax
	je .Lmaps_read
	cmp $TT_MAX_NR, %rax
	jae .Lenosys
	lea TT_ENTRIES(%r13,%rax,8), %rbx
	movzbl TTE_CLS(%rbx), %ecx
	cmp $TT_ALLOW, %ecx
	je .Lexec
	cmp $TT_THREAD, %ecx
	je .Lrules
	cmp $TT_PROCESS, %ecx
	je .Lprocess
	cmp $TT_EMU, %ecx
	je .Lemu
	/* a call the policy kills: B names it and the line that kills it
	 * (user/trusted/denial_log.c), then P dies, whatever B answers (.Lverdict) */
	cmp $TT_KILL, %ecx
	je .Lprocess
	cmp $TT_DENY, %ecx
	jne .Lenosys
	movslq TTE_ERR(%rbx), %rax
	neg %rax
	jmp .Lrefused
.Lenosys:
	mov $-38, %rax
	jmp .Lresult

/* ---- register rules (DESIGN §2 path 3); every rule must pass */
.Lrules:
	movzbl TTE_NRULES(%rbx), %ebp
	movzwl TTE_FIRST(%rbx), %eax
	cmp $TT_MAX_RULES, %eax
	jae .Lenosys
	lea (%rax,%rbp), %ecx
	cmp $TT_MAX_RULES, %ecx
	ja .Lenosys
	shl $5, %rax
	lea TT_RULES(%r13,%rax), %rbx
.Lrule_loop:
	test %ebp, %ebp
	jz .Lexec
	movzbl TTR_CARG(%rbx), %eax
	cmp $TT_NOARG, %eax
	je 1f
	ARG %eax, %rcx
	test TTR_CMASK(%rbx), %rcx
	jz .Lrule_next
1:	movzbl TTR_ARG(%rbx), %eax
	ARG %eax, %rcx
	movzbl TTR_OP(%rbx), %eax
	cmp $TR_MASK_ZERO, %eax
	je .Lop_mask_zero
	cmp $TR_MASKED_EQ, %eax
	je .Lop_masked_eq
	cmp $TR_MASKED_NE, %eax
	je .Lop_masked_ne
	cmp $TR_FD_FREE, %eax
	je .Lop_fd_free
	cmp $TR_RANGE_FREE, %eax
	je .Lop_range_free
	cmp $TR_SELF_PID, %eax
	je .Lop_self_pid
	cmp $TR_U_TID, %eax
	je .Lop_u_tid
	cmp $TR_LE, %eax
	je .Lop_le
	cmp $TR_BITSET, %eax
	je .Lop_bitset
	jmp .Lrule_fail
.Lrule_next:
	add $TTR_SIZE, %rbx
	dec %ebp
	jmp .Lrule_loop
.Lrule_fail:
	/* which rule refused it (its index in the table + 1), for explaining
	 * the refusal; U's to report, it decides nothing */
	lea -TT_RULES(%rbx), %rcx
	sub %r13, %rcx
	shr $5, %rcx
	inc %rcx
	mov %rcx, MB_RES3(%r14)
	movslq TTR_ERR(%rbx), %rax
	neg %rax
	/* fall through */

/* ---- a refusal (-errno in rax) of a call whose first argument the
 * kernel looks up before anything else (the table's fd_checked bit): on a
 * descriptor that is not open, or is sandpit's, the kernel would say
 * EBADF, and so does T.  The number and the descriptor come from xmm0 and
 * xmm1, the answer from the kernel (F_GETFD on the same register value);
 * ENOSYS (no such call) stays. */
.Lrefused:
	cmp $-EBADF, %rax
	je .Lresult
	cmp $-ENOSYS, %rax
	je .Lresult
	movq %xmm0, %rcx
	bt %rcx, TT_FD_CHECKED(%r13)
	jnc .Lresult
	mov %rax, %rbx
	movq %xmm1, %rdi
	cmp SP_CFG_FD_LO(%r15), %edi
	jl 1f
	cmp SP_CFG_FD_HI(%r15), %edi
	jle 2f
1:	mov $F_GETFD, %esi
	mov $__NR_fcntl, %eax
	syscall
	cmp $-EBADF, %rax
	je 2f
	mov %rbx, %rax
	jmp .Lresult
2:	mov $-EBADF, %rax
	jmp .Lresult

.Lop_mask_zero:
	test TTR_MASK(%rbx), %rcx
	jnz .Lrule_fail
	jmp .Lrule_next
.Lop_masked_eq:
	and TTR_MASK(%rbx), %rcx
	cmp TTR_VAL(%rbx), %rcx
	jne .Lrule_fail
	jmp .Lrule_next
.Lop_masked_ne:
	and TTR_MASK(%rbx), %rcx
	cmp TTR_VAL(%rbx), %rcx
	je .Lrule_fail
	jmp .Lrule_next
.Lop_le:
	cmp TTR_VAL(%rbx), %rcx
	ja .Lrule_fail
	jmp .Lrule_next
/* a[arg] - val is a set bit of mask: a small set of allowed values */
.Lop_bitset:
	sub TTR_VAL(%rbx), %rcx
	cmp $63, %rcx
	ja .Lrule_fail
	mov TTR_MASK(%rbx), %rdx
	bt %rcx, %rdx
	jnc .Lrule_fail
	jmp .Lrule_next
/* invariant 3: sandpit's descriptors cannot be closed, dup'ed over, changed */
.Lop_fd_free:
	cmp SP_CFG_FD_LO(%r15), %ecx
	jl .Lrule_next
	cmp SP_CFG_FD_HI(%r15), %ecx
	jg .Lrule_next
	jmp .Lrule_fail
/* invariant 7: signals only to this process, never to a trusted thread */
.Lop_self_pid:
	cmp SP_CFG_PID(%r15), %ecx
	jne .Lrule_fail
	jmp .Lrule_next
/* Invariant 7: a signal goes to a thread only if it is one of the
 * program's that B knows, in the U tid table (SM_NSLOTS entries, a slot's
 * U or 0; B's, in the sealed memfd after the secure pages, its address
 * from S).  Every other tid of P is refused alike: a T (from its clone on:
 * a list of T's would have to be written before the kernel gives T its
 * first instruction, which only the kernel could do), a thread just made
 * and not yet confirmed by B, a U whose exit B accepted.  B puts a new U
 * there before its T serves it (trusted_thread_main) and before the
 * clone's result reaches the program (.Lclone_known), so a thread can
 * signal itself, and its creator can signal it, as natively.  A tid <= 0
 * is the kernel's to refuse. */
.Lop_u_tid:
	test %ecx, %ecx
	jle .Lrule_next
	mov SP_CFG_TIDS(%r15), %rsi
	mov $SM_NSLOTS, %edx
2:	cmp (%rsi), %ecx
	je .Lrule_next
	add $4, %rsi
	dec %edx
	jnz 2b
	jmp .Lrule_fail
/* invariant 3: [a, a+len) rounded out to pages must miss every protected
 * range (S, the T table, T's code, the trampolines) */
.Lop_range_free:
	movzbl TTR_ARG2(%rbx), %eax
	mov %rcx, %rdi
	mov $1, %edx
	cmp $TT_NOARG, %eax
	je 1f
	ARG %eax, %rdx
	test %rdx, %rdx
	jnz 1f
	mov $1, %edx
1:	add %rdi, %rdx
	jc .Lrule_fail
	add $0xfff, %rdx
	jc .Lrule_fail
	and $-4096, %rdx
	and $-4096, %rdi
	mov SP_CFG_NRANGES(%r15), %rax
	cmp $SM_MAX_RANGES, %rax
	jbe 2f
	mov $SM_MAX_RANGES, %eax
2:	lea SP_CFG_RANGES(%r15), %rsi
3:	test %rax, %rax
	jz .Lrule_next
	cmp 8(%rsi), %rdi
	jae 4f
	cmp 0(%rsi), %rdx
	ja .Lrule_fail
4:	add $16, %rsi
	dec %rax
	jmp 3b

/* ---- execute the call from the registers */
.Lexec:
	movq %xmm0, %rax
	cmp $__NR_futex, %rax
	je .Lexec_futex
	cmp $__NR_fcntl, %rax
	je .Lexec_fcntl
	/* Invariant 1: no signal mask of U's choosing ever applies to T.  The
	 * calls that carry one (the kernel would install it on T for the
	 * wait, and a signal it lets through would run U's handler on T) get
	 * none: T's own mask is in force, every signal blocked but sandpit's
	 * interrupt during a wait, which ends it when a signal for U comes. */
	cmp $__NR_ppoll, %rax
	jne 1f
	pxor %xmm4, %xmm4 /* sigmask */
	jmp .Lexec_waiting
1:	cmp $__NR_pselect6, %rax
	jne 2f
	pxor %xmm6, %xmm6 /* { sigmask, size } */
	jmp .Lexec_waiting
2:	cmp $__NR_epoll_pwait, %rax
	je 3f
	cmp $__NR_epoll_pwait2, %rax
	jne 4f
3:	pxor %xmm5, %xmm5 /* sigmask */
	jmp .Lexec_waiting
4:	cmp $__NR_io_pgetevents, %rax
	jne 5f
	pxor %xmm6, %xmm6 /* { sigmask, size } */
	jmp .Lexec_waiting
	/* the calls that may block (blocking_calls) wait interruptibly */
5:	cmp $BLOCKING_CALLS_N, %rax
	jae .Lexec_plain
	bt %rax, blocking_calls(%rip)
	jc .Lexec_waiting
.Lexec_plain:
	SYSCALL_FROM_XMM
	jmp .Lresult
/* of fcntl's commands only the waiting locks block (every fcntl a
 * program makes would otherwise pay two mask changes) */
.Lexec_fcntl:
	movq %xmm2, %rax
	cmp $F_SETLKW, %eax
	je .Lexec_waiting
	cmp $F_OFD_SETLKW, %eax
	je .Lexec_waiting
	jmp .Lexec_plain
/* a futex wait may be interrupted; other futex operations never block */
.Lexec_futex:
	movq %xmm2, %rax
	and $0x7f, %eax
	cmp $FUTEX_WAIT, %eax
	je .Lexec_waiting
	cmp $FUTEX_WAIT_BITSET, %eax
	jne .Lexec_plain
/* A call that may block.  While it waits, and only then, T lets B's
 * interrupt signal through: if a handler must run in U, B sends it and
 * sandpit_intr_handler ends the call as the kernel would have ended it for
 * U.  It tells where the interrupt landed from the interrupted rip:
 *   before the call: it was never made, and U gets -ERESTARTNOINTR and
 *     makes it after the handler, as natively a signal that comes before
 *     a call runs its handler and then the call;
 *   at .Lwait_call with rcx cleared: T was stopped at the instruction
 *     before it ran (preempted, or the interrupt came in between), so the
 *     call was never made: -ERESTARTNOINTR, as above;
 *   at .Lwait_call with rcx at .Lwait_done (the syscall instruction puts
 *     it there, and the kernel rewound a call that said -ERESTARTSYS,
 *     T's handler being SA_RESTART): U gets -ERESTARTSYS, and re-issues
 *     the call unless a handler that ran lacks SA_RESTART (then EINTR),
 *     as the kernel restarts U's call;
 *   at .Lwait_done: the call's own result, in the frame's rax (-EINTR
 *     for calls the kernel never restarts, or a result that consumed
 *     something, which must not be lost);
 *   after it, up to .Lwait_blocked: the same result, in the frame's rbx.
 * Past .Lwait_blocked the interrupt is blocked again. */
.Lexec_waiting:
	SIGMASK SIG_UNBLOCK, intr_mask
	ARGS_FROM_XMM
	xor %ecx, %ecx /* set only by the syscall instruction (see above) */
.Lwait_call:
	syscall
.Lwait_done:
	mov %rax, %rbx
	BLOCK_ALL
.Lwait_blocked:
	mov %rbx, %rax
	jmp .Lresult

.Lemu:
	xor %eax, %eax
	cmpl $TE_ZERO, TTE_ERR(%rbx)
	je .Lresult
	cmpl $TE_CLOSE_RANGE, TTE_ERR(%rbx)
	je .Lclose_range
	cmpl $TE_GETTID, TTE_ERR(%rbx)
	jne .Lenosys
	movslq SP_CFG_U_TID(%r15), %rax
	jmp .Lresult

/* close_range(first, last, flags) on the numbers around sandpit's block
 * [fd_lo, fd_hi] (invariant 3): the part below it and the part above,
 * each by the kernel (unsigned ints, as it reads them).  CLOSE_RANGE_UNSHARE
 * would give T a descriptor table of its own: refused (EINVAL). */
.Lclose_range:
	movq %xmm1, %rbx
	movq %xmm2, %rbp
	movq %xmm3, %r8
	mov %ebx, %ebx
	mov %ebp, %ebp
	mov %r8d, %r8d
	mov $-EINVAL, %rax
	test $~CLOSE_RANGE_CLOEXEC, %r8d
	jnz .Lresult
	cmp %ebp, %ebx
	ja .Lresult
	mov SP_CFG_FD_LO(%r15), %esi
	cmp %esi, %ebx
	jae 1f
	dec %esi
	cmp %esi, %ebp
	cmovb %ebp, %esi
	mov %ebx, %edi
	mov %r8d, %edx
	mov $__NR_close_range, %eax
	syscall
	test %rax, %rax
	jnz .Lresult
1:	mov SP_CFG_FD_HI(%r15), %edi
	xor %eax, %eax
	cmp %edi, %ebp
	jbe .Lresult
	inc %edi
	cmp %edi, %ebx
	cmova %ebx, %edi
	mov %ebp, %esi
	mov %r8d, %edx
	mov $__NR_close_range, %eax
	syscall
	jmp .Lresult

/* The run-time patcher's read of /proc/self/maps (user/untrusted/exec_patch.c):
 * pread64 on the descriptor P opened before the sandbox, whose number
 * comes from S, never from U (invariant 8), so that the read asks nothing
 * of the policy.  U names only its own buffer, the length and the offset:
 * the kernel writes U's memory, as a read U makes itself would (S, T's
 * code and the table are read-only: EFAULT), and U learns only its own
 * address space's map, which it could read on that descriptor in strict
 * mode anyway (seccomp strict allows read). */
.Lmaps_read:
	mov SP_CFG_MAPS_FD(%r15), %edi
	movq %xmm1, %rsi
	movq %xmm2, %rdx
	movq %xmm3, %r10
	mov $__NR_pread64, %eax
	syscall
	jmp .Lresult

.Lrdtsc:
	rdtscp
	mov %rdx, MB_RES2(%r14)
	mov %rcx, MB_RES3(%r14)
	jmp .Lresult

/* sandpit's SIGSEGV handler met a fault that is not an rdtsc: restore the
 * default action so the retried instruction kills the process.  The
 * sigaction the kernel reads is constant, in protected memory (invariant
 * 8: U could rewrite one in the mailbox before the kernel reads it). */
/* ---- the default action for a signal sandpit keeps, so that the
 * program's own SIGSEGV, SIGSYS, SANDPIT_SIG or SANDPIT_SIG_INTR ends P as
 * natively.  Only those four (from the register): the default never gives
 * U more, it only makes sandpit's own use of the signal end P (fail
 * closed; a T that B interrupts then ends P too). */
.Lsig_dfl:
	movq %xmm1, %rdi
	cmp $SIGSEGV, %rdi
	je 1f
	cmp $SIGSYS, %rdi
	je 1f
	cmp $SANDPIT_SIG, %rdi
	je 1f
	cmp $SANDPIT_SIG_INTR, %rdi
	je 1f
	mov $-EINVAL, %rax
	jmp .Lresult
1:	lea sig_dfl_act(%rip), %rsi
	xor %edx, %edx
	mov $8, %r10d
	mov $__NR_rt_sigaction, %eax
	syscall
	jmp .Lresult

/* ---- memory arguments: U -> T -> B -> S (DESIGN §2 path 4, invariant 2).
 * T rings B's doorbell with FUTEX_WAKE, a call U can never make (strict
 * mode, and T refuses futex on sandpit's memory), so B acts only on T's
 * requests and never rewrites S while T uses it.  The request itself sits
 * in the mailbox, where U may change it: B copies it once and checks that
 * copy, and T executes only what B wrote into S. */
.Lprocess:
	lea MB_PAYLOAD(%r14), %rdi
	movq %xmm0, 0(%rdi)
	movq %xmm1, 8(%rdi)
	movq %xmm2, 16(%rdi)
	movq %xmm3, 24(%rdi)
	movq %xmm4, 32(%rdi)
	movq %xmm5, 40(%rdi)
	movq %xmm6, 48(%rdi)
	lea MB_B_BELL(%r14), %r9
	jmp .Lring_b
/* ---- U asks to exit (invariants 5, 8): T tells B on the slot's exit bell,
 * a FUTEX_WAKE only T can make, so B never learns an exit from the
 * mailbox.  What U writes as its request is its request; but after an exit
 * T serves nothing more, and P dies if U does not end (.Lexit_ack). */
.Lexit_req:
	lea MB_EXIT_BELL(%r14), %r9
.Lring_b:
	/* S is a seqlock (invariant 8): even when complete, odd while B
	 * writes.  B writes only when rung, so it is even now, and the
	 * verdict for this request is the one published as seq + 2. */
	mov SP_SEQ(%r15), %rbx
	test $1, %bl
	jnz .Ldie_proto
	add $2, %rbx
	mov SP_CFG_SPIN(%r15), %ebp
.Lring:
	mov %r9, %rdi
	mov $FUTEX_WAKE, %esi
	mov $1, %edx
	mov $__NR_futex, %eax
	syscall
	cmp $1, %rax
	je .Lb_wait
	/* B is not waiting yet: it is finishing the previous request, maybe
	 * preempted by us on this CPU, so give it the CPU */
	mov $__NR_sched_yield, %eax
	syscall
	dec %ebp
	jnz .Lring
	mov SP_CFG_SPIN(%r15), %ebp
	CHECK_B
	jmp .Lring
.Lb_wait:
	/* B needs a CPU: yield ours a few times first, which lets B run at
	 * once on this CPU, where its server follows T (B_YIELDS) */
	mov $B_YIELDS, %ebp
1:	mov SP_SEQ(%r15), %rax
	cmp %rax, %rbx
	je .Lverdict
	/* not begun (seq - 2) or being written (seq - 1); anything else is
	 * not the B that T rang */
	lea -2(%rbx), %rcx
	cmp %rax, %rcx
	je 2f
	lea -1(%rbx), %rcx
	cmp %rax, %rcx
	jne .Ldie_proto
2:	dec %ebp
	jz .Lb_sleep
	mov $__NR_sched_yield, %eax
	syscall
	jmp 1b
.Lb_sleep:
	movl $1, MB_T_WAIT_B(%r14)
	mfence
	mov SP_SEQ(%r15), %rdx
	cmp %rdx, %rbx
	je .Lb_awake
	lea SP_SEQ(%r15), %rdi
	mov $FUTEX_WAIT, %esi
	lea futex_timeout(%rip), %r10
	mov $__NR_futex, %eax
	syscall
	cmp $-ETIMEDOUT, %rax
	jne .Lb_awake
	CHECK_B
.Lb_awake:
	movl $0, MB_T_WAIT_B(%r14)
	jmp .Lb_wait
	/* the whole verdict into registers, then the sequence again: T uses
	 * it only if S did not change while it read (invariants 2, 8) */
.Lverdict:
	mov SP_NR(%r15), %rax
	mov SP_ARGS + 0(%r15), %rdi
	mov SP_ARGS + 8(%r15), %rsi
	mov SP_ARGS + 16(%r15), %rdx
	mov SP_ARGS + 24(%r15), %r10
	mov SP_ARGS + 32(%r15), %r8
	mov SP_ARGS + 40(%r15), %r9
	mov SP_VERDICT(%r15), %rbp
	mov SP_NEW_SP(%r15), %r11
	cmp SP_SEQ(%r15), %rbx
	jne .Ldie_proto
	/* a call the policy kills (T's own register and the table, never
	 * the verdict, which B made from the mailbox's copy): P dies */
	movq %xmm0, %rcx
	cmp $TT_MAX_NR, %rcx
	jae 2f
	cmpb $TT_KILL, TT_ENTRIES + TTE_CLS(%r13,%rcx,8)
	je .Lkill
2:	/* an exit verdict answers exactly an exit request */
	movq %xmm0, %rcx
	cmp $SANDPIT_NR_THREAD_EXIT, %rcx
	sete %cl
	cmp $SP_V_EXIT, %rbp
	sete %ch
	cmp %cl, %ch
	jne .Ldie_proto
	cmp $SP_V_EXIT, %rbp
	je .Lexit_ack
	cmp $SP_V_CLONE, %rbp
	je .Lclone
	cmp $SP_V_ACK, %rbp
	je .Lack
	cmp $SP_V_RECV, %rbp
	je .Lrecv
	test %rbp, %rbp
	jnz 1f
	/* an open B checked may block (a FIFO without a writer, a terminal):
	 * it waits interruptibly, as U's own calls do.  The verdict moves
	 * into the request's registers, which .Lexec_waiting loads after it
	 * changed the mask (registers, never S again: invariant 2).  B turns
	 * opens into openat2, or keeps open/openat on a kernel without it */
	cmp $__NR_openat2, %rax
	je .Lverdict_waiting
	cmp $__NR_openat, %rax
	je .Lverdict_waiting
	cmp $__NR_open, %rax
	je .Lverdict_waiting
	syscall
	jmp .Lresult
1:	mov %rbp, %rax
	jmp .Lresult
.Lverdict_waiting:
	movq %rax, %xmm0
	movq %rdi, %xmm1
	movq %rsi, %xmm2
	movq %rdx, %xmm3
	movq %r10, %xmm4
	movq %r8, %xmm5
	movq %r9, %xmm6
	jmp .Lexec_waiting

/* ---- a new thread (invariant 4).  B checked the flags and prepared a
 * slot: its secure page, mailbox, sockets and U's registers.  The clone
 * is made with no stack, and the child starts in sandpit_nursery with r15
 * pointing at its own secure page: no instruction of U's runs in it before
 * it has its own T and is in strict mode. */
.Lclone:
	/* the new slot's eventfds were made with the sandbox, in sandpit's
	 * block above the program's limit (user/layout/slots.h): nothing is made
	 * here, where the kernel could only hand out numbers below the
	 * program's limit.  A wake-up its last thread left on them is
	 * harmless: every sleeper re-reads its word after a read returns
	 * (sandpit_wait_result's callers, sandpit_exit_wait, T's loop).  No
	 * stack: the verdict waits in xmm8-14, the new secure page in rbx. */
	movq %rax, %xmm8
	movq %rdi, %xmm9
	movq %rsi, %xmm10
	movq %rdx, %xmm11
	movq %r10, %xmm12
	movq %r8, %xmm13
	movq %r9, %xmm14
	mov %r11, %rbx
	/* the thread gets T's CPUs: all of the process's again (.Lshared) */
	mov SP_CFG_CPU_MASKS(%r15), %rdx
	test %rdx, %rdx
	jz 1f
	add $(SM_CPU_ALL * 8), %rdx
	xor %edi, %edi
	mov $8, %esi
	mov $__NR_sched_setaffinity, %eax
	syscall
1:	movq %xmm8, %rax
	movq %xmm9, %rdi
	movq %xmm10, %rsi
	movq %xmm11, %rdx
	movq %xmm12, %r10
	movq %xmm13, %r8
	movq %xmm14, %r9
	mov %rbx, %r11
	xor %esi, %esi
	/* B's count of the slot's starts before this one (.Lclone_known) */
	mov SP_STARTED(%rbx), %ebp
	movq %r15, %xmm7
	mov %r11, %r15
	mov SP_CFG_MAILBOX(%r15), %r14
	syscall
	test %rax, %rax
	jz sandpit_nursery
	movq %xmm7, %r15
	mov SP_CFG_MAILBOX(%r15), %r14
	test %rax, %rax
	jns .Lclone_known
/* No thread: the kernel's errno.  B holds the new slot starting until it
 * knows the clone is over: no new thread of P says only that the clone
 * has not come yet (this T may be stopped or waiting for a CPU before it).
 * T waits here for B's decision as it would for the child's (the slot's
 * count moves), and the kernel shows B where: blocked in futex at
 * sandpit_clone_failed_site on the new slot's SP_STARTED, which T reaches
 * only after a clone into that slot that made no thread.  The errno in
 * xmm15, the new secure page in rbx. */
	movq %rax, %xmm15
	.globl sandpit_clone_failed_site
	.hidden sandpit_clone_failed_site
1:	mov SP_STARTED(%rbx), %edx
	cmp %edx, %ebp
	jne .Lclone_decided
	lea SP_STARTED(%rbx), %rdi
	mov $FUTEX_WAIT, %esi
	lea futex_timeout(%rip), %r10
	mov $__NR_futex, %eax
	syscall
sandpit_clone_failed_site:
	cmp $-ETIMEDOUT, %rax
	jne 1b
	CHECK_B
	jmp 1b
/* The child is a thread of the program's from the clone on, and its tid
 * goes back to the program: it must be in the U tid table first, or a
 * signal sent to it at once (pthread_kill right after pthread_create)
 * would be refused (.Lop_u_tid).  B puts it there when the kernel has
 * confirmed the child's threads, then bumps the child's SP_STARTED and
 * wakes it.  T waits for the count to differ from the one it read before
 * the clone (by then the slot may have been another thread's, so no tid
 * is compared), the child's tid in xmm15, the child's secure page in rbx. */
.Lclone_known:
	movq %rax, %xmm15
1:	mov SP_STARTED(%rbx), %edx
	cmp %edx, %ebp
	jne .Lclone_decided
	lea SP_STARTED(%rbx), %rdi
	mov $FUTEX_WAIT, %esi
	lea futex_timeout(%rip), %r10
	mov $__NR_futex, %eax
	syscall
	cmp $-ETIMEDOUT, %rax
	jne 1b
	CHECK_B
	jmp 1b
.Lclone_decided:
	movq %xmm15, %rax
	jmp .Lresult
.Lack:
	xor %eax, %eax
	jmp .Lresult

/* ---- B opened the file itself and sent it (SP_V_RECV, user/trusted/write_open.c):
 * the program gets that very file, never one opened again by its name.
 * The message header is in the mailbox, which U can write at any time:
 * T writes it, receives, acknowledges (B sends the next descriptor, for
 * any slot, only after this byte), then reads each field of the answer
 * once into a register.  The answer is a descriptor only if exactly the
 * tag B sent came back with exactly one SCM_RIGHTS descriptor that is not
 * sandpit's; anything else is an errno, and a descriptor that did come is
 * closed (never one of sandpit's block).  A forgery can only cost U its
 * own open: the file was checked, and it lands in P's table anyway. */
.Lrecv:
	mov %rdi, %r8 /* MSG_CMSG_CLOEXEC or 0, from S */
	mov %rsi, %r9 /* the tag, from S */
	lea MB_PAYLOAD(%r14), %rbx
	xor %eax, %eax
	mov %rax, RM_MSG + 0(%rbx)  /* msg_name */
	mov %rax, RM_MSG + 8(%rbx)  /* msg_namelen */
	lea RM_IOV(%rbx), %rcx
	mov %rcx, RM_MSG + 16(%rbx) /* msg_iov */
	movq $1, RM_MSG + 24(%rbx)  /* msg_iovlen */
	lea RM_CBUF(%rbx), %rcx
	mov %rcx, RM_MSG + 32(%rbx) /* msg_control */
	movq $RM_CBUF_LEN, RM_MSG + 40(%rbx)
	mov %rax, RM_MSG + 48(%rbx) /* msg_flags */
	lea RM_DATA(%rbx), %rcx
	mov %rcx, RM_IOV(%rbx)
	movq $8, RM_IOV + 8(%rbx)
	mov %rax, RM_DATA(%rbx)
	mov %rax, RM_CBUF(%rbx)
	mov %rax, RM_CBUF + 8(%rbx)
	movq $-1, RM_CBUF + 16(%rbx)
	movslq SP_CFG_PASS_FD(%r15), %rdi
	mov %rbx, %rsi
	mov %r8, %rdx
	or $MSG_DONTWAIT, %rdx
	mov $__NR_recvmsg, %eax
	syscall
	mov %rax, %rbp
	movslq SP_CFG_PASS_FD(%r15), %rdi
	lea RM_DATA(%rbx), %rsi
	mov $1, %edx
	mov $__NR_write, %eax
	syscall
	/* each field once */
	mov RM_DATA(%rbx), %r10
	movl RM_MSG + 48(%rbx), %r11d
	mov RM_CBUF(%rbx), %rcx
	mov RM_CBUF + 8(%rbx), %rdx
	movslq RM_CBUF + 16(%rbx), %r8
	/* a descriptor, if one came: one SCM_RIGHTS header, >= 0, not sandpit's */
	xor %esi, %esi
	cmp $RM_CMSG_LEN, %rcx
	jne 1f
	mov $SCM_RIGHTS_HDR, %rax
	cmp %rax, %rdx
	jne 1f
	test %r8, %r8
	js 1f
	movslq SP_CFG_FD_LO(%r15), %rax
	cmp %rax, %r8
	jl 2f
	movslq SP_CFG_FD_HI(%r15), %rax
	cmp %rax, %r8
	jle 1f
2:	mov $1, %esi /* r8 is a descriptor T may return or close */
1:	mov $-EMFILE, %rax /* the kernel could not install it: the limit */
	test $MSG_CTRUNC, %r11d
	jnz .Lrecv_fail
	mov $-EIO, %rax
	cmp $8, %rbp
	jne .Lrecv_fail
	cmp %r9, %r10
	jne .Lrecv_fail
	test %esi, %esi
	jz .Lrecv_fail
	mov %r8, %rax
	jmp .Lresult
.Lrecv_fail:
	test %esi, %esi
	jz .Lresult
	mov %rax, %rbp
	mov %r8, %rdi
	mov $__NR_close, %eax
	syscall
	mov %rbp, %rax
	jmp .Lresult

/* ---- publish the result; wake U only if it sleeps */
.Lresult:
	mov %rax, MB_RESULT(%r14)
	mov %r12, MB_RES_SEQ(%r14)
	mfence
	cmpl $0, MB_U_SLEEP(%r14)
	je 1f
	WAKE_U
1:	xor %ebp, %ebp
	jmp .Lwait

/* ---- B knows U exits (SP_EXITING, which U waits for before it ends):
 * wake U, serve nothing more, and wait until the kernel says U is gone
 * (tgkill finds no such thread; the clear-child-tid word, which U can
 * write, only wakes T).  U that does not end is killed with P (invariant
 * 5), so a slot never stays "exiting" while its U lives on.  Then T does
 * for libc what CLONE_CHILD_CLEARTID would have done (U's clear-child-tid
 * word is sandpit's) and ends too. */
.Lexit_ack:
	WAKE_U
	mov $EXIT_BUDGET, %ebp
.Lexit_wait:
	mov SP_CFG_PID(%r15), %edi
	mov SP_CFG_U_TID(%r15), %esi
	xor %edx, %edx
	mov $__NR_tgkill, %eax
	syscall
	cmp $-ESRCH, %rax
	je .Lexit_gone
	mov MB_CTID(%r14), %edx
	test %edx, %edx
	jnz 1f
	/* 0: U on its way out (the kernel clears the word just before the
	 * thread goes), or U's own writing.  The thread-group leader stays a
	 * zombie that tgkill still finds; for it the word is enough here, as
	 * B confirms its end with the kernel and kills P if T ends while it
	 * lives. */
	mov SP_CFG_U_TID(%r15), %eax
	cmp SP_CFG_PID(%r15), %eax
	je .Lexit_gone
	/* mostly yield (U is a few instructions from gone), now and then
	 * sleep, so that the budget is about 2 s however fast yields return */
	test $0x3ff, %ebp
	jz 1f
	sub $1, %ebp
	jbe .Ldie_exit
	mov $__NR_sched_yield, %eax
	syscall
	jmp .Lexit_wait
1:	sub $EXIT_WAIT_COST, %ebp
	jbe .Ldie_exit
	lea MB_CTID(%r14), %rdi
	mov $FUTEX_WAIT, %esi
	lea exit_timeout(%rip), %r10
	mov $__NR_futex, %eax
	syscall
	CHECK_B
	jmp .Lexit_wait
	/* the kernel woke one waiter of U's word; B's watcher may wait on it too */
.Lexit_gone:
	lea MB_CTID(%r14), %rdi
	mov $FUTEX_WAKE, %esi
	mov $0x7fffffff, %edx
	mov $__NR_futex, %eax
	syscall
	mov SP_GLIBC_CTID(%r15), %rdi
	test %rdi, %rdi
	jz 3f
	movl $0, (%rdi)
	mov $FUTEX_WAKE, %esi
	mov $0x7fffffff, %edx
	mov $__NR_futex, %eax
	syscall
	/* with U's own exit code, still in xmm1 from its exit request: the
	 * last thread of P to end gives P its status, and after a program's
	 * last thread that is its T (sys_exit(1) must leave status 1) */
3:	movq %xmm1, %rdi
	mov $__NR_exit, %eax
	syscall
	ud2

/* ---- fail closed (invariant 5) */
.Lkill:
	lea msg_kill(%rip), %rsi
	mov $msg_kill_len, %edx
	jmp .Ldie
.Ldie_b:
	lea msg_b(%rip), %rsi
	mov $msg_b_len, %edx
	jmp .Ldie
.Ldie_exit:
	lea msg_exit(%rip), %rsi
	mov $msg_exit_len, %edx
	jmp .Ldie
.Ldie_proto:
	lea msg_proto(%rip), %rsi
	mov $msg_proto_len, %edx
.Ldie:
	mov $2, %edi
	mov $__NR_write, %eax
	syscall
	mov SP_CFG_PID(%r15), %edi
	mov $SIGKILL, %esi
	mov $__NR_kill, %eax
	syscall
	ud2
	.size trusted_thread_main, .-trusted_thread_main

/* The first instructions of a thread U creates.  r15 = its secure page,
 * rsp = 0, every signal blocked (inherited from T).  It gets its own T,
 * %gs, its signal mask, enters strict mode, and only then loads U's
 * registers (saved by the stub, copied by B) and returns into U's
 * trampoline as the clone system call would have: rax = 0, on the new
 * stack.  Until strict mode it reads nothing U could change. */
	.type sandpit_nursery,@function
sandpit_nursery:
	xor %esp, %esp
	mov SP_CFG_MAILBOX(%r15), %r14
	mov SP_CFG_TABLE(%r15), %r13
	mov MB_REQ_SEQ(%r14), %r12
	CLONE_T
	js .Ldie_nursery
	mov $ARCH_SET_GS, %edi
	mov %r14, %rsi
	mov $__NR_arch_prctl, %eax
	syscall
	test %rax, %rax
	jnz .Ldie_nursery
	mov $__NR_gettid, %eax
	syscall
	mov %eax, MB_U_STATE + US_TID(%r14)
	SIGMASK SIG_SETMASK, nursery_mask
	test %rax, %rax
	jnz .Ldie_nursery
	cmpq $0, SP_FPROG(%r15)
	jne 1f
	mov $PR_SET_SECCOMP, %edi
	mov $SECCOMP_MODE_STRICT, %esi
	mov $__NR_prctl, %eax
	syscall
	test %rax, %rax
	jnz .Ldie_nursery
	jmp 2f
	/* filter mode: the filter from the secure page, for this thread only
	 * (never TSYNC: T must not get it) */
1:	mov $SECCOMP_SET_MODE_FILTER, %edi
	xor %esi, %esi
	lea SP_FPROG(%r15), %rdx
	mov $__NR_seccomp, %eax
	syscall
	cmp $-38, %rax /* ENOSYS: before 3.17, prctl does it */
	jne 3f
	mov $PR_SET_SECCOMP, %edi
	mov $SECCOMP_MODE_FILTER, %esi
	lea SP_FPROG(%r15), %rdx
	mov $__NR_prctl, %eax
	syscall
3:	test %rax, %rax
	jnz .Ldie_nursery
2:
	/* U from here on: its own registers, whatever they hold */
	lea MB_CLONE_REGS(%r14), %r11
	mov CR_RSP(%r11), %rsp
	mov CR_RIP(%r11), %rax
	mov %rax, (%rsp)
	pushq CR_FLAGS(%r11)
	mov CR_RBX(%r11), %rbx
	mov CR_RBP(%r11), %rbp
	mov CR_R12(%r11), %r12
	mov CR_R13(%r11), %r13
	mov CR_R14(%r11), %r14
	mov CR_R15(%r11), %r15
	mov CR_RDI(%r11), %rdi
	mov CR_RSI(%r11), %rsi
	mov CR_RDX(%r11), %rdx
	mov CR_R10(%r11), %r10
	mov CR_R8(%r11), %r8
	mov CR_R9(%r11), %r9
	popfq
	xor %eax, %eax
	ret
.Ldie_nursery:
	lea msg_nursery(%rip), %rsi
	mov $msg_nursery_len, %edx
	jmp .Ldie
	.size sandpit_nursery, .-sandpit_nursery

/* every signal blocked but those U's real mask never blocks
 * (SANDPIT_NEVER_BLOCKED): SIGSEGV answers the thread's mask changes
 * (sandpit_ask_self), and a fault the kernel forces through a block
 * would reset its handler to the default first */
nursery_mask:
	.quad ~((1 << (11 - 1)) | (1 << (31 - 1)) | (1 << (SANDPIT_SIG - 1)))
all_mask:
	.quad -1
intr_mask:
	.quad 1 << (SANDPIT_SIG_INTR - 1)

/* The calls that may block, by number, one bit each: T makes them with
 * sandpit's interrupt let through (.Lexec_waiting), so that a signal for
 * U ends or restarts them as the kernel would (futex's waits and the calls
 * that carry a mask, and fcntl's waiting locks, are picked out before).  rt_sigtimedwait is not here:
 * T unblocks its set for it (a signal it takes runs no handler). */
blocking_calls:
	.quad BLK(__NR_read) | BLK(__NR_write) | BLK(__NR_pread64) | BLK(__NR_pwrite64) | \
	      BLK(__NR_readv) | BLK(__NR_writev) | BLK(__NR_poll) | BLK(__NR_select) | \
	      BLK(__NR_nanosleep) | BLK(__NR_sendfile) | BLK(__NR_connect) | \
	      BLK(__NR_accept) | BLK(__NR_sendto) | BLK(__NR_recvfrom) | \
	      BLK(__NR_sendmsg) | BLK(__NR_recvmsg) | BLK(__NR_wait4)
	.quad BLK(__NR_semop) | BLK(__NR_msgsnd) | BLK(__NR_msgrcv) | \
	      BLK(__NR_flock)
	.quad 0
	.quad BLK(__NR_io_getevents) | BLK(__NR_semtimedop) | BLK(__NR_clock_nanosleep) | \
	      BLK(__NR_epoll_wait) | BLK(__NR_mq_timedsend) | BLK(__NR_mq_timedreceive) | \
	      BLK(__NR_waitid)
	.quad BLK(__NR_splice) | BLK(__NR_tee) | BLK(__NR_accept4) | BLK(__NR_preadv) | \
	      BLK(__NR_pwritev) | BLK(__NR_recvmmsg) | BLK(__NR_sendmmsg)
	.quad BLK(__NR_copy_file_range) | BLK(__NR_preadv2) | BLK(__NR_pwritev2)
	.quad BLK(__NR_epoll_pwait2)

/* SANDPIT_SIG_INTR's handler.  On T it runs on T's alternate stack, whose
 * place the kernel took from T's secure page; so the stack pointer, and
 * nothing in memory U can write, tells which slot's T this is.  The frame
 * (U can write it) is never returned to, and only its rip, rax and rbx are
 * read (see .Lexec_waiting): T answers the interrupted call and goes back
 * to its loop, every signal blocked again (invariant 1: no sigreturn
 * through U's memory on T).  On
 * a U thread (only the program can send it the signal) it is the
 * program's own signal, which sandpit_signal_entry gives to the program's
 * virtual action; a U that put its alternate stack in sandpit's region
 * becomes a copy of T in strict mode and dies at its first call. */
	.globl sandpit_intr_handler
	.hidden sandpit_intr_handler
	.type sandpit_intr_handler,@function
sandpit_intr_handler:
	/* on none of T's alternate stacks (their bounds in sandpit_ro, a page
	 * U cannot write; struct sandpit_ro starts with t_alt_lo, t_alt_hi):
	 * the program's own signal on a U.  The alignment alone would take a
	 * quarter of all U stacks for T's region. */
	mov %rsp, %rcx
	sub sandpit_ro_page(%rip), %rcx
	mov sandpit_ro_page+8(%rip), %rax
	sub sandpit_ro_page(%rip), %rax
	cmp %rax, %rcx
	jae .Lintr_foreign
	mov %rsp, %rax
	and $-SM_REGION_ALIGN, %rax
	mov %rsp, %rcx
	sub %rax, %rcx
	cmp $SM_ALT_REGION, %rcx
	jae .Lintr_foreign
	mov %rdx, %r9 /* the frame's ucontext */
	shr $SM_ALT_SHIFT, %rcx
	mov %rcx, %rdx
	shl $12, %rdx
	lea SM_ALT_REGION(%rax,%rdx), %r15
	cmp SP_CFG_SLOT(%r15), %ecx
	jne .Ldie_proto
	/* Where the interrupt landed (see .Lexec_waiting).  The frame is
	 * written by the kernel on memory U can write: its rip is only
	 * compared, its rax or rbx only handed to U as the result, which U
	 * could write into its own mailbox anyway. */
	mov $-ERESTARTSYS, %rbx
	mov UC_RIP(%r9), %rcx
	lea .Lwait_done(%rip), %rax
	cmp %rax, %rcx
	jne 1f
	mov UC_RAX(%r9), %rbx
	jmp 2f
1:	ja 3f
	lea .Lwait_call(%rip), %rax
	cmp %rax, %rcx
	jb 4f
	lea .Lwait_done(%rip), %rax
	cmp %rax, UC_RCX(%r9)
	je 2f
4:	mov $-ERESTARTNOINTR, %rbx
	jmp 2f
3:	lea .Lwait_blocked(%rip), %rax
	cmp %rax, %rcx
	ja 2f
	mov UC_RBX(%r9), %rbx
2:	/* never return through a frame on this stack: it may be T's */
	xor %esp, %esp
	mov SP_CFG_MAILBOX(%r15), %r14
	mov SP_CFG_TABLE(%r15), %r13
	BLOCK_ALL
	pxor %xmm0, %xmm0
	mov MB_REQ_SEQ(%r14), %r12
	mov %rbx, %rax
	jmp .Lresult
.Lintr_foreign:
	/* not on a T: the program's own signal 63, on U (rdi, rsi, rdx are
	 * still the kernel's); its virtual action decides */
	jmp sandpit_signal_entry
	.size sandpit_intr_handler, .-sandpit_intr_handler

futex_timeout:
	.quad 0, 100000000
/* what T writes to U's eventfd to wake it */
eventfd_one:
	.quad 1
exit_timeout:
	.quad 0, 10000000
/* the default action, for SANDPIT_NR_SIG_DFL: a struct
 * kernel_sigaction the kernel reads where U cannot write */
sig_dfl_act:
	.quad 0, 0, 0, 0
msg_kill:
	.ascii "sandpit: forbidden system call (policy: kill); killing the process\n"
	.set msg_kill_len, . - msg_kill
msg_b:
	.ascii "sandpit: the trusted process is gone; killing the process\n"
	.set msg_b_len, . - msg_b
msg_nursery:
	.ascii "sandpit: a new thread could not be sandboxed; killing the process\n"
	.set msg_nursery_len, . - msg_nursery
msg_proto:
	.ascii "sandpit: trusted process protocol violation; killing the process\n"
	.set msg_proto_len, . - msg_proto
msg_exit:
	.ascii "sandpit: a thread that asked to exit did not end; killing the process\n"
	.set msg_exit_len, . - msg_exit

	.section .note.GNU-stack,"",@progbits
