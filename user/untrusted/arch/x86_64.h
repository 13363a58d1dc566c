/* What U's runtime takes from x86-64 (through user/untrusted/arch.h): the
 * spin and fence instructions, the thread pointer's instructions, the
 * per-thread state's segment, and the registers of a signal frame that
 * sandpit's handlers read and write (<sys/ucontext.h>'s names).  One
 * header an architecture: a port adds its own beside this one.  (The
 * instructions a site is found by are the patcher's: user/patch/arch/.) */
#ifndef SANDPIT_USER_UNTRUSTED_ARCH_X86_64_H
#define SANDPIT_USER_UNTRUSTED_ARCH_X86_64_H
#include <stdint.h>

/* one round of a spin that waits for another CPU */
static inline void cpu_relax(void) { __asm__ volatile("pause" ::: "memory"); }
/* stores before, loads after: a store-load barrier */
static inline void full_fence(void) { __asm__ volatile("mfence" ::: "memory"); }

/* The thread pointer (FS base) set to v, or read into out, by the thread
 * itself, where the CPU lets it (FSGSBASE). */
#define ARCH_SET_THREAD_POINTER(v) __asm__ volatile("wrfsbase %0" ::"r"(v) : "memory")
#define ARCH_THREAD_POINTER(out) __asm__ volatile("rdfsbase %0" : "=r"(out))

/* The word at offset off of this thread's mailbox: %gs is the mailbox
 * (sandpit_start and the nursery set it; the program's TLS is %fs). */
#define ARCH_MAILBOX_WORD(off, out) __asm__ volatile("mov %%gs:%c1, %0" : "=r"(out) : "i"(off))

/* A signal frame's registers (uc_mcontext.gregs): the program counter
 * and the stack pointer; a system call's number's and result's register
 * and its six arguments (the SIGSYS net makes the call the frame shows);
 * a function's first argument (sandpit_ask_self's request); the three
 * rdtsc and rdtscp write (the counter's low and high halves, the aux). */
#define UC_PC REG_RIP
#define UC_SP REG_RSP
#define UC_RET REG_RAX
#define UC_SYSCALL_ARG0 REG_RDI
#define UC_SYSCALL_ARG1 REG_RSI
#define UC_SYSCALL_ARG2 REG_RDX
#define UC_SYSCALL_ARG3 REG_R10
#define UC_SYSCALL_ARG4 REG_R8
#define UC_SYSCALL_ARG5 REG_R9
#define UC_CALL_ARG0 REG_RDI
#define UC_TSC_LO REG_RAX
#define UC_TSC_HI REG_RDX
#define UC_TSC_AUX REG_RCX
/* the length of sandpit_ask_self_insn's instruction (hlt), stepped over */
#define ARCH_ASK_SELF_LEN 1
#endif
