/* The patcher (see patch.h).  For one executable range:
 *   scan    find every 0f 05 byte pair (SSE2, no decoding);
 *   span    find the enclosing function in .eh_frame_hdr (else the dynamic
 *           symbol table, else the gap after the previous FDE, else decode
 *           the whole range once) and decode it from its start, lazily,
 *           recording instruction starts and direct branch targets;
 *   plan    keep the candidates that start an instruction (an instruction
 *           that starts 0f 05 is `syscall`); pick the displaced region;
 *   encode  re-encode the displaced instructions into trampolines with the
 *           Zydis encoder and check each decodes back to its original;
 *   commit  map the region near the module, then write the sites.
 * A linear decode of libc costs ~60 ms; this costs ~1.5 ms. */
#include <elf.h>
#include <emmintrin.h>
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <Zydis/Zydis.h>
#include "user/elf_read.h"
#include "user/patch.h"

#define PAGE 4096UL
#define JMP_LEN 5
#define SYSCALL_LEN 2
#define MAX_SIDE 4          /* displaced instructions on one side of a syscall */
#define TRAMP_FIXED 32      /* lea + call + lea + jmp = 24 bytes, rounded up */
#define SITE_MAX (2 * MAX_SIDE * ZYDIS_MAX_INSTRUCTION_LENGTH + SYSCALL_LEN)
/* what a rel32 can cover, with a margin for the region's own size */
#define REACH ((1UL << 31) - (1UL << 24))
#define USER_TOP 0x7ffffffff000UL
#define HEAP_GUARD (256UL << 20)    /* kept free above brk */
#define STACK_GUARD_MAX (1UL << 30) /* at most this much kept free below the stack */

static uintptr_t page_down(uintptr_t a) { return a & ~(PAGE - 1); }
static uintptr_t page_up(uintptr_t a) { return (a + PAGE - 1) & ~(PAGE - 1); }

/* ---- memory and system calls: libc's, or the caller's (see patch_ops) ---- */

static long libc_sys(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	long r = syscall(nr, a0, a1, a2, a3, a4, a5);

	return r == -1 ? -errno : r;
}

static const struct patch_ops libc_ops = { malloc, realloc, free, libc_sys };
static const struct patch_ops *ops = &libc_ops;
static const struct patch_config *cfg_now;
static int debug = -1; /* SANDPIT_DEBUG, read once while libc is ours */

static void use_ops(const struct patch_config *cfg)
{
	cfg_now = cfg;
	ops = cfg->ops ? cfg->ops : &libc_ops;
	if (debug < 0 && !cfg->ops)
		debug = getenv("SANDPIT_DEBUG") != NULL;
}

static void *p_calloc(size_t n, size_t size)
{
	void *q = n && size > SIZE_MAX / n ? NULL : ops->alloc(n * size);

	if (q)
		memset(q, 0, n * size);
	return q;
}

#define p_sys(nr, a0, a1, a2, a3, a4, a5) \
	ops->sys(nr, (long)(a0), (long)(a1), (long)(a2), (long)(a3), (long)(a4), (long)(a5))

