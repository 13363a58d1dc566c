/* The vDSO, for the patcher (see patch_vdso.h). */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include "user/patch/elf_read.h"
#include "user/patch/patch_sys.h"
#include "user/patch/patch_vdso.h"

/* The vDSO's program headers, from the auxiliary vector: for static
 * programs, whose dl_iterate_phdr does not list it.  Its headers are read
 * like any object's (elf_read), within its first page.  False if there is
 * none, or its headers do not read. */
bool vdso_phdr_info(uintptr_t eh, struct dl_phdr_info *info)
{
	uintptr_t phdr;
	struct elf_view v;
	unsigned phnum;

	*info = (struct dl_phdr_info){0};
	elf_view_init(&v, (const void *)eh, PAGE);
	if (!elf_mapped_phdrs(&v, eh, &phdr, &phnum))
		return false;
	info->dlpi_phdr = (const void *)phdr;
	info->dlpi_phnum = (uint16_t)phnum; /* ElfW(Half), in every class */
	for (unsigned i = 0; i < phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			info->dlpi_addr = eh - page_down(info->dlpi_phdr[i].p_vaddr);
			break;
		}
	return true;
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
