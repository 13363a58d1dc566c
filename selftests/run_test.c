/* `sandpit run` on unmodified programs: each program's output
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "selftests/build_dir.h"
#include "selftests/run_util.h"
#include "selftests/sandbox_util.h"
#include "selftests/kernel_probe.h"
#include "compat/compat.h"
#include "user/patch/plan_file.h"


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
	SKIP_FILTER_VARIANT_WITHOUT_FILTER(variant->mode);
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

/* A write grant is a working directory: the same commands, one
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
/* JIT compilers: V8 (its code in writable and executable memory, a hot
 * loop to make it compile) and PCRE2's JIT under git grep -P */
TEST_F(run, jit_node_and_pcre2)
{
	if (access("/usr/bin/node", X_OK) || access("/usr/bin/git", X_OK))
		SKIP(return, "nodejs or git is not installed (make deps installs both)");
	SAME(NULL, NULL, "node", "-e",
	     "let s = 0; for (let i = 0; i < 3e6; i++) s += i % 7;"
	     "console.log(s, [3, 1, 2].sort(), JSON.stringify({ a: [1, 2] }), /b+c/.test('abbc'))");
	SAME(NULL, self->dir, "git", "grep", "--no-index", "-P", "-c", "al\\w+a\\b", "small.txt");
}
TEST_F(run, exit_status_and_signal)
{
	SAME(NULL, NULL, "sh", "-c", "exit 7");
	SAME(NULL, NULL, "sh", "-c", "kill -TERM $$");
}

/* A program reading where the kernel shows a process itself: its argv
 * (/proc/self/cmdline), its name (comm, and stat's second field), its
 * environment and auxiliary vector (the values it got on its stack), run
 * as a program and as a #! script.  Natively and sandboxed the same; where
 * the kernel cannot be told (no PR_SET_MM_MAP), the name is the program's
 * and the argv sandpit's, as docs/LIMITS.md says. */
#define SEES_ITSELF                                                                           \
	"import ctypes, os, sys\n"                                                            \
	"def rd(p): return open(p, 'rb').read()\n"                                            \
	"print(rd('/proc/self/cmdline'))\n"                                                   \
	"print(rd('/proc/self/comm'), rd('/proc/self/stat').split(b') ')[0].split(b' (')[1])\n" \
	"env = b''.join(k + b'=' + v + b'\\0' for k, v in os.environb.items())\n"            \
	"print('environ', rd('/proc/self/environ') == env)\n"                                 \
	"aux = rd('/proc/self/auxv'); getauxval = ctypes.CDLL(None).getauxval\n"               \
	"getauxval.restype = ctypes.c_ulong\n"                                                \
	"pairs = [int.from_bytes(aux[i:i + 8], 'little') for i in range(0, len(aux), 8)]\n"   \
	"kv = dict(zip(pairs[0::2], pairs[1::2]))\n"                                          \
	"print('auxv', [(t, kv.get(t) == getauxval(t)) for t in (3, 5, 9, 25, 31)])\n"        \
	"print(ctypes.string_at(kv.get(31, 0)) if 31 in kv else None)\n"

TEST_F(run, the_program_sees_itself_in_proc_self)
{
	char script[160];
	snprintf(script, sizeof script, "%s/sees_itself.py", self->dir);
	write_file(_metadata, script, "#!/usr/bin/python3\n" SEES_ITSELF, 0755);
	char *const as_program[] = { "/usr/bin/python3", script, "an arg", NULL };
	char *const as_script[] = { script, "an arg", NULL };
	if (compat_has(COMPAT_MM_MAP)) {
		SAME(NULL, NULL, "/usr/bin/python3", script, "an arg");
		SAME(NULL, NULL, script, "an arg");
	} else {
		TH_LOG("no PR_SET_MM_MAP on this kernel: the fallback only");
	}
	/* without it: the name still the program's (comm: python3, or the
	 * script's), the argv sandpit's */
	char forced[256];
	const char *k = getenv("SANDPIT_KERNEL");
	snprintf(forced, sizeof forced, "SANDPIT_KERNEL=%s%sno-mm-map", k && *k ? k : "",
		 k && *k ? "," : "");
	const char *extra[] = { self->grant, NULL };
	char *const *const runs[] = { as_program, as_script };
	const char *const names[] = { "b'python3\\n' b'python3'", "b'sees_itself.py\\n' b'sees_itself.py'" };
	for (int i = 0; i < 2; i++) {
		struct result s;
		ASSERT_EQ(0, sandboxed(variant->mode, extra, runs[i], NULL, NULL, forced, &s));
		EXPECT_EQ(0, s.status);
		char *out = result_text(&s);
		EXPECT_NE(NULL, strstr(out, "sandpit\\x00run\\x00")) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, names[i])) TH_LOG("%s", out);
		free(s.out);
	}
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

/* The review's attack on a write grant, across two runs.  In the first,
 * the program under --allow-write=G tries to put a symlink where G is: it
 * can neither remove G, nor rename it away, nor make a link over it, and G
 * stays the directory it was.  Where G is a symlink all the same (made by
 * hand here, as an older sandpit let the program do), the next run given
 * --allow-write=G (or a policy file's `path write G`) refuses to start,
 * sandpit's status and one line naming where G leads, and nothing is
 * written there.  --allow-read through a link runs, with one line saying
 * where it leads. */
TEST_F(run, a_write_grant_through_a_symlink_is_refused_and_nothing_written)
{
	char g[160], real[160], opt[PATH_MAX], py[2048], sh[400], pol[200], text[PATH_MAX + 256];
	struct stat before, after;
	struct result r;
	snprintf(g, sizeof g, "%s/g", self->dir);
	snprintf(real, sizeof real, "%s/real", self->dir);
	ASSERT_EQ(0, mkdir(g, 0755));
	ASSERT_EQ(0, mkdir(real, 0755));
	snprintf(text, sizeof text, "%s/data", real);
	write_file(_metadata, text, "hello\n", 0644);
	ASSERT_EQ(0, lstat(g, &before));

	/* the first run: each attempt prints its errno (0: done) */
	snprintf(opt, sizeof opt, "--allow-write=%s", g);
	snprintf(py, sizeof py,
		 "import os\n"
		 "def t(f, *a):\n"
		 "    try:\n"
		 "        f(*a)\n"
		 "        print(0)\n"
		 "    except OSError as e:\n"
		 "        print(e.errno)\n"
		 "t(os.rmdir, '%s')\n"
		 "t(os.symlink, '%s', '%s')\n"
		 "t(os.rename, '%s', '%s/away')\n"
		 "t(os.rename, '%s', '%s.away')\n",
		 g, real, g, g, g, g, g);
	const char *w[] = { opt, NULL };
	ASSERT_EQ(0, sandboxed(variant->mode, w, (char *const[]){ "/usr/bin/python3", "-c", py, NULL },
			       NULL, NULL, NULL, &r));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("13\n17\n13\n13\n", result_text(&r)); /* EACCES, EEXIST, EACCES, EACCES */
	free(r.out);
	/* the log says why no grant would help */
	const char *wl[] = { opt, "--log=denials", NULL };
	want_stderr = 1;
	ASSERT_EQ(0, sandboxed(variant->mode, wl, (char *const[]){ "/usr/bin/python3", "-c", py, NULL },
			       NULL, NULL, NULL, &r));
	EXPECT_EQ(0, r.status);
	result_text(&r);
	snprintf(text, sizeof text, "rmdir(\"%s\") = -EACCES", g);
	char *line = strstr(r.out, text), *eol = line ? strchr(line, '\n') : NULL;
	ASSERT_NE(NULL, eol) TH_LOG("%s", r.out);
	*eol = '\0';
	EXPECT_NE(NULL, strstr(line, ": a grant's root, or a directory above one")) TH_LOG("%s", line);
	EXPECT_EQ(NULL, strstr(line, "allow with")) TH_LOG("%s", line);
	free(r.out);
	want_stderr = 0;
	ASSERT_EQ(0, lstat(g, &after));
	EXPECT_TRUE(S_ISDIR(after.st_mode));
	EXPECT_EQ(before.st_ino, after.st_ino);

	/* the next run, G a link to real */
	snprintf(text, sizeof text, "%s.old", g);
	ASSERT_EQ(0, rename(g, text));
	ASSERT_EQ(0, symlink(real, g));
	snprintf(sh, sizeof sh, "echo x > %s/f", g);
	char *write_f[] = { "sh", "-c", sh, NULL };
	want_stderr = 1;
	ASSERT_EQ(0, sandboxed(variant->mode, w, write_f, NULL, NULL, NULL, &r));
	EXPECT_EQ(125, r.status);
	result_text(&r);
	EXPECT_NE(NULL, strstr(r.out, real)) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "symbolic link")) TH_LOG("%s", r.out);
	EXPECT_EQ(r.out + r.len - 1, strchr(r.out, '\n')) TH_LOG("one line: %s", r.out);
	free(r.out);
	snprintf(text, sizeof text, "%s/f", real);
	EXPECT_EQ(-1, access(text, F_OK));

	/* the same grant from a policy file */
	snprintf(pol, sizeof pol, "%s/w.policy", self->dir);
	snprintf(text, sizeof text, "@include %s/../policy/default.policy\npath write %s\n", bindir, g);
	write_file(_metadata, pol, text, 0644);
	snprintf(opt, sizeof opt, "--policy=%s", pol);
	ASSERT_EQ(0, sandboxed(variant->mode, w, write_f, NULL, NULL, NULL, &r));
	EXPECT_EQ(125, r.status);
	result_text(&r);
	EXPECT_NE(NULL, strstr(r.out, real)) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "w.policy:2")) TH_LOG("%s", r.out);
	free(r.out);
	snprintf(text, sizeof text, "%s/f", real);
	EXPECT_EQ(-1, access(text, F_OK));

	/* --allow-read through the link: said, and run */
	snprintf(opt, sizeof opt, "--allow-read=%s", g);
	snprintf(text, sizeof text, "%s/data", g);
	ASSERT_EQ(0, sandboxed(variant->mode, w, (char *const[]){ "cat", text, NULL }, NULL, NULL,
			       NULL, &r));
	EXPECT_EQ(0, r.status);
	result_text(&r);
	snprintf(text, sizeof text, "sandpit: --allow-read=%s goes through a symbolic link; it "
				    "resolves to %s, which is what it grants\n", g, real);
	EXPECT_STREQ(text, r.out);
	free(r.out);
	want_stderr = 0;
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