static long p_mmap(uintptr_t a, size_t n, int prot, int flags)
{
	return p_sys(SYS_mmap, a, n, prot, flags | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

static int p_mprotect(uintptr_t a, size_t n, int prot)
{
	return (int)p_sys(SYS_mprotect, a, n, prot, 0, 0, 0);
}

static void p_munmap(uintptr_t a, size_t n)
{
	p_sys(SYS_munmap, a, n, 0, 0, 0, 0);
}

static int grow(void *pp, unsigned *cap, unsigned n, size_t elem)
{
	void **p = pp;
	unsigned c;
	void *q;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 64;
	q = ops->realloc(*p, (size_t)c * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* ---- /proc/self/maps ---- */

enum { VMA_STACK = 1, VMA_VDSO = 2 };

struct vma {
	uintptr_t lo, hi;
	int prot, kind;
	unsigned long off, ino;   /* file offset and inode (0: anonymous) */
	unsigned dev_major, dev_minor;
};

struct maps {
	struct vma *v;
	unsigned n, cap;
};

static char *slurp(const char *path, int *err)
{
	size_t len = 0, cap = 16384;
	char *buf = ops->alloc(cap);
	int fd = (int)p_sys(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
	long r;

	*err = fd < 0 ? fd : -ENOMEM;
	if (!buf || fd < 0)
		goto fail;
	while ((r = p_sys(SYS_read, fd, buf + len, cap - len - 1, 0, 0, 0)) != 0) {
		char *nb;

		if (r < 0) {
			if (r == -EINTR)
				continue;
			*err = (int)r;
			goto fail;
		}
		len += r;
		if (cap - len > 1)
			continue;
		nb = ops->realloc(buf, cap *= 2);
		*err = -ENOMEM;
		if (!nb)
			goto fail;
		buf = nb;
	}
	buf[len] = 0;
	p_sys(SYS_close, fd, 0, 0, 0, 0, 0);
	return buf;
fail:
	if (fd >= 0)
		p_sys(SYS_close, fd, 0, 0, 0, 0, 0);
	ops->release(buf);
	return NULL;
}

/* strtoul needs libc's locale through %fs, which inside the sandbox is the
 * program's: numbers are read here */
static unsigned long num(char **pp, unsigned base)
{
	unsigned long v = 0;
	char *p = *pp;

	for (;; p++) {
		unsigned d = *p >= '0' && *p <= '9' ? (unsigned)(*p - '0') :
			     *p >= 'a' && *p <= 'f' ? (unsigned)(*p - 'a' + 10) : 99;
		if (d >= base)
			break;
		v = v * base + d;
	}
	*pp = p;
	return v;
}

/* lo-hi perms offset major:minor inode [path] */
static void parse_vma(char *line, struct vma *v)
{
	char *p = line;

	v->lo = num(&p, 16);
	p++;
	v->hi = num(&p, 16);
	p++;
	v->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		  (p[2] == 'x' ? PROT_EXEC : 0);
	p += strcspn(p, " ");
	p += strspn(p, " ");
	v->off = num(&p, 16);
	p += strspn(p, " ");
	v->dev_major = (unsigned)num(&p, 16);
	p += *p == ':';
	v->dev_minor = (unsigned)num(&p, 16);
	p += strspn(p, " ");
	v->ino = num(&p, 10);
	p += strspn(p, " ");
	v->kind = !strcmp(p, "[stack]") ? VMA_STACK : !strcmp(p, "[vdso]") ? VMA_VDSO : 0;
}

static int maps_read(struct maps *m)
{
	int err;
	char *buf = slurp("/proc/self/maps", &err), *line, *nl;

	m->n = 0;
	if (!buf)
		return err;
	for (line = buf; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		*nl = 0;
		if (grow(&m->v, &m->cap, m->n, sizeof *m->v)) {
			ops->release(buf);
			return -ENOMEM;
		}
		parse_vma(line, &m->v[m->n++]);
	}
	ops->release(buf);
	return 0;
}

/* ---- loaded objects ---- */

struct module {
	uintptr_t bias;
	const ElfW(Phdr) *phdr;   /* NULL: bare range, no tables */
	unsigned phnum;
	uintptr_t lo, hi;         /* the executable segment */
};

struct mod_list {
	struct module *m;
	unsigned n, cap;
	int err;
};

static int collect_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct mod_list *l = arg;

	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !ph->p_memsz)
			continue;
		if (grow(&l->m, &l->cap, l->n, sizeof *l->m)) {
			l->err = -ENOMEM;
			return 1;
		}
		l->m[l->n++] = (struct module){
			.bias = info->dlpi_addr, .phdr = info->dlpi_phdr,
			.phnum = info->dlpi_phnum, .lo = info->dlpi_addr + ph->p_vaddr,
			.hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz,
		};
	}
	return 0;
}

/* The vDSO is in dl_iterate_phdr's list for dynamic programs; make sure of it
 * for static ones too. */
static int add_vdso(struct mod_list *l)
{
	const ElfW(Ehdr) *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct dl_phdr_info info = {0};

	if (!eh)
		return 0;
	for (unsigned i = 0; i < l->n; i++)
		if ((uintptr_t)l->m[i].phdr - (uintptr_t)eh < PAGE)
			return 0;
	info.dlpi_phdr = (const void *)((uintptr_t)eh + eh->e_phoff);
	info.dlpi_phnum = eh->e_phnum;
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (info.dlpi_phdr[i].p_type == PT_LOAD) {
			info.dlpi_addr = (uintptr_t)eh - page_down(info.dlpi_phdr[i].p_vaddr);
			break;
		}
	collect_cb(&info, sizeof info, l);
	return l->err;
}

static bool readable(const struct maps *m, uintptr_t lo, uintptr_t hi);

/* An object mapped without ld.so's knowledge (what `sandpit run` loads, or
 * a library the program's own ld.so maps): its ELF header is at the start
 * of the mapping of the same file at offset 0. */
static void add_from_header(struct mod_list *l, const struct maps *m, const struct vma *x)
{
	const struct vma *h = NULL;
	struct dl_phdr_info info = {0};
	struct elf_view v;
	uintptr_t phdr;
	unsigned phnum, n0 = l->n;

	for (unsigned i = 0; i < m->n && !h; i++)
		if (m->v[i].ino == x->ino && m->v[i].dev_major == x->dev_major &&
		    m->v[i].dev_minor == x->dev_minor && m->v[i].off == 0 &&
		    (m->v[i].prot & PROT_READ) && m->v[i].lo <= x->lo)
			h = &m->v[i];
	if (!h)
		return;
	/* the file's headers, read within the mapping that holds them */
	elf_view_init(&v, (const void *)h->lo, h->hi - h->lo);
	if (!elf_mapped_phdrs(&v, h->lo, &phdr, &phnum))
		return;
	info.dlpi_phdr = (const void *)phdr;
	info.dlpi_phnum = (ElfW(Half))phnum;
	for (unsigned i = 0; i < phnum; i++)
		if (info.dlpi_phdr[i].p_type == PT_LOAD) {
			if (((const ElfW(Ehdr) *)h->lo)->e_type == ET_DYN)
				info.dlpi_addr = h->lo - page_down(info.dlpi_phdr[i].p_vaddr);
			break;
		}
	collect_cb(&info, sizeof info, l);
	/* code segments the file claims but that are not there (or wrap) are
	 * not scanned */
	for (unsigned i = n0; i < l->n; i++)
		if (l->m[i].hi <= l->m[i].lo || !readable(m, l->m[i].lo, l->m[i].hi))
			l->m[i--] = l->m[--l->n];
}

static bool module_covers(const struct mod_list *l, uintptr_t lo, uintptr_t hi)
{
	for (unsigned i = 0; i < l->n; i++)
		if (lo < l->m[i].hi && hi > l->m[i].lo)
			return true;
	return false;
}

/* Everything executable: ld.so's list (unless the patcher runs inside the
 * sandbox, where libc's locks and thread pointer are not its own), the vDSO,
 * and file mappings with an ELF header that ld.so does not know.  The maps
 * read on the way stay in *m for the commits (the caller releases m->v):
 * reading them costs ~0.1 ms a time, and a stale copy is safe there (see
 * region_map, which reads them again when a place is taken). */
static int modules_collect(struct mod_list *l, bool use_ldso, uintptr_t lo, uintptr_t hi,
			   struct maps *m)
{
	int r = 0;

	if (use_ldso)
		dl_iterate_phdr(collect_cb, l);
	if (l->err || (r = add_vdso(l)) || (r = maps_read(m)))
		return l->err ? l->err : r;
	for (unsigned i = 0; i < m->n && !l->err; i++)
		if ((m->v[i].prot & PROT_EXEC || (m->v[i].lo < hi && m->v[i].hi > lo)) &&
		    m->v[i].ino && !module_covers(l, m->v[i].lo, m->v[i].hi))
			add_from_header(l, m, &m->v[i]);
	return l->err;
}

/* The object whose executable segment overlaps [lo, hi), else a bare one. */
static int module_find(uintptr_t lo, uintptr_t hi, struct module *out, struct maps *m)
{
	struct mod_list l = {0};
	int r = modules_collect(&l, !cfg_now->ops, lo, hi, m);

	*out = (struct module){ .lo = lo, .hi = hi };
	for (unsigned i = 0; !r && i < l.n; i++)
		if (lo < l.m[i].hi && hi > l.m[i].lo)
			*out = l.m[i];
	ops->release(l.m);
	return r;
}

static const ElfW(Phdr) *module_phdr(const struct module *m, unsigned type)
{
	for (unsigned i = 0; m->phdr && i < m->phnum; i++)
		if (m->phdr[i].p_type == type)
			return &m->phdr[i];
	return NULL;
}

/* ---- a module's tables, read through user/elf_read (invariant 9) ---- */

/* What of the object may be read: its readable mappings, within the extent
 * its PT_LOAD segments claim (without headers, the range itself).  Every
 * table the file points at is read through this view. */
static void module_view(const struct module *mod, const struct maps *m, struct elf_view *v)
{
	uintptr_t lo = mod->lo, hi = mod->hi;

	for (unsigned i = 0; mod->phdr && i < mod->phnum; i++) {
		const ElfW(Phdr) *ph = &mod->phdr[i];
		uintptr_t a = mod->bias + ph->p_vaddr, b = a + ph->p_memsz;

		if (ph->p_type != PT_LOAD || b < a)
			continue;
		lo = a < lo ? a : lo;
		hi = b > hi ? b : hi;
	}
	v->n = 0;
	for (unsigned i = 0; i < m->n; i++) {
		const struct vma *x = &m->v[i];

		if ((x->prot & PROT_READ) && x->lo < hi && x->hi > lo &&
		    !elf_view_add(v, x->lo > lo ? x->lo : lo, x->hi < hi ? x->hi : hi))
			break;
	}
}

/* [lo, hi) is readable memory, by the maps */
static bool readable(const struct maps *m, uintptr_t lo, uintptr_t hi)
{
	for (unsigned i = 0; i < m->n && lo < hi; i++)
		if (m->v[i].lo <= lo && lo < m->v[i].hi && (m->v[i].prot & PROT_READ))
			lo = m->v[i].hi;
	return lo >= hi;
}

/* ASCII hex of x, for the debug line (no printf inside the sandbox) */
static char *hex(char *p, uintptr_t x)
{
	char d[16];
	int n = 0;

	do
		d[n++] = "0123456789abcdef"[x & 15];
	while (x >>= 4);
	*p++ = '0';
	*p++ = 'x';
	while (n)
		*p++ = d[--n];
	return p;
}

/* Under SANDPIT_DEBUG: an object whose tables cannot guide the patcher,
 * which then takes a slower way that finds the same sites. */
static void note_fallback(const struct module *mod, const char *why, bool has_sym)
{
	char line[256], *p = line;
	const char *tail = has_sym ? ": functions found from its symbol table\n"
				   : ": functions found by decoding it from the start\n";
	size_t n;

	if (debug <= 0)
		return;
	memcpy(p, "sandpit: patcher: object at ", 28);
	p = hex(p + 28, mod->lo);
	*p++ = ':';
	*p++ = ' ';
	n = strlen(why);
	memcpy(p, why, n);
	p += n;
	n = strlen(tail);
	memcpy(p, tail, n);
	p += n;
	p_sys(SYS_write, 2, line, p - line, 0, 0, 0);
}

/* ---- spans: stretches of code, decoded lazily from their start ---- */

struct span {
	const ZydisDecoder *dec;
	uintptr_t lo, end;           /* the stretch (a function): [lo, end) */
	uintptr_t hi;                /* decoded so far: [lo, hi) */
	bool stuck;                  /* the byte at hi does not decode */
	int err;
	uint32_t *ins;               /* instruction starts, offsets from lo */
	unsigned n_ins, cap_ins;
	uintptr_t *tgt;              /* direct branch targets in [lo, end) */
	unsigned n_tgt, cap_tgt;
	bool sorted;
};

/* heapsort: libc's qsort may allocate, and must not at run time */
static void sift(uintptr_t *v, size_t i, size_t n)
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && v[c + 1] > v[c])
			c++;
		if (v[i] >= v[c])
			return;
		uintptr_t t = v[i];
		v[i] = v[c];
		v[c] = t;
	}
}

