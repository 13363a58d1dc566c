/* Ordinary calls the default policy decides, run in strict and
 * in filter mode: the ones it allows answer as natively (each body runs
 * once natively and once in the sandbox, and the answers are compared),
 * the ones it refuses give the errno the policy names. */
#include <fcntl.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "u_state.h"
#include "bench/bench.h"

/* What a body saw: one value per step, -errno for a failed call. */
#define MAX_STEPS 32
struct answers {
	int n;
	long v[MAX_STEPS];
	const char *what[MAX_STEPS];
};

static struct answers *answers_now;

static long step(const char *what, long v)
{
	if (answers_now->n < MAX_STEPS) {
		answers_now->what[answers_now->n] = what;
		answers_now->v[answers_now->n++] = v;
	}
	return v;
}

/* a libc call's result: the value, or -errno */
#define RES(call) ((call) == -1 ? -(long)errno : 0)
#define VAL(call) ({ long v_ = (long)(call); v_ == -1 ? -(long)errno : v_; })

/* Runs body natively (a plain child) and sandboxed, and compares the
 * answers step by step. */
static void same_as_native(struct __test_metadata *_metadata, int (*body)(void *), void *arg)
{
	struct answers *pages = shared_page(2 * sizeof(struct answers));
	struct answers *native = &pages[0], *boxed = &pages[1];
	int st;

	ASSERT_NE(NULL, pages);
	answers_now = native;
	fflush(NULL);
	pid_t p = fork();
	ASSERT_LE(0, p);
	if (p == 0)
		_exit(body(arg));
	ASSERT_EQ(p, waitpid(p, &st, 0));
	ASSERT_EQ(0, outcome(st)) TH_LOG("natively");
	answers_now = boxed;
	EXPECT_EQ(0, outcome(run_sandboxed(body, arg)));
	EXPECT_EQ(native->n, boxed->n);
	for (int k = 0; k < native->n && k < boxed->n; k++) {
		const char *what = native->what[k];

		EXPECT_EQ(native->v[k], boxed->v[k]) TH_LOG("%s", what);
	}
	munmap(pages, 2 * sizeof(struct answers));
}

/* a file in /tmp the parent opened twice (two open file descriptions),
 * read-write, one page long; the sandboxed side inherits both */
struct file2 {
	char path[64];
	int fd1, fd2;
};

static void file2_open(struct __test_metadata *_metadata, struct file2 *f)
{
	char page[4096];

	strcpy(f->path, "/tmp/decided_calls_test.XXXXXX");
	f->fd1 = mkstemp(f->path);
	ASSERT_LE(0, f->fd1);
	memset(page, 'a', sizeof(page));
	ASSERT_EQ((ssize_t)sizeof(page), write(f->fd1, page, sizeof(page)));
	f->fd2 = open(f->path, O_RDWR);
	ASSERT_LE(0, f->fd2);
}

static void file2_close(struct file2 *f)
{
	close(f->fd1);
	close(f->fd2);
	unlink(f->path);
}

/* ------------------------------------------------------------- allowed */

static int body_umask(void *a)
{
	(void)a;
	mode_t first = umask(022);
	step("umask(077) after umask(022)", (long)umask(077));
	umask(first);
	/* never glibc's -ENOSYS turned into a mask */
	return first > 0777 ? 1 : 0;
}

TEST(decided_umask_returns_the_old_mask)
{
	same_as_native(_metadata, body_umask, NULL);
}

static int body_msync(void *a)
{
	struct file2 *f = a;
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd1, 0);
	char c = 0;

	if (m == MAP_FAILED)
		return 1;
	m[0] = 'b';
	step("msync(MS_SYNC)", RES(msync(m, 4096, MS_SYNC)));
	step("msync(MS_ASYNC)", RES(msync(m, 4096, MS_ASYNC)));
	step("msync(unaligned)", RES(msync(m + 1, 10, MS_SYNC)));
	step("the file holds the write", pread(f->fd2, &c, 1, 0) == 1 && c == 'b');
	m[0] = 'a';
	msync(m, 4096, MS_SYNC);
	munmap(m, 4096);
	return 0;
}

