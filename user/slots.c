/* Where sandpit's descriptors go (user/slots.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "user/runtime.h"
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

/* Placeholders for h's numbers, a dup of ph (a read-only /dev/null
 * descriptor, close-on-exec) on each but ph's own, in chunks claimed from
 * h->next, so that the holding thread and the caller, once it has nothing
 * else to do, share what is left.  Raw system calls only, no errno: this
 * may run on a thread of its own that shares the caller's thread pointer.
 * The first failure is kept in h->result and ends the claims. */
#define HOLD_CHUNK 64
static void hold_chunks(struct slots_hold *h)
{
	for (;;) {
		long c = __atomic_fetch_add(&h->next, HOLD_CHUNK, __ATOMIC_RELAXED);
		if (c >= h->end || __atomic_load_n(&h->result, __ATOMIC_RELAXED) < 0)
			return;
		long stop = c + HOLD_CHUNK < h->end ? c + HOLD_CHUNK : h->end;
		for (long fd = c; fd < stop; fd++) {
			if (fd == h->ph)
				continue;
			long r = sandpit_raw_syscall6(SYS_dup3, h->ph, fd, O_CLOEXEC, 0, 0, 0);
			if (r < 0) {
				long none = 0;
				__atomic_compare_exchange_n(&h->result, &none, r, 0, __ATOMIC_RELAXED,
							    __ATOMIC_RELAXED);
				return;
			}
		}
	}
}

static int hold_thread(void *arg)
{
	hold_chunks(arg);
	return 0;
}

#define HOLD_STACK (16 * 1024)

int slots_hold_start(struct slots_hold *h, int fd_lo, int nslots, int spare)
{
	*h = (struct slots_hold){ .ph = -1, .lo = fd_lo + 4, .end = (long)fd_lo + 2 + 2L * nslots,
				  .stack = MAP_FAILED };
	h->next = h->lo;
	h->ph = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (h->ph < 0)
		return -errno;
	/* another thread holds the block while this one goes on (B, the
	 * patching) only when the caller's own descriptors cannot reach it
	 * meanwhile: they take the lowest free number, and enough are free
	 * below the block for the few start-up opens at once */
	if (spare >= SLOTS_HOLD_SPARE && h->ph < fd_lo) {
		h->stack = mmap(NULL, HOLD_STACK, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (h->stack != MAP_FAILED) {
			sigset_t all, old;
			sigfillset(&all);
			sigprocmask(SIG_SETMASK, &all, &old);
			h->tid = 1; /* the kernel clears it when the thread is gone */
			int t = clone(hold_thread, (char *)h->stack + HOLD_STACK,
				      CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
					      CLONE_SYSVSEM | CLONE_CHILD_CLEARTID,
				      h, NULL, NULL, &h->tid);
			sigprocmask(SIG_SETMASK, &old, NULL);
			if (t > 0)
				return 0;
			h->tid = 0;
			munmap(h->stack, HOLD_STACK);
			h->stack = MAP_FAILED;
		}
	}
	hold_chunks(h);
	return 0;
}

int slots_hold_end(struct slots_hold *h)
{
	if (h->ph < 0)
		return -EBADF;
	if (h->stack != MAP_FAILED) {
		/* what the thread has not claimed yet (it may not even have
		 * run, on a busy machine), this one does */
		hold_chunks(h);
		int t;
		while ((t = __atomic_load_n(&h->tid, __ATOMIC_ACQUIRE)) != 0)
			syscall(SYS_futex, &h->tid, FUTEX_WAIT, t, NULL, NULL, 0);
		munmap(h->stack, HOLD_STACK);
		h->stack = MAP_FAILED;
	}
	/* a failure leaves none held: every number of the range was free
	 * before (the block lies in a run of free numbers), so closing one
	 * never made is harmless */
	if (h->result < 0)
		for (long fd = h->lo; fd < h->end; fd++)
			if (fd != h->ph)
				close((int)fd);
	/* the lowest free number may have been one of the block's: then ph
	 * is a placeholder itself */
	if (h->result < 0 || h->ph < h->lo || h->ph >= h->end)
		close(h->ph);
	h->ph = -1;
	return (int)h->result;
}

int slots_place_fds(int fds[4], int *fd_lo, int *nslots, int *spare)
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
	/* at most a quarter of the numbers below top: the block is held from
	 * the start, so the program keeps the rest (1,024 slots at 4096) */
	long most = top / 4 < SM_NSLOTS ? top / 4 : SM_NSLOTS;
	long best_n = 0, best_lo = -1, end = top;
	for (long fd = top - 1; fd >= PROGRAM_FDS_MIN - 1 && best_n < most; fd--) {
		if (fd >= PROGRAM_FDS_MIN && !(used[fd / 8] & (1u << (fd % 8))))
			continue;
		long n = (end - (fd + 1) - 2) / 2;
		if (n > most)
			n = most;
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
	/* free numbers below the block, the four moved just now among them */
	*spare = 0;
	for (long fd = 0; fd < best_lo; fd++)
		*spare += !(used[fd / 8] & (1u << (fd % 8)));
	return 0;
}
