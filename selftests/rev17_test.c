/* rev17: an outside review of the notifier process N (CLONE_VM |
 * CLONE_FILES child of P, no exit signal) that makes slots on demand.
 * Each test counts the attempts that reached the call and asserts the
 * precise outcome. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "user/layout/secure_mem.h"
#include "u_state.h"
#include "block_util.h"
#include "kernel_probe.h"

FIXTURE(r17) {};
FIXTURE_SETUP(r17) {}
FIXTURE_TEARDOWN(r17) {}

static int soft_1024(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_max < SM_FD_TOP + 1)
		return 0;
	rl.rlim_cur = 1024;
	return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

/* ---- 1. the program's waits see N (a clone child of P's) ---- */

struct w_out {
	long ntid;
	long wid_r, wid_e, wid_pid;     /* waitid(P_ALL, WEXITED|WNOHANG|__WALL) */
	long w4_r, w4_e;                /* wait4(-1, WNOHANG|__WALL) */
	long w4c_r, w4c_e;              /* wait4(-1, WNOHANG|__WCLONE) */
	long w4n_r, w4n_e;              /* wait4(N, WNOHANG|__WALL) */
	long blocking_done, blocking_r, blocking_e; /* wait4(-1, __WALL) from a thread */
};
static struct w_out *wo;

static void *blocking_wait(void *a)
{
	(void)a;
	int st;
	errno = 0;
	long r = wait4(-1, &st, __WALL, NULL);
	wo->blocking_e = errno;
	wo->blocking_r = r;
	__atomic_store_n(&wo->blocking_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int body_wait(void *a)
{
	struct w_out *o = wo = a;
	o->ntid = notifier_tid();
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	errno = 0;
	o->wid_r = syscall(SYS_waitid, P_ALL, 0, &si, WEXITED | WNOHANG | __WALL, NULL);
	o->wid_e = errno;
	o->wid_pid = si.si_pid;
	int st;
	errno = 0;
	o->w4_r = wait4(-1, &st, WNOHANG | __WALL, NULL);
	o->w4_e = errno;
	errno = 0;
	o->w4c_r = wait4(-1, &st, WNOHANG | __WCLONE, NULL);
	o->w4c_e = errno;
	errno = 0;
	o->w4n_r = o->ntid ? wait4((pid_t)o->ntid, &st, WNOHANG | __WALL, NULL) : -1;
	o->w4n_e = o->ntid ? errno : ECHILD;
	/* a program that reaps every child with __WALL before it ends: it has
	 * none, and natively the wait ends at once with ECHILD */
	pthread_t t;
	if (pthread_create(&t, NULL, blocking_wait, NULL))
		return 90;
	for (int i = 0; i < 3000 && !__atomic_load_n(&o->blocking_done, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	return 0; /* exit_group: the waiting thread ends with it */
}

/* A program with no child of its own asks the kernel for any child with
 * __WALL/__WCLONE: natively every wait is ECHILD.  N shares P's memory and
 * descriptor table but is no child of P's (its maker X exits at once, so N
 * is an orphan): every wait answers ECHILD, a blocking wait4(-1, __WALL)
 * (a reaper's loop) ends at once, and a wait for N's own pid (which the
 * program can read in sandpit's memory) is ECHILD too.  Found open by the
 * second review (N was P's child, exit signal 0: 0 instead of ECHILD, the
 * blocking wait hung while N lived) */
TEST_F_TIMEOUT(r17, program_waits_with___WALL_never_see_the_notifier, 60)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	struct w_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	struct sandpit_options opts = { .mode = suite_mode() };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_wait, o, &opts, 30)));
	TH_LOG("N %ld; waitid %ld/%ld pid %ld; wait4 __WALL %ld/%ld; __WCLONE %ld/%ld; N's pid "
	       "%ld/%ld; blocking wait ended %ld (%ld/%ld)",
	       o->ntid, o->wid_r, o->wid_e, o->wid_pid, o->w4_r, o->w4_e, o->w4c_r, o->w4c_e, o->w4n_r,
	       o->w4n_e, o->blocking_done, o->blocking_r, o->blocking_e);
	/* the attack ran where there is an N to find */
	EXPECT_EQ(kernel_has_addfd() && !kernel_addfd_forced_off(), o->ntid != 0);
	EXPECT_EQ(-1, o->wid_r);
	EXPECT_EQ(ECHILD, o->wid_e);
	EXPECT_EQ(-1, o->w4_r);
	EXPECT_EQ(ECHILD, o->w4_e);
	EXPECT_EQ(-1, o->w4c_r);
	EXPECT_EQ(ECHILD, o->w4c_e);
	EXPECT_EQ(-1, o->w4n_r);
	EXPECT_EQ(ECHILD, o->w4n_e);
	EXPECT_EQ(1, o->blocking_done);
	EXPECT_EQ(-1, o->blocking_r);
	EXPECT_EQ(ECHILD, o->blocking_e);
}

