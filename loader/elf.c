/* The ELF loader (see elf.h).  Maps PT_LOAD segments the way the kernel
 * does for execve: one reservation for the whole image (at its link address
 * for ET_EXEC, anywhere for ET_DYN), each segment from the file over it, the
 * rest of the last file page and the bss zeroed. */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <sys/auxv.h>

#include "loader/elf.h"

#define PAGE 4096UL
#define MAX_PHNUM 64

static uintptr_t page_down(uintptr_t a) { return a & ~(PAGE - 1); }
static uintptr_t page_up(uintptr_t a) { return (a + PAGE - 1) & ~(PAGE - 1); }

static int bad(int kind, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return kind;
}

static int prot_of(const Elf64_Phdr *ph)
{
	return (ph->p_flags & PF_R ? PROT_READ : 0) | (ph->p_flags & PF_W ? PROT_WRITE : 0) |
	       (ph->p_flags & PF_X ? PROT_EXEC : 0);
}

static int map_segment(int fd, const Elf64_Phdr *ph, uintptr_t bias, char *err, size_t errlen)
{
	uintptr_t start = bias + ph->p_vaddr, lo = page_down(start);
	uintptr_t file_end = start + ph->p_filesz, mem_end = start + ph->p_memsz;
	int prot = prot_of(ph);

	if (ph->p_filesz) {
		/* writable for a moment if the bss starts inside the last page */
		int zero_tail = ph->p_memsz > ph->p_filesz && page_up(file_end) > file_end;
		void *q = mmap((void *)lo, page_up(file_end) - lo, prot | (zero_tail ? PROT_WRITE : 0),
			       MAP_PRIVATE | MAP_FIXED, fd, (off_t)(ph->p_offset - (start - lo)));
		if (q == MAP_FAILED)
			return bad(ELF_ERR_SYS, err, errlen, "cannot map a segment: %s", strerror(errno));
		if (zero_tail) {
			memset((void *)file_end, 0, page_up(file_end) - file_end);
			if (!(prot & PROT_WRITE) && mprotect(q, page_up(file_end) - lo, prot) < 0)
				return bad(ELF_ERR_SYS, err, errlen, "mprotect: %s", strerror(errno));
		}
	}
	uintptr_t anon = ph->p_filesz ? page_up(file_end) : lo;
	if (page_up(mem_end) > anon &&
	    mmap((void *)anon, page_up(mem_end) - anon, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0) == MAP_FAILED)
		return bad(ELF_ERR_SYS, err, errlen, "cannot map the bss: %s", strerror(errno));
	return 0;
}

int elf_map(int fd, const char *name, struct elf_image *out, char *err, size_t errlen)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[MAX_PHNUM];
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	memset(out, 0, sizeof *out);
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return bad(ELF_ERR_NOEXEC, err, errlen, "%s: not an ELF file", name);
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64)
		return bad(ELF_ERR_NOEXEC, err, errlen, "%s: not an x86-64 program", name);
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return bad(ELF_ERR_NOEXEC, err, errlen, "%s: not an executable (ELF type %u)", name,
			   eh.e_type);
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum || eh.e_phnum > MAX_PHNUM ||
	    pread(fd, ph, eh.e_phnum * sizeof *ph, (off_t)eh.e_phoff) !=
		    (ssize_t)(eh.e_phnum * sizeof *ph))
		return bad(ELF_ERR_NOEXEC, err, errlen, "%s: bad program headers", name);

	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_INTERP) {
			if (ph[i].p_filesz < 2 || ph[i].p_filesz > sizeof out->interp ||
			    pread(fd, out->interp, ph[i].p_filesz, (off_t)ph[i].p_offset) !=
				    (ssize_t)ph[i].p_filesz ||
			    out->interp[ph[i].p_filesz - 1])
				return bad(ELF_ERR_NOEXEC, err, errlen, "%s: bad PT_INTERP", name);
		}
		if (ph[i].p_type != PT_LOAD || !ph[i].p_memsz)
			continue;
		if (ph[i].p_filesz > ph[i].p_memsz ||
		    (ph[i].p_vaddr - ph[i].p_offset) % PAGE || ph[i].p_vaddr + ph[i].p_memsz < ph[i].p_vaddr)
			return bad(ELF_ERR_NOEXEC, err, errlen, "%s: bad PT_LOAD segment", name);
		if (page_down(ph[i].p_vaddr) < lo)
			lo = page_down(ph[i].p_vaddr);
		if (page_up(ph[i].p_vaddr + ph[i].p_memsz) > hi)
			hi = page_up(ph[i].p_vaddr + ph[i].p_memsz);
	}
	if (lo >= hi)
		return bad(ELF_ERR_NOEXEC, err, errlen, "%s: nothing to load", name);

	/* one reservation, so that the segments land together and nothing
	 * else sits in the gaps */
	int fixed = eh.e_type == ET_EXEC;
	void *base = mmap(fixed ? (void *)lo : NULL, hi - lo, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | (fixed ? MAP_FIXED_NOREPLACE : 0), -1, 0);
	if (base == MAP_FAILED || (fixed && base != (void *)lo))
		return bad(ELF_ERR_SYS, err, errlen, "%s: cannot reserve %#lx-%#lx: %s", name,
			   (unsigned long)lo, (unsigned long)hi,
			   base == MAP_FAILED ? strerror(errno) : "address in use");
	out->bias = (uintptr_t)base - lo;
	out->lo = (uintptr_t)base;
	out->hi = (uintptr_t)base + (hi - lo);

	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !ph[i].p_memsz)
			continue;
		int r = map_segment(fd, &ph[i], out->bias, err, errlen);
		if (r)
			return r;
		/* the headers, if no PT_PHDR says where they are */
		if (!out->phdr && eh.e_phoff >= ph[i].p_offset &&
		    eh.e_phoff + eh.e_phnum * sizeof *ph <= ph[i].p_offset + ph[i].p_filesz)
			out->phdr = out->bias + ph[i].p_vaddr + (eh.e_phoff - ph[i].p_offset);
	}
	for (unsigned i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_PHDR)
			out->phdr = out->bias + ph[i].p_vaddr;
	out->phnum = eh.e_phnum;
	out->entry = out->bias + eh.e_entry;
	return 0;
}

