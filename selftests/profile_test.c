/* `sandpit profile`: the policy it writes for a program must be
 * accepted by `sandpit policy check`, must let the program give its native
 * output under `sandpit run` in strict and in filter mode, must grant what
 * the program read and wrote (writes only where it wrote) and must never
 * allow a call sandpit forbids; without root or BPF it runs nothing and
 * says so with its own status. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "selftests/build_dir.h"

#define PROFILE_EXIT_NO_PROFILER 124 /* loader/profile.h */


struct result {
	char out[1 << 17];
	size_t len;
	char err[4096];
	int status; /* exit status, or 128+signal */
};

enum drop { KEEP, AS_NOBODY, NO_BPF_CAPS };

/* argv in cwd; stdout and stderr collected (stderr's first 4 KiB). */
static int capture(char *const argv[], const char *cwd, enum drop drop, struct result *r)
{
	char errfile[] = "/tmp/profile_test_err.XXXXXX";
	int p[2], efd = mkstemp(errfile);
	if (efd < 0 || pipe(p) < 0)
		return -1;
	unlink(errfile);
	pid_t c = fork();
	if (c == 0) {
		int in = open("/dev/null", O_RDONLY);
		if (in < 0 || dup2(in, 0) < 0 || dup2(p[1], 1) < 0 || dup2(efd, 2) < 0 ||
		    (cwd && chdir(cwd) < 0))
			_exit(99);
		close(p[0]);
		if (drop == AS_NOBODY && (setgid(65534) < 0 || setuid(65534) < 0))
			_exit(97);
		/* still root, but an exec gets no capability the bounding set
		 * lacks: no BPF, no perf events, no mounts */
		if (drop == NO_BPF_CAPS && (prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN) < 0 ||
					    prctl(PR_CAPBSET_DROP, CAP_BPF) < 0 ||
					    prctl(PR_CAPBSET_DROP, CAP_PERFMON) < 0))
			_exit(96);
		execvp(argv[0], argv);
		_exit(98);
	}
	close(p[1]);
	r->len = 0;
	for (;;) {
		ssize_t n = read(p[0], r->out + r->len, sizeof(r->out) - 1 - r->len);
		if (n <= 0)
			break;
		r->len += n;
	}
	r->out[r->len] = 0;
	close(p[0]);
	int st;
	if (waitpid(c, &st, 0) < 0)
		return -1;
	r->status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
	ssize_t n = pread(efd, r->err, sizeof(r->err) - 1, 0);
	r->err[n > 0 ? n : 0] = 0;
	close(efd);
	return 0;
}

static char *read_file(const char *path)
{
	static char buf[1 << 16];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = 0;
	return buf;
}

/* calls a policy may only deny (policy/guard.c's "never" list, in part) */
static const char *const forbidden[] = {
	"execve", "execveat", "ptrace", "process_vm_readv", "process_vm_writev", "seccomp",
	"fork", "vfork", "clone3", "tkill", "io_uring_setup", "userfaultfd",
	"bpf", "perf_event_open", "arch_prctl", "set_tid_address", "set_robust_list",
	"rt_sigprocmask", "sigaltstack", "unshare", "open_by_handle_at",
};

/* Every line of the policy that names a forbidden call denies it (or
 * kills), and those with a path argument are the trusted process's. */
static void no_forbidden_allowed(struct __test_metadata *_metadata, const char *policy)
{
	for (const char *l = policy; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		size_t n = strcspn(l, "\n");
		for (size_t i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++) {
			size_t k = strlen(forbidden[i]);
			if (n > k + 2 && !strncmp(l, forbidden[i], k) && l[k] == ':') {
				const char *a = l + k + 2;
				EXPECT_TRUE(!strncmp(a, "deny(", 5) || !strncmp(a, "kill", 4))
				TH_LOG("forbidden call not denied: %.*s", (int)n, l);
			}
		}
		static const char *const path_calls[] = { "open:", "openat:", "stat:", "newfstatat:",
							  "statx:", "access:", "readlink:" };
		for (size_t i = 0; i < sizeof(path_calls) / sizeof(path_calls[0]); i++)
			if (!strncmp(l, path_calls[i], strlen(path_calls[i])))
				EXPECT_EQ(0, strncmp(l + strlen(path_calls[i]), " process", 8))
				TH_LOG("a path call that is not 'process': %.*s", (int)n, l);
	}
}

/* How many "path write" lines the policy has. */
static int write_grants(const char *policy)
{
	int n = 0;
	for (const char *p = policy; (p = strstr(p, "\npath write ")); p++)
		n++;
	return n;
}