/* A program that takes in orphans itself: a subreaper, or its pid
 * namespace's init.  N, an orphan, would become its child and its waits
 * would find it again.  A subreaper stops being one while sandpit makes
 * its orphans (N through X, B through an intermediate child) and is one
 * again after: it gets an N, and an orphan of its own made after the
 * start (a grandchild of a child it forked before) is still its own.  A
 * namespace's init takes in every orphan of its namespace: there start-up
 * makes no N and every slot's eventfds at start */
struct reaper_out {
	long pid, reaper, notifier, held, held_expected, block;
	long go, orphan_ppid; /* the pre-start child's grandchild, its parent */
};

static int body_reaper(void *a)
{
	struct reaper_out *o = a;
	o->pid = getpid();
	o->notifier = notifier_tid();
	int lo = state_of(my_mailbox())->sp->fd_lo, hi = state_of(my_mailbox())->sp->fd_hi;
	o->block = hi - lo + 1;
	o->held = held_in(lo, hi);
	o->held_expected = block_held_expected(lo, hi, 1);
	/* the child forked before the start now orphans a grandchild */
	__atomic_store_n(&o->go, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 5000 && !__atomic_load_n(&o->orphan_ppid, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	return 0;
}

/* fn(arg) sandboxed in a child that first made itself a subreaper (ns 0)
 * or the init of a new pid namespace (ns 1), and, as a subreaper, forked a
 * child that waits for arg->go, then forks a grandchild and ends: the
 * grandchild writes its parent's pid into arg->orphan_ppid.  The status,
 * -3 where no pid namespace can be made here */
static int run_as_reaper(int ns, int (*fn)(void *), struct reaper_out *arg)
{
	struct sandpit_options opts = { .mode = suite_mode() };
	fflush(NULL);
	pid_t c = fork();
	if (c == 0) {
		if (ns) {
			if (unshare(CLONE_NEWPID | CLONE_NEWNS))
				_exit(103);
			pid_t init = fork();
			if (init < 0)
				_exit(104);
			if (init > 0) {
				int st;
				while (waitpid(init, &st, 0) < 0)
					;
				_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st));
			}
			/* its own /proc (sandpit refuses another namespace's) */
			if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
			    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
				_exit(106);
		} else {
			if (prctl(PR_SET_CHILD_SUBREAPER, 1))
				_exit(105);
			if (fork() == 0) {
				for (int i = 0; i < 30000 && !__atomic_load_n(&arg->go, __ATOMIC_ACQUIRE); i++)
					usleep(1000);
				if (fork() == 0) {
					usleep(100000); /* its parent gone: an orphan */
					__atomic_store_n(&arg->orphan_ppid, getppid(), __ATOMIC_RELEASE);
					_exit(0);
				}
				_exit(0);
			}
		}
		int r = 0;
		arg->reaper = prctl(PR_GET_CHILD_SUBREAPER, &r) == 0 ? r : -1;
		if (sandpit_start(&opts) < 0) {
			fprintf(stderr, "sandpit_start: %s\n", sandpit_error());
			_exit(SANDBOX_START_FAILED);
		}
		_exit(fn(arg));
	}
	int st = -1;
	for (int i = 0; c > 0 && i < 6000; i++) {
		if (waitpid(c, &st, WNOHANG) == c)
			return WIFEXITED(st) && WEXITSTATUS(st) == 103 ? -3 : st;
		usleep(10000);
	}
	if (c > 0) {
		kill(c, SIGKILL);
		waitpid(c, &st, 0);
	}
	return -2;
}

