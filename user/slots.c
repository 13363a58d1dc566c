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

/* [lo, end): free numbers of the block, each given a placeholder (a dup
 * of one /dev/null descriptor, read-only, close-on-exec) until its slot
 * is made, so that the kernel hands none of them to the program */
static int hold_block(long lo, long end)
{
	int ph = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (ph < 0)
		return -errno;
	for (long fd = lo; fd < end; fd++)
		if (fd != ph && dup3(ph, (int)fd, O_CLOEXEC) < 0) {
			int r = -errno;
			for (long f = lo; f < fd; f++)
				if (f != ph)
					close((int)f);
			close(ph);
			return r;
		}
	/* the lowest free number may have been one of the block's: then it
	 * is a placeholder already */
	if (ph < lo || ph >= end)
		close(ph);
	return 0;
}

int slots_place_fds(int fds[SLOTS_PLACED], int *fd_lo, int *nslots)
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
	for (int i = 0; i < SLOTS_PLACED; i++)
		if (fds[i] < top)
			used[fds[i] / 8] &= (unsigned char)~(1u << (fds[i] % 8));
	/* the run of free numbers that holds the most slots, the highest of
	 * equals: a descriptor the program inherited up there (a shell's,
	 * a test runner's) does not cost it slots */
	/* at most a quarter of the numbers below top: the block is held from
	 * the start, so the program keeps the rest (1,024 slots at 4096) */
	long most = top / 4 < SM_NSLOTS ? top / 4 : SM_NSLOTS;
	long best_n = 0, best_lo = -1, end = top;
	for (long fd = top - 1; fd >= PROGRAM_FDS_MIN - 1 && best_n < most; fd--) {
		if (fd >= PROGRAM_FDS_MIN && !(used[fd / 8] & (1u << (fd % 8))))
			continue;
		long n = (end - (fd + 1) - 3) / 2;
		if (n > most)
			n = most;
		if (n > best_n) {
			best_n = n;
			best_lo = end - 3 - 2 * n;
		}
		end = fd;
	}
	if (best_n < 1)
		return -EMFILE;
	for (int i = 0; i < SLOTS_PLACED; i++) {
		int to = i < 4 ? (int)best_lo + i : slots_maps_fd((int)best_lo, (int)best_n);
		if (dup3(fds[i], to, O_CLOEXEC) < 0)
			return -errno;
		close(fds[i]);
		fds[i] = to;
	}
	*fd_lo = (int)best_lo;
	*nslots = (int)best_n;
	return 0;
}

int slots_hold_block(int fd_lo, int nslots)
{
	return hold_block(fd_lo + 4, slots_t_fd(fd_lo, nslots));
}
