/* Where sandpit's descriptors go (user/layout/slots.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "user/layout/slots.h"

/* what stays below a block under the soft limit for the program, at the
 * least */
#define PROGRAM_FDS_MIN 64
/* eventfds made before they are moved up: each batch's first numbers are
 * closed with one close_range per run of consecutive numbers */
#define BATCH (2 * SM_NSLOTS)

#define USED(u, base, fd) ((u)[((fd) - (base)) / 8] & (1u << (((fd) - (base)) % 8)))

/* the descriptors in [base, base + SM_FD_TOP) that are open now, as a
 * bitmap: from /proc/self/fd, or (without /proc) by asking for each */
static void open_fds(unsigned char used[SM_FD_TOP / 8], long base, long top)
{
	memset(used, 0, SM_FD_TOP / 8);
	DIR *d = opendir("/proc/self/fd");
	if (!d) {
		for (long fd = base; fd < top; fd++)
			if (fcntl((int)fd, F_GETFD) >= 0)
				used[(fd - base) / 8] |= (unsigned char)(1u << ((fd - base) % 8));
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		long fd = e->d_name[0] == '.' ? -1 : atol(e->d_name);
		if (fd >= base && fd < top && fd != dirfd(d))
			used[(fd - base) / 8] |= (unsigned char)(1u << ((fd - base) % 8));
	}
	closedir(d);
}

/* the run of free numbers in [min_lo, top) that holds the most slots (up
 * to most), the highest of equals: a descriptor the program inherited up
 * there (a shell's, a test runner's) does not cost it slots.  Its slots,
 * and its first number in *lo. */
static long best_run(const unsigned char *used, long min_lo, long top, long most, long *lo)
{
	long best_n = 0, end = top;
	for (long fd = top - 1; fd >= min_lo - 1 && best_n < most; fd--) {
		if (fd >= min_lo && !USED(used, min_lo, fd))
			continue;
		long n = (end - (fd + 1) - 3) / 2;
		if (n > most)
			n = most;
		if (n > best_n) {
			best_n = n;
			*lo = end - 3 - 2 * n;
		}
		end = fd;
	}
	return best_n;
}

int slots_place_fds(int fds[SLOTS_PLACED], struct slots_place *pl)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	pl->limit = rl;
	pl->raised = 0;
	long soft = rl.rlim_cur > INT_MAX ? INT_MAX : (long)rl.rlim_cur;
	long hard = rl.rlim_max > INT_MAX ? INT_MAX : (long)rl.rlim_max;
	unsigned char used[SM_FD_TOP / 8];

	/* below: what the old way would give, to compare */
	long btop = soft < SM_FD_TOP ? soft : SM_FD_TOP;
	long bmost = btop / 4 < SM_NSLOTS ? btop / 4 : SM_NSLOTS;

	/* above: [soft, top), the block ending at SM_FD_TOP where it fits
	 * (a window of at most SM_FD_TOP numbers either way) */
	long top = hard < SM_FD_TOP ? hard : SM_FD_TOP;
	if (top - SM_NFDS < soft)
		top = hard - soft < SM_NFDS ? hard : soft + SM_NFDS;
	long lo = -1, n = 0;
	if (top > soft) {
		open_fds(used, soft, top);
		n = best_run(used, soft, top, SM_NSLOTS, &lo);
	}
	if (n >= 1 && n >= bmost) {
		struct rlimit more = { (rlim_t)(lo + 3 + 2 * n), rl.rlim_max };
		if (setrlimit(RLIMIT_NOFILE, &more) == 0)
			pl->raised = 1;
		else
			n = 0; /* a hard limit above fs.nr_open: below */
	} else {
		n = 0;
	}
	pl->above = n > 0;
	if (!pl->above) {
		open_fds(used, 0, btop);
		for (int i = 0; i < SLOTS_PLACED; i++)
			if (fds[i] < btop)
				used[fds[i] / 8] &= (unsigned char)~(1u << (fds[i] % 8));
		n = btop > PROGRAM_FDS_MIN ? best_run(used + PROGRAM_FDS_MIN / 8, PROGRAM_FDS_MIN,
						      btop, bmost, &lo)
					   : 0;
	}
	if (n < 1)
		return -EMFILE;
	for (int i = 0; i < SLOTS_PLACED; i++) {
		int to = i < 4 ? (int)lo + i : slots_maps_fd((int)lo, (int)n);
		if (dup3(fds[i], to, O_CLOEXEC) < 0) {
			int r = -errno;
			slots_restore_limit(pl);
			return r;
		}
		close(fds[i]);
		fds[i] = to;
	}
	pl->fd_lo = (int)lo;
	pl->nslots = (int)n;
	return 0;
}

/* the first numbers of a batch closed: they rose one by one (the kernel
 * hands out the lowest free number, and none was closed meanwhile) */
static void close_batch(const int *from, int k)
{
	for (int i = 0; i < k;) {
		int j = i;
		while (j + 1 < k && from[j + 1] == from[j] + 1)
			j++;
		if (j == i || syscall(SYS_close_range, from[i], from[j], 0) < 0)
			for (int f = i; f <= j; f++)
				close(from[f]);
		i = j + 1;
	}
}

/* a batch's eventfds moved onto their numbers, and their first numbers
 * closed */
static int flush(const int *from, const int *to, int k)
{
	for (int i = 0; i < k; i++)
		if (dup3(from[i], to[i], O_CLOEXEC) < 0)
			return -errno;
	close_batch(from, k);
	return 0;
}

/* the batch: eventfds made below the block (from) and their numbers in
 * it (to), the first *k of them pending */
static int from[BATCH], to[BATCH];

static int make_eventfds(const struct slots_place *pl, int *pending)
{
	int k = 0, lo = pl->fd_lo, end = slots_maps_fd(lo, pl->nslots), r;
	for (int fd = slots_t_fd(lo, 1); fd < end; fd++) {
		/* T's never blocks: T polls it */
		int e = eventfd(0, (fd - lo) % 2 ? EFD_CLOEXEC : EFD_CLOEXEC | EFD_NONBLOCK);
		*pending = k;
		if (e < 0)
			return -errno;
		if (e < lo) {
			from[k] = e;
			to[k++] = fd;
			*pending = k;
			if (k == BATCH && (r = flush(from, to, k)) < 0)
				return r;
			k %= BATCH;
			continue;
		}
		/* every number below the block is taken: the kernel gave one
		 * of the block's not made yet (perhaps a batch's target) or
		 * one above it.  With a batch: it goes, the batch is moved up,
		 * and this one is made again, below. */
		if (k) {
			close(e);
			if ((r = flush(from, to, k)) < 0)
				return r;
			k = *pending = 0;
			fd--;
			continue;
		}
		/* no batch: no target is pending, so e is fd or above the
		 * block */
		if (e != fd && dup3(e, fd, O_CLOEXEC) < 0) {
			r = -errno;
			close(e);
			return r;
		}
		if (e != fd)
			close(e);
	}
	return flush(from, to, k);
}

/* on a failure, the batch's eventfds below the block closed: those in
 * it are the block's, which a failed start closes whole */
int slots_make_eventfds(const struct slots_place *pl)
{
	int k = 0, r = make_eventfds(pl, &k);
	if (r < 0)
		for (int i = 0; i < k; i++)
			close(from[i]);
	return r;
}

int slots_restore_limit(struct slots_place *pl)
{
	if (!pl->raised)
		return 0;
	if (setrlimit(RLIMIT_NOFILE, &pl->limit) < 0)
		return -errno;
	pl->raised = 0;
	return 0;
}
