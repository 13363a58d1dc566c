/* An outside review of B's write opens (user/trusted/write_open.c): B opens
 * a file for writing inside a write grant itself and hands the descriptor
 * to T over a SOCK_SEQPACKET pair (P's end in sandpit's block), T takes it
 * (SP_V_RECV) and checks B's tag.  Each test attacks the hand-over or the
 * open's semantics, counts the attempts that reached the call and checks
 * the precise outcome (the file each thread got, errno, flags, modes, the
 * descriptors left in P and B). */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "u_state.h"
#include "user/start/sandbox.h"

#define NEED_OPENAT2()                                             \
	do {                                                       \
		if (!suite_has_openat2())                          \
			SKIP(return, "write grants need openat2"); \
	} while (0)

#define NTH 4
#define PER_TH 2000
#define NRES 32

struct box {
	char grant[64];
	long res[NRES];
	int n;
	/* the hand-over attack */
	long junk_first, junk_ok, steal_first, steals;
	long opens, ok, wrong_file, eio, other, other_errno, cloexec_wrong;
	long after_ok, after_opens, after_errno;
	ino_t ino[NTH];
	volatile int stop;
	/* the descriptor count */
	volatile int phase;
	long p_before, p_after, b_before, b_after, leak_opens, leak_results[4];
	pid_t bpid;
};

static void note(struct box *b, long r)
{
	if (b->n < NRES)
		b->res[b->n++] = r < 0 ? -errno : r;
}
#define R(call) note(b, (long)(call))

static void rm_rf(const char *d)
{
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", d);
}

static struct box *new_box(void)
{
	struct box *b = shared_page(sizeof(*b));
	if (!b)
		return NULL;
	strcpy(b->grant, "/tmp/sandpit-rev7-XXXXXX");
	if (!mkdtemp(b->grant) || chmod(b->grant, 0755))
		return NULL;
	return b;
}

static void path_in(const struct box *b, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", b->grant, name);
}

/* --- the program's flags and umask, as natively --- */

static long mode_of(const char *p)
{
	struct stat st;
	return stat(p, &st) ? -errno : (long)(st.st_mode & 07777);
}

static long size_of(int fd)
{
	struct stat st;
	return fstat(fd, &st) ? -errno : (long)st.st_size;
}

