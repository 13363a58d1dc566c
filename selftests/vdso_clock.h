/* The vDSO's rdtsc and rdtscp instructions, for the tests of the clock
 * reads strict mode redirects (calls_test, patch_test). */
#ifndef SANDPIT_SELFTEST_VDSO_CLOCK_H
#define SANDPIT_SELFTEST_VDSO_CLOCK_H
#include <elf.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <Zydis/Zydis.h>

/* The vDSO's rdtsc and rdtscp instructions, found by decoding its .text
 * (its section headers are mapped with it). */
#define VDSO_MAX_CLOCK 32
struct vdso_clock {
	unsigned n;
	uintptr_t at[VDSO_MAX_CLOCK];
	uint8_t len[VDSO_MAX_CLOCK];
};

static inline void vdso_clock_find(struct vdso_clock *c)
{
	const unsigned char *base = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
	const char *names = (const char *)base + sh[eh->e_shstrndx].sh_offset;
	ZydisDecoder dec;
	ZydisDecodedInstruction in;

	c->n = 0;
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (strcmp(names + sh[i].sh_name, ".text"))
			continue;
		const unsigned char *p = base + sh[i].sh_offset, *end = p + sh[i].sh_size;
		while (p < end && ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(
					  &dec, NULL, p, (ZyanUSize)(end - p), &in))) {
			if ((in.mnemonic == ZYDIS_MNEMONIC_RDTSC || in.mnemonic == ZYDIS_MNEMONIC_RDTSCP) &&
			    c->n < VDSO_MAX_CLOCK) {
				c->at[c->n] = (uintptr_t)p;
				c->len[c->n++] = in.length;
			}
			p += in.length;
		}
	}
}

/* How many of the sites in c still hold their instruction's bytes. */
static inline unsigned vdso_clock_left(const struct vdso_clock *c)
{
	static const unsigned char rdtsc_b[] = { 0x0f, 0x31 }, rdtscp_b[] = { 0x0f, 0x01, 0xf9 };
	unsigned left = 0;

	for (unsigned i = 0; i < c->n; i++)
		left += !memcmp((const void *)c->at[i], c->len[i] == 2 ? rdtsc_b : rdtscp_b, c->len[i]);
	return left;
}

#endif
