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

/* Start the program: a fresh stack block of argc/argv/envp/auxv below the
 * current stack pointer, then a jump to `entry` as the kernel leaves a new
 * program (rsp at argc, rdx 0).  auxv is {type, value} pairs ending with
 * AT_NULL; values of AT_RANDOM, AT_EXECFN and AT_PLATFORM are taken as
 * pointers to data that is copied onto the new stack. */
void __attribute__((noreturn)) elf_start(uintptr_t entry, char *const argv[],
					 char *const envp[], const uint64_t *auxv);
#endif
