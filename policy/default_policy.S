/* policy/default.policy, the built-in default policy, embedded in the
 * library as text; policy_new_default (policy/parse.c) compiles it like any
 * policy file.  The assembler runs from the top of the tree. */
	.section .rodata
	.globl sandpit_default_policy
	.hidden sandpit_default_policy
	.globl sandpit_default_policy_len
	.hidden sandpit_default_policy_len
sandpit_default_policy:
	.incbin "policy/default.policy"
1:
	.byte 0
	.balign 8
sandpit_default_policy_len:
	.quad 1b - sandpit_default_policy
	.section .note.GNU-stack, "", @progbits