static void sort_addrs(uintptr_t *v, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift(v, i, n);
	while (n-- > 1) {
		uintptr_t t = v[0];
		v[0] = v[n];
		v[n] = t;
		sift(v, 0, n);
	}
}

static void span_start(struct span *s, const ZydisDecoder *dec, uintptr_t lo, uintptr_t end)
{
	s->dec = dec;
	s->lo = s->hi = lo;
	s->end = end;
	s->stuck = false;
	s->err = 0;
	s->n_ins = s->n_tgt = 0;
	s->sorted = true;
}

static void span_target(struct span *s, uintptr_t t)
{
	if (t < s->lo || t >= s->end)
		return;
	if (grow(&s->tgt, &s->cap_tgt, s->n_tgt, sizeof *s->tgt)) {
		s->err = -ENOMEM;
		return;
	}
	s->tgt[s->n_tgt++] = t;
	s->sorted = false;
}

/* Decode on until `to` (or the end, or a byte that does not decode). */
static void span_extend(struct span *s, uintptr_t to)
{
	ZydisDecodedInstruction in;

	to = to < s->end ? to : s->end;
	while (s->hi < to && !s->stuck && !s->err) {
		uintptr_t next;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(s->dec, NULL, (const void *)s->hi,
								s->end - s->hi, &in))) {
			s->stuck = true;
			break;
		}
		if (grow(&s->ins, &s->cap_ins, s->n_ins, sizeof *s->ins)) {
			s->err = -ENOMEM;
			break;
		}
		s->ins[s->n_ins++] = s->hi - s->lo;
		next = s->hi + in.length;
		/* a return address is a branch target too */
		if (in.mnemonic == ZYDIS_MNEMONIC_CALL)
			span_target(s, next);
		if ((in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) && in.raw.imm[0].is_relative)
			span_target(s, next + in.raw.imm[0].value.s);
		s->hi = next;
	}
}

/* Is there an instruction i?  Decodes as far as needed. */
static bool span_has(struct span *s, unsigned i)
{
	while (i >= s->n_ins && s->hi < s->end && !s->stuck && !s->err)
		span_extend(s, s->hi + 1);
	return i < s->n_ins;
}

/* Start of instruction i, or where the decoded code ends. */
static uintptr_t span_insn(struct span *s, unsigned i)
{
	return span_has(s, i) ? s->lo + s->ins[i] : s->hi;
}

