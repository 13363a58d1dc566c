/* Where sandpit's descriptors go (user/slots.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "user/slots.h"

/* what stays below the block for the program, at the least */
#define PROGRAM_FDS_MIN 64

/* the descriptors below top that are open now, as a bitmap: from
 * /proc/self/fd, or (without /proc) by asking for each */
static void open_fds(unsigned char used[SM_FD_TOP / 8], long top)
{
	memset(used, 0, SM_FD_TOP / 8);
	DIR *d = opendir("/proc/self/fd");
	if (!d) {
		for (long fd = 0; fd < top; fd++)
			if (fcntl((int)fd, F_GETFD) >= 0)
				used[fd / 8] |= (unsigned char)(1u << (fd % 8));
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		long fd = e->d_name[0] == '.' ? -1 : atol(e->d_name);
		if (fd >= 0 && fd < top && fd != dirfd(d))
			used[fd / 8] |= (unsigned char)(1u << (fd % 8));
	}
	closedir(d);
}

int slots_place_fds(int fds[4], int *fd_lo, int *nslots)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	if (rl.rlim_cur < SM_FD_TOP && rl.rlim_max > rl.rlim_cur) {
		struct rlimit more = { rl.rlim_max < SM_FD_TOP ? rl.rlim_max : SM_FD_TOP, rl.rlim_max };
		if (setrlimit(RLIMIT_NOFILE, &more) == 0)
			rl.rlim_cur = more.rlim_cur;
	}
	long top = rl.rlim_cur > SM_FD_TOP ? SM_FD_TOP : (long)rl.rlim_cur;
	unsigned char used[SM_FD_TOP / 8];
	open_fds(used, top);
	for (int i = 0; i < 4; i++)
		if (fds[i] < top)
			used[fds[i] / 8] &= (unsigned char)~(1u << (fds[i] % 8));
	/* the run of free numbers that holds the most slots, the highest of
	 * equals: a descriptor the program inherited up there (a shell's,
	 * a test runner's) does not cost it slots */
	long best_n = 0, best_lo = -1, end = top;
	for (long fd = top - 1; fd >= PROGRAM_FDS_MIN - 1 && best_n < SM_NSLOTS; fd--) {
		if (fd >= PROGRAM_FDS_MIN && !(used[fd / 8] & (1u << (fd % 8))))
			continue;
		long n = (end - (fd + 1) - 2) / 2;
		if (n > SM_NSLOTS)
			n = SM_NSLOTS;
		if (n > best_n) {
			best_n = n;
			best_lo = end - 2 - 2 * n;
		}
		end = fd;
	}
	if (best_n < 1)
		return -EMFILE;
	for (int i = 0; i < 4; i++) {
		if (dup3(fds[i], (int)best_lo + i, O_CLOEXEC) < 0)
			return -errno;
		close(fds[i]);
		fds[i] = (int)best_lo + i;
	}
	*fd_lo = (int)best_lo;
	*nslots = (int)best_n;
	return 0;
}
