/* Threads inside the strict-mode sandbox (invariant 4: a thread created by
 * U never runs without its own T and its own seccomp state), calls on a
 * thread act on the program's thread, and signals to the tids of threads
 * being made (invariant 7).  Signals on threads are threads_signal_test. */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <poll.h>
#include <sys/syscall.h>
#include <linux/sched.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "u_state.h"

#define NT 8

static void *reader(void *a)
{
	long ok = 0;
	char buf[256];
	for (int i = 0; i < 200; i++) {
		int fd = open("/etc/passwd", O_RDONLY);
		if (fd < 0)
			return (void *)-1L;
		ok += read(fd, buf, sizeof(buf)) > 0;
		close(fd);
		struct stat sb;
		ok += stat("/usr/bin", &sb) == 0;
		/* and a thread is sandboxed like the first one */
		if (open("/tmp/sandpit-thread-created", O_CREAT | O_WRONLY, 0600) != -1 || errno != EACCES)
			return (void *)-2L;
	}
	(void)a;
	return (void *)ok;
}

static int body_threads(void *a)
{
	(void)a;
	pthread_t t[NT];
	for (int i = 0; i < NT; i++)
		if (pthread_create(&t[i], NULL, reader, NULL))
			return 1;
	for (int i = 0; i < NT; i++) {
		void *r;
		if (pthread_join(t[i], &r))
			return 2;
		if ((long)r != 400)
			return 3;
	}
	return 0;
}

/* Tests whose sandboxed run may take longer than the harness's 30 s
 * default on a loaded machine (bounded work, not a hang): each gets its
 * run's limit and a little more */
FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

TEST_F_TIMEOUT(slow, inv4_eight_threads_open_read_stat_concurrently, 70)
{
	unlink("/tmp/sandpit-thread-created");
	EXPECT_EQ(0, outcome(run_sandboxed_opts(body_threads, NULL, NULL, 60)));
	EXPECT_EQ(-1, access("/tmp/sandpit-thread-created", F_OK));
}

static void *nothing(void *a)
{
	return a;
}

static long rss_pages(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long size = 0, rss = 0;
	if (f) {
		if (fscanf(f, "%ld %ld", &size, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss;
}

static long *flood_rss;

static int body_flood(void *a)
{
	(void)a;
	for (int i = 0; i < 1000; i++) {
		pthread_t t;
		void *r;
		int e = pthread_create(&t, NULL, nothing, (void *)(long)i);
		if (!e)
			e = pthread_join(t, &r);
		if (e) {
			flood_rss[2] = i;
			flood_rss[3] = e;
			return 1;
		}
		if ((long)r != i)
			return 2;
		if (i == 99)
			flood_rss[0] = rss_pages();
	}
	flood_rss[1] = rss_pages();
	return 0;
}

TEST_F_TIMEOUT(slow, threads_1000_create_join_leave_memory_flat, 130)
{
	flood_rss = shared_page(4096);
	ASSERT_NE(NULL, flood_rss);
	EXPECT_EQ(0, outcome(run_sandboxed_opts(body_flood, NULL, NULL, 120)));
	TH_LOG("rss after 100 threads %ld pages, after 1000 %ld pages", flood_rss[0], flood_rss[1]);
	if (flood_rss[3])
		TH_LOG("thread %ld: %s", flood_rss[2], strerror((int)flood_rss[3]));
	EXPECT_LT(0, flood_rss[0]);
	EXPECT_LE(flood_rss[1], flood_rss[0] + 64); /* 256 KiB of slack, not 900 threads' worth */
}

/* a raw clone from the program's own code, as glibc's clone.S makes it */
static volatile long raw_child_result;

static void raw_child(void)
{
	long r;
	/* a forbidden call: must be refused, not executed */
	r = raw_syscall(SYS_open, (long)"/tmp/sandpit-raw-clone", O_CREAT | O_WRONLY, 0600);
	raw_child_result = r == -EACCES ? 1 : 2;
	raw_syscall(SYS_exit, 0, 0, 0);
}

static int body_raw_clone(void *a)
{
	(void)a;
	size_t sz = 64 * 1024;
	char *stack = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED)
		return 1;
	long flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
	long r;
	register long r10 __asm__("r10") = 0;
	register long r8 __asm__("r8") = 0;
	/* the child starts on its stack with rax = 0 and calls raw_child */
	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "call *%[fn]\n\t"
			 "ud2\n"
			 "1:"
			 : "=a"(r)
			 : "a"(SYS_clone), "D"(flags), "S"(stack + sz - 64), "d"(0), "r"(r10), "r"(r8),
			   [fn] "b"(raw_child)
			 : "rcx", "r11", "memory");
	if (r <= 0)
		return 2;
	for (int i = 0; i < 2000 && !raw_child_result; i++)
		usleep(1000);
	return raw_child_result == 1 ? 0 : 3;
}

TEST(inv4_raw_clone_from_program_code_gets_a_sandboxed_thread)
{
	unlink("/tmp/sandpit-raw-clone");
	EXPECT_EQ(0, outcome(run_sandboxed(body_raw_clone, NULL)));
	EXPECT_EQ(-1, access("/tmp/sandpit-raw-clone", F_OK));
}

/* A clone the kernel refuses after B has let it through (CLONE_SETTLS
 * with a thread pointer in the kernel's half: copy_thread's EPERM): the
 * program gets the kernel's errno, the slot is free again, and the next
 * thread starts.  B learns that the clone failed only from the kernel
 * (no new thread, and the cloning T waiting at sandpit_clone_failed_site),
 * never from a clock; 20 refused clones, each followed by a thread that
 * runs. */
static long *tls_count; /* shared: [0] clones refused, [1] threads that ran */

static void *count_thread(void *a)
{
	__atomic_add_fetch(&tls_count[1], 1, __ATOMIC_SEQ_CST);
	return a;
}

static int body_refused_tls(void *a)
{
	(void)a;
	size_t sz = 64 * 1024;
	char *stack = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED)
		return 1;
	long flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
		     CLONE_SETTLS;
	for (int i = 0; i < 20; i++) {
		long r;
		register long r10 __asm__("r10") = 0;
		register long r8 __asm__("r8") = (long)0xffff880000000000UL;
		/* a child would find no code to run: there must be none */
		__asm__ volatile("syscall\n\t"
				 "test %%rax, %%rax\n\t"
				 "jnz 1f\n\t"
				 "ud2\n"
				 "1:"
				 : "=a"(r)
				 : "a"(SYS_clone), "D"(flags), "S"(stack + sz - 64), "d"(0), "r"(r10), "r"(r8)
				 : "rcx", "r11", "memory");
		if (r != -EPERM)
			return 2;
		tls_count[0]++;
		pthread_t t;
		void *ret;
		if (pthread_create(&t, NULL, count_thread, (void *)(long)i) || pthread_join(t, &ret) ||
		    (long)ret != i)
			return 3;
	}
	return tls_count[1] == 20 ? 0 : 4;
}

