/* The patcher's types (see patch.h, which includes this): what it is given
 * (struct patch_ops, struct patch_config) and what it makes (sites, plans,
 * statistics).  Kept apart from patch.c's functions so that the patcher's
 * own files, which all use them, stand below the file that strings them
 * together. */
#ifndef SANDPIT_USER_PATCH_TYPES_H
#define SANDPIT_USER_PATCH_TYPES_H
#include <stddef.h>
#include <stdint.h>

/* What the patcher allocates and calls with.  NULL in patch_config: libc's
 * malloc and syscall().  Inside the sandbox libc belongs to the program (its
 * thread pointer, its locks), so the runtime passes its own: an arena and the
 * sandpit entry.  sys returns the result or -errno. */
struct patch_ops {
	void *(*alloc)(size_t n);
	void *(*realloc)(void *p, size_t n);
	void (*release)(void *p);
	long (*sys)(long nr, long a0, long a1, long a2, long a3, long a4, long a5);
	/* if set, told when the pass starts (1) and ends (0) a stretch of
	 * work without system calls (writing the sites: copy-on-write faults) */
	void (*busy)(int on);
	/* if set, /proc/self/maps from offset off into buf (a pread: the
	 * length, or -errno): inside the sandbox, on the descriptor P opened
	 * before it, so that the read asks nothing of the policy */
	long (*maps)(char *buf, size_t len, long off);
};

struct patch_config {
	const struct patch_ops *ops; /* NULL: libc; set: also no dl_iterate_phdr */
	int wx_apart;                /* text is never writable and executable at once */
	uintptr_t stub;              /* sandpit's syscall stub */
	/* if set, rdtsc and rdtscp sites are redirected too, to stubs that
	 * behave as the instruction does (strict mode, where it would fault) */
	uintptr_t rdtsc_stub, rdtscp_stub;
	uintptr_t skip_lo, skip_hi;  /* sandpit's own code: never patched */
	/* RLIMIT_STACK's soft limit and the program break when sandpit
	 * started: where the stack and the heap grow, read outside the
	 * sandbox, so that the run-time patcher (ops set) asks nothing of the
	 * policy for them (the heap's end it takes from the maps) */
	uint64_t stack_limit, brk;
	/* called for each trampoline region created (now PROT_READ|PROT_EXEC) */
	void (*on_region)(void *ctx, uintptr_t lo, uintptr_t hi);
	/* if set, a site whose number is statically nr stays unpatched when
	 * this says 1 (filter mode: the filter allows the call natively) */
	int (*leave_native)(void *ctx, long nr);
	/* if set, patch_process patches only the objects this says 1 for */
	int (*want)(void *ctx, uintptr_t lo, uintptr_t hi);
	void *ctx;
};

/* sites == patched + skipped_target + skipped_other + native_sigreturn + native_allowed */
/* How the start of the function holding a site was found: an FDE of
 * .eh_frame, a function symbol, Go's .gopclntab, or none (a linear decode
 * from the end of the function before, or from the start of the object). */
enum patch_method { PATCH_BY_EH_FRAME, PATCH_BY_SYMTAB, PATCH_BY_GOPCLNTAB, PATCH_BY_LINEAR,
		    PATCH_N_METHODS };
/* "eh_frame", "symtab", "gopclntab", "linear" */
const char *patch_method_name(unsigned method);

struct patch_stats {
	unsigned modules;          /* executable ranges scanned */
	unsigned candidates;       /* 0f 05 pairs (and rdtsc/rdtscp patterns) outside the skip range */
	unsigned sites;            /* candidates that are real `syscall` instructions */
	unsigned by_method[PATCH_N_METHODS]; /* sites, by how they were found */
	unsigned patched;
	unsigned skipped_target;   /* every region would split a branch target */
	unsigned skipped_other;    /* no region of simple instructions fits */
	unsigned native_sigreturn; /* `mov $15,%eax; syscall`: left to run natively */
	unsigned native_allowed;   /* left native because leave_native said so */
	/* rdtsc/rdtscp instructions (only with rdtsc_stub), apart from the above;
	 * those not redirected still fault and are emulated */
	unsigned clock_sites, clock_patched;
};

enum patch_kind { PATCH_SYSCALL, PATCH_RDTSC, PATCH_RDTSCP };

/* One planned site: the bytes [lo, hi) move to the trampoline. */
struct patch_site {
	uintptr_t addr;          /* the syscall (rdtsc, rdtscp) instruction */
	uintptr_t lo, hi;
	uint32_t tramp;          /* offset of the trampoline in the region */
	uint16_t tramp_len;
	uint8_t n_pre, n_post;   /* displaced instructions before / after it */
	uint8_t kind;            /* enum patch_kind */
};

/* region bytes [0, 8): the stub address; with rdtsc_stub set, [8, 16) and
 * [16, 24) hold rdtsc_stub and rdtscp_stub */
#define PATCH_SLOT_SIZE 8

/* The plan for one executable range: the region image and its sites. */
struct patch_plan {
	uintptr_t region;        /* address the trampolines are encoded for */
	uint8_t *code;           /* region image, code_len bytes (malloc'd) */
	size_t code_len;
	struct patch_site *site; /* ascending addresses (malloc'd) */
	unsigned n_site;
	struct patch_stats st;
};
#endif