TEST_F_TIMEOUT(r17, a_subreaper_gets_a_notifier_and_stays_one_a_namespaces_init_gets_none, 150)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	int ran = 0;
	for (int ns = 0; ns < 2; ns++) {
		struct reaper_out *o = shared_page(sizeof(*o));
		ASSERT_NE(NULL, o);
		int st = run_as_reaper(ns, body_reaper, o);
		if (st == -3) {
			TH_LOG("no pid namespace here (unshare: not root?): the subreaper alone");
			continue;
		}
		ASSERT_EQ(0, outcome(st)) TH_LOG("ns %d", ns);
		TH_LOG("ns %d: pid %ld, subreaper %ld, N %ld, %ld of %ld held, the orphan's parent %ld",
		       ns, o->pid, o->reaper, o->notifier, o->held, o->block, o->orphan_ppid);
		/* the case ran: a subreaper, or pid 1 */
		EXPECT_TRUE(ns ? o->pid == 1 : o->reaper == 1);
		EXPECT_EQ(SM_NFDS, o->block);
		if (ns) {
			EXPECT_EQ(0, o->notifier);
			EXPECT_EQ(SM_NFDS, o->held);
		} else {
			EXPECT_EQ(kernel_has_addfd() && !kernel_addfd_forced_off(), o->notifier != 0);
			EXPECT_EQ(o->held_expected, o->held);
			if (o->notifier)
				EXPECT_GT(SM_NFDS, o->held); /* only slot 0's made */
			/* a subreaper still: the orphan made after the start is P's */
			EXPECT_EQ(o->pid, o->orphan_ppid);
		}
		ran++;
	}
	EXPECT_LE(1, ran);
}

/* A /proc of another pid namespace (a pid namespace made without its
 * own /proc, as `unshare --pid --fork` does) names other processes under
 * the numbers the program sees as its pid and tids: /proc/self, granted
 * by default, would be another process's (the host's kthreadd for pid 2),
 * and B would watch other processes as P's threads.  Found in the third
 * review's set-up: sandpit_start refuses, saying why */
struct ns_out {
	long pid, r;
	char err[256];
};

TEST_F_TIMEOUT(r17, a_proc_of_another_pid_namespace_is_refused_at_start, 60)
{
	struct ns_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	struct sandpit_options opts = { .mode = suite_mode() };
	fflush(NULL);
	pid_t c = fork();
	ASSERT_LE(0, c);
	if (c == 0) {
		if (unshare(CLONE_NEWPID))
			_exit(103);
		pid_t k = fork();
		if (k == 0) {
			o->pid = getpid();
			o->r = sandpit_start(&opts);
			snprintf(o->err, sizeof(o->err), "%s", sandpit_error());
			_exit(0);
		}
		int st;
		while (k > 0 && waitpid(k, &st, 0) < 0)
			;
		_exit(k > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : 104);
	}
	int st;
	ASSERT_EQ(c, waitpid(c, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	if (WEXITSTATUS(st) == 103)
		SKIP(return, "no pid namespace here (unshare: not root?)");
	ASSERT_EQ(0, WEXITSTATUS(st));
	TH_LOG("pid %ld: %ld, %s", o->pid, o->r, o->err);
	EXPECT_EQ(1, o->pid); /* the case ran: pid 1 of a namespace, /proc the host's */
	EXPECT_EQ(-EOPNOTSUPP, o->r);
	EXPECT_NE(NULL, strstr(o->err, "/proc is of another pid namespace"));
}

/* ---- 2. N's code and words in P's memory, which N shares ---- */

#include <sys/mman.h>
long sandpit_clone_notifier(const void *prog, int32_t words[2]);

struct m_out {
	long ntid, n_after;
	long r[6], e[6];
	long threads_ok;
};

static void *ret_one(void *a)
{
	(void)a;
	return (void *)1L;
}

static int body_mem(void *a)
{
	struct m_out *o = a;
	o->ntid = notifier_tid();
	long pg = sysconf(_SC_PAGESIZE);
	void *code = (void *)((uintptr_t)sandpit_clone_notifier & ~(uintptr_t)(pg - 1));
	errno = 0;
	o->r[0] = munmap(code, (size_t)pg);
	o->e[0] = errno;
	errno = 0;
	o->r[1] = mprotect(code, (size_t)pg, PROT_NONE);
	o->e[1] = errno;
	errno = 0;
	o->r[2] = mmap(code, (size_t)pg, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
				  MAP_FAILED
			  ? -1
			  : 0;
	o->e[2] = errno;
	errno = 0;
	o->r[3] = madvise(code, (size_t)pg, MADV_DONTNEED);
	o->e[3] = errno;
	errno = 0;
	o->r[4] = mremap(code, (size_t)pg, (size_t)pg, MREMAP_MAYMOVE | MREMAP_FIXED, (char *)code + 64 * pg) ==
				  MAP_FAILED
			  ? -1
			  : 0;
	o->e[4] = errno;
	errno = 0;
	o->r[5] = mprotect(code, (size_t)pg, PROT_READ | PROT_WRITE | PROT_EXEC);
	o->e[5] = errno;
	/* each new thread's slot is put in through N's wait */
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	pthread_t t[20];
	for (int i = 0; i < 20; i++)
		if (pthread_create(&t[i], &at, ret_one, NULL))
			return 91;
	for (int i = 0; i < 20; i++) {
		void *rv = NULL;
		o->threads_ok += !pthread_join(t[i], &rv) && rv == (void *)1L;
	}
	o->n_after = notifier_tid();
	return 0;
}

/* The program unmaps, protects, maps over, drops and moves the page of
 * N's code (sandpit_text): each refused, N still waits, and every slot
 * made through it afterwards works */
TEST_F_TIMEOUT(r17, notifier_code_page_cannot_be_unmapped_or_changed, 60)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	struct m_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	struct sandpit_options opts = { .mode = suite_mode() };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_mem, o, &opts, 30)));
	for (int i = 0; i < 6; i++)
		TH_LOG("call %d: %ld errno %ld", i, o->r[i], o->e[i]);
	TH_LOG("N %ld then %ld, threads %ld", o->ntid, o->n_after, o->threads_ok);
	EXPECT_EQ(kernel_has_addfd() && !kernel_addfd_forced_off(), o->ntid != 0);
	for (int i = 0; i < 6; i++) {
		EXPECT_EQ(-1, o->r[i]) TH_LOG("call %d", i);
		EXPECT_EQ(EPERM, o->e[i]) TH_LOG("call %d", i);
	}
	EXPECT_EQ(o->ntid, o->n_after);
	EXPECT_EQ(20, o->threads_ok);
}

