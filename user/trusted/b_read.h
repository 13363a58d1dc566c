/* Memory reads of P by the trusted process B: every memory argument B
 * checks is one copy taken here (process_vm_readv), and only that copy is
 * checked and used.  Only B includes it. */
#ifndef SANDPIT_B_READ_H
#define SANDPIT_B_READ_H
#include <stddef.h>
#include <stdint.h>

/* After B's one copy of something in a mailbox (U can write it at any
 * time): the compiler may not read the mailbox again in the copy's place,
 * so what is checked is what is used (invariant 8). */
static inline void b_copied(void)
{
	__asm__ __volatile__("" ::: "memory");
}

/* n bytes at addr in slot s's process, all or nothing: 0, or -EFAULT */
long b_read_mem(int s, void *dst, uint64_t addr, size_t n);
/* slot s's U's string at addr, as process_vm_readv reads it: its length,
 * or -errno (-ENAMETOOLONG when no NUL comes within max) */
long b_read_string(int s, char *buf, size_t max, uint64_t addr);
/* The path argument at addr of slot s's request: from the copy U's entry
 * sent with it when that copy is of this argument, else read from P. */
long b_read_path(int s, char *buf, size_t max, uint64_t addr);
/* a lies in sandpit's memory in slot s's process (its ranges, as
 * sandpit_start wrote them in slot 0's secure page) */
int b_in_protected(int s, uint64_t a);
#endif
