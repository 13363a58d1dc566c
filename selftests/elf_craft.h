/* Crafted ELF files, built byte by byte (no committed binaries): a tiny
 * program that the tests break one field at a time, and a mapped object
 * whose unwind and symbol tables lie.  Shared by elf_test and the fuzzers'
 * seed generator (selftests/fuzz/elf_seeds.c), and the loader's fuzzer. */
#ifndef SANDPIT_SELFTEST_ELF_CRAFT_H
#define SANDPIT_SELFTEST_ELF_CRAFT_H
#include <elf.h>
#include <stdint.h>
#include <string.h>

/* A file held in memory, read by elf_program_read through mem_pread as the
 * loader reads a real file through pread */
struct mem {
	const uint8_t *p;
	size_t len;
};

static inline long mem_pread(void *ctx, void *buf, size_t n, uint64_t off)
{
	const struct mem *m = ctx;

	if (off >= m->len)
		return 0;
	if (n > m->len - off)
		n = m->len - off;
	memcpy(buf, m->p + off, n);
	return (long)n;
}

#define CRAFT_SIZE 0x2000      /* two pages: headers, then code */
#define CRAFT_CODE 0x1000
#define CRAFT_EXEC_BASE 0x400000UL

/* mov $60,%eax; mov $42,%edi; syscall: exit(42), were it ever run */
static const uint8_t craft_exit42[] = { 0xb8, 0x3c, 0, 0, 0, 0xbf, 0x2a, 0, 0, 0, 0x0f, 0x05 };

#define CRAFT_EH(b) ((Elf64_Ehdr *)(b))
#define CRAFT_PH(b, i) ((Elf64_Phdr *)((b) + sizeof(Elf64_Ehdr)) + (i))

/* A valid program of CRAFT_SIZE bytes into b: ET_EXEC at CRAFT_EXEC_BASE or
 * ET_DYN at 0; PT_PHDR, one PT_LOAD (R+X, the whole file), and a PT_INTERP
 * naming interp if interp is not NULL.  Returns the number of headers. */
static inline unsigned craft_program(uint8_t *b, int type, const char *interp)
{
	uint64_t base = type == ET_EXEC ? CRAFT_EXEC_BASE : 0;
	Elf64_Ehdr *eh = CRAFT_EH(b);
	unsigned n = 0;

	memset(b, 0, CRAFT_SIZE);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = (uint16_t)type;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_entry = base + CRAFT_CODE;
	eh->e_phoff = sizeof(Elf64_Ehdr);
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	*CRAFT_PH(b, n++) = (Elf64_Phdr){ .p_type = PT_PHDR, .p_flags = PF_R,
					  .p_offset = sizeof(Elf64_Ehdr),
					  .p_vaddr = base + sizeof(Elf64_Ehdr),
					  .p_filesz = 4 * sizeof(Elf64_Phdr),
					  .p_memsz = 4 * sizeof(Elf64_Phdr), .p_align = 8 };
	if (interp) {
		size_t len = strlen(interp) + 1;

		memcpy(b + 0x800, interp, len);
		*CRAFT_PH(b, n++) = (Elf64_Phdr){ .p_type = PT_INTERP, .p_flags = PF_R,
						  .p_offset = 0x800, .p_vaddr = base + 0x800,
						  .p_filesz = len, .p_memsz = len, .p_align = 1 };
	}
	*CRAFT_PH(b, n++) = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
					  .p_offset = 0, .p_vaddr = base, .p_filesz = CRAFT_SIZE,
					  .p_memsz = CRAFT_SIZE, .p_align = 0x1000 };
	/* nops before the code: a linear decode from the file's start (what
	 * the patcher does without tables) falls into step with it there */
	memset(b + CRAFT_CODE - 0x100, 0x90, 0x100);
	memcpy(b + CRAFT_CODE, craft_exit42, sizeof craft_exit42);
	eh->e_phnum = (uint16_t)n;
	return n;
}

/* Offsets, in a crafted object, of what craft_object writes */
#define CRAFT_EHFRAME_HDR 0x900
#define CRAFT_DYNAMIC 0xa00
#define CRAFT_HASH 0xb00
#define CRAFT_SYMTAB 0xc00

/* An ET_DYN object of CRAFT_SIZE bytes, meant to be mapped R+X at any
 * address: a `syscall` at CRAFT_CODE, an .eh_frame_hdr that claims
 * fde_count FDEs (it has none) and a .dynamic whose DT_HASH claims nchain
 * symbols (it has one). */
