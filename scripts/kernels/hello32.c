/* Built with gcc -m32 -static: the kernel-matrix guests run it to show
 * they execute 32-bit programs (IA32_EMULATION). */
#include <stdio.h>

int main(void)
{
	printf("i386 %s\n", sizeof(void *) == 4 ? "ok" : "wrong");
	return 0;
}