/* the line of the built-in policy that names `call` (its text is in the library) */
extern const char sandpit_default_policy[];
extern const uint64_t sandpit_default_policy_len;

static int default_line(const char *call)
{
	const char *p = sandpit_default_policy, *end = p + sandpit_default_policy_len;
	size_t n = strlen(call);
	for (int line = 1; p < end; line++) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		if (!e)
			e = end;
		if ((size_t)(e - p) > n && !strncmp(p, call, n) && p[n] == ':')
			return line;
		p = e + 1;
	}
	return -1;
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
	result_text(&r);
	snprintf(want, sizeof want,
		 "sandpit: denied openat(AT_FDCWD, \"%s\", O_RDONLY, 0) = -EACCES; by "
		 "policy/default.policy:%d: no read grant;",
		 self->secret, default_line("openat"));
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("stderr: %s", r.out);
	free(r.out);
	ASSERT_EQ(0, sandboxed(variant->mode, log,
			       (char *const[]){ "/bin/sh", "-c", "echo > \"$0\"", target, NULL }, NULL,
			       NULL, NULL, &r));
	result_text(&r);
	line = strstr(r.out, "sandpit: denied openat(AT_FDCWD, \"");
	EXPECT_NE(NULL, line) TH_LOG("stderr: %s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "new\\u001b[0m\", O_WRONLY|O_CREAT|O_TRUNC, 0666) = -EACCES; "
				      "by policy/default.policy:"))
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
	result_text(&r);
	EXPECT_NE(NULL, strstr(r.out, "sandpit: denied socket(2, 1, 0) = -EAFNOSUPPORT")) TH_LOG("stderr: %s", r.out);
	free(r.out);
	want_stderr = 0;
}

/* the built-in policy with one call's line replaced by `line`, in path */
static void default_but(struct __test_metadata *_metadata, const char *path, const char *call,
			const char *line)
{
	size_t n = (size_t)sandpit_default_policy_len, k = strlen(call);
	char *text = malloc(n + strlen(line) + 2), *o = text;
	const char *p = sandpit_default_policy, *end = p + n;
	ASSERT_NE(NULL, text);
	while (p < end) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		e = e ? e + 1 : end;
		if (!strncmp(p, call, k) && p[k] == ':')
			o += sprintf(o, "%s\n", line);
		else
			o = (char *)memcpy(o, p, (size_t)(e - p)) + (e - p);
		p = e;
	}
	*o = 0;
	write_file(_metadata, path, text, 0644);
	free(text);
}

/* `write: arg0 == 1` against a write to fd 2 made through a syscall hidden
 * inside another instruction, which the patcher leaves where it stands.
 * Under the default policy the hidden write reaches the kernel in both
 * modes (the attack works).  Under the rule, strict mode (asked for, or
 * auto's choice on a legacy kernel) would let it through the same way, so
 * sandpit refuses to start (125) and names the line; filter mode's filter
 * refuses it with the rule's EPERM. */
TEST_F(run, write_rule_refused_for_strict_mode_enforced_in_filter_mode)
{
	char pol[160], opt[200], prog[PATH_MAX + 32], want[512];
	const char *const progs[] = { "attack_dyn", "attack_static" };
	struct result r;
	snprintf(pol, sizeof pol, "%s/w.policy", self->dir);
	default_but(_metadata, pol, "write", "write: arg0 == 1");
	snprintf(opt, sizeof opt, "--policy=%s", pol);
	const char *with_rule[] = { opt, NULL };
	snprintf(want, sizeof want, "sandpit: %s:%d: write: strict mode cannot enforce a rule on its "
		 "arguments: seccomp strict mode lets the program make write itself; allow it, or use "
		 "filter mode", pol, default_line("write"));
	want_stderr = 1;
	for (int i = 0; i < 2; i++) {
		snprintf(prog, sizeof prog, "%s/selftests/%s", bindir, progs[i]);
		ASSERT_EQ(0, sandboxed(variant->mode, NULL, (char *const[]){ prog, "hidden-write", NULL },
				       NULL, NULL, NULL, &r));
		EXPECT_EQ(1, r.status) TH_LOG("%s, default policy: %s", progs[i], result_text(&r));
		EXPECT_NE(NULL, strstr(result_text(&r), "hidden write\n"));
		free(r.out);
		ASSERT_EQ(0, sandboxed(variant->mode, with_rule,
				       (char *const[]){ prog, "hidden-write", NULL }, NULL, NULL, NULL, &r));
		result_text(&r);
		if (!strcmp(variant->mode, "strict")) {
			EXPECT_EQ(125, r.status);
			EXPECT_EQ(0, strncmp(r.out, want, strlen(want))) TH_LOG("%s", r.out);
		} else {
			EXPECT_EQ(0, r.status) TH_LOG("%s: %s", progs[i], r.out);
		}
		EXPECT_EQ(NULL, strstr(r.out, "hidden write"));
		free(r.out);
	}
	/* auto on a kernel without seccomp-bpf picks strict, and says so */
	ASSERT_EQ(0, sandboxed("auto", with_rule, (char *const[]){ prog, "hidden-write", NULL }, NULL,
			       NULL, "SANDPIT_KERNEL=legacy", &r));
	result_text(&r);
	EXPECT_EQ(125, r.status);
	EXPECT_EQ(0, strncmp(r.out, want, strlen(want))) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "filter mode (auto mode chose strict: SANDPIT_KERNEL has "
				      "turned seccomp-bpf off)\n")) TH_LOG("%s", r.out);
	EXPECT_EQ(NULL, strstr(r.out, "hidden write"));
	free(r.out);
	want_stderr = 0;
}

/* ---- refusals explained ---- */

/* the line of `text` that contains `what`, as a string of its own */
static char *line_with(const char *text, const char *what, char *out, size_t n)
{
	const char *at = strstr(text, what);
	if (!at)
		return NULL;
	while (at > text && at[-1] != '\n')
		at--;
	snprintf(out, n, "%.*s", (int)strcspn(at, "\n"), at);
	return out;
}

/* a JSON line's field: a string (unescaped) or the text of a number */
static int json_field(const char *line, const char *key, char *out, size_t n)
{
	char k[64];
	snprintf(k, sizeof k, "\"%s\":", key);
	const char *p = strstr(line, k);
	size_t o = 0;
	if (!p)
		return -1;
	p += strlen(k);
	if (*p != '"') {
		while (*p && *p != ',' && *p != '}' && o + 1 < n)
			out[o++] = *p++;
		out[o] = 0;
		return 0;
	}
	for (p++; *p && *p != '"' && o + 1 < n; p++) {
		if (*p == '\\' && p[1] == 'u') {
			unsigned c;
			if (sscanf(p + 2, "%4x", &c) != 1)
				return -1;
			out[o++] = (char)c;
			p += 5;
		} else {
			if (*p == '\\')
				p++;
			out[o++] = *p;
		}
	}
	out[o] = 0;
	return *p == '"' ? 0 : -1;
}

static void run_refusals(struct __test_metadata *_metadata, const char *mode, const char *secret,
			 const char *const extra[], struct result *r)
{
	char prog[PATH_MAX + 32];
	snprintf(prog, sizeof prog, "%s/selftests/attack_dyn", bindir);
	want_stderr = 1;
	ASSERT_EQ(0, sandboxed(mode, extra, (char *const[]){ prog, "refusals", (char *)secret, NULL },
			       NULL, NULL, NULL, r));
	want_stderr = 0;
	result_text(r);
	/* every call was made and refused with its own errno (exit 3) */
	EXPECT_EQ(3, r->status) TH_LOG("stderr: %s", r->out);
	EXPECT_NE(NULL, strstr(r->out, "attack: open -1 EACCES\n"));
	EXPECT_NE(NULL, strstr(r->out, "attack: socket -1 EAFNOSUPPORT\n"));
	EXPECT_NE(NULL, strstr(r->out, "attack: socketpair -1 EACCES\n"));
	EXPECT_NE(NULL, strstr(r->out, "attack: kill -1 EPERM\n"));
	EXPECT_NE(NULL, strstr(r->out, "attack: fork -1 EPERM\n"));
}

/* --log=denials: each refusal of a fixed program says the call as checked,
 * the errno, what decided (the default policy's line, or sandpit's guard),
 * the caller in libc with its symbol, and the grant that would allow it */
