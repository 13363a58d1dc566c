/* Code that becomes executable after start-up (a library the program's
 * ld.so or dlopen maps, a JIT's pages) is patched before any of it runs.
 *
 * The entry maps it without PROT_EXEC and notes the range as pending; the
 * first instruction fetch there faults, and sandpit's SIGSEGV handler
 * patches the range (by then ld.so has mapped the whole object, so its
 * unwind tables are there to guide the patcher) and only then gives it the
 * protection the program asked for.  Memory asked writable and executable at
 * once (a JIT's) is left unpatched (writable_code).
 *
 * This runs inside the sandbox, in U, where libc belongs to the program
 * (its %fs, its locks, its brk): the patcher gets an arena of its own, a
 * stack of its own, and makes its calls through the sandpit entry.  None of
 * this is a security boundary: code the patcher misses is killed by strict
 * mode or caught by filter mode's SIGSYS net. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "user/patch/patch.h"
#include "user/untrusted/runtime.h"

#define PAGE 4096UL
#define NPEND 512
#define NDONE 64
#define ARENA_LEN (64UL << 20)
#define STACK_LEN (512UL << 10)

struct range {
	uintptr_t lo, hi;
	int prot;
};

static struct range pend[NPEND], done[NDONE];
static unsigned npend, ndone;
static int owner;             /* tid holding the lock, 0 if none */
static uint8_t *arena, *arena_top, *stack;
static struct patch_config cfg;
/* sandpit_entry, given at start-up: the patcher's calls take the entry */
static long (*entry)(long nr, long a0, long a1, long a2, long a3, long a4, long a5);
int sandpit_exec_patch_on;

static uintptr_t page_up(uintptr_t a) { return (a + PAGE - 1) & ~(PAGE - 1); }
static int failed(long r) { return (unsigned long)r > -4096UL; }

/* The patcher's own calls inside the sandbox go through the entry, as the
 * program's do, and the policy judges them: it makes nothing the program
 * could not make itself (the code it makes executable is the program's,
 * mapped by a call the policy allowed; mmap and mprotect are what the
 * program's ld.so needs natively too).  A call the policy refuses whole
 * (deny, kill, or its default) is not made at all: the patcher does
 * without it (sched_yield while it waits, the madvise of its arena, the
 * munmap of a region's unused end, its SANDPIT_DEBUG lines), and a
 * policy's kill is never the patcher's doing.  /proc/self/maps is read
 * through T (sandpit_maps), outside the policy. */
static int refused_whole(long nr)
{
	const struct tt_entry *e = &u_self()->table->entries[nr];
	return e->cls == TT_DENY || e->cls == TT_KILL;
}

static long entry_sys(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	if ((unsigned long)nr >= TT_MAX_NR || refused_whole(nr))
		return -EPERM;
	return entry(nr, a0, a1, a2, a3, a4, a5);
}

/* The lock holds the program's signal handlers off its thread (as a
 * request in flight does, depth; program_handler asks sandpit_exec_held
 * too): a handler run while its thread holds it would make its own
 * mapping calls straight, unpatched and unnoted (owner == tid), find its
 * fetch of pending code the program's SIGSEGV, or leave by longjmp with
 * the lock held for ever.  Those that came meanwhile run at unlock. */
