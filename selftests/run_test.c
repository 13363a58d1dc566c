/* `sandpit run` on unmodified programs: each program's output and exit
 * status under the sandbox, in strict and in filter mode, must be exactly
 * its native ones, in a write grant as natively and outside the write
 * grants changing nothing.  The rest of `sandpit run`'s tests, by subject:
 * run_command_test (sandpit's own errors, --policy, --log and the closing
 * line), run_attack_test (attacks from inside an unmodified program),
 * run_tiny_test (sandpit's own calls under the smallest policies) and
 * run_plan_cache_test (the plan cache). */
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
#include "selftests/run_fixture.h"


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

/* The programs that change metadata through a descriptor or copy it, as
 * they are used every day: gzip -k and xz give the new file the old one's
 * mode and owner by fchmod and fchown, xz -d too; tar -x and cp -a copy
 * owners, modes, user.* attributes and ACLs (read by descriptor with
 * fgetxattr, written with fsetxattr or by path); install -m sets a mode on
 * its descriptor; sed -i gives its temporary file the old mode; gpg lowers
 * its core limit; Python's asyncio makes an AF_UNIX socket pair.  Each
 * one's status and output, and the tree left (modes, owners, sizes,
 * attributes), as natively. */
TEST_F(run, metadata_copying_programs_in_a_write_grant)
{
	char *const *const cmds[] = {
		CMD("/usr/bin/python3", "-c",
		    "import os, struct\n"
		    "open('a.txt', 'w').write(''.join('%d some text\\n' % i for i in range(20000)))\n"
		    "for f in 'b.txt', 'c.txt':\n"
		    "    open(f, 'w').write('one\\ntwo\\n'); os.chmod(f, 0o640)\n"
		    "os.mkdir('sub'); open('sub/d.txt', 'w').write('d\\n')\n"
		    "os.setxattr('sub/d.txt', 'user.sandpit', b'value')\n"
		    "acl = struct.pack('<I', 2) + b''.join(struct.pack('<HHI', *e) for e in (\n"
		    "    (1, 6, 2**32 - 1), (2, 4, 1000), (4, 4, 2**32 - 1), (16, 6, 2**32 - 1),\n"
		    "    (32, 4, 2**32 - 1)))\n"
		    "os.setxattr('sub/d.txt', 'system.posix_acl_access', acl)\n"
		    "print(sorted(os.listxattr('sub/d.txt')))"),
		CMD("gzip", "-k", "a.txt"),
		CMD("xz", "-T1", "b.txt"),
		CMD("xz", "-T1", "-d", "-k", "b.txt.xz", "-c"),
		CMD("tar", "--xattrs", "--xattrs-include=*", "--acls", "-cf", "t.tar", "sub"),
		CMD("mkdir", "x"),
		CMD("tar", "--xattrs", "--xattrs-include=*", "--acls", "-xf", "t.tar", "-C", "x"),
		CMD("install", "-m", "0755", "a.txt", "inst"),
		CMD("cp", "-a", "sub", "sub2"),
		CMD("sed", "-i", "s/one/1/", "c.txt"),
		CMD("mkdir", "-m", "700", "g"),
		CMD("gpg", "--homedir", "g", "--print-md", "sha256", "a.txt"),
		CMD("/usr/bin/python3", "-c",
		    "import asyncio, os\n"
		    "async def main():\n"
		    "    r, w = await asyncio.open_connection(sock=__import__('socket').socketpair()[0])\n"
		    "    return await asyncio.get_running_loop().run_in_executor(None, sum, [1, 2, 3])\n"
		    "print('asyncio', asyncio.run(main()))\n"
		    "for f in 'sub2/d.txt', 'x/sub/d.txt':\n"
		    "    print(f, sorted((k, os.getxattr(f, k)) for k in os.listxattr(f)))"),
		NULL
	};
	same_in_a_write_grant(_metadata, self, variant->mode, NULL, cmds);
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

/* A program whose threads have 64 KiB stacks, started forty times: each
 * run makes threads until one of them exits with 7.  A new thread's TLS
 * pointer could lie where B's copy of a request was on B's stack (B's
 * stacks are where P maps small stacks later), and B moved it into S: the
 * thread started with %fs in S and died at its first TLS access, about one
 * run in twenty (core_request_test's
 * only_arguments_b_pointed_into_its_copy_move_into_s). */
TEST_F(run, threads_with_small_stacks_start_every_time)
{
	char prog[PATH_MAX];
	snprintf(prog, sizeof(prog), "%s/selftests/rev17_prog", bindir);
	char *argv[] = { prog, "exit", NULL };
	int sevens = 0;
	for (int i = 0; i < 40; i++) {
		struct result r;
		ASSERT_EQ(0, sandboxed(variant->mode, NULL, argv, NULL, NULL, NULL, &r));
		sevens += r.status == 7;
		if (r.status != 7)
			TH_LOG("run %d: status %d", i, r.status);
		free(r.out);
	}
	EXPECT_EQ(40, sevens);
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

TEST_HARNESS_MAIN
