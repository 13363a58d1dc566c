/* One file over 700 lines: one review of one code path (B's FIFO opens), and every
 * attack in it runs on the FIFO box its first 220 lines build (new_box, start_fifo_box, find_b,
 * wait_phase); split, each part would need all of them. */
/* An outside review of the FIFO opens B now makes itself inside a write
 * grant (user/trusted/write_open.c open_waiting): B waits in the slot's
 * server thread on the FIFO it pinned, watch_p ends that wait when U asks
 * to be interrupted (user/trusted/b_wait.c b_wait_asked), and the
 * descriptor reaches T over the pass socket.  Each test attacks the wait
 * from the sandboxed program, counts the attempts that reached it and
 * checks the precise outcome: the file each open got, its errno, what is
 * left in B.
 *
 * A test that expects what sandpit does not do today says so above it: it
 * fails on purpose until the hole is closed. */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "pace.h"
#include "u_state.h"

#define NOBODY 65534

#define NEED_OPENAT2()                                             \
	do {                                                       \
		if (!suite_has_openat2())                          \
			SKIP(return, "write grants need openat2"); \
	} while (0)
#define NEED_ROOT(uid)                                                                  \
	do {                                                                            \
		if ((uid) != 0 && geteuid() != 0)                                       \
			SKIP(return, "acting as another user and giving files to it needs root"); \
	} while (0)

/* REV8_ONLY=part of a test's name runs only the tests that match */
#define ONLY()                                                                    \
	do {                                                                      \
		const char *o_ = getenv("REV8_ONLY");                             \
		if (o_ && !strstr(__func__, o_))                                  \
			SKIP(return, "not asked for (REV8_ONLY)");               \
	} while (0)

#define NW 4      /* writers, each on its own FIFO */
#define ROUNDS 12 /* rendezvous per writer */
#define NMANY 48  /* slots waiting at once */

struct box {
	char grant[64];
	uid_t uid;
	ino_t ino[NW];
	volatile int stop, phase;
	/* forged interrupts */
	long forge_errno, reader_max_ms[NW], reader_why[NW], reader_first_bad[NW];
	volatile long in_open[NW], w_began[NW];
	volatile uint16_t slot[NW];
	long forged, reached[NW], ok[NW], wrong_file[NW], wrong_byte[NW], err[NW], last_errno[NW];
	long reader_ok[NW], reader_err[NW];
	/* the set-id exchange */
	int variant;
	long opens, fifo_opened, refused, eloop, eisdir, other, other_errno, setid, exchanges, helper;
	/* many waiting */
	long waiting_ok, waiting_err, calls_ok, calls_err, calls_done;
	pid_t bpid;
	long poll_eintr[NW];
	long b_fds_idle, b_fds_waiting, b_fds_after, b_waits, b_waits_after;
	long b_gone_ms;
	/* handlers */
	int restart;
	volatile long handled, handler_open, main_open, main_errno, handler_errno, handler_in;
	/* sigpending */
	long queued, queue_errno, pend_open, pend_errno;
	volatile pid_t main_tid;
	/* each round of each writer, for the log of one that failed: ms
	 * since t0 when the writer began and ended its open, ended its poll
	 * (and the poll's result, revents and the write's), and when the
	 * reader opened and read, and what it read (a byte, -1 end of file,
	 * -2 no byte in time, -3 no open) */
	long t0;
	long w_open[NW][ROUNDS], w_opened[NW][ROUNDS], w_polled[NW][ROUNDS], w_poll[NW][ROUNDS];
	long r_open[NW][ROUNDS], r_read[NW][ROUNDS], r_got[NW][ROUNDS];
};

static long ms_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void rm_rf(const char *d)
{
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", d);
}

static void path_in(const struct box *b, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", b->grant, name);
}

static struct box *new_box(uid_t uid)
{
	struct box *b = shared_page(sizeof(*b));
	if (!b)
		return NULL;
	if (geteuid()) /* a suite run by another user stays that user */
		uid = geteuid();
	b->uid = uid;
	strcpy(b->grant, "/tmp/sandpit-rev8-XXXXXX");
	if (!mkdtemp(b->grant) || chmod(b->grant, 0755) || chown(b->grant, uid, uid))
		return NULL;
	return b;
}

static int mkfifo_in(struct box *b, const char *name, ino_t *ino)
{
	char p[96];
	struct stat st;
	path_in(b, name, p, sizeof(p));
	if (mkfifo(p, 0666) || chown(p, b->uid, b->uid) || stat(p, &st))
		return -1;
	if (ino)
		*ino = st.st_ino;
	return 0;
}

/* the sandboxed child, started as uid with the write grant; its pid */
static pid_t start_box(struct box *b, int (*fn)(void *), struct sandpit_options *o)
{
	fflush(NULL);
	pid_t p = fork();
	if (p != 0)
		return p;
	if (b->uid != geteuid() && (setgroups(0, NULL) || setgid(b->uid) || setuid(b->uid)))
		_exit(SANDBOX_START_FAILED + 1);
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	if (!getenv("REV8_NATIVE") && sandpit_start(o) < 0) {
		fprintf(stderr, "sandpit_start: %s\n", sandpit_error());
		_exit(SANDBOX_START_FAILED);
	}
	_exit(fn(b));
}

