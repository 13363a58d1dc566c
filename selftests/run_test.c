/* `sandpit run` on unmodified programs (issue 6): each program's output
 * and exit status under the sandbox, in strict and in filter mode, must be
 * exactly its native ones; attacks from inside an unmodified program
 * (selftests/attack/attack.c, linked dynamically and statically) must be
 * refused; sandpit's own errors get their own exit statuses. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "selftests/build_dir.h"
#include "selftests/run_util.h"
#include "selftests/sandbox_util.h"


FIXTURE(run) {
	char dir[64];
	char big[128], small[128], script[128], secret[128], jq_in[128], bc_in[128];
	char grant[160];
};

FIXTURE_VARIANT(run) {
	const char *mode;
};
FIXTURE_VARIANT_ADD(run, strict) { .mode = "strict" };
FIXTURE_VARIANT_ADD(run, filter) { .mode = "filter" };

static void write_file(struct __test_metadata *_metadata, const char *path, const char *text, int mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)strlen(text), write(fd, text, strlen(text)));
	close(fd);
}

FIXTURE_SETUP(run)
{
	strcpy(self->dir, "/tmp/sandpit-run-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->big, sizeof self->big, "%s/big.txt", self->dir);
	snprintf(self->small, sizeof self->small, "%s/small.txt", self->dir);
	snprintf(self->script, sizeof self->script, "%s/script.sh", self->dir);
	snprintf(self->secret, sizeof self->secret, "%s/secret", self->dir);
	snprintf(self->jq_in, sizeof self->jq_in, "%s/in.json", self->dir);
	snprintf(self->bc_in, sizeof self->bc_in, "%s/in.bc", self->dir);
	snprintf(self->grant, sizeof self->grant, "--allow-read=%s", self->dir);
	/* 32 MB of text, some of it compressible */
	FILE *f = fopen(self->big, "w");
	ASSERT_NE(NULL, f);
	unsigned long x = 88172645463325252UL;
	for (long i = 0; i < 1000000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		fprintf(f, "line %ld %016lx %s\n", i, x, (i & 7) ? "same same" : "different");
	}
	fclose(f);
	f = fopen(self->small, "w");
	ASSERT_NE(NULL, f);
	for (int i = 0; i < 20000; i++)
		fprintf(f, "%d %s\n", (i * 7919) % 20000, i % 3 ? "beta" : "alpha");
	fclose(f);
	write_file(_metadata, self->script, "#!/bin/sh\necho \"script says $1\"\nexit 4\n", 0755);
	write_file(_metadata, self->secret, "SECRET\n", 0600);
	write_file(_metadata, self->jq_in, "{\"a\": [1, 2, 3], \"b\": {\"c\": \"d\"}}\n", 0644);
	write_file(_metadata, self->bc_in, "scale=20\n2^200\n4*a(1)\n", 0644);
}

FIXTURE_TEARDOWN(run)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", self->dir);
	EXPECT_EQ(0, system(cmd));
}

/* The same program natively and in the sandbox: same stdout, same status. */
static void same_as_native(struct __test_metadata *_metadata, const FIXTURE_DATA(run) *self,
			   const char *mode, const char *in, const char *cwd, char *const argv[])
{
	struct result n, s;
	const char *extra[] = { self->grant, NULL };
	ASSERT_EQ(0, capture(argv, in, cwd, NULL, &n));
	ASSERT_EQ(0, sandboxed(mode, extra, argv, in, cwd, NULL, &s));
	EXPECT_EQ(n.status, s.status);
	EXPECT_EQ(n.len, s.len);
	EXPECT_EQ(0, n.len == s.len ? memcmp(n.out, s.out, n.len) : 1)
		TH_LOG("%s: output differs", argv[0]);
	free(n.out);
	free(s.out);
}

#define SAME(in, cwd, ...) \
	same_as_native(_metadata, self, variant->mode, in, cwd, (char *const[]){ __VA_ARGS__, NULL })

/* A write grant is a working directory (issue 17): the same commands, one
 * after the other, natively in one directory and sandboxed in another that
 * is a write grant, give the same status and output each, and leave the
 * same tree. */
