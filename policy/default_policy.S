/* policy/default.policy, the built-in default policy, embedded in the
 * library as text; policy_new_default (policy/parse.c) compiles it like any
 * policy file.  The assembler runs from the top of the tree. */
	.section .rodata
	.globl sandpit_default_policy
	.hidden sandpit_default_policy
	.globl sandpit_default_policy_end
	.hidden sandpit_default_policy_end
sandpit_default_policy:
	.incbin "policy/default.policy"
sandpit_default_policy_end:
	.byte 0
	.section .note.GNU-stack, "", @progbits
