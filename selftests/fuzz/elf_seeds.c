/* Writes the ELF fuzzers' crafted seeds into a directory (run at build
 * time; no binary is committed): the programs elf_test breaks, broken the
 * same ways, the objects whose tables lie, and this machine's vDSO (a
 * small real object with every table the patcher reads).
 *     elf_seeds DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include "selftests/elf_craft.h"

static const char *dir;
static uint8_t b[CRAFT_SIZE];

static void put(const char *name, const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	dir = argv[1];
	craft_program(b, ET_DYN, NULL);
	put("craft-dyn", b, CRAFT_SIZE);
	craft_program(b, ET_EXEC, NULL);
	put("craft-exec", b, CRAFT_SIZE);
	craft_program(b, ET_DYN, "/lib64/ld-linux-x86-64.so.2");
	put("craft-interp", b, CRAFT_SIZE);
	put("craft-short", b, 100);
	CRAFT_PH(b, 1)->p_filesz -= 1;
	put("craft-interp-unterminated", b, CRAFT_SIZE);
	craft_program(b, ET_DYN, NULL);
	CRAFT_EH(b)->e_phnum = 65535;
	put("craft-phnum-65535", b, CRAFT_SIZE);
	craft_program(b, ET_DYN, NULL);
	CRAFT_PH(b, 1)->p_vaddr = 0xfffffffffffff000UL;
	put("craft-last-page", b, CRAFT_SIZE);
	craft_object(b, 0x7fffffff, 0x7fffffff);
	put("craft-object-huge-counts", b, CRAFT_SIZE);
	craft_object(b, 0, 1);
	put("craft-object", b, CRAFT_SIZE);
	put("craft-eh-frame-hdr", b + CRAFT_EHFRAME_HDR, CRAFT_SIZE - CRAFT_EHFRAME_HDR);
	put("craft-dynamic", b + CRAFT_DYNAMIC, CRAFT_SIZE - CRAFT_DYNAMIC);
	craft_go_object(b);
	put("craft-go-object", b, CRAFT_SIZE);

	/* the vDSO: its extent from its program headers */
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	if (eh) {
		const Elf64_Phdr *ph = (const void *)((const char *)eh + eh->e_phoff);
		uint64_t end = 0;

		for (unsigned i = 0; i < eh->e_phnum; i++)
			if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > end)
				end = ph[i].p_offset + ph[i].p_filesz;
		put("real-vdso", eh, end);
	}
	return 0;
}
