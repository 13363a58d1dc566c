/* What the patcher reports (see patch_stats.h). */
#include <string.h>
#include <sys/syscall.h>
#include "user/patch/patch_stats.h"
#include "user/patch/patch_sys.h"

/* ASCII hex of x, for the debug line (no printf inside the sandbox) */
static char *hex(char *p, uintptr_t x)
{
	char d[16];
	int n = 0;

	do
		d[n++] = "0123456789abcdef"[x & 15];
	while (x >>= 4);
	*p++ = '0';
	*p++ = 'x';
	while (n)
		*p++ = d[--n];
	return p;
}

void patch_note_fallback(const struct module *mod, const char *why, unsigned method)
{
	char line[256], *p = line;
	const char *tail = method == PATCH_BY_SYMTAB      ? ": functions found from its symbol table\n"
			   : method == PATCH_BY_GOPCLNTAB ? ": functions found from Go's .gopclntab\n"
							  : ": functions found by decoding it from the start\n";
	size_t n;

	if (patch_debug != 1)
		return;
	memcpy(p, "sandpit: patcher: object at ", 28);
	p = hex(p + 28, mod->lo);
	*p++ = ':';
	*p++ = ' ';
	n = strlen(why);
	memcpy(p, why, n);
	p += n;
	n = strlen(tail);
	memcpy(p, tail, n);
	p += n;
	p_sys(SYS_write, 2, line, p - line, 0, 0, 0);
}

/* Each site found, with how, at SANDPIT_DEBUG=1:
 * "sandpit: patcher: syscall at 0x45f149 (gopclntab): patched" */
void patch_note_site(uintptr_t addr, unsigned method, const char *what)
{
	char line[160], *p = line;
	const char *how = patch_method_name(method);
	size_t n;

	if (patch_debug != 1)
		return;
	memcpy(p, "sandpit: patcher: syscall at ", 29);
	p = hex(p + 29, addr);
	*p++ = ' ';
	*p++ = '(';
	n = strlen(how);
	memcpy(p, how, n);
	p += n;
	*p++ = ')';
	*p++ = ':';
	*p++ = ' ';
	n = strlen(what);
	n = n < 100 ? n : 100;
	memcpy(p, what, n);
	p += n;
	*p++ = '\n';
	p_sys(SYS_write, 2, line, p - line, 0, 0, 0);
}

const char *patch_method_name(unsigned method)
{
	static const char *const name[PATCH_N_METHODS] = {
		[PATCH_BY_EH_FRAME] = "eh_frame", [PATCH_BY_SYMTAB] = "symtab",
		[PATCH_BY_GOPCLNTAB] = "gopclntab", [PATCH_BY_LINEAR] = "linear",
	};

	return method < PATCH_N_METHODS ? name[method] : "?";
}

void patch_stats_add(struct patch_stats *to, const struct patch_stats *from)
{
	if (!to)
		return;
	to->modules += from->modules;
	to->candidates += from->candidates;
	to->sites += from->sites;
	for (unsigned i = 0; i < PATCH_N_METHODS; i++)
		to->by_method[i] += from->by_method[i];
	to->patched += from->patched;
	to->skipped_target += from->skipped_target;
	to->skipped_other += from->skipped_other;
	to->native_sigreturn += from->native_sigreturn;
	to->native_allowed += from->native_allowed;
	to->clock_sites += from->clock_sites;
	to->clock_patched += from->clock_patched;
}
