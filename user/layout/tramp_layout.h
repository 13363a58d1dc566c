/* The shape of a syscall site's trampoline, as far as the stub reads it
 * (asm/x86_64/entry.S) and the encoder writes it (patch_trampoline.c):
 *     <displaced instructions before the syscall>
 *     lea -TRAMP_RED_ZONE(%rsp),%rsp ; call *SLOT(%rip)
 *     lea TRAMP_RED_ZONE(%rsp),%rsp          (TRAMP_UP_LEN bytes)
 *     <displaced instructions after the syscall>
 *     jmp <end of the displaced bytes>        (TRAMP_JMP_LEN bytes, e9 rel32)
 * Only for unwinding: the stub finds the program's address after the syscall
 * from the jmp that follows the call when nothing comes between. */
#ifndef SANDPIT_USER_TRAMP_LAYOUT_H
#define SANDPIT_USER_TRAMP_LAYOUT_H

#define TRAMP_RED_ZONE 128
#define TRAMP_UP_LEN 8
#define TRAMP_JMP_OP 0xe9
#define TRAMP_JMP_LEN 5

#endif
