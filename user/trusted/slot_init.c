/* A slot's secure page and U-side state made from slot 0's
 * (user/trusted/slot_init.h): by start-up in P for slot 0, by B for each
 * new thread's slot. */
#include <poll.h>
#include <stdint.h>
#include <string.h>

#include "user/layout/secure_mem.h"
#include "user/layout/slots.h"
#include "user/trusted/slot_init.h"
#include "user/untrusted/runtime.h"

void slot_init(struct secure_page *pages, struct mailbox *mbs, int fd_lo, int s)
{
	struct secure_page *sp = &pages[s], *sp0 = &pages[0];
	struct mailbox *mb = &mbs[s];
	uint64_t seq = sp->seq;
	uint32_t started = sp->started;
	if (s != 0)
		memcpy(sp, sp0, SP_DATA); /* the configuration, not B's data area */
	sp->seq = seq;
	sp->started = started; /* a T may wait for it to move (slot_start_decided) */
	sp->verdict = 0;
	sp->slot = (uint32_t)s;
	sp->t_fd = slots_t_fd(fd_lo, s);
	sp->u_fd = slots_u_fd(fd_lo, s);
	sp->mailbox = (uint64_t)(uintptr_t)mb;
	sp->u_tid = 0;
	sp->glibc_ctid = 0;
	sp->b_cpu = ~0u;
	sp->exiting = 0;
	/* what T sleeps on: in S, so U cannot hide B's hang-up from T */
	sp->pollfd[0].fd = sp->t_fd;
	sp->pollfd[1].fd = sp->tb_fd;
	sp->pollfd[0].events = sp->pollfd[1].events = POLLIN;
	sp->pollfd[0].revents = sp->pollfd[1].revents = 0;
	memset(mb, 0, sizeof(*mb));
	mb->t_cpu = mb->u_cpu = ~0u;
	mb->path.len = MB_PATH_NONE;
	struct u_state *st = (struct u_state *)mb->u_state;
	st->mb = mb;
	st->table = (const struct tt_table *)(uintptr_t)sp0->table;
	st->u_fd = sp->u_fd;
	st->t_fd = sp->t_fd;
	st->spin = sp0->spin;
	st->pid = sp0->pid;
	st->tb_fd = sp0->tb_fd;
	st->slot = s;
	st->sp = sp;
	/* T's alternate stack: its slot's in the region below the secure pages */
	uintptr_t region = (uintptr_t)pages - SM_ALT_REGION;
	sp->altstack[0] = region + (uintptr_t)s * SM_ALT_SIZE;
	sp->altstack[1] = 0;
	sp->altstack[2] = SM_ALT_SIZE;
}