TEST_F(run, denials_explained_field_by_field_in_text)
{
	const char *log[] = { "--log=denials", NULL };
	struct result r;
	char line[1024], want[1024];
	run_refusals(_metadata, variant->mode, self->secret, log, &r);

	ASSERT_NE(NULL, line_with(r.out, "sandpit: denied openat(", line, sizeof line))
		TH_LOG("stderr: %s", r.out);
	snprintf(want, sizeof want,
		 "sandpit: denied openat(AT_FDCWD, \"%s\", O_RDONLY, 0) = -EACCES; by "
		 "policy/default.policy:%d: no read grant; from libc.so.6+0x",
		 self->secret, default_line("openat"));
	EXPECT_EQ(0, strncmp(line, want, strlen(want))) TH_LOG("%s\nwant %s", line, want);
	snprintf(want, sizeof want, "); allow with --allow-read=%s", self->secret);
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, "open")) TH_LOG("%s", line);

	ASSERT_NE(NULL, line_with(r.out, "sandpit: denied socket(", line, sizeof line));
	snprintf(want, sizeof want,
		 "sandpit: denied socket(2, 1, 0) = -EAFNOSUPPORT; by policy/default.policy:%d; from "
		 "libc.so.6+0x", default_line("socket"));
	EXPECT_EQ(0, strncmp(line, want, strlen(want))) TH_LOG("%s\nwant %s", line, want);
	EXPECT_NE(NULL, strstr(line, "socket+0x")) TH_LOG("%s", line);
	EXPECT_EQ(NULL, strstr(line, "allow with")) TH_LOG("%s", line);

	ASSERT_NE(NULL, line_with(r.out, "sandpit: denied socketpair(", line, sizeof line));
	snprintf(want, sizeof want, ") = -EACCES; by policy/default.policy:%d: argument rule; from "
				    "libc.so.6+0x", default_line("socketpair"));
	EXPECT_EQ(0, strncmp(line, "sandpit: denied socketpair(2, 1, 0, 0x", 38)) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("%s\nwant %s", line, want);
	EXPECT_NE(NULL, strstr(line, "(socketpair+0x")) TH_LOG("%s", line);

	ASSERT_NE(NULL, line_with(r.out, "sandpit: denied kill(", line, sizeof line));
	EXPECT_NE(NULL, strstr(line, ", 18) = -EPERM; by guard: self_pid; from libc.so.6+0x"))
		TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, "(kill+0x")) TH_LOG("%s", line);

	ASSERT_NE(NULL, line_with(r.out, "sandpit: denied clone(", line, sizeof line));
	snprintf(want, sizeof want, ") = -EPERM; by policy/default.policy:%d: only a thread of this "
				    "process; from libc.so.6+0x", default_line("clone"));
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("%s\nwant %s", line, want);
	EXPECT_NE(NULL, strstr(line, "ork+0x")) TH_LOG("%s", line);
	free(r.out);
}

TEST_F(run, denials_explained_field_by_field_in_json)
{
	const char *log[] = { "--log=denials", "--log-format=json", NULL };
	struct result r;
	char line[2048], v[1024];
	run_refusals(_metadata, variant->mode, self->secret, log, &r);
	static const struct {
		const char *call, *err, *result, *reason, *rule, *symbol;
		int guard, path;
	} want[] = {
		{ "openat", "EACCES", "-13", "no read grant", "-1", "open", 0, 1 },
		{ "socket", "EAFNOSUPPORT", "-97", "", "-1", "socket+0x", 0, 0 },
		{ "socketpair", "EACCES", "-13", "argument rule", "0", "socketpair+0x", 0, 0 },
		{ "kill", "EPERM", "-1", "argument rule", "0", "kill+0x", 1, 0 },
		{ "clone", "EPERM", "-1", "only a thread of this process", "-1", "ork+0x", 0, 0 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char key[64], decided[64];
		snprintf(key, sizeof key, "\"call\":\"%s\"", want[i].call);
		ASSERT_NE(NULL, line_with(r.out, key, line, sizeof line)) TH_LOG("stderr: %s", r.out);
		EXPECT_EQ('{', line[0]);
		EXPECT_EQ(0, json_field(line, "sandpit", v, sizeof v));
		EXPECT_STREQ("denied", v);
		EXPECT_EQ(0, json_field(line, "errno", v, sizeof v));
		EXPECT_STREQ(want[i].err, v);
		EXPECT_EQ(0, json_field(line, "result", v, sizeof v));
		EXPECT_STREQ(want[i].result, v);
		EXPECT_EQ(0, json_field(line, "reason", v, sizeof v));
		EXPECT_STREQ(want[i].reason, v);
		EXPECT_EQ(0, json_field(line, "rule", v, sizeof v));
		EXPECT_STREQ(want[i].rule, v);
		EXPECT_EQ(0, json_field(line, "builtin", v, sizeof v));
		EXPECT_STREQ("", v);
		if (want[i].guard)
			snprintf(decided, sizeof decided, "guard: self_pid");
		else
			snprintf(decided, sizeof decided, "policy/default.policy:%d",
				 default_line(want[i].call));
		EXPECT_EQ(0, json_field(line, "decided", v, sizeof v));
		EXPECT_STREQ(decided, v);
		EXPECT_EQ(0, json_field(line, "module", v, sizeof v));
		EXPECT_NE(NULL, strstr(v, "/libc.so.6")) TH_LOG("%s", line);
		EXPECT_EQ(0, json_field(line, "offset", v, sizeof v));
		EXPECT_EQ(0, strncmp(v, "0x", 2)) TH_LOG("%s", line);
		EXPECT_EQ(0, json_field(line, "symbol", v, sizeof v));
		EXPECT_NE(NULL, strstr(v, want[i].symbol)) TH_LOG("%s", line);
		EXPECT_EQ(0, json_field(line, "path", v, sizeof v));
		EXPECT_STREQ(want[i].path ? self->secret : "", v);
		char allow[200] = "";
		if (want[i].path)
			snprintf(allow, sizeof allow, "--allow-read=%s", self->secret);
		EXPECT_EQ(0, json_field(line, "allow", v, sizeof v));
		EXPECT_STREQ(allow, v);
	}
	/* the path as B checked it, in the arguments */
	ASSERT_NE(NULL, line_with(r.out, "\"call\":\"openat\"", line, sizeof line));
	char args[400];
	snprintf(args, sizeof args, "\"args\":[\"AT_FDCWD\",\"\\\"%s\\\"\",\"O_RDONLY\",\"0\"]",
		 self->secret);
	EXPECT_NE(NULL, strstr(line, args)) TH_LOG("%s", line);
	free(r.out);
}

/* how many times needle occurs in hay */
static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Without --log, a program that fails after refusals gets one closing
 * line: how many (as many as --log=denials explains), the first, the last,
 * what refused them and the grant that would allow the last. */
TEST_F(run, closing_line_counts_the_refusals_and_names_the_grant)
{
	const char *log[] = { "--log=denials", NULL };
	struct result r;
	char *argv[] = { "cat", self->secret, NULL };
	want_stderr = 1;
	ASSERT_EQ(0, sandboxed(variant->mode, log, argv, NULL, NULL, NULL, &r));
	result_text(&r);
	int n = count(r.out, "sandpit: denied ");
	EXPECT_EQ(NULL, strstr(r.out, " refused; the first: "));
	free(r.out);
	ASSERT_LT(0, n);

	ASSERT_EQ(0, sandboxed(variant->mode, NULL, argv, NULL, NULL, NULL, &r));
	result_text(&r);
	EXPECT_EQ(1, r.status);
	char want[1024], line[2048];
	snprintf(want, sizeof want, "sandpit: %d call%s refused; the first: ", n, n == 1 ? "" : "s");
	ASSERT_NE(NULL, line_with(r.out, want, line, sizeof line)) TH_LOG("stderr: %s", r.out);
	EXPECT_EQ(0, strncmp(line, want, strlen(want))) TH_LOG("%s", line);
	snprintf(want, sizeof want,
		 "openat(AT_FDCWD, \"%s\", O_RDONLY, 0) = -EACCES, by policy/default.policy:%d; "
		 "--allow-read=%s would allow %s; --log=denials explains %s",
		 self->secret, default_line("openat"), self->secret, n == 1 ? "it" : "the last",
		 n == 1 ? "it" : "each");
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("%s\nwant %s", line, want);
	/* the closing line is the last line, and only sandpit's */
	ASSERT_LT(strlen(line), r.len);
	EXPECT_EQ('\n', r.out[r.len - 1]);
	EXPECT_EQ(0, strncmp(r.out + r.len - strlen(line) - 1, line, strlen(line))) TH_LOG("%s", r.out);
	EXPECT_EQ(NULL, strstr(r.out, "sandpit: denied "));
	free(r.out);

	/* past a thread's first refusals the entry only counts them: the
	 * count is still every one --log=denials explains */
	char prog[PATH_MAX + 32];
	char *many[] = { prog, "refuse-many", "300", NULL };
	snprintf(prog, sizeof prog, "%s/selftests/attack_dyn", bindir);
	ASSERT_EQ(0, sandboxed(variant->mode, log, many, NULL, NULL, NULL, &r));
	result_text(&r);
	EXPECT_NE(NULL, strstr(r.out, "attack: 300 of 300 refused\n")) TH_LOG("%s", r.out);
	n = count(r.out, "sandpit: denied ");
	free(r.out);
	ASSERT_LE(300, n);
	ASSERT_EQ(0, sandboxed(variant->mode, NULL, many, NULL, NULL, NULL, &r));
	result_text(&r);
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.out, "attack: 300 of 300 refused\n")) TH_LOG("%s", r.out);
	snprintf(want, sizeof want, "sandpit: %d calls refused; the first: ", n);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("%s\nwant %s", r.out, want);
	free(r.out);

	/* a program that succeeds gets none, whatever was refused on the way */
	ASSERT_EQ(0, sandboxed(variant->mode, NULL, (char *const[]){ "cat", "/etc/hostname", NULL },
			       NULL, NULL, NULL, &r));
	result_text(&r);
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(NULL, strstr(r.out, " refused;")) TH_LOG("%s", r.out);
	free(r.out);
	want_stderr = 0;
}

/* The closing line's grant is for the refusal it names: a read refused,
 * then a socket (which no path grant affects) refused last; the socket
 * gets no hint, neither the read's nor another's. */
