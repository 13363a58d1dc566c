/* sandpit_start refused leaves the caller's process as it was: the same
 * descriptors, the same mappings, no child of its own and no process of
 * sandpit's (B, the notifier N) still running once the call has returned.
 * The start is made to fail from outside at every point reachable so:
 * RLIMIT_NOFILE (soft only, and soft and hard), RLIMIT_AS and RLIMIT_NPROC
 * swept from too little up to the first value at which it starts, and
 * the caller's own mistakes (a policy file that is not there or does not
 * parse, a connect grant its policy cannot keep, threads running, an
 * unknown mode or flag).  Each attempt runs in a child P; this process,
 * a child subreaper (so that sandpit's orphans are its children), reads
 * P's /proc/P/fd and /proc/P/maps before the limit is set and after the
 * call has returned, while P waits.  Every refusal is asserted (a negative
 * errno, a message), and the distinct messages are counted: the failure
 * points the sweep reached.
 *
 * What a failure after the patching cannot take back (the patched code,
 * split where it was written, its trampolines, the vDSO's patched copy:
 * executable mappings only) is allowed in the maps of a failure that
 * comes after it (docs/LIMITS.md); descriptors, processes and every other
 * mapping must be as before even then. */
#include <sys/prctl.h>
#include <sys/resource.h>
#include <pthread.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"

#define MAX_TEXT (256 << 10)

/* shared with P */
struct shared {
	volatile int phase; /* 1 P ready, 2 before read, 3 P returned, 4 after read */
	int rc;
	char msg[512];
	int rc2, retry_open; /* RETRY: the second start, an open outside the grants after it */
};
static struct shared *S;

enum kind { NOFILE_SOFT, NOFILE_BOTH, AS, NPROC, CALLER, RETRY };
enum caller { NO_FILE, BAD_FILE, CONNECT_UNKEPT, THREADS, BAD_MODE, BAD_FLAGS, N_CALLER };

struct tally {
	int runs, refused, started, killed, leaks;
	int npoints;
	char points[64][160]; /* the distinct messages, digits as # */
	int post_patch;       /* refusals after the patching */
};

/* the caller's policy files, named before P is forked */
static char bad_policy[64], good_policy[64];

static void *sleeper(void *a)
{
	(void)a;
	for (;;)
		pause();
	return NULL;
}

static void wait_phase(int v)
{
	while (S->phase < v)
		usleep(1000);
}

/* the virtual size of this process, from its status file */
static long vm_size(void)
{
	char b[4096];
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, b, sizeof(b) - 1);
	if (fd >= 0)
		close(fd);
	b[n > 0 ? n : 0] = 0;
	char *v = strstr(b, "VmSize:");
	return v ? atol(v + 7) * 1024 : 0;
}

/* P's stderr, for sandpit's line when it kills P */
static int errfd = -1;

