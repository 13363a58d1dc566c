/* The symbolic names a policy file may use for argument values and errnos.
 * Values come from the system headers, never written out by hand; errno
 * names from the C library (strerrorname_np). */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/sockios.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy/policy.h"

#define C(x) { #x, (uint64_t)(x) }

static const struct constant {
	const char *name;
	uint64_t value;
} constants[] = {
	/* mmap, mprotect, mremap, madvise */
	C(PROT_NONE), C(PROT_READ), C(PROT_WRITE), C(PROT_EXEC), C(PROT_GROWSDOWN),
	C(PROT_GROWSUP), C(MAP_SHARED), C(MAP_PRIVATE), C(MAP_SHARED_VALIDATE), C(MAP_FIXED),
	C(MAP_FIXED_NOREPLACE), C(MAP_ANONYMOUS), C(MAP_ANON), C(MAP_32BIT), C(MAP_GROWSDOWN),
	C(MAP_DENYWRITE), C(MAP_EXECUTABLE), C(MAP_LOCKED), C(MAP_NORESERVE), C(MAP_POPULATE),
	C(MAP_NONBLOCK), C(MAP_STACK), C(MAP_HUGETLB), C(MAP_SYNC), C(MREMAP_MAYMOVE),
	C(MREMAP_FIXED), C(MREMAP_DONTUNMAP), C(MADV_NORMAL), C(MADV_RANDOM), C(MADV_SEQUENTIAL),
	C(MADV_WILLNEED), C(MADV_DONTNEED), C(MADV_FREE), C(MADV_REMOVE), C(MADV_DONTFORK),
	C(MADV_DOFORK), C(MADV_MERGEABLE), C(MADV_UNMERGEABLE), C(MADV_HUGEPAGE),
	C(MADV_NOHUGEPAGE), C(MADV_DONTDUMP), C(MADV_DODUMP), C(MADV_WIPEONFORK),
	C(MADV_KEEPONFORK), C(MADV_COLD), C(MADV_PAGEOUT), C(MADV_HWPOISON),
	C(MFD_CLOEXEC), C(MFD_ALLOW_SEALING), C(SHM_RDONLY), C(SHM_RND), C(SHM_REMAP),
	/* open and the *at calls */
	C(O_RDONLY), C(O_WRONLY), C(O_RDWR), C(O_ACCMODE), C(O_CREAT), C(O_EXCL), C(O_NOCTTY),
	C(O_TRUNC), C(O_APPEND), C(O_NONBLOCK), C(O_NDELAY), C(O_DSYNC), C(O_SYNC), C(O_RSYNC),
	C(O_DIRECTORY), C(O_NOFOLLOW), C(O_CLOEXEC), C(O_ASYNC), C(O_DIRECT), C(O_LARGEFILE),
	C(O_NOATIME), C(O_PATH), C(O_TMPFILE), C(AT_FDCWD), C(AT_SYMLINK_NOFOLLOW),
	C(AT_SYMLINK_FOLLOW), C(AT_REMOVEDIR), C(AT_NO_AUTOMOUNT), C(AT_EMPTY_PATH),
	C(AT_EACCESS), C(AT_STATX_SYNC_AS_STAT), C(AT_STATX_FORCE_SYNC), C(AT_STATX_DONT_SYNC),
	C(R_OK), C(W_OK), C(X_OK), C(F_OK), C(SEEK_SET), C(SEEK_CUR), C(SEEK_END),
	C(SEEK_DATA), C(SEEK_HOLE),
	/* fcntl */
	C(F_DUPFD), C(F_GETFD), C(F_SETFD), C(F_GETFL), C(F_SETFL), C(F_GETLK), C(F_SETLK),
	C(F_SETLKW), C(F_SETOWN), C(F_GETOWN), C(F_SETSIG), C(F_GETSIG), C(F_SETOWN_EX),
	C(F_GETOWN_EX), C(F_OFD_GETLK), C(F_OFD_SETLK), C(F_OFD_SETLKW), C(F_SETLEASE),
	C(F_GETLEASE), C(F_NOTIFY), C(F_DUPFD_CLOEXEC), C(F_SETPIPE_SZ), C(F_GETPIPE_SZ),
	C(F_ADD_SEALS), C(F_GET_SEALS), C(F_SEAL_SEAL), C(F_SEAL_SHRINK), C(F_SEAL_GROW),
	C(F_SEAL_WRITE), C(FD_CLOEXEC),
	/* ioctl requests */
	C(TCGETS), C(TCSETS), C(TCSETSW), C(TCSETSF), C(TCFLSH), C(TIOCGWINSZ), C(TIOCSWINSZ),
	C(TIOCGPGRP), C(TIOCSPGRP), C(TIOCSTI), C(TIOCSCTTY), C(TIOCNOTTY), C(TIOCGPTN),
	C(TIOCSPTLCK), C(FIONREAD), C(FIONBIO), C(FIOCLEX), C(FIONCLEX), C(FIOASYNC),
	C(FIOSETOWN), C(FIOGETOWN), C(SIOCSPGRP), C(SIOCGPGRP),
	/* clone */
	C(CLONE_VM), C(CLONE_FS), C(CLONE_FILES), C(CLONE_SIGHAND), C(CLONE_PIDFD),
	C(CLONE_PTRACE), C(CLONE_VFORK), C(CLONE_PARENT), C(CLONE_THREAD), C(CLONE_NEWNS),
	C(CLONE_SYSVSEM), C(CLONE_SETTLS), C(CLONE_PARENT_SETTID), C(CLONE_CHILD_CLEARTID),
	C(CLONE_DETACHED), C(CLONE_UNTRACED), C(CLONE_CHILD_SETTID), C(CLONE_NEWCGROUP),
	C(CLONE_NEWUTS), C(CLONE_NEWIPC), C(CLONE_NEWUSER), C(CLONE_NEWPID), C(CLONE_NEWNET),
	C(CLONE_IO), C(CLONE_NEWTIME),
	/* futex */
	C(FUTEX_WAIT), C(FUTEX_WAKE), C(FUTEX_FD), C(FUTEX_REQUEUE), C(FUTEX_CMP_REQUEUE),
	C(FUTEX_WAKE_OP), C(FUTEX_LOCK_PI), C(FUTEX_UNLOCK_PI), C(FUTEX_TRYLOCK_PI),
	C(FUTEX_WAIT_BITSET), C(FUTEX_WAKE_BITSET), C(FUTEX_WAIT_REQUEUE_PI),
	C(FUTEX_CMP_REQUEUE_PI), C(FUTEX_LOCK_PI2), C(FUTEX_PRIVATE_FLAG), C(FUTEX_CLOCK_REALTIME),
	/* sockets */
	C(AF_UNSPEC), C(AF_UNIX), C(AF_LOCAL), C(AF_INET), C(AF_INET6), C(AF_NETLINK),
	C(AF_PACKET), C(SOCK_STREAM), C(SOCK_DGRAM), C(SOCK_SEQPACKET), C(SOCK_RAW),
	C(SOCK_NONBLOCK), C(SOCK_CLOEXEC), C(MSG_OOB), C(MSG_PEEK), C(MSG_DONTWAIT),
	C(MSG_WAITALL), C(MSG_NOSIGNAL), C(MSG_CMSG_CLOEXEC), C(MSG_TRUNC), C(SHUT_RD),
	C(SHUT_WR), C(SHUT_RDWR), C(SOL_SOCKET),
	/* prctl */
	C(PR_SET_PDEATHSIG), C(PR_GET_PDEATHSIG), C(PR_GET_DUMPABLE), C(PR_SET_DUMPABLE),
	C(PR_GET_KEEPCAPS), C(PR_SET_KEEPCAPS), C(PR_SET_NAME), C(PR_GET_NAME),
	C(PR_GET_SECCOMP), C(PR_SET_SECCOMP), C(PR_CAPBSET_READ), C(PR_CAPBSET_DROP),
	C(PR_GET_TSC), C(PR_SET_TSC), C(PR_GET_TIMERSLACK), C(PR_SET_TIMERSLACK),
	C(PR_SET_MM), C(PR_SET_PTRACER), C(PR_SET_CHILD_SUBREAPER), C(PR_GET_CHILD_SUBREAPER),
	C(PR_SET_NO_NEW_PRIVS), C(PR_GET_NO_NEW_PRIVS), C(PR_SET_THP_DISABLE),
	C(PR_GET_THP_DISABLE), C(PR_CAP_AMBIENT), C(PR_GET_SPECULATION_CTRL),
	C(PR_SET_SPECULATION_CTRL), C(PR_SET_SYSCALL_USER_DISPATCH), C(PR_SET_VMA),
	/* prlimit, clocks, waits, events */
	C(RLIMIT_CPU), C(RLIMIT_FSIZE), C(RLIMIT_DATA), C(RLIMIT_STACK), C(RLIMIT_CORE),
	C(RLIMIT_RSS), C(RLIMIT_NPROC), C(RLIMIT_NOFILE), C(RLIMIT_MEMLOCK), C(RLIMIT_AS),
	C(CLOCK_REALTIME), C(CLOCK_MONOTONIC), C(CLOCK_PROCESS_CPUTIME_ID),
	C(CLOCK_THREAD_CPUTIME_ID), C(CLOCK_MONOTONIC_RAW), C(CLOCK_REALTIME_COARSE),
	C(CLOCK_MONOTONIC_COARSE), C(CLOCK_BOOTTIME), C(TIMER_ABSTIME), C(WNOHANG),
	C(WUNTRACED), C(WCONTINUED), C(__WALL), C(__WCLONE), C(EFD_CLOEXEC), C(EFD_NONBLOCK),
	C(EFD_SEMAPHORE), C(EPOLL_CLOEXEC), C(EPOLL_CTL_ADD), C(EPOLL_CTL_DEL),
	C(EPOLL_CTL_MOD), C(GRND_NONBLOCK), C(GRND_RANDOM),
	/* signals */
	C(SIGHUP), C(SIGINT), C(SIGQUIT), C(SIGILL), C(SIGTRAP), C(SIGABRT), C(SIGBUS),
	C(SIGFPE), C(SIGKILL), C(SIGUSR1), C(SIGSEGV), C(SIGUSR2), C(SIGPIPE), C(SIGALRM),
	C(SIGTERM), C(SIGSTKFLT), C(SIGCHLD), C(SIGCONT), C(SIGSTOP), C(SIGTSTP), C(SIGTTIN),
	C(SIGTTOU), C(SIGURG), C(SIGXCPU), C(SIGXFSZ), C(SIGVTALRM), C(SIGPROF), C(SIGWINCH),
	C(SIGIO), C(SIGPWR), C(SIGSYS), C(SIG_BLOCK), C(SIG_UNBLOCK), C(SIG_SETMASK),
	/* file types, for mknod */
	C(S_IFMT), C(S_IFSOCK), C(S_IFLNK), C(S_IFREG), C(S_IFBLK), C(S_IFDIR), C(S_IFCHR),
	C(S_IFIFO),
};

int policy_constant(const char *name, size_t len, uint64_t *value)
{
	for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++)
		if (strlen(constants[i].name) == len && !memcmp(constants[i].name, name, len)) {
			*value = constants[i].value;
			return 0;
		}
	return -ENOENT;
}

/* Linux numbers its errnos below 134; a few have a second name. */
#define ERRNO_MAX 256

int policy_errno(const char *name, size_t len)
{
	static const struct {
		const char *name;
		int value;
	} aliases[] = { { "EWOULDBLOCK", EWOULDBLOCK }, { "EDEADLOCK", EDEADLOCK },
			{ "ENOTSUP", ENOTSUP } };

	for (int e = 1; e < ERRNO_MAX; e++) {
		const char *n = strerrorname_np(e);

		if (n && strlen(n) == len && !memcmp(n, name, len))
			return e;
	}
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strlen(aliases[i].name) == len && !memcmp(aliases[i].name, name, len))
			return aliases[i].value;
	return -ENOENT;
}
