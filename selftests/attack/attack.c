/* An unmodified program that attacks the sandbox from inside `sandpit run`
 * (selftests/run_test.c runs it, linked dynamically and statically).
 *   attack NAME [ARG]
 * exits 0 if the attack was refused, 1 if it got through, 2 if it could not
 * be set up; being killed also counts as refused (fail closed). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/resource.h>

static long raw3(long nr, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}

/* [lo, hi) of the first mapping whose line contains what */
static int find_mapping(const char *what, unsigned long *lo, unsigned long *hi)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;
	while (f && !found && fgets(line, sizeof line, f))
		found = strstr(line, what) && sscanf(line, "%lx-%lx", lo, hi) == 2;
	if (f)
		fclose(f);
	return found;
}

/* one attempt on the plan cache: its name and what it returned, or the
 * errno it failed with, on stdout (the test counts and checks each) */
static void tried(const char *what, long r)
{
	printf("plan-cache: %s: %s\n", what, r >= 0 ? "done" : strerrorname_np(errno));
	if (r >= 0 && what[0] == 'o') /* an open that worked */
		close((int)r);
}

/* Every way to write, replace, move or read the plan cache's directory
 * `dir` (HOME/.cache/sandpit/plans) and its file `plan`, from a program
 * that may write all of HOME. */
static int plan_cache(const char *dir, const char *plan)
{
	char home[1024], f[2048], x[2048], decoy[1100], alias[1100], cache[1100];
	int fd;

	snprintf(home, sizeof home, "%s", dir);
	for (int up = 0; up < 3; up++)
		*strrchr(home, '/') = 0;
	snprintf(f, sizeof f, "%s/%s", dir, plan);
	snprintf(x, sizeof x, "%s/new.plan", dir);
	snprintf(decoy, sizeof decoy, "%s/decoy", home);
	snprintf(alias, sizeof alias, "%s/alias", home);
	snprintf(cache, sizeof cache, "%s/.cache", home);
	/* a file of the attacker's own, in the grant */
	fd = open(decoy, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "SPPLAN01", 8) != 8)
		return 2;
	close(fd);
	tried("open a plan for writing", open(f, O_WRONLY | O_TRUNC));
	tried("open a new plan", open(x, O_WRONLY | O_CREAT | O_EXCL, 0600));
	tried("open a plan for reading", open(f, O_RDONLY));
	tried("open the directory", open(dir, O_RDONLY | O_DIRECTORY));
	struct stat st;
	tried("stat a plan", stat(f, &st));
	tried("truncate a plan", truncate(f, 0));
	tried("chmod the directory", chmod(dir, 0777));
	tried("rename a plan", rename(f, x));
	tried("rename a file over a plan", rename(decoy, f));
	tried("rename .cache away", rename(cache, alias));
	tried("unlink a plan", unlink(f));
	tried("rmdir the directory", rmdir(dir));
	tried("mkdir in the directory", mkdir(x, 0700));
	tried("symlink over a plan", symlink(decoy, f));
	tried("symlink as a new plan", symlink(decoy, x));
	tried("link a plan out", link(f, alias));
	/* a name of its own for the directory: what it leads to is checked */
	if (symlink(dir, alias))
		return 2;
	snprintf(f, sizeof f, "%s/%s", alias, plan);
	snprintf(x, sizeof x, "%s/new.plan", alias);
	tried("open a plan for reading by a link", open(f, O_RDONLY));
	tried("open a new plan by a link", open(x, O_WRONLY | O_CREAT, 0600));
	fd = open(cache, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return 2;
	snprintf(f, sizeof f, "sandpit/plans/%s", plan);
	tried("openat a plan for reading", openat(fd, f, O_RDONLY));
	tried("openat a plan for writing", openat(fd, f, O_WRONLY));
	tried("renameat sandpit away", renameat(fd, "sandpit", fd, "moved"));
	close(fd);
	return 0;
}

/* Making the cache's directory before sandpit does, in a HOME without
 * .cache (the cache off for this run): a directory, a link, a rename. */
static int plan_cache_make(const char *home)
{
	char cache[1100], mine[1100];

	snprintf(cache, sizeof cache, "%s/.cache", home);
	snprintf(mine, sizeof mine, "%s/mine", home);
	if (mkdir(mine, 0700))
		return 2;
	tried("mkdir .cache", mkdir(cache, 0700));
	tried("symlink .cache", symlink(mine, cache));
	tried("rename a directory to .cache", rename(mine, cache));
	return 0;
}

/* A syscall instruction hidden inside another one: from hidden_mov,
 * b8 0f 05 c3 00 is `mov $0xc3050f, %eax`; from its second byte,
 * `syscall; ret`.  The patcher decodes the mov, so the call it hides is
 * made where it stands, straight to the kernel (hidden_call checks that
 * the bytes are still there). */