static int finish_box(pid_t p, int timeout_s)
{
	int st;
	/* by the clock: on a loaded machine timeout_s * 100 sleeps of 10 ms
	 * take longer than the harness gives the test, which would then end
	 * without its log */
	long until = ms_now() + timeout_s * 1000L;
	while (ms_now() < until) {
		if (waitpid(p, &st, WNOHANG) == p)
			return outcome(st);
		usleep(10000);
	}
	kill(p, SIGKILL);
	waitpid(p, &st, 0);
	return -2;
}

static void wait_phase(struct box *b, int p)
{
	for (int i = 0; i < 30000 && b->phase < p; i++)
		usleep(1000);
}

/* B's threads asleep in an open (openat(AT_FDCWD, ...), as B makes the
 * waits), by /proc/B/task/TID/syscall */
static long count_waits(pid_t b)
{
	if (!pace_can_look(b))
		return -1;
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/task", (int)b);
	DIR *d = opendir(p);
	if (!d)
		return -errno;
	long n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		char f[300], line[256];
		if (e->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "/proc/%d/task/%s/syscall", (int)b, e->d_name);
		FILE *fp = fopen(f, "r");
		if (!fp)
			continue;
		if (fgets(line, sizeof(line), fp) && !strncmp(line, "257 0xffffffffffffff9c ", 23))
			n++;
		fclose(fp);
	}
	closedir(d);
	return n;
}

/* this test's B: sandpit-B, our child (we are its subreaper) */
static pid_t find_b(void)
{
	for (int i = 0; i < 2000; i++) {
		pid_t b = find_child_named("sandpit-B");
		if (b)
			return b;
		usleep(1000);
	}
	return 0;
}

static struct sandpit_options opts_for(struct box *b, const char **w)
{
	w[0] = b->grant;
	w[1] = NULL;
	return (struct sandpit_options){ .mode = suite_mode(), .allow_write = w };
}

/* the box of a test that waits on one FIFO (f0) in B, with this process
 * its B's subreaper (find_b): P's pid, or -1 */
static pid_t start_fifo_box(struct box *b, int (*fn)(void *))
{
	if (mkfifo_in(b, "f0", NULL) || prctl(PR_SET_CHILD_SUBREAPER, 1))
		return -1;
	const char *w[2];
	struct sandpit_options o = opts_for(b, w);
	return start_box(b, fn, &o);
}

/* ============ forged interrupt bytes in B's socket ============ */

/* P's end of the socket watch_p reads slot numbers from: any thread of the
 * program can write there (strict mode lets write through on any
 * descriptor).  A forger writes every slot's number without pause while
 * NW threads each wait in B for a reader of their own FIFO (one with
 * O_CREAT on the existing FIFO): each forged byte for a waiting slot ends
 * B's wait with -ERESTARTSYS, which U makes again, as no handler ran.
 * Each open gets its own FIFO, once, with the reader outside the sandbox
 * seeing the writer's byte: never EINTR, never -ERESTARTSYS (512) as an
 * errno, never another slot's FIFO, never EIO. */
struct wth {
	struct box *b;
	int i;
};

/* (REV8_NOFORGE=1 runs the writers and readers alone; with REV8_NATIVE=1
 * too, outside the sandbox: the baseline for the reader's longest wait.)
 * Each writer's slot number, twice per open while the writer waits (a
 * byte that lands while no B thread waits for the slot goes to its T as
 * SANDPIT_SIG_INTR, a queued real-time signal: a flood of them fills the
 * user's RLIMIT_SIGPENDING, which is another test's). */
static void *forger(void *a)
{
	struct box *b = a;
	int fd = state_of(my_mailbox())->sp->tb_fd;
	long done[NW] = { 0 };
	while (!b->stop) {
		for (int i = 0; i < NW; i++) {
			long round = __atomic_load_n(&b->in_open[i], __ATOMIC_ACQUIRE);
			if (!round || done[i] == round)
				continue;
			usleep(3000); /* the open is in B by now */
			uint16_t s2[2] = { b->slot[i], b->slot[i] };
			for (int k = 0; k < 2; k++) {
				long r = raw_syscall(SYS_write, fd, (long)&s2[k], sizeof(s2[k]));
				if (r == (long)sizeof(s2[k]))
					__atomic_add_fetch(&b->forged, 1, __ATOMIC_RELAXED);
				else if (r < 0)
					b->forge_errno = -r;
				usleep(2000);
			}
			done[i] = round;
		}
		usleep(500);
	}
	return NULL;
}