static void lock(struct u_state *st)
{
	__atomic_store_n(&st->depth, st->depth + 1, __ATOMIC_SEQ_CST);
	for (unsigned n = 0; !__atomic_compare_exchange_n(&owner, &(int){ 0 }, st->tid, 0,
							  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED); n++) {
		cpu_relax();
		if (n % 1024 == 1023)
			entry_sys(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
	}
}

static void unlock(struct u_state *st)
{
	__atomic_store_n(&owner, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&st->depth, st->depth - 1, __ATOMIC_SEQ_CST);
	if (!st->depth && __atomic_load_n(&st->ndeferred, __ATOMIC_SEQ_CST))
		u_run_deferred(st);
}

int sandpit_exec_held(int tid) { return __atomic_load_n(&owner, __ATOMIC_SEQ_CST) == tid; }

/* ---- what the patcher runs on ---- */

static void *arena_alloc(size_t n)
{
	n = (n + 31) & ~15UL;
	if ((size_t)(arena + ARENA_LEN - arena_top) < n)
		return NULL;
	*(size_t *)arena_top = n - 16;
	arena_top += n;
	return arena_top - n + 16;
}

static void *arena_realloc(void *p, size_t n)
{
	size_t old = p ? *(size_t *)((uint8_t *)p - 16) : 0;
	if (n <= old)
		return p;
	void *q = arena_alloc(n);
	if (q && p)
		memcpy(q, p, old);
	return q;
}

static void arena_release(void *p) { (void)p; } /* all at once, after each patch */

/* /proc/self/maps, at off: T's pread on the descriptor P opened before
 * the sandbox (SANDPIT_NR_MAPS_READ) */
static long sandpit_maps(char *buf, size_t len, long off)
{
	long a[6] = { (long)buf, (long)len, off };
	return u_call_trusted(SANDPIT_NR_MAPS_READ, a);
}

/* while this thread writes the sites, its T need not spin for it (and
 * take, on another CPU, the TLB flush of each copy-on-write) */
static void u_busy(int on)
{
	__atomic_store_n(&u_self()->mb->u_busy, (uint32_t)on, __ATOMIC_RELAXED);
}

static const struct patch_ops runtime_ops = { arena_alloc, arena_realloc, arena_release, entry_sys,
					      u_busy, sandpit_maps };

int sandpit_exec_patch_init(const struct patch_config *start_cfg,
			    long (*entry_fn)(long nr, long a0, long a1, long a2, long a3, long a4, long a5))
{
	entry = entry_fn;
	arena = mmap(NULL, ARENA_LEN + STACK_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (arena == MAP_FAILED)
		return -errno;
	arena_top = arena;
	stack = arena + ARENA_LEN;
	cfg = *start_cfg;
	cfg.ops = &runtime_ops;
	cfg.wx_apart = 1;
	cfg.on_region = NULL; /* secure memory is sealed: these are not protected */
	return 0;
}

void sandpit_exec_patch_release(void)
{
	if (arena && arena != MAP_FAILED)
		munmap(arena, ARENA_LEN + STACK_LEN);
	arena = arena_top = stack = NULL;
}

/* ---- the pending ranges ---- */

/* Forget [lo, hi) in v (its protection changed or it went away). */
static void trim(struct range *v, unsigned *n, unsigned cap, uintptr_t lo, uintptr_t hi)
{
	for (unsigned i = 0; i < *n; i++) {
		struct range *e = &v[i];
		if (hi <= e->lo || lo >= e->hi)
			continue;
		if (lo > e->lo && hi < e->hi && *n < cap) { /* a hole in the middle */
			v[(*n)++] = (struct range){ hi, e->hi, e->prot };
			e->hi = lo;
		} else if (lo > e->lo) {
			e->hi = lo;
		} else if (hi < e->hi) {
			e->lo = hi;
		} else {
			*e = v[--*n];
			i--;
		}
	}
}

static void forget(uintptr_t lo, uintptr_t hi)
{
	trim(pend, &npend, NPEND, lo, hi);
	trim(done, &ndone, NDONE, lo, hi);
}

static int find(const struct range *v, unsigned n, uintptr_t a)
{
	for (unsigned i = 0; i < n; i++)
		if (a >= v[i].lo && a < v[i].hi)
			return (int)i;
	return -1;
}

/* Writable and executable memory, which JIT runtimes ask for: the program
 * may rewrite it at any time, so nothing patched there would stay patched,
 * and a sweep of what is mostly a JIT's data would patch bytes that are no
 * instruction.  It is given as asked and never patched: a call made from
 * it is one the patcher missed, which strict mode's kernel kills (but
 * read, write, exit and sigreturn, which U makes natively anyway) and
 * filter mode's filter decides or traps into the entry.  sandpit's own
 * pages stay out of reach (the guard's RANGE_FREE on both calls).  mmap
 * never maps executable memory (the guard's rule): the mapping is made
 * writable, then writable and executable by mprotect. */
/* with the lock held (sandpit_exec_call) */
static void note_done(uintptr_t lo, uintptr_t hi, int prot)
{
	if (ndone == NDONE)
		ndone = 0; /* only a hint for threads that waited */
	done[ndone++] = (struct range){ lo, hi, prot };
}

/* With the lock held.  A fetch that faulted on a page pending before this
 * call waits for the lock, then finds the page done: it runs again, from
 * memory that is executable now, where a range only forgotten would have
 * been the program's SIGSEGV. */
static long writable_code(long nr, long a[6], long (*make)(long nr, const long a[6]))
{
	long r;
	uintptr_t lo = (uintptr_t)a[0];
	if (nr == SYS_mmap) {
		long m[6] = { a[0], a[1], a[2] & ~PROT_EXEC, a[3], a[4], a[5] };
		r = make(SYS_mmap, m);
		if (failed(r))
			return r;
		lo = (uintptr_t)r;
		long x = make(SYS_mprotect, (long[6]){ r, a[1], a[2] });
		if (failed(x)) {
			make(SYS_munmap, (long[6]){ r, a[1] });
			return x;
		}
	} else if (failed(r = make(nr, a))) {
		return r;
	}
	forget(lo, lo + page_up((uintptr_t)a[1]));
	note_done(lo, lo + page_up((uintptr_t)a[1]), (int)a[2]);
	return r;
}

/* mmap, mprotect (and pkey_mprotect, its form with a protection key),
 * munmap and mremap from the program.  make makes the call as the entry
 * would have. */
long sandpit_exec_call(long nr, long a[6], long (*make)(long nr, const long a[6]))
{
	struct u_state *st = u_self();
	int exec = (nr == SYS_mmap || nr == SYS_mprotect || nr == SYS_pkey_mprotect) &&
		   (a[2] & PROT_EXEC);
	uintptr_t lo = (uintptr_t)a[0], hi;
	long r;

	if (owner == st->tid)
		return make(nr, a); /* the patcher's own calls */
	/* the change and its record under one lock: a fetch that faults in
	 * between (sandpit_exec_fault takes the lock) never finds a page the
	 * change made not executable and not yet noted pending */
	lock(st);
	if (exec && (a[2] & PROT_WRITE)) {
		r = writable_code(nr, a, make);
		unlock(st);
		return r;
	}
	if (exec)
		a[2] &= ~PROT_EXEC;
	r = make(nr, a);
	if (failed(r) || (nr != SYS_mmap && nr != SYS_mprotect && nr != SYS_pkey_mprotect &&
			  nr != SYS_munmap && nr != SYS_mremap)) {
		unlock(st);
		return r;
	}
	if (nr == SYS_mmap)
		lo = (uintptr_t)r;
	hi = lo + page_up((uintptr_t)a[1]);
	if (nr == SYS_mremap) {
		/* what was noted of the old range goes with its pages: the new
		 * range's own notes (a page made W+X or patched there before,
		 * now data moved over it) are stale, and code still pending
		 * moves pending (a fetch there is patched, as natively it runs) */
		int i = find(pend, npend, lo);
		int prot = i >= 0 && hi <= pend[i].hi ? pend[i].prot : 0;
		uintptr_t to = (uintptr_t)r, end = to + page_up((uintptr_t)a[2]);
		forget(lo, hi);
		forget(to, end);
		if (prot && npend < NPEND)
			pend[npend++] = (struct range){ to, end, prot };
		else if (prot) /* no room: executable now, unpatched */
			make(SYS_mprotect, (long[6]){ (long)to, (long)(end - to), prot });
		unlock(st);
		return r;
	}
	forget(lo, hi);
	if (exec && npend < NPEND)
		pend[npend++] = (struct range){ lo, hi, (int)(a[2] | PROT_EXEC) };
	else if (exec) /* no room: executable now, unpatched */
		make(SYS_mprotect, (long[6]){ (long)lo, (long)(hi - lo), a[2] | PROT_EXEC });
	unlock(st);
	return r;
}

static long patch_pending(void *arg)
{
	const struct range *e = arg;
	long r = patch_range(&cfg, e->lo, e->hi, NULL);
	size_t used = (size_t)(arena_top - arena);

	arena_top = arena;
	if (used > (1UL << 20))
		entry_sys(SYS_madvise, (long)arena, (long)used, MADV_DONTNEED, 0, 0, 0);
	return r;
}

/* From the SIGSEGV handler: an instruction fetch at addr faulted.  1 if it
 * was pending code, now patched and executable (run it again), else 0. */
int sandpit_exec_fault(uintptr_t addr)
{
	struct u_state *st = u_self();
	int i, ok = 1;

	if (!sandpit_exec_patch_on || owner == st->tid)
		return 0;
	lock(st);
	i = find(pend, npend, addr);
	if (i < 0) {
		/* another thread may have patched it while this one waited */
		ok = find(done, ndone, addr) >= 0;
		unlock(st);
		return ok;
	}
	struct range e = pend[i];
	pend[i] = pend[--npend];
	sandpit_call_on_stack(stack + STACK_LEN, patch_pending, &e);
	/* the protection the program asked for; refused (the policy's
	 * mprotect), the fetch is the program's fault, as it would be from
	 * memory that is not executable, never a fault retried for ever */
	if (failed(entry_sys(SYS_mprotect, (long)e.lo, (long)(e.hi - e.lo), e.prot, 0, 0, 0))) {
		unlock(st);
		return 0;
	}
	note_done(e.lo, e.hi, e.prot);
	unlock(st);
	return ok;
}
