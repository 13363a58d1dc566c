/* The program sees its own executable under `sandpit run`: /proc/self/exe
 * and every other name of that link (user/trusted/b_exe.c) are the
 * program's file, not the sandpit command, in strict and in filter mode,
 * exactly as natively; the file B answers with is the one the program was
 * loaded from even when its name is swapped for another file or a link
 * after start; names that only look like the link are not it; the
 * program's own file is never opened for writing, and a `path deny` of it
 * refuses it through the link too. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
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

FIXTURE(selfexe)
{
	char dir[64];
	char prog[128];	 /* a copy of selfexe_prog in dir, which no grant names */
	char grant[128]; /* --allow-read=<dir>/granted */
	char granted[96];
};

FIXTURE_VARIANT(selfexe)
{
	const char *mode;
};
FIXTURE_VARIANT_ADD(selfexe, strict){ .mode = "strict" };
FIXTURE_VARIANT_ADD(selfexe, filter){ .mode = "filter" };

static void copy_file(struct __test_metadata *_metadata, const char *from, const char *to, int mode)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_EXCL, mode);
	ASSERT_LE(0, in);
	ASSERT_LE(0, out);
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) > 0)
		ASSERT_EQ(n, write(out, buf, n));
	ASSERT_EQ(0, n);
	close(in);
	close(out);
}

static void write_text(struct __test_metadata *_metadata, const char *path, const char *text,
		       int mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)strlen(text), write(fd, text, strlen(text)));
	close(fd);
}

/* what the program prints for a file's bytes (selftests/programs/selfexe.c) */
static void bytes_line(const char *path, char *out, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	unsigned char buf[65536];
	long total = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY);
	while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 0x100000001b3ull;
		total += n;
	}
	if (fd >= 0)
		close(fd);
	snprintf(out, len, "%ld bytes fnv %016llx", total, (unsigned long long)h);
}

FIXTURE_SETUP(selfexe)
{
	SKIP_FILTER_VARIANT_WITHOUT_FILTER(variant->mode);
	strcpy(self->dir, "/tmp/sandpit-selfexe-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	char from[PATH_MAX];
	snprintf(from, sizeof from, "%s/selftests/selfexe_prog", bindir);
	snprintf(self->prog, sizeof self->prog, "%s/prog", self->dir);
	copy_file(_metadata, from, self->prog, 0755);
	snprintf(self->granted, sizeof self->granted, "%s/granted", self->dir);
	ASSERT_EQ(0, mkdir(self->granted, 0755));
	snprintf(self->grant, sizeof self->grant, "--allow-read=%s", self->granted);
}

FIXTURE_TEARDOWN(selfexe)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", self->dir);
	EXPECT_EQ(0, system(cmd));
}

/* argv natively and under `sandpit run` (with the fixture's read grant):
 * the sandboxed output in *box (for the caller to free), which must be the
 * native output exactly, status 0 both */
static void same_as_native(struct __test_metadata *_metadata, const FIXTURE_DATA(selfexe) * self,
			   const char *mode, char *const argv[], char **box)
{
	struct result n, s;
	const char *extra[] = { self->grant, NULL };
	ASSERT_EQ(0, capture(argv, NULL, NULL, NULL, &n));
	ASSERT_EQ(0, sandboxed(mode, extra, argv, NULL, NULL, NULL, &s));
	EXPECT_EQ(0, n.status);
	EXPECT_EQ(0, s.status);
	char *nat = result_text(&n), *out = result_text(&s);
	EXPECT_STREQ(nat, out) TH_LOG("%s", argv[0]);
	free(n.out);
	if (box)
		*box = out;
	else
		free(out);
}

static int lines(const char *text, const char *needle)
{
	int k = 0;
	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		k++;
	return k;
}