#define MAX_CMDS 24
static void same_in_a_write_grant(struct __test_metadata *_metadata, const FIXTURE_DATA(run) *self,
				  const char *mode, const char *env, char *const *const cmds[])
{
	char nat[192], box[192], grant[224];
	snprintf(nat, sizeof nat, "%s/native", self->dir);
	snprintf(box, sizeof box, "%s/grant", self->dir);
	snprintf(grant, sizeof grant, "--allow-write=%s", box);
	ASSERT_EQ(0, mkdir(nat, 0755));
	ASSERT_EQ(0, mkdir(box, 0755));
	const char *extra[] = { self->grant, grant, NULL };
	for (int i = 0; cmds[i]; i++) {
		struct result n, s;
		ASSERT_EQ(0, capture(cmds[i], NULL, nat, env, &n));
		ASSERT_EQ(0, sandboxed(mode, extra, cmds[i], NULL, box, env, &s));
		EXPECT_EQ(n.status, s.status) TH_LOG("%s %s", cmds[i][0], cmds[i][1]);
		EXPECT_EQ(0, n.len == s.len ? memcmp(n.out, s.out, n.len) : 1)
			TH_LOG("%s %s: output differs: \"%.*s\" \"%.*s\"", cmds[i][0], cmds[i][1],
			       (int)n.len, n.out, (int)s.len, s.out);
		free(n.out);
		free(s.out);
	}
	static char a[16384], b[16384];
	a[0] = b[0] = '\0';
	tree_signature(nat, "", a, sizeof a);
	tree_signature(box, "", b, sizeof b);
	EXPECT_STREQ(a, b);
}

#define CMD(...) ((char *const[]){ __VA_ARGS__, NULL })

TEST_F(run, coreutils_in_a_write_grant)
{
	char *const *const cmds[] = {
		CMD("touch", "f"), CMD("touch", "f"), CMD("mkdir", "-p", "a/b/c"),
		CMD("mkdir", "a"), CMD("mv", "f", "a/b/g"), CMD("ln", "-s", "g", "a/b/s"),
		CMD("ln", "a/b/g", "a/h"), CMD("chmod", "600", "a/h"),
		CMD("truncate", "-s", "10", "a/h"), CMD("wc", "-c", "a/b/s"),
		CMD("touch", "-d", "2001-02-03 04:05:06", "a/h"), CMD("stat", "-c", "%y %s %A", "a/h"),
		CMD("rmdir", "a/b/c"), CMD("rmdir", "a"), CMD("rm", "a/h"), CMD("mkdir", "z"),
		CMD("mv", "a", "z/"), CMD("rm", "-r", "z/a"), CMD("rm", "nothing"), CMD("ls", "-R"),
		NULL
	};
	same_in_a_write_grant(_metadata, self, variant->mode, NULL, cmds);
}

TEST_F(run, sqlite3_database_and_journal_in_a_write_grant)
{
	char *const *const cmds[] = {
		CMD("sqlite3", "db", "create table t(a); begin; insert into t values (1); "
			     "insert into t values (2); commit; select sum(a) from t;"),
		CMD("sqlite3", "db", "pragma journal_mode=persist; insert into t values (3); "
			     "select sum(a) from t;"),
		CMD("sqlite3", "db", "pragma journal_mode=wal; insert into t values (4); "
			     "select sum(a) from t;"),
		CMD("ls"),
		NULL
	};
	same_in_a_write_grant(_metadata, self, variant->mode, NULL, cmds);
}

TEST_F(run, python3_tempfile_and_makedirs_in_a_write_grant)
{
	char *const *const cmds[] = {
		CMD("/usr/bin/python3", "-c",
		    "import tempfile, os, shutil\n"
		    "print(tempfile.gettempdir() == os.getcwd())\n"
		    "d = tempfile.mkdtemp(dir='.')\n"
		    "os.makedirs(d + '/x/y/z')\n"
		    "open(d + '/x/y/f', 'w').write('1')\n"
		    "os.makedirs(d + '/x/y', exist_ok=True)\n"
		    "os.makedirs(os.getcwd(), exist_ok=True)\n"
		    "os.makedirs('/usr/lib', exist_ok=True)\n"
		    "with tempfile.NamedTemporaryFile(dir=d) as f: f.write(b'x')\n"
		    "with tempfile.TemporaryDirectory() as t: open(t + '/g', 'w').close()\n"
		    "shutil.rmtree(d)\n"
		    "print(os.listdir('.'))"),
		NULL
	};
	same_in_a_write_grant(_metadata, self, variant->mode, "TMPDIR=.", cmds);
}

/* The same commands on a directory under a read grant only: each fails,
 * and nothing there is made, removed or changed. */
