/* The default policy's model, written at build time by
 * policy/tools/gen_model.c (policy/model.h).  The Makefile names the file
 * in SANDPIT_MODEL_BIN. */
	.section .rodata
	.balign 8
	.globl sandpit_default_model
	.hidden sandpit_default_model
	.globl sandpit_default_model_len
	.hidden sandpit_default_model_len
sandpit_default_model:
	.incbin SANDPIT_MODEL_BIN
1:
	.balign 8
sandpit_default_model_len:
	.quad 1b - sandpit_default_model
	.section .note.GNU-stack, "", @progbits