TEST(decided_msync_writes_a_mapped_file_page_back)
{
	struct file2 f;

	file2_open(_metadata, &f);
	same_as_native(_metadata, body_msync, &f);
	file2_close(&f);
}

/* the lock belongs to the open file description, which the parent keeps:
 * every body leaves it unlocked */
static int body_flock(void *a)
{
	struct file2 *f = a;

	step("flock(fd1, LOCK_EX)", RES(flock(f->fd1, LOCK_EX)));
	step("flock(fd2, LOCK_EX | LOCK_NB)", RES(flock(f->fd2, LOCK_EX | LOCK_NB)));
	step("flock(fd2, LOCK_SH | LOCK_NB)", RES(flock(f->fd2, LOCK_SH | LOCK_NB)));
	step("flock(fd1, LOCK_UN)", RES(flock(f->fd1, LOCK_UN)));
	step("flock(fd2, LOCK_EX | LOCK_NB) when free", RES(flock(f->fd2, LOCK_EX | LOCK_NB)));
	step("flock(fd2, LOCK_UN)", RES(flock(f->fd2, LOCK_UN)));
	step("flock(bad fd)", RES(flock(-1, LOCK_EX)));
	return 0;
}

TEST(decided_flock_locks_and_a_second_description_would_block)
{
	struct file2 f;

	file2_open(_metadata, &f);
	same_as_native(_metadata, body_flock, &f);
	file2_close(&f);
}

static int body_fadvise(void *a)
{
	struct file2 *f = a;
	int p[2];

	if (pipe(p))
		return 1;
	/* posix_fadvise returns the error number itself */
	step("fadvise SEQUENTIAL", posix_fadvise(f->fd1, 0, 0, POSIX_FADV_SEQUENTIAL));
	step("fadvise WILLNEED", posix_fadvise(f->fd1, 0, 4096, POSIX_FADV_WILLNEED));
	step("fadvise DONTNEED", posix_fadvise(f->fd1, 0, 0, POSIX_FADV_DONTNEED));
	step("fadvise on a pipe", posix_fadvise(p[0], 0, 0, POSIX_FADV_NORMAL));
	step("fadvise bad advice", posix_fadvise(f->fd1, 0, 0, 12345));
	step("readahead", RES(readahead(f->fd1, 0, 4096)));
	step("sync_file_range", RES(sync_file_range(f->fd1, 0, 4096, SYNC_FILE_RANGE_WRITE)));
	step("syncfs", RES(syncfs(f->fd1)));
	close(p[0]);
	close(p[1]);
	return 0;
}

TEST(decided_fadvise_readahead_and_write_back)
{
	struct file2 f;

	file2_open(_metadata, &f);
	same_as_native(_metadata, body_fadvise, &f);
	file2_close(&f);
}

static int body_memory(void *a)
{
	(void)a;
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char vec[4] = { 0xff, 0xff, 0xff, 0xff };
	char *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return 1;
	m[0] = 1;
	m[2 * pg] = 1;
	step("mincore", RES(mincore(m, 4 * pg, vec)));
	step("mincore: touched pages are in", (vec[0] & 1) && (vec[2] & 1));
	step("mincore: unaligned", RES(mincore(m + 1, pg, vec)));
	step("mlock", RES(mlock(m, pg)));
	step("munlock", RES(munlock(m, pg)));
	int fd = memfd_create("decided", MFD_CLOEXEC);
	step("memfd_create", fd >= 0);
	step("ftruncate memfd", RES(ftruncate(fd, pg)));
	char *s = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	step("mmap memfd", s != MAP_FAILED);
	if (s != MAP_FAILED) {
		s[0] = 'x';
		step("msync memfd", RES(msync(s, pg, MS_SYNC)));
		munmap(s, pg);
	}
	close(fd);
	int q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	step("membarrier QUERY has PRIVATE_EXPEDITED",
	     q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED));
	step("membarrier REGISTER_PRIVATE_EXPEDITED",
	     RES(syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0)));
	step("membarrier PRIVATE_EXPEDITED",
	     RES(syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0)));
	munmap(m, 4 * pg);
	return 0;
}

