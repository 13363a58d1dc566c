/* A slot's secure page and U-side state (user/layout/secure_mem.h), made
 * from slot 0's: by start-up in P (slot 0, whose configuration
 * sandpit_start has written) and by the trusted process B for each new
 * thread's slot (b_serve.c). */
#ifndef SANDPIT_SLOT_INIT_H
#define SANDPIT_SLOT_INIT_H
#include "user/trusted/b_config.h"

/* Fill slot `slot`'s secure page configuration and U-side state from slot
 * 0's (which sandpit_start writes). */
void slot_init(const struct trusted_process_config *cfg, int slot);
#endif
