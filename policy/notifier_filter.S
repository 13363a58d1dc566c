/* The notifier's filter, made at build time by
 * policy/tools/gen_notifier.c (user/start/notifier.c installs it).  The
 * Makefile names the file in SANDPIT_NOTIFIER_BIN. */
	.section .rodata
	.balign 8
	.globl sandpit_notifier_filter
	.hidden sandpit_notifier_filter
	.globl sandpit_notifier_filter_len
	.hidden sandpit_notifier_filter_len
sandpit_notifier_filter:
	.incbin SANDPIT_NOTIFIER_BIN
1:
	.balign 8
sandpit_notifier_filter_len:
	.quad 1b - sandpit_notifier_filter
	.section .note.GNU-stack, "", @progbits