/* ---- 3. `sandpit run -- prog | reader`: P's end reaches the reader ---- */

#include <dirent.h>
#include <stdio.h>
#include "build_dir.h"

static long long mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* a child of parent's named comm, or 0 */
static pid_t child_named(pid_t parent, const char *comm)
{
	DIR *d = opendir("/proc");
	pid_t found = 0;
	struct dirent *e;
	while (d && !found && (e = readdir(d))) {
		char path[300], buf[512];
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		char *l = strchr(buf, '('), *r = strrchr(buf, ')');
		int ppid;
		if (!l || !r || sscanf(r + 2, "%*c %d", &ppid) != 1 || ppid != parent)
			continue;
		*r = 0;
		if (!strcmp(l + 1, comm))
			found = atoi(buf);
	}
	if (d)
		closedir(d);
	return found;
}

/* how many processes of process group g live (zombies do not: B and N
 * end as orphans, and when init reaps them is init's affair) */
static int group_lives(pid_t g)
{
	DIR *d = opendir("/proc");
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char path[300], buf[512];
		int pgrp;
		char st;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (atoi(e->d_name) <= 0 || !proc_read(path, buf, sizeof(buf)))
			continue;
		char *r = strrchr(buf, ')');
		if (r && sscanf(r + 2, "%c %*d %d", &st, &pgrp) == 2 && pgrp == g && !strchr("ZXx", st))
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

enum how { BY_ITSELF, KILL_P, STOP_KILL_P_CONT, STOPS_WHILE_MADE, STOP_N_KILL_P };

struct pipe_run {
	long lines, made, n_seen, stops;
	long n_hung;    /* STOP_N_KILL_P: no EOF in 5 s, N continued by the test */
	long eof_ms;    /* from P's end (or the end of the test's acts) to EOF */
	long left_ms;   /* from EOF to no living process left in the group */
	int status, reaped;
};

static void run_pipeline(struct __test_metadata *_metadata, const char *mode, enum how how,
			 struct pipe_run *pr)
{
	char cli[PATH_MAX], prog[PATH_MAX];
	snprintf(cli, sizeof(cli), "%s/sandpit", bindir);
	snprintf(prog, sizeof(prog), "%s/selftests/rev17_prog", bindir);
	int pfd[2];
	ASSERT_EQ(0, pipe2(pfd, O_CLOEXEC));
	pid_t l = fork();
	ASSERT_LE(0, l);
	if (l == 0) {
		/* STOP_N_KILL_P: `setsid sandpit run -- prog | reader`, a
		 * group orphaned from its start (no SIGCONT from the kernel when
		 * the launcher ends); otherwise a group of its own in ours */
		if (how == STOP_N_KILL_P)
			setsid();
		else
			setpgid(0, 0);
		dup2(pfd[1], 1);
		int dn = open("/dev/null", O_WRONLY);
		dup2(dn, 2);
		execl(cli, cli, "run", "--", prog, mode, (char *)NULL);
		_exit(127);
	}
	if (how != STOP_N_KILL_P)
		setpgid(l, l);
	close(pfd[1]);
	FILE *f = fdopen(pfd[0], "r");
	ASSERT_NE(NULL, f);
	char line[128];
	pid_t p = 0, n = 0;
	long long end = 0;
	while (fgets(line, sizeof(line), f)) {
		pr->lines++;
		if (!strncmp(line, "made ", 5))
			pr->made++;
		if (!p)
			p = child_named(l, "rev17_prog");
		if (p && !n)
			n = (pid_t)notifier_pid_of(p); /* an orphan: by its table */
		pr->n_seen |= n != 0;
		if (how == STOPS_WHILE_MADE && pr->stops < 40 && pr->made >= 5) {
			/* the shell's Ctrl-Z and fg: the whole group */
			kill(-l, SIGSTOP);
			usleep(2000);
			kill(-l, SIGCONT);
			pr->stops++;
		}
		if (how == STOPS_WHILE_MADE && pr->stops >= 40 && !end) {
			kill(p, SIGKILL);
			end = mono_ms();
		}
		if (how == KILL_P && pr->made >= 30 && !end) {
			kill(p, SIGKILL);
			end = mono_ms();
		}
		if (how == STOP_N_KILL_P && pr->made >= 30 && n && !end) {
			/* N alone stopped from outside (the program cannot), a
			 * clone of P's then waits for it; then P killed */
			kill(n, SIGSTOP);
			usleep(300000);
			kill(p, SIGKILL);
			end = mono_ms();
			int fd = fileno(f);
			for (;;) {
				struct pollfd q = { .fd = fd, .events = POLLIN };
				if (poll(&q, 1, 5000) == 0) {
					pr->n_hung = 1;
					kill(n, SIGCONT);
					continue;
				}
				char b[4096];
				if (read(fd, b, sizeof(b)) <= 0)
					break;
			}
			break;
		}
		if (how == STOP_KILL_P_CONT && pr->made >= 30 && !end) {
			kill(-l, SIGSTOP);
			usleep(100000);
			kill(p, SIGKILL);
			usleep(100000);
			kill(-l, SIGCONT);
			end = mono_ms();
		}
	}
	long long eof = mono_ms();
	pr->eof_ms = end ? (long)(eof - end) : 0;
	if (pr->n_hung)
		TH_LOG("no EOF 5 s after P's SIGKILL while N was stopped; N continued");
	fclose(f);
	for (int i = 0; i < 10000 && !pr->reaped; i++) {
		if (waitpid(l, &pr->status, WNOHANG) == l)
			pr->reaped = 1;
		else
			usleep(1000);
	}
	if (!pr->reaped) {
		kill(-l, SIGKILL);
		waitpid(l, &pr->status, 0);
	}
	long long t = mono_ms();
	while (group_lives(l) && mono_ms() - t < 10000)
		usleep(1000);
	pr->left_ms = group_lives(l) ? -1 : (long)(mono_ms() - t);
	if (pr->left_ms < 0)
		kill(-l, SIGKILL);
	TH_LOG("%s/%d: %ld lines, %ld threads made, N seen %ld, %ld stops; EOF %ld ms after the "
	       "end; group empty %ld ms after; launcher %s %d",
	       mode, (int)how, pr->lines, pr->made, pr->n_seen, pr->stops, pr->eof_ms, pr->left_ms,
	       !pr->reaped ? "hung" : WIFEXITED(pr->status) ? "exit" : "signal",
	       WIFEXITED(pr->status) ? WEXITSTATUS(pr->status) : WTERMSIG(pr->status));
	/* the ends reached a P with a notifier wherever there is one */
	EXPECT_EQ(kernel_has_addfd() && !kernel_addfd_forced_off(), pr->n_seen);
}

/* exit_group from a thread while the main thread makes threads (each in
 * a new slot): the reader sees EOF, sandpit run ends with 7, nothing of
 * the group is left */
TEST_F_TIMEOUT(r17, pipeline_exit_group_while_slots_are_made_eof_and_status_7, 60)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	struct pipe_run pr = { 0 };
	run_pipeline(_metadata, "exit", BY_ITSELF, &pr);
	EXPECT_LE(1, pr.made);
	EXPECT_TRUE(pr.reaped);
	EXPECT_TRUE(WIFEXITED(pr.status) && WEXITSTATUS(pr.status) == 7);
	EXPECT_LE(0, pr.left_ms);
	EXPECT_GT(3000, pr.left_ms);
}