static int body_flags(void *a)
{
	struct box *b = a;
	char f[96], g[96], l[96], d[96];
	path_in(b, "f", f, sizeof(f));
	path_in(b, "g", g, sizeof(g));
	path_in(b, "l", l, sizeof(l));
	path_in(b, "d", d, sizeof(d));
	umask(027);
	int fd = open(f, O_CREAT | O_EXCL | O_WRONLY, 0666);
	R(fd >= 0);                                           /* 0 */
	R(write(fd, "hello", 5));                             /* 1 */
	close(fd);
	R(mode_of(f));                                        /* 2: 0640 */
	R(open(f, O_CREAT | O_EXCL | O_WRONLY, 0666));        /* 3: -EEXIST */
	fd = open(f, O_WRONLY | O_TRUNC);
	R(size_of(fd));                                       /* 4: 0 */
	R(fcntl(fd, F_GETFD));                                /* 5: 0 */
	R(fcntl(fd, F_GETFL) & (O_NONBLOCK | O_APPEND | O_ACCMODE)); /* 6: O_WRONLY */
	close(fd);
	fd = open(f, O_RDWR | O_APPEND | O_CLOEXEC);
	R(fcntl(fd, F_GETFD));                                /* 7: FD_CLOEXEC */
	R(fcntl(fd, F_GETFL) & (O_NONBLOCK | O_APPEND | O_ACCMODE)); /* 8: O_RDWR|O_APPEND */
	close(fd);
	fd = open(f, O_WRONLY | O_NONBLOCK);
	R(fcntl(fd, F_GETFL) & O_NONBLOCK);                   /* 9: O_NONBLOCK */
	close(fd);
	R(open(l, O_WRONLY | O_NOFOLLOW));                    /* 10: -ELOOP */
	R(open(d, O_WRONLY));                                 /* 11: -EISDIR */
	R(open(f, O_WRONLY | O_DIRECTORY));                   /* 12: -ENOTDIR */
	umask(0);
	fd = open(g, O_CREAT | O_WRONLY, 06777);
	R(fd >= 0);                                           /* 13 */
	close(fd);
	R(mode_of(g));                                        /* 14: 0777 (no set-id bit) */
	/* O_CREAT without O_EXCL on a name that is there: opened, truncated */
	fd = open(f, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	R(size_of(fd));                                       /* 15: 0 */
	R(mode_of(f));                                        /* 16: still 0640 */
	close(fd);
	fd = open("/dev/null", O_RDWR);
	R(fcntl(fd, F_GETFL) & (O_NONBLOCK | O_ACCMODE));     /* 17: O_RDWR */
	R(write(fd, "x", 1));                                 /* 18: 1 */
	close(fd);
	return 0;
}

TEST(write_open_flags_modes_and_errors_as_natively)
{
	NEED_OPENAT2();
	struct box *b = new_box();
	ASSERT_NE(NULL, b);
	char l[96], d[96];
	path_in(b, "l", l, sizeof(l));
	path_in(b, "d", d, sizeof(d));
	char f[96];
	path_in(b, "f", f, sizeof(f));
	ASSERT_EQ(0, symlink(f, l));
	ASSERT_EQ(0, mkdir(d, 0755));
	const char *w[] = { b->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	int st = run_sandboxed_opts(body_flags, b, &o, 60);
	ASSERT_EQ(0, outcome(st));
	ASSERT_EQ(19, b->n);
	long want[19] = { 1, 5, 0640, -EEXIST, 0, 0, O_WRONLY, FD_CLOEXEC, O_RDWR | O_APPEND,
			  O_NONBLOCK, -ELOOP, -EISDIR, -ENOTDIR, 1, 0777, 0, 0640, O_RDWR, 1 };
	for (int i = 0; i < 19; i++) {
		EXPECT_EQ(want[i], b->res[i]) TH_LOG("result %d", i);
	}
	rm_rf(b->grant);
	munmap(b, sizeof(*b));
}

/* --- the program writes into, and reads from, P's end of the hand-over --- */

static int pass_fd(void)
{
	return state_of(my_mailbox())->sp->pass_fd;
}

struct th {
	struct box *b;
	int i;
};

static void *opener(void *a)
{
	struct th *t = a;
	struct box *b = t->b;
	char p[96], n[8];
	snprintf(n, sizeof(n), "f%d", t->i);
	path_in(b, n, p, sizeof(p));
	for (int k = 0; k < PER_TH; k++) {
		int cx = k & 1;
		__atomic_add_fetch(&b->opens, 1, __ATOMIC_RELAXED);
		int fd = open(p, O_WRONLY | (cx ? O_CLOEXEC : 0));
		if (fd < 0) {
			if (errno == EIO) {
				__atomic_add_fetch(&b->eio, 1, __ATOMIC_RELAXED);
			} else {
				b->other_errno = errno;
				__atomic_add_fetch(&b->other, 1, __ATOMIC_RELAXED);
			}
			continue;
		}
		struct stat st;
		if (fstat(fd, &st) || st.st_ino != b->ino[t->i])
			__atomic_add_fetch(&b->wrong_file, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&b->ok, 1, __ATOMIC_RELAXED);
		if (!!(fcntl(fd, F_GETFD) & FD_CLOEXEC) != cx)
			__atomic_add_fetch(&b->cloexec_wrong, 1, __ATOMIC_RELAXED);
		close(fd);
	}
	return NULL;
}

static void *stealer(void *a)
{
	struct box *b = a;
	char buf[16];
	while (!b->stop) {
		long r = raw_syscall(SYS_read, pass_fd(), (long)buf, sizeof(buf));
		if (!b->steals && !b->steal_first)
			b->steal_first = r;
		if (r < 0)
			break;
		b->steals++;
	}
	return NULL;
}

static void storm(struct box *b)
{
	pthread_t th[NTH];
	struct th t[NTH];
	for (int i = 0; i < NTH; i++) {
		t[i] = (struct th){ b, i };
		pthread_create(&th[i], NULL, opener, &t[i]);
	}
	for (int i = 0; i < NTH; i++)
		pthread_join(th[i], NULL);
}

static int body_junk(void *a)
{
	struct box *b = a;
	/* bytes of the program's own in B's end: B's wait for T's
	 * acknowledgement returns at once from then on */
	for (int i = 0; i < 64; i++) {
		long r = raw_syscall(SYS_write, pass_fd(), (long)"junkjunk", 8);
		if (!i)
			b->junk_first = r;
		if (r == 8)
			b->junk_ok++;
	}
	storm(b);
	/* afterwards, one thread alone: every open gets its own file */
	char p[96];
	path_in(b, "f0", p, sizeof(p));
	for (int k = 0; k < 200; k++) {
		b->after_opens++;
		int fd = open(p, O_WRONLY);
		struct stat st;
		if (fd >= 0 && !fstat(fd, &st) && st.st_ino == b->ino[0])
			b->after_ok++;
		else if (fd < 0)
			b->after_errno = errno;
		if (fd >= 0)
			close(fd);
	}
	return 0;
}

static int body_steal(void *a)
{
	struct box *b = a;
	pthread_t s;
	pthread_create(&s, NULL, stealer, b);
	storm(b);
	b->stop = 1;
	/* in strict mode the stealer sleeps in read(2) on an empty socket:
	 * the process's exit ends it */
	return 0;
}

static struct box *storm_box(struct __test_metadata *_metadata)
{
	struct box *b = new_box();
	if (!b)
		return NULL;
	for (int i = 0; i < NTH; i++) {
		char p[96], n[8];
		snprintf(n, sizeof(n), "f%d", i);
		path_in(b, n, p, sizeof(p));
		int fd = open(p, O_CREAT | O_WRONLY, 0644);
		struct stat st;
		EXPECT_EQ(0, fstat(fd, &st));
		b->ino[i] = st.st_ino;
		close(fd);
	}
	return b;
}

/* Strict mode lets the program write(2) and read(2) any descriptor, P's
 * end of the hand-over too (its number is in the secure page U reads);
 * the filter sends both to B, which refuses sandpit's descriptors.  Junk
 * written there defeats B's one-in-flight lock: the tags must still give
 * every thread its own file or an errno, never another thread's file. */
TEST(junk_in_the_handover_socket_never_gives_a_thread_another_threads_file)
{
	NEED_OPENAT2();
	struct box *b = storm_box(_metadata);
	ASSERT_NE(NULL, b);
	const char *w[] = { b->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	int st = run_sandboxed_opts(body_junk, b, &o, 240);
	ASSERT_EQ(0, outcome(st));
	TH_LOG("junk writes %ld (first %ld); opens %ld: own file %ld, EIO %ld, other %ld (errno %ld), "
	       "another's file %ld, cloexec wrong %ld; after: %ld/%ld (errno %ld)",
	       b->junk_ok, b->junk_first, b->opens, b->ok, b->eio, b->other, b->other_errno,
	       b->wrong_file, b->cloexec_wrong, b->after_ok, b->after_opens, b->after_errno);
	/* both modes let the program write there today (the filter allows
	 * write(2) on that number, as strict mode does on every one) */
	EXPECT_EQ(64, b->junk_ok);
	EXPECT_EQ(NTH * PER_TH, b->opens);
	EXPECT_EQ(0, b->wrong_file);
	EXPECT_EQ(0, b->other);
	EXPECT_EQ(0, b->cloexec_wrong);
	EXPECT_EQ(b->opens, b->ok + b->eio);
	EXPECT_LT(0, b->ok);
	/* one thread alone afterwards: nothing left out of step */
	EXPECT_EQ(200, b->after_opens);
	EXPECT_EQ(200, b->after_ok);
	rm_rf(b->grant);
	munmap(b, sizeof(*b));
}

/* A thread of the program reads P's end while others open: whatever it
 * takes is discarded with its descriptor (read(2) has no control
 * buffer), and the T it was meant for answers an errno. */
TEST(a_thread_reading_the_handover_socket_takes_no_descriptor_and_gives_no_wrong_file)
{
	NEED_OPENAT2();
	struct box *b = storm_box(_metadata);
	ASSERT_NE(NULL, b);
	const char *w[] = { b->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	int st = run_sandboxed_opts(body_steal, b, &o, 240);
	ASSERT_EQ(0, outcome(st));
	TH_LOG("steals %ld (first %ld); opens %ld: own file %ld, EIO %ld, other %ld (errno %ld), "
	       "another's file %ld, cloexec wrong %ld",
	       b->steals, b->steal_first, b->opens, b->ok, b->eio, b->other, b->other_errno,
	       b->wrong_file, b->cloexec_wrong);
	/* both modes let the program read there today */
	EXPECT_EQ(8, b->steal_first);
	EXPECT_LT(0, b->steals);
	EXPECT_EQ(NTH * PER_TH, b->opens);
	EXPECT_EQ(0, b->wrong_file);
	EXPECT_EQ(0, b->other);
	EXPECT_EQ(0, b->cloexec_wrong);
	EXPECT_EQ(b->opens, b->ok + b->eio);
	rm_rf(b->grant);
	munmap(b, sizeof(*b));
}

/* --- descriptors left in P or B after 10,000 opens --- */

static void wait_phase(struct box *b, int p)
{
	for (int i = 0; i < 60000 && b->phase != p; i++)
		usleep(1000);
}

static int body_leak(void *a)
{
	struct box *b = a;
	char f[96], l[96], s[96], x[96];
	path_in(b, "f", f, sizeof(f));
	path_in(b, "l", l, sizeof(l));
	path_in(b, "s", s, sizeof(s));
	path_in(b, "x", x, sizeof(x));
	b->p_before = count_entries("/proc/self/fd");
	b->phase = 1;
	wait_phase(b, 2);
	for (int k = 0; k < 2500; k++) {
		int fd = open(f, O_WRONLY | O_TRUNC);       /* opened */
		if (fd >= 0)
			b->leak_results[0]++;
		close(fd);
		if (open(f, O_CREAT | O_EXCL | O_WRONLY, 0600) == -1 && errno == EEXIST)
			b->leak_results[1]++;
		if (open(l, O_WRONLY | O_NOFOLLOW) == -1 && errno == ELOOP)
			b->leak_results[2]++;
		if (open(s, O_WRONLY) == -1 && errno == EACCES)
			b->leak_results[3]++;
		b->leak_opens += 4;
	}
	b->p_after = count_entries("/proc/self/fd");
	b->phase = 3;
	wait_phase(b, 4);
	(void)x;
	return 0;
}

static pid_t ppid_of(pid_t p)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)p);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	pid_t r = 0;
	if (fgets(buf, sizeof(buf), f)) {
		char *ce = strrchr(buf, ')');
		r = ce ? atoi(ce + 4) : 0;
	}
	fclose(f);
	return r;
}

/* this test's B: named sandpit-B, a child or grandchild of this process */
static pid_t find_b(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;
	while (d && (e = readdir(d)) && !found) {
		char path[300], comm[64] = "";
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "sandpit-B", 9)) {
			pid_t p = atoi(e->d_name), pp = ppid_of(p);
			if (pp == getpid() || ppid_of(pp) == getpid())
				found = p;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

static void *b_counter(void *a)
{
	struct box *b = a;
	char p[64];
	wait_phase(b, 1);
	b->bpid = find_b();
	snprintf(p, sizeof(p), "/proc/%d/fd", (int)b->bpid);
	b->b_before = b->bpid ? count_entries(p) : -1;
	b->phase = 2;
	wait_phase(b, 3);
	b->b_after = b->bpid ? count_entries(p) : -1;
	b->phase = 4;
	return NULL;
}

TEST(ten_thousand_write_opens_leave_no_descriptor_in_p_or_b)
{
	NEED_OPENAT2();
	if (geteuid())
		SKIP(return, "B's descriptors are read as root");
	struct box *b = new_box();
	ASSERT_NE(NULL, b);
	char f[96], l[96], s[96];
	path_in(b, "f", f, sizeof(f));
	path_in(b, "l", l, sizeof(l));
	path_in(b, "s", s, sizeof(s));
	int fd = open(f, O_CREAT | O_WRONLY, 0644);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, symlink(f, l));
	fd = open(s, O_CREAT | O_WRONLY, 0755);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fchmod(fd, 04755));
	close(fd);
	const char *w[] = { b->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	/* B a child of this process (CLONE_PARENT from P), so it is found */
	sandpit_trusted_process_as_sibling();
	pthread_t c;
	ASSERT_EQ(0, pthread_create(&c, NULL, b_counter, b));
	int st = run_sandboxed_opts(body_leak, b, &o, 240);
	b->phase = 4;
	pthread_join(c, NULL);
	ASSERT_EQ(0, outcome(st));
	TH_LOG("opens %ld (opened %ld, EEXIST %ld, ELOOP %ld, EACCES %ld); P fds %ld -> %ld; "
	       "B (pid %d) fds %ld -> %ld",
	       b->leak_opens, b->leak_results[0], b->leak_results[1], b->leak_results[2],
	       b->leak_results[3], b->p_before, b->p_after, (int)b->bpid, b->b_before, b->b_after);
	EXPECT_EQ(10000, b->leak_opens);
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(2500, b->leak_results[i]) TH_LOG("kind %d", i);
	}
	EXPECT_LT(0, b->p_before);
	EXPECT_EQ(b->p_before, b->p_after);
	EXPECT_LT(0, b->bpid);
	EXPECT_LT(0, b->b_before);
	EXPECT_EQ(b->b_before, b->b_after);
	struct stat sb;
	ASSERT_EQ(0, stat(s, &sb));
	EXPECT_EQ(04755u, sb.st_mode & 07777);
	rm_rf(b->grant);
	munmap(b, sizeof(*b));
}