__asm__(".pushsection .text\n"
	".type hidden_mov,@function\n"
	"hidden_mov:\n"
	".byte 0xb8, 0x0f, 0x05, 0xc3, 0x00\n"
	"ret\n"
	".size hidden_mov, .-hidden_mov\n"
	".popsection\n");
extern const unsigned char hidden_mov[];

/* the call through the hidden syscall, or 1 (not an errno) if the
 * patcher changed its bytes */
static long hidden_call(long nr, long a, long b, long c)
{
	long r;
	/* below the red zone: the call pushes a return address */
	__asm__ volatile("sub $128, %%rsp\n\tcall *%[f]\n\tadd $128, %%rsp"
			 : "=a"(r)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), [f] "r"(hidden_mov + 1)
			 : "rcx", "r11", "memory");
	return memcmp(hidden_mov, "\xb8\x0f\x05\xc3\x00", 5) ? 1 : r;
}

static volatile long thread_result = 1;

static int clone_child(void *arg)
{
	(void)arg;
	thread_result = socket(AF_INET, SOCK_STREAM, 0);
	return 0;
}

/* the path flips between a granted file and the secret */
static char flip[4096];
static volatile int stop;
static const char *granted = "/etc/hostname", *secret;

static void *flipper(void *a)
{
	(void)a;
	while (!stop) {
		strcpy(flip, secret);
		strcpy(flip, granted);
	}
	return NULL;
}