static void __attribute__((noreturn)) p_main(enum kind k, long arg)
{
	static const char *r[] = { "/tmp", NULL };
	static const char *conn[] = { "127.0.0.1:9", NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = r };
	pthread_t th;

	if (errfd >= 0) {
		dup2(errfd, 2);
		close(errfd);
	}
	sandpit_supported(); /* the kernel probes cached, as a caller would have */
	if (k == NPROC && (setgroups(0, NULL) || setresgid(arg >> 16, arg >> 16, arg >> 16) ||
			   setresuid(arg >> 16, arg >> 16, arg >> 16) ||
			   prctl(PR_SET_DUMPABLE, 1))) /* as the uid change left it: B traces P */
		_exit(KSFT_SKIP);
	if (k == CALLER) {
		if (arg == NO_FILE)
			o.policy_file = "/nonexistent/sandpit.policy";
		if (arg == BAD_FILE)
			o.policy_file = bad_policy;
		if (arg == CONNECT_UNKEPT) {
			o.policy_file = good_policy;
			o.flags = SANDPIT_OPT_CONNECT;
			o.allow_connect = conn;
		}
		if (arg == THREADS && pthread_create(&th, NULL, sleeper, NULL))
			_exit(KSFT_SKIP);
		if (arg == BAD_MODE)
			setenv("SANDPIT_MODE", "sideways", 1);
		if (arg == BAD_FLAGS)
			o.flags = 0x80;
	}
	long size = vm_size();
	S->phase = 1;
	wait_phase(2);
	struct rlimit rl;
	if (k == NOFILE_SOFT || k == NOFILE_BOTH || k == RETRY) {
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = (rlim_t)arg;
		if (k == NOFILE_BOTH)
			rl.rlim_max = (rlim_t)arg;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			_exit(KSFT_SKIP);
	}
	if (k == AS) {
		getrlimit(RLIMIT_AS, &rl);
		rl.rlim_cur = (rlim_t)(size + arg);
		if (setrlimit(RLIMIT_AS, &rl))
			_exit(KSFT_SKIP);
	}
	if (k == NPROC) {
		rl = (struct rlimit){ (rlim_t)(arg & 0xffff), (rlim_t)(arg & 0xffff) };
		if (setrlimit(RLIMIT_NPROC, &rl))
			_exit(KSFT_SKIP);
	}
	S->rc = sandpit_start(&o);
	snprintf(S->msg, sizeof(S->msg), "%s", S->rc < 0 ? sandpit_error() : "");
	if (k == RETRY && S->rc < 0) {
		/* the caller puts its limit back and starts again */
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = rl.rlim_max < 1024 ? rl.rlim_max : 1024;
		setrlimit(RLIMIT_NOFILE, &rl);
		S->rc2 = sandpit_start(&o);
		if (S->rc2 == 0) {
			/* sandboxed: a file outside the grants is refused */
			int fd = open("/var", O_RDONLY | O_DIRECTORY);
			S->retry_open = fd < 0 ? -errno : fd;
		}
		S->phase = 3;
		_exit(0);
	}
	S->phase = 3;
	if (S->rc == 0)
		_exit(0);
	wait_phase(4);
	_exit(0);
}

static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	size_t got = 0;
	ssize_t n;
	while (got < len - 1 && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	buf[got] = 0;
	return 0;
}

/* P's descriptors, one "N -> target" line each, in number order */
static void read_fds(pid_t p, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", p);
	size_t n = 0;
	buf[0] = 0;
	for (int fd = 0; fd < 70000 && n + 300 < len; fd++) {
		char l[96], t[256];
		snprintf(l, sizeof(l), "%s/%d", path, fd);
		ssize_t k = readlink(l, t, sizeof(t) - 1);
		if (k < 0)
			continue;
		t[k] = 0;
		n += (size_t)snprintf(buf + n, len - n, "%d -> %s\n", fd, t);
	}
}

/* P's mappings; the heap's and the stack's extent are not compared (they
 * grow with what libc and the call used) */
static void read_maps(pid_t p, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", p);
	if (read_text(path, buf, len) < 0)
		buf[0] = 0;
	for (char *l = buf; *l;) {
		char *nl = strchr(l, '\n');
		if (!nl)
			break;
		if ((strstr(l, "[heap]") && strstr(l, "[heap]") < nl) ||
		    (strstr(l, "[stack]") && strstr(l, "[stack]") < nl))
			for (char *c = l; *c != ' '; c++)
				*c = 'x';
		l = nl + 1;
	}
}

/* the lines of a not in b, into out */
static int lines_missing(const char *a, const char *b, char *out, size_t len)
{
	int n = 0;
	size_t o = 0;
	out[0] = 0;
	for (const char *l = a; *l;) {
		const char *nl = strchr(l, '\n');
		size_t ll = nl ? (size_t)(nl - l) + 1 : strlen(l);
		int found = 0;
		for (const char *m = b; *m && !found;) {
			const char *ml = strchr(m, '\n');
			size_t mm = ml ? (size_t)(ml - m) + 1 : strlen(m);
			found = mm == ll && !memcmp(l, m, ll);
			m += mm;
		}
		if (!found) {
			n++;
			if (o + ll + 1 < len) {
				memcpy(out + o, l, ll);
				o += ll;
				out[o] = 0;
			}
		}
		l += ll;
	}
	return n;
}