static int span_index(struct span *s, uintptr_t a)
{
	unsigned lo = 0, hi;

	span_extend(s, a + 1);
	if (a < s->lo || a >= s->hi)
		return -1;
	hi = s->n_ins;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (s->lo + s->ins[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n_ins && s->lo + s->ins[lo] == a ? (int)lo : -1;
}

/* A target in (lo, hi) among the branches decoded so far? */
static bool known_inner_target(struct span *s, uintptr_t lo, uintptr_t hi)
{
	unsigned a = 0, b = s->n_tgt;

	if (!s->sorted && s->n_tgt < 64) {
		for (unsigned i = 0; i < s->n_tgt; i++)
			if (s->tgt[i] > lo && s->tgt[i] < hi)
				return true;
		return false;
	}
	if (!s->sorted) {
		sort_addrs(s->tgt, s->n_tgt);
		s->sorted = true;
	}
	while (a < b) {
		unsigned mid = a + (b - a) / 2;

		if (s->tgt[mid] <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a < s->n_tgt && s->tgt[a] < hi;
}

/* Could an instruction at a be a direct jmp/jcc/call?  Its target then. */
static bool maybe_branch(uintptr_t a, uintptr_t end, uintptr_t *t)
{
	const uint8_t *b = (const uint8_t *)a;
	int32_t rel;

	if (end - a >= 2 && ((b[0] >= 0x70 && b[0] <= 0x7f) || (b[0] >= 0xe0 && b[0] <= 0xe3) ||
			     b[0] == 0xeb)) {
		*t = a + 2 + (int8_t)b[1];
		return true;
	}
	if (end - a >= 5 && (b[0] == 0xe8 || b[0] == 0xe9)) {
		memcpy(&rel, b + 1, 4);
		*t = a + 5 + rel;
		return true;
	}
	if (end - a >= 6 && b[0] == 0x0f && b[1] >= 0x80 && b[1] <= 0x8f) {
		memcpy(&rel, b + 2, 4);
		*t = a + 6 + rel;
		return true;
	}
	return false;
}

/* The first byte in [a, end) that could start a branch into (lo, hi). */
static uintptr_t next_maybe(uintptr_t a, uintptr_t end, uintptr_t lo, uintptr_t hi)
{
	const __m128i e8 = _mm_set1_epi8((char)0xe8), e9 = _mm_set1_epi8((char)0xe9);
	const __m128i of = _mm_set1_epi8(0x0f);
	uintptr_t near = hi + 128, t;    /* no rel8 reaches (lo, hi) from further on */

	while (a < end) {
		if (a >= near && a + 16 <= end) {
			/* only rel32 forms: e8, e9, 0f 8x */
			__m128i x = _mm_loadu_si128((const __m128i *)a);
			unsigned m = _mm_movemask_epi8(_mm_or_si128(
				_mm_or_si128(_mm_cmpeq_epi8(x, e8), _mm_cmpeq_epi8(x, e9)),
				_mm_cmpeq_epi8(x, of)));

			if (!m) {
				a += 16;
				continue;
			}
			a += __builtin_ctz(m);
		}
		if (maybe_branch(a, end, &t) && t > lo && t < hi)
			return a;
		a++;
	}
	return end;
}

/* Is some branch target strictly inside (lo, hi)?  A linear decode of whole
 * functions costs more than the start-up budget, so the rest of the function
 * is decoded only as far as each byte pattern that could be a branch into
 * (lo, hi), to see whether it is one. */
static bool span_inner_target(struct span *s, uintptr_t lo, uintptr_t hi)
{
	uintptr_t a;

	for (;;) {
		if (s->err || known_inner_target(s, lo, hi))
			return true;
		a = next_maybe(s->hi, s->end, lo, hi);
		if (a >= s->end)
			return false;
		span_extend(s, a + 1);
		if (a >= s->hi)
			return true;    /* could not decode that far: assume it is one */
	}
}

static void span_free(struct span *s)
{
	ops->release(s->ins);
	ops->release(s->tgt);
}

/* ---- planning ---- */

struct planner {
	const struct patch_config *cfg;
	struct module mod;
	uintptr_t lo, hi;          /* the range being planned */
	ZydisDecoder dec;
	ZydisDecoder fast;         /* lengths and raw fields only, for spans */
	struct elf_view view;      /* what of the module may be read */
	struct elf_ehtab eh;
	bool has_eh;
	struct elf_symtab sym;
	bool has_sym;
	struct span fn, whole;
	struct patch_plan *plan;
	size_t bound;              /* code_len can not exceed this */
	/* the position-independent parts of every trampoline, encoded once */
	uint8_t lea_down[16], lea_up[16];
	size_t n_down, n_up;
	/* full decodes of the instructions around a site: each is asked for by
	 * the checks and again by the relocation */
	struct decoded {
		uintptr_t at;
		bool ok;
		ZydisDecodedInstruction in;
		ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	} dc[8];
};

enum { FIT = 0, SKIP_TARGET, SKIP_OTHER };

static const struct decoded *decode_at(struct planner *p, uintptr_t a)
{
	struct decoded *d = &p->dc[a % (sizeof p->dc / sizeof p->dc[0])];
	size_t n = p->mod.hi - a < ZYDIS_MAX_INSTRUCTION_LENGTH ? p->mod.hi - a
								 : ZYDIS_MAX_INSTRUCTION_LENGTH;

	if (d->at != a) {
		d->at = a;
		d->ok = a < p->mod.hi && ZYAN_SUCCESS(ZydisDecoderDecodeFull(
					&p->dec, (const void *)a, n, &d->in, d->op));
	}
	return d->ok ? d : NULL;
}

/* The stretch that holds candidate c, NULL if none can be trusted. */
static struct span *span_for(struct planner *p, uintptr_t c)
{
	struct span *s = &p->fn;
	uintptr_t lo, hi;
	int r;

	if (p->whole.n_ins && c >= p->whole.lo && c < p->whole.end)
		return &p->whole;
	if (s->n_ins && c >= s->lo && c < s->end)
		return s;
	r = p->has_eh ? elf_fde_lookup(&p->eh, c, &lo, &hi) : -1;
	if (r != 1 && !(p->has_sym && elf_sym_find(&p->sym, c, &lo, &hi))) {
		if (r == 0 && lo == 0)
			return NULL;    /* before the first function: headers, not code */
		if (r < 0) {
			/* no table at all: one linear decode of everything, kept */
			span_start(&p->whole, &p->fast, p->mod.lo, p->mod.hi);
			span_extend(&p->whole, p->mod.hi);
			return p->whole.err ? NULL : &p->whole;
		}
	}
	lo = lo < p->mod.lo ? p->mod.lo : lo;
	hi = hi > p->mod.hi ? p->mod.hi : hi;
	if (lo >= hi)
		return NULL;
	span_start(s, &p->fast, lo, hi);
	return s;
}

/* Can this instruction run unchanged at another address (once re-encoded)? */
static bool is_simple(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op)
{
	switch (in->meta.category) {
	case ZYDIS_CATEGORY_CALL: case ZYDIS_CATEGORY_RET: case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_SYSCALL: case ZYDIS_CATEGORY_SYSRET: case ZYDIS_CATEGORY_SYSTEM:
	case ZYDIS_CATEGORY_INTERRUPT:
		return false;
	default:
		break;
	}
	switch (in->mnemonic) {
	/* rel8 only, or transactional: they can not move */
	case ZYDIS_MNEMONIC_LOOP: case ZYDIS_MNEMONIC_LOOPE: case ZYDIS_MNEMONIC_LOOPNE:
	case ZYDIS_MNEMONIC_JCXZ: case ZYDIS_MNEMONIC_JECXZ: case ZYDIS_MNEMONIC_JRCXZ:
	case ZYDIS_MNEMONIC_XBEGIN:
		return false;
	default:
		break;
	}
	if (!(in->attributes & ZYDIS_ATTRIB_IS_RELATIVE))
		return true;
	for (unsigned i = 0; i < in->operand_count_visible; i++) {
		if (op[i].type == ZYDIS_OPERAND_TYPE_MEMORY && op[i].mem.base == ZYDIS_REGISTER_RIP)
			return true;
		if (op[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op[i].imm.is_relative)
			return in->meta.category == ZYDIS_CATEGORY_COND_BR;
	}
	return false;
}

static bool simple_at(struct planner *p, uintptr_t a)
{
	const struct decoded *d = decode_at(p, a);

	return d && is_simple(&d->in, d->op);
}

/* The system call number, if the instruction right before the syscall is
 * `mov $nr,%eax` (or %rax); -1 if it is not known there. */
static long static_nr(struct planner *p, uintptr_t a)
{
	const struct decoded *d = decode_at(p, a);
	const ZydisDecodedOperand *op = d ? d->op : NULL;

	if (d && d->in.mnemonic == ZYDIS_MNEMONIC_MOV && op[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	    (op[0].reg.value == ZYDIS_REGISTER_EAX || op[0].reg.value == ZYDIS_REGISTER_RAX) &&
	    op[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op[1].imm.value.u < 0x10000)
		return (long)op[1].imm.value.u;
	return -1;
}

/* Bytes covered by k instructions before syscall i and m after it, 0 if
 * they are not there. */
static size_t region_len(struct span *s, unsigned i, unsigned k, unsigned m)
{
	if (k > i || !span_has(s, i + m))
		return 0;
	return span_insn(s, i + m + 1) - span_insn(s, i - k);
}

static int try_region(struct planner *p, struct span *s, unsigned i, unsigned k,
		      unsigned m, struct patch_site *out)
{
	uintptr_t lo = span_insn(s, i - k), hi = span_insn(s, i + m + 1);
	const struct patch_config *cfg = p->cfg;

	if (lo < p->lo || hi > p->hi || hi - lo > SITE_MAX ||
	    (lo < cfg->skip_hi && hi > cfg->skip_lo))
		return SKIP_OTHER;
	for (unsigned j = i - k; j <= i + m; j++)
		if (j != i && !simple_at(p, span_insn(s, j)))
			return SKIP_OTHER;
	if (span_inner_target(s, lo, hi))
		return SKIP_TARGET;
	*out = (struct patch_site){ .addr = span_insn(s, i), .lo = lo, .hi = hi,
				    .n_pre = k, .n_post = m };
	return FIT;
}

/* Prefer the instructions before the syscall (the region then ends where the
 * syscall returns to), then those after it, then both. */
static int pick_region(struct planner *p, struct span *s, unsigned i,
		       struct patch_site *out)
{
	int why = SKIP_OTHER, r;
	unsigned k, m;

#define TRY(k_, m_) do { \
		r = try_region(p, s, i, (k_), (m_), out); \
		if (r == FIT) \
			return FIT; \
		if (r == SKIP_TARGET) \
			why = SKIP_TARGET; \
	} while (0)

	for (k = 1; k <= MAX_SIDE && region_len(s, i, k, 0); k++)
		if (region_len(s, i, k, 0) >= JMP_LEN) {
			TRY(k, 0);
			break;
		}
	for (m = 1; m <= MAX_SIDE && region_len(s, i, 0, m); m++)
		if (region_len(s, i, 0, m) >= JMP_LEN) {
			TRY(0, m);
			break;
		}
	for (k = 1; k <= MAX_SIDE && region_len(s, i, k, 0) &&
		    region_len(s, i, k, 0) < JMP_LEN; k++)
		for (m = 1; m <= MAX_SIDE && region_len(s, i, k, m); m++)
			if (region_len(s, i, k, m) >= JMP_LEN) {
				TRY(k, m);
				break;
			}
#undef TRY
	return why;
}

static void plan_candidate(struct planner *p, uintptr_t c)
{
	struct patch_plan *pl = p->plan;
	struct patch_stats *st = &pl->st;
	struct span *s = span_for(p, c);
	int i = s ? span_index(s, c) : -1;

	/* an instruction that starts with 0f 05 is `syscall` */
	if (i < 0)
		return;
	st->sites++;
	long nr = i > 0 ? static_nr(p, span_insn(s, i - 1)) : -1;
	if (nr == 15) {
		/* rt_sigreturn must run natively, on the kernel's frame */
		st->native_sigreturn++;
		return;
	}
	if (nr >= 0 && p->cfg->leave_native && p->cfg->leave_native(p->cfg->ctx, nr)) {
		st->native_allowed++;
		return;
	}
	switch (pick_region(p, s, i, &pl->site[pl->n_site])) {
	case FIT:
		st->patched++;
		p->bound += (size_t)(pl->site[pl->n_site].n_pre + pl->site[pl->n_site].n_post) *
			    ZYDIS_MAX_INSTRUCTION_LENGTH + TRAMP_FIXED;
		pl->n_site++;
		break;
	case SKIP_TARGET:
		st->skipped_target++;
		break;
	default:
		st->skipped_other++;
		break;
	}
}

static int scan_push(uintptr_t **v, unsigned *n, unsigned *cap, uintptr_t a)
{
	if (grow(v, cap, *n, sizeof **v)) {
		ops->release(*v);
		*v = NULL;
		return -ENOMEM;
	}
	(*v)[(*n)++] = a;
	return 0;
}

/* Every 0f 05 pair in [lo, hi) outside the skip range, ascending. */
static int scan(const struct patch_config *cfg, uintptr_t lo, uintptr_t hi, uintptr_t **v,
		unsigned *n)
{
	const __m128i b0 = _mm_set1_epi8(0x0f), b1 = _mm_set1_epi8(0x05);
	unsigned cap = 0;
	uintptr_t a = lo;

	*v = NULL;
	*n = 0;
	for (; a + 17 <= hi; a += 16) {
		__m128i x, y = _mm_loadu_si128((const __m128i *)(a + 1));
		unsigned mask;

		/* most blocks have no 05 at all: skip four at a time */
		if (a + 65 <= hi && !_mm_movemask_epi8(_mm_or_si128(
			    _mm_or_si128(_mm_cmpeq_epi8(y, b1),
					 _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(a + 17)), b1)),
			    _mm_or_si128(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(a + 33)), b1),
					 _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(a + 49)), b1))))) {
			a += 48;
			continue;
		}
		x = _mm_loadu_si128((const __m128i *)a);
		mask = _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(x, b0), _mm_cmpeq_epi8(y, b1)));
		for (; mask; mask &= mask - 1)
			if (scan_push(v, n, &cap, a + __builtin_ctz(mask)))
				return -ENOMEM;
	}
	for (; a + 2 <= hi; a++)
		if (((const uint8_t *)a)[0] == 0x0f && ((const uint8_t *)a)[1] == 0x05 &&
		    scan_push(v, n, &cap, a))
			return -ENOMEM;
	/* drop the ones that overlap sandpit's own code */
	unsigned j = 0;
	for (unsigned i = 0; i < *n; i++)
		if ((*v)[i] + SYSCALL_LEN <= cfg->skip_lo || (*v)[i] >= cfg->skip_hi)
			(*v)[j++] = (*v)[i];
	*n = j;
	return 0;
}

