/* The calling thread's sandpit state, for tests that read what U can read
 * of it (its mailbox, and through its u_state the read-only secure page
 * and T table T works from).  Only inside a started sandbox. */
#ifndef SANDPIT_SELFTEST_U_STATE_H
#define SANDPIT_SELFTEST_U_STATE_H
#include "user/untrusted/runtime.h"

/* the calling thread's mailbox: the first word of its u_state, at %gs */
static inline struct mailbox *my_mailbox(void)
{
	struct mailbox *mb;
	__asm__ volatile("mov %%gs:%c1, %0" : "=r"(mb) : "i"(MB_U_STATE));
	return mb;
}

static inline struct u_state *state_of(struct mailbox *mb)
{
	return (struct u_state *)mb->u_state;
}
#endif