TEST(decided_mincore_mlock_memfd_membarrier)
{
	same_as_native(_metadata, body_memory, NULL);
}

static int body_timers(void *a)
{
	(void)a;
	struct itimerval it = { .it_value = { 10, 0 } }, old, cur, zero = { 0 };
	uint64_t ticks = 0;

	step("setitimer", RES(setitimer(ITIMER_REAL, &it, &old)));
	step("no timer before", old.it_value.tv_sec == 0 && old.it_value.tv_usec == 0);
	step("getitimer", RES(getitimer(ITIMER_REAL, &cur)));
	step("it runs", cur.it_value.tv_sec <= 10 && (cur.it_value.tv_sec || cur.it_value.tv_usec));
	step("setitimer off", RES(setitimer(ITIMER_REAL, &zero, NULL)));
	step("alarm after setitimer off", (long)alarm(0));

	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	struct itimerspec ts = { .it_value = { 0, 2000000 } }, got;
	step("timerfd_create", tfd >= 0);
	step("timerfd_settime", RES(timerfd_settime(tfd, 0, &ts, NULL)));
	step("timerfd_gettime", RES(timerfd_gettime(tfd, &got)));
	step("timerfd read", read(tfd, &ticks, sizeof(ticks)) == sizeof(ticks) && ticks >= 1);
	close(tfd);

	int efd = eventfd(0, EFD_NONBLOCK);
	uint64_t v = 5;
	step("eventfd", efd >= 0);
	step("eventfd write", write(efd, &v, sizeof(v)));
	v = 0;
	step("eventfd read", read(efd, &v, sizeof(v)) == sizeof(v) ? (long)v : -(long)errno);
	step("eventfd read when empty", VAL(read(efd, &v, sizeof(v))));
	close(efd);
	return 0;
}

TEST(decided_itimers_timerfd_eventfd)
{
	same_as_native(_metadata, body_timers, NULL);
}

static int body_process(void *a)
{
	(void)a;
	struct rusage ru;
	struct tms tm;
	struct sysinfo si;
	siginfo_t info;

	step("getrusage", RES(getrusage(RUSAGE_SELF, &ru)));
	step("times", times(&tm) != (clock_t)-1);
	step("sysinfo", RES(sysinfo(&si)));
	step("getpriority", getpriority(PRIO_PROCESS, 0));
	step("waitid without children", RES(waitid(P_ALL, 0, &info, WEXITED | WNOHANG)));
	/* P makes its own session, and as its leader cannot change group */
	step("setsid", VAL(setsid()) == getpid());
	step("getsid is P", getsid(0) == getpid());
	step("getpgrp is P", getpgrp() == getpid());
	step("setpgid(0, 0) of a session leader", RES(setpgid(0, 0)));
	step("setsid of a session leader", RES(setsid()));
	return 0;
}

TEST(decided_usage_priority_waitid_process_group)
{
	same_as_native(_metadata, body_process, NULL);
}