TEST_F(run, coreutils_outside_the_write_grants_change_nothing)
{
	char out[192], keep[224], grant[224], before[4096] = "", after[4096] = "";
	snprintf(out, sizeof out, "%s/out", self->dir);
	snprintf(keep, sizeof keep, "%s/keep", out);
	snprintf(grant, sizeof grant, "--allow-write=%s/grant", self->dir);
	ASSERT_EQ(0, mkdir(out, 0755));
	write_file(_metadata, keep, "keep\n", 0644);
	char g[192];
	snprintf(g, sizeof g, "%s/grant", self->dir);
	ASSERT_EQ(0, mkdir(g, 0755));
	tree_signature(out, "", before, sizeof before);
	char *const *const cmds[] = {
		CMD("touch", "f"), CMD("mkdir", "d"), CMD("ln", "-s", "keep", "s"),
		CMD("ln", "keep", "l"), CMD("mv", "keep", "k2"), CMD("chmod", "600", "keep"),
		CMD("truncate", "-s", "0", "keep"), CMD("rm", "keep"), CMD("touch", "keep"),
		CMD("mkfifo", "p"), CMD("sqlite3", "db", "create table t(a);"),
		CMD("/usr/bin/python3", "-c", "import tempfile; tempfile.mkdtemp(dir='.')"),
		NULL
	};
	const char *extra[] = { self->grant, grant, NULL };
	for (int i = 0; cmds[i]; i++) {
		struct result s;
		ASSERT_EQ(0, sandboxed(variant->mode, extra, cmds[i], NULL, out, NULL, &s));
		EXPECT_NE(0, s.status) TH_LOG("%s %s", cmds[i][0], cmds[i][1]);
		free(s.out);
	}
	tree_signature(out, "", after, sizeof after);
	EXPECT_STREQ(before, after);
	struct stat st;
	ASSERT_EQ(0, stat(keep, &st));
	EXPECT_EQ(5, st.st_size);
	EXPECT_EQ(0644u, st.st_mode & 07777);
}

TEST_F(run, true_false_echo)
{
	SAME(NULL, NULL, "true");
	SAME(NULL, NULL, "false");
	SAME(NULL, NULL, "echo", "hello", "world");
}

TEST_F(run, ls_la) { SAME(NULL, NULL, "ls", "-la", "/usr/include/linux"); }
TEST_F(run, sha256sum_md5sum_large_file)
{
	SAME(NULL, NULL, "sha256sum", self->big);
	SAME(NULL, NULL, "md5sum", self->big);
}
TEST_F(run, sort) { SAME(NULL, NULL, "sort", "-n", self->small); }
TEST_F(run, gzip) { SAME(NULL, NULL, "gzip", "-c", "-n", self->small); }
TEST_F(run, xz) { SAME(NULL, NULL, "xz", "-T1", "-c", self->small); }
TEST_F(run, find) { SAME(NULL, "/usr/include", "find", "linux", "-name", "*.h"); }
TEST_F(run, tar_to_stdout) { SAME(NULL, NULL, "tar", "-cf", "-", "-C", "/usr/include", "linux/netfilter"); }
TEST_F(run, awk) { SAME(NULL, NULL, "awk", "{ n[$2]++ } END { for (k in n) print k, n[k] }", self->small); }
TEST_F(run, grep) { SAME(NULL, NULL, "grep", "-c", "alpha", self->small); }
TEST_F(run, perl) { SAME(NULL, NULL, "perl", "-e", "my %h; $h{$_ % 7}++ for 1..1000; print join(',', map { \"$_=$h{$_}\" } sort keys %h), \"\\n\""); }
TEST_F(run, python3_plain) { SAME(NULL, NULL, "/usr/bin/python3", "-c", "import sys, json; print(sys.version_info[:2], json.dumps({'a': sum(range(10**6))}))"); }
/* dlopen after start: C extensions from lib-dynload */
TEST_F(run, python3_imports_c_extensions)
{
	SAME(NULL, NULL, "/usr/bin/python3", "-c",
	     "import _ctypes, _decimal, decimal; print(_ctypes.__file__, decimal.Decimal(1) / 7)");
}
TEST_F(run, python3_hashlib)
{
	SAME(NULL, NULL, "/usr/bin/python3", "-c",
	     "import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())",
	     self->big);
}
TEST_F(run, python3_8_threads)
{
	SAME(NULL, NULL, "/usr/bin/python3", "-c",
	     "import threading\n"
	     "r = [0] * 8\n"
	     "def f(i): r[i] = sum(range(i * 100000))\n"
	     "t = [threading.Thread(target=f, args=(i,)) for i in range(8)]\n"
	     "[x.start() for x in t]; [x.join() for x in t]\n"
	     "print(r)\n");
}
TEST_F(run, sqlite3_memory)
{
	SAME(NULL, NULL, "sqlite3", ":memory:",
	     "create table t(x, y); insert into t values (1, 'a'), (2, 'b'), (3, 'c');"
	     "select sum(x), group_concat(y) from t;");
}
TEST_F(run, jq) { SAME(self->jq_in, NULL, "jq", "-c", ".a | add, .b"); }
TEST_F(run, bc) { SAME(self->bc_in, NULL, "bc", "-l"); }
TEST_F(run, busybox_static_applets)
{
	if (access("/bin/busybox", X_OK))
		SKIP(return, "busybox-static is not installed");
	SAME(NULL, NULL, "busybox", "echo", "hi");
	SAME(NULL, NULL, "busybox", "ls", "/usr/include/linux");
	SAME(NULL, NULL, "busybox", "sha256sum", self->big);
	SAME(NULL, NULL, "busybox", "awk", "{ s += $1 } END { print s }", self->small);
}
TEST_F(run, shebang_script) { SAME(NULL, NULL, self->script, "arg"); }
TEST_F(run, exit_status_and_signal)
{
	SAME(NULL, NULL, "sh", "-c", "exit 7");
	SAME(NULL, NULL, "sh", "-c", "kill -TERM $$");
}