/* main's pthread_exit, then its last thread's _exit after 60 slots made */
TEST_F_TIMEOUT(r17, pipeline_main_pthread_exit_then_last_thread_ends_eof_and_status_0, 60)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	struct pipe_run pr = { 0 };
	run_pipeline(_metadata, "mainexit", BY_ITSELF, &pr);
	EXPECT_EQ(60, pr.made);
	EXPECT_TRUE(pr.reaped);
	EXPECT_TRUE(WIFEXITED(pr.status) && WEXITSTATUS(pr.status) == 0);
	EXPECT_LE(0, pr.left_ms);
	EXPECT_GT(3000, pr.left_ms);
}

/* P SIGKILLed from outside while it makes slots: EOF within 3 s, 137 */
TEST_F_TIMEOUT(r17, pipeline_p_killed_while_slots_are_made_eof_within_3_s, 60)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	struct pipe_run pr = { 0 };
	run_pipeline(_metadata, "spin", KILL_P, &pr);
	EXPECT_LE(30, pr.made);
	EXPECT_LE(0, pr.eof_ms);
	EXPECT_GT(3000, pr.eof_ms);
	EXPECT_TRUE(pr.reaped);
	EXPECT_TRUE(WIFEXITED(pr.status) && WEXITSTATUS(pr.status) == 128 + SIGKILL);
	EXPECT_LE(0, pr.left_ms);
	EXPECT_GT(3000, pr.left_ms);
}

