/* U's runtime's one per-architecture header (user/untrusted/arch/<arch>.h),
 * chosen by the compiler's target, as the patcher's is (user/patch/arch.h).
 * The assembly beside it is asm/<arch>/. */
#ifndef SANDPIT_USER_UNTRUSTED_ARCH_H
#define SANDPIT_USER_UNTRUSTED_ARCH_H
#if defined(__x86_64__)
#include "user/untrusted/arch/x86_64.h"
#else
#error "U's runtime has no header for this architecture in user/untrusted/arch/"
#endif
#endif