/* ---- sandpit's own errors */

TEST_F(run, own_errors_have_their_own_status)
{
	struct result r;
	ASSERT_EQ(0, sandboxed(variant->mode, NULL, (char *const[]){ "/nonexistent/prog", NULL }, NULL,
			       NULL, NULL, &r));
	EXPECT_EQ(127, r.status);
	free(r.out);
	ASSERT_EQ(0, sandboxed(variant->mode, NULL, (char *const[]){ "/etc/hostname", NULL }, NULL, NULL,
			       NULL, &r));
	EXPECT_EQ(126, r.status); /* not executable */
	free(r.out);
	ASSERT_EQ(0, sandboxed(variant->mode, NULL, (char *const[]){ self->jq_in, NULL }, NULL, NULL,
			       NULL, &r));
	EXPECT_EQ(126, r.status); /* not executable either */
	free(r.out);
	const char *bad[] = { "--no-such-flag", NULL };
	ASSERT_EQ(0, sandboxed(variant->mode, bad, (char *const[]){ "true", NULL }, NULL, NULL, NULL, &r));
	EXPECT_EQ(125, r.status);
	free(r.out);
	/* filter mode on a kernel without it: a clear failure, never a run */
	ASSERT_EQ(0, sandboxed("filter", NULL, (char *const[]){ "echo", "ran", NULL }, NULL, NULL,
			       "SANDPIT_KERNEL=legacy", &r));
	EXPECT_EQ(125, r.status);
	EXPECT_EQ(0, (int)r.len);
	free(r.out);
}

/* --policy=FILE: the file's grants apply; a bad file is sandpit's error */
TEST_F(run, policy_file)
{
	char good[160], bad[160], text[PATH_MAX + 256], opt[200];
	struct result r;
	snprintf(good, sizeof good, "%s/good.policy", self->dir);
	snprintf(bad, sizeof bad, "%s/bad.policy", self->dir);
	snprintf(text, sizeof text, "@include %s/../policy/default.policy\npath read %s\n", bindir,
		 self->dir);
	write_file(_metadata, good, text, 0644);
	write_file(_metadata, bad, "openat: allow\n", 0644);
	snprintf(opt, sizeof opt, "--policy=%s", good);
	const char *with_good[] = { opt, NULL };
	ASSERT_EQ(0, sandboxed(variant->mode, with_good, (char *const[]){ "cat", self->secret, NULL },
			       NULL, NULL, NULL, &r));
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(7, (int)r.len); /* "SECRET\n" */
	free(r.out);
	/* without the grant the same read is refused */
	ASSERT_EQ(0, sandboxed(variant->mode, NULL, (char *const[]){ "cat", self->secret, NULL }, NULL,
			       NULL, NULL, &r));
	EXPECT_NE(0, r.status);
	EXPECT_EQ(0, (int)r.len);
	free(r.out);
	snprintf(opt, sizeof opt, "--policy=%s", bad);
	const char *with_bad[] = { opt, NULL };
	ASSERT_EQ(0, sandboxed(variant->mode, with_bad, (char *const[]){ "true", NULL }, NULL, NULL,
			       NULL, &r));
	EXPECT_EQ(125, r.status);
	free(r.out);
}

