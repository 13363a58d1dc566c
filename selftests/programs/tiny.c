/* The smallest program run_test runs under the smallest policies (no libc:
 * only the system calls named here, so that a policy of read, write and
 * exit_group runs it).
 *   tiny hello     writes "hello\n", exits 3
 *   tiny refused   writes "before\n", calls getppid (which those policies
 *                  refuse or kill), writes "after N\n" with its result, exits 4
 *   tiny missed    the same from a `syscall` the patcher cannot patch (a
 *                  branch lands on it and on the instruction after it), which
 *                  reaches the filter itself in filter mode
 *   tiny fds       writes 8 bytes (a 1, as sandpit's wake-ups do) to every
 *                  descriptor below 4096 but 1, from the site the patcher
 *                  cannot patch, and prints where it wrote, and how many
 *                  said EPERM, EBADF or something else; then 200 writes to
 *                  fd 2 through the patched site, which the policy refuses
 *                  through T, and how many said EPERM: T still answers
 *                  every call after the wake-ups the first part forged */
#include <asm/unistd.h>

static long sys3(long nr, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}

/* the same from a site no jump fits over (it and the ret after it are
 * branch targets): the call reaches the kernel, and in filter mode the
 * filter, as the program made it */
long sys3_missed(long nr, long a, long b, long c);
__asm__(".globl sys3_missed\n"
	"sys3_missed:\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	mov %rdx, %rsi\n"
	"	mov %rcx, %rdx\n"
	"	test %rax, %rax\n"
	"	jz 2f\n"
	"	jmp 1f\n"
	"1:	syscall\n"
	"2:	ret\n");

static unsigned long len(const char *s)
{
	unsigned long n = 0;
	while (s[n])
		n++;
	return n;
}

static void put(const char *s) { sys3(__NR_write, 1, (long)s, (long)len(s)); }

static void put_num(long v)
{
	char b[24];
	int i = 23;
	int neg = v < 0;
	unsigned long u = neg ? (unsigned long)-v : (unsigned long)v;
	b[i] = 0;
	do {
		b[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (neg)
		b[--i] = '-';
	put(b + i);
}

static int streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static void fds(void)
{
	static const unsigned long one = 1;
	long eperm = 0, ebadf = 0, other = 0;
	put("wrote:");
	for (long fd = 0; fd < 4096; fd++) {
		if (fd == 1)
			continue;
		long r = sys3_missed(__NR_write, fd, (long)&one, 8);
		if (r == 8) {
			put(" ");
			put_num(fd);
		} else if (r == -1) {
			eperm++;
		} else if (r == -9) {
			ebadf++;
		} else {
			other++;
		}
	}
	put("\neperm ");
	put_num(eperm);
	put(" ebadf ");
	put_num(ebadf);
	put(" other ");
	put_num(other);
	long refused = 0;
	for (int i = 0; i < 200; i++)
		refused += sys3(__NR_write, 2, (long)"x", 1) == -1;
	put("\nthen ");
	put_num(refused);
	put(" of 200 refused\n");
}

__attribute__((used)) static void tiny_main(long *sp)
{
	long argc = sp[0];
	const char *what = argc > 1 ? (const char *)sp[2] : "";
	int code = 0;
	if (streq(what, "hello")) {
		put("hello\n");
		code = 3;
	} else if (streq(what, "refused") || streq(what, "missed")) {
		put("before\n");
		long r = streq(what, "missed") ? sys3_missed(__NR_getppid, 0, 0, 0) : sys3(__NR_getppid, 0, 0, 0);
		put("after ");
		put_num(r);
		put("\n");
		code = 4;
	} else if (streq(what, "fds")) {
		fds();
	} else {
		code = 2;
	}
	for (;;)
		sys3(__NR_exit_group, code, 0, 0);
}

__asm__(".globl _start\n"
	"_start:\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call tiny_main\n"
	"	hlt\n");
