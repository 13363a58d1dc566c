/* A slot's secure page and U-side state (user/layout/secure_mem.h), made
 * from slot 0's: by start-up in P (slot 0, whose configuration
 * sandpit_start has written) and by the trusted process B for each new
 * thread's slot (b_serve.c). */
#ifndef SANDPIT_SLOT_INIT_H
#define SANDPIT_SLOT_INIT_H

struct mailbox;
struct secure_page;

/* Fill slot `slot`'s secure page configuration and U-side state from slot
 * 0's (which sandpit_start writes), among a process's secure pages and
 * mailboxes, its descriptor block from fd_lo. */
void slot_init(struct secure_page *pages, struct mailbox *mbs, int fd_lo, int slot);
#endif
