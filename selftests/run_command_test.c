/* `sandpit run`, the command itself: its own errors get their own exit
 * statuses, a write grant through a symlink is refused, --policy=FILE
 * applies, --log=denials explains each refusal field by field, the
 * closing line counts the refusals and names the grant, and what is
 * patched up front.  On the run fixture (selftests/run_fixture.h), in
 * strict and in filter mode. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
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
		 "sandpit: denied socket(2, 1, 0) = -EAFNOSUPPORT; by policy/default.policy:%d: "
		 "argument rule; from libc.so.6+0x", default_line("socket"));
	EXPECT_EQ(0, strncmp(line, want, strlen(want))) TH_LOG("%s\nwant %s", line, want);
	EXPECT_NE(NULL, strstr(line, "socket+0x")) TH_LOG("%s", line);
	/* no network without a connect grant: the option that gives one */
	EXPECT_NE(NULL, strstr(line, "); allow with --allow-connect=ADDR:PORT")) TH_LOG("%s", line);

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
		{ "socket", "EAFNOSUPPORT", "-97", "argument rule", "0", "socket+0x", 0, 0 },
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
		else if (!strcmp(want[i].call, "socket"))
			snprintf(allow, sizeof allow, "--allow-connect=ADDR:PORT");
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

/* Nothing the run started outlives the command: the trusted process B
 * (the command's child) and the notifier N (an orphan) are reaped before
 * `sandpit run` returns.  This test is the subreaper of what the command
 * leaves, so a B or N still there when the command has been waited for
 * comes to it, running or a zombie.  Ten runs a mode, half of them with a
 * refusal (the closing line, which only B writes, proves B served them). */
TEST_F(run, nothing_of_the_run_outlives_the_command)
{
	char *refused[] = { "cat", self->secret, NULL }, *fine[] = { "true", NULL };
	int left = 0, closing = 0;
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	want_stderr = 1;
	for (int i = 0; i < 10; i++) {
		struct result r;
		ASSERT_EQ(0, sandboxed(variant->mode, NULL, i & 1 ? refused : fine, NULL, NULL, NULL,
				       &r));
		result_text(&r);
		EXPECT_EQ(i & 1 ? 1 : 0, r.status) TH_LOG("%s", r.out);
		closing += strstr(r.out, " refused; the first: ") != NULL;
		free(r.out);
		/* what is there now came from this run: none is the test's own */
		for (;;) {
			pid_t p = waitpid(-1, NULL, __WALL | WNOHANG);
			if (p < 0) {
				EXPECT_EQ(ECHILD, errno);
				break;
			}
			left++;
			if (p == 0) /* one still running: it ends, and is counted once */
				waitpid(-1, NULL, __WALL);
		}
	}
	want_stderr = 0;
	EXPECT_EQ(5, closing);
	EXPECT_EQ(0, left);
}

/* The closing line's grant is for the refusal it names: a read refused,
 * then a socket (which no path grant affects) refused last; the socket
 * gets the connect grant's option, never the read's path grant. */
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
	EXPECT_NE(NULL, strstr(line, "; --allow-connect=ADDR:PORT would allow the last")) TH_LOG("%s", line);
	EXPECT_EQ(NULL, strstr(line, "--allow-read")) TH_LOG("%s", line);
	free(r.out);

	/* --log=denials: the read's line has its grant, the socket's the
	 * connect grant's option */
	const char *log[] = { "--log=denials", NULL };
	ASSERT_EQ(0, sandboxed(variant->mode, log, argv, NULL, NULL, NULL, &r));
	result_text(&r);
	snprintf(want, sizeof want, "sandpit: denied openat(AT_FDCWD, \"%s\"", self->secret);
	ASSERT_NE(NULL, line_with(r.out, want, line, sizeof line)) TH_LOG("%s", r.out);
	snprintf(want, sizeof want, "; allow with --allow-read=%s", self->secret);
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("%s", line);
	ASSERT_NE(NULL, line_with(r.out, "sandpit: denied socket(", line, sizeof line)) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(line, "allow with --allow-connect=ADDR:PORT")) TH_LOG("%s", line);
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

TEST_HARNESS_MAIN
