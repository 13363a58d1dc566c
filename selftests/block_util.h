/* sandpit's descriptor block as a sandboxed test body sees it
 * (user/layout/slots.h). */
#ifndef SANDPIT_SELFTEST_BLOCK_UTIL_H
#define SANDPIT_SELFTEST_BLOCK_UTIL_H
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* a descriptor's file status flags as /proc/self/fdinfo shows them (octal),
 * -1 when it cannot be read */
static inline long fdinfo_flags(long fd)
{
	char p[64], buf[512];
	snprintf(p, sizeof(p), "/proc/self/fdinfo/%ld", fd);
	int f = open(p, O_RDONLY);
	if (f < 0)
		return -1;
	ssize_t n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *c = strstr(buf, "flags:");
	return c ? strtol(c + 6, NULL, 8) : -1;
}
#endif
