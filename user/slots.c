/* Where sandpit's descriptors go (user/slots.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "user/slots.h"

/* what stays below the block for the program, at the least */
#define PROGRAM_FDS_MIN 64

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
	for (;;) {
		long n = (top - PROGRAM_FDS_MIN - 2) / 2;
		if (n > SM_NSLOTS)
			n = SM_NSLOTS;
		if (n < 1)
			return -EMFILE;
		long lo = top - 2 - 2 * n, used = -1;
		/* the program's own descriptors up there: the block goes below */
		for (long fd = lo; fd < lo + 4; fd++)
			if (fcntl((int)fd, F_GETFD) >= 0)
				used = fd;
		if (used >= 0) {
			top = used;
			continue;
		}
		for (int i = 0; i < 4; i++) {
			if (dup3(fds[i], (int)lo + i, O_CLOEXEC) < 0)
				return -errno;
			close(fds[i]);
			fds[i] = (int)lo + i;
		}
		*fd_lo = (int)lo;
		*nslots = (int)n;
		return 0;
	}
}