TEST(inv4_clone_the_kernel_refuses_gives_its_errno_and_frees_the_slot)
{
	tls_count = shared_page(4096);
	ASSERT_NE(NULL, tls_count);
	int out = outcome(run_sandboxed(body_refused_tls, NULL));
	TH_LOG("%ld clones refused by the kernel (EPERM), %ld threads ran after them; P's end %d",
	       tls_count[0], tls_count[1], out);
	EXPECT_EQ(0, out);
	EXPECT_EQ(20, tls_count[0]);
	EXPECT_EQ(20, tls_count[1]);
}

static int body_bad_clone(void *a)
{
	(void)a;
	/* a new process sharing memory, or a thread in new namespaces */
	if (syscall(SYS_clone, CLONE_VM | SIGCHLD, 0, 0, 0, 0) != -1 || errno != EPERM)
		return 1;
	long flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
		     CLONE_SYSVSEM | CLONE_NEWNS;
	if (syscall(SYS_clone, flags, 0x10000, 0, 0, 0) != -1 || errno != EPERM)
		return 2;
	if (syscall(SYS_clone, (flags & ~CLONE_NEWNS) | CLONE_UNTRACED, 0x10000, 0, 0, 0) != -1 ||
	    errno != EPERM)
		return 3;
	return 0;
}

TEST(inv4_clone_of_a_process_or_namespaces_refused)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_bad_clone, NULL)));
}

static void *forbidden_in_thread(void *a)
{
	(void)a;
	/* a call the patcher cannot see: socket(AF_INET) from new code */
	missed_fn f = missed_code(SYS_socket);
	return (void *)(f ? f(AF_INET, SOCK_STREAM, 0) : -1L);
}

static int body_thread_killed(void *a)
{
	(void)a;
	pthread_t t;
	void *r;
	if (pthread_create(&t, NULL, forbidden_in_thread, NULL))
		return 1;
	pthread_join(t, &r);
	/* the process went on: only the filter's net may let it */
	return (long)r == -EAFNOSUPPORT ? 2 : 3;
}