/* --- the program's own calls on P's end of the hand-over --- */

#include <sys/socket.h>

static int body_calls(void *a)
{
	struct box *b = a;
	int pf = pass_fd();
	int mine[2];
	char byte = 'x';
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, mine))
		return 1;
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &mine[0], sizeof(int));
	R(sendmsg(pf, &m, MSG_DONTWAIT));                   /* 0 */
	m.msg_controllen = sizeof(cbuf);
	R(recvmsg(pf, &m, MSG_DONTWAIT));                   /* 1 */
	R(dup(pf));                                         /* 2 */
	R(fcntl(pf, F_DUPFD, 0));                           /* 3 */
	R(shutdown(pf, SHUT_RDWR));                         /* 4 */
	int small = 1;
	R(setsockopt(pf, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small))); /* 5 */
	R(send(pf, "x", 1, MSG_DONTWAIT));                  /* 6 */
	char p[48];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", pf);
	R(open(p, O_RDWR));                                 /* 7 */
	R(close(pf));                                       /* 8 */
	R(dup2(mine[0], pf));                               /* 9 */
	/* a write open still hands the program its own file */
	char f[96];
	path_in(b, "f0", f, sizeof(f));
	int fd = open(f, O_WRONLY);
	struct stat st;
	R(fd >= 0 && !fstat(fd, &st) && st.st_ino == b->ino[0]); /* 10 */
	return 0;
}