/* a process-directed signal, blocked, is read from a signalfd */
static int body_signalfd(void *a)
{
	(void)a;
	sigset_t set;
	struct signalfd_siginfo si;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return 1;
	int sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	step("signalfd", sfd >= 0);
	step("read when none is pending", VAL(read(sfd, &si, sizeof(si))));
	step("kill", RES(kill(getpid(), SIGUSR1)));
	struct pollfd pfd = { .fd = sfd, .events = POLLIN };
	step("poll sees it", VAL(poll(&pfd, 1, 1000)));
	step("read takes it", read(sfd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo == SIGUSR1);
	step("nothing is left", VAL(read(sfd, &si, sizeof(si))));
	close(sfd);
	int ifd = inotify_init1(IN_CLOEXEC);
	step("inotify_init1", ifd >= 0);
	step("inotify_rm_watch of no watch", RES(inotify_rm_watch(ifd, 1)));
	close(ifd);
	return 0;
}

TEST(decided_signalfd_and_inotify_descriptors)
{
	same_as_native(_metadata, body_signalfd, NULL);
}

/* ------------------------------------------------------------- refused */

static int body_pipe_seals(void *a)
{
	(void)a;
	int p[2];
	if (pipe(p) < 0)
		return 1;
	step("F_GETPIPE_SZ", VAL(fcntl(p[0], F_GETPIPE_SZ)));
	step("F_SETPIPE_SZ 64 KiB", VAL(fcntl(p[1], F_SETPIPE_SZ, 65536)));
	step("F_SETPIPE_SZ 4 KiB", VAL(fcntl(p[1], F_SETPIPE_SZ, 4096)));
	step("F_GETPIPE_SZ after", VAL(fcntl(p[0], F_GETPIPE_SZ)));
	step("F_GETPIPE_SZ of a memfd", VAL(fcntl(p[0] + 100, F_GETPIPE_SZ)));
	close(p[0]);
	close(p[1]);
	int fd = memfd_create("decided-seals", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	step("memfd_create sealable", fd >= 0);
	step("F_GET_SEALS", VAL(fcntl(fd, F_GET_SEALS)));
	step("ftruncate", RES(ftruncate(fd, 4096)));
	step("F_ADD_SEALS shrink|grow", VAL(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW)));
	step("F_GET_SEALS after", VAL(fcntl(fd, F_GET_SEALS)));
	step("ftruncate sealed", RES(ftruncate(fd, 8192)));
	step("F_ADD_SEALS seal", VAL(fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL)));
	step("F_ADD_SEALS after seal", VAL(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE)));
	close(fd);
	fd = memfd_create("decided-unsealable", MFD_CLOEXEC);
	step("F_GET_SEALS unsealable", VAL(fcntl(fd, F_GET_SEALS)));
	step("F_ADD_SEALS unsealable", VAL(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE)));
	step("F_ADD_SEALS of a pipe", VAL(fcntl(fd + 100, F_ADD_SEALS, F_SEAL_WRITE)));
	close(fd);
	return 0;
}

TEST(decided_fcntl_pipe_size_and_memfd_seals)
{
	same_as_native(_metadata, body_pipe_seals, NULL);
}

/* Invariant 3: F_ADD_SEALS reaches no descriptor of sandpit's and no memfd
 * of sandpit's.  Every descriptor number up to sandpit's block's end is
 * tried; only the program's own memfd takes a seal or shows its seals.
 * sandpit's memfds (the T table, the filter, secure memory) are closed
 * before the program runs; their mappings' /proc/self/map_files entries
 * do not open without CAP_SYS_ADMIN, which sandpit dropped. */
static int body_seal_sandpit(void *a)
{
	(void)a;
	int mine = memfd_create("mine", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mine < 0)
		return 1;
	int tried = 0;
	/* from 3: 0-2 are the program's own streams, and a file on tmpfs
	 * (stdout into a file under a tmpfs /tmp) is shmem, whose seals
	 * F_GET_SEALS reads */
	for (int fd = 3; fd < 4096; fd++) {
		if (fd == mine)
			continue;
		tried++;
		if (fcntl(fd, F_GET_SEALS) >= 0)
			return 2;
		if (fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_GROW | F_SEAL_SHRINK) >= 0)
			return 3;
		/* closed or sandpit's (EBADF), not a memfd (EINVAL), or
		 * the program's own opened read-only (EPERM) */
		if (errno != EBADF && errno != EINVAL && errno != EPERM)
			return 4;
	}
	if (tried != 4092 || fcntl(mine, F_ADD_SEALS, F_SEAL_SEAL) != 0)
		return 5;
	/* the mappings of sandpit's memfds, by their names in the maps */
	char maps[65536], path[128];
	int m = open("/proc/self/maps", O_RDONLY), found = 0;
	ssize_t n = m < 0 ? -1 : read(m, maps, sizeof(maps) - 1);
	if (m >= 0)
		close(m);
	if (n <= 0)
		return 6;
	maps[n] = 0;
	for (char *l = maps; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned long lo, hi;
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = 0;
		if (strstr(l, "memfd:sandpit-") && sscanf(l, "%lx-%lx", &lo, &hi) == 2) {
			found++;
			snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", lo, hi);
			int fd = open(path, O_RDONLY);
			if (fd >= 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_GROW) >= 0)
				return 7;
			if (fd >= 0)
				close(fd);
		}
		if (nl)
			*nl = '\n';
	}
	return found >= 2 ? 0 : 8; /* the T table and secure memory at least */
}