/* --log=denials: a strace-like line per refusal, the path escaped */
TEST_F(run, log_denials)
{
	char target[160], want[512], *line;
	const char *log[] = { "--log=denials", NULL };
	struct result r;
	snprintf(target, sizeof target, "%s/new\x1b[0m", self->dir);
	want_stderr = 1;
	ASSERT_EQ(0, sandboxed(variant->mode, log, (char *const[]){ "cat", self->secret, NULL }, NULL,
			       NULL, NULL, &r));
	r.out = realloc(r.out, r.len + 1);
	r.out[r.len] = 0;
	snprintf(want, sizeof want,
		 "sandpit: denied openat(AT_FDCWD, \"%s\", O_RDONLY, 0) = -EACCES (policy: no read grant)\n",
		 self->secret);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("stderr: %s", r.out);
	free(r.out);
	ASSERT_EQ(0, sandboxed(variant->mode, log,
			       (char *const[]){ "/bin/sh", "-c", "echo > \"$0\"", target, NULL }, NULL,
			       NULL, NULL, &r));
	r.out = realloc(r.out, r.len + 1);
	r.out[r.len] = 0;
	line = strstr(r.out, "sandpit: denied openat(AT_FDCWD, \"");
	EXPECT_NE(NULL, line) TH_LOG("stderr: %s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "new\\x1b[0m\", O_WRONLY|O_CREAT|O_TRUNC, 0666) = -EACCES "
				      "(policy: no write grant)"))
		TH_LOG("stderr: %s", r.out);
	/* sandpit's lines carry no raw escape (sh's own message may) */
	for (char *l = r.out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t n = strcspn(l, "\n");
		if (!strncmp(l, "sandpit:", 8))
			EXPECT_EQ(NULL, memchr(l, 0x1b, n));
	}
	free(r.out);
	/* refused by number (the entry, or the filter's trap in filter mode) */
	char prog[PATH_MAX + 32];
	snprintf(prog, sizeof prog, "%s/selftests/attack_dyn", bindir);
	ASSERT_EQ(0, sandboxed(variant->mode, log, (char *const[]){ prog, "socket", NULL }, NULL, NULL,
			       NULL, &r));
	r.out = realloc(r.out, r.len + 1);
	r.out[r.len] = 0;
	EXPECT_NE(NULL, strstr(r.out, "sandpit: denied socket(0x2, 0x1, 0x0")) TH_LOG("stderr: %s", r.out);
	free(r.out);
	want_stderr = 0;
}

/* As root: /etc/shadow refused by the default policy's deny, even with
 * --allow-read=/etc, and logged as such; no capability left, uid kept */
TEST_F(run, root_reads_no_shadow_and_holds_no_capability)
{
	const char *opts[] = { "--log=denials", "--allow-read=/etc", NULL };
	struct result r;

	if (geteuid() != 0 || access("/etc/shadow", R_OK) != 0)
		SKIP(return, "not root: /etc/shadow is unreadable natively, so a refusal would "
			     "prove nothing");
	want_stderr = 1;
	ASSERT_EQ(0, sandboxed(variant->mode, opts, (char *const[]){ "cat", "/etc/shadow", NULL },
			       NULL, NULL, NULL, &r));
	r.out = realloc(r.out, r.len + 1);
	r.out[r.len] = 0;
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.out, "cat: /etc/shadow: Permission denied\n")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "sandpit: denied openat(AT_FDCWD, \"/etc/shadow\", O_RDONLY, "
				      "0) = -EACCES (policy: path deny /etc/shadow)\n"))
		TH_LOG("%s", r.out);
	free(r.out);
	want_stderr = 0;
	ASSERT_EQ(0, sandboxed(variant->mode, NULL,
			       (char *const[]){ "grep", "-E", "^(Uid|Cap)", "/proc/self/status", NULL },
			       NULL, NULL, NULL, &r));
	r.out = realloc(r.out, r.len + 1);
	r.out[r.len] = 0;
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("Uid:\t0\t0\t0\t0\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n"
		     "CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n"
		     "CapAmb:\t0000000000000000\n",
		     r.out);
	free(r.out);
}

