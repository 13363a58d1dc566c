/* The checklists' common part: one line per check, and the mode the
 * environment asks for (strict if asked, or auto on a kernel without
 * seccomp-bpf; else filter). */
#ifndef SANDPIT_EXAMPLE_CHECKLIST_H
#define SANDPIT_EXAMPLE_CHECKLIST_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sandpit.h>

static int wrong;

static void check(const char *what, int ok)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	wrong += !ok;
}

static enum sandpit_mode mode_asked(void)
{
	const char *asked = getenv("SANDPIT_MODE"), *kernel = getenv("SANDPIT_KERNEL");
	if (asked && !strcmp(asked, "strict"))
		return SANDPIT_MODE_STRICT;
	if (asked && !strcmp(asked, "filter"))
		return SANDPIT_MODE_FILTER;
	return kernel && !strcmp(kernel, "legacy") ? SANDPIT_MODE_STRICT : SANDPIT_MODE_FILTER;
}
#endif