/* Through T every call on a descriptor of sandpit's block is refused
 * (T's FD_FREE rule) but send(2) (sendto without an address), which
 * reaches P's end in both modes: it carries no descriptor and has only
 * write(2)'s power there, which both modes give the program anyway (the
 * junk test above).  Refused: sendmsg of the program's own descriptors into B,
 * recvmsg of the descriptor meant for T, dup, shutdown, setsockopt, a
 * reopen through /proc, close and dup2 over it.  Afterwards a write open
 * still gets the program its own file. */
TEST(calls_on_the_handover_socket_through_t_are_refused_and_opens_still_work)
{
	NEED_OPENAT2();
	struct box *b = storm_box(_metadata);
	ASSERT_NE(NULL, b);
	const char *w[] = { b->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	int st = run_sandboxed_opts(body_calls, b, &o, 60);
	ASSERT_EQ(0, outcome(st));
	ASSERT_EQ(11, b->n);
	/* sendmsg, recvmsg, dup, F_DUPFD, shutdown, setsockopt; the /proc
	 * reopen (a socket: B's answer); close; dup2 over it */
	long want[10] = { -EBADF, -EBADF, -EBADF, -EBADF, -EBADF, -EBADF, 1, -EACCES, -EBADF, -EBADF };
	for (int i = 0; i < 10; i++) {
		EXPECT_EQ(want[i], b->res[i]) TH_LOG("call %d", i);
	}
	EXPECT_EQ(1, b->res[10]);
	rm_rf(b->grant);
	munmap(b, sizeof(*b));
}

/* --- a set-id file hard-linked over the name being opened --- */

static void *linker(void *a)
{
	struct box *b = a;
	char t[96], t2[96], sname[96], plain[96];
	path_in(b, "t", t, sizeof(t));
	path_in(b, "t2", t2, sizeof(t2));
	path_in(b, "s", sname, sizeof(sname));
	path_in(b, "p", plain, sizeof(plain));
	while (!b->stop) {
		if (link(sname, t2) || rename(t2, t) || link(plain, t2) || rename(t2, t))
			break;
		b->steals++; /* rounds */
	}
	return NULL;
}

#define LINK_OPENS 10000
#define LINK_ROUNDS 1000
static int body_link(void *a)
{
	struct box *b = a;
	char t[96];
	path_in(b, "t", t, sizeof(t));
	pthread_t th;
	if (pthread_create(&th, NULL, linker, b))
		return 1;
	/* LINK_OPENS opens at least, and on until the linker has made
	 * LINK_ROUNDS rounds beside them (for 20 s at most, inside the
	 * test's 30): its four calls a round go through B as the opens do,
	 * and on a loaded machine it gets fewer turns (1,476 rounds of
	 * 10,000 opens with two busy loops on 2 CPUs, about 2,400 alone) */
	time_t until = time(NULL) + 20;
	for (int k = 0; k < LINK_OPENS || (b->steals <= LINK_ROUNDS && time(NULL) < until); k++) {
		b->opens++;
		/* half plain write opens, half O_CREAT ones (the name is there:
		 * B's O_EXCL try fails and it opens what is there) */
		int fd = open(t, (k & 1) ? O_WRONLY : O_CREAT | O_WRONLY, 0644);
		if (fd < 0) {
			if (errno == EACCES)
				b->eio++; /* refused: the set-id file */
			else
				b->other++, b->other_errno = errno;
			continue;
		}
		struct stat st;
		if (fstat(fd, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)))
			b->wrong_file++;
		else
			b->ok++;
		close(fd);
	}
	b->stop = 1;
	pthread_join(th, NULL);
	return 0;
}