TEST(inv3_sandpits_memfds_and_descriptors_take_no_seals)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_seal_sandpit, NULL)));
}

static int body_refused(void *a)
{
	(void)a;
	int ifd = inotify_init1(0);

	if (ifd < 0)
		return 1;
	/* its path: the trusted process has no check for it */
	if (inotify_add_watch(ifd, "/etc", IN_MODIFY) != -1 || errno != EACCES)
		return 2;
	if (shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600) != -1 || errno != EACCES)
		return 3;
	if (syscall(SYS_io_setup, 1, &(unsigned long){ 0 }) != -1 || errno != ENOSYS)
		return 4;
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) != -1 ||
	    errno != EINVAL)
		return 5;
	if (syscall(SYS_pkey_alloc, 0, 0) != -1 || errno != ENOSPC)
		return 6;
	if (syscall(SYS_landlock_create_ruleset, NULL, 0, 1UL) != -1 || errno != EOPNOTSUPP)
		return 7;
	if (syscall(SYS_futex_waitv, NULL, 0, 0, NULL, 0) != -1 || errno != ENOSYS)
		return 8;
	/* only a NULL sigevent: SIGEV_THREAD_ID could name a trusted thread */
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM };
	int id;
	if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &id) != -1 || errno != EPERM)
		return 9;
	if (syscall(SYS_timer_create, CLOCK_MONOTONIC, NULL, &id) != 0 ||
	    syscall(SYS_timer_delete, id) != 0)
		return 10;
	if (setpgid(0, getppid()) != -1 || errno != EPERM)
		return 11;
	/* without a connect grant, as on a kernel without the family; an
	 * AF_UNIX socket reaches nothing until it is named or connected */
	if (socket(AF_INET6, SOCK_STREAM, 0) != -1 || errno != EAFNOSUPPORT)
		return 12;
	if (socket(AF_INET, SOCK_DGRAM, 0) != -1 || errno != EAFNOSUPPORT)
		return 12;
	if (socket(AF_NETLINK, SOCK_RAW, 0) != -1 || errno != EAFNOSUPPORT)
		return 12;
	int us = socket(AF_UNIX, SOCK_STREAM, 0);
	if (us < 0 || close(us))
		return 13;
	close(ifd);
	return 0;
}

TEST(decided_refusals_give_the_policys_errno)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_refused, NULL)));
}

/* ------------------------------------- refused, on a descriptor not open */

/* The calls the default policy refuses whose first argument is a
 * descriptor the kernel looks up first: on fd, each one's result (-errno) */
#define FD_REFUSALS 15
static void fd_refusals(int fd, long r[FD_REFUSALS], const char *const **names)
{
	static const char *const n[FD_REFUSALS] = {
		"fchmod", "fchown", "fsetxattr", "fremovexattr", "ioctl(TCSETS)", "fcntl(F_SETLEASE)",
		"inotify_add_watch", "connect", "bind", "listen", "accept4", "sendmsg",
		"sendto(address)", "setns", "pidfd_send_signal",
	};
	struct sockaddr_un un = { .sun_family = AF_UNIX, .sun_path = "/tmp/sandpit-no-such" };
	struct msghdr mh = { 0 };
	char buf[64] = "v";
	int i = 0;
	r[i++] = RES(fchmod(fd, 0600));
	r[i++] = RES(fchown(fd, (uid_t)-1, (gid_t)-1));
	r[i++] = RES(fsetxattr(fd, "user.sandpit", buf, 1, 0));
	r[i++] = RES(fremovexattr(fd, "user.sandpit"));
	r[i++] = RES(ioctl(fd, 0x5402 /* TCSETS */, buf));
	r[i++] = RES(fcntl(fd, F_SETLEASE, F_RDLCK));
	r[i++] = VAL(inotify_add_watch(fd, "/etc", IN_MODIFY));
	r[i++] = RES(connect(fd, (struct sockaddr *)&un, sizeof(un)));
	r[i++] = RES(bind(fd, (struct sockaddr *)&un, sizeof(un)));
	r[i++] = RES(listen(fd, 1));
	r[i++] = VAL(accept4(fd, NULL, NULL, 0));
	r[i++] = VAL(sendmsg(fd, &mh, 0));
	r[i++] = VAL(sendto(fd, buf, 1, 0, (struct sockaddr *)&un, sizeof(un)));
	r[i++] = RES(syscall(SYS_setns, fd, 0));
	r[i++] = RES(syscall(SYS_pidfd_send_signal, fd, SIGCONT, NULL, 0));
	if (names)
		*names = n;
}