/* strict mode: the kernel kills the thread, sandpit kills the process;
 * filter mode: the filter traps the call and sandpit refuses it */
TEST(inv5_thread_killed_by_kernel_kills_process)
{
	int want = suite_mode() == SANDPIT_MODE_STRICT ? KILLED(SIGKILL) : 2;
	EXPECT_EQ(want, outcome(run_sandboxed(body_thread_killed, NULL)));
}

static int body_tsync(void *a)
{
	(void)a;
	/* a filter with TSYNC would reach every thread, T included */
	struct sock_filter insn = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { 1, &insn };
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != -1 ||
	    errno != EPERM)
		return 1;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != -1)
		return 2;
	return 0;
}

TEST(inv7_tsync_seccomp_filter_from_u_refused)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_tsync, NULL)));
}

/* "This thread" is the program's thread, not its T: a call whose pid 0 or
 * clock names the calling thread (which T makes for it in strict mode)
 * reads the thread's own CPU time, nice value, I/O priority, scheduling
 * policy and CPUs.  A process outside the sandbox sets all but the CPU
 * time on the thread's tid once the sandbox is on, so that U's values
 * differ from T's (which keep what both had at start). */
struct this_thread {
	volatile pid_t tid;
	volatile int set, setter_bad, checks;
	int cpu; /* the one CPU it is moved to; -1: one CPU only */
	long long cpu_ns, clock_ns;
	int nice, batch, ioprio, cpus_ok, same_as_tid;
};
#define IOPRIO_BE_6 (2 << 13 | 6)

static void set_from_outside(struct this_thread *t)
{
	for (int i = 0; i < 2000 && !t->tid; i++)
		usleep(10000);
	struct sched_param sp = { 0 };
	cpu_set_t one;
	CPU_ZERO(&one);
	if (t->cpu >= 0)
		CPU_SET(t->cpu, &one);
	if (!t->tid || setpriority(PRIO_PROCESS, t->tid, 7) ||
	    sched_setscheduler(t->tid, SCHED_BATCH, &sp) ||
	    syscall(SYS_ioprio_set, 1, t->tid, IOPRIO_BE_6) ||
	    (t->cpu >= 0 && sched_setaffinity(t->tid, sizeof(one), &one)))
		t->setter_bad = errno ? errno : -1;
	t->set = 1;
}

static long long ns_of(clockid_t c)
{
	struct timespec ts;
	return clock_gettime(c, &ts) ? -1 : ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int body_this_thread(void *a)
{
	struct this_thread *t = a;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	/* the thread's CPU clock by its tid, as pthread_getcpuclockid makes it */
	clockid_t by_tid = (clockid_t)(~(unsigned)tid << 3 | 6);
	t->tid = tid;
	for (int i = 0; i < 2000 && !t->set; i++)
		usleep(10000);
	/* CPU time: CLOCK_THREAD_CPUTIME_ID read around the other clock counts
	 * at least what it counts, 50 ms of this thread's work */
	long long t0 = ns_of(CLOCK_THREAD_CPUTIME_ID), c0 = ns_of(by_tid), c1 = c0;
	time_t until = time(NULL) + 10;
	for (volatile unsigned long x = 0; c1 >= 0 && c1 - c0 < 50000000 && time(NULL) < until; x++)
		if (!(x & 0xffff))
			c1 = ns_of(by_tid);
	long long t1 = ns_of(CLOCK_THREAD_CPUTIME_ID);
	t->clock_ns = c1 - c0;
	t->cpu_ns = t0 < 0 || t1 < 0 ? -1 : t1 - t0;
	errno = 0;
	t->nice = getpriority(PRIO_PROCESS, 0);
	t->batch = sched_getscheduler(0) == SCHED_BATCH;
	t->ioprio = (int)syscall(SYS_ioprio_get, 1, 0);
	cpu_set_t set, by;
	t->cpus_ok = !sched_getaffinity(0, sizeof(set), &set) && !sched_getaffinity(tid, sizeof(by), &by) &&
		     CPU_EQUAL(&set, &by) && (t->cpu < 0 || (CPU_COUNT(&set) == 1 && CPU_ISSET(t->cpu, &set)));
	struct sched_param p0, pt;
	t->same_as_tid = getpriority(PRIO_PROCESS, tid) == t->nice && !sched_getparam(0, &p0) &&
			 !sched_getparam(tid, &pt) && p0.sched_priority == pt.sched_priority;
	t->checks = 1;
	return 0;
}

TEST_F_TIMEOUT(slow, calls_on_this_thread_act_on_the_programs_thread_not_t, 70)
{
	struct this_thread *t = shared_page(sizeof(*t));
	ASSERT_NE(NULL, t);
	cpu_set_t all;
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	t->cpu = -1;
	if (CPU_COUNT(&all) > 1) /* the last of them */
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &all))
				t->cpu = c;
	pid_t setter = fork();
	ASSERT_LE(0, setter);
	if (setter == 0) {
		set_from_outside(t);
		_exit(0);
	}
	struct sandpit_options o = { .mode = suite_mode() };
	int r = outcome(run_sandboxed_opts(body_this_thread, t, &o, 60));
	waitpid(setter, NULL, 0);
	TH_LOG("setter %d; CPU time %lld ns by CLOCK_THREAD_CPUTIME_ID, %lld by the tid's clock; "
	       "nice %d, batch %d, ioprio %#x, CPUs %d, as by tid %d",
	       t->setter_bad, t->cpu_ns, t->clock_ns, t->nice, t->batch, t->ioprio, t->cpus_ok,
	       t->same_as_tid);
	ASSERT_EQ(0, r);
	ASSERT_EQ(0, t->setter_bad);
	ASSERT_EQ(1, t->checks);
	EXPECT_LE(50000000, t->clock_ns);
	EXPECT_LE(t->clock_ns, t->cpu_ns);
	EXPECT_EQ(7, t->nice);
	EXPECT_EQ(1, t->batch);
	EXPECT_EQ(IOPRIO_BE_6, t->ioprio);
	EXPECT_EQ(1, t->cpus_ok);
	EXPECT_EQ(1, t->same_as_tid);
}