/* ---- the initial stack ---- */

#define STACK_GAP (256UL << 10) /* below the caller's frames, which memcpy still uses */

static int aux_is_string(uint64_t type)
{
	return type == AT_EXECFN || type == AT_PLATFORM || type == AT_BASE_PLATFORM;
}

void elf_start(uintptr_t entry, char *const argv[], char *const envp[], const uint64_t *auxv)
{
	size_t argc = 0, envc = 0, naux = 0, strs = 0;

	for (; argv[argc]; argc++)
		strs += strlen(argv[argc]) + 1;
	for (; envp[envc]; envc++)
		strs += strlen(envp[envc]) + 1;
	for (; auxv[2 * naux] != AT_NULL; naux++)
		if (aux_is_string(auxv[2 * naux]))
			strs += strlen((const char *)auxv[2 * naux + 1]) + 1;
		else if (auxv[2 * naux] == AT_RANDOM)
			strs += 16;
	size_t words = 1 + argc + 1 + envc + 1 + 2 * (naux + 1);
	size_t size = (words * 8 + strs + 16 + 15) & ~15UL;

	uintptr_t sp = (uintptr_t)__builtin_frame_address(0) - STACK_GAP;
	uintptr_t block = (sp - size) & ~15UL;
	/* grow the stack down to the block a page at a time */
	for (uintptr_t a = page_down(sp); a >= page_down(block); a -= PAGE)
		*(volatile char *)a = 0;

	uint64_t *w = (uint64_t *)block;
	char *s = (char *)(block + words * 8);
	*w++ = argc;
	for (size_t i = 0; i < argc; i++, s += strlen(s) + 1)
		*w++ = (uint64_t)(uintptr_t)strcpy(s, argv[i]);
	*w++ = 0;
	for (size_t i = 0; i < envc; i++, s += strlen(s) + 1)
		*w++ = (uint64_t)(uintptr_t)strcpy(s, envp[i]);
	*w++ = 0;
	for (size_t i = 0; i < naux; i++) {
		uint64_t type = auxv[2 * i], val = auxv[2 * i + 1];
		if (aux_is_string(type)) {
			val = (uint64_t)(uintptr_t)strcpy(s, (const char *)(uintptr_t)val);
			s += strlen(s) + 1;
		} else if (type == AT_RANDOM) {
			val = (uint64_t)(uintptr_t)memcpy(s, (const void *)(uintptr_t)val, 16);
			s += 16;
		}
		*w++ = type;
		*w++ = val;
	}
	*w++ = AT_NULL;
	*w++ = 0;

	__asm__ volatile("mov %0, %%rsp\n\t"
			 "xor %%edx, %%edx\n\t"
			 "xor %%ebp, %%ebp\n\t"
			 "jmp *%1"
			 :
			 : "S"(block), "a"(entry)
			 : "memory");
	__builtin_unreachable();
}
