/* selfexe_test's program: what it sees of its own executable through
 * /proc/self/exe and every other name of that link, printed so that a
 * native run and one under `sandpit run` compare byte for byte (no pid,
 * tid or inode number is printed, only names, errors, sizes, hashes and
 * whether two things are the same file).
 *   selfexe            everything below, one line each
 *   selfexe swap       the name and the bytes, then waits for a byte on
 *                      stdin (the test swaps the file meanwhile), again
 *   selfexe others     /proc/1/exe, the parent's exe, /proc/0PID/exe
 *   selfexe write      /proc/self/exe opened for writing
 *   selfexe link P     P read as a link and opened
 *   selfexe byname P   P opened by its name */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

static const char *err(int e)
{
	switch (e) {
	case EACCES:
		return "EACCES";
	case ENOENT:
		return "ENOENT";
	case ENOTDIR:
		return "ENOTDIR";
	case ELOOP:
		return "ELOOP";
	case EINVAL:
		return "EINVAL";
	case ETXTBSY:
		return "ETXTBSY";
	case ENODATA:
		return "ENODATA";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case EPERM:
		return "EPERM";
	case EBADF:
		return "EBADF";
	}
	static char buf[32];
	snprintf(buf, sizeof buf, "errno %d", e);
	return buf;
}

static void name_at(const char *what, int dir, const char *path)
{
	char buf[PATH_MAX];
	ssize_t n = readlinkat(dir, path, buf, sizeof buf - 1);
	if (n < 0) {
		printf("%s: readlink %s\n", what, err(errno));
		return;
	}
	buf[n] = 0;
	printf("%s: %s\n", what, buf);
}

static void name(const char *what, const char *path)
{
	name_at(what, AT_FDCWD, path);
}

/* the whole file: its length and FNV-1a hash */
static void bytes(const char *what, int fd)
{
	uint64_t h = 0xcbf29ce484222325ull;
	unsigned char buf[65536];
	long total = 0;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 0x100000001b3ull;
		total += n;
	}
	if (n < 0)
		printf("%s: read %s\n", what, err(errno));
	else
		printf("%s: %ld bytes fnv %016llx\n", what, total, (unsigned long long)h);
}

static int opened_at(const char *what, int dir, const char *path, int flags)
{
	int fd = openat(dir, path, flags);
	if (fd < 0)
		printf("%s: open %s\n", what, err(errno));
	else
		bytes(what, fd);
	return fd;
}

static void same_file(const char *what, const struct stat *a, const struct stat *b)
{
	printf("%s: %s, %s, %lld bytes, mode %o\n", what,
	       a->st_dev == b->st_dev && a->st_ino == b->st_ino ? "same file" : "another file",
	       S_ISREG(a->st_mode)   ? "regular"
	       : S_ISLNK(a->st_mode) ? "link"
				     : "other",
	       (long long)a->st_size, (unsigned)(a->st_mode & 07777));
}