/* the processes of this one's other than p (sandpit's orphans come here):
 * those still running named in out; each reaped (killed if it runs) */
static int leftovers(pid_t p, char *out, size_t len)
{
	char path[64], kids[4096];
	int alive = 0;
	size_t o = 0;
	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", getpid(), getpid());
	if (read_text(path, kids, sizeof(kids)) < 0)
		return 0;
	for (char *c = kids; *c;) {
		pid_t k = (pid_t)strtol(c, &c, 10);
		while (*c == ' ')
			c++;
		if (k <= 0 || k == p)
			continue;
		char st[512];
		snprintf(path, sizeof(path), "/proc/%d/stat", k);
		/* one that has let go of its descriptors is in its exit: a
		 * moment to become a zombie */
		char *ce = NULL;
		for (int i = 0; i < 20; i++) {
			ce = read_text(path, st, sizeof(st)) == 0 ? strrchr(st, ')') : NULL;
			if (!ce || ce[2] == 'Z')
				break;
			usleep(10000);
		}
		if (ce && ce[2] != 'Z') {
			alive++;
			o += (size_t)snprintf(out + o, len - o, "%.*s ", (int)(ce - st + 1), st);
			if (o >= len)
				o = len - 1;
		}
	}
	return alive;
}

static void reap_others(pid_t p)
{
	char path[64], kids[4096];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", getpid(), getpid());
	if (read_text(path, kids, sizeof(kids)) < 0)
		return;
	for (char *c = kids; *c;) {
		pid_t k = (pid_t)strtol(c, &c, 10);
		while (*c == ' ')
			c++;
		if (k <= 0 || k == p)
			continue;
		int done = 0;
		for (int i = 0; i < 300 && !done; i++) {
			done = waitpid(k, NULL, WNOHANG | __WALL) == k;
			if (!done)
				usleep(10000);
		}
		if (!done) {
			kill(k, SIGKILL);
			waitpid(k, NULL, __WALL);
		}
	}
}

/* a message refusing after the patching: what it patched stays */
static int after_patching(const char *m)
{
	static const char *const post[] = { "cannot patch system calls", "the trusted process did not start",
					    "run-time patcher", "too many protected ranges",
					    "the trusted process is gone", "cannot start the trusted thread",
					    "needs the trusted process to set thread pointers" };
	for (size_t i = 0; i < sizeof(post) / sizeof(post[0]); i++)
		if (strstr(m, post[i]))
			return 1;
	return 0;
}

/* the mappings a failure after the patching may change: executable ones
 * (the patched code, split where it was written, its trampolines, the
 * vDSO's patched copy) */
static int only_code(const char *lines)
{
	for (const char *l = lines; *l;) {
		const char *nl = strchr(l, '\n');
		size_t ll = nl ? (size_t)(nl - l) : strlen(l);
		const char *perms = memchr(l, ' ', ll);
		if (!perms || perms[3] != 'x')
			return 0;
		l += ll + (nl ? 1 : 0);
	}
	return 1;
}

static void note_point(struct tally *t, const char *msg)
{
	char n[160];
	size_t o = 0;
	for (const char *c = msg; *c && o + 1 < sizeof(n); c++) {
		if (*c >= '0' && *c <= '9') {
			if (!o || n[o - 1] != '#')
				n[o++] = '#';
			continue;
		}
		n[o++] = *c;
	}
	n[o] = 0;
	for (int i = 0; i < t->npoints; i++)
		if (!strcmp(t->points[i], n))
			return;
	if (t->npoints < 64)
		snprintf(t->points[t->npoints++], sizeof(t->points[0]), "%s", n);
}

static char before_fd[MAX_TEXT], after_fd[MAX_TEXT], before_maps[MAX_TEXT], after_maps[MAX_TEXT];
static char diff[8192], diff2[8192];

static int attempt_p(struct __test_metadata *_metadata, struct tally *t, pid_t p, const char *what,
		     const int *want);

/* One attempt: 1 if sandpit started, 0 if it was refused (or P killed
 * with sandpit's reason), -1 if P could not be set up (skipped) */