static int analyse(struct planner *p)
{
	uintptr_t *cand;
	unsigned n;
	int r = scan(p->cfg, p->lo, p->hi, &cand, &n);

	p->plan->st.modules = 1;
	if (r)
		return r;
	p->plan->st.candidates = n;
	p->plan->site = p_calloc(n ? n : 1, sizeof *p->plan->site);
	if (!p->plan->site) {
		ops->release(cand);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++)
		plan_candidate(p, cand[i]);
	ops->release(cand);
	return 0;
}

static int planner_init(struct planner *p, const struct patch_config *cfg,
			const struct module *mod, uintptr_t lo, uintptr_t hi,
			struct patch_plan *plan, const struct maps *m)
{
	const ElfW(Phdr) *eh, *dyn;
	int r = -ENOENT;

	memset(p, 0, sizeof *p);
	memset(plan, 0, sizeof *plan);
	p->cfg = cfg;
	p->mod = *mod;
	p->lo = lo;
	p->hi = hi;
	p->plan = plan;
	p->bound = PATCH_SLOT_SIZE;
	ZydisDecoderInit(&p->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	ZydisDecoderInit(&p->fast, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	ZydisDecoderEnableMode(&p->fast, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE);
	module_view(mod, m, &p->view);
	/* the code itself is read too: it must be there */
	if (!elf_view_has(&p->view, lo, hi - lo))
		return -EFAULT;
	eh = module_phdr(mod, PT_GNU_EH_FRAME);
	dyn = module_phdr(mod, PT_DYNAMIC);
	p->has_sym = dyn && !elf_symtab_init(&p->sym, &p->view, mod->bias + dyn->p_vaddr,
					      dyn->p_memsz, mod->bias);
	p->has_eh = eh && !(r = elf_ehtab_init(&p->eh, &p->view, mod->bias + eh->p_vaddr));
	if (!p->has_eh && mod->phdr)
		note_fallback(mod, r == -ENOENT ? "no .eh_frame_hdr that we read"
						: ".eh_frame_hdr does not fit in its mapping",
			      p->has_sym);
	return 0;
}

static void planner_free(struct planner *p)
{
	span_free(&p->fn);
	span_free(&p->whole);
}

/* ---- encoding ---- */

struct emit {
	uint8_t *buf;
	size_t off, cap;
	uintptr_t base;            /* runtime address of buf[0] */
};

static int emit_req(struct emit *e, ZydisEncoderRequest *r)
{
	ZyanUSize len = e->cap - e->off;

	if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstructionAbsolute(r, e->buf + e->off, &len,
								 e->base + e->off)))
		return -ERANGE;
	e->off += len;
	return 0;
}

