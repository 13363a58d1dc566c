/* The one reader of untrusted ELF data (see elf_read.h).  Nothing here
 * dereferences an address taken from the file: every read goes through
 * elf_view_get, which checks it against the bytes really read or mapped. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "user/patch/elf_read.h"

/* ---- views ---- */

void elf_view_init(struct elf_view *v, const void *p, size_t len)
{
	v->n = 0;
	elf_view_add(v, (uintptr_t)p, (uintptr_t)p + len);
}

bool elf_view_add(struct elf_view *v, uintptr_t lo, uintptr_t hi)
{
	if (lo >= hi)
		return true;
	if (v->n && lo == v->hi[v->n - 1]) {
		v->hi[v->n - 1] = hi;
		return true;
	}
	if (v->n == ELF_VIEW_MAX)
		return false;
	v->lo[v->n] = lo;
	v->hi[v->n++] = hi;
	return true;
}

bool elf_view_has(const struct elf_view *v, uintptr_t a, uint64_t n)
{
	for (unsigned i = 0; i < v->n; i++)
		if (a >= v->lo[i] && a <= v->hi[i] && n <= v->hi[i] - a)
			return true;
	return false;
}

bool elf_view_get(const struct elf_view *v, uintptr_t a, void *out, size_t n)
{
	if (!elf_view_has(v, a, n))
		return false;
	memcpy(out, (const void *)a, n);
	return true;
}

/* ---- a program's headers ---- */

static uint64_t page_down(uint64_t a) { return a & ~(ELF_PAGE - 1); }