/* Up front sandpit patches the program, its interpreter and the vDSO, and
 * none of its own libraries (which never run again in the process), not
 * even the one the kernel happened to map right after the vDSO. */
TEST_F(run, only_the_program_its_interpreter_and_the_vdso_are_patched_up_front)
{
	static const struct {
		const char *prog;
		int modules;
	} cases[] = { { "/bin/true", 3 }, { "/bin/busybox", 2 } };
	struct result r;
	char want[64];
	want_stderr = 1;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = { (char *)cases[i].prog, "true", NULL };
		ASSERT_EQ(0, sandboxed(variant->mode, NULL, argv, NULL, NULL, "SANDPIT_DEBUG=1", &r));
		r.out = realloc(r.out, r.len + 1);
		r.out[r.len] = 0;
		EXPECT_EQ(0, r.status);
		snprintf(want, sizeof want, " sites in %d modules in ", cases[i].modules);
		EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("%s: %s", cases[i].prog, r.out);
		free(r.out);
	}
	want_stderr = 0;
}

/* a file that is executable but not an ELF program and not a script */
TEST_F(run, not_an_elf_program)
{
	char path[160];
	struct result r;
	snprintf(path, sizeof path, "%s/notelf", self->dir);
	write_file(_metadata, path, "just text\n", 0755);
	ASSERT_EQ(0, sandboxed(variant->mode, NULL, (char *const[]){ path, NULL }, NULL, NULL, NULL, &r));
	EXPECT_EQ(126, r.status);
	free(r.out);
}

/* ---- attacks from inside an unmodified program */

static void attack(struct __test_metadata *_metadata, const FIXTURE_DATA(run) *self, const char *mode,
		   const char *name, const char *arg)
{
	static const char *const kinds[] = { "attack_dyn", "attack_static" };
	for (int k = 0; k < 2; k++) {
		char prog[PATH_MAX + 32];
		struct result r;
		snprintf(prog, sizeof prog, "%s/selftests/%s", bindir, kinds[k]);
		char *const argv[] = { prog, (char *)name, (char *)arg, NULL };
		ASSERT_EQ(0, sandboxed(mode, NULL, argv, NULL, NULL, NULL, &r));
		/* 0: refused; killed: refused, fail closed; 1: it got through */
		EXPECT_TRUE(r.status == 0 || r.status > 128) TH_LOG("%s %s: status %d", kinds[k], name, r.status);
		free(r.out);
	}
}

TEST_F(run, attack_raw_syscall_write)
{
	char target[160];
	snprintf(target, sizeof target, "%s/raw-written", self->dir);
	attack(_metadata, self, variant->mode, "raw-write", target);
	EXPECT_NE(0, access(target, F_OK));
}
TEST_F(run, attack_libc_write_outside_grants)
{
	char target[160];
	snprintf(target, sizeof target, "%s/libc-written", self->dir);
	attack(_metadata, self, variant->mode, "libc-write", target);
	EXPECT_NE(0, access(target, F_OK));
}
TEST_F(run, attack_int80_and_x32)
{
	attack(_metadata, self, variant->mode, "int80", NULL);
	attack(_metadata, self, variant->mode, "x32", NULL);
}
TEST_F(run, attack_execve_socket_fork)
{
	attack(_metadata, self, variant->mode, "execve", NULL);
	attack(_metadata, self, variant->mode, "socket", NULL);
	attack(_metadata, self, variant->mode, "fork", NULL);
}
TEST_F(run, attack_signal_to_another_process) { attack(_metadata, self, variant->mode, "kill-parent", NULL); }
TEST_F(run, attack_sandpit_memory) { attack(_metadata, self, variant->mode, "secure-memory", NULL); }
TEST_F(run, attack_raw_clone_and_clone3)
{
	attack(_metadata, self, variant->mode, "raw-clone", NULL);
	attack(_metadata, self, variant->mode, "clone3", NULL);
}
TEST_F(run, attack_sandpit_descriptors) { attack(_metadata, self, variant->mode, "sandpit-fds", NULL); }
/* the secret is outside every grant (the test grants nothing here) */
TEST_F(run, attack_toctou_path_flip) { attack(_metadata, self, variant->mode, "toctou", self->secret); }

TEST_HARNESS_MAIN