static void req_init(ZydisEncoderRequest *r, ZydisMnemonic mn, unsigned nops)
{
	memset(r, 0, sizeof *r);
	r->machine_mode = ZYDIS_MACHINE_MODE_LONG_64;
	r->mnemonic = mn;
	r->operand_count = nops;
}

static int emit_lea_rsp(struct emit *e, int disp)
{
	ZydisEncoderRequest r;

	req_init(&r, ZYDIS_MNEMONIC_LEA, 2);
	r.operands[0].type = ZYDIS_OPERAND_TYPE_REGISTER;
	r.operands[0].reg.value = ZYDIS_REGISTER_RSP;
	r.operands[1].type = ZYDIS_OPERAND_TYPE_MEMORY;
	r.operands[1].mem.base = ZYDIS_REGISTER_RSP;
	r.operands[1].mem.displacement = disp;
	r.operands[1].mem.size = 8;
	return emit_req(e, &r);
}

static int emit_call_slot(struct emit *e, uintptr_t slot)
{
	ZydisEncoderRequest r;

	req_init(&r, ZYDIS_MNEMONIC_CALL, 1);
	r.branch_type = ZYDIS_BRANCH_TYPE_NEAR;
	r.operands[0].type = ZYDIS_OPERAND_TYPE_MEMORY;
	r.operands[0].mem.base = ZYDIS_REGISTER_RIP;
	r.operands[0].mem.displacement = (int64_t)slot;
	r.operands[0].mem.size = 8;
	return emit_req(e, &r);
}

static int emit_jmp(struct emit *e, uintptr_t to)
{
	ZydisEncoderRequest r;

	req_init(&r, ZYDIS_MNEMONIC_JMP, 1);
	r.branch_type = ZYDIS_BRANCH_TYPE_NEAR;
	r.branch_width = ZYDIS_BRANCH_WIDTH_32;
	r.operands[0].type = ZYDIS_OPERAND_TYPE_IMMEDIATE;
	r.operands[0].imm.u = to;
	return emit_req(e, &r);
}

static bool abs_of(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op,
		   uintptr_t at, uint64_t *v)
{
	return ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(in, op, at, v));
}

static bool same_operand(const ZydisDecodedInstruction *ia, const ZydisDecodedOperand *a,
			 uintptr_t pa, const ZydisDecodedInstruction *ib,
			 const ZydisDecodedOperand *b, uintptr_t pb)
{
	uint64_t va, vb;

	if (a->type != b->type)
		return false;
	/* immediates may change width (rel8 to rel32, imm32 to imm8): compare values */
	if (a->type != ZYDIS_OPERAND_TYPE_IMMEDIATE && a->size != b->size)
		return false;
	switch (a->type) {
	case ZYDIS_OPERAND_TYPE_REGISTER:
		return a->reg.value == b->reg.value;
	case ZYDIS_OPERAND_TYPE_MEMORY:
		if (a->mem.type != b->mem.type || a->mem.segment != b->mem.segment ||
		    a->mem.base != b->mem.base || a->mem.index != b->mem.index ||
		    a->mem.scale != b->mem.scale)
			return false;
		if (a->mem.base != ZYDIS_REGISTER_RIP)
			return a->mem.disp.value == b->mem.disp.value;
		return abs_of(ia, a, pa, &va) && abs_of(ib, b, pb, &vb) && va == vb;
	case ZYDIS_OPERAND_TYPE_IMMEDIATE:
		if (a->imm.is_relative != b->imm.is_relative)
			return false;
		if (!a->imm.is_relative)
			return a->imm.value.u == b->imm.value.u;
		return abs_of(ia, a, pa, &va) && abs_of(ib, b, pb, &vb) && va == vb;
	case ZYDIS_OPERAND_TYPE_POINTER:
		return a->ptr.segment == b->ptr.segment && a->ptr.offset == b->ptr.offset;
	default:
		return true;
	}
}

#define SEMANTIC_PREFIXES (ZYDIS_ATTRIB_HAS_LOCK | ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE | \
			   ZYDIS_ATTRIB_HAS_REPNE | ZYDIS_ATTRIB_HAS_XACQUIRE | \
			   ZYDIS_ATTRIB_HAS_XRELEASE)

static bool same_insn(const ZydisDecodedInstruction *ia, const ZydisDecodedOperand *a,
		      uintptr_t pa, const ZydisDecodedInstruction *ib,
		      const ZydisDecodedOperand *b, uintptr_t pb)
{
	if (ia->mnemonic != ib->mnemonic || ia->operand_count != ib->operand_count ||
	    ia->operand_width != ib->operand_width || ia->address_width != ib->address_width ||
	    (ia->attributes & SEMANTIC_PREFIXES) != (ib->attributes & SEMANTIC_PREFIXES))
		return false;
	for (unsigned i = 0; i < ia->operand_count; i++)
		if (!same_operand(ia, &a[i], pa, ib, &b[i], pb))
			return false;
	return true;
}

/* Re-encode the instruction at `a` into the trampoline, absolute targets kept;
 * check that what was written decodes back to the same instruction. */