static int attempt(struct __test_metadata *_metadata, struct tally *t, enum kind k, long arg,
		   const char *what, const int *want)
{
	memset(S, 0, sizeof(*S));
	char tmpl[] = "/tmp/sandpit-startfail-errXXXXXX";
	errfd = mkstemp(tmpl);
	if (errfd >= 0)
		unlink(tmpl);
	fflush(NULL);
	pid_t p = fork();
	if (p == 0)
		p_main(k, arg);
	int r = attempt_p(_metadata, t, p, what, want);
	close(errfd);
	errfd = -1;
	return r;
}

/* sandpit's "killing the process" line in P's stderr */
static int killed_with_reason(char *line, size_t len)
{
	char err[4096];
	ssize_t n = pread(errfd, err, sizeof(err) - 1, 0);
	err[n > 0 ? n : 0] = 0;
	char *l = strstr(err, "sandpit: ");
	char *nl = l ? strchr(l, '\n') : NULL;
	if (!l || !nl)
		return 0;
	snprintf(line, len, "%.*s", (int)(nl - l), l);
	return nl - l > 21 && !strncmp(nl - 21, "; killing the process", 21);
}

static int attempt_p(struct __test_metadata *_metadata, struct tally *t, pid_t p, const char *what,
		     const int *want)
{
	int st = 0, gone = 0;
	for (int i = 0; i < 2000 && S->phase < 1 && !gone; i++) {
		gone = waitpid(p, &st, WNOHANG) == p;
		usleep(1000);
	}
	if (gone || S->phase < 1) {
		if (!gone) {
			kill(p, SIGKILL);
			waitpid(p, &st, 0);
		}
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == KSFT_SKIP) TH_LOG("%s: P did not get ready", what);
		return -1;
	}
	read_fds(p, before_fd, sizeof(before_fd));
	read_maps(p, before_maps, sizeof(before_maps));
	S->phase = 2;
	for (int i = 0; i < 30000 && S->phase < 3 && !gone; i++) {
		gone = waitpid(p, &st, WNOHANG) == p;
		usleep(1000);
	}
	if (gone && WIFEXITED(st) && WEXITSTATUS(st) == KSFT_SKIP) {
		reap_others(p);
		return -1;
	}
	t->runs++;
	if (S->phase < 3) {
		if (!gone) {
			kill(p, SIGKILL);
			waitpid(p, &st, 0);
		}
		reap_others(p);
		/* past the point of no return, or B failing once P said T is
		 * next: the process killed with sandpit's one line, never left
		 * to run unsandboxed */
		char line[512] = "";
		if (gone && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && killed_with_reason(line, sizeof(line))) {
			t->killed++;
			note_point(t, line);
			return 0;
		}
		EXPECT_TRUE(0) TH_LOG("%s: sandpit_start did not return (P ended %#x: %s)", what, st, line);
		return 0;
	}
	if (S->rc == 0) {
		if (!gone)
			waitpid(p, &st, 0);
		reap_others(p);
		t->started++;
		return 1;
	}
	/* refused: a negative errno and a message */
	t->refused++;
	int known = 0;
	for (int i = 0; want[i]; i++)
		known |= S->rc == -want[i];
	EXPECT_TRUE(known) TH_LOG("%s: refused with %d (%s)", what, S->rc, S->msg);
	EXPECT_NE(0, S->msg[0]) TH_LOG("%s: no message", what);
	note_point(t, S->msg);
	int post = after_patching(S->msg);
	t->post_patch += post;

	char kids[4096] = "", path[64], alive[1024];
	int nalive = leftovers(p, alive, sizeof(alive));
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", p, p);
	read_text(path, kids, sizeof(kids));
	read_fds(p, after_fd, sizeof(after_fd));
	read_maps(p, after_maps, sizeof(after_maps));
	S->phase = 4;
	waitpid(p, &st, 0);
	reap_others(p);

	int bad = 0;
	if (lines_missing(after_fd, before_fd, diff, sizeof(diff)) ||
	    lines_missing(before_fd, after_fd, diff2, sizeof(diff2))) {
		bad = 1;
		TH_LOG("%s (%d: %s): descriptors left:\n%s gone:\n%s", what, S->rc, S->msg, diff, diff2);
	}
	int added = lines_missing(after_maps, before_maps, diff, sizeof(diff));
	int lost = lines_missing(before_maps, after_maps, diff2, sizeof(diff2));
	if ((added || lost) && !(post && only_code(diff) && only_code(diff2))) {
		bad = 1;
		TH_LOG("%s (%d: %s): mappings left:\n%s gone or changed:\n%s", what, S->rc, S->msg, diff, diff2);
	}
	if (kids[0] && kids[0] != '\n') {
		bad = 1;
		TH_LOG("%s (%d: %s): P has children: %s", what, S->rc, S->msg, kids);
	}
	if (nalive) {
		bad = 1;
		TH_LOG("%s (%d: %s): still running after the call returned: %s", what, S->rc, S->msg, alive);
	}
	t->leaks += bad;
	return 0;
}

