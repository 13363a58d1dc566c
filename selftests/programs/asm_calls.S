/* A hand-written assembly program for the patcher's test (no_unwind_test):
 * no libc, no symbols it keeps, no unwind tables.  It writes a line, asks
 * for its pid and writes a second line if getpid answered, and leaves with
 * exit_group(7).  Its system calls are found by decoding its code from
 * the start of its executable segment. */
	.text
	.globl _start
_start:
	mov $1, %eax
	mov $1, %edi
	lea hello(%rip), %rsi
	mov $hello_len, %edx
	syscall
	mov $39, %eax
	syscall
	test %eax, %eax
	jle 1f
	mov $1, %eax
	mov $1, %edi
	lea pid_ok(%rip), %rsi
	mov $pid_ok_len, %edx
	syscall
1:	mov $231, %eax
	mov $7, %edi
	syscall
	hlt

	.section .rodata
hello:	.ascii "hello from assembly\n"
	.set hello_len, . - hello
pid_ok:	.ascii "getpid answered\n"
	.set pid_ok_len, . - pid_ok
	.section .note.GNU-stack,"",@progbits
