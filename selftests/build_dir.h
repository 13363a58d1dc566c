/* The build directory (build/), for tests that run build/sandpit and the
 * programs beside it: found from the test's own path, build/selftests/NAME. */
#ifndef SANDPIT_SELFTEST_BUILD_DIR_H
#define SANDPIT_SELFTEST_BUILD_DIR_H
#include <limits.h>
#include <string.h>
#include <unistd.h>

static char bindir[PATH_MAX - 64]; /* room left to name a file in it */

static void __attribute__((constructor)) find_build_dir(void)
{
	ssize_t n = readlink("/proc/self/exe", bindir, sizeof bindir - 1);
	if (n < 0)
		return;
	bindir[n] = 0;
	for (int i = 0; i < 2; i++) { /* build/selftests/NAME -> build */
		char *slash = strrchr(bindir, '/');
		if (slash)
			*slash = 0;
	}
}

#endif