/* the group stopped (Ctrl-Z), P SIGKILLed by its pid, the group continued
 * (fg): N's wait was cut by the stop, B takes the next and lets N go */
TEST_F_TIMEOUT(r17, pipeline_group_stopped_p_killed_group_continued_eof_within_3_s, 60)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	struct pipe_run pr = { 0 };
	run_pipeline(_metadata, "spin", STOP_KILL_P_CONT, &pr);
	EXPECT_LE(30, pr.made);
	EXPECT_LE(0, pr.eof_ms);
	EXPECT_GT(3000, pr.eof_ms);
	EXPECT_TRUE(pr.reaped);
	EXPECT_TRUE(WIFEXITED(pr.status) && WEXITSTATUS(pr.status) == 128 + SIGKILL);
	EXPECT_LE(0, pr.left_ms);
	EXPECT_GT(3000, pr.left_ms);
}

/* 40 stops and continues of the whole group while threads are made, then
 * P killed: threads kept being made after each, EOF within 3 s */
TEST_F_TIMEOUT(r17, pipeline_group_stops_while_slots_are_made_then_p_killed, 60)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	struct pipe_run pr = { 0 };
	run_pipeline(_metadata, "spin", STOPS_WHILE_MADE, &pr);
	EXPECT_EQ(40, pr.stops);
	EXPECT_LE(44, pr.made);
	EXPECT_LE(0, pr.eof_ms);
	EXPECT_GT(3000, pr.eof_ms);
	EXPECT_TRUE(pr.reaped);
	EXPECT_TRUE(WIFEXITED(pr.status) && WEXITSTATUS(pr.status) == 128 + SIGKILL);
	EXPECT_LE(0, pr.left_ms);
	EXPECT_GT(3000, pr.left_ms);
}