/* Every name of the link (/proc/self/exe, thread-self, the pid, a task,
 * another thread's tid, self/../self, a dirfd of /proc/self, an O_PATH
 * descriptor of the link): its name, its bytes, stat, statx, access,
 * statfs, the attributes, and the errors of the names under it, in a
 * dynamic and a static program, as natively; the bytes are the file's
 * (the test's own hash of it), which no grant names: by its name the
 * program may not open it. */
TEST_F(selfexe, the_program_sees_its_own_file_through_every_name_of_its_exe_link)
{
	const char *progs[] = { "selfexe_prog", "selfexe_static" };
	for (int i = 0; i < 2; i++) {
		char prog[160], want[96], line[256];
		snprintf(prog, sizeof prog, "%s/%s", self->dir, progs[i]);
		if (i) {
			char from[PATH_MAX];
			snprintf(from, sizeof from, "%s/selftests/%s", bindir, progs[i]);
			copy_file(_metadata, from, prog, 0755);
		}
		char *out = NULL;
		same_as_native(_metadata, self, variant->mode,
			       (char *const[]){ i ? prog : self->prog, NULL }, &out);
		ASSERT_NE(NULL, out);
		/* eleven names, and four more from a second thread */
		snprintf(line, sizeof line, ": %s\n", i ? prog : self->prog);
		EXPECT_EQ(15, lines(out, line)) TH_LOG("%s", out);
		bytes_line(i ? prog : self->prog, want, sizeof want);
		EXPECT_EQ(5, lines(out, want)) TH_LOG("%s", out);
		EXPECT_EQ(4, lines(out, ": same file, ")) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, "statx /proc/self/exe: same file")) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, "access F_OK 0 R_OK 0 X_OK 0\n")) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, "/proc/self/exe/: readlink ENOTDIR\n"))
		TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, "/proc/self/exex: readlink ENOENT\n"))
		TH_LOG("%s", out);
		EXPECT_EQ(NULL, strstr(out, "/sandpit\n")) TH_LOG("%s", out);
		free(out);
		struct result s;
		const char *extra[] = { self->grant, NULL };
		ASSERT_EQ(0, sandboxed(variant->mode, extra,
				       (char *const[]){ i ? prog : self->prog, "byname",
							i ? prog : self->prog, NULL },
				       NULL, NULL, NULL, &s));
		EXPECT_STREQ("byname: EACCES\n", result_text(&s));
		free(s.out);
	}
}

/* perl's $^X and node's process.execPath are read from /proc/self/exe;
 * a #! script's is its interpreter's */
TEST_F(selfexe, interpreters_name_themselves_as_natively)
{
	char script[160];
	snprintf(script, sizeof script, "%s/granted/x.pl", self->dir);
	write_text(_metadata, script, "#!/usr/bin/perl\nprint \"$^X\\n\";\n", 0755);
	char *out = NULL;
	same_as_native(_metadata, self, variant->mode,
		       (char *const[]){ "perl", "-e", "print \"$^X\\n\"", NULL }, &out);
	EXPECT_EQ(1, lines(out, "perl\n")) TH_LOG("%s", out);
	free(out);
	same_as_native(_metadata, self, variant->mode, (char *const[]){ script, NULL }, &out);
	EXPECT_EQ(1, lines(out, "perl\n")) TH_LOG("%s", out);
	free(out);
	if (access("/usr/bin/node", X_OK)) {
		TH_LOG("no /usr/bin/node: perl only");
		return;
	}
	same_as_native(
		_metadata, self, variant->mode,
		(char *const[]){ "/usr/bin/node", "-e", "console.log(process.execPath)", NULL },
		&out);
	EXPECT_EQ(1, lines(out, "node\n")) TH_LOG("%s", out);
	free(out);
}

enum swap_kind { SWAP_FILE, SWAP_LINK, SWAP_OVER, SWAP_COUNT };
static const char *const swap_names[] = { "renamed away, another file in its place",
					  "renamed away, a link to a secret in its place",
					  "another file renamed over it" };

