/* What the patcher reports (see patch_stats.h). */
#include <string.h>
#include <sys/syscall.h>
#include "user/patch_stats.h"
#include "user/patch_sys.h"

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

void patch_note_fallback(const struct module *mod, const char *why, bool has_sym)
{
	char line[256], *p = line;
	const char *tail = has_sym ? ": functions found from its symbol table\n"
				   : ": functions found by decoding it from the start\n";
	size_t n;

	if (patch_debug <= 0)
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

void patch_stats_add(struct patch_stats *to, const struct patch_stats *from)
{
	if (!to)
		return;
	to->modules += from->modules;
	to->candidates += from->candidates;
	to->sites += from->sites;
	to->patched += from->patched;
	to->skipped_target += from->skipped_target;
	to->skipped_other += from->skipped_other;
	to->native_sigreturn += from->native_sigreturn;
	to->native_allowed += from->native_allowed;
	to->clock_sites += from->clock_sites;
	to->clock_patched += from->clock_patched;
}
