/* What the runtime offers the command (loader/, bench/) beyond the public
 * API of include/sandpit.h.  Implemented in user/sandbox.c. */
#ifndef SANDPIT_USER_SANDBOX_H
#define SANDPIT_USER_SANDBOX_H
#include <stddef.h>
#include <stdint.h>

/* For `sandpit run` (loader/run.c), before sandpit_start: patch only the
 * objects overlapping [lo, hi) (at most 4 calls) and the vDSO. */
void sandpit_patch_only(uintptr_t lo, uintptr_t hi);

/* Memory sandpit_start sets aside for each slot, whether a thread uses it
 * or not: its secure page and mailbox (S) and T's alternate signal stack
 * (user/secure_mem.h). */
size_t sandpit_slot_bytes(void);
#endif
