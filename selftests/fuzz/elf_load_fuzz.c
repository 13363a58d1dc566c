/* libFuzzer target for the ELF reader as the loader of `sandpit run` uses
 * it (elf_program_read, user/patch/elf_read.c): any bytes as a program file are
 * either refused with one line, or accepted with a layout the loader can
 * map inside one reservation below the top of user space.
 *     make fuzz            (clang, -fsanitize=fuzzer,address,undefined)
 * make check runs it for a few seconds from seeds made at build time. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "user/patch/elf_read.h"
#include "selftests/elf_craft.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct elf_program prog;
	struct mem m = { data, size };
	char err[256] = "";
	int r = elf_program_read(mem_pread, &m, size, &prog, err, sizeof err);

	if (r < 0)
		abort(); /* reading memory cannot fail */
	if (r) {
		if ((r != ELF_BAD && r != ELF_NOT_ELF) || !err[0] || strchr(err, '\n'))
			abort();
		return 0;
	}
	/* what the loader relies on */
	if (prog.lo >= prog.hi || prog.hi > ELF_USER_TOP || prog.lo % ELF_PAGE || prog.hi % ELF_PAGE ||
	    !prog.phnum || prog.phnum > ELF_MAX_PHNUM || prog.eh.e_entry < prog.lo ||
	    prog.eh.e_entry >= prog.hi)
		abort();
	if (prog.interp[0] && !memchr(prog.interp, 0, sizeof prog.interp))
		abort();
	/* the loader's arithmetic, at a bias that puts the image at the top:
	 * every segment inside the reservation [lo, hi) + bias */
	uint64_t bias = ELF_USER_TOP - prog.hi, prev = 0;
	for (unsigned i = 0; i < prog.phnum; i++) {
		const Elf64_Phdr *ph = &prog.ph[i];

		if (ph->p_type != PT_LOAD || !ph->p_memsz)
			continue;
		uint64_t a = bias + ph->p_vaddr, end = a + ph->p_memsz;
		uint64_t lo = a & ~(ELF_PAGE - 1), hi = (end + ELF_PAGE - 1) & ~(ELF_PAGE - 1);

		if (lo < bias + prog.lo || hi > bias + prog.hi || end < a || hi < end ||
		    ph->p_filesz > ph->p_memsz || ph->p_offset > size ||
		    ph->p_filesz > size - ph->p_offset || ph->p_vaddr < prev)
			abort();
		prev = ph->p_vaddr + ph->p_memsz;
	}
	return 0;
}
