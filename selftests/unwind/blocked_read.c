/* unwind_test's program: main calls a function that blocks in a read of
 * its stdin (a pipe), so that the test can stop it there and walk its
 * frames.  Built with frame pointers.
 *
 *     blocked_read MODE HOW      MODE: native | strict | filter
 *                                HOW:  own (the function's own `syscall`)
 *                                      | libc (the function calls read())
 *
 * It writes one byte to stdout once it is about to block, and exits 0 when
 * the read returned the byte the test sends. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sandpit.h>

/* read's number from memory: no patcher knows it statically, so the site
 * goes through the stub in filter mode too */
static volatile long read_nr = SYS_read;
/* taking the frame's address makes gcc give even this leaf its rbp frame
 * (-mno-omit-leaf-frame-pointer alone does not, here) */
static void *volatile frame;

__attribute__((noinline)) long blocked_in_read(int fd, char *c)
{
	long r;

	frame = __builtin_frame_address(0);
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(read_nr), "D"((long)fd), "S"(c), "d"(1L)
			 : "rcx", "r11", "memory");
	return r;
}

__attribute__((noinline)) long blocked_in_libc_read(int fd, char *c)
{
	long r = read(fd, c, 1);

	__asm__ volatile("" ::: "memory"); /* no tail call */
	return r;
}

int main(int argc, char **argv)
{
	struct sandpit_options o = { 0 };
	char c = 0;
	long r;

	if (argc != 3)
		return 2;
	if (strcmp(argv[1], "native")) {
		o.mode = !strcmp(argv[1], "strict") ? SANDPIT_MODE_STRICT : SANDPIT_MODE_FILTER;
		if (sandpit_start(&o) < 0) {
			fprintf(stderr, "sandpit_start: %s\n", sandpit_error());
			return 3;
		}
	}
	if (write(1, "r", 1) != 1)
		return 4;
	r = !strcmp(argv[2], "own") ? blocked_in_read(0, &c) : blocked_in_libc_read(0, &c);
	return r == 1 && c == 'x' ? 0 : 1;
}
