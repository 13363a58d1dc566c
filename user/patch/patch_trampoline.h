/* Trampolines (internal to the patcher): the displaced instructions of each
 * planned site re-encoded with Zydis's encoder for the region's address
 * (absolute targets kept, rel8 widened, each checked to decode back to its
 * original), and the bytes that replace a site. */
#ifndef SANDPIT_USER_PATCH_TRAMPOLINE_H
#define SANDPIT_USER_PATCH_TRAMPOLINE_H
#include <stdint.h>
#include "user/patch/patch_types.h"
#include "user/patch/plan_window.h"

/* Encode the region image (plan->code) for plan->region.  Sites whose
 * trampoline can not be encoded are dropped (skipped_other).  0 or -errno. */
int tramp_encode(struct planner *p);

/* The SITE_MAX-byte buffer buf gets site s's new bytes: jmp trampoline;
 * nops.  0 or -errno. */
int tramp_site_bytes(const struct patch_plan *pl, const struct patch_site *s, uint8_t *buf);
#endif
