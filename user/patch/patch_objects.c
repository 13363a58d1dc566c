/* The loaded objects the patcher works on (see patch_objects.h). */
#include <errno.h>
#include <stddef.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include "user/patch/patch_objects.h"
#include "user/patch/patch_sys.h"
#include "user/patch/patch_vdso.h"

int modules_add_phdrs(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct mod_list *l = arg;

	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !ph->p_memsz)
			continue;
		if (p_grow(&l->m, &l->cap, l->n, sizeof *l->m)) {
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
	ElfW(Half) type;

	for (unsigned i = 0; i < m->n && !h; i++)
		if (m->v[i].ino == x->ino && m->v[i].dev_major == x->dev_major &&
		    m->v[i].dev_minor == x->dev_minor && m->v[i].off == 0 &&
		    (m->v[i].prot & PROT_READ) && m->v[i].lo <= x->lo)
			h = &m->v[i];
	if (!h)
		return;
	/* the file's headers, read within the mapping that holds them */
	elf_view_init(&v, (const void *)h->lo, h->hi - h->lo);
	if (!elf_mapped_phdrs(&v, h->lo, &phdr, &phnum) ||
	    !elf_view_get(&v, h->lo + offsetof(ElfW(Ehdr), e_type), &type, sizeof type))
		return;
	info.dlpi_phdr = (const void *)phdr;
	info.dlpi_phnum = (ElfW(Half))phnum;
	for (unsigned i = 0; i < phnum; i++)
		if (info.dlpi_phdr[i].p_type == PT_LOAD) {
			if (type == ET_DYN)
				info.dlpi_addr = h->lo - page_down(info.dlpi_phdr[i].p_vaddr);
			break;
		}
	modules_add_phdrs(&info, sizeof info, l);
	/* code segments the file claims but that are not there (or wrap) are
	 * not scanned */
	for (unsigned i = n0; i < l->n; i++)
		if (l->m[i].hi <= l->m[i].lo || !maps_readable(m, l->m[i].lo, l->m[i].hi))
			l->m[i--] = l->m[--l->n];
}

static bool module_covers(const struct mod_list *l, uintptr_t lo, uintptr_t hi)
{
	for (unsigned i = 0; i < l->n; i++)
		if (lo < l->m[i].hi && hi > l->m[i].lo)
			return true;
	return false;
}

/* The vDSO is in dl_iterate_phdr's list for dynamic programs; make sure of
 * it for static ones too.  Its code is added to l unless it is there
 * already.  0 or -errno. */
static int vdso_module_add(struct mod_list *l)
{
	uintptr_t eh = getauxval(AT_SYSINFO_EHDR);
	struct dl_phdr_info info;

	if (!eh)
		return 0;
	for (unsigned i = 0; i < l->n; i++)
		if ((uintptr_t)l->m[i].phdr - eh < PAGE)
			return 0;
	if (!vdso_phdr_info(eh, &info))
		return 0;
	modules_add_phdrs(&info, sizeof info, l);
	return l->err;
}

/* Everything executable: ld.so's list (unless the patcher runs inside the
 * sandbox, where libc's locks and thread pointer are not its own), the vDSO,
 * and file mappings with an ELF header that ld.so does not know.  The maps
 * read on the way stay in *m for the commits (the caller releases m->v):
 * reading them costs ~0.1 ms a time, and a stale copy is safe there (see
 * region_map, which reads them again when a place is taken). */
int modules_collect(struct mod_list *l, bool use_ldso, uintptr_t lo, uintptr_t hi,
		    struct maps *m)
{
	int r = 0;

	if (use_ldso)
		dl_iterate_phdr(modules_add_phdrs, l);
	if (l->err || (r = vdso_module_add(l)) || (r = maps_read(m)))
		return l->err ? l->err : r;
	for (unsigned i = 0; i < m->n && !l->err; i++)
		if ((m->v[i].prot & PROT_EXEC || (m->v[i].lo < hi && m->v[i].hi > lo)) &&
		    m->v[i].ino && !module_covers(l, m->v[i].lo, m->v[i].hi))
			add_from_header(l, m, &m->v[i]);
	return l->err;
}

int module_find(uintptr_t lo, uintptr_t hi, struct module *out, struct maps *m)
{
	struct mod_list l = {0};
	int r = modules_collect(&l, !patch_cfg_now->ops, lo, hi, m);

	*out = (struct module){ .lo = lo, .hi = hi };
	for (unsigned i = 0; !r && i < l.n; i++)
		if (lo < l.m[i].hi && hi > l.m[i].lo)
			*out = l.m[i];
	p_free(l.m);
	return r;
}

const ElfW(Phdr) *module_phdr(const struct module *m, unsigned type)
{
	for (unsigned i = 0; m->phdr && i < m->phnum; i++)
		if (m->phdr[i].p_type == type)
			return &m->phdr[i];
	return NULL;
}

/* Every table the file points at is read through this view. */
void module_view(const struct module *mod, const struct maps *m, struct elf_view *v)
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
