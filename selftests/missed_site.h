/* A system call the patcher cannot patch, for the selftests and the bench.
 * Code mapped executable after sandpit_start is patched before it runs;
 * this layout is what that patching has to leave alone. */
#ifndef SANDPIT_MISSED_SITE_H
#define SANDPIT_MISSED_SITE_H
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

/* `mov $nr,%eax; syscall; ret` (with the caller's rdi, rsi, rdx) mapped
 * after start, laid out so that the patcher cannot patch it: the syscall and
 * the byte after it are both branch targets, so no 5-byte jump fits without
 * splitting one.  What the missed-syscall net (DESIGN §3) is for.  NULL if
 * the mapping failed. */
typedef long (*missed_fn)(long, long, long);
static inline missed_fn missed_code(long nr)
{
	uint8_t code[] = {
		0xb8, 0, 0, 0, 0, /* 0: mov $nr,%eax */
		0xeb, 0x00,       /* 5: jmp 7 */
		0x0f, 0x05,       /* 7: syscall */
		0xc3,             /* 9: ret */
		0xeb, 0xfd,       /* 10: jmp 9, never run */
	};
	uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return NULL;
	memcpy(code + 1, &nr, 4);
	memcpy(page, code, sizeof(code));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
		return NULL;
	return (missed_fn)page;
}

#endif
