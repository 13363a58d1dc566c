/* libFuzzer target for the ELF reader as the patcher uses it (user/
 * elf_read.c): any bytes, taken as an object mapped at their own address,
 * give its program headers, .eh_frame_hdr, CIE/FDE records, .dynamic and
 * hash tables, notes and Go's .gopclntab, without a read outside them (AddressSanitizer watches the
 * buffer's edges).  The bytes are also read as a bare .eh_frame_hdr and a
 * bare .dynamic, so that the fuzzer reaches those without a valid header.
 *     make fuzz            (clang, -fsanitize=fuzzer,address,undefined) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "user/patch/elf_read.h"

static void lookups(struct elf_ehtab *t, uintptr_t lo, size_t size)
{
	uintptr_t a, b;

	/* a few pcs through the object, and the table's own entries */
	for (size_t k = 0; k < 16; k++) {
		uintptr_t pc = lo + size / 16 * k;

		if (elf_fde_lookup(t, pc, &a, &b) == 1 && a > b)
			abort();
	}
	for (size_t i = 0; i < t->n && i < 16; i++) {
		int32_t x;

		memcpy(&x, (const void *)(t->tab + 8 * i), 4);
		if (elf_fde_lookup(t, t->hdr + x, &a, &b) == 1 && a > b)
			abort();
	}
}

static void symbols(struct elf_symtab *s, uintptr_t lo, size_t size)
{
	uintptr_t a, b;

	for (size_t k = 0; k < 16; k++)
		if (elf_sym_find(s, lo + size / 16 * k, &a, &b) && a >= b)
			abort();
}

/* Go's function table, its text taken as the whole buffer and as its
 * second half, its textStart as an address or as an offset into the
 * buffer: every function found lies inside the text and holds pc. */
static void go_functions(const struct elf_view *v, uintptr_t lo, size_t size)
{
	struct elf_gotab g;
	uintptr_t a, b;

	for (size_t half = 0; half < 2; half++) {
		uintptr_t tlo = lo + half * (size / 2), thi = lo + size;

		if (elf_gotab_find(&g, v, tlo, thi, lo))
			continue;
		for (size_t k = 0; k <= 32; k++) {
			uintptr_t pc = tlo + (thi - tlo) / 32 * k;

			if (elf_gofunc_lookup(&g, pc, &a, &b) == 1 &&
			    (a >= b || pc < a || pc >= b || a < tlo || b > thi))
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* exactly size bytes, 8-aligned like a mapping */
	uint8_t *buf = malloc(size ? size : 1);
	uintptr_t lo = (uintptr_t)buf, phdr;
	struct elf_view v;
	struct elf_ehtab t;
	struct elf_symtab s;
	unsigned phnum;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	elf_view_init(&v, buf, size);
	if (elf_mapped_phdrs(&v, lo, &phdr, &phnum)) {
		for (unsigned i = 0; i < phnum; i++) {
			Elf64_Phdr ph;

			memcpy(&ph, (const void *)(phdr + i * sizeof ph), sizeof ph);
			if (ph.p_type == PT_GNU_EH_FRAME && !elf_ehtab_init(&t, &v, lo + ph.p_vaddr))
				lookups(&t, lo, size);
			if (ph.p_type == PT_DYNAMIC &&
			    !elf_symtab_init(&s, &v, lo + ph.p_vaddr, ph.p_memsz, lo))
				symbols(&s, lo, size);
		}
	}
	if (!elf_ehtab_init(&t, &v, lo))
		lookups(&t, lo, size);
	if (!elf_symtab_init(&s, &v, lo, size, lo))
		symbols(&s, lo, size);
	go_functions(&v, lo, size);
	(void)elf_note_has(&v, lo, size, ELF_NOTE_GO, ELF_NT_GO_BUILDID);
	free(buf);
	return 0;
}