static void *fifo_writer(void *a)
{
	struct wth *t = a;
	struct box *b = t->b;
	char p[96], n[8];
	snprintf(n, sizeof(n), "f%d", t->i);
	path_in(b, n, p, sizeof(p));
	if (!getenv("REV8_NATIVE"))
		b->slot[t->i] = (uint16_t)state_of(my_mailbox())->sp->slot;
	for (int k = 0; k < ROUNDS; k++) {
		long before = __atomic_load_n(&b->forged, __ATOMIC_RELAXED);
		__atomic_store_n(&b->in_open[t->i], k + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&b->w_began[t->i], k + 1, __ATOMIC_RELEASE);
		b->w_open[t->i][k] = ms_now() - b->t0;
		int fd = open(p, O_WRONLY | (t->i == NW - 1 ? O_CREAT : 0), 0600);
		b->w_opened[t->i][k] = ms_now() - b->t0;
		__atomic_store_n(&b->in_open[t->i], 0, __ATOMIC_RELEASE);
		if (__atomic_load_n(&b->forged, __ATOMIC_RELAXED) != before)
			b->reached[t->i]++;
		if (fd < 0) {
			b->err[t->i]++;
			b->last_errno[t->i] = errno;
			continue;
		}
		struct stat st;
		if (fstat(fd, &st) || st.st_ino != b->ino[t->i]) {
			b->wrong_file[t->i]++;
		} else {
			unsigned char c = (unsigned char)k;
			/* and until this round's reader is gone, so that the next
			 * open meets the next reader (POLLERR: no reader left) */
			struct pollfd pf = { fd, 0, 0 };
			int w = write(fd, &c, 1) == 1, pr;
			/* a forged byte that comes once the open is done ends
			 * this poll, which T makes, early (EINTR; poll is never
			 * made again): what forged bytes may do */
			while ((pr = poll(&pf, 1, 3000)) < 0 && errno == EINTR)
				b->poll_eintr[t->i]++;
			b->w_polled[t->i][k] = ms_now() - b->t0;
			b->w_poll[t->i][k] = (pr + 1) * 1000 + pf.revents * 10 + w;
			if (w && pr == 1 && (pf.revents & POLLERR))
				b->ok[t->i]++;
			else {
				b->wrong_byte[t->i]++;
				b->last_errno[t->i] = 1000 + errno;
			}
		}
		close(fd);
	}
	return NULL;
}

static int body_forge(void *a)
{
	struct box *b = a;
	/* a write to a FIFO without its reader, or to B's socket after B
	 * ended, says so with EPIPE rather than end the process */
	signal(SIGPIPE, SIG_IGN);
	pthread_t f, w[NW];
	struct wth t[NW];
	/* the forger last: no thread starts while it writes (a forged byte
	 * for a starting slot is another surface) */
	for (int i = 0; i < NW; i++) {
		t[i] = (struct wth){ b, i };
		if (pthread_create(&w[i], NULL, fifo_writer, &t[i]))
			return 1;
	}
	int forging = !getenv("REV8_NOFORGE");
	if (forging && pthread_create(&f, NULL, forger, b))
		return 1;
	for (int i = 0; i < NW; i++)
		pthread_join(w[i], NULL);
	b->stop = 1;
	if (forging)
		pthread_join(f, NULL);
	return 0;
}

/* outside the sandbox: each round, a while after the writer began to
 * wait, a read open and the writer's byte */
static void *outside_reader(void *a)
{
	struct wth *t = a;
	struct box *b = t->b;
	char p[96], n[8];
	snprintf(n, sizeof(n), "f%d", t->i);
	path_in(b, n, p, sizeof(p));
	for (int k = 0; k < ROUNDS && !b->stop; k++) {
		/* round k only once the writer began its open k, which it does
		 * once it closed k-1 (or the box is over): on a loaded machine
		 * the writer may be slow to start, and slow between its byte
		 * and its close, longer than this reader's 40 ms; then the
		 * next reader came first, the writer's poll never saw POLLERR
		 * (this round's reader gone) and its close was the next
		 * reader's end of file, and from there every reader got the
		 * round before's byte.  The 40 ms + 3 ms * i after it keep the
		 * open waiting in B while the forger writes. */
		while (!b->stop && __atomic_load_n(&b->w_began[t->i], __ATOMIC_ACQUIRE) <= k)
			usleep(1000);
		usleep(40000 + 3000 * t->i);
		/* not blocking: a sandbox that died must not hang the test */
		b->r_open[t->i][k] = ms_now() - b->t0;
		int fd = open(p, O_RDONLY | O_NONBLOCK);
		if (fd < 0) {
			b->r_got[t->i][k] = -3;
			b->reader_err[t->i]++;
			continue;
		}
		struct pollfd pf = { fd, POLLIN, 0 };
		unsigned char c;
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		int pr = poll(&pf, 1, 5000);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms > b->reader_max_ms[t->i])
			b->reader_max_ms[t->i] = ms;
		ssize_t n = pr == 1 ? read(fd, &c, 1) : -2;
		b->r_read[t->i][k] = ms_now() - b->t0;
		b->r_got[t->i][k] = n == 1 ? c : n == 0 ? -1 : -2;
		if (n == 1 && c == (unsigned char)k) {
			b->reader_ok[t->i]++;
		} else {
			b->reader_err[t->i]++;
			/* why: 1 no byte in time, 2 end of file (a writer came and
			 * went), 3 another round's byte */
			b->reader_why[t->i] = pr != 1 ? 1 : n == 0 ? 2 : 3;
			if (!b->reader_first_bad[t->i])
				b->reader_first_bad[t->i] = k + 1;
		}
		close(fd);
	}
	return NULL;
}