static int relocate(struct planner *p, uintptr_t a, struct emit *e, size_t *len)
{
	const struct decoded *d = decode_at(p, a);
	const ZydisDecodedInstruction *in = d ? &d->in : NULL;
	const ZydisDecodedOperand *op = d ? d->op : NULL;
	ZydisDecodedInstruction out;
	ZydisDecodedOperand oop[ZYDIS_MAX_OPERAND_COUNT];
	ZydisEncoderRequest r;
	size_t at = e->off;
	uint64_t v;

	if (!d || !ZYAN_SUCCESS(ZydisEncoderDecodedInstructionToEncoderRequest(
			  in, op, in->operand_count_visible, &r)))
		return -EINVAL;
	for (unsigned i = 0; i < in->operand_count_visible; i++) {
		if (op[i].type == ZYDIS_OPERAND_TYPE_MEMORY && op[i].mem.base == ZYDIS_REGISTER_RIP) {
			if (!abs_of(in, &op[i], a, &v))
				return -EINVAL;
			r.operands[i].mem.displacement = (int64_t)v;
		} else if (op[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op[i].imm.is_relative) {
			if (!abs_of(in, &op[i], a, &v))
				return -EINVAL;
			r.operands[i].imm.u = v;
			/* let the encoder widen rel8 to rel32 */
			r.branch_type = ZYDIS_BRANCH_TYPE_NONE;
			r.branch_width = ZYDIS_BRANCH_WIDTH_NONE;
		}
	}
	if (emit_req(e, &r))
		return -ERANGE;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&p->dec, e->buf + at, e->off - at, &out, oop)) ||
	    out.length != e->off - at || !same_insn(in, op, a, &out, oop, e->base + at))
		return -EINVAL;
	*len = in->length;
	return 0;
}

static int emit_copy(struct emit *e, const uint8_t *bytes, size_t n)
{
	if (e->cap - e->off < n)
		return -ERANGE;
	memcpy(e->buf + e->off, bytes, n);
	e->off += n;
	return 0;
}

static int encode_fixed(struct planner *p)
{
	struct emit down = { .buf = p->lea_down, .cap = sizeof p->lea_down };
	struct emit up = { .buf = p->lea_up, .cap = sizeof p->lea_up };
	/* step over the red zone; lea leaves the flags alone */
	int r = emit_lea_rsp(&down, -128);

	r = r ? r : emit_lea_rsp(&up, 128);
	p->n_down = down.off;
	p->n_up = up.off;
	return r;
}

static int encode_tramp(struct planner *p, struct patch_site *s, struct emit *e)
{
	uintptr_t a = s->lo;
	size_t len;
	int r = 0;

	s->tramp = e->off;
	for (unsigned j = 0; !r && j < s->n_pre; j++, a += len)
		r = relocate(p, a, e, &len);
	r = r ? r : emit_copy(e, p->lea_down, p->n_down);
	r = r ? r : emit_call_slot(e, e->base);
	r = r ? r : emit_copy(e, p->lea_up, p->n_up);
	a = s->addr + SYSCALL_LEN;
	for (unsigned j = 0; !r && j < s->n_post; j++, a += len)
		r = relocate(p, a, e, &len);
	r = r ? r : emit_jmp(e, s->hi);
	s->tramp_len = e->off - s->tramp;
	return r;
}

/* Sites whose trampoline can not be encoded are dropped (skipped_other). */
static int encode(struct planner *p)
{
	struct patch_plan *pl = p->plan;
	struct emit e = { .buf = p_calloc(1, p->bound), .cap = p->bound, .base = pl->region };
	unsigned j = 0;

	if (!e.buf)
		return -ENOMEM;
	if (encode_fixed(p)) {
		ops->release(e.buf);
		return -EINVAL;
	}
	memcpy(e.buf, &p->cfg->stub, PATCH_SLOT_SIZE);
	e.off = PATCH_SLOT_SIZE;
	for (unsigned i = 0; i < pl->n_site; i++) {
		size_t off = e.off;

		if (encode_tramp(p, &pl->site[i], &e)) {
			e.off = off;
			pl->st.patched--;
			pl->st.skipped_other++;
			continue;
		}
		pl->site[j++] = pl->site[i];
	}
	pl->n_site = j;
	pl->code = e.buf;
	pl->code_len = e.off;
	return 0;
}

/* ---- placing the trampoline region ---- */

struct placement {
	uintptr_t lo, hi;          /* the module's reach: sites in [lo, hi) */
	size_t size;
	uintptr_t avoid[2][2];     /* room the stack and the heap grow into */
	uintptr_t best, dist;
};

static void place_try(struct placement *pl, uintptr_t a)
{
	uintptr_t b = a + pl->size, d;

	if (a < (1UL << 20) || b > USER_TOP || a + REACH < pl->hi || b > pl->lo + REACH)
		return;
	for (unsigned i = 0; i < 2; i++)
		if (a < pl->avoid[i][1] && b > pl->avoid[i][0])
			return;
	d = b <= pl->lo ? pl->lo - b : a - pl->hi;
	if (d < pl->dist) {
		pl->best = a;
		pl->dist = d;
	}
}

/* The free address nearest to [lo, hi), 0 if none within reach. */
static uintptr_t place_region(const struct maps *m, uintptr_t lo, uintptr_t hi, size_t size)
{
	struct placement pl = { .lo = lo, .hi = hi, .size = size, .dist = UINTPTR_MAX };
	uintptr_t brk = (uintptr_t)p_sys(SYS_brk, 0, 0, 0, 0, 0, 0), prev = 0, guard = STACK_GUARD_MAX;
	struct rlimit rl;

	if (!p_sys(SYS_prlimit64, 0, RLIMIT_STACK, 0, &rl, 0, 0) && rl.rlim_cur < STACK_GUARD_MAX)
		guard = page_up(rl.rlim_cur);
	pl.avoid[1][0] = brk;
	pl.avoid[1][1] = brk + HEAP_GUARD;
	for (unsigned i = 0; i < m->n; i++)
		if (m->v[i].kind == VMA_STACK) {
			pl.avoid[0][0] = m->v[i].lo > guard ? m->v[i].lo - guard : 0;
			pl.avoid[0][1] = m->v[i].lo;
		}
	for (unsigned i = 0; i <= m->n; i++) {
		uintptr_t next = i < m->n ? m->v[i].lo : USER_TOP;

		if (next > prev && next - prev >= size) {
			place_try(&pl, prev);
			place_try(&pl, next - size);
		}
		if (i < m->n && m->v[i].hi > prev)
			prev = m->v[i].hi;
	}
	return pl.best;
}

/* Map the region near the module; on a lost race, look again once. */
static int region_map(struct maps *m, uintptr_t lo, uintptr_t hi, size_t size, uintptr_t *out)
{
	for (int tries = 0; tries < 2; tries++) {
		int r = tries ? maps_read(m) : 0;
		uintptr_t a = r ? 0 : place_region(m, lo, hi, size);
		long q;

		if (r)
			return r;
		if (!a)
			return -ENOMEM;
		q = p_mmap(a, size, PROT_READ | PROT_WRITE, MAP_FIXED_NOREPLACE);
		if (q == (long)a) {
			*out = a;
			return 0;
		}
		if (q >= 0)
			p_munmap(q, size);  /* old kernel: the hint was ignored */
		else if (q != -EEXIST)
			return (int)q;
	}
	return -EEXIST;
}

/* ---- writing the sites ---- */

/* The vDSO can not be made writable: replace it by an anonymous copy at the
 * same address, so its RIP-relative references to vvar still hold. */
static int vdso_replace(const struct vma *v)
{
	size_t n = v->hi - v->lo;
	void *copy = ops->alloc(n);
	long q;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, (void *)v->lo, n);
	q = p_mmap(v->lo, n, PROT_READ | PROT_WRITE, MAP_FIXED);
	if (q < 0) {
		ops->release(copy);
		return (int)q;
	}
	memcpy((void *)q, copy, n);
	ops->release(copy);
	return 0;
}

