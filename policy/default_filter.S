/* The default policy's filter, compiled at build time by
 * policy/tools/gen_filter.c (templates, see policy.h); sandpit_start fills
 * in the pid.  The Makefile names the file in SANDPIT_FILTER_BIN. */
	.section .rodata
	.balign 8
	.globl sandpit_default_filter
	.hidden sandpit_default_filter
	.globl sandpit_default_filter_len
	.hidden sandpit_default_filter_len
sandpit_default_filter:
	.incbin SANDPIT_FILTER_BIN
1:
	.balign 8
sandpit_default_filter_len:
	.quad 1b - sandpit_default_filter
	.section .note.GNU-stack, "", @progbits