static void forge(struct __test_metadata *_metadata, uid_t uid)
{
	NEED_ROOT(uid);
	NEED_OPENAT2();
	struct box *b = new_box(uid);
	ASSERT_NE(NULL, b);
	for (int i = 0; i < NW; i++) {
		char n[8];
		snprintf(n, sizeof(n), "f%d", i);
		ASSERT_EQ(0, mkfifo_in(b, n, &b->ino[i]));
	}
	const char *w[2];
	struct sandpit_options o = opts_for(b, w);
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	b->t0 = ms_now();
	pid_t p = start_box(b, body_forge, &o);
	ASSERT_LT(0, p);
	pid_t bp = find_b();
	pthread_t r[NW];
	struct wth t[NW];
	for (int i = 0; i < NW; i++) {
		t[i] = (struct wth){ b, i };
		ASSERT_EQ(0, pthread_create(&r[i], NULL, outside_reader, &t[i]));
	}
	/* 20 s: the harness gives the test 30, and the readers and B end
	 * after it */
	int st = finish_box(p, 20);
	b->stop = 1;
	for (int i = 0; i < NW; i++)
		pthread_join(r[i], NULL);
	int bst = -1;
	for (int i = 0; bp > 0 && i < 3000; i++) {
		if (waitpid(bp, &bst, WNOHANG) == bp)
			break;
		usleep(1000);
	}
	TH_LOG("forger's write error %ld", b->forge_errno);
	TH_LOG("forged slot numbers %ld; the sandboxed process ended with %d, B (%d) with %d",
	       b->forged, st, (int)bp, bst < 0 ? bst : outcome(bst));
	EXPECT_EQ(0, st);
	long reached = 0;
	for (int i = 0; i < NW; i++) {
		TH_LOG("writer %d%s: ok %ld, reached by a forgery %ld, wrong file %ld, byte lost %ld, "
		       "errors %ld (last errno %ld); reader ok %ld err %ld (last why %ld, first in round %ld), "
		       "longest wait for the byte %ld ms; polls a forgery ended %ld",
		       i, i == NW - 1 ? " (O_CREAT)" : "", b->ok[i], b->reached[i], b->wrong_file[i],
		       b->wrong_byte[i], b->err[i], b->last_errno[i], b->reader_ok[i], b->reader_err[i], b->reader_why[i], b->reader_first_bad[i],
		       b->reader_max_ms[i], b->poll_eintr[i]);
		reached += b->reached[i];
		for (int k = 0; b->ok[i] + b->reader_ok[i] != 2 * ROUNDS && k < ROUNDS; k++)
			TH_LOG("  round %d: open %ld..%ld ms, poll ended %ld ms (result %ld, revents %#lx, "
			       "byte written %ld); reader opened %ld ms, read %ld ms: %ld",
			       k, b->w_open[i][k], b->w_opened[i][k], b->w_polled[i][k],
			       b->w_poll[i][k] / 1000 - 1, b->w_poll[i][k] % 1000 / 10, b->w_poll[i][k] % 10,
			       b->r_open[i][k], b->r_read[i][k], b->r_got[i][k]);
		EXPECT_EQ(ROUNDS, b->ok[i]);
		EXPECT_EQ(0, b->err[i]);
		EXPECT_EQ(0, b->wrong_file[i]);
		EXPECT_EQ(ROUNDS, b->reader_ok[i]);
	}
	EXPECT_LT(NW * ROUNDS / 2, reached);
	/* O_CREAT on the existing FIFO made nothing else */
	char q[96];
	struct stat sb;
	path_in(b, "f3", q, sizeof(q));
	ASSERT_EQ(0, stat(q, &sb));
	EXPECT_TRUE(S_ISFIFO(sb.st_mode));
	EXPECT_EQ(NW, count_entries(b->grant));
	rm_rf(b->grant);
}

TEST(forged_interrupt_bytes_restart_waiting_fifo_opens_exactly_once_root)
{
	ONLY();
	forge(_metadata, 0);
}

TEST(forged_interrupt_bytes_restart_waiting_fifo_opens_exactly_once_nobody)
{
	ONLY();
	forge(_metadata, NOBODY);
}

/* ============ the set-id exchange, in other shapes ============ */

/* t is a FIFO half the time and something else the other half (a set-id
 * file, a directory, a symlink to the set-id file), exchanged without
 * pause, while the program opens t with a flag set that reaches B's write
 * open and may wait (O_WRONLY|O_CREAT; O_RDONLY|O_TRUNC, which waits for
 * a writer) and a helper ends each wait through a second name of the
 * FIFO.  Every open gives the FIFO or a refusal; never the set-id file. */
enum { V_CREAT_SETID, V_RDTRUNC_SETID, V_WR_DIR, V_WR_SYMLINK, NV };
static const char *const vname[NV] = { "O_WRONLY|O_CREAT vs set-id file",
				       "O_RDONLY|O_TRUNC vs set-id file",
				       "O_WRONLY vs directory", "O_WRONLY vs symlink to set-id file" };
#define XN 3000
#define XN_EXCH 500

static void *exchanger(void *a)
{
	struct box *b = a;
	char t[96], s[96];
	path_in(b, "t", t, sizeof(t));
	path_in(b, "s", s, sizeof(s));
	while (!b->stop)
		if (!syscall(SYS_renameat2, AT_FDCWD, t, AT_FDCWD, s, 2 /* RENAME_EXCHANGE */))
			b->exchanges++;
	return NULL;
}