static inline void craft_object(uint8_t *b, uint32_t fde_count, uint32_t nchain)
{
	unsigned n = craft_program(b, ET_DYN, NULL);
	uint8_t *h = b + CRAFT_EHFRAME_HDR;
	int32_t eh_frame = 0x40; /* pc-relative: somewhere; never read with no FDE */
	Elf64_Dyn *d = (Elf64_Dyn *)(b + CRAFT_DYNAMIC);
	uint32_t hash[3] = { 1, nchain, 0 };

	/* headers and tables read-only, the code in a segment of its own */
	CRAFT_PH(b, n - 1)->p_flags = PF_R;
	CRAFT_PH(b, n - 1)->p_filesz = CRAFT_PH(b, n - 1)->p_memsz = CRAFT_CODE;
	*CRAFT_PH(b, n) = *CRAFT_PH(b, n - 1);
	CRAFT_PH(b, n)->p_flags = PF_R | PF_X;
	CRAFT_PH(b, n)->p_offset = CRAFT_PH(b, n)->p_vaddr = CRAFT_CODE;
	n++;
	CRAFT_EH(b)->e_phnum = (uint16_t)(n + 2);
	CRAFT_PH(b, 0)->p_filesz = CRAFT_PH(b, 0)->p_memsz = (n + 2) * sizeof(Elf64_Phdr);
	*CRAFT_PH(b, n) = (Elf64_Phdr){ .p_type = PT_GNU_EH_FRAME, .p_flags = PF_R,
					.p_offset = CRAFT_EHFRAME_HDR, .p_vaddr = CRAFT_EHFRAME_HDR,
					.p_filesz = 12, .p_memsz = 12, .p_align = 4 };
	*CRAFT_PH(b, n + 1) = (Elf64_Phdr){ .p_type = PT_DYNAMIC, .p_flags = PF_R,
					    .p_offset = CRAFT_DYNAMIC, .p_vaddr = CRAFT_DYNAMIC,
					    .p_filesz = 4 * sizeof(Elf64_Dyn),
					    .p_memsz = 4 * sizeof(Elf64_Dyn), .p_align = 8 };
	/* version 1, eh_frame_ptr pcrel|sdata4, fde_count udata4, table datarel|sdata4 */
	h[0] = 1, h[1] = 0x1b, h[2] = 0x03, h[3] = 0x3b;
	memcpy(h + 4, &eh_frame, 4);
	memcpy(h + 8, &fde_count, 4);
	d[0] = (Elf64_Dyn){ .d_tag = DT_HASH, .d_un.d_ptr = CRAFT_HASH };
	d[1] = (Elf64_Dyn){ .d_tag = DT_SYMTAB, .d_un.d_ptr = CRAFT_SYMTAB };
	d[2] = (Elf64_Dyn){ .d_tag = DT_NULL };
	memcpy(b + CRAFT_HASH, hash, sizeof hash);
}

#define CRAFT_GOPCLNTAB 0xd00

/* A Go 1.19 .gopclntab at b + off (pcHeader, then the function table at
 * pclnOffset 0x60): n functions at the entry offsets entry[0..n-1] from
 * text_start, the last ending at entry[n]. */
static inline void craft_gopclntab(uint8_t *b, size_t off, uint64_t text_start,
				   const uint32_t *entry, uint32_t n)
{
	uint64_t h[9] = { 0x08010000fffffff0ULL, n, 1, text_start, 0x48, 0x48, 0x48, 0x48, 0x60 };

	memcpy(b + off, h, sizeof h);
	for (uint32_t i = 0; i <= n; i++) {
		uint32_t pair[2] = { entry[i], 0 };

		memcpy(b + off + 0x60 + 8 * i, pair, sizeof pair);
	}
}

#define CRAFT_NOTE 0xe80

/* craft_object's, without usable unwind or symbol tables, its code a byte
 * that does not decode (06: push %es, not in 64-bit mode) and then exit(42)
 * (a linear decode from the segment's start never reaches that syscall),
 * the Go linker's build-id note, and a .gopclntab whose second function
 * starts at exit(42). */
static inline void craft_go_object(uint8_t *b)
{
	static const uint32_t entry[] = { 0, 1, 1 + sizeof craft_exit42 };
	/* namesz, descsz, NT_GO_BUILDID, "Go\0\0", an id */
	static const uint8_t note[] = { 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0,
					'G', 'o', 0, 0, 'i', 'd', '4', '2' };
	unsigned n;

	craft_object(b, 0x7fffffff, 0x7fffffff);
	n = CRAFT_EH(b)->e_phnum++;
	CRAFT_PH(b, 0)->p_filesz = CRAFT_PH(b, 0)->p_memsz = (n + 1) * sizeof(Elf64_Phdr);
	*CRAFT_PH(b, n) = (Elf64_Phdr){ .p_type = PT_NOTE, .p_flags = PF_R,
					.p_offset = CRAFT_NOTE, .p_vaddr = CRAFT_NOTE,
					.p_filesz = sizeof note, .p_memsz = sizeof note,
					.p_align = 4 };
	memcpy(b + CRAFT_NOTE, note, sizeof note);
	b[CRAFT_CODE] = 0x06;
	memcpy(b + CRAFT_CODE + 1, craft_exit42, sizeof craft_exit42);
	craft_gopclntab(b, CRAFT_GOPCLNTAB, CRAFT_CODE, entry, 2);
}

/* The first program header of this type */
static inline Elf64_Phdr *craft_ph_type(uint8_t *b, uint32_t type)
{
	for (unsigned i = 0; i < CRAFT_EH(b)->e_phnum; i++)
		if (CRAFT_PH(b, i)->p_type == type)
			return CRAFT_PH(b, i);
	return NULL;
}
#endif