/* ---- invariant 7: signals to the tids of threads being made ---- */

/* One thread makes threads, one at a time, and signals each right after
 * pthread_create (it must get the signal); another guesses the tids the
 * kernel hands out next (the highest tid of the program's it has seen, plus
 * 1 to 4: a new thread's T comes right after it) and the tids in
 * /proc/self/task that are no thread of the program's it knows, each with
 * tgkill(pid, tid, 0) and with a real, blockable signal. */
#define GUESS_THREADS 300
#define GUESS_LOG 100000
struct guess {
	int32_t tid, err; /* err 0: the call succeeded */
	uint8_t listed;   /* the tid was in /proc/self/task when it was tried */
};
struct guessing {
	volatile int done;
	volatile int32_t top; /* the highest tid of a U of the program's seen so far */
	volatile int nu;
	int32_t u_tids[GUESS_THREADS + 2], t_tids[GUESS_THREADS + 2]; /* each made thread's, and its T's */
	volatile long created, kill_failed, kill_errno, delivered, usr2;
	volatile long n;
	struct guess log[GUESS_LOG];
};
static struct guessing *G;
static __thread volatile int got_usr1;

static void on_guess_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
	__atomic_add_fetch(&G->delivered, 1, __ATOMIC_SEQ_CST);
}

static void on_guess_usr2(int sig)
{
	(void)sig;
	__atomic_add_fetch(&G->usr2, 1, __ATOMIC_SEQ_CST);
}

static void saw_u(int32_t tid)
{
	int32_t top = G->top;
	while (tid > top && !__atomic_compare_exchange_n(&G->top, &top, tid, 0, __ATOMIC_SEQ_CST,
							 __ATOMIC_SEQ_CST))
		;
}

static void *guessed_child(void *a)
{
	int i = (int)(intptr_t)a;
	G->u_tids[i] = (int32_t)syscall(SYS_gettid);
	/* the kernel wrote this thread's T's tid into its mailbox */
	G->t_tids[i] = (int32_t)__atomic_load_n(&my_mailbox()->t_ctid, __ATOMIC_SEQ_CST);
	__atomic_store_n(&G->nu, i + 1, __ATOMIC_SEQ_CST);
	saw_u(G->u_tids[i]);
	/* the creator's SIGUSR1 comes to this thread */
	for (int k = 0; k < 100000 && !got_usr1; k++)
		sched_yield();
	return NULL;
}

static int known_u(int32_t tid)
{
	for (int i = 0; i < GUESS_THREADS + 2; i++)
		if (G->u_tids[i] == tid)
			return 1;
	return 0;
}

static void try_tid(pid_t pid, int32_t tid, int listed)
{
	static const int sigs[2] = { 0, SIGUSR2 };
	for (int k = 0; k < 2 && G->n < GUESS_LOG; k++) {
		long r = syscall(SYS_tgkill, pid, tid, sigs[k]);
		G->log[G->n] = (struct guess){ tid, r == 0 ? 0 : errno, (uint8_t)listed };
		G->n++;
	}
}