/* a number just closed, and -1: as natively, EBADF (compared step by step) */
static int body_closed_fd(void *a)
{
	(void)a;
	int fd = open("/dev/null", O_RDONLY);
	if (fd < 0 || close(fd))
		return 1;
	long r[FD_REFUSALS];
	const char *const *names;
	fd_refusals(fd, r, &names);
	for (int i = 0; i < FD_REFUSALS; i++)
		step(names[i], r[i]);
	fd_refusals(-1, r, &names);
	for (int i = 0; i < 4; i++)
		step(names[i], r[i]);
	return 0;
}

TEST(decided_refusals_on_a_closed_descriptor_give_ebadf_as_native)
{
	same_as_native(_metadata, body_closed_fd, NULL);
}

struct fd_refusal_out {
	long open_[FD_REFUSALS], block[FD_REFUSALS], tb[FD_REFUSALS];
	long missed_closed, missed_open, missed_tried;
};

static int body_fd_refusals(void *a)
{
	struct fd_refusal_out *o = a;
	int fd = open("/dev/null", O_RDWR);
	if (fd < 0)
		return 1;
	int lo = state_of(my_mailbox())->sp->fd_lo;
	fd_refusals(fd, o->open_, NULL);
	fd_refusals(lo + 4, o->block, NULL); /* slot 1's eventfd: sandpit's */
	fd_refusals(lo, o->tb, NULL);        /* P's end of T<->B */
	/* filter mode: a site the patcher never saw, refused through the
	 * filter's trap and T */
	if (sandpit_mode() == SANDPIT_MODE_FILTER) {
		missed_fn f = missed_code(SYS_fchmod);
		if (!f)
			return 2;
		o->missed_tried = 1;
		o->missed_open = f(fd, 0600, 0);
		close(fd);
		o->missed_closed = f(fd, 0600, 0);
	}
	return 0;
}

/* On an open descriptor, the policy's errno as before (connect and
 * sendmsg, which B passes on a socket: the kernel's ENOTSOCK, B's look at
 * the descriptor); on sandpit's, EBADF, as for a descriptor not open
 * (invariant 3) */
TEST(decided_refusals_on_an_open_descriptor_the_policys_errno_on_sandpits_ebadf)
{
	static const long policy_errno[FD_REFUSALS] = {
		EACCES, EACCES, EACCES, EACCES, ENOTTY, EINVAL, EACCES,
		ENOTSOCK, EACCES, EACCES, EACCES, ENOTSOCK, EACCES, EPERM, EPERM,
	};
	struct fd_refusal_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	ASSERT_EQ(0, outcome(run_sandboxed(body_fd_refusals, o)));
	const char *const *names;
	long dummy[FD_REFUSALS];
	fd_refusals(-1, dummy, &names);
	for (int i = 0; i < FD_REFUSALS; i++) {
		EXPECT_EQ(-policy_errno[i], o->open_[i]) TH_LOG("%s on an open descriptor", names[i]);
		EXPECT_EQ(-EBADF, o->block[i]) TH_LOG("%s on slot 1's eventfd", names[i]);
		EXPECT_EQ(-EBADF, o->tb[i]) TH_LOG("%s on T<->B", names[i]);
	}
	if (suite_mode() == SANDPIT_MODE_FILTER) {
		EXPECT_EQ(1, o->missed_tried);
		EXPECT_EQ(-EACCES, o->missed_open);
		EXPECT_EQ(-EBADF, o->missed_closed);
	}
}

TEST_HARNESS_MAIN