static int bad(char *err, size_t errlen, int kind, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int bad(char *err, size_t errlen, int kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return kind;
}

/* [off, off + n) inside a file of size bytes, without wrapping */
static bool in_file(uint64_t off, uint64_t n, uint64_t size)
{
	return off <= size && n <= size - off;
}

static long read_all(elf_pread_fn *rd, void *ctx, void *buf, size_t n, uint64_t off)
{
	long r = rd(ctx, buf, n, off);

	return r < 0 ? r : (size_t)r == n;
}

static int check_load(const Elf64_Phdr *ph, unsigned i, uint64_t size, uint64_t *prev_end,
		      char *err, size_t errlen)
{
	if (ph->p_filesz > ph->p_memsz)
		return bad(err, errlen, ELF_BAD,
			   "program header %u: file size %#lx larger than memory size %#lx", i,
			   (unsigned long)ph->p_filesz, (unsigned long)ph->p_memsz);
	if (!in_file(ph->p_offset, ph->p_filesz, size))
		return bad(err, errlen, ELF_BAD, "program header %u extends past the file", i);
	if ((ph->p_vaddr - ph->p_offset) % ELF_PAGE)
		return bad(err, errlen, ELF_BAD,
			   "program header %u: address and file offset differ within a page", i);
	/* ELF_USER_TOP is page-aligned: an end below it rounds up without
	 * wrapping, and never into the last page of the address space */
	if (ph->p_vaddr > ELF_USER_TOP || ph->p_memsz > ELF_USER_TOP - ph->p_vaddr)
		return bad(err, errlen, ELF_BAD, "program header %u ends past the top of user space", i);
	if (ph->p_vaddr < *prev_end)
		return bad(err, errlen, ELF_BAD,
			   "program header %u overlaps or comes before the segment before it", i);
	*prev_end = ph->p_vaddr + ph->p_memsz;
	return 0;
}

int elf_program_read(elf_pread_fn *rd, void *ctx, uint64_t size, struct elf_program *out,
		     char *err, size_t errlen)
{
	Elf64_Ehdr *eh = &out->eh;
	uint64_t prev_end = 0;
	int interp = -1, phdr = -1;
	long r;

	memset(out, 0, offsetof(struct elf_program, interp) + 1);
	out->lo = UINT64_MAX;
	if (size == 0)
		return bad(err, errlen, ELF_NOT_ELF, "not an ELF file (it is empty)");
	r = rd(ctx, eh, sizeof *eh, 0);
	if (r < 0)
		return (int)r;
	if (r < SELFMAG || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return bad(err, errlen, ELF_NOT_ELF, "not an ELF file");
	if ((size_t)r < sizeof *eh || size < sizeof *eh)
		return bad(err, errlen, ELF_BAD, "the ELF header is cut short (%lu bytes)",
			   (unsigned long)size);
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != EM_X86_64)
		return bad(err, errlen, ELF_BAD, "not an x86-64 program");
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return bad(err, errlen, ELF_BAD, "not an executable (ELF type %u)", eh->e_type);
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return bad(err, errlen, ELF_BAD, "program header size %u, not %zu", eh->e_phentsize,
			   sizeof(Elf64_Phdr));
	if (!eh->e_phnum || eh->e_phnum > ELF_MAX_PHNUM)
		return bad(err, errlen, ELF_BAD, "%u program headers (1 to %d)", eh->e_phnum,
			   ELF_MAX_PHNUM);
	out->phnum = eh->e_phnum;
	if (!in_file(eh->e_phoff, (uint64_t)out->phnum * sizeof(Elf64_Phdr), size))
		return bad(err, errlen, ELF_BAD, "the program headers extend past the file");
	r = read_all(rd, ctx, out->ph, out->phnum * sizeof(Elf64_Phdr), eh->e_phoff);
	if (r <= 0)
		return r < 0 ? (int)r : bad(err, errlen, ELF_BAD, "the program headers are cut short");

	for (unsigned i = 0; i < out->phnum; i++) {
		const Elf64_Phdr *ph = &out->ph[i];
		int e;

		switch (ph->p_type) {
		case PT_LOAD:
			if ((e = check_load(ph, i, size, &prev_end, err, errlen)))
				return e;
			if (!ph->p_memsz)
				break;
			if (page_down(ph->p_vaddr) < out->lo)
				out->lo = page_down(ph->p_vaddr);
			/* rounds up below ELF_USER_TOP (check_load) */
			if (ph->p_vaddr + ph->p_memsz + ELF_PAGE - 1 > out->hi)
				out->hi = page_down(ph->p_vaddr + ph->p_memsz + ELF_PAGE - 1);
			break;
		case PT_INTERP:
			if (interp >= 0)
				return bad(err, errlen, ELF_BAD, "program header %u: a second PT_INTERP", i);
			interp = (int)i;
			if (!in_file(ph->p_offset, ph->p_filesz, size))
				return bad(err, errlen, ELF_BAD, "program header %u extends past the file", i);
			if (ph->p_filesz < 2 || ph->p_filesz > ELF_MAX_INTERP)
				return bad(err, errlen, ELF_BAD,
					   "program header %u: an interpreter name of %lu bytes (2 to %d)", i,
					   (unsigned long)ph->p_filesz, ELF_MAX_INTERP);
			r = read_all(rd, ctx, out->interp, ph->p_filesz, ph->p_offset);
			if (r <= 0)
				return r < 0 ? (int)r : bad(err, errlen, ELF_BAD, "program header %u is cut short", i);
			if (out->interp[ph->p_filesz - 1] || !out->interp[0]) {
				out->interp[0] = 0;
				return bad(err, errlen, ELF_BAD,
					   "program header %u: the interpreter name is not a string", i);
			}
			break;
		case PT_PHDR:
			phdr = (int)i;
			break;
		}
	}
	if (out->lo >= out->hi)
		return bad(err, errlen, ELF_BAD, "no loadable segment");
	if (eh->e_entry < out->lo || eh->e_entry >= out->hi)
		return bad(err, errlen, ELF_BAD, "entry point %#lx outside the program",
			   (unsigned long)eh->e_entry);
	/* where the program finds its headers (AT_PHDR): PT_PHDR, else the
	 * segment that holds them in the file */
	uint64_t phsize = (uint64_t)out->phnum * sizeof(Elf64_Phdr);
	if (phdr >= 0) {
		out->phdr = out->ph[phdr].p_vaddr;
		if (out->phdr < out->lo || out->phdr > out->hi || phsize > out->hi - out->phdr)
			return bad(err, errlen, ELF_BAD, "program header %d: PT_PHDR outside the program",
				   phdr);
	} else {
		for (unsigned i = 0; i < out->phnum && !out->phdr; i++) {
			const Elf64_Phdr *ph = &out->ph[i];

			if (ph->p_type == PT_LOAD && eh->e_phoff >= ph->p_offset &&
			    phsize <= ph->p_filesz && eh->e_phoff - ph->p_offset <= ph->p_filesz - phsize)
				out->phdr = ph->p_vaddr + (eh->e_phoff - ph->p_offset);
		}
	}
	return 0;
}

/* ---- a mapped object ---- */

bool elf_mapped_phdrs(const struct elf_view *v, uintptr_t a, uintptr_t *phdr, unsigned *phnum)
{
	Elf64_Ehdr eh;

	if (!elf_view_get(v, a, &eh, sizeof eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum || eh.e_phnum > ELF_MAX_PHNUM ||
	    eh.e_phoff > UINTPTR_MAX - a || (a + eh.e_phoff) % 8 ||
	    !elf_view_has(v, a + eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr)))
		return false;
	*phdr = a + eh.e_phoff;
	*phnum = eh.e_phnum;
	return true;
}

enum {
	PE_ABSPTR = 0x00, PE_ULEB = 0x01, PE_U2 = 0x02, PE_U4 = 0x03, PE_U8 = 0x04,
	PE_SLEB = 0x09, PE_S2 = 0x0a, PE_S4 = 0x0b, PE_S8 = 0x0c,
	PE_PCREL = 0x10, PE_DATAREL = 0x30, PE_OMIT = 0xff,
	PE_TABLE = PE_DATAREL | PE_S4,   /* what GNU ld writes */
};

#define LEB_MAX 10 /* bytes of a 64-bit LEB128 */

static bool leb(const struct elf_view *v, uintptr_t *a, uint64_t *out, bool sign)
{
	unsigned shift = 0;
	uint8_t b;

	*out = 0;
	do {
		if (shift >= 7 * LEB_MAX || !elf_view_get(v, (*a)++, &b, 1))
			return false;
		if (shift < 64)
			*out |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		*out |= ~0ULL << shift;
	return true;
}

/* One DW_EH_PE-encoded value at *a; false if unreadable or an encoding we
 * do not read. */
static bool read_enc(const struct elf_view *v, uintptr_t *a, unsigned enc, uintptr_t data,
		     uint64_t *out)
{
	uintptr_t at = *a;
	size_t n;
	union { uint16_t u2; uint32_t u4; int16_t s2; int32_t s4; uint64_t u8; } x;

	switch (enc & 0x0f) {
	case PE_ABSPTR: case PE_U8: case PE_S8: n = 8; break;
	case PE_U4: case PE_S4: n = 4; break;
	case PE_U2: case PE_S2: n = 2; break;
	case PE_ULEB: case PE_SLEB:
		if (!leb(v, a, out, (enc & 0x0f) == PE_SLEB))
			return false;
		n = 0;
		break;
	default: return false;
	}
	if (n) {
		if (!elf_view_get(v, at, &x, n))
			return false;
		*a += n;
		switch (enc & 0x0f) {
		case PE_U4: *out = x.u4; break;
		case PE_S4: *out = (uint64_t)(int64_t)x.s4; break;
		case PE_U2: *out = x.u2; break;
		case PE_S2: *out = (uint64_t)(int64_t)x.s2; break;
		default: *out = x.u8;
		}
	}
	switch (enc & 0xf0) {
	case 0: break;
	case PE_PCREL: *out += at; break;
	case PE_DATAREL: *out += data; break;
	default: return false;
	}
	return true;
}

int elf_ehtab_init(struct elf_ehtab *t, const struct elf_view *v, uintptr_t hdr)
{
	uint8_t h[4];
	uintptr_t p = hdr + 4;
	uint64_t x;

	memset(t, 0, sizeof *t);
	if (!elf_view_get(v, hdr, h, 4))
		return -EFAULT;
	if (h[0] != 1 || h[3] != PE_TABLE || h[1] == PE_OMIT || h[2] == PE_OMIT)
		return -ENOENT;
	if (!read_enc(v, &p, h[1], hdr, &x) || !read_enc(v, &p, h[2], hdr, &x))
		return -EFAULT;
	/* the count is the file's word: the table must really be there */
	if (x > UINT64_MAX / 8 || !elf_view_has(v, p, x * 8))
		return -EFAULT;
	t->v = v;
	t->hdr = hdr;
	t->tab = p;
	t->n = x;
	return 0;
}

static int32_t tab_at(const struct elf_ehtab *t, size_t i)
{
	int32_t x;

	memcpy(&x, (const void *)(t->tab + 4 * i), 4); /* inside the view (elf_ehtab_init) */
	return x;
}

/* The FDE pointer encoding from a CIE's augmentation ('R'), -1 if
 * unreadable.  v holds exactly the CIE. */
static int cie_fde_enc(const struct elf_view *v, uintptr_t cie, bool *signal)
{
	uintptr_t p = cie + 8;   /* length, CIE id */
	uint8_t version, c;
	char aug[8];
	size_t n = 0;
	uint64_t x;

	*signal = false;
	if (!elf_view_get(v, p++, &version, 1))
		return -1;
	do {
		if (n == sizeof aug || !elf_view_get(v, p++, &aug[n], 1))
			return -1;
	} while (aug[n++]);
	if (aug[0] != 'z')
		return aug[0] ? -1 : PE_ABSPTR;
	if (!leb(v, &p, &x, false) || !leb(v, &p, &x, true))  /* code, data alignment */
		return -1;
	if (version == 1 ? !elf_view_get(v, p++, &c, 1) : !leb(v, &p, &x, false)) /* return reg */
		return -1;
	if (!leb(v, &p, &x, false))                            /* augmentation length */
		return -1;
	*signal = memchr(aug, 'S', n) != NULL;
	for (const char *a = aug + 1; *a; a++) {
		switch (*a) {
		case 'R':
			return elf_view_get(v, p, &c, 1) ? c : -1;
		case 'P':
			if (!elf_view_get(v, p++, &c, 1) || !read_enc(v, &p, c & 0x0f, 0, &x))
				return -1;
			break;
		case 'L':
			p++;
			break;
		case 'S': case 'B': case 'G':
			break;
		default:
			return -1;
		}
	}
	return PE_ABSPTR;
}

/* A record of .eh_frame at a (length, then length bytes) as a view of its
 * own, so that nothing read for it reaches past it. */
static bool record(const struct elf_view *v, uintptr_t a, struct elf_view *one)
{
	uint32_t len;

	if (!elf_view_get(v, a, &len, 4) || len < 4 || len == 0xffffffff ||
	    !elf_view_has(v, a, 4 + (uint64_t)len))
		return false;
	elf_view_init(one, (const void *)a, 4 + (size_t)len);
	return true;
}

static bool fde_range(struct elf_ehtab *t, size_t i, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t f = t->hdr + (intptr_t)tab_at(t, 2 * i + 1), p, cie;
	struct elf_view fv, cv;
	uint32_t id;
	uint64_t begin, range;

	if (!record(t->v, f, &fv) || !elf_view_get(&fv, f + 4, &id, 4) || id == 0)
		return false;
	cie = f + 4 - id;
	if (cie != t->cie) {
		uint32_t cid;

		t->cie = cie;
		t->cie_enc = record(t->v, cie, &cv) && elf_view_get(&cv, cie + 4, &cid, 4) && !cid
				     ? cie_fde_enc(&cv, cie, &t->cie_signal)
				     : -1;
	}
	if (t->cie_enc < 0)
		return false;
	p = f + 8;
	if (!read_enc(&fv, &p, (unsigned)t->cie_enc, 0, &begin) ||
	    !read_enc(&fv, &p, (unsigned)t->cie_enc & 0x0f, 0, &range) ||
	    begin + t->cie_signal + range < begin)
		return false;
	/* signal-frame FDEs (glibc's and the kernel's sigreturn trampolines)
	 * start one byte early, for unwinders that look up pc - 1 */
	*lo = begin + t->cie_signal;
	*hi = begin + range;
	return *lo <= *hi;
}

int elf_fde_lookup(struct elf_ehtab *t, uintptr_t pc, uintptr_t *lo, uintptr_t *hi)
{
	size_t a = 0, b = t->n;
	uintptr_t flo = 0, fhi;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (t->hdr + (intptr_t)tab_at(t, 2 * mid) <= pc)
			a = mid + 1;
		else
			b = mid;
	}
	*hi = a < t->n ? t->hdr + (intptr_t)tab_at(t, 2 * a) : UINTPTR_MAX;
	*lo = 0;
	if (a == 0)
		return 0;
	if (!fde_range(t, a - 1, &flo, &fhi))
		fhi = t->hdr + (intptr_t)tab_at(t, 2 * (a - 1));
	if (pc < fhi) {
		*lo = flo;
		*hi = fhi;
		return 1;
	}
	*lo = fhi;
	return 0;
}

/* ---- the dynamic symbol table ---- */

static bool get32(const struct elf_view *v, uintptr_t a, uint32_t *x)
{
	return elf_view_get(v, a, x, 4);
}

/* Symbols a DT_GNU_HASH table covers: one past the last chain's end. */
static bool gnu_hash_count(const struct elf_view *v, uintptr_t h, size_t *n)
{
	uint32_t hd[4], max = 0, x;
	uint64_t bloom;
	uintptr_t bucket, chain;

	if (!elf_view_get(v, h, hd, sizeof hd))
		return false;
	bloom = (uint64_t)hd[2] * sizeof(Elf64_Addr);
	bucket = h + 16 + bloom;
	if (!elf_view_has(v, h + 16, bloom + 4 * (uint64_t)hd[0]))
		return false;
	for (uint32_t i = 0; i < hd[0]; i++)
		if (get32(v, bucket + 4 * i, &x) && x > max)
			max = x;
	*n = hd[1];
	if (max < hd[1])
		return true;
	chain = bucket + 4 * (uint64_t)hd[0];
	for (;; max++) {
		if (max == UINT32_MAX || !get32(v, chain + 4 * (uint64_t)(max - hd[1]), &x))
			return false;
		if (x & 1)
			break;
	}
	*n = (size_t)max + 1;
	return true;
}

int elf_symtab_init(struct elf_symtab *s, const struct elf_view *v, uintptr_t dyn, uint64_t n_dyn,
		    uintptr_t bias)
{
	uintptr_t hash = 0, gnu = 0, sym = 0, str = 0;
	uint64_t strsz = 0;
	Elf64_Dyn d;
	size_t n = 0;

	memset(s, 0, sizeof *s);
	for (uint64_t i = 0; i < n_dyn / sizeof d; i++) {
		if (!elf_view_get(v, dyn + i * sizeof d, &d, sizeof d))
			return -EFAULT;
		if (d.d_tag == DT_NULL)
			break;
		uintptr_t a = d.d_un.d_ptr < bias ? d.d_un.d_ptr + bias : d.d_un.d_ptr;

		if (d.d_tag == DT_SYMTAB)
			sym = a;
		else if (d.d_tag == DT_HASH)
			hash = a;
		else if (d.d_tag == DT_GNU_HASH)
			gnu = a;
		else if (d.d_tag == DT_STRTAB)
			str = a;
		else if (d.d_tag == DT_STRSZ)
			strsz = d.d_un.d_val;
	}
	if (!sym || (!hash && !gnu))
		return -ENOENT;
	if (hash) {
		uint32_t nchain;

		if (!get32(v, hash + 4, &nchain))
			return -EFAULT;
		n = nchain;
	} else if (!gnu_hash_count(v, gnu, &n)) {
		return -EFAULT;
	}
	if (sym % 8 || !elf_view_has(v, sym, (uint64_t)n * sizeof(Elf64_Sym)))
		return -EFAULT;
	s->v = v;
	s->sym = sym;
	s->n = n;
	s->bias = bias;
	if (str && strsz && elf_view_has(v, str, strsz)) {
		s->str = str;
		s->strsz = strsz;
	}
	return 0;
}

static const Elf64_Sym *sym_covering(const struct elf_symtab *s, uintptr_t pc)
{
	const Elf64_Sym *sym = (const Elf64_Sym *)s->sym; /* inside the view (elf_symtab_init) */

	for (size_t i = 0; i < s->n; i++) {
		const Elf64_Sym *y = &sym[i];
		unsigned type = ELF64_ST_TYPE(y->st_info);
		uintptr_t a = s->bias + y->st_value;

		if ((type == STT_FUNC || type == STT_GNU_IFUNC) && y->st_shndx != SHN_UNDEF &&
		    pc >= a && pc - a < y->st_size)
			return y;
	}
	return NULL;
}

bool elf_sym_name(const struct elf_symtab *s, uintptr_t pc, uintptr_t *lo, const char **name)
{
	const Elf64_Sym *y = sym_covering(s, pc);

	if (!y || !s->str || y->st_name >= s->strsz)
		return false;
	const char *n = (const char *)(s->str + y->st_name);
	for (uint64_t i = 0; i < s->strsz - y->st_name; i++)
		if (!n[i]) {
			*lo = s->bias + y->st_value;
			*name = n;
			return i > 0;
		}
	return false;
}

bool elf_sym_find(const struct elf_symtab *s, uintptr_t pc, uintptr_t *lo, uintptr_t *hi)
{
	const Elf64_Sym *y = sym_covering(s, pc);

	if (!y)
		return false;
	*lo = s->bias + y->st_value;
	*hi = *lo + y->st_size;
	return *lo < *hi;
}

/* ---- notes ---- */

bool elf_note_has(const struct elf_view *v, uintptr_t a, uint64_t n, const char *name,
		  uint32_t type)
{
	size_t len = strlen(name) + 1;
	uint32_t h[3];  /* namesz, descsz, type */
	char own[16];

	if (!elf_view_has(v, a, n))
		return false;
	/* each record: the header, then name and description padded to 4 */
	for (uint64_t off = 0; n - off >= sizeof h;) {
		uint64_t rec;

		elf_view_get(v, a + off, h, sizeof h);
		rec = sizeof h + (((uint64_t)h[0] + 3) & ~3ULL) + (((uint64_t)h[1] + 3) & ~3ULL);
		if (rec > n - off)
			return false;
		/* the owner, NUL-padded (Go writes "Go\0\0", namesz 4) */
		memset(own, 0, sizeof own);
		if (h[2] == type && h[0] >= len && h[0] <= sizeof own &&
		    elf_view_get(v, a + off + sizeof h, own, h[0]) && !memcmp(own, name, len) &&
		    !own[h[0] - 1])
			return true;
		off += rec;
	}
	return false;
}

/* ---- Go's function table (.gopclntab) ---- */

/* The first 8 bytes of a Go 1.18+ pcHeader on x86-64: magic 0xfffffff0
 * (1.18, 1.19) or 0xfffffff1 (1.20 on), two zero pad bytes, the minimum
 * instruction size (1) and the pointer size (8).  Little-endian. */
#define GO_PCHDR_118 0x08010000fffffff0ULL
#define GO_PCHDR_MASK (~1ULL)

/* A pcHeader at a: the function table it describes, if it is well formed
 * and its functions lie in [text_lo, text_hi). */
static bool go_header(struct elf_gotab *g, const struct elf_view *v, uintptr_t a,
		      uintptr_t text_lo, uintptr_t text_hi, uintptr_t bias)
{
	/* magic+pads+sizes, nfunc, nfiles, textStart, 5 offsets (pclnOffset last) */
	uint64_t h[9];
	uintptr_t text, tab;
	uint32_t prev = 0, e = 0;

	if (!elf_view_get(v, a, h, sizeof h) || (h[0] & GO_PCHDR_MASK) != GO_PCHDR_118)
		return false;
	if (h[1] == 0 || h[1] > ELF_GO_MAX_FUNCS)
		return false;
	/* textStart is the run-time address once relocated; before (a PIE that
	 * ld.so has not relocated yet) it is the link address */
	text = h[3];
	if (text < text_lo || text >= text_hi)
		text = h[3] + bias;
	if (text < text_lo || text >= text_hi || h[8] > ELF_GO_MAX_OFFSET || a + h[8] < a)
		return false;
	tab = a + h[8];
	/* nfunc (entry offset, func offset) pairs and the end's entry offset */
	if (tab % 4 || !elf_view_has(v, tab, (h[1] + 1) * 8))
		return false;
	for (uint64_t i = 0; i <= h[1]; i++) {
		if (!get32(v, tab + 8 * i, &e) || e < prev || (i == h[1] && e == prev) ||
		    e > text_hi - text)
			return false;
		prev = e;
	}
	g->v = v;
	g->tab = tab;
	g->n = h[1];
	g->text = text;
	return true;
}

int elf_gotab_find(struct elf_gotab *g, const struct elf_view *v, uintptr_t text_lo,
		   uintptr_t text_hi, uintptr_t bias)
{
	memset(g, 0, sizeof *g);
	if (text_lo >= text_hi)
		return -ENOENT;
	/* the header is pointer-aligned, in a readable mapping of the object */
	for (unsigned i = 0; i < v->n; i++)
		for (uintptr_t a = (v->lo[i] + 7) & ~7UL; a < v->hi[i] && v->hi[i] - a >= 8; a += 8) {
			uint64_t w;

			memcpy(&w, (const void *)a, 8); /* inside piece i */
			if ((w & GO_PCHDR_MASK) == GO_PCHDR_118 &&
			    go_header(g, v, a, text_lo, text_hi, bias))
				return 0;
		}
	return -ENOENT;
}

int elf_gofunc_lookup(const struct elf_gotab *g, uintptr_t pc, uintptr_t *lo, uintptr_t *hi)
{
	size_t a = 0, b = g->n;
	uint32_t e = 0, f = 0;

	/* the table is inside the view (elf_gotab_find): the reads succeed */
	if (!g->n || pc < g->text)
		return 0;
	/* the last function whose entry is at or before pc (sorted: find) */
	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (!get32(g->v, g->tab + 8 * mid, &e))
			return 0;
		if (e <= pc - g->text)
			a = mid + 1;
		else
			b = mid;
	}
	if (a == 0)
		return 0;
	if (!get32(g->v, g->tab + 8 * (a - 1), &e) || !get32(g->v, g->tab + 8 * a, &f) ||
	    pc - g->text >= f || e == f)
		return 0;
	*lo = g->text + e;
	*hi = g->text + f;
	return 1;
}