/* N alone stopped from outside (kill -STOP of its pid: a user's, never
 * the program's: its kill of another pid is EPERM, and every stop it can
 * send reaches P's whole group), a clone of P's waiting for it, then P
 * SIGKILLed, under `setsid sandpit run -- prog | reader`.  Natively the
 * reader sees EOF at once.  N holds P's descriptor table (P's stdout with
 * it); B and the launcher end, N stays stopped under init, and the reader
 * sees no EOF until someone continues N (the test does after 5 s).  (With
 * the launcher's group not orphaned from the start, its end orphans the
 * group and the kernel's SIGHUP (N has it blocked) and SIGCONT free N
 * ~2 s after P's end.) */
TEST_F_TIMEOUT(r17, pipeline_n_alone_stopped_then_p_killed_eof_within_5_s, 60)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	if (!(kernel_has_addfd() && !kernel_addfd_forced_off()))
		SKIP(return, "no notifier in this mode");
	struct pipe_run pr = { 0 };
	run_pipeline(_metadata, "spin", STOP_N_KILL_P, &pr);
	EXPECT_LE(30, pr.made);
	EXPECT_EQ(0, pr.n_hung);
	EXPECT_LE(0, pr.eof_ms);
	EXPECT_TRUE(pr.reaped);
	EXPECT_TRUE(WIFEXITED(pr.status) && WEXITSTATUS(pr.status) == 128 + SIGKILL);
	EXPECT_LE(0, pr.left_ms);
	EXPECT_GT(3000, pr.left_ms);
}

/* ---- 4. prlimit64 on N's pid (through B) ---- */

struct pl_out {
	long ntid, get_r, get_e, low_r, low_e, raise_r, raise_e, threads_ok, n_after;
};

static int body_prlimit_n(void *a)
{
	struct pl_out *o = a;
	o->ntid = notifier_tid();
	if (!o->ntid)
		return 0;
	struct rlimit old, low = { 16, 16 }, high = { SM_FD_TOP + 1, SM_FD_TOP + 1 };
	errno = 0;
	o->get_r = syscall(SYS_prlimit64, o->ntid, RLIMIT_NOFILE, NULL, &old);
	o->get_e = errno;
	/* N's limit under the block: every ADDFD after would be EMFILE */
	errno = 0;
	o->low_r = syscall(SYS_prlimit64, o->ntid, RLIMIT_NOFILE, &low, NULL);
	o->low_e = errno;
	errno = 0;
	o->raise_r = syscall(SYS_prlimit64, o->ntid, RLIMIT_NOFILE, &high, NULL);
	o->raise_e = errno;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	pthread_t t[20];
	for (int i = 0; i < 20; i++)
		if (pthread_create(&t[i], &at, ret_one, NULL))
			return 92;
	for (int i = 0; i < 20; i++) {
		void *rv = NULL;
		o->threads_ok += !pthread_join(t[i], &rv) && rv == (void *)1L;
	}
	o->n_after = notifier_tid();
	return 0;
}

/* prlimit64 with N's pid, to read N's RLIMIT_NOFILE, lower it under the
 * block (every later ADDFD EMFILE) or raise it: each refused as for any
 * other process's pid, and 20 threads made after */
TEST_F_TIMEOUT(r17, prlimit64_on_the_notifiers_pid_refused, 60)
{
	if (!soft_1024())
		SKIP(return, "hard RLIMIT_NOFILE under %d", SM_FD_TOP + 1);
	struct pl_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	struct sandpit_options opts = { .mode = suite_mode() };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_prlimit_n, o, &opts, 30)));
	EXPECT_EQ(kernel_has_addfd() && !kernel_addfd_forced_off(), o->ntid != 0);
	if (!o->ntid)
		return;
	TH_LOG("N %ld: get %ld/%ld lower %ld/%ld raise %ld/%ld; threads %ld; N after %ld", o->ntid,
	       o->get_r, o->get_e, o->low_r, o->low_e, o->raise_r, o->raise_e, o->threads_ok, o->n_after);
	EXPECT_EQ(-1, o->get_r);
	EXPECT_EQ(-1, o->low_r);
	EXPECT_EQ(-1, o->raise_r);
	EXPECT_EQ(EPERM, o->get_e);
	EXPECT_EQ(EPERM, o->low_e);
	EXPECT_EQ(EPERM, o->raise_e);
	EXPECT_EQ(20, o->threads_ok);
	EXPECT_EQ(o->ntid, o->n_after);
}

TEST_HARNESS_MAIN
