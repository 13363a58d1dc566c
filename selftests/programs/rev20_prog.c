/* rev20_prog: under `sandpit run`, finds the plan hint page the loader
 * shares with its parent (8 KiB, shared, /dev/zero), optionally forges
 * its words ("forge": needs 15, n 14: the next library planned inside is
 * compared with line 14 of a list the child never read), then dlopens a
 * library not loaded yet, which sandpit plans inside the sandbox. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hints {
	uint32_t n, planned, needs, differs;
};

int main(int argc, char **argv)
{
	char line[512];
	struct hints *h = NULL;
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perm[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) == 3 && hi - lo == 8192 &&
		    !strcmp(perm, "rw-s") && strstr(line, "/dev/zero"))
			h = (struct hints *)lo;
	}
	if (f)
		fclose(f);
	printf("page %d\n", h != NULL);
	if (!h)
		return 2;
	printf("n %u needs %u differs %u planned %u\n", h->n, h->needs, h->differs, h->planned);
	if (argc > 1 && !strcmp(argv[1], "forge")) {
		h->needs = 15;
		h->n = 14;
		printf("forged\n");
	}
	fflush(stdout);
	void *z = dlopen(argc > 2 ? argv[2] : "libz.so.1", RTLD_NOW);
	printf("dlopen %d\n", z != NULL);
	printf("n %u needs %u differs %u\n", h->n, h->needs, h->differs);
	return 0;
}