/* the program's file after it printed what it sees: its name made to
 * name another file, or a link to one no grant lets it read */
static void swap_file(struct __test_metadata *_metadata, const FIXTURE_DATA(selfexe) * self,
		      enum swap_kind k)
{
	char old[160], other[160], secret[160];
	snprintf(old, sizeof old, "%s.old", self->prog);
	snprintf(other, sizeof other, "%s/other", self->dir);
	snprintf(secret, sizeof secret, "%s/secret", self->dir);
	write_text(_metadata, secret, "SECRET\n", 0600);
	write_text(_metadata, other, "#!/bin/sh\necho another file\n", 0755);
	if (k == SWAP_OVER) {
		ASSERT_EQ(0, rename(other, self->prog));
		return;
	}
	ASSERT_EQ(0, rename(self->prog, old));
	if (k == SWAP_FILE) {
		ASSERT_EQ(0, rename(other, self->prog));
	} else {
		ASSERT_EQ(0, symlink(secret, self->prog));
	}
}

static int first_look(const char *out)
{
	const char *size = strstr(out, "size: ");
	return size && strchr(size, '\n');
}

/* the program in `swap` mode (argv: native, or the sandpit command line):
 * what it saw, the file swapped once it has printed its first look, what
 * it saw then; its status */
static int run_swapped(struct __test_metadata *_metadata, const FIXTURE_DATA(selfexe) * self,
		       char *const argv[], enum swap_kind k, char *out, size_t len)
{
	int in[2], o[2];
	if (pipe(in) || pipe(o))
		return -1;
	pid_t c = fork();
	if (c == 0) {
		dup2(in[0], 0);
		dup2(o[1], 1);
		close(in[1]);
		close(o[0]);
		execvp(argv[0], argv);
		_exit(98);
	}
	close(in[0]);
	close(o[1]);
	size_t got = 0;
	ssize_t n;
	out[0] = 0;
	/* the first look ends with its size line */
	while (!first_look(out) && got < len - 1 &&
	       (n = read(o[0], out + got, len - 1 - got)) > 0) {
		got += n;
		out[got] = 0;
	}
	swap_file(_metadata, self, k);
	EXPECT_EQ(1, write(in[1], "g", 1));
	close(in[1]);
	while (got < len - 1 && (n = read(o[0], out + got, len - 1 - got)) > 0)
		got += n;
	out[got] = 0;
	close(o[0]);
	int st;
	if (waitpid(c, &st, 0) != c)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The program's file renamed away and another file or a link to a secret
 * put in its place, or another file renamed over it, while it runs: the
 * second look is the same bytes as the first (the test's hash of the
 * original), never the other file's nor the secret's, and the name the
 * kernel gives the original now (".old", " (deleted)"), exactly as
 * natively; the swap happened between the two looks (the names differ). */
TEST_F(selfexe, a_swap_of_the_program_file_after_start_never_reaches_another_file)
{
	char want[96];
	bytes_line(self->prog, want, sizeof want);
	for (int k = 0; k < SWAP_COUNT; k++) {
		char nat[4096], box[4096], old[160];
		snprintf(old, sizeof old, "%s.old", self->prog);
		for (int sand = 0; sand < 2; sand++) {
			/* the original back in place, the other names gone */
			if (sand || k) {
				unlink(self->prog);
				char other[160];
				snprintf(other, sizeof other, "%s/other", self->dir);
				unlink(other);
				char from[PATH_MAX];
				snprintf(from, sizeof from, "%s/selftests/selfexe_prog", bindir);
				unlink(old);
				copy_file(_metadata, from, self->prog, 0755);
			}
			char *const direct[] = { self->prog, "swap", NULL };
			char sandpit[PATH_MAX + 16], modeopt[32], secs[16];
			char *av[2 * MAX_ARGS + 4];
			sandpit_run_argv(av, sandpit, modeopt, secs, variant->mode, 60, NULL,
					 direct);
			memset(sand ? box : nat, 0, sizeof nat);
			EXPECT_EQ(0, run_swapped(_metadata, self, sand ? av : direct, k,
						 sand ? box : nat, sizeof nat));
		}
		EXPECT_STREQ(nat, box) TH_LOG("%s", swap_names[k]);
		/* the bytes twice, the original's */
		EXPECT_EQ(2, lines(box, want)) TH_LOG("%s: %s", swap_names[k], box);
		EXPECT_EQ(NULL, strstr(box, "another file")) TH_LOG("%s", box);
		char first[200], second[200];
		snprintf(first, sizeof first, "name: %s\n", self->prog);
		snprintf(second, sizeof second,
			 k == SWAP_OVER ? "name: %s (deleted)\n" : "name: %s.old\n", self->prog);
		EXPECT_EQ(1, lines(box, first)) TH_LOG("%s: %s", swap_names[k], box);
		EXPECT_EQ(1, lines(box, second)) TH_LOG("%s: %s", swap_names[k], box);
		EXPECT_LT(strstr(box, first), strstr(box, second));
	}
}

/* Names that are not P's exe link: another process's (/proc/1, the
 * parent, which under `sandpit run` is the command), a pid spelt with a
 * leading zero (ENOENT natively, EACCES as before: no grant names it),
 * links named exe elsewhere, and a link to /proc/self/exe, which leads to
 * the program as natively */
TEST_F(selfexe, names_that_only_look_like_the_exe_link_are_not_it)
{
	struct result s;
	const char *extra[] = { self->grant, NULL };
	ASSERT_EQ(0, sandboxed(variant->mode, extra, (char *const[]){ self->prog, "others", NULL },
			       NULL, NULL, NULL, &s));
	EXPECT_EQ(0, s.status);
	EXPECT_STREQ("/proc/1/exe: readlink EACCES\n"
		     "/proc/0PID/exe: readlink EACCES\n"
		     "/proc/self/exe/../exe: readlink ENOTDIR\n"
		     "/proc/PPID/exe: readlink EACCES\n"
		     "open /proc/PPID/exe: EACCES\n",
		     result_text(&s));
	free(s.out);

	char path[200], target[200];
	/* a link named exe, one at .../proc/self/exe, one to /proc/self/exe */
	snprintf(path, sizeof path, "%s/exe", self->granted);
	snprintf(target, sizeof target, "%s/data", self->granted);
	write_text(_metadata, target, "data\n", 0644);
	ASSERT_EQ(0, symlink("data", path));
	char *out = NULL, data[96], line[200];
	bytes_line(target, data, sizeof data);
	same_as_native(_metadata, self, variant->mode,
		       (char *const[]){ self->prog, "link", path, NULL }, &out);
	snprintf(line, sizeof line, "link: data\nbytes: %s\n", data);
	EXPECT_STREQ(line, out);
	free(out);
	snprintf(path, sizeof path, "%s/proc", self->granted);
	ASSERT_EQ(0, mkdir(path, 0755));
	snprintf(path, sizeof path, "%s/proc/self", self->granted);
	ASSERT_EQ(0, mkdir(path, 0755));
	snprintf(path, sizeof path, "%s/proc/self/exe", self->granted);
	ASSERT_EQ(0, symlink("../../data", path));
	same_as_native(_metadata, self, variant->mode,
		       (char *const[]){ self->prog, "link", path, NULL }, &out);
	snprintf(line, sizeof line, "link: ../../data\nbytes: %s\n", data);
	EXPECT_STREQ(line, out);
	free(out);
	snprintf(path, sizeof path, "%s/selflink", self->granted);
	ASSERT_EQ(0, symlink("/proc/self/exe", path));
	same_as_native(_metadata, self, variant->mode,
		       (char *const[]){ self->prog, "link", path, NULL }, &out);
	char want[96];
	bytes_line(self->prog, want, sizeof want);
	snprintf(line, sizeof line, "link: /proc/self/exe\nbytes: %s\n", want);
	EXPECT_STREQ(line, out);
	free(out);
}

/* Every open that writes (O_WRONLY, O_RDWR, O_TRUNC, O_APPEND, O_CREAT)
 * of the program's own file through its exe link is EACCES (natively
 * ETXTBSY: it is being executed), and the file is unchanged */
TEST_F(selfexe, the_program_never_opens_its_own_file_for_writing)
{
	char before[96], after[96];
	bytes_line(self->prog, before, sizeof before);
	struct result s;
	ASSERT_EQ(0, sandboxed(variant->mode, NULL, (char *const[]){ self->prog, "write", NULL },
			       NULL, NULL, NULL, &s));
	EXPECT_EQ(0, s.status);
	EXPECT_STREQ("open 0x1: EACCES\nopen 0x2: EACCES\nopen 0x200: EACCES\nopen 0x401: EACCES\n"
		     "open 0x40: EACCES\n",
		     result_text(&s));
	free(s.out);
	/* each refusal logged with its reason, no grant suggested */
	const char *extra[] = { "--log=denials", NULL };
	want_stderr = 1;
	ASSERT_EQ(0, sandboxed(variant->mode, extra, (char *const[]){ self->prog, "write", NULL },
			       NULL, NULL, NULL, &s));
	want_stderr = 0;
	char *out = result_text(&s);
	EXPECT_EQ(5, lines(out, "= -EACCES; by policy/default.policy:"))
	TH_LOG("%s", out);
	EXPECT_EQ(5, lines(out, ": the program's own file is only ever opened for reading; from "))
	TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "--allow-")) TH_LOG("%s", out);
	free(s.out);
	bytes_line(self->prog, after, sizeof after);
	EXPECT_STREQ(before, after);
}

