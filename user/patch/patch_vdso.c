/* The vDSO, for the patcher (see patch_vdso.h). */
#include <errno.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include "user/patch/patch_sys.h"
#include "user/patch/patch_vdso.h"

/* The vDSO is in dl_iterate_phdr's list for dynamic programs; make sure of it
 * for static ones too.  Its headers are read like any object's (elf_read),
 * within its first page. */
int vdso_module_add(struct mod_list *l)
{
	uintptr_t eh = getauxval(AT_SYSINFO_EHDR), phdr;
	struct dl_phdr_info info = {0};
	struct elf_view v;
	unsigned phnum;

	if (!eh)
		return 0;
	for (unsigned i = 0; i < l->n; i++)
		if ((uintptr_t)l->m[i].phdr - eh < PAGE)
			return 0;
	elf_view_init(&v, (const void *)eh, PAGE);
	if (!elf_mapped_phdrs(&v, eh, &phdr, &phnum))
		return 0;
	info.dlpi_phdr = (const void *)phdr;
	info.dlpi_phnum = (ElfW(Half))phnum;
	for (unsigned i = 0; i < phnum; i++)
		if (info.dlpi_phdr[i].p_type == PT_LOAD) {
			info.dlpi_addr = eh - page_down(info.dlpi_phdr[i].p_vaddr);
			break;
		}
	modules_add_phdrs(&info, sizeof info, l);
	return l->err;
}

/* The vDSO can not be made writable: replace it by an anonymous copy at the
 * same address, so its RIP-relative references to vvar still hold. */
int vdso_replace(const struct vma *v)
{
	size_t n = v->hi - v->lo;
	void *copy = p_alloc(n);
	long q;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, (void *)v->lo, n);
	q = p_mmap(v->lo, n, PROT_READ | PROT_WRITE, MAP_FIXED);
	if (q < 0) {
		p_free(copy);
		return (int)q;
	}
	memcpy((void *)q, copy, n);
	p_free(copy);
	return 0;
}


bool vdso_holds(const struct maps *m, uintptr_t a)
{
	for (unsigned i = 0; i < m->n; i++)
		if (a >= m->v[i].lo && a < m->v[i].hi)
			return m->v[i].kind == VMA_VDSO;
	return false;
}
