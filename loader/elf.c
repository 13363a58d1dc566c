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
#include <sys/stat.h>

#include "loader/elf.h"
#include "user/patch/elf_read.h"

#define PAGE ELF_PAGE

static uintptr_t page_down(uintptr_t a) { return a & ~(PAGE - 1); }
/* only for addresses checked to lie below ELF_USER_TOP: never wraps */
static uintptr_t page_up(uintptr_t a) { return (a + PAGE - 1) & ~(PAGE - 1); }

static int bad(int kind, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
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

/* [a, b) inside the reservation [lo, hi): every MAP_FIXED is checked
 * against it, so that a number the checks missed can never land a segment
 * on sandpit's own memory */
static int inside(uintptr_t a, uintptr_t b, const struct elf_image *im)
{
	return a >= im->lo && a <= b && b <= im->hi;
}

static int map_segment(int fd, const Elf64_Phdr *ph, const struct elf_image *im, char *err,
		       size_t errlen)
{
	uintptr_t start = im->bias + ph->p_vaddr, lo = page_down(start);
	uintptr_t file_end = start + ph->p_filesz, mem_end = start + ph->p_memsz;
	int prot = prot_of(ph);

	if (!inside(lo, page_up(mem_end), im) || start > mem_end || file_end > mem_end)
		return bad(ELF_ERR_NOEXEC, err, errlen, "a segment outside the reservation");
	if (ph->p_filesz) {
		/* writable for a moment if the bss starts inside the last page */
		int zero_tail = ph->p_memsz > ph->p_filesz && page_up(file_end) > file_end;
		void *q = mmap((void *)lo, page_up(file_end) - lo, prot | (zero_tail ? PROT_WRITE : 0),
			       MAP_PRIVATE | MAP_FIXED, fd, (off_t)(ph->p_offset - (start - lo)));
		if (q == MAP_FAILED)
			return bad(ELF_ERR_SYS, err, errlen, "cannot map a segment: %s", strerror(errno));
		/* the file's last page is inside the file (elf_program_read),
		 * so this touches no page past its end */
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

static long fd_pread(void *ctx, void *buf, size_t count, uint64_t off)
{
	size_t done = 0;

	if (off > INT64_MAX)
		return 0;
	while (done < count) {
		ssize_t r = pread(*(int *)ctx, (char *)buf + done, count - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (long)done;
}

_Static_assert(sizeof(((struct elf_image *)0)->interp) == ELF_MAX_INTERP, "PT_INTERP's size");

int elf_map(int fd, const char *name, struct elf_image *out, char *err, size_t errlen)
{
	static struct elf_program prog; /* 8 KiB: not on the stack */
	struct stat st;
	char why[256];
	int r;

	memset(out, 0, sizeof *out);
	/* its size first: nothing is mapped from past the end (no SIGBUS) */
	if (fstat(fd, &st) < 0)
		return bad(ELF_ERR_SYS, err, errlen, "%s: %s", name, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return bad(ELF_ERR_NOEXEC, err, errlen, "%s: not a regular file", name);
	r = elf_program_read(fd_pread, &fd, (uint64_t)st.st_size, &prog, why, sizeof why);
	if (r < 0)
		return bad(ELF_ERR_SYS, err, errlen, "%s: %s", name, strerror(-r));
	if (r)
		return bad(ELF_ERR_NOEXEC, err, errlen, "%s: %s%s", name, r == ELF_BAD ? "bad ELF: " : "",
			   why);

	/* one reservation for the whole image, so that the segments land
	 * together, nothing else sits in the gaps, and every MAP_FIXED below
	 * stays inside memory made here */
	uintptr_t lo = prog.lo, span = prog.hi - prog.lo;
	int fixed = prog.eh.e_type == ET_EXEC;
	void *base = mmap(fixed ? (void *)lo : NULL, span, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | (fixed ? MAP_FIXED_NOREPLACE : 0), -1, 0);
	if (base == MAP_FAILED || (fixed && base != (void *)lo)) {
		if (base != MAP_FAILED)
			munmap(base, span);
		return bad(ELF_ERR_NOEXEC, err, errlen, "%s: cannot reserve %#lx-%#lx: %s", name,
			   (unsigned long)lo, (unsigned long)(lo + span),
			   base != MAP_FAILED || errno == EEXIST ? "address in use" : strerror(errno));
	}
	out->bias = (uintptr_t)base - lo;
	out->lo = (uintptr_t)base;
	out->hi = (uintptr_t)base + span;

	for (unsigned i = 0; i < prog.phnum; i++) {
		if (prog.ph[i].p_type != PT_LOAD || !prog.ph[i].p_memsz)
			continue;
		r = map_segment(fd, &prog.ph[i], out, err, errlen);
		if (r) {
			munmap(base, span);
			return r;
		}
	}
	out->phdr = prog.phdr ? out->bias + prog.phdr : 0;
	out->phnum = prog.phnum;
	out->entry = out->bias + prog.eh.e_entry;
	memcpy(out->interp, prog.interp, sizeof out->interp);
	return 0;
}

/* ---- the initial stack ---- */

#define STACK_GAP (256UL << 10) /* below the caller's frames, which memcpy still uses */

static int aux_is_string(uint64_t type)
{
	return type == AT_EXECFN || type == AT_PLATFORM || type == AT_BASE_PLATFORM;
}

/* The block's layout, and with `write` its contents: one walk for both, so
 * that what elf_stack_plan announces is what elf_stack_enter writes */
static void lay_out(struct elf_stack *st, int write)
{
	uint64_t *w = (uint64_t *)st->block;
	char *s = (char *)(st->block + st->words * 8);
	size_t n = 0, k = 0;
#define PUT(v)                           \
	do {                             \
		if (write)               \
			*w = (uint64_t)(v); \
		w++;                     \
	} while (0)
#define PUT_STR(str)                                                  \
	do {                                                          \
		size_t len_ = strlen(str) + 1;                        \
		PUT((uintptr_t)s);                                    \
		if (write)                                            \
			memcpy(s, (str), len_);                       \
		s += len_;                                            \
	} while (0)
	while (st->argv[n])
		n++;
	PUT(n);
	st->arg_start = (uintptr_t)s;
	for (size_t i = 0; i < n; i++)
		PUT_STR(st->argv[i]);
	st->arg_end = (uintptr_t)s;
	PUT(0);
	st->env_start = (uintptr_t)s;
	for (size_t i = 0; st->envp[i]; i++)
		PUT_STR(st->envp[i]);
	st->env_end = (uintptr_t)s;
	PUT(0);
	for (size_t i = 0; st->auxv_in[2 * i] != AT_NULL; i++) {
		uint64_t type = st->auxv_in[2 * i], val = st->auxv_in[2 * i + 1];
		PUT(type);
		if (aux_is_string(type)) {
			val = (uintptr_t)s;
			PUT_STR((const char *)(uintptr_t)st->auxv_in[2 * i + 1]);
		} else if (type == AT_RANDOM) {
			PUT((uintptr_t)s);
			if (write)
				memcpy(s, (const void *)(uintptr_t)val, 16);
			val = (uintptr_t)s;
			s += 16;
		} else {
			PUT(val);
		}
		st->auxv[k++] = type;
		st->auxv[k++] = val;
	}
	PUT(AT_NULL);
	PUT(0);
	st->auxv[k++] = AT_NULL;
	st->auxv[k++] = 0;
	st->auxv_bytes = k * 8;
#undef PUT
#undef PUT_STR
}

int elf_stack_plan(struct elf_stack *st, char *const argv[], char *const envp[],
		   const uint64_t *auxv)
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
	if (naux > ELF_MAX_AUXV)
		return -1;
	st->argv = argv;
	st->envp = envp;
	st->auxv_in = auxv;
	st->words = 1 + argc + 1 + envc + 1 + 2 * (naux + 1);
	st->size = (st->words * 8 + strs + 16 + 15) & ~15UL;
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0) - STACK_GAP;
	st->block = (sp - st->size) & ~15UL;
	lay_out(st, 0);
	return 0;
}

void elf_stack_enter(const struct elf_stack *plan, uintptr_t entry)
{
	struct elf_stack st = *plan;
	/* grow the stack down to the block a page at a time, from below the
	 * frames still in use (the caller's, this one's, memcpy's) */
	for (uintptr_t a = page_down(st.block + st.size); a >= page_down(st.block); a -= PAGE)
		*(volatile char *)a = 0;
	lay_out(&st, 1);

	__asm__ volatile("mov %0, %%rsp\n\t"
			 "xor %%edx, %%edx\n\t"
			 "xor %%ebp, %%ebp\n\t"
			 "jmp *%1"
			 :
			 : "S"(st.block), "a"(entry)
			 : "memory");
	__builtin_unreachable();
}