/* As root, the program links a set-uid file (made outside) and a plain
 * one over the name another thread opens for writing, plain and with
 * O_CREAT: the pin B opens is what it decides on, so no open is ever
 * writable on the set-id file. */
TEST(setid_file_hard_linked_over_the_name_never_opened_for_writing)
{
	NEED_OPENAT2();
	if (geteuid())
		SKIP(return, "a set-uid file of root's is made as root");
	struct box *b = new_box();
	ASSERT_NE(NULL, b);
	char sname[96], plain[96], t[96];
	path_in(b, "s", sname, sizeof(sname));
	path_in(b, "p", plain, sizeof(plain));
	path_in(b, "t", t, sizeof(t));
	int fd = open(sname, O_CREAT | O_WRONLY, 0755);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fchmod(fd, 04755));
	close(fd);
	fd = open(plain, O_CREAT | O_WRONLY, 0644);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, link(plain, t));
	const char *w[] = { b->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	int st = run_sandboxed_opts(body_link, b, &o, 240);
	ASSERT_EQ(0, outcome(st));
	TH_LOG("opens %ld: plain %ld, refused (EACCES) %ld, other %ld (errno %ld), on the set-id file %ld; "
	       "link rounds %ld",
	       b->opens, b->ok, b->eio, b->other, b->other_errno, b->wrong_file, b->steals);
	EXPECT_LE(LINK_OPENS, b->opens);
	EXPECT_LT(LINK_ROUNDS, b->steals);
	EXPECT_LT(0, b->ok);
	EXPECT_LT(0, b->eio); /* the set-id file was there for some opens */
	EXPECT_EQ(0, b->wrong_file);
	EXPECT_EQ(0, b->other);
	struct stat sb;
	ASSERT_EQ(0, stat(sname, &sb));
	EXPECT_EQ(04755u, sb.st_mode & 07777);
	EXPECT_EQ(0, sb.st_size);
	rm_rf(b->grant);
	munmap(b, sizeof(*b));
}

TEST_HARNESS_MAIN