/* Make the mappings over [lo, hi) writable (open) or restore them. */
static int text_access(const struct maps *m, uintptr_t lo, uintptr_t hi, bool open)
{
	for (unsigned i = 0; i < m->n; i++) {
		const struct vma *v = &m->v[i];
		uintptr_t a = v->lo > lo ? v->lo : lo, b = v->hi < hi ? v->hi : hi;
		int prot = v->prot, r;

		if (a >= b)
			continue;
		if (v->kind == VMA_VDSO) {
			int r = open ? vdso_replace(v) : 0;

			if (r)
				return r;
			a = v->lo;
			b = v->hi;
			prot = open ? PROT_READ | PROT_WRITE : PROT_READ | PROT_EXEC;
		} else if (open && !cfg_now->wx_apart) {
			/* keep X: the patcher's own libc may live on these pages */
			prot |= PROT_WRITE | PROT_EXEC;
		} else if (open) {
			prot = (prot | PROT_WRITE) & ~PROT_EXEC;
		}
		if ((r = p_mprotect(a, b - a, prot)))
			return r;
	}
	return 0;
}

/* jmp trampoline; nops.  Encoded before any site is touched. */
static int encode_site(const struct patch_plan *pl, const struct patch_site *s, uint8_t *buf)
{
	struct emit e = { .buf = buf, .cap = SITE_MAX, .base = s->lo };

	if (emit_jmp(&e, pl->region + s->tramp) || e.off != JMP_LEN)
		return -ERANGE;
	if (s->hi - s->lo > JMP_LEN &&
	    !ZYAN_SUCCESS(ZydisEncoderNopFill(buf + JMP_LEN, s->hi - s->lo - JMP_LEN)))
		return -EINVAL;
	return 0;
}

static int write_sites(const struct patch_plan *pl, const struct maps *m)
{
	uint8_t (*bytes)[SITE_MAX] = ops->alloc((size_t)pl->n_site * SITE_MAX);
	const struct patch_site *s = pl->site;
	uintptr_t lo = page_down(s[0].lo), hi = page_up(s[pl->n_site - 1].hi);
	int r = bytes ? 0 : -ENOMEM, closed;

	for (unsigned i = 0; !r && i < pl->n_site; i++)
		r = encode_site(pl, &s[i], bytes[i]);
	if (r) {
		ops->release(bytes);
		return r;
	}
	r = text_access(m, lo, hi, true);
	for (unsigned i = 0; !r && i < pl->n_site; i++) {
		/* the jmp last: a site is either whole or untouched */
		memcpy((void *)(s[i].lo + JMP_LEN), bytes[i] + JMP_LEN, s[i].hi - s[i].lo - JMP_LEN);
		memcpy((void *)s[i].lo, bytes[i], JMP_LEN);
	}
	closed = text_access(m, lo, hi, false);
	ops->release(bytes);
	return r ? r : closed;
}

static int commit(struct planner *p, struct maps *m)
{
	struct patch_plan *pl = p->plan;
	size_t size = page_up(p->bound);
	int r = region_map(m, pl->site[0].lo, pl->site[pl->n_site - 1].hi, size, &pl->region);

	r = r ? r : encode(p);
	if (!r && pl->n_site) {
		memcpy((void *)pl->region, pl->code, pl->code_len);
		if (page_up(pl->code_len) < size)
			p_munmap(pl->region + page_up(pl->code_len), size - page_up(pl->code_len));
		size = page_up(pl->code_len);
		r = p_mprotect(pl->region, size, PROT_READ | PROT_EXEC);
		if (!r && p->cfg->on_region)
			p->cfg->on_region(p->cfg->ctx, pl->region, pl->region + size);
		r = r ? r : write_sites(pl, m);
	} else if (pl->region) {
		p_munmap(pl->region, size);
	}
	return r;
}

/* ---- the interface ---- */

static void stats_add(struct patch_stats *to, const struct patch_stats *from)
{
	if (!to)
		return;
	to->modules += from->modules;
	to->candidates += from->candidates;
	to->sites += from->sites;
	to->patched += from->patched;
	to->skipped_target += from->skipped_target;
	to->skipped_other += from->skipped_other;
	to->native_sigreturn += from->native_sigreturn;
	to->native_allowed += from->native_allowed;
}

void patch_plan_free(struct patch_plan *plan)
{
	ops->release(plan->code);
	ops->release(plan->site);
	memset(plan, 0, sizeof *plan);
}

static int patch_module(const struct patch_config *cfg, const struct module *mod,
			uintptr_t lo, uintptr_t hi, struct patch_stats *st, struct maps *m)
{
	struct patch_plan plan;
	struct planner p;
	int r;

	r = planner_init(&p, cfg, mod, lo, hi, &plan, m);
	r = r ? r : analyse(&p);
	if (!r && plan.n_site)
		r = commit(&p, m);
	if (!r)
		stats_add(st, &plan.st);
	planner_free(&p);
	patch_plan_free(&plan);
	return r;
}

int patch_plan_range(const struct patch_config *cfg, uintptr_t lo, uintptr_t hi,
		     uintptr_t region, struct patch_plan *plan)
{
	struct module mod;
	struct planner p;
	struct maps m = {0};
	int r;

	use_ops(cfg);
	r = lo < hi ? module_find(lo, hi, &mod, &m) : -EINVAL;
	memset(plan, 0, sizeof *plan);
	if (r) {
		ops->release(m.v);
		return r;
	}
	r = planner_init(&p, cfg, &mod, lo, hi, plan, &m);
	ops->release(m.v);
	plan->region = region;
	r = r ? r : analyse(&p);
	r = r ? r : encode(&p);
	planner_free(&p);
	if (r)
		patch_plan_free(plan);
	return r;
}

int patch_range(const struct patch_config *cfg, uintptr_t lo, uintptr_t hi,
		struct patch_stats *st)
{
	struct module mod;
	struct maps m = {0};
	int r;

	use_ops(cfg);
	r = lo < hi ? module_find(lo, hi, &mod, &m) : -EINVAL;
	if (!r && mod.phdr) { /* what of [lo, hi) is the object's code */
		lo = lo > mod.lo ? lo : mod.lo;
		hi = hi < mod.hi ? hi : mod.hi;
	}
	r = r ? r : patch_module(cfg, &mod, lo, hi, st, &m);
	ops->release(m.v);
	return r;
}

int patch_process(const struct patch_config *cfg, struct patch_stats *st)
{
	struct mod_list l = {0};
	struct maps m = {0};
	int r;

	use_ops(cfg);
	r = modules_collect(&l, !cfg->ops, 0, 0, &m);
	for (unsigned i = 0; !r && i < l.n; i++)
		if (!cfg->want || cfg->want(cfg->ctx, l.m[i].lo, l.m[i].hi))
			r = patch_module(cfg, &l.m[i], l.m[i].lo, l.m[i].hi, st, &m);
	ops->release(m.v);
	ops->release(l.m);
	return r;
}