static int has_line(const char *policy, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = policy; (p = strstr(p, line)); p++)
		if ((p == policy || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return 1;
	return 0;
}

FIXTURE(profile) {
	char dir[64];
	char sandpit[PATH_MAX + 16];
	char policy[PATH_MAX];
	char opt_policy[PATH_MAX + 16], opt_output[PATH_MAX + 16];
};

FIXTURE_SETUP(profile)
{
	snprintf(self->dir, sizeof(self->dir), "/tmp/profile_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->sandpit, sizeof(self->sandpit), "%s/sandpit", bindir);
	snprintf(self->policy, sizeof(self->policy), "%s/p.policy", self->dir);
	snprintf(self->opt_policy, sizeof(self->opt_policy), "--policy=%s", self->policy);
	snprintf(self->opt_output, sizeof(self->opt_output), "--output=%s", self->policy);
	ASSERT_EQ(0, access(self->sandpit, X_OK)) TH_LOG("no %s", self->sandpit);
}

FIXTURE_TEARDOWN(profile)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	if (system(cmd))
		TH_LOG("cannot remove %s", self->dir);
}

/* The program natively, profiled, then sandboxed with the profile's
 * policy in both modes: the same output each time.  Returns the policy. */
static const char *profile_and_run(struct __test_metadata *_metadata, FIXTURE_DATA(profile) *self,
				   char *const prog[], const char *cwd, const char *outfile)
{
	static struct result native, r;
	char *av[32];
	int n = 0, k;
	char path[PATH_MAX];

	if (outfile)
		snprintf(path, sizeof(path), "%s/%s", cwd, outfile);
	ASSERT_EQ(0, capture(prog, cwd, KEEP, &native));
	ASSERT_EQ(0, native.status);
	if (outfile) {
		const char *o = read_file(path);
		ASSERT_NE(NULL, o);
		snprintf(native.out, sizeof(native.out), "%s", o);
		unlink(path);
	}

	av[n++] = self->sandpit;
	av[n++] = "profile";
	av[n++] = self->opt_output;
	av[n++] = "--";
	for (k = 0; prog[k]; k++)
		av[n++] = prog[k];
	av[n] = NULL;
	ASSERT_EQ(0, capture(av, cwd, KEEP, &r));
	EXPECT_EQ(0, r.status) TH_LOG("profile: %s", r.err);
	EXPECT_STREQ("", r.err);
	if (outfile) {
		const char *o = read_file(path);
		ASSERT_NE(NULL, o);
		EXPECT_STREQ(native.out, o);
		unlink(path);
	} else {
		EXPECT_STREQ(native.out, r.out) TH_LOG("the profiled run differs from the native one");
	}

	char *check[] = { self->sandpit, "policy", "check", self->policy, NULL };
	ASSERT_EQ(0, capture(check, cwd, KEEP, &r));
	EXPECT_EQ(0, r.status) TH_LOG("policy check: %s", r.err);

	static const char *const modes[] = { "--mode=strict", "--mode=filter" };
	for (int m = 0; m < 2; m++) {
		n = 0;
		av[n++] = self->sandpit;
		av[n++] = "run";
		av[n++] = (char *)modes[m];
		av[n++] = self->opt_policy;
		av[n++] = "--";
		for (k = 0; prog[k]; k++)
			av[n++] = prog[k];
		av[n] = NULL;
		ASSERT_EQ(0, capture(av, cwd, KEEP, &r));
		EXPECT_EQ(0, r.status) TH_LOG("%s: %s", modes[m], r.err);
		if (outfile) {
			const char *o = read_file(path);
			ASSERT_NE(NULL, o) TH_LOG("%s wrote no %s", modes[m], path);
			EXPECT_STREQ(native.out, o) TH_LOG("%s", modes[m]);
			unlink(path);
		} else {
			EXPECT_STREQ(native.out, r.out) TH_LOG("%s: not the native output", modes[m]);
		}
	}
	const char *policy = read_file(self->policy);
	ASSERT_NE(NULL, policy);
	return policy;
}

TEST_F(profile, ls_l_usr_include_linux)
{
	if (geteuid())
		SKIP(return, "sandpit profile needs root (a BPF program on the tracepoints): uid %d",
		     (int)geteuid());
	char *prog[] = { "ls", "-l", "/usr/include/linux", NULL };
	const char *p = profile_and_run(_metadata, self, prog, self->dir, NULL);

	EXPECT_TRUE(has_line(p, "default: deny(ENOSYS)"));
	EXPECT_TRUE(has_line(p, "path read /usr")) TH_LOG("%s", p);
	EXPECT_TRUE(has_line(p, "path read /etc")); /* passwd, group, localtime */
	/* the default's denies come along: /etc is granted whole */
	EXPECT_TRUE(has_line(p, "path deny /etc/shadow")) TH_LOG("%s", p);
	EXPECT_TRUE(has_line(p, "path deny /etc/ssh/*_key")) TH_LOG("%s", p);
	EXPECT_TRUE(has_line(p, "openat: process"));
	EXPECT_TRUE(has_line(p, "getdents64: allow"));
	/* what it made, with the default's rule */
	EXPECT_TRUE(has_line(p, "ioctl: arg1 in {TCGETS, TIOCGWINSZ, FIONREAD, FIONBIO}; deny(ENOTTY)"));
	EXPECT_FALSE(has_line(p, "path read /")) TH_LOG("/ granted");
	EXPECT_FALSE(has_line(p, "path read /usr/include/linux")) TH_LOG("not collapsed into /usr");
	EXPECT_EQ(0, write_grants(p)) TH_LOG("ls wrote nothing:\n%s", p);
	/* execve started it: it is not in the policy */
	EXPECT_EQ(NULL, strstr(p, "\nexecve:"));
	no_forbidden_allowed(_metadata, p);
}

/* a program that reads and creates files in its own directory */
TEST_F(profile, sort_writes_only_its_directory)
{
	if (geteuid())
		SKIP(return, "sandpit profile needs root (a BPF program on the tracepoints): uid %d",
		     (int)geteuid());
	char in[PATH_MAX], line[PATH_MAX + 16];
	snprintf(in, sizeof(in), "%s/in.txt", self->dir);
	FILE *f = fopen(in, "w");
	ASSERT_NE(NULL, f);
	fputs("pear\napple\nfig\nbanana\n", f);
	fclose(f);

	char *prog[] = { "sort", "-o", "out.txt", "in.txt", NULL };
	const char *p = profile_and_run(_metadata, self, prog, self->dir, "out.txt");

	snprintf(line, sizeof(line), "path write %s", self->dir);
	EXPECT_TRUE(has_line(p, line)) TH_LOG("%s", p);
	EXPECT_EQ(1, write_grants(p)) TH_LOG("writes beyond its directory:\n%s", p);
	EXPECT_TRUE(has_line(p, "path read /usr"));
	/* sort advises the kernel it reads its input in order: the default's
	 * rule, without the reason the default gives on the same line */
	EXPECT_TRUE(has_line(p, "fadvise64: allow")) TH_LOG("%s", p);
	no_forbidden_allowed(_metadata, p);
}

/* a program that runs another one: the exec is refused in the policy */
TEST_F(profile, exec_of_a_child_is_denied_and_noted)
{
	if (geteuid())
		SKIP(return, "sandpit profile needs root (a BPF program on the tracepoints): uid %d",
		     (int)geteuid());
	struct result r;
	char *av[] = { self->sandpit, "profile", self->opt_output, "--", "/bin/sh", "-c",
		       "/bin/true; echo done", NULL };
	ASSERT_EQ(0, capture(av, self->dir, KEEP, &r));
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	EXPECT_STREQ("done\n", r.out);
	const char *p = read_file(self->policy);
	ASSERT_NE(NULL, p);
	EXPECT_NE(NULL, strstr(p, "it tried to run /bin/true")) TH_LOG("%s", p);
	/* sh forks (clone) and the child execs: both followed and refused */
	EXPECT_TRUE(has_line(p, "execve: deny(EACCES)")) TH_LOG("%s", p);
	no_forbidden_allowed(_metadata, p);
}

static void refused(struct __test_metadata *_metadata, FIXTURE_DATA(profile) *self, enum drop d,
		    const char *why)
{
	struct result r;
	char marker[PATH_MAX], cmd[PATH_MAX + 32];
	if (geteuid())
		d = KEEP; /* already without root or capabilities: nothing to drop */
	snprintf(marker, sizeof(marker), "%s/ran", self->dir);
	snprintf(cmd, sizeof(cmd), "echo ran; touch %s", marker);
	chmod(self->dir, 0777);
	char *av[] = { self->sandpit, "profile", self->opt_output, "--", "/bin/sh", "-c", cmd,
		       NULL };
	ASSERT_EQ(0, capture(av, self->dir, d, &r));
	EXPECT_EQ(PROFILE_EXIT_NO_PROFILER, r.status) TH_LOG("%s", r.err);
	EXPECT_STREQ("", r.out);
	EXPECT_NE(0, access(marker, F_OK)) TH_LOG("the program ran unprofiled");
	EXPECT_NE(0, access(self->policy, F_OK)) TH_LOG("a policy was written");
	/* one line, which says what is missing */
	EXPECT_TRUE(strchr(r.err, '\n') && !strchr(r.err, '\n')[1]) TH_LOG("%s", r.err);
	EXPECT_NE(NULL, strstr(r.err, why)) TH_LOG("%s", r.err);
}

TEST_F(profile, not_root_runs_nothing) { refused(_metadata, self, AS_NOBODY, "needs root"); }
TEST_F(profile, no_bpf_capabilities_runs_nothing)
{
	refused(_metadata, self, NO_BPF_CAPS, "was not run");
}

TEST_HARNESS_MAIN
