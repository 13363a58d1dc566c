/* One file over 700 lines: invariant 9 for ELF files, each crafted program refused by
 * the reader, the loader and `sandpit run` alike through one set of helpers; it is also the one
 * selftest linked with loader/elf.c (its own Makefile rule). */
/* Invariant 9 for ELF files: what `sandpit run` and the patcher read from a
 * program before the sandbox is on is bounds-checked.  Each crafted
 * program breaks one thing and must be refused three ways: by the reader
 * (user/patch/elf_read.c), by the loader in this process (loader/elf.c, with
 * /proc/self/maps unchanged), and by `sandpit run` (status 126, one line
 * on stderr).  Then the patcher is given objects whose tables lie. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <kselftest_harness.h>

#include "loader/elf.h"
#include "user/patch/elf_read.h"
#include "user/patch/patch.h"
#include "selftests/build_dir.h"
#include "selftests/elf_craft.h"

/* ---- helpers ---- */

/* /proc/self/maps into buf, with no allocation on the way (under
 * AddressSanitizer a malloc may map memory and change what is read) */
static char *maps_into(char *buf, size_t len)
{
	int fd = open("/proc/self/maps", O_RDONLY);
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		abort();
	while ((r = read(fd, buf + n, len - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = 0;
	return buf;
}

static char maps_a[1 << 20], maps_b[1 << 20];

static void write_file(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);

	if (fd < 0 || fchmod(fd, 0755) || write(fd, p, n) != (ssize_t)n || close(fd))
		abort();
}

/* `sandpit run -- path`: its status, its stderr in err.  -1 if there is no
 * build/sandpit beside this test (the sanitizer build has none). */
static int sandpit_run(const char *path, char *err, size_t errlen)
{
	char sandpit[PATH_MAX], out[] = "/tmp/elf_test.err.XXXXXX";
	int fd = mkstemp(out), status;
	pid_t pid;

	snprintf(sandpit, sizeof sandpit, "%s/sandpit", bindir);
	if (fd < 0 || access(sandpit, X_OK))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fd, 2);
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		execl(sandpit, sandpit, "run", "--", path, (char *)NULL);
		_exit(99);
	}
	waitpid(pid, &status, 0);
	ssize_t n = pread(fd, err, errlen - 1, 0);
	err[n < 0 ? 0 : n] = 0;
	close(fd);
	unlink(out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* A crafted program, broken by `mutate` (which returns the file's size),
 * is refused by the reader, by the loader with this process's maps
 * untouched, and by `sandpit run` with status 126 and one line. */
static void refused(struct __test_metadata *_metadata, size_t (*mutate)(uint8_t *b),
		    const char *why)
{
	static uint8_t b[CRAFT_SIZE];
	static struct elf_program prog;
	char err[512], path[] = "/tmp/elf_test.XXXXXX", want[PATH_MAX + 600];
	struct elf_image im;
	size_t size = mutate(b);
	struct mem m = { b, size };
	int fd, r;

	r = elf_program_read(mem_pread, &m, size, &prog, err, sizeof err);
	EXPECT_NE(0, r);
	EXPECT_NE(NULL, strstr(err, why)) TH_LOG("reader: '%s', expected '%s'", err, why);

	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	close(fd);
	write_file(path, b, size);

	/* the loader itself, in this process */
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	char *before = maps_into(maps_a, sizeof maps_a);
	r = elf_map(fd, path, &im, err, sizeof err);
	char *after = maps_into(maps_b, sizeof maps_b);
	close(fd);
	EXPECT_EQ(ELF_ERR_NOEXEC, r) TH_LOG("%s", err);
	EXPECT_STREQ(before, after);

	/* the command */
	r = sandpit_run(path, err, sizeof err);
	if (r >= 0) {
		EXPECT_EQ(126, r) TH_LOG("%s", err);
		EXPECT_EQ(1, lines(err)) TH_LOG("%s", err);
		snprintf(want, sizeof want, "sandpit: %s: ", path);
		EXPECT_EQ(0, strncmp(err, want, strlen(want))) TH_LOG("%s", err);
		EXPECT_NE(NULL, strstr(err, why)) TH_LOG("%s", err);
	}
	unlink(path);
}

#define REFUSED(name, why)                                      \
	static size_t mutate_##name(uint8_t *b);                \
	TEST(inv9_##name) { refused(_metadata, mutate_##name, why); } \
	static size_t mutate_##name(uint8_t *b)

/* the index of the PT_LOAD in a crafted program */
static Elf64_Phdr *load_of(uint8_t *b)
{
	for (unsigned i = 0; i < CRAFT_EH(b)->e_phnum; i++)
		if (CRAFT_PH(b, i)->p_type == PT_LOAD)
			return CRAFT_PH(b, i);
	abort();
}

/* a second PT_LOAD after the first, for the cases about two segments */
static Elf64_Phdr *add_load(uint8_t *b)
{
	Elf64_Phdr *ph = CRAFT_PH(b, CRAFT_EH(b)->e_phnum++);

	*ph = *load_of(b);
	ph->p_vaddr += 0x10000;
	ph->p_offset = 0;
	ph->p_filesz = ph->p_memsz = 0x1000;
	ph->p_flags = PF_R | PF_W;
	return ph;
}

/* ---- the program's headers ---- */

REFUSED(zero_length_file_refused, "not an ELF file (it is empty)")
{
	craft_program(b, ET_DYN, NULL);
	return 0;
}

REFUSED(not_an_elf_file_refused, "not an ELF file")
{
	craft_program(b, ET_DYN, NULL);
	b[1] = 'X';
	return CRAFT_SIZE;
}

REFUSED(truncated_elf_header_refused, "the ELF header is cut short")
{
	craft_program(b, ET_DYN, NULL);
	return 40;
}

REFUSED(truncated_program_refused_not_sigbus, "program header 1 extends past the file")
{
	craft_program(b, ET_DYN, NULL);
	return CRAFT_SIZE - 0x800; /* the segment's last page is gone */
}

REFUSED(e_phnum_65535_refused, "65535 program headers")
{
	craft_program(b, ET_DYN, NULL);
	CRAFT_EH(b)->e_phnum = 65535;
	return CRAFT_SIZE;
}

REFUSED(e_phentsize_wrong_refused, "program header size 32")
{
	craft_program(b, ET_DYN, NULL);
	CRAFT_EH(b)->e_phentsize = 32;
	return CRAFT_SIZE;
}

REFUSED(program_headers_past_the_file_refused, "the program headers extend past the file")
{
	craft_program(b, ET_DYN, NULL);
	CRAFT_EH(b)->e_phoff = CRAFT_SIZE - 8;
	return CRAFT_SIZE;
}

REFUSED(program_header_offset_wraps_refused, "the program headers extend past the file")
{
	craft_program(b, ET_DYN, NULL);
	CRAFT_EH(b)->e_phoff = UINT64_MAX - 8;
	return CRAFT_SIZE;
}

REFUSED(segment_offset_past_the_file_refused, "program header 1 extends past the file")
{
	craft_program(b, ET_DYN, NULL);
	load_of(b)->p_offset = UINT64_MAX & ~0xfffUL;
	return CRAFT_SIZE;
}

REFUSED(filesz_larger_than_memsz_refused, "file size 0x2000 larger than memory size 0x1000")
{
	craft_program(b, ET_DYN, NULL);
	load_of(b)->p_memsz = 0x1000;
	return CRAFT_SIZE;
}

REFUSED(offset_and_address_disagree_refused, "address and file offset differ within a page")
{
	craft_program(b, ET_DYN, NULL);
	load_of(b)->p_vaddr += 0x10;
	return CRAFT_SIZE;
}

REFUSED(overlapping_segments_refused, "program header 2 overlaps or comes before")
{
	craft_program(b, ET_DYN, NULL);
	add_load(b)->p_vaddr = 0x1000;
	return CRAFT_SIZE;
}

REFUSED(unsorted_segments_refused, "program header 2 overlaps or comes before")
{
	craft_program(b, ET_DYN, NULL);
	Elf64_Phdr *second = add_load(b), first = *load_of(b);
	*load_of(b) = *second;
	*second = first;
	return CRAFT_SIZE;
}

/* the escape the review found: an end in the last page wraps page_up to 0 */
REFUSED(segment_ending_in_the_last_page_refused, "program header 2 ends past the top of user space")
{
	craft_program(b, ET_DYN, NULL);
	Elf64_Phdr *ph = add_load(b);
	ph->p_vaddr = 0xfffffffffffff000UL;
	ph->p_filesz = ph->p_memsz = 0x800;
	return CRAFT_SIZE;
}

REFUSED(segment_wrapping_the_address_space_refused, "program header 2 ends past the top of user space")
{
	craft_program(b, ET_DYN, NULL);
	Elf64_Phdr *ph = add_load(b);
	ph->p_vaddr = 0x7fff00000000UL;
	ph->p_memsz = UINT64_MAX - 0x1000;
	return CRAFT_SIZE;
}

REFUSED(segment_above_user_space_refused, "program header 1 ends past the top of user space")
{
	craft_program(b, ET_EXEC, NULL);
	load_of(b)->p_vaddr = 0x800000000000UL;
	return CRAFT_SIZE;
}

REFUSED(no_loadable_segment_refused, "no loadable segment")
{
	craft_program(b, ET_DYN, NULL);
	load_of(b)->p_type = PT_NOTE;
	return CRAFT_SIZE;
}

REFUSED(entry_outside_the_program_refused, "entry point 0xdead0000 outside the program")
{
	craft_program(b, ET_DYN, NULL);
	CRAFT_EH(b)->e_entry = 0xdead0000;
	return CRAFT_SIZE;
}

REFUSED(pt_interp_outside_the_file_refused, "program header 1 extends past the file")
{
	craft_program(b, ET_DYN, "/lib64/ld-linux-x86-64.so.2");
	CRAFT_PH(b, 1)->p_offset = 0x7fffffffffffffffUL;
	return CRAFT_SIZE;
}

REFUSED(pt_interp_not_nul_terminated_refused, "the interpreter name is not a string")
{
	craft_program(b, ET_DYN, "/lib64/ld-linux-x86-64.so.2");
	CRAFT_PH(b, 1)->p_filesz -= 1;
	return CRAFT_SIZE;
}

REFUSED(pt_interp_too_long_refused, "an interpreter name of 8192 bytes")
{
	craft_program(b, ET_DYN, "/lib64/ld-linux-x86-64.so.2");
	CRAFT_PH(b, 1)->p_offset = 0;
	CRAFT_PH(b, 1)->p_filesz = 8192;
	return CRAFT_SIZE;
}

REFUSED(two_pt_interps_refused, "program header 2: a second PT_INTERP")
{
	craft_program(b, ET_DYN, "/lib64/ld-linux-x86-64.so.2");
	*CRAFT_PH(b, 2) = *CRAFT_PH(b, 1);
	*CRAFT_PH(b, 3) = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
					.p_filesz = CRAFT_SIZE, .p_memsz = CRAFT_SIZE,
					.p_align = 0x1000 };
	CRAFT_EH(b)->e_phnum = 4;
	return CRAFT_SIZE;
}

REFUSED(pt_phdr_outside_the_program_refused, "PT_PHDR outside the program")
{
	craft_program(b, ET_DYN, NULL);
	CRAFT_PH(b, 0)->p_vaddr = 0x10000000;
	return CRAFT_SIZE;
}

/* ---- an interpreter that is itself malformed ---- */

TEST(inv9_malformed_interpreter_refused)
{
	static uint8_t b[CRAFT_SIZE];
	char prog[] = "/tmp/elf_test.prog.XXXXXX", interp[] = "/tmp/elf_test.interp.XXXXXX";
	char err[1024], want[256];
	int r;

	close(mkstemp(interp));
	craft_program(b, ET_DYN, NULL);
	CRAFT_EH(b)->e_phnum = 65535;
	write_file(interp, b, CRAFT_SIZE);
	close(mkstemp(prog));
	craft_program(b, ET_DYN, interp);
	write_file(prog, b, CRAFT_SIZE);
	r = sandpit_run(prog, err, sizeof err);
	unlink(prog);
	unlink(interp);
	if (r < 0)
		SKIP(return, "no build/sandpit beside this test");
	EXPECT_EQ(126, r) TH_LOG("%s", err);
	EXPECT_EQ(1, lines(err)) TH_LOG("%s", err);
	snprintf(want, sizeof want, "sandpit: %s: interpreter %s: bad ELF: 65535 program headers", prog,
		 interp);
	EXPECT_EQ(0, strncmp(err, want, strlen(want))) TH_LOG("%s", err);
}

/* ---- what is accepted lands inside its reservation ---- */

struct vm {
	uintptr_t lo, hi;
	char line[256];
};

static int read_maps(struct vm *v, int max)
{
	char *p = maps_into(maps_a, sizeof maps_a), *nl;
	int n = 0;

	for (; n < max && (nl = strchr(p, '\n')); p = nl + 1) {
		snprintf(v[n].line, sizeof v[n].line, "%.*s", (int)(nl - p), p);
		if (sscanf(v[n].line, "%lx-%lx", &v[n].lo, &v[n].hi) == 2)
			n++;
	}
	return n;
}

/* Every mapping of before is still there, unchanged, or lies inside
 * [lo, hi); every new one lies inside [lo, hi). */
static void only_inside(struct __test_metadata *_metadata, const struct vm *before, int nb,
			uintptr_t lo, uintptr_t hi)
{
	static struct vm after[4096];
	int na = read_maps(after, 4096);

	for (int i = 0; i < na; i++) {
		int same = 0;

		for (int j = 0; j < nb && !same; j++)
			same = !strcmp(after[i].line, before[j].line);
		if (!same && !(after[i].lo >= lo && after[i].hi <= hi))
			EXPECT_TRUE(0) TH_LOG("a new mapping outside %#lx-%#lx: %s", lo, hi, after[i].line);
	}
	for (int j = 0; j < nb; j++) {
		int kept = before[j].lo >= lo && before[j].hi <= hi;

		for (int i = 0; i < na && !kept; i++)
			kept = !strcmp(after[i].line, before[j].line);
		EXPECT_TRUE(kept) TH_LOG("a mapping changed: %s", before[j].line);
	}
}

static void load_and_check(struct __test_metadata *_metadata, const uint8_t *b, size_t size)
{
	static struct vm before[4096];
	char path[] = "/tmp/elf_test.XXXXXX", err[512];
	struct elf_image im;
	int fd = mkstemp(path), nb, r;

	ASSERT_LE(0, fd);
	close(fd);
	write_file(path, b, size);
	fd = open(path, O_RDONLY);
	unlink(path);
	nb = read_maps(before, 4096);
	r = elf_map(fd, path, &im, err, sizeof err);
	close(fd);
	ASSERT_EQ(0, r) TH_LOG("%s", err);
	EXPECT_LT(im.lo, im.hi);
	EXPECT_TRUE(im.entry >= im.lo && im.entry < im.hi);
	only_inside(_metadata, before, nb, im.lo, im.hi);
	munmap((void *)im.lo, im.hi - im.lo);
}

TEST(inv9_loader_maps_only_inside_its_reservation)
{
	static uint8_t b[CRAFT_SIZE];

	craft_program(b, ET_DYN, NULL);
	load_and_check(_metadata, b, CRAFT_SIZE);
	/* two segments a gigabyte apart: the gap is reserved too */
	craft_program(b, ET_DYN, NULL);
	add_load(b)->p_vaddr = 1UL << 30;
	load_and_check(_metadata, b, CRAFT_SIZE);
	/* a bss far larger than the file, ending just below the top */
	craft_program(b, ET_DYN, NULL);
	Elf64_Phdr *ph = add_load(b);
	ph->p_vaddr = 0x100000;
	ph->p_memsz = 0x40000000;
	load_and_check(_metadata, b, CRAFT_SIZE);
	craft_program(b, ET_EXEC, NULL);
	load_and_check(_metadata, b, CRAFT_SIZE);
}

TEST(inv9_fixed_program_over_sandpits_memory_refused)
{
	static uint8_t b[CRAFT_SIZE];
	static struct vm before[4096];
	char path[] = "/tmp/elf_test.XXXXXX", err[512];
	struct elf_image im;
	int fd = mkstemp(path), nb;

	/* an ET_EXEC whose address is this test's own code */
	craft_program(b, ET_EXEC, NULL);
	uintptr_t here = (uintptr_t)&refused & ~0xfffUL;
	load_of(b)->p_vaddr = here;
	CRAFT_PH(b, 0)->p_vaddr = here + sizeof(Elf64_Ehdr);
	CRAFT_EH(b)->e_entry = here + CRAFT_CODE;
	ASSERT_LE(0, fd);
	close(fd);
	write_file(path, b, CRAFT_SIZE);
	fd = open(path, O_RDONLY);
	unlink(path);
	nb = read_maps(before, 4096);
	EXPECT_EQ(ELF_ERR_NOEXEC, elf_map(fd, path, &im, err, sizeof err));
	close(fd);
	EXPECT_NE(NULL, strstr(err, "address in use")) TH_LOG("%s", err);
	only_inside(_metadata, before, nb, 0, 0);
}

TEST(inv9_real_programs_are_accepted)
{
	const char *files[] = { "/bin/true", "/bin/sh", "/lib64/ld-linux-x86-64.so.2" };
	static struct elf_program prog;

	for (unsigned i = 0; i < sizeof files / sizeof *files; i++) {
		char err[512] = "";
		int fd = open(files[i], O_RDONLY);
		struct stat st;

		if (fd < 0)
			continue;
		fstat(fd, &st);
		static uint8_t buf[8 << 20];
		ssize_t n = read(fd, buf, sizeof buf);
		close(fd);
		struct mem m = { buf, n < 0 ? 0 : (size_t)n };
		EXPECT_EQ(0, elf_program_read(mem_pread, &m, m.len, &prog, err, sizeof err))
			TH_LOG("%s: %s", files[i], err);
	}
}

/* ---- the patcher, on objects whose tables lie ---- */

static uintptr_t map_object(const uint8_t *b, size_t size)
{
	char path[] = "/tmp/elf_test.obj.XXXXXX";
	int fd = mkstemp(path);
	void *p;

	if (fd < 0 || write(fd, b, size) != (ssize_t)size)
		abort();
	unlink(path);
	p = mmap(NULL, size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	return p == MAP_FAILED ? 0 : (uintptr_t)p;
}

static uintptr_t obj_lo;
static int only_obj(void *ctx, uintptr_t lo, uintptr_t hi)
{
	(void)ctx;
	(void)hi;
	return lo == obj_lo + CRAFT_CODE; /* its code segment */
}

static uint8_t fake_stub[16] __attribute__((aligned(16)));

/* patch_process on a crafted object, which must not crash it; the site in
 * its code is still found (the slower way: by method), and SANDPIT_DEBUG
 * says so */
static void patch_object(struct __test_metadata *_metadata, const uint8_t *b, const char *note,
			 enum patch_method method)
{
	struct patch_config cfg = { .stub = (uintptr_t)fake_stub, .want = only_obj };
	struct patch_stats st = { 0 };
	char log[] = "/tmp/elf_test.log.XXXXXX", text[1024];
	int fd = mkstemp(log), saved = dup(2);
	ssize_t n;

	obj_lo = map_object(b, CRAFT_SIZE);
	ASSERT_NE(0UL, obj_lo);
	setenv("SANDPIT_DEBUG", "1", 1);
	dup2(fd, 2);
	int r = patch_process(&cfg, &st);
	dup2(saved, 2);
	n = pread(fd, text, sizeof text - 1, 0);
	text[n < 0 ? 0 : n] = 0;
	close(fd);
	unlink(log);
	EXPECT_EQ(0, r);
	EXPECT_EQ(1U, st.modules);
	EXPECT_EQ(1U, st.patched) TH_LOG("%u sites, %u candidates", st.sites, st.candidates);
	EXPECT_EQ(1U, st.by_method[method]) TH_LOG("not found by %s", patch_method_name(method));
	for (int i = 0; i + 1 < (int)sizeof craft_exit42; i++) /* no syscall left in the code */
		EXPECT_FALSE(((uint8_t *)obj_lo)[CRAFT_CODE + i] == 0x0f &&
			     ((uint8_t *)obj_lo)[CRAFT_CODE + i + 1] == 0x05);
	if (note)
		EXPECT_NE(NULL, strstr(text, note)) TH_LOG("%s", text);
	munmap((void *)obj_lo, CRAFT_SIZE);
}

TEST(inv9_patcher_eh_frame_hdr_with_huge_fde_count)
{
	static uint8_t b[CRAFT_SIZE];

	craft_object(b, 0x7fffffff, 1);
	patch_object(_metadata, b, ".eh_frame_hdr does not fit in its mapping", PATCH_BY_LINEAR);
}

TEST(inv9_patcher_hash_table_with_huge_nchain)
{
	static uint8_t b[CRAFT_SIZE];

	craft_object(b, 0x7fffffff, 0x7fffffff);
	patch_object(_metadata, b, "functions found by decoding it from the start", PATCH_BY_LINEAR);
}

TEST(inv9_patcher_tables_pointing_outside_the_object)
{
	static uint8_t b[CRAFT_SIZE];
	Elf64_Dyn *d = (Elf64_Dyn *)(b + CRAFT_DYNAMIC);

	craft_object(b, 1, 1);
	craft_ph_type(b, PT_GNU_EH_FRAME)->p_vaddr = 0x7fff00000000UL;
	d[1].d_un.d_ptr = 0xfffffffffffff000UL; /* DT_SYMTAB */
	patch_object(_metadata, b, "does not fit in its mapping", PATCH_BY_LINEAR);
	craft_object(b, 1, 1);
	craft_ph_type(b, PT_DYNAMIC)->p_vaddr = UINT64_MAX - 8;
	craft_ph_type(b, PT_DYNAMIC)->p_memsz = UINT64_MAX;
	patch_object(_metadata, b, NULL, PATCH_BY_LINEAR);
}

/* Go's function table finds the start of a function a linear decode of
 * the segment never reaches (it stops at a byte that does not decode) */
TEST(patcher_gopclntab_gives_function_starts)
{
	static uint8_t b[CRAFT_SIZE];
	struct patch_config cfg = { .stub = (uintptr_t)fake_stub, .want = only_obj };
	struct patch_stats st = { 0 };

	craft_go_object(b);
	patch_object(_metadata, b, NULL, PATCH_BY_GOPCLNTAB);
	/* the same object without the table: the site is not found */
	b[CRAFT_GOPCLNTAB + 1] ^= 0xff;
	obj_lo = map_object(b, CRAFT_SIZE);
	ASSERT_NE(0UL, obj_lo);
	EXPECT_EQ(0, patch_process(&cfg, &st));
	EXPECT_EQ(1U, st.candidates);
	EXPECT_EQ(0U, st.sites);
	munmap((void *)obj_lo, CRAFT_SIZE);
}

/* A dynamic symbol does the same, where there is no .eh_frame */
TEST(patcher_symbol_gives_function_starts)
{
	static uint8_t b[CRAFT_SIZE];
	Elf64_Sym *sym = (Elf64_Sym *)(b + CRAFT_SYMTAB) + 1;

	craft_object(b, 0x7fffffff, 2); /* two symbols: the null one, f */
	b[CRAFT_CODE] = 0x06;
	memcpy(b + CRAFT_CODE + 1, craft_exit42, sizeof craft_exit42);
	*sym = (Elf64_Sym){ .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = 1,
			    .st_value = CRAFT_CODE + 1, .st_size = sizeof craft_exit42 };
	patch_object(_metadata, b, "functions found from its symbol table", PATCH_BY_SYMTAB);
}

/* elf_gotab_find on the .gopclntab of craft_go_object, broken one field
 * at a time, in a buffer of exactly its size (AddressSanitizer watches
 * the edges): the good one is found, each broken one refused */
static int go_find(uint8_t *b, size_t len, uintptr_t *lo, uintptr_t *hi)
{
	uint8_t *copy = malloc(len);
	struct elf_view v;
	struct elf_gotab g;
	int r;

	memcpy(copy, b, len);
	elf_view_init(&v, copy, len);
	/* text: where CRAFT_CODE would be, were the buffer the object */
	r = elf_gotab_find(&g, &v, (uintptr_t)copy - CRAFT_GOPCLNTAB + CRAFT_CODE,
			   (uintptr_t)copy - CRAFT_GOPCLNTAB + CRAFT_SIZE,
			   (uintptr_t)copy - CRAFT_GOPCLNTAB);
	if (!r) {
		uintptr_t base = (uintptr_t)copy - CRAFT_GOPCLNTAB;

		r = elf_gofunc_lookup(&g, base + CRAFT_CODE + 5, lo, hi) == 1 ? 0 : -ENOENT;
		*lo -= base;
		*hi -= base;
	}
	free(copy);
	return r;
}

TEST(inv9_malformed_gopclntab_refused)
{
	static uint8_t obj[CRAFT_SIZE];
	uint8_t *b = obj + CRAFT_GOPCLNTAB, t[0x80];
	const size_t len = 0x60 + 3 * 8;
	uintptr_t lo = 0, hi = 0;
	uint64_t x;
	static const struct {
		size_t off;      /* where in the table */
		unsigned size;   /* 1, 4 or 8 bytes */
		uint64_t value;
		const char *what;
	} broken[] = {
		{ 0, 4, 0xfffffffb, "Go 1.16's magic" },
		{ 4, 1, 1, "a pad byte" },
		{ 6, 1, 4, "4-byte instructions" },
		{ 7, 1, 4, "4-byte pointers" },
		{ 8, 8, 0, "no functions" },
		{ 8, 8, 3, "nfunc one more than there are" },
		{ 8, 8, 0xffffffffffffffffULL, "nfunc huge" },
		{ 8, 8, 0x1000000ULL, "nfunc just past the limit" },
		{ 24, 8, 0x7fff00000000ULL, "text outside the code" },
		{ 64, 8, 0x62, "the function table misaligned" },
		{ 64, 8, 0x80, "the function table past the buffer" },
		{ 64, 8, 0xfffffffffffffff0ULL, "the function table wrapping around" },
		{ 0x60 + 8, 4, 0x20, "entries out of order" },
		{ 0x60 + 16, 4, 1, "the last function empty" },
		{ 0x60 + 16, 4, 0x2000, "the last function past the code" },
	};

	craft_go_object(obj);
	ASSERT_EQ(0, go_find(b, len, &lo, &hi));
	EXPECT_EQ((uintptr_t)CRAFT_CODE + 1, lo);
	EXPECT_EQ((uintptr_t)CRAFT_CODE + 1 + sizeof craft_exit42, hi);
	/* the buffer one byte short: the end entry is cut */
	EXPECT_EQ(-ENOENT, go_find(b, len - 1, &lo, &hi));
	for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
		memcpy(t, b, len);
		x = broken[i].value;
		memcpy(t + broken[i].off, &x, broken[i].size);
		EXPECT_EQ(-ENOENT, go_find(t, len, &lo, &hi)) TH_LOG("%s accepted", broken[i].what);
	}
}

/* The Go build-id note, in a buffer of exactly its size: found; its sizes
 * broken (past the buffer, wrapping, a longer owner), not found */
TEST(inv9_malformed_go_note_refused)
{
	static uint8_t obj[CRAFT_SIZE];
	uint8_t *copy = malloc(20);
	struct elf_view v;
	static const struct {
		unsigned off;
		uint32_t value;
	} broken[] = { { 0, 0xffffffff }, { 4, 0xffffffff }, { 4, 5 }, { 0, 17 }, { 0, 2 },
		       { 8, 3 } };

	craft_go_object(obj);
	memcpy(copy, obj + CRAFT_NOTE, 20);
	elf_view_init(&v, copy, 20);
	EXPECT_TRUE(elf_note_has(&v, (uintptr_t)copy, 20, ELF_NOTE_GO, ELF_NT_GO_BUILDID));
	EXPECT_FALSE(elf_note_has(&v, (uintptr_t)copy, 21, ELF_NOTE_GO, ELF_NT_GO_BUILDID));
	EXPECT_FALSE(elf_note_has(&v, (uintptr_t)copy, 19, ELF_NOTE_GO, ELF_NT_GO_BUILDID));
	for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
		memcpy(copy, obj + CRAFT_NOTE, 20);
		memcpy(copy + broken[i].off, &broken[i].value, 4);
		EXPECT_FALSE(elf_note_has(&v, (uintptr_t)copy, 20, ELF_NOTE_GO, ELF_NT_GO_BUILDID))
			TH_LOG("case %zu accepted", i);
	}
	free(copy);
}

TEST(inv9_patcher_program_headers_past_the_mapping)
{
	static uint8_t b[CRAFT_SIZE];

	/* the object's headers are not believed: its code is patched as a
	 * bare range (decoded from its start) */
	craft_object(b, 0x7fffffff, 1);
	CRAFT_EH(b)->e_phoff = CRAFT_SIZE - 16;
	obj_lo = map_object(b, CRAFT_SIZE);
	ASSERT_NE(0UL, obj_lo);
	struct patch_config cfg = { .stub = (uintptr_t)fake_stub };
	struct patch_stats st = { 0 };
	EXPECT_EQ(0, patch_range(&cfg, obj_lo + CRAFT_CODE, obj_lo + CRAFT_SIZE, &st));
	EXPECT_EQ(1U, st.patched);
	munmap((void *)obj_lo, CRAFT_SIZE);
}

TEST_HARNESS_MAIN