extern const char sandpit_default_policy[];
extern const uint64_t sandpit_default_policy_len;

/* A `path deny` of the program's file wins here too: its name, its bytes
 * and its stat through the link are EACCES, each refusal logged with the
 * pattern */
TEST_F(selfexe, a_path_deny_of_the_program_file_refuses_it_through_the_link)
{
	char policy[160], opt[200];
	snprintf(policy, sizeof policy, "%s/deny.policy", self->dir);
	FILE *f = fopen(policy, "w");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1u, fwrite(sandpit_default_policy, sandpit_default_policy_len, 1, f));
	fprintf(f, "\npath deny %s\n", self->prog);
	ASSERT_EQ(0, fclose(f));
	snprintf(opt, sizeof opt, "--policy=%s", policy);
	const char *extra[] = { opt, "--log=denials", NULL };
	struct result s;
	want_stderr = 1;
	ASSERT_EQ(0, sandboxed(variant->mode, extra, (char *const[]){ self->prog, "swap", NULL },
			       NULL, NULL, NULL, &s));
	want_stderr = 0;
	EXPECT_EQ(0, s.status);
	char *out = result_text(&s), deny[200];
	snprintf(deny, sizeof deny, "= -EACCES; by %s:", policy);
	EXPECT_EQ(3, lines(out, deny)) TH_LOG("%s", out);
	snprintf(deny, sizeof deny, ": path deny %s; from ", self->prog);
	EXPECT_EQ(3, lines(out, deny)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "readlinkat(AT_FDCWD, \"/proc/self/exe\"")) TH_LOG("%s", out);
	free(s.out);
	ASSERT_EQ(0, sandboxed(variant->mode, extra, (char *const[]){ self->prog, "swap", NULL },
			       NULL, NULL, NULL, &s));
	EXPECT_STREQ("name: readlink EACCES\nbytes: open EACCES\n", result_text(&s));
	free(s.out);
}

TEST_HARNESS_MAIN
