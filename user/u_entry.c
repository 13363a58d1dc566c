/* The sandpit entry: every patched system call site arrives here (through
 * the stub in asm/x86_64/entry.S).  Runs in U, freestanding. */
#include <asm/unistd.h>
#include "user/runtime.h"

int sandpit_u_active;

static inline void cpu_relax(void) { __asm__ volatile("pause" ::: "memory"); }
static inline void full_fence(void) { __asm__ volatile("mfence" ::: "memory"); }

/* One request to T: write it, wake T only if it sleeps, then spin while T
 * runs on another CPU (at most about one blocking hand-off), else block. */
long u_call_trusted(long nr, const long args[6])
{
	struct u_state *st = u_self();
	struct mailbox *mb = st->mb;
	uint64_t seq = ++st->seq;
	unsigned cpu = sandpit_getcpu();
	char drain[64];

	mb->nr = nr;
	for (int i = 0; i < 6; i++)
		mb->args[i] = args[i];
	mb->u_cpu = cpu;
	__atomic_store_n(&mb->req_seq, seq, __ATOMIC_RELEASE);
	full_fence();
	if (__atomic_load_n(&mb->t_sleep, __ATOMIC_RELAXED))
		sandpit_raw_syscall6(__NR_write, st->u_fd, (long)drain, 1, 0, 0, 0);

	for (;;) {
		if (__atomic_load_n(&mb->res_seq, __ATOMIC_ACQUIRE) == seq)
			break;
		if (__atomic_load_n(&mb->t_cpu, __ATOMIC_RELAXED) != cpu) {
			uint32_t n = st->spin;
			while (n-- && __atomic_load_n(&mb->res_seq, __ATOMIC_ACQUIRE) != seq)
				cpu_relax();
			if (__atomic_load_n(&mb->res_seq, __ATOMIC_ACQUIRE) == seq)
				break;
		}
		__atomic_store_n(&mb->u_sleep, 1, __ATOMIC_RELAXED);
		full_fence();
		if (__atomic_load_n(&mb->res_seq, __ATOMIC_ACQUIRE) != seq)
			sandpit_raw_syscall6(__NR_read, st->u_fd, (long)drain, sizeof(drain), 0, 0, 0);
		__atomic_store_n(&mb->u_sleep, 0, __ATOMIC_RELAXED);
	}
	return mb->result;
}

long sandpit_entry(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	if (!__atomic_load_n(&sandpit_u_active, __ATOMIC_RELAXED))
		return sandpit_raw_syscall6(nr, a0, a1, a2, a3, a4, a5);

	const struct tt_table *t = u_self()->table;
	if ((unsigned long)nr < TT_MAX_NR) {
		const struct tt_entry *e = &t->entries[nr];
		if (e->cls == TT_NATIVE)
			return sandpit_raw_syscall6(nr, a0, a1, a2, a3, a4, a5);
		if (e->cls == TT_DENY)
			return -(long)e->err;
	} else {
		return -38; /* ENOSYS: an unknown number is never executed */
	}
	long args[6] = { a0, a1, a2, a3, a4, a5 };
	return u_call_trusted(nr, args);
}