TEST_F(run, closing_line_gives_no_grant_to_a_refusal_without_a_path)
{
	struct result r;
	char prog[PATH_MAX + 32], line[2048], want[512];
	char *argv[] = { prog, "path-then-socket", self->secret, NULL };
	snprintf(prog, sizeof prog, "%s/selftests/attack_dyn", bindir);
	want_stderr = 1;
	ASSERT_EQ(0, sandboxed(variant->mode, NULL, argv, NULL, NULL, NULL, &r));
	result_text(&r);
	EXPECT_EQ(1, r.status);
	/* both calls reached the sandbox and were refused as the policy says */
	EXPECT_NE(NULL, strstr(r.out, "attack: open EACCES, socket EAFNOSUPPORT\n")) TH_LOG("%s", r.out);
	TH_LOG("attempts: 2 (open %s, socket)", self->secret);
	ASSERT_NE(NULL, line_with(r.out, " refused; the first: ", line, sizeof line)) TH_LOG("%s", r.out);
	snprintf(want, sizeof want, "; the last: socket(");
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("%s", line);
	EXPECT_EQ(NULL, strstr(line, "would allow")) TH_LOG("%s", line);
	EXPECT_EQ(NULL, strstr(line, "--allow-")) TH_LOG("%s", line);
	free(r.out);

	/* --log=denials: the read's line has its grant, the socket's none */
	const char *log[] = { "--log=denials", NULL };
	ASSERT_EQ(0, sandboxed(variant->mode, log, argv, NULL, NULL, NULL, &r));
	result_text(&r);
	snprintf(want, sizeof want, "sandpit: denied openat(AT_FDCWD, \"%s\"", self->secret);
	ASSERT_NE(NULL, line_with(r.out, want, line, sizeof line)) TH_LOG("%s", r.out);
	snprintf(want, sizeof want, "; allow with --allow-read=%s", self->secret);
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("%s", line);
	ASSERT_NE(NULL, line_with(r.out, "sandpit: denied socket(", line, sizeof line)) TH_LOG("%s", r.out);
	EXPECT_EQ(NULL, strstr(line, "allow with")) TH_LOG("%s", line);
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
	result_text(&r);
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.out, "cat: /etc/shadow: Permission denied\n")) TH_LOG("%s", r.out);
	char want[256];
	snprintf(want, sizeof want,
		 "sandpit: denied openat(AT_FDCWD, \"/etc/shadow\", O_RDONLY, 0) = -EACCES; by "
		 "policy/default.policy:%d: path deny /etc/shadow; from ", default_line("openat"));
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("%s", r.out);
	EXPECT_EQ(NULL, strstr(r.out, "allow with")) TH_LOG("%s", r.out);
	free(r.out);
	want_stderr = 0;
	ASSERT_EQ(0, sandboxed(variant->mode, NULL,
			       (char *const[]){ "grep", "-E", "^(Uid|Cap)", "/proc/self/status", NULL },
			       NULL, NULL, NULL, &r));
	result_text(&r);
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
		result_text(&r);
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

/* B is started as P's sibling under `sandpit run` (one clone with
 * CLONE_PARENT), never as P's child: the program has no child at all to
 * wait for, and the call did reach the kernel (it answered ECHILD) */
TEST_F(run, trusted_process_is_no_child_the_program_can_wait_for)
{
	static const char *const kinds[] = { "attack_dyn", "attack_static" };
	for (int k = 0; k < 2; k++) {
		char prog[PATH_MAX + 32];
		struct result r;
		snprintf(prog, sizeof prog, "%s/selftests/%s", bindir, kinds[k]);
		char *const argv[] = { prog, "wait-any", NULL };
		ASSERT_EQ(0, sandboxed(variant->mode, NULL, argv, NULL, NULL, NULL, &r));
		result_text(&r);
		EXPECT_EQ(0, r.status) TH_LOG("%s: %s", kinds[k], r.out);
		EXPECT_NE(NULL, strstr(r.out, "attack: waitid -1 ECHILD\n")) TH_LOG("%s: %s", kinds[k], r.out);
		free(r.out);
	}
}
TEST_F(run, attack_sandpit_memory) { attack(_metadata, self, variant->mode, "secure-memory", NULL); }
TEST_F(run, attack_raw_clone_and_clone3)
{
	attack(_metadata, self, variant->mode, "raw-clone", NULL);
	attack(_metadata, self, variant->mode, "clone3", NULL);
}
/* every number /proc/self/fd lists that the program cannot reach (sandpit's)
 * closed and dup2-ed over: each refused with EBADF; the program reaches
 * exactly the descriptors it reaches natively; every other number below the
 * limit is the program's; threads (each a slot's eventfds) still work */
static void fds_seen(struct __test_metadata *_metadata, const char *mode, const char *prog, int counts[6])
{
	char *const argv[] = { (char *)prog, "sandpit-fds", NULL };
	struct result r;
	int made = mode ? sandboxed(mode, NULL, argv, NULL, NULL, NULL, &r) : capture(argv, NULL, NULL, NULL, &r);
	ASSERT_EQ(0, made);
	const char *line = strstr(result_text(&r), "sandpit-fds:");
	ASSERT_NE(NULL, line) TH_LOG("%s: status %d, said: %s", prog, r.status, r.out);
	ASSERT_EQ(6, sscanf(line, "sandpit-fds: listed %d reachable %d refused %d of %d taken %d threads %d/8",
			    &counts[0], &counts[1], &counts[2], &counts[3], &counts[4], &counts[5]));
	TH_LOG("%s %s: %s", mode ? mode : "native", prog, line);
	EXPECT_EQ(0, r.status);
	free(r.out);
}

TEST_F(run, attack_sandpit_descriptors)
{
	static const char *const kinds[] = { "attack_dyn", "attack_static" };
	for (int k = 0; k < 2; k++) {
		char prog[PATH_MAX + 32];
		int native[6], boxed[6];
		snprintf(prog, sizeof prog, "%s/selftests/%s", bindir, kinds[k]);
		fds_seen(_metadata, NULL, prog, native);
		fds_seen(_metadata, variant->mode, prog, boxed);
		EXPECT_EQ(native[1], boxed[1]); /* what the program reaches */
		EXPECT_GT(boxed[3], 0);		/* the attack reached sandpit's numbers */
		EXPECT_EQ(boxed[3], boxed[2]);
		EXPECT_GT(boxed[4], 100);
		EXPECT_EQ(8, boxed[5]);
	}
}
/* the secret is outside every grant (the test grants nothing here) */
TEST_F(run, attack_toctou_path_flip) { attack(_metadata, self, variant->mode, "toctou", self->secret); }

/* ---- sandpit's own calls under the smallest policies ----
 *
 * What sandpit needs for itself in U (the run-time patcher's reads of
 * /proc/self/maps, its wake-ups and sleeps on its eventfds, a thread's
 * exit, signal returns) works under any policy, and a call the policy
 * refuses or kills is named on stderr: the four smallest policies that run
 * a program, in both modes, with the program's exact output and status.
 * selftests/programs/tiny.c makes only the calls it is asked to. */

FIXTURE(tiny) {
	char dir[64], file[96], cat[96], rw[96], kill[96], wr[96], wr_sig[96], tiny[PATH_MAX + 32];
};
FIXTURE_VARIANT(tiny) {
	const char *mode;
};
FIXTURE_VARIANT_ADD(tiny, strict) { .mode = "strict" };
FIXTURE_VARIANT_ADD(tiny, filter) { .mode = "filter" };

/* minijail's examples/cat.policy, with what cat and ld.so of a current
 * glibc call besides (minijail's own file predates openat); no grant of
 * /proc/self, which the run-time patcher's maps used to need */
static const char cat_policy[] =
	"# cat, in minijail's format\n"
	"read: 1\nwrite: 1\nrt_sigreturn: 1\nexit_group: 1\n"
	"openat: 1\nclose: 1\nfstat: 1\nnewfstatat: 1\n"
	"# Enforce W^X.\n"
	"mmap: arg2 in ~PROT_EXEC || arg2 in ~PROT_WRITE\n"
	"mprotect: arg2 in ~PROT_EXEC || arg2 in ~PROT_WRITE\n"
	"munmap: 1\nbrk: 1\narch_prctl: 1\nfadvise64: 1\naccess: 1\npread64: 1\nlseek: 1\n"
	"execve: 1\nset_robust_list: 1\nrseq: 1\nprlimit64: 1\ngetrandom: 1\nfutex: 1\n"
	"copy_file_range: 1\n"
	"exit: 1\n";

FIXTURE_SETUP(tiny)
{
	SKIP_FILTER_VARIANT_WITHOUT_FILTER(variant->mode);
	strcpy(self->dir, "/tmp/sandpit-tiny-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->file, sizeof self->file, "%s/file.txt", self->dir);
	snprintf(self->cat, sizeof self->cat, "%s/cat.policy", self->dir);
	snprintf(self->rw, sizeof self->rw, "%s/rw.policy", self->dir);
	snprintf(self->kill, sizeof self->kill, "%s/kill.policy", self->dir);
	snprintf(self->wr, sizeof self->wr, "%s/wr.policy", self->dir);
	snprintf(self->wr_sig, sizeof self->wr_sig, "%s/wr_sig.policy", self->dir);
	snprintf(self->tiny, sizeof self->tiny, "%s/selftests/tiny", bindir);
	write_file(_metadata, self->file, "two lines\nof a file\n", 0644);
	write_file(_metadata, self->cat, cat_policy, 0644);
	/* what seccomp's strict mode allows (which strict mode needs named),
	 * and nothing sandpit needs more (docs/sandpit.policy.5) */
	write_file(_metadata, self->rw,
		   "read: allow\nwrite: allow\nexit: allow\nexit_group: allow\nrt_sigreturn: allow\n",
		   0644);
	write_file(_metadata, self->kill,
		   "default: kill\nread: allow\nwrite: allow\nexit_group: allow\nexit: allow\n"
		   "rt_sigreturn: allow\n",
		   0644);
	write_file(_metadata, self->wr, "read: allow\nwrite: arg0 == 1\nexit_group: allow\n", 0644);
	write_file(_metadata, self->wr_sig,
		   "read: allow\nwrite: arg0 == 1\nexit_group: allow\nrt_sigaction: process\n", 0644);
}

FIXTURE_TEARDOWN(tiny)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", self->dir);
	EXPECT_EQ(0, system(cmd));
}

/* `sandpit run --mode=MODE --policy=POLICY [grants] -- argv`: stdout, stderr
 * and the status */
struct both {
	char out[16384], err[16384];
	int status;
};

static void read_memfd(int fd, char *buf, size_t n)
{
	ssize_t got = pread(fd, buf, n - 1, 0);
	buf[got > 0 ? got : 0] = 0;
	close(fd);
}