static pid_t tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static pid_t leader;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* a second thread's names for the link: its own tid, and under the leader */
static void *other_thread(void *arg)
{
	char p[64];
	(void)arg;
	pthread_mutex_lock(&lock);
	snprintf(p, sizeof p, "/proc/%d/exe", (int)tid());
	name("thread: /proc/TID/exe", p);
	snprintf(p, sizeof p, "/proc/%d/task/%d/exe", (int)leader, (int)tid());
	name("thread: /proc/PID/task/TID/exe", p);
	snprintf(p, sizeof p, "/proc/%d/task/%d/exe", (int)tid(), (int)leader);
	name("thread: /proc/TID/task/PID/exe", p);
	name("thread: /proc/thread-self/exe", "/proc/thread-self/exe");
	int fd = opened_at("thread: open /proc/TID/exe", AT_FDCWD,
			   (snprintf(p, sizeof p, "/proc/%d/exe", (int)tid()), p), O_RDONLY);
	if (fd >= 0)
		close(fd);
	fflush(stdout);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void everything(void)
{
	char p[96];
	leader = getpid();
	name("/proc/self/exe", "/proc/self/exe");
	name("/proc/thread-self/exe", "/proc/thread-self/exe");
	snprintf(p, sizeof p, "/proc/%d/exe", (int)leader);
	name("/proc/PID/exe", p);
	snprintf(p, sizeof p, "/proc/%d/task/%d/exe", (int)leader, (int)leader);
	name("/proc/PID/task/PID/exe", p);
	name("/proc/self/../self/exe", "/proc/self/../self/exe");
	name("/proc/self/./exe", "/proc/self/./exe");
	name("//proc//self//exe", "//proc//self//exe");
	int dir = open("/proc/self", O_RDONLY | O_DIRECTORY);
	name_at("dirfd /proc/self + exe", dir, "exe");
	int tasks = open("/proc/self/task", O_RDONLY | O_DIRECTORY);
	snprintf(p, sizeof p, "%d/exe", (int)leader);
	name_at("dirfd /proc/self/task + PID/exe", tasks, p);
	snprintf(p, sizeof p, "/proc/self/task/%d", (int)leader);
	int task = open(p, O_PATH | O_DIRECTORY);
	name_at("dirfd O_PATH /proc/self/task/PID + exe", task, "exe");
	int link = open("/proc/self/exe", O_PATH | O_NOFOLLOW);
	name_at("O_PATH|O_NOFOLLOW of the link, readlinkat \"\"", link, "");
	struct stat ls, fs, st;
	if (fstatat(link, "", &ls, AT_EMPTY_PATH) == 0)
		printf("O_PATH|O_NOFOLLOW of the link, fstatat \"\": %s\n",
		       S_ISLNK(ls.st_mode) ? "link" : "not a link");
	else
		printf("O_PATH|O_NOFOLLOW of the link, fstatat \"\": %s\n", err(errno));

	int fd = opened_at("open /proc/self/exe", AT_FDCWD, "/proc/self/exe", O_RDONLY);
	if (fd < 0 || fstat(fd, &fs) < 0)
		return;
	int f2 = opened_at("openat dirfd /proc/self + exe", dir, "exe", O_RDONLY | O_CLOEXEC);
	if (f2 >= 0) {
		printf("  close-on-exec: %d\n", (fcntl(f2, F_GETFD) & FD_CLOEXEC) != 0);
		close(f2);
	}
	snprintf(p, sizeof p, "/proc/self/task/%d/exe", (int)leader);
	f2 = opened_at("open /proc/self/task/PID/exe", AT_FDCWD, p, O_RDONLY);
	if (f2 >= 0)
		close(f2);
	f2 = opened_at("open /proc/self/../self/exe", AT_FDCWD, "/proc/self/../self/exe", O_RDONLY);
	if (f2 >= 0)
		close(f2);
	/* an open file of its own: its offset is not fd's */
	f2 = open("/proc/self/exe", O_RDONLY);
	printf("a new open file: offset %lld\n", f2 < 0 ? -1LL : (long long)lseek(f2, 0, SEEK_CUR));
	if (f2 >= 0)
		close(f2);
	f2 = open("/proc/self/exe", O_PATH);
	if (f2 >= 0 && fstat(f2, &st) == 0)
		same_file("open O_PATH /proc/self/exe, fstat", &st, &fs);
	else
		printf("open O_PATH /proc/self/exe: %s\n", err(errno));
	if (f2 >= 0)
		close(f2);
	if (stat("/proc/self/exe", &st) == 0)
		same_file("stat /proc/self/exe", &st, &fs);
	else
		printf("stat /proc/self/exe: %s\n", err(errno));
	if (fstatat(dir, "exe", &st, 0) == 0)
		same_file("fstatat dirfd /proc/self + exe", &st, &fs);
	struct statx sx;
	if (statx(AT_FDCWD, "/proc/self/exe", 0, STATX_BASIC_STATS, &sx) == 0)
		printf("statx /proc/self/exe: %s, %llu bytes\n",
		       sx.stx_ino == fs.st_ino &&
				       makedev(sx.stx_dev_major, sx.stx_dev_minor) == fs.st_dev
			       ? "same file"
			       : "another file",
		       (unsigned long long)sx.stx_size);
	else
		printf("statx /proc/self/exe: %s\n", err(errno));
	if (lstat("/proc/self/exe", &st) == 0)
		printf("lstat /proc/self/exe: %s\n", S_ISLNK(st.st_mode) ? "link" : "not a link");
	else
		printf("lstat /proc/self/exe: %s\n", err(errno));
	printf("access F_OK %d R_OK %d X_OK %d\n", access("/proc/self/exe", F_OK),
	       access("/proc/self/exe", R_OK), access("/proc/self/exe", X_OK));
	printf("faccessat2 R_OK|X_OK AT_EACCESS %d\n",
	       faccessat(AT_FDCWD, "/proc/self/exe", R_OK | X_OK, AT_EACCESS));
	struct statfs a, b;
	if (statfs("/proc/self/exe", &a) == 0 && fstatfs(fd, &b) == 0)
		printf("statfs: %s\n",
		       a.f_type == b.f_type && !memcmp(&a.f_fsid, &b.f_fsid, sizeof a.f_fsid)
			       ? "the file's file system"
			       : "another file system");
	else
		printf("statfs: %s\n", err(errno));
	ssize_t lx = listxattr("/proc/self/exe", NULL, 0);
	printf("listxattr: %s\n", lx < 0 ? err(errno) : lx ? "some" : "none");
	char v[64];
	printf("getxattr user.none: %s\n",
	       getxattr("/proc/self/exe", "user.none", v, sizeof v) < 0 ? err(errno) : "a value");
	int r = open("/proc/self/exe", O_RDONLY | O_NOFOLLOW);
	printf("open O_NOFOLLOW: %s\n", r < 0 ? err(errno) : "opened");
	r = open("/proc/self/exe", O_RDONLY | O_DIRECTORY);
	printf("open O_DIRECTORY: %s\n", r < 0 ? err(errno) : "opened");
	printf("chdir: %s\n", chdir("/proc/self/exe") < 0 ? err(errno) : "done");
	/* names that only look like it */
	name("/proc/self/exe/", "/proc/self/exe/");
	name("/proc/self/exe/.", "/proc/self/exe/.");
	name("/proc/self/exex", "/proc/self/exex");
	name("/proc/self/ex", "/proc/self/ex");
	name("/proc/self/exe/x", "/proc/self/exe/x");
	r = open("/proc/self/exe/", O_RDONLY);
	printf("open /proc/self/exe/: %s\n", r < 0 ? err(errno) : "opened");
	r = open("/proc/self/exe/..", O_RDONLY);
	printf("open /proc/self/exe/..: %s\n", r < 0 ? err(errno) : "opened");
	r = stat("/proc/self/exe/", &st);
	printf("stat /proc/self/exe/: %s\n", r < 0 ? err(errno) : "done");
	fflush(stdout);

	pthread_t t;
	if (pthread_create(&t, NULL, other_thread, NULL) == 0)
		pthread_join(t, NULL);
}

static void swap(void)
{
	char c;
	for (int round = 0; round < 2; round++) {
		name("name", "/proc/self/exe");
		int fd = opened_at("bytes", AT_FDCWD, "/proc/self/exe", O_RDONLY);
		if (fd >= 0)
			close(fd);
		struct stat st;
		if (stat("/proc/self/exe", &st) == 0)
			printf("size: %lld\n", (long long)st.st_size);
		fflush(stdout);
		if (!round && read(0, &c, 1) != 1)
			return;
	}
}

static void others(void)
{
	char p[64];
	name("/proc/1/exe", "/proc/1/exe");
	snprintf(p, sizeof p, "/proc/0%d/exe", (int)getpid());
	name("/proc/0PID/exe", p);
	name("/proc/self/exe/../exe", "/proc/self/exe/../exe");
	snprintf(p, sizeof p, "/proc/%d/exe", (int)getppid());
	name("/proc/PPID/exe", p);
	int fd = open(p, O_RDONLY);
	printf("open /proc/PPID/exe: %s\n", fd < 0 ? err(errno) : "opened");
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "swap"))
		swap();
	else if (argc > 1 && !strcmp(argv[1], "others"))
		others();
	else if (argc > 1 && !strcmp(argv[1], "write")) {
		static const int flags[] = { O_WRONLY, O_RDWR, O_RDONLY | O_TRUNC,
					     O_WRONLY | O_APPEND, O_RDONLY | O_CREAT };
		for (int i = 0; i < 5; i++) {
			int fd = open("/proc/self/exe", flags[i], 0644);
			printf("open %#x: %s\n", flags[i], fd < 0 ? err(errno) : "opened");
		}
	} else if (argc > 2 && !strcmp(argv[1], "link")) {
		name("link", argv[2]);
		int fd = opened_at("bytes", AT_FDCWD, argv[2], O_RDONLY);
		if (fd >= 0)
			close(fd);
	} else if (argc > 2 && !strcmp(argv[1], "byname")) {
		int fd = open(argv[2], O_RDONLY);
		printf("byname: %s\n", fd < 0 ? err(errno) : "opened");
	} else
		everything();
	return 0;
}
