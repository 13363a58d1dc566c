/* sandpit's descriptor block as a sandboxed test body sees it
 * (user/layout/slots.h). */
#ifndef SANDPIT_SELFTEST_BLOCK_UTIL_H
#define SANDPIT_SELFTEST_BLOCK_UTIL_H
#include <dirent.h>
#include <stdlib.h>

/* the numbers in [lo, hi] that hold a descriptor, per /proc/self/fd */
static inline long held_in(long lo, long hi)
{
	DIR *d = opendir("/proc/self/fd");
	long n = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		long fd = e->d_name[0] == '.' ? -1 : atol(e->d_name);
		n += fd >= lo && fd <= hi;
	}
	if (d)
		closedir(d);
	return n;
}
#endif