static void *other_end(void *a)
{
	struct box *b = a;
	char r[96];
	path_in(b, "r", r, sizeof(r));
	/* a reader for the writers; for the O_RDONLY opens a writer, O_RDWR
	 * (which never waits) */
	int fl = b->variant == V_RDTRUNC_SETID ? O_RDWR : O_RDONLY | O_NONBLOCK;
	while (!b->stop) {
		int fd = open(r, fl);
		if (fd >= 0) {
			b->helper++;
			close(fd);
		}
	}
	return NULL;
}

static int body_exchange(void *a)
{
	struct box *b = a;
	char t[96];
	path_in(b, "t", t, sizeof(t));
	pthread_t th[2];
	if (pthread_create(&th[0], NULL, exchanger, b) || pthread_create(&th[1], NULL, other_end, b))
		return 1;
	int fl = b->variant == V_CREAT_SETID ? O_WRONLY | O_CREAT :
		 b->variant == V_RDTRUNC_SETID ? O_RDONLY | O_TRUNC : O_WRONLY;
	/* XN opens at least, and on until the exchanger has swapped the names
	 * XN_EXCH times beside them (20 s at most: four shapes in the test's
	 * 120): on a loaded machine it gets few slices */
	time_t until = time(NULL) + 20;
	for (int i = 0; i < XN || (b->exchanges <= XN_EXCH && time(NULL) < until); i++) {
		b->opens++;
		int fd = open(t, fl, 0600);
		if (fd < 0) {
			if (errno == EACCES)
				b->refused++;
			else if (errno == ELOOP)
				b->eloop++;
			else if (errno == EISDIR)
				b->eisdir++;
			else {
				b->other++;
				b->other_errno = errno;
			}
			continue;
		}
		struct stat sb;
		if (fstat(fd, &sb) == 0 && S_ISFIFO(sb.st_mode))
			b->fifo_opened++;
		else if (sb.st_mode & (S_ISUID | S_ISGID))
			b->setid++;
		else {
			b->other++;
			b->other_errno = 10000 + (long)(sb.st_mode & S_IFMT);
		}
		close(fd);
	}
	b->stop = 1;
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	return 0;
}

static void exchange(struct __test_metadata *_metadata, uid_t uid)
{
	NEED_ROOT(uid);
	NEED_OPENAT2();
	for (int v = 0; v < NV; v++) {
		struct box *b = new_box(uid);
		ASSERT_NE(NULL, b);
		b->variant = v;
		char t[96], r[96], s[96], x[96];
		path_in(b, "t", t, sizeof(t));
		path_in(b, "r", r, sizeof(r));
		path_in(b, "s", s, sizeof(s));
		path_in(b, "x", x, sizeof(x));
		ASSERT_EQ(0, mkfifo_in(b, "t", NULL));
		ASSERT_EQ(0, link(t, r));
		int fd = open(v == V_WR_SYMLINK ? x : s, O_CREAT | O_WRONLY, 0755);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, fchown(fd, b->uid, b->uid));
		ASSERT_EQ(0, fchmod(fd, 04755));
		close(fd);
		if (v == V_WR_DIR) {
			ASSERT_EQ(0, unlink(s));
			ASSERT_EQ(0, mkdir(s, 0755));
			ASSERT_EQ(0, chown(s, b->uid, b->uid));
		}
		if (v == V_WR_SYMLINK)
			ASSERT_EQ(0, symlink(x, s));
		const char *w[2];
		struct sandpit_options o = opts_for(b, w);
		int st = finish_box(start_box(b, body_exchange, &o), 180);
		TH_LOG("%s: opens %ld: the FIFO %ld, EACCES %ld, ELOOP %ld, EISDIR %ld, other %ld "
		       "(errno %ld), a set-id file %ld; exchanges %ld, other end %ld",
		       vname[v], b->opens, b->fifo_opened, b->refused, b->eloop, b->eisdir, b->other,
		       b->other_errno, b->setid, b->exchanges, b->helper);
		ASSERT_EQ(0, st);
		EXPECT_LE(XN, b->opens);
		EXPECT_LT(XN_EXCH, b->exchanges);
		EXPECT_LT(0, b->fifo_opened);
		EXPECT_EQ(0, b->setid);
		EXPECT_EQ(0, b->other);
		struct stat sb;
		ASSERT_EQ(0, stat(v == V_WR_SYMLINK ? x : (v == V_WR_DIR ? t : s), &sb));
		if (v != V_WR_DIR) {
			/* either name: the set-id file unchanged, empty */
			struct stat s2;
			if (stat(s, &s2) == 0 && S_ISREG(s2.st_mode))
				sb = s2;
			else
				stat(v == V_WR_SYMLINK ? x : t, &sb);
			EXPECT_EQ(04755u, sb.st_mode & 07777);
			EXPECT_EQ(0, sb.st_size);
		}
		rm_rf(b->grant);
		munmap(b, sizeof(*b));
	}
}

/* a fixture only for its timeout: four shapes, each up to 20 s on a
 * loaded machine */
FIXTURE(exchange) {};
FIXTURE_SETUP(exchange) {}
FIXTURE_TEARDOWN(exchange) {}