/* arg from first on, by step (or doubling), up to the first start */
static void sweep(struct __test_metadata *_metadata, struct tally *t, enum kind k, long first,
		  long last, long step, long hi_bits, const char *name, const int *want)
{
	int ran = 0;
	for (long a = first; a <= last && !ran; a = step ? a + step : (a ? 2 * a : 65536)) {
		char what[96];
		snprintf(what, sizeof(what), "%s %ld", name, a);
		ran = attempt(_metadata, t, k, a | hi_bits, what, want) == 1;
	}
	EXPECT_TRUE(ran) TH_LOG("%s: never started up to %ld", name, last);
}

static void report(struct __test_metadata *_metadata, const struct tally *t, const char *name)
{
	TH_LOG("%s: %d attempts, %d refused (%d after the patching), %d killed with sandpit's reason, "
	       "%d started, %d left something; %d distinct failure points:", name, t->runs, t->refused,
	       t->post_patch, t->killed, t->started, t->leaks, t->npoints);
	for (int i = 0; i < t->npoints; i++)
		TH_LOG("  %s", t->points[i]);
}

FIXTURE(sf) {
	struct tally t;
};

FIXTURE_SETUP(sf)
{
	S = shared_page(sizeof(*S));
	ASSERT_NE(NULL, S);
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	memset(&self->t, 0, sizeof(self->t));
}

FIXTURE_TEARDOWN(sf)
{
	munmap(S, sizeof(*S));
}

/* the soft limit alone from 3: the block goes above it */
TEST_F_TIMEOUT(sf, rlimit_nofile_soft_refusals_leave_nothing_behind, 300)
{
	static const int want[] = { EMFILE, 0 };
	sweep(_metadata, &self->t, NOFILE_SOFT, 3, 400, 1, 0, "RLIMIT_NOFILE soft", want);
	report(_metadata, &self->t, "RLIMIT_NOFILE soft");
	EXPECT_EQ(0, self->t.leaks);
	EXPECT_LE(4, self->t.npoints);
}

/* soft and hard from 3: the block goes below, where it fits at all */
TEST_F_TIMEOUT(sf, rlimit_nofile_hard_refusals_leave_nothing_behind, 300)
{
	if (geteuid() != 0)
		SKIP(return, "lowering the hard limit and reading P after needs root");
	static const int want[] = { EMFILE, 0 };
	sweep(_metadata, &self->t, NOFILE_BOTH, 3, 600, 1, 0, "RLIMIT_NOFILE soft=hard", want);
	report(_metadata, &self->t, "RLIMIT_NOFILE soft=hard");
	EXPECT_EQ(0, self->t.leaks);
	EXPECT_LE(4, self->t.npoints);
}

/* the address space from no room above P's size, doubling */
TEST_F_TIMEOUT(sf, rlimit_as_refusals_leave_nothing_behind, 300)
{
	static const int want[] = { ENOMEM, 0 };
	sweep(_metadata, &self->t, AS, 0, 1L << 34, 0, 0, "RLIMIT_AS size +", want);
	report(_metadata, &self->t, "RLIMIT_AS");
	EXPECT_EQ(0, self->t.leaks);
	EXPECT_LE(2, self->t.npoints);
}

