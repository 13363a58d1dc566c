/* The patcher's one per-architecture header (user/patch/arch/<arch>.h),
 * chosen by the compiler's target. */
#ifndef SANDPIT_USER_PATCH_ARCH_H
#define SANDPIT_USER_PATCH_ARCH_H
#if defined(__x86_64__)
#include "user/patch/arch/x86_64.h"
#else
#error "the patcher has no header for this architecture in user/patch/arch/"
#endif
#endif
