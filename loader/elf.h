/* The ELF loader of `sandpit run`: maps a program (and its interpreter)
 * into the current process as the kernel's execve would, and builds the
 * initial stack the program starts on. */
#ifndef SANDPIT_LOADER_ELF_H
#define SANDPIT_LOADER_ELF_H
#include <stddef.h>
#include <stdint.h>

struct elf_image {
	uintptr_t bias;    /* load address minus link address (0 for ET_EXEC) */
	uintptr_t lo, hi;  /* the whole image in memory */
	uintptr_t entry;   /* where it starts, relocated */
	uintptr_t phdr;    /* its program headers in memory, or 0 */
	unsigned phnum;
	char interp[4096]; /* PT_INTERP, "" if none */
};

/* Errors worth a distinct exit status. */
enum { ELF_ERR_NOEXEC = 1, ELF_ERR_SYS = 2 };

/* Map the ELF file open on fd.  0, or ELF_ERR_* with a message in err. */
int elf_map(int fd, const char *name, struct elf_image *out, char *err, size_t errlen);

/* The program's initial stack: argc, argv, envp and the auxiliary vector
 * ({type, value} pairs ending with AT_NULL; AT_RANDOM's, AT_EXECFN's and
 * AT_PLATFORM's values point to data copied onto the stack), then the
 * strings, as the kernel's execve lays them out.  elf_stack_plan places it
 * below the caller's frames and says where each part will lie, so that
 * the kernel can be told before the sandbox starts (run.c); elf_stack_enter,
 * called from the same frame, writes it there and jumps to `entry` as the
 * kernel leaves a new program (rsp at argc, rdx 0). */
#define ELF_MAX_AUXV 64
struct elf_stack {
	char *const *argv, *const *envp;
	const uint64_t *auxv_in;
	size_t words, size;  /* the vectors' words; the whole block's bytes */
	uintptr_t block;     /* where argc lies: the program's first stack pointer */
	uintptr_t arg_start, arg_end, env_start, env_end; /* the strings, ends exclusive */
	uint64_t auxv[2 * ELF_MAX_AUXV + 2]; /* as the program will find it */
	size_t auxv_bytes;                   /* its AT_NULL pair included */
};
/* 0, or -1 when auxv has more than ELF_MAX_AUXV entries */
int elf_stack_plan(struct elf_stack *st, char *const argv[], char *const envp[],
		   const uint64_t *auxv);
void __attribute__((noreturn)) elf_stack_enter(const struct elf_stack *st, uintptr_t entry);
#endif