static void *open_null(void *arg)
{
	int fd = open("/dev/null", O_RDONLY);
	*(int *)arg = fd >= 0;
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Every number /proc/self/fd lists that the program cannot reach (fcntl
 * says EBADF: sandpit's), closed and dup2-ed over; every other number below
 * the soft limit taken and given back; then threads, each of which needs a
 * slot's eventfds and B, make a call each.  Prints what it tried on stdout
 * (the test compares "reachable" with a native run); 0 only if each of
 * sandpit's numbers refused both with EBADF and the threads still worked. */
static int sandpit_fds(void)
{
	static unsigned char theirs[1 << 16];
	struct rlimit rl;
	int listed = 0, reachable = 0, refused = 0, tried = 0, taken = 0, ok = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d || getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 2;
	for (struct dirent *e; (e = readdir(d));) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] == '.' || fd == dirfd(d) || fd >= (int)sizeof theirs)
			continue;
		listed++;
		if (fcntl(fd, F_GETFD) >= 0)
			reachable++;
		else
			theirs[fd] = 1;
	}
	closedir(d);
	int top = rl.rlim_cur < sizeof theirs ? (int)rl.rlim_cur : (int)sizeof theirs;
	for (int fd = 3; fd < (int)sizeof theirs; fd++) {
		if (theirs[fd]) {
			tried += 2;
			errno = 0;
			refused += close(fd) < 0 && errno == EBADF;
			errno = 0;
			refused += dup2(0, fd) < 0 && errno == EBADF;
		} else if (fd < top && fcntl(fd, F_GETFD) < 0 && dup2(0, fd) == fd) {
			taken++;
			close(fd);
		}
	}
	pthread_t t[8];
	int worked[8] = { 0 };
	for (int i = 0; i < 8; i++)
		if (pthread_create(&t[i], NULL, open_null, &worked[i]))
			return 2;
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL), ok += worked[i];
	printf("sandpit-fds: listed %d reachable %d refused %d of %d taken %d threads %d/8\n", listed, reachable,
	       refused, tried, taken, ok);
	return refused == tried && ok == 8 ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *a = argc > 1 ? argv[1] : "";
	const char *arg = argc > 2 ? argv[2] : "/tmp/sandpit-attack";
	long r;

	if (!strcmp(a, "raw-write"))
		return raw3(SYS_openat, AT_FDCWD, (long)arg, O_WRONLY | O_CREAT) >= 0;
	if (!strcmp(a, "libc-write"))
		return open(arg, O_WRONLY | O_CREAT, 0600) >= 0;
	if (!strcmp(a, "hidden-write")) {
		/* write(2) through the hidden syscall: 0 refused with EPERM (a
		 * rule's errno), 1 written, 3 the site was patched, 4 otherwise */
		r = hidden_call(SYS_write, 2, (long)"hidden write\n", 13);
		return r == -EPERM ? 0 : r == 13 ? 1 : r == 1 ? 3 : 4;
	}
	if (!strcmp(a, "int80")) { /* i386 getpid */
		__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
		return 1; /* it ran */
	}
	if (!strcmp(a, "x32")) /* x32 getpid */
		return raw3(0x40000000L | SYS_getpid, 0, 0, 0) >= 0;
	if (!strcmp(a, "execve")) {
		char *const av[] = { "/bin/false", NULL };
		execv("/bin/false", av); /* false exits 1: got through */
		return 0;
	}
	if (!strcmp(a, "socket"))
		return socket(AF_INET, SOCK_STREAM, 0) >= 0;
	if (!strcmp(a, "fork")) {
		pid_t p = fork();
		if (p == 0)
			_exit(0);
		return p > 0;
	}
	if (!strcmp(a, "kill-parent"))
		return kill(getppid(), SIGCONT) == 0;
	if (!strcmp(a, "wait-any")) {
		/* B must never be a child of P's: no child of any kind (__WALL)
		 * may be there to wait for, exited, stopped or running */
		siginfo_t si;
		int w = waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | WCONTINUED | WNOHANG | __WALL);
		printf("attack: waitid %d %s\n", w, w < 0 && errno == ECHILD ? "ECHILD" : "?");
		return !(w < 0 && errno == ECHILD);
	}
	if (!strcmp(a, "secure-memory")) {
		unsigned long lo, hi;
		if (!find_mapping("sandpit-secure", &lo, &hi))
			return 2;
		if (mprotect((void *)lo, 4096, PROT_READ | PROT_WRITE) == 0)
			return 1;
		if (mmap((void *)lo, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			 -1, 0) != MAP_FAILED)
			return 1;
		return munmap((void *)lo, 4096) == 0;
	}
	if (!strcmp(a, "clone3"))
		return !(syscall(SYS_clone3, NULL, 0) == -1 && errno == ENOSYS);
	if (!strcmp(a, "raw-clone")) {
		size_t len = 1 << 20;
		char *stack = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
		if (stack == MAP_FAILED || clone(clone_child, stack + len, flags, NULL) < 0)
			return 0; /* refused outright */
		for (int i = 0; i < 2000 && thread_result == 1; i++)
			usleep(1000);
		return thread_result >= 0 && thread_result != 1;
	}
	if (!strcmp(a, "sandpit-fds"))
		return sandpit_fds();
	if (!strcmp(a, "toctou")) {
		pthread_t t;
		secret = arg;
		strcpy(flip, granted);
		if (pthread_create(&t, NULL, flipper, NULL))
			return 2;
		int got = 0;
		for (int i = 0; i < 3000 && !got; i++) {
			int fd = open(flip, O_RDONLY);
			char buf[16] = "";
			if (fd >= 0) {
				got = read(fd, buf, sizeof buf - 1) > 0 && !strncmp(buf, "SECRET", 6);
				close(fd);
			}
		}
		stop = 1;
		pthread_join(t, NULL);
		return got;
	}
	if (!strcmp(a, "plan-cache"))
		return argc > 3 ? plan_cache(arg, argv[3]) : 2;
	if (!strcmp(a, "plan-cache-make"))
		return plan_cache_make(arg);
	if (!strcmp(a, "refusals")) {
		/* one refusal of each kind, in a fixed order, each result said on
		 * stderr (so the test knows every call was made); exits 3 when all
		 * were refused, 1 if any got through */
		int sv[2], fd, n = 0;
		errno = 0;
		fd = open(arg, O_RDONLY); /* B: a path outside the grants */
		fprintf(stderr, "attack: open %d %s\n", fd, strerrorname_np(errno));
		n += fd < 0;
		errno = 0;
		fd = socket(AF_INET, SOCK_STREAM, 0); /* the policy's deny */
		fprintf(stderr, "attack: socket %d %s\n", fd, strerrorname_np(errno));
		n += fd < 0;
		errno = 0;
		fd = socketpair(AF_INET, SOCK_STREAM, 0, sv); /* the policy's argument rule */
		fprintf(stderr, "attack: socketpair %d %s\n", fd, strerrorname_np(errno));
		n += fd < 0;
		errno = 0;
		fd = kill(getppid(), SIGCONT); /* sandpit's guard: P's own pid only */
		fprintf(stderr, "attack: kill %d %s\n", fd, strerrorname_np(errno));
		n += fd < 0;
		errno = 0;
		pid_t child = fork(); /* the trusted process's own check: threads only */
		if (child == 0)
			_exit(0);
		fprintf(stderr, "attack: fork %d %s\n", (int)child, strerrorname_np(errno));
		n += child < 0;
		return n == 5 ? 3 : 1;
	}
	if (!strcmp(a, "refuse-many")) {
		/* the same refused call again and again; exits 1 */
		int n = atoi(arg), refused = 0;
		for (int i = 0; i < n; i++)
			refused += socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EAFNOSUPPORT;
		fprintf(stderr, "attack: %d of %d refused\n", refused, n);
		return 1;
	}
	if (!strcmp(a, "path-then-socket")) {
		/* a refusal a path grant would allow (reading ARG), then one no
		 * grant affects (a socket); exits 1 */
		int fd = open(arg, O_RDONLY), e1 = errno;
		int s = socket(AF_INET, SOCK_STREAM, 0), e2 = errno;
		fprintf(stderr, "attack: open %s, socket %s\n", fd < 0 ? strerrorname_np(e1) : "opened",
			s < 0 ? strerrorname_np(e2) : "made");
		return 1;
	}
	fprintf(stderr, "attack: unknown attack '%s'\n", a);
	return 2;
}
