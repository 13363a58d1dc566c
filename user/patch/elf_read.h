/* The one reader of untrusted ELF data (DESIGN §6, invariant 9).  The
 * loader of `sandpit run` reads a program's headers with it before the
 * sandbox is on; the patcher reads a mapped object's unwind and symbol
 * tables with it, at start-up and inside the sandbox.  Every offset, size
 * and count taken from the file is checked against the bytes really read
 * or mapped, with arithmetic that cannot wrap.
 *
 * No allocation, no locale, no system call: the patcher's readers run
 * inside the sandbox too.  Only elf_program_read formats a message (it
 * runs in the loader, outside the sandbox). */
#ifndef SANDPIT_USER_ELF_READ_H
#define SANDPIT_USER_ELF_READ_H
#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- views: the bytes that may be read ---- */

#define ELF_VIEW_MAX 16

/* Readable pieces [lo[i], hi[i]), by address: a buffer, or a mapped
 * object's readable mappings.  A read must lie inside one piece. */
struct elf_view {
	uintptr_t lo[ELF_VIEW_MAX], hi[ELF_VIEW_MAX];
	unsigned n;
};

void elf_view_init(struct elf_view *v, const void *p, size_t len);
/* Adds [lo, hi), merged with a piece it touches; false if full. */
bool elf_view_add(struct elf_view *v, uintptr_t lo, uintptr_t hi);
/* [a, a + n) lies inside one piece (n may be 0). */
bool elf_view_has(const struct elf_view *v, uintptr_t a, uint64_t n);
/* n bytes at a into out, if elf_view_has. */
bool elf_view_get(const struct elf_view *v, uintptr_t a, void *out, size_t n);

/* ---- a program's headers, as the loader reads them ---- */

#define ELF_MAX_PHNUM 64       /* more than any real program has */
#define ELF_MAX_INTERP 4096    /* PT_INTERP, with its NUL */
#define ELF_PAGE 4096UL
/* the highest address a segment may end at: the top of x86-64 user space
 * less the guard page the kernel keeps */
#define ELF_USER_TOP 0x7ffffffff000UL

/* Reads count bytes at off into buf: the count read (short at the end of
 * the file), or -errno. */
typedef long elf_pread_fn(void *ctx, void *buf, size_t count, uint64_t off);

struct elf_program {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[ELF_MAX_PHNUM];
	unsigned phnum;
	uint64_t lo, hi;          /* the PT_LOAD segments, page-rounded link addresses */
	uint64_t phdr;            /* link address of the program headers, 0 if not loaded */
	char interp[ELF_MAX_INTERP]; /* "" if none */
};

enum { ELF_BAD = 1, ELF_NOT_ELF = 2 };

/* Reads and checks a program file of file_size bytes: its header, program
 * headers, PT_LOAD segments (inside the file, sorted, not overlapping, each
 * page-rounded end below ELF_USER_TOP) and PT_INTERP.  0; ELF_NOT_ELF (no
 * ELF magic) or ELF_BAD with one line in err ("program header 3 extends
 * past the file"); or -errno from rd. */
int elf_program_read(elf_pread_fn *rd, void *ctx, uint64_t file_size, struct elf_program *out,
		     char *err, size_t errlen);

/* ---- a mapped object, as the patcher reads it ---- */

/* The ELF header at view address a and its program headers (which must lie
 * inside the view): the address of the first, and their number.  Checks
 * the identification, type and header sizes only. */
bool elf_mapped_phdrs(const struct elf_view *v, uintptr_t a, uintptr_t *phdr, unsigned *phnum);

/* .eh_frame_hdr's sorted table of (function start, FDE) pairs. */
struct elf_ehtab {
	const struct elf_view *v;
	uintptr_t hdr;
	uintptr_t tab;            /* n pairs of int32, hdr-relative */
	size_t n;
	uintptr_t cie;            /* the last CIE read: its FDE pointer encoding, */
	int cie_enc;
	bool cie_signal;          /* and whether it describes signal frames */
};

/* 0, or why the table cannot be used (-ENOENT: an encoding we do not
 * read; -EFAULT: it does not fit in the view). */
int elf_ehtab_init(struct elf_ehtab *t, const struct elf_view *v, uintptr_t hdr);
/* 1: [lo, hi) is the FDE covering pc.  0: pc is in the gap between FDEs
 * [lo, hi), lo == 0 if none precedes it. */
int elf_fde_lookup(struct elf_ehtab *t, uintptr_t pc, uintptr_t *lo, uintptr_t *hi);

/* The dynamic symbol table, found through .dynamic and its hash table. */
struct elf_symtab {
	const struct elf_view *v;
	uintptr_t sym;            /* n Elf64_Sym, all inside the view */
	size_t n;
	uintptr_t bias;
	uintptr_t str;            /* its string table, all inside the view; 0: none */
	uint64_t strsz;
};

/* From the n_dyn bytes of .dynamic at dyn; an address below bias is taken
 * as a link address (the vDSO's .dynamic and one ld.so has not relocated
 * yet).  0, or -ENOENT (no table) / -EFAULT (it does not fit). */
int elf_symtab_init(struct elf_symtab *s, const struct elf_view *v, uintptr_t dyn, uint64_t n_dyn,
		    uintptr_t bias);
bool elf_sym_find(const struct elf_symtab *s, uintptr_t pc, uintptr_t *lo, uintptr_t *hi);
/* The function symbol covering pc, its start and its name (NUL-terminated
 * inside the string table), for B's explanations of refusals. */
bool elf_sym_name(const struct elf_symtab *s, uintptr_t pc, uintptr_t *lo, const char **name);

/* Is there a note of this type whose owner is name among the n bytes of
 * notes at a (a PT_NOTE segment)? */
bool elf_note_has(const struct elf_view *v, uintptr_t a, uint64_t n, const char *name,
		  uint32_t type);
#define ELF_NOTE_GO "Go"
#define ELF_NT_GO_BUILDID 4   /* the Go linker's build id: a Go program */

/* Go's function table (.gopclntab, Go 1.18 on: pcHeader magic 0xfffffff0
 * or 0xfffffff1), found in the object's readable memory: a Go binary maps
 * it, but has neither .eh_frame nor, when static, dynamic symbols. */
#define ELF_GO_MAX_FUNCS (1u << 24)
#define ELF_GO_MAX_OFFSET (1ULL << 32)
struct elf_gotab {
	const struct elf_view *v;
	uintptr_t tab;            /* n + 1 pairs of uint32 (entry offset, func
				   * offset), entry offsets ascending; inside v */
	size_t n;                 /* functions */
	uintptr_t text;           /* where entry offsets count from */
};

/* The first pcHeader in v whose functions, counted from its textStart (or
 * textStart + bias, not yet relocated), lie in [text_lo, text_hi) with
 * ascending, non-empty entries.  0, or -ENOENT. */
int elf_gotab_find(struct elf_gotab *g, const struct elf_view *v, uintptr_t text_lo,
		   uintptr_t text_hi, uintptr_t bias);
/* 1: [lo, hi) is the Go function holding pc; 0: none does. */
int elf_gofunc_lookup(const struct elf_gotab *g, uintptr_t pc, uintptr_t *lo, uintptr_t *hi);
#endif
