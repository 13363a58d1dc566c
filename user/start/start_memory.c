/* Start-up's memory (user/start/start.h): the region of T's alternate
 * stacks and the secure pages, the mailboxes, the ranges U may never
 * touch, and the secure pages sealed once T runs. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compat/compat.h"
#include "user/start/start.h"
#include "user/untrusted/runtime.h"

/* T's alternate stacks and the secure pages, in one region aligned so that
 * T's interrupt handler can find its secure page from its stack pointer
 * (secure_mem.h).  Returns the region's address, 0 on failure. */
static uintptr_t map_region(int smfd)
{
	size_t len = SM_ALT_REGION + S_LEN, resv = len + SM_REGION_ALIGN;
	char *r = mmap(NULL, resv, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return 0;
	uintptr_t base = ((uintptr_t)r + SM_REGION_ALIGN - 1) & ~(uintptr_t)(SM_REGION_ALIGN - 1);
	if (mmap((void *)base, SM_ALT_REGION, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ||
	    mmap((void *)(base + SM_ALT_REGION), S_LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 smfd, 0) == MAP_FAILED) {
		munmap(r, resv);
		return 0;
	}
	if (base > (uintptr_t)r)
		munmap(r, base - (uintptr_t)r);
	munmap((void *)(base + len), (uintptr_t)r + resv - (base + len));
	return base;
}

void start_add_range(void *ctx, uintptr_t lo, uintptr_t hi)
{
	struct secure_page *sp = ctx;
	if (sp->nranges < SM_MAX_RANGES) {
		sp->ranges[sp->nranges].lo = lo & ~(uintptr_t)(SM_PAGE - 1);
		sp->ranges[sp->nranges].hi = (hi + SM_PAGE - 1) & ~(uintptr_t)(SM_PAGE - 1);
	}
	sp->nranges++;
}

/* S for every slot: secure pages in a sealable memfd, mailboxes shared
 * anonymous (B sees both) */
int start_map_secure_memory(struct start *s)
{
	s->smfd = memfd_create("sandpit-secure", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (s->smfd < 0 || ftruncate(s->smfd, (off_t)S_LEN) < 0 ||
	    !(s->region = map_region(s->smfd)) ||
	    (s->mb = mmap(NULL, MB_LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
			  0)) == MAP_FAILED)
		return start_fail(-errno, "cannot allocate secure memory: %s", strerror(errno));
	s->sp = (struct secure_page *)(s->region + SM_ALT_REGION);
	return 0;
}

void start_unmap_secure_memory(struct start *s)
{
	if (s->mb != MAP_FAILED)
		munmap(s->mb, MB_LEN);
	if (s->region)
		munmap((void *)s->region, SM_ALT_REGION + S_LEN);
	if (s->smfd >= 0)
		close(s->smfd);
	s->mb = MAP_FAILED;
	s->region = 0;
	s->sp = NULL;
	s->smfd = -1;
}

/* What U may never write, remap or re-protect (invariant 3): S, the
 * mailboxes, the T table, sandpit's code and its handler facts. */
void start_protect_ranges(struct start *s)
{
	struct secure_page *sp = s->sp;

	start_add_range(sp, s->region, (uintptr_t)sp + S_LEN);
	start_add_range(sp, (uintptr_t)s->mb, (uintptr_t)s->mb + MB_LEN);
	start_add_range(sp, (uintptr_t)s->table, (uintptr_t)s->table + s->table_len);
	start_add_range(sp, (uintptr_t)__start_sandpit_text, (uintptr_t)__stop_sandpit_text);
	start_add_range(sp, (uintptr_t)&sandpit_ro_page, (uintptr_t)&sandpit_ro_page + SM_PAGE);
	sandpit_ro_page.ro = (struct sandpit_ro){ .t_alt_lo = s->region,
						  .t_alt_hi = s->region + SM_ALT_REGION,
						  .pid = s->pid };
}

/* The secure pages sealed and read-only in P, the handler facts too. */
void start_seal_secure_memory(struct start *s)
{
	/* without F_SEAL_FUTURE_WRITE (before 5.1) the read-only mapping and
	 * T's range checks are what keeps U from making it writable */
	if (compat_has(COMPAT_MEMFD_FUTURE_WRITE) &&
	    fcntl(s->smfd, F_ADD_SEALS,
		  F_SEAL_FUTURE_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		start_die("sealing secure memory", -errno);
	if (mmap(s->sp, S_LEN, PROT_READ, MAP_SHARED | MAP_FIXED, s->smfd, 0) != s->sp)
		start_die("mapping secure memory read-only", -errno);
	close(s->smfd);
	if (mprotect(&sandpit_ro_page, SM_PAGE, PROT_READ) < 0)
		start_die("making sandpit's handler facts read-only", -errno);
}