TEST_F_TIMEOUT(exchange, fifo_exchanged_with_setid_file_dir_or_symlink_in_other_flag_shapes_root, 120)
{
	ONLY();
	exchange(_metadata, 0);
}

TEST_F_TIMEOUT(exchange, fifo_exchanged_with_setid_file_dir_or_symlink_in_other_flag_shapes_nobody, 120)
{
	ONLY();
	exchange(_metadata, NOBODY);
}

/* ============ many slots waiting in B ============ */

/* NMANY threads each wait in B on one FIFO (a server thread asleep in the
 * open and a pinned descriptor each); meanwhile another thread's calls
 * are all answered.  One reader then ends every wait; afterwards B holds
 * no more descriptors and no thread of it sleeps in an open. */
static void *many_writer(void *a)
{
	struct box *b = a;
	char p[96];
	path_in(b, "f0", p, sizeof(p));
	int fd = open(p, O_WRONLY);
	if (fd >= 0 && write(fd, "x", 1) == 1)
		__atomic_add_fetch(&b->waiting_ok, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&b->waiting_err, 1, __ATOMIC_RELAXED);
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int body_many(void *a)
{
	struct box *b = a;
	char g[96];
	path_in(b, "g", g, sizeof(g));
	/* a first wait, ended by the outside at phase 1: B's own threads
	 * and descriptors counted idle around it */
	b->phase = 1;
	wait_phase(b, 2);
	pthread_t th[NMANY];
	for (int i = 0; i < NMANY; i++)
		if (pthread_create(&th[i], NULL, many_writer, b))
			return 1;
	b->phase = 3;
	for (int k = 0; k < 500; k++) {
		int fd = open(g, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		struct stat st;
		if (fd >= 0 && write(fd, "y", 1) == 1 && stat(g, &st) == 0)
			b->calls_ok++;
		else
			b->calls_err++;
		if (fd >= 0)
			close(fd);
	}
	b->calls_done = 1;
	for (int i = 0; i < NMANY; i++)
		pthread_join(th[i], NULL);
	b->phase = 5;
	wait_phase(b, 6);
	return 0;
}

TEST(many_slots_waiting_in_b_other_calls_answered_nothing_left)
{
	ONLY();
	NEED_OPENAT2();
	struct box *b = new_box(0);
	ASSERT_NE(NULL, b);
	pid_t p = start_fifo_box(b, body_many);
	ASSERT_LT(0, p);
	wait_phase(b, 1);
	b->bpid = find_b();
	char bfd[64];
	snprintf(bfd, sizeof(bfd), "/proc/%d/fd", (int)b->bpid);
	b->b_fds_idle = count_entries(bfd);
	b->phase = 2;
	wait_phase(b, 3);
	/* the other calls are answered while the waits go on */
	for (int i = 0; i < 30000 && !b->calls_done; i++)
		usleep(1000);
	usleep(200000);
	b->b_fds_waiting = count_entries(bfd);
	b->b_waits = count_waits(b->bpid);
	char f[96];
	path_in(b, "f0", f, sizeof(f));
	int rfd = open(f, O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, rfd);
	wait_phase(b, 5);
	long got = 0;
	char buf[NMANY];
	for (int i = 0; i < 100; i++) {
		ssize_t n = read(rfd, buf, sizeof(buf));
		if (n > 0)
			got += n;
		if (got >= NMANY)
			break;
		usleep(1000);
	}
	close(rfd);
	usleep(100000);
	b->b_fds_after = count_entries(bfd);
	b->b_waits_after = count_waits(b->bpid);
	b->phase = 6;
	int st = finish_box(p, 60);
	TH_LOG("B %d: descriptors idle %ld, with %d waits %ld, after %ld; threads in an open while waiting %ld, after %ld; "
	       "writers ok %ld err %ld; other calls ok %ld err %ld; bytes read %ld",
	       (int)b->bpid, b->b_fds_idle, NMANY, b->b_fds_waiting, b->b_fds_after,
	       b->b_waits, b->b_waits_after, b->waiting_ok, b->waiting_err, b->calls_ok,
	       b->calls_err, got);
	ASSERT_EQ(0, st);
	EXPECT_LT(0, b->bpid);
	EXPECT_EQ(1, b->calls_done);
	EXPECT_EQ(500, b->calls_ok);
	EXPECT_EQ(NMANY, b->waiting_ok);
	EXPECT_EQ(NMANY, got);
	/* every thread's pidfds and every wait's pin, each wait a thread of
	 * B's asleep in its open; none left
	 * (B is not dumpable: only root looks into it) */
	if (!geteuid()) {
		/* the pin a wait, and the waiting thread's two pidfds where the
		 * kernel has thread pidfds (not in old-filter or legacy); the
		 * first look may come before B took slot 0's */
		long per = (b->b_fds_waiting - b->b_fds_after) / NMANY;
		EXPECT_TRUE(per == 1 || per == 3);
		EXPECT_EQ(b->b_fds_after + per * NMANY, b->b_fds_waiting);
		EXPECT_LE(b->b_fds_idle, b->b_fds_after);
		EXPECT_GE(b->b_fds_idle + per - 1, b->b_fds_after);
		EXPECT_EQ(NMANY, b->b_waits);
		EXPECT_EQ(0, b->b_waits_after);
	}
	rm_rf(b->grant);
}

/* ============ P ends while B waits ============ */

/* A thread waits in B; another ends the process (exit_group).  B's
 * waiting thread must not keep B: B ends as soon as P's end of its socket
 * closes. */
static void *lone_writer(void *a)
{
	struct box *b = a;
	char p[96];
	path_in(b, "f0", p, sizeof(p));
	b->phase = 1;
	open(p, O_WRONLY);
	b->other++; /* never: no reader ever comes */
	return NULL;
}

static int body_exit(void *a)
{
	struct box *b = a;
	pthread_t th;
	if (pthread_create(&th, NULL, lone_writer, b))
		return 1;
	wait_phase(b, 2);
	return 7; /* exit_group with the open still waiting */
}

TEST(p_ending_while_b_waits_on_a_fifo_ends_b)
{
	ONLY();
	NEED_OPENAT2();
	struct box *b = new_box(0);
	ASSERT_NE(NULL, b);
	pid_t p = start_fifo_box(b, body_exit);
	ASSERT_LT(0, p);
	wait_phase(b, 1);
	b->bpid = find_b();
	ASSERT_LT(0, b->bpid);
	/* until B's thread sleeps in the FIFO's open */
	usleep(300000);
	b->b_waits = count_waits(b->bpid);
	b->phase = 2;
	EXPECT_EQ(7, finish_box(p, 30));
	long ms = 0;
	int st;
	for (; ms < 5000; ms++) {
		if (waitpid(b->bpid, &st, WNOHANG) == b->bpid)
			break;
		usleep(1000);
	}
	b->b_gone_ms = ms;
	TH_LOG("B %d had %ld thread(s) asleep in an open; ended %ld ms after P", (int)b->bpid,
	       b->b_waits, ms);
	if (!geteuid()) /* B is not dumpable */
		EXPECT_EQ(1, b->b_waits);
	EXPECT_GT(2000, ms);
	EXPECT_EQ(0, b->other);
	if (ms >= 5000)
		kill(b->bpid, SIGKILL);
	rm_rf(b->grant);
}

/* ============ a handler that opens the FIFO itself ============ */

/* The main thread waits in B on the FIFO; a signal comes; its handler
 * opens the same FIFO for writing (a second wait, on the same slot, while
 * the first was ended for it).  A reader outside opens the FIFO twice.
 * With SA_RESTART both opens return the FIFO, the handler's first; without
 * it the main open fails with EINTR, as natively, and nothing else. */
static struct box *hb;

static void fifo_handler(int sig)
{
	(void)sig;
	char p[96];
	path_in(hb, "f0", p, sizeof(p));
	hb->handler_in = 1;
	int fd = open(p, O_WRONLY);
	hb->handler_open = fd >= 0 ? 1 : 0;
	hb->handler_errno = fd >= 0 ? 0 : errno;
	if (fd >= 0) {
		if (write(fd, "h", 1) != 1)
			hb->handler_open = 2;
		close(fd);
	}
	hb->handled++;
}

static void *signaller(void *a)
{
	struct box *b = a;
	usleep(200000);
	syscall(SYS_tgkill, getpid(), b->main_tid, SIGUSR2);
	return NULL;
}

static int body_handler(void *a)
{
	struct box *b = a;
	hb = b;
	struct sigaction sa = { .sa_handler = fifo_handler, .sa_flags = b->restart ? SA_RESTART : 0 };
	sigaction(SIGUSR2, &sa, NULL);
	b->main_tid = (pid_t)syscall(SYS_gettid);
	char p[96];
	path_in(b, "f0", p, sizeof(p));
	pthread_t th;
	if (pthread_create(&th, NULL, signaller, b))
		return 1;
	b->phase = 1;
	int fd = open(p, O_WRONLY);
	b->main_open = fd >= 0 ? 1 : 0;
	b->main_errno = fd >= 0 ? 0 : errno;
	if (fd >= 0) {
		if (write(fd, "m", 1) != 1)
			b->main_open = 2;
		close(fd);
	}
	pthread_join(th, NULL);
	b->phase = 3;
	return 0;
}

static void handler_case(struct __test_metadata *_metadata, int restart)
{
	NEED_OPENAT2();
	struct box *b = new_box(0);
	ASSERT_NE(NULL, b);
	b->restart = restart;
	pid_t p = start_fifo_box(b, body_handler);
	ASSERT_LT(0, p);
	char f[96], got[4] = "";
	path_in(b, "f0", f, sizeof(f));
	wait_phase(b, 1);
	b->bpid = find_b();
	if (b->bpid <= 0)
		kill(p, SIGKILL);
	ASSERT_LT(0, b->bpid);
	int n = 0;
	for (int k = 0; k < (restart ? 2 : 1); k++) {
		/* the handler's open waits in B (then, with SA_RESTART, the main
		 * open made again after the handler): only then a reader */
		for (int i = 0; i < 30000 && !(k ? b->handled : b->handler_in) && b->phase != 3; i++)
			usleep(1000);
		/* (where B cannot be looked at: P's T asleep waiting for B) */
		for (int i = 0; i < 30000 && b->phase != 3; i++) {
			long w = count_waits(b->bpid);
			if (w > 0 || (w < 0 && pace_blocked_in(p, SYS_futex, -1)))
				break;
			usleep(1000);
		}
		if (b->phase == 3) /* the program is done: no writer to meet */
			break;
		int fd = open(f, O_RDONLY);
		ASSERT_LE(0, fd);
		/* to the end of what the writers write: with SA_RESTART the
		 * main open, made again after the handler, may meet this
		 * reader too (as natively), and its byte then comes here */
		while (n < 3 && read(fd, got + n, 1) == 1)
			n++;
		close(fd);
	}
	EXPECT_EQ(0, finish_box(p, 30));
	TH_LOG("%s: handled %ld, handler's open %ld (errno %ld), main open %ld (errno %ld), read \"%s\"",
	       restart ? "SA_RESTART" : "no SA_RESTART", b->handled, b->handler_open,
	       b->handler_errno, b->main_open, b->main_errno, got);
	EXPECT_EQ(1, b->handled);
	EXPECT_EQ(1, b->handler_open);
	if (restart) {
		EXPECT_EQ(1, b->main_open);
		EXPECT_STREQ("hm", got);
	} else {
		EXPECT_EQ(0, b->main_open);
		EXPECT_EQ(EINTR, b->main_errno);
		EXPECT_STREQ("h", got);
	}
	rm_rf(b->grant);
}

/* Each wait of handler_case is bounded (30 s at most, then a failed
 * expectation with the counts), and their sum is far above the harness's
 * default 30 s: under the harness's own timeout a slow machine (a CI run
 * beside other work, no-fsgsbase mode) killed the test with no word of
 * which wait was slow.  Now a slow step is slow, and a stuck one says
 * where it stuck */
FIXTURE(handler) {};
FIXTURE_SETUP(handler) {}
FIXTURE_TEARDOWN(handler) {}

TEST_F_TIMEOUT(handler, a_handler_that_opens_the_waited_fifo_sa_restart, 180)
{
	ONLY();
	handler_case(_metadata, 1);
}

TEST_F_TIMEOUT(handler, a_handler_that_opens_the_waited_fifo_no_restart, 180)
{
	ONLY();
	handler_case(_metadata, 0);
}

/* ============ the user's queued signals used up ============ */

/* B's wait once needed a POSIX timer, which takes one of the user's
 * queued signals (RLIMIT_SIGPENDING) when made: with the queue used up the
 * program's open failed with EAGAIN where natively it waits (found by
 * this test, both modes, as root and as nobody).  B's wake is now a
 * standard signal, which the kernel marks pending without a queue entry
 * when the queue is full, and nothing else is queued.  The program queues
 * real-time signals to itself, blocked, until the kernel says EAGAIN (the
 * limit is set low before the start, so that nothing else of the user's
 * is starved); then opens a FIFO a reader opens later.  Natively that
 * open waits and returns the FIFO: so must the sandboxed one. */
static int body_pending(void *a)
{
	struct box *b = a;
	sigset_t rt;
	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN + 3);
	sigprocmask(SIG_BLOCK, &rt, NULL);
	pid_t me = (pid_t)syscall(SYS_gettid);
	for (int i = 0; i < 4096; i++) {
		if (syscall(SYS_tgkill, getpid(), me, SIGRTMIN + 3)) {
			b->queue_errno = errno;
			break;
		}
		b->queued++;
	}
	char p[96];
	path_in(b, "f0", p, sizeof(p));
	b->phase = 1;
	int fd = open(p, O_WRONLY);
	b->pend_open = fd >= 0;
	b->pend_errno = fd >= 0 ? 0 : errno;
	if (fd >= 0)
		close(fd);
	return 0;
}

TEST(fifo_open_waits_with_the_users_queued_signals_used_up)
{
	ONLY();
	NEED_OPENAT2();
	struct box *b = new_box(NOBODY);
	ASSERT_NE(NULL, b);
	if (geteuid())
		b->uid = geteuid();
	ASSERT_EQ(0, mkfifo_in(b, "f0", NULL));
	struct rlimit rl = { 64, 64 };
	ASSERT_EQ(0, setrlimit(RLIMIT_SIGPENDING, &rl));
	const char *w[2];
	struct sandpit_options o = opts_for(b, w);
	pid_t p = start_box(b, body_pending, &o);
	ASSERT_LT(0, p);
	wait_phase(b, 1);
	usleep(300000);
	char f[96];
	path_in(b, "f0", f, sizeof(f));
	int rfd = open(f, O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, rfd);
	int st = finish_box(p, 20);
	close(rfd);
	TH_LOG("queued %ld signals (then errno %ld); the FIFO's open: %s (errno %ld)", b->queued,
	       b->queue_errno, b->pend_open ? "opened" : "failed", b->pend_errno);
	ASSERT_EQ(0, st);
	EXPECT_EQ(EAGAIN, b->queue_errno);
	EXPECT_LT(0, b->queued);
	EXPECT_EQ(1, b->pend_open);
	EXPECT_EQ(0, b->pend_errno);
	rm_rf(b->grant);
}
TEST_HARNESS_MAIN