/* the processes and threads of a user of P's own (root's count is the
 * whole machine's), from 1: the notifier, B's intermediate, B, B's
 * threads */
TEST_F_TIMEOUT(sf, rlimit_nproc_refusals_leave_nothing_behind, 300)
{
	if (geteuid() != 0)
		SKIP(return, "a user of its own for P needs root");
	long uid = 0x7000 + getpid() % 0x800;
	/* a fork or clone refused (EAGAIN); B's own thread refused, which P
	 * learns as B ending before its word (ECHILD) */
	static const int want[] = { EAGAIN, ECHILD, 0 };
	sweep(_metadata, &self->t, NPROC, 1, 64, 1, uid << 16, "RLIMIT_NPROC", want);
	report(_metadata, &self->t, "RLIMIT_NPROC");
	EXPECT_EQ(0, self->t.leaks);
	EXPECT_LE(1, self->t.npoints);
}

/* the caller's own mistakes, each refused before anything is made */
TEST_F_TIMEOUT(sf, caller_mistakes_leave_nothing_behind, 120)
{
	static const char *names[N_CALLER] = { "a policy file not there", "a policy file that does not parse",
					       "a connect grant its policy cannot keep",
					       "a thread running", "an unknown mode", "an unknown flag" };
	snprintf(bad_policy, sizeof(bad_policy), "/tmp/sandpit-startfail-bad-%d.policy", getpid());
	snprintf(good_policy, sizeof(good_policy), "/tmp/sandpit-startfail-good-%d.policy", getpid());
	FILE *f = fopen(bad_policy, "w");
	ASSERT_NE(NULL, f);
	fputs("default: deny(ENOSYS)\nfrobnicate: allow\n", f);
	fclose(f);
	f = fopen(good_policy, "w");
	ASSERT_NE(NULL, f);
	fputs("default: deny(EPERM)\nread: allow\nwrite: allow\nexit: allow\nexit_group: allow\n"
	      "rt_sigreturn: allow\n", f);
	fclose(f);
	static const int want[N_CALLER][2] = { { ENOENT }, { ENOENT }, { EINVAL }, { EBUSY }, { EINVAL },
					       { EINVAL } };
	for (int c = 0; c < N_CALLER; c++)
		EXPECT_EQ(0, attempt(_metadata, &self->t, CALLER, c, names[c], want[c]));
	unlink(bad_policy);
	unlink(good_policy);
	report(_metadata, &self->t, "the caller's mistakes");
	EXPECT_EQ(N_CALLER, self->t.refused);
	EXPECT_EQ(0, self->t.leaks);
	EXPECT_LE(N_CALLER - 1, self->t.npoints);
}

/* a caller whose start failed puts its limit back and starts again: the
 * second start runs the sandbox (an open outside the grants refused) */
TEST_F_TIMEOUT(sf, start_again_after_a_refusal_runs_the_sandbox, 120)
{
	int refused = 0;
	for (long n = 3; n < 40; n++) {
		memset(S, 0, sizeof(*S));
		fflush(NULL);
		pid_t p = fork();
		if (p == 0)
			p_main(RETRY, n);
		while (S->phase < 1)
			usleep(1000);
		S->phase = 2;
		int st;
		waitpid(p, &st, 0);
		reap_others(p);
		if (S->rc == 0)
			break; /* the first start ran: no refusal this low */
		refused++;
		EXPECT_EQ(-EMFILE, S->rc) TH_LOG("RLIMIT_NOFILE %ld: %s", n, S->msg);
		EXPECT_EQ(0, S->rc2) TH_LOG("RLIMIT_NOFILE %ld: refused with %s, then %d: %s", n, S->msg,
					    S->rc2, S->msg);
		EXPECT_EQ(-EACCES, S->retry_open) TH_LOG("RLIMIT_NOFILE %ld (%s)", n, S->msg);
	}
	TH_LOG("%d refusals, each followed by a start that ran", refused);
	EXPECT_LT(2, refused);
}

TEST_HARNESS_MAIN