static void *guesser(void *a)
{
	(void)a;
	pid_t pid = getpid();
	int32_t self = (int32_t)syscall(SYS_gettid);
	G->u_tids[GUESS_THREADS + 1] = self;
	G->t_tids[GUESS_THREADS + 1] = (int32_t)my_mailbox()->t_ctid;
	saw_u(self);
	for (long round = 0; !G->done && G->n < GUESS_LOG; round++) {
		if (round % 16 == 0) {
			DIR *d = opendir("/proc/self/task");
			struct dirent *e;
			while (d && (e = readdir(d)))
				if (e->d_name[0] != '.' && !known_u(atoi(e->d_name)))
					try_tid(pid, atoi(e->d_name), 1);
			if (d)
				closedir(d);
			continue;
		}
		int32_t top = G->top;
		for (int k = 1; k <= 4; k++)
			try_tid(pid, top + k, 0);
	}
	return NULL;
}

static int body_guess_tids(void *a)
{
	(void)a;
	struct sigaction sa = { .sa_handler = on_guess_usr1, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		return 1;
	sa.sa_handler = on_guess_usr2;
	if (sigaction(SIGUSR2, &sa, NULL))
		return 1;
	G->u_tids[GUESS_THREADS] = getpid();
	saw_u(getpid());
	pthread_t g;
	if (pthread_create(&g, NULL, guesser, NULL))
		return 2;
	/* this thread's T has run (it made the guesser): the kernel wrote its
	 * tid into the mailbox when it first did */
	G->t_tids[GUESS_THREADS] = (int32_t)my_mailbox()->t_ctid;
	while (!G->n)
		sched_yield();
	for (int i = 0; i < GUESS_THREADS; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, guessed_child, (void *)(intptr_t)i))
			return 3;
		G->created++;
		/* right after pthread_create: the new thread must be signalled */
		int r = pthread_kill(t, SIGUSR1);
		if (r) {
			G->kill_failed++;
			G->kill_errno = r;
		}
		pthread_join(t, NULL);
	}
	G->done = 1;
	pthread_join(g, NULL);
	return 0;
}

/* A thread of P gets a signal only if it is one of the program's own that
 * sandpit knows: never a T, from its first instruction on, nor a thread
 * being made; every other tid gets ESRCH, as a tid of no thread does.  A
 * thread the program made is known before pthread_create returns. */
TEST_F_TIMEOUT(slow, inv7_signals_to_the_tids_of_threads_being_made_reach_only_the_programs, 70)
{
	G = shared_page(sizeof(*G));
	ASSERT_NE(NULL, G);
	struct sandpit_options o = { .mode = suite_mode() };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_guess_tids, NULL, &o, 60)));
	long hits = 0, not_u = 0, on_t = 0, t_hits = 0, listed_other = 0, refused = 0, wrong_errno = 0;
	for (long i = 0; i < G->n; i++) {
		const struct guess *q = &G->log[i];
		int u = known_u(q->tid), t = 0;
		for (int j = 0; j < GUESS_THREADS + 2 && !t; j++)
			t = G->t_tids[j] == q->tid;
		on_t += t;
		listed_other += q->listed && !u;
		if (q->err == 0) {
			hits++;
			not_u += !u;
			t_hits += t;
		} else {
			refused++;
			wrong_errno += q->err != ESRCH;
		}
	}
	TH_LOG("%ld threads made, %ld signalled right after (%ld failed, last %ld); %ld guesses: %ld "
	       "on a T, %ld on a listed thread that is no U; %ld reached a thread (%ld no U, %ld a T), "
	       "%ld refused (%ld not ESRCH); %ld SIGUSR2 handled",
	       G->created, G->delivered, G->kill_failed, G->kill_errno, G->n, on_t, listed_other, hits,
	       not_u, t_hits, refused, wrong_errno, G->usr2);
	/* the attack ran: many guesses, on T's among them, the live ones
	 * /proc/self/task shows too */
	EXPECT_EQ(GUESS_THREADS, G->created);
	EXPECT_LT(1000, G->n);
	EXPECT_LT(0, on_t);
	EXPECT_LT(0, listed_other);
	/* and never reached a thread that is not one of the program's */
	EXPECT_EQ(0, not_u);
	EXPECT_EQ(0, t_hits);
	EXPECT_EQ(0, wrong_errno);
	/* every new thread got the signal sent right after pthread_create */
	EXPECT_EQ(0, G->kill_failed);
	EXPECT_EQ(GUESS_THREADS, G->delivered);
}

TEST_HARNESS_MAIN