static int run_both(const char *mode, const char *policy, const char *const grants[],
		    char *const argv[], struct both *b)
{
	char sandpit[PATH_MAX + 16], modeopt[32], secs[16], polopt[128];
	const char *extra[MAX_ARGS] = { polopt };
	char *av[2 * MAX_ARGS + 4];
	snprintf(polopt, sizeof polopt, "--policy=%s", policy);
	for (int i = 0; grants && grants[i] && i + 2 < MAX_ARGS; i++)
		extra[i + 1] = grants[i];
	sandpit_run_argv(av, sandpit, modeopt, secs, mode, 20, extra, argv);
	int fo = memfd_create("out", 0), fe = memfd_create("err", 0);
	if (fo < 0 || fe < 0)
		return -1;
	pid_t c = fork();
	if (c == 0) {
		int null = open("/dev/null", O_RDONLY);
		if (null < 0 || dup2(null, 0) < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
			_exit(99);
		execvp(av[0], av);
		_exit(98);
	}
	int st;
	if (c < 0 || waitpid(c, &st, 0) < 0)
		return -1;
	b->status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
	read_memfd(fo, b->out, sizeof b->out);
	read_memfd(fe, b->err, sizeof b->err);
	return 0;
}

#define TINY(what) ((char *const[]){ self->tiny, what, NULL })

/* cat of a file under a minijail policy: ld.so maps libc inside the
 * sandbox, and the run-time patcher reads /proc/self/maps on sandpit's own
 * descriptor, not through the policy (in strict mode an unpatched libc
 * would be killed at its first call); a file outside the grants is
 * refused, and the refusal named */
TEST_F(tiny, cat_a_file_under_a_minijail_policy)
{
	char dir_grant[96];
	snprintf(dir_grant, sizeof dir_grant, "--allow-read=%s", self->dir);
	const char *grants[] = { "--allow-read=/usr", "--allow-read=/lib", "--allow-read=/etc",
				 dir_grant, NULL };
	struct both b;
	ASSERT_EQ(0, run_both(variant->mode, self->cat, grants, (char *const[]){ "/bin/cat", self->file, NULL }, &b));
	EXPECT_EQ(0, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("two lines\nof a file\n", b.out);
	EXPECT_EQ(NULL, strstr(b.err, "killed")) TH_LOG("%s", b.err);

	/* the same file without its directory's grant */
	const char *no_dir[] = { "--allow-read=/usr", "--allow-read=/lib", "--allow-read=/etc", NULL };
	ASSERT_EQ(0, run_both(variant->mode, self->cat, no_dir, (char *const[]){ "/bin/cat", self->file, NULL }, &b));
	EXPECT_EQ(1, b.status);
	EXPECT_STREQ("", b.out);
	char want[512];
	snprintf(want, sizeof want, "the last: openat(AT_FDCWD, \"%s\", O_RDONLY, 0) = -EACCES, by "
		 "%s:6; --allow-read=%s would allow the last;", self->file, self->cat, self->file);
	EXPECT_NE(NULL, strstr(b.err, want)) TH_LOG("%s", b.err);
}

/* read, write and exit only: nothing else for sandpit either */
TEST_F(tiny, read_write_exit_only)
{
	struct both b;
	ASSERT_EQ(0, run_both(variant->mode, self->rw, NULL, TINY("hello"), &b));
	EXPECT_EQ(3, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("hello\n", b.out);
	EXPECT_STREQ("", b.err);
	ASSERT_EQ(0, run_both(variant->mode, self->rw, NULL, TINY("refused"), &b));
	EXPECT_EQ(4, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("before\nafter -38\n", b.out);
	EXPECT_NE(NULL, strstr(b.err, "sandpit: 1 call refused; the first: getppid() = -ENOSYS, by "
				      "not in the policy: default;"))
	TH_LOG("%s", b.err);
}

/* default: kill and the minimum: a call the default kills is named, with
 * its number and the line, before P dies; in filter mode also one the
 * patcher could not patch, which the filter traps (it used to kill it
 * with SIGSYS and no word).  In strict mode such a call is the kernel's
 * to kill, which names nothing: sandpit says a thread ended without exit. */
TEST_F(tiny, default_kill_and_the_minimum)
{
	struct both b;
	char want[256];
	snprintf(want, sizeof want, "sandpit: killed getppid(), system call 110; by not in the "
		 "policy: default (%s:1); from tiny+", self->kill);
	ASSERT_EQ(0, run_both(variant->mode, self->kill, NULL, TINY("hello"), &b));
	EXPECT_EQ(3, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("hello\n", b.out);
	EXPECT_STREQ("", b.err);
	ASSERT_EQ(0, run_both(variant->mode, self->kill, NULL, TINY("refused"), &b));
	EXPECT_EQ(128 + SIGKILL, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("before\n", b.out);
	EXPECT_NE(NULL, strstr(b.err, want)) TH_LOG("%s", b.err);
	EXPECT_EQ(1, count(b.err, "sandpit: killed ")) TH_LOG("%s", b.err);
	if (strcmp(variant->mode, "filter"))
		return;
	ASSERT_EQ(0, run_both(variant->mode, self->kill, NULL, TINY("missed"), &b));
	EXPECT_EQ(128 + SIGKILL, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("before\n", b.out);
	EXPECT_NE(NULL, strstr(b.err, want)) TH_LOG("%s", b.err);
}

/* A rule on write, in filter mode (strict mode cannot keep a rule on
 * write, which seccomp's strict mode lets U make itself: its refusal of
 * such a policy is another change's, and this test leaves strict mode to
 * it).  sandpit's own writes pass the filter (every program used to die of
 * SIGSEGV, the net trapping its own wake-up write); the program's own code,
 * from a site the patcher cannot patch, straight to the filter, may write
 * to exactly T's eventfds of its threads (one thread: one descriptor): a
 * wake-up of its own T, as every call it makes through T sends, after
 * which T answers each of 200 refused calls as before.  Nothing else of
 * sandpit's block: not U's eventfds, not the maps, not B's socket (which
 * U writes only to interrupt T for one of the program's handlers, so only
 * where the policy lets it install handlers: then also B's socket, two
 * below T's eventfd, whose worst is a spurious restart of one of its own
 * T's waits). */
/* tiny's "fds" report: the numbers its writes reached, then its counts;
 * the number of numbers, *tail the last line */
static int wrote_fds(const char *out, int *fdv, int max, long *eperm, long *ebadf, long *other,
		     const char **tail)
{
	static char last[64];
	const char *p = out;
	int n = 0;
	last[0] = 0;
	*tail = last;
	if (strncmp(p, "wrote:", 6))
		return -1;
	p += 6;
	while (*p == ' ' && n < max) {
		char *e;
		fdv[n++] = (int)strtol(p + 1, &e, 10);
		p = e;
	}
	if (sscanf(p, "\neperm %ld ebadf %ld other %ld\n%63[^\n]", eperm, ebadf, other, last) != 4)
		return -1;
	return n;
}

TEST_F(tiny, write_rule_in_filter_mode)
{
	struct both b;
	if (strcmp(variant->mode, "filter"))
		SKIP(return, "strict mode refuses a rule on write (another change's test)");
	ASSERT_EQ(0, run_both(variant->mode, self->wr, NULL, TINY("hello"), &b));
	EXPECT_EQ(3, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("hello\n", b.out);
	EXPECT_STREQ("", b.err);
	ASSERT_EQ(0, run_both(variant->mode, self->wr, NULL, TINY("refused"), &b));
	EXPECT_EQ(4, b.status) TH_LOG("%s", b.err);
	EXPECT_STREQ("before\nafter -38\n", b.out);
	EXPECT_NE(NULL, strstr(b.err, "the first: getppid() = -ENOSYS, by not in the policy: default;"))
	TH_LOG("%s", b.err);

	/* the program's own writes (through a site the patcher never saw, so
	 * the filter judges them) reach only T's eventfds, every slot's (all
	 * made at start): a wake-up T checks against its own word, which the
	 * program cannot forge (rev4_test: sandpits_eventfds_filled_and_rung_*) */
	long eperm = -1, ebadf = -1, other = -1;
	int fdv[1100], n;
	const char *tail;
	ASSERT_EQ(0, run_both(variant->mode, self->wr, NULL, TINY("fds"), &b));
	EXPECT_EQ(0, b.status) TH_LOG("%s", b.err);
	n = wrote_fds(b.out, fdv, 1100, &eperm, &ebadf, &other, &tail);
	ASSERT_LE(1, n) TH_LOG("%s", b.out);
	EXPECT_LE(64, fdv[0]);
	for (int i = 1; i < n; i++)
		EXPECT_EQ(fdv[0] + 2 * i, fdv[i]); /* slots_t_fd(fd_lo, i) */
	EXPECT_GT(4096, fdv[n - 1]);
	/* every other descriptor below 4096 but 1 refused: EPERM by the rule
	 * (0, 2 and those the test runner left open), EBADF in sandpit's
	 * block and where nothing is open */
	EXPECT_EQ(4095 - n, eperm + ebadf);
	EXPECT_LE(2, eperm);
	EXPECT_EQ(0, other);
	EXPECT_STREQ("then 200 of 200 refused", tail);

	/* with sandpit's own signal in use, T<->B's end too */
	int t0 = fdv[0], m = n;
	ASSERT_EQ(0, run_both(variant->mode, self->wr_sig, NULL, TINY("fds"), &b));
	EXPECT_EQ(0, b.status) TH_LOG("%s", b.err);
	n = wrote_fds(b.out, fdv, 1100, &eperm, &ebadf, &other, &tail);
	ASSERT_EQ(m + 1, n) TH_LOG("%s", b.out);
	EXPECT_EQ(t0 - 2, fdv[0]);
	EXPECT_EQ(t0, fdv[1]);
	EXPECT_EQ(4095 - n, eperm + ebadf);
	EXPECT_EQ(0, other);
	EXPECT_STREQ("then 200 of 200 refused", tail);
}

/* ---- the plan cache ---- */

FIXTURE(plan_cache) {
	char dir[64], cache[96];
};
FIXTURE_VARIANT(plan_cache) {
	const char *mode;
};
FIXTURE_VARIANT_ADD(plan_cache, strict) { .mode = "strict" };
FIXTURE_VARIANT_ADD(plan_cache, filter) { .mode = "filter" };

FIXTURE_SETUP(plan_cache)
{
	SKIP_FILTER_VARIANT_WITHOUT_FILTER(variant->mode);
	strcpy(self->dir, "/tmp/sandpit-plans-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->cache, sizeof self->cache, "%s/cache", self->dir);
	ASSERT_EQ(0, setenv("SANDPIT_PLAN_CACHE", self->cache, 1));
}

FIXTURE_TEARDOWN(plan_cache)
{
	char cmd[128];
	unsetenv("SANDPIT_PLAN_CACHE");
	snprintf(cmd, sizeof cmd, "rm -rf %s", self->dir);
	EXPECT_EQ(0, system(cmd));
}

/* `sandpit run` of argv with SANDPIT_DEBUG=1: its stderr (which the
 * program's own line "planned-ok" goes to as well) */
static char *plan_run(const char *mode, char *const argv[], int *status)
{
	struct result r;
	want_stderr = 1;
	if (sandboxed(mode, NULL, argv, NULL, NULL, "SANDPIT_DEBUG=1", &r))
		r.status = -1, r.len = 0;
	want_stderr = 0;
	*status = r.status;
	return result_text(&r);
}

/* The patcher's site lines, each as (object, offset from the object's
 * first site, what became of it): the same in any two runs that patch the
 * same sites, wherever ASLR put the objects. */
static char *site_list(const char *err)
{
	size_t cap = strlen(err) + 1, len = 0;
	char *out = calloc(1, cap + 1);
	unsigned long prev = 0, first = 0;
	unsigned group = 0;
	for (const char *l = err; (l = strstr(l, "sandpit: patcher: syscall at 0x")); l++) {
		char *end;
		unsigned long a = strtoul(l + 31, &end, 16);
		const char *nl = strchr(end, '\n');
		if (!prev || a < prev || a - prev > (64UL << 20))
			group++, first = a;
		prev = a;
		int n = snprintf(out + len, cap - len, "%u+%lx%.*s\n", group, a - first,
				 (int)(nl ? nl - end : (long)strlen(end)), end);
		if (n < 0 || (size_t)n >= cap - len)
			break;
		len += n;
	}
	return out;
}

static char *plan_sh_argv[] = { "/bin/sh", "-c", "echo planned-ok >&2", NULL };

/* A cold run computes and writes every plan (the libc ld.so maps inside
 * the sandbox by the parent, afterwards); a warm one takes every plan from
 * the cache, verified, and patches exactly the same sites. */
TEST_F(plan_cache, warm_run_patches_the_same_sites_as_a_cold_one)
{
	int st;
	char *cold = plan_run(variant->mode, plan_sh_argv, &st);
	EXPECT_EQ(0, st);
	EXPECT_NE(NULL, strstr(cold, "planned-ok"));
	EXPECT_NE(NULL, strstr(cold, "libc.so.6: plan computed: named for the parent")) TH_LOG("%s", cold);
	EXPECT_EQ(0, count(cold, "from cache"));
	char *warm = plan_run(variant->mode, plan_sh_argv, &st);
	EXPECT_EQ(0, st);
	EXPECT_NE(NULL, strstr(warm, "planned-ok"));
	EXPECT_EQ(0, count(warm, "plan computed")) TH_LOG("%s", warm);
	EXPECT_EQ(0, count(warm, "cache refused"));
	/* ld.so, sh, libc */
	EXPECT_EQ(3, count(warm, "plan from cache (verified)")) TH_LOG("%s", warm);
	char *a = site_list(cold), *b = site_list(warm);
	EXPECT_LT(100, count(a, "\n"));
	EXPECT_STREQ(a, b);
	free(a), free(b), free(cold), free(warm);
}

/* The same for a stripped static program, which the patcher otherwise
 * decodes linearly (sandpit bench's bench_static_true). */
TEST_F(plan_cache, warm_run_of_a_stripped_static_program_patches_the_same_sites)
{
	char prog[PATH_MAX];
	int st;
	snprintf(prog, sizeof prog, "%s/bench_static_true", bindir);
	char *argv[] = { prog, NULL };
	struct stat sb;
	ASSERT_EQ(0, stat(prog, &sb));
	if (time(NULL) < sb.st_ctime + 3)
		sleep(3); /* just built: too new to cache */
	char *cold = plan_run(variant->mode, argv, &st);
	ASSERT_EQ(0, st) TH_LOG("%s", cold);
	EXPECT_NE(NULL, strstr(cold, "bench_static_true: plan computed")) TH_LOG("%s", cold);
	EXPECT_LT(50, count(cold, "(linear)"));
	char *warm = plan_run(variant->mode, argv, &st);
	EXPECT_EQ(0, st);
	EXPECT_NE(NULL, strstr(warm, "bench_static_true: plan from cache (verified)")) TH_LOG("%s", warm);
	EXPECT_EQ(0, count(warm, "plan computed"));
	char *a = site_list(cold), *b = site_list(warm);
	EXPECT_STREQ(a, b);
	free(a), free(b), free(cold), free(warm);
}

static void for_each_plan(struct __test_metadata *_metadata, const char *cache,
			  char names[][256], int *n)
{
	char cmd[PATH_MAX];
	snprintf(cmd, sizeof cmd, "ls %s/*.plan", cache);
	FILE *p = popen(cmd, "r");
	ASSERT_NE(NULL, p);
	*n = 0;
	while (*n < 8 && fgets(names[*n], 256, p))
		names[*n][strcspn(names[*n], "\n")] = 0, (*n)++;
	pclose(p);
}

/* Cache files whose bytes are flipped, cut short, swapped for another
 * object's, or made symbolic links, are refused whole: the program runs
 * as before, and the sites patched are the cold run's. */
TEST_F(plan_cache, damaged_swapped_or_linked_cache_files_are_refused)
{
	static const char *how[] = { "flip", "truncate", "swap", "symlink" };
	char names[8][256], cmd[2048];
	int st, n;
	char *cold = plan_run(variant->mode, plan_sh_argv, &st), *want = site_list(cold);
	ASSERT_EQ(0, st);
	for_each_plan(_metadata, self->cache, names, &n);
	ASSERT_EQ(3, n);
	for (size_t h = 0; h < sizeof how / sizeof how[0]; h++) {
		/* a warm cache again, then every plan file spoiled the same way */
		free(plan_run(variant->mode, plan_sh_argv, &st));
		for (int i = 0; i < n; i++) {
			const char *other = names[(i + 1) % n];
			if (!strcmp(how[h], "flip"))
				snprintf(cmd, sizeof cmd, "printf '\\377' | dd of=%.200s bs=1 seek=120 conv=notrunc status=none", names[i]);
			else if (!strcmp(how[h], "truncate"))
				snprintf(cmd, sizeof cmd, "truncate -s 100 %.200s", names[i]);
			else if (!strcmp(how[h], "swap"))
				snprintf(cmd, sizeof cmd, "cp %.200s %.200s.other", other, names[i]);
			else
				snprintf(cmd, sizeof cmd, "cp %.200s %.200s.copy && ln -sf %.200s.copy %.200s", names[i], names[i], names[i], names[i]);
			ASSERT_EQ(0, system(cmd));
		}
		if (!strcmp(how[h], "swap"))
			for (int i = 0; i < n; i++) {
				snprintf(cmd, sizeof cmd, "mv %.200s.other %.200s", names[i], names[i]);
				ASSERT_EQ(0, system(cmd));
			}
		char *err = plan_run(variant->mode, plan_sh_argv, &st), *got = site_list(err);
		EXPECT_EQ(0, st) TH_LOG("%.200s", how[h]);
		EXPECT_NE(NULL, strstr(err, "planned-ok"));
		EXPECT_EQ(0, count(err, "from cache")) TH_LOG("%.200s: %.200s", how[h], err);
		EXPECT_EQ(3, count(err, "cache refused")) TH_LOG("%.200s: %.200s", how[h], err);
		if (!strcmp(how[h], "symlink")) {
			EXPECT_EQ(3, count(err, "cache refused: its file is a symbolic link"));
		} else if (!strcmp(how[h], "swap")) {
			EXPECT_EQ(3, count(err, "cache refused: it is for another file"));
		}
		EXPECT_STREQ(want, got) TH_LOG("%.200s", how[h]);
		free(err), free(got);
		/* the refused files were replaced: a plain warm run again */
		snprintf(cmd, sizeof cmd, "rm -f %.200s/*.copy", self->cache);
		ASSERT_EQ(0, system(cmd));
	}
	free(cold), free(want);
}

/* A plan for a file that has changed since (same inode, same size, one
 * byte different, even with its mtime put back) is not used. */
TEST_F(plan_cache, plan_for_a_changed_file_is_not_used)
{
	char prog[PATH_MAX], cmd[2 * PATH_MAX];
	int st;
	snprintf(prog, sizeof prog, "%s/sh", self->dir);
	snprintf(cmd, sizeof cmd, "cp /bin/sh %s", prog);
	ASSERT_EQ(0, system(cmd));
	char *argv[] = { prog, "-c", "echo planned-ok >&2", NULL };
	/* a file changed less than 2 s ago is planned but not cached */
	char *err = plan_run(variant->mode, argv, &st);
	EXPECT_EQ(0, st);
	EXPECT_NE(NULL, strstr(err, "cache not written: the file changed too recently")) TH_LOG("%s", err);
	free(err);
	sleep(3);
	free(plan_run(variant->mode, argv, &st));
	ASSERT_EQ(0, st);
	char *warm = plan_run(variant->mode, argv, &st);
	ASSERT_EQ(0, count(warm, "plan computed")) TH_LOG("%s", warm);
	free(warm);
	struct stat before, after;
	ASSERT_EQ(0, stat(prog, &before));
	/* the last byte: section headers, which nothing maps */
	int fd = open(prog, O_RDWR);
	ASSERT_LE(0, fd);
	unsigned char c;
	ASSERT_EQ(1, pread(fd, &c, 1, before.st_size - 1));
	c ^= 0x40;
	ASSERT_EQ(1, pwrite(fd, &c, 1, before.st_size - 1));
	struct timespec t[2] = { before.st_atim, before.st_mtim };
	ASSERT_EQ(0, futimens(fd, t));
	close(fd);
	ASSERT_EQ(0, stat(prog, &after));
	ASSERT_EQ(before.st_size, after.st_size);
	ASSERT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
	err = plan_run(variant->mode, argv, &st);
	EXPECT_EQ(0, st);
	EXPECT_NE(NULL, strstr(err, "planned-ok"));
	char want[PATH_MAX + 64];
	snprintf(want, sizeof want, "%s: cache refused: it is for another file, or the file has changed", prog);
	EXPECT_NE(NULL, strstr(err, want)) TH_LOG("%s", err);
	snprintf(want, sizeof want, "%s: plan computed", prog);
	EXPECT_NE(NULL, strstr(err, want));
	snprintf(want, sizeof want, "%s: plan from cache", prog);
	EXPECT_EQ(NULL, strstr(err, want));
	free(err);
}

/* A cache directory that is not the user's alone (group- or
 * world-writable, or another user's) is neither read nor written. */
TEST_F(plan_cache, directory_not_ours_alone_is_not_used)
{
	int st;
	char cmd[PATH_MAX];
	free(plan_run(variant->mode, plan_sh_argv, &st));
	ASSERT_EQ(0, st);
	for (int k = 0; k < 3; k++) {
		if (k == 2 && geteuid() != 0)
			break; /* only root can give it to another user */
		ASSERT_EQ(0, chmod(self->cache, k == 0 ? 0777 : k == 1 ? 0770 : 0700));
		if (k == 2)
			ASSERT_EQ(0, chown(self->cache, 65534, 65534));
		snprintf(cmd, sizeof cmd, "rm -f %s/*.needs", self->cache);
		ASSERT_EQ(0, system(cmd));
		char *err = plan_run(variant->mode, plan_sh_argv, &st);
		EXPECT_EQ(0, st);
		EXPECT_NE(NULL, strstr(err, "planned-ok"));
		EXPECT_EQ(0, count(err, "from cache")) TH_LOG("%d: %s", k, err);
		/* root has dropped its capabilities by the time it patches: another
		 * user's 0700 directory cannot even be opened then */
		if (k < 2) {
			EXPECT_LE(2, count(err, "the cache directory is not ours alone")) TH_LOG("%d: %s", k, err);
		}
		EXPECT_EQ(3, count(err, "plan computed")) TH_LOG("%d: %s", k, err);
		free(err);
		/* nothing was written there */
		snprintf(cmd, sizeof cmd, "test -z \"$(ls %s | grep needs)\"", self->cache);
		EXPECT_EQ(0, system(cmd));
	}
	ASSERT_EQ(0, chown(self->cache, geteuid(), getegid()));
	ASSERT_EQ(0, chmod(self->cache, 0700));
}

/* The list of what a program needs keeps every library a run used, not
 * only those it had to plan: python importing one extension, then another,
 * then the first again finds every plan in the cache the third time (the
 * list had lost libc and the first extension), and the parent plans
 * nothing the child took from the cache. */
TEST_F(plan_cache, every_library_a_run_used_stays_in_the_programs_list)
{
	char *json[] = { "/usr/bin/python3", "-S", "-c", "import _json", NULL };
	char *bz2[] = { "/usr/bin/python3", "-S", "-c", "import _bz2", NULL };
	int st;
	free(plan_run(variant->mode, json, &st));
	ASSERT_EQ(0, st);
	char *err = plan_run(variant->mode, bz2, &st);
	ASSERT_EQ(0, st);
	EXPECT_NE(NULL, strstr(err, "_bz2.cpython-311-x86_64-linux-gnu.so: plan computed")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "libc.so.6: plan from cache (verified)")) TH_LOG("%s", err);
	free(err);
	err = plan_run(variant->mode, json, &st);
	EXPECT_EQ(0, st);
	EXPECT_EQ(0, count(err, "plan computed")) TH_LOG("%s", err);
	EXPECT_EQ(0, count(err, "cache refused")) TH_LOG("%s", err);
	/* ld.so, python, libc, libm, libexpat, libz and _json: once each, in
	 * the child; the parent verified nothing again */
	EXPECT_EQ(1, count(err, "_json.cpython-311-x86_64-linux-gnu.so: plan from cache (verified)")) TH_LOG("%s", err);
	EXPECT_EQ(1, count(err, "libc.so.6: plan from cache (verified)")) TH_LOG("%s", err);
	free(err);
}

/* The sandboxed program cannot write the cache: no grant reaches it, and
 * what is there after a run is what sandpit wrote (plans and lists). */
TEST_F(plan_cache, the_sandbox_cannot_write_the_cache)
{
	int st;
	char cmd[PATH_MAX], script[PATH_MAX];
	free(plan_run(variant->mode, plan_sh_argv, &st));
	ASSERT_EQ(0, st);
	char names[8][256];
	int n;
	for_each_plan(_metadata, self->cache, names, &n);
	ASSERT_EQ(3, n);
	snprintf(script, sizeof script,
		 "echo x > %.200s/evil.plan || echo refused >&2; for f in %.200s %.200s %.200s; do echo x >> $f || echo refused >&2; done",
		 self->cache, names[0], names[1], names[2]);
	char *argv[] = { "/bin/sh", "-c", script, NULL };
	char *err = plan_run(variant->mode, argv, &st);
	EXPECT_EQ(4, count(err, "refused\n")) TH_LOG("%s", err);
	free(err);
	snprintf(cmd, sizeof cmd, "test ! -e %s/evil.plan", self->cache);
	EXPECT_EQ(0, system(cmd));
	/* and every plan there is still whole: a warm run uses them all */
	err = plan_run(variant->mode, plan_sh_argv, &st);
	EXPECT_EQ(3, count(err, "plan from cache (verified)")) TH_LOG("%s", err);
	free(err);
	snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s | grep -v -e '\\.plan$' -e '\\.needs$')\"", self->cache);
	EXPECT_EQ(0, system(cmd));
}

/* The cache as a program would find it that may write all of HOME (an
 * ordinary --allow-write): HOME is a directory of the test's, the cache
 * is the default one under it.  The fixture's SANDPIT_PLAN_CACHE and the
 * caller's XDG_CACHE_HOME go (each test runs in a process of its own). */
static void home_cache(struct __test_metadata *_metadata, const char *dir, char *home,
		       size_t n, char *cache, size_t m)
{
	snprintf(home, n, "%s/home", dir);
	snprintf(cache, m, "%s/.cache/sandpit/plans", home);
	ASSERT_EQ(0, mkdir(home, 0700));
	ASSERT_EQ(0, setenv("HOME", home, 1));
	unsetenv("XDG_CACHE_HOME");
	unsetenv("SANDPIT_PLAN_CACHE");
}

/* what a cache file is: its inode, size, times and bytes */
static char *file_state(const char *path)
{
	struct stat st;
	char *out = calloc(1, PLAN_MAX_FILE + 256);
	int fd = open(path, O_RDONLY), n = 0;
	if (fd >= 0 && !fstat(fd, &st)) {
		n = snprintf(out, 256, "%lu %ld %ld.%ld %o\n", (unsigned long)st.st_ino, (long)st.st_size,
			     (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_mode);
		ssize_t r = read(fd, out + n, PLAN_MAX_FILE);
		for (ssize_t i = 0; i < r; i++) /* bytes as text: compared with strcmp */
			out[n + i] = out[n + i] ? out[n + i] : '.';
	}
	if (fd >= 0)
		close(fd);
	return out;
}

/* The attacker has --allow-write=HOME: it tries to write, create, rename,
 * unlink, link, symlink over and read the cache's directory and a plan,
 * directly, through a link of its own, and from a descriptor of .cache.
 * Every attempt reaches B and is refused with EACCES (a deny beats every
 * grant, on the resolved path), and the plans are as sandpit wrote them. */
TEST_F(plan_cache, a_program_that_may_write_home_can_neither_change_nor_read_the_cache)
{
	static const char *const kinds[] = { "attack_dyn", "attack_static" };
	char home[128], cache[192], grant[160], prog[PATH_MAX + 32], path[512];
	char names[8][256];
	int st, n;
	if (!suite_has_openat2())
		SKIP(return, "write grants need openat2");
	home_cache(_metadata, self->dir, home, sizeof home, cache, sizeof cache);
	snprintf(grant, sizeof grant, "--allow-write=%s", home);
	free(plan_run(variant->mode, plan_sh_argv, &st));
	ASSERT_EQ(0, st);
	for_each_plan(_metadata, cache, names, &n);
	ASSERT_EQ(3, n);
	char *before[3];
	for (int i = 0; i < 3; i++)
		before[i] = file_state(names[i]);
	for (int k = 0; k < 2; k++) {
		struct result r;
		const char *extra[] = { grant, NULL };
		snprintf(prog, sizeof prog, "%s/selftests/%s", bindir, kinds[k]);
		char *argv[] = { prog, "plan-cache", cache, strrchr(names[k], '/') + 1, NULL };
		snprintf(path, sizeof path, "%s/alias", home);
		unlink(path);
		ASSERT_EQ(0, sandboxed(variant->mode, extra, argv, NULL, NULL, NULL, &r));
		result_text(&r);
		int tries = count(r.out, "plan-cache: "), refused = count(r.out, ": EACCES\n");
		EXPECT_EQ(0, r.status) TH_LOG("%s: %s", kinds[k], r.out);
		ASSERT_LT(0, tries) TH_LOG("%s: %s", kinds[k], r.out);
		EXPECT_EQ(21, tries) TH_LOG("%s: %s", kinds[k], r.out);
		EXPECT_EQ(tries, refused) TH_LOG("%s: %s", kinds[k], r.out);
		free(r.out);
	}
	for (int i = 0; i < 3; i++) {
		char *now = file_state(names[i]);
		EXPECT_STREQ(before[i], now) TH_LOG("%s", names[i]);
		free(now), free(before[i]);
	}
	static const char *const never[] = { "%s/.cache/sandpit/plans/new.plan",
					     "%s/.cache/sandpit/moved", "%s/.cache/sandpit/plans" };
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof path, never[i], home);
		EXPECT_EQ(i == 2 ? 0 : -1, access(path, F_OK)) TH_LOG("%s", path);
	}
	/* and a warm run takes every plan, whole */
	char *err = plan_run(variant->mode, plan_sh_argv, &st);
	EXPECT_EQ(0, st);
	EXPECT_EQ(3, count(err, "plan from cache (verified)")) TH_LOG("%s", err);
	free(err);
}

/* Before sandpit has made the cache's directory (the cache off for this
 * run, HOME without .cache), the program cannot make it, or a link in
 * its place; and a link or a directory another may write, planted there
 * from outside (as an older sandpit let a program do), is not used: no
 * plan is read or written through it. */
TEST_F(plan_cache, the_cache_directory_is_made_by_sandpit_alone_and_never_through_a_link)
{
	char home[128], cache[192], grant[160], prog[PATH_MAX + 32], path[512], cmd[2048];
	int st;
	if (!suite_has_openat2())
		SKIP(return, "write grants need openat2");
	/* a cache of good plans elsewhere, to plant */
	free(plan_run(variant->mode, plan_sh_argv, &st));
	ASSERT_EQ(0, st);
	home_cache(_metadata, self->dir, home, sizeof home, cache, sizeof cache);
	ASSERT_EQ(0, setenv("SANDPIT_PLAN_CACHE", "off", 1));
	snprintf(grant, sizeof grant, "--allow-write=%s", home);
	snprintf(prog, sizeof prog, "%s/selftests/attack_dyn", bindir);
	char *argv[] = { prog, "plan-cache-make", home, NULL };
	const char *extra[] = { grant, NULL };
	struct result r;
	ASSERT_EQ(0, sandboxed(variant->mode, extra, argv, NULL, NULL, NULL, &r));
	result_text(&r);
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.out);
	ASSERT_LT(0, count(r.out, "plan-cache: ")) TH_LOG("%s", r.out);
	EXPECT_EQ(3, count(r.out, "plan-cache: ")) TH_LOG("%s", r.out);
	EXPECT_EQ(3, count(r.out, ": EACCES\n")) TH_LOG("%s", r.out);
	free(r.out);
	snprintf(path, sizeof path, "%s/.cache", home);
	EXPECT_EQ(-1, access(path, F_OK));
	unsetenv("SANDPIT_PLAN_CACHE");
	/* sandpit/ a link; plans/ a link; sandpit/ writable by the group */
	static const char *const plant[] = {
		"mkdir -p %1$s/.cache %1$s/elsewhere && cp -a %2$s %1$s/elsewhere/plans && chmod 700 %1$s/elsewhere && ln -s %1$s/elsewhere %1$s/.cache/sandpit",
		"rm %1$s/.cache/sandpit && mkdir -m 700 %1$s/.cache/sandpit && ln -s %1$s/elsewhere/plans %1$s/.cache/sandpit/plans",
		"rm %1$s/.cache/sandpit/plans && mv %1$s/elsewhere/plans %1$s/.cache/sandpit/plans && chmod 770 %1$s/.cache/sandpit",
	};
	static const char *const why[] = { "the cache directory is a symbolic link",
					   "the cache directory is a symbolic link",
					   "the cache directory is not ours alone" };
	for (int i = 0; i < 3; i++) {
		snprintf(cmd, sizeof cmd, plant[i], home, self->cache);
		ASSERT_EQ(0, system(cmd)) TH_LOG("%s", cmd);
		snprintf(cmd, sizeof cmd, "ls -A %s/elsewhere/plans %s/.cache/sandpit/plans 2>/dev/null | wc -l > %s/count.%d",
			 home, home, self->dir, i);
		ASSERT_EQ(0, system(cmd));
		char *err = plan_run(variant->mode, plan_sh_argv, &st);
		EXPECT_EQ(0, st);
		EXPECT_NE(NULL, strstr(err, "planned-ok"));
		EXPECT_LE(1, count(err, why[i])) TH_LOG("%d: %s", i, err);
		EXPECT_EQ(0, count(err, "from cache")) TH_LOG("%d: %s", i, err);
		free(err);
		/* nothing written there either */
		snprintf(cmd, sizeof cmd, "ls -A %s/elsewhere/plans %s/.cache/sandpit/plans 2>/dev/null | wc -l | cmp -s - %s/count.%d",
			 home, home, self->dir, i);
		EXPECT_EQ(0, system(cmd)) TH_LOG("%d", i);
	}
}

/* Rewrites the plan file `name` as an attacker who could write the cache
 * would (an older sandpit let a program with --allow-write=$HOME): the
 * same key, a valid checksum, and each record
 *   "native":    left unpatched, as if no window fitted,
 *   "sigreturn": left native, as an rt_sigreturn,
 *   "none":      gone (every syscall left out),
 *   "number":    its window kept, its number one the filter allows
 *                (getppid), so that filter mode would leave it native.
 * *had: how many records it had. */
static void poison_plan(struct __test_metadata *_metadata, const char *name, const char *how,
			unsigned *had)
{
	static uint8_t buf[PLAN_MAX_FILE], out[PLAN_MAX_FILE];
	static const uint8_t syscall_bytes[2] = { 0x0f, 0x05 };
	struct plan_file f;
	struct plan_rec r;
	const char *why;
	int fd = open(name, O_RDWR);
	ASSERT_LE(0, fd);
	ssize_t n = read(fd, buf, sizeof buf);
	ASSERT_LT(0, n);
	ASSERT_EQ(0, plan_file_parse(buf, (size_t)n, &f, &why)) TH_LOG("%s: %s", name, why);
	*had = f.n_rec;
	uint8_t *p = plan_file_begin(out, &f.key, strcmp(how, "none") ? f.n_rec : 0);
	for (const uint8_t *pos = f.rec; strcmp(how, "none") && plan_file_next(&f, &pos, &r);) {
		struct plan_rec w = r;
		if (!strcmp(how, "number")) {
			if (r.status == PLAN_FIT)
				w.nr = 110; /* getppid */
		} else {
			w = (struct plan_rec){ .off = r.off, .nr = strcmp(how, "sigreturn") ? r.nr : 15,
					       .after = 2, .method = r.method, .bytes = syscall_bytes,
					       .status = strcmp(how, "sigreturn") ? PLAN_SKIP_OTHER
										 : PLAN_NATIVE_SIGRETURN };
		}
		p = plan_file_put(p, &w);
	}
	p = plan_file_end(out, p);
	ASSERT_EQ(0, plan_file_parse(out, (size_t)(p - out), &f, &why)) TH_LOG("%s", why);
	ASSERT_EQ(p - out, pwrite(fd, out, (size_t)(p - out), 0));
	ASSERT_EQ(0, ftruncate(fd, p - out));
	close(fd);
}

/* A plan rewritten with a valid checksum to leave every site native (or
 * to leave them all out, or to give them numbers the filter allows) is
 * checked against the code it describes and refused, in every mode: the
 * program runs as it does natively, patched as on a cold run, in strict
 * mode too, where the sites left native would have killed it. */
TEST_F(plan_cache, a_plan_poisoned_to_leave_every_site_native_is_refused)
{
	static const char *const how[] = { "native", "sigreturn", "none", "number" };
	static const char *const why[] = { "cache refused: a site it leaves unpatched is one the planner patches",
					   "cache refused: a site it leaves native is no rt_sigreturn",
					   "cache refused: it leaves out a syscall of the code",
					   "cache refused: a site it leaves native has another number" };
	char names[8][256];
	int st, n;
	char *cold = plan_run(variant->mode, plan_sh_argv, &st), *want = site_list(cold);
	ASSERT_EQ(0, st);
	for_each_plan(_metadata, self->cache, names, &n);
	ASSERT_EQ(3, n);
	for (size_t h = 0; h < sizeof how / sizeof how[0]; h++) {
		unsigned had, with_sites = 0;
		for (int i = 0; i < n; i++) {
			poison_plan(_metadata, names[i], how[h], &had);
			with_sites += had > 0;
		}
		/* ld.so and libc (sh makes no system call of its own) */
		ASSERT_EQ(2u, with_sites);
		char *err = plan_run(variant->mode, plan_sh_argv, &st), *got = site_list(err);
		EXPECT_EQ(0, st) TH_LOG("%s: %s", how[h], err);
		EXPECT_NE(NULL, strstr(err, "planned-ok")) TH_LOG("%s", how[h]);
		EXPECT_STREQ(want, got) TH_LOG("%s", how[h]);
		/* ld.so's refused by sandpit_start, libc's inside the sandbox and
		 * again by the parent before it plans libc afresh; sh's kept */
		char ld[256], libc[256];
		snprintf(ld, sizeof ld, "ld-linux-x86-64.so.2: %s", why[h]);
		snprintf(libc, sizeof libc, "libc.so.6: %s", why[h]);
		EXPECT_EQ(1, count(err, ld)) TH_LOG("%s: %s", how[h], err);
		EXPECT_LE(1, count(err, libc)) TH_LOG("%s: %s", how[h], err);
		EXPECT_EQ(count(err, "cache refused"), count(err, why[h])) TH_LOG("%s: %s", how[h], err);
		EXPECT_EQ(1, count(err, "plan from cache (verified)")) TH_LOG("%s: %s", how[h], err);
		free(err), free(got);
	}
	/* each refused plan was replaced by a good one */
	char *err = plan_run(variant->mode, plan_sh_argv, &st);
	EXPECT_EQ(0, st);
	EXPECT_EQ(3, count(err, "plan from cache (verified)")) TH_LOG("%s", err);
	free(err), free(cold), free(want);
}

TEST_HARNESS_MAIN
