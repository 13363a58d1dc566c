/* What the policy parser refuses, each error with its exact FILE:LINE:COL
 * and nothing applied; the protections no file can remove; @include and
 * its errors; and the bounds of what the parser reads (invariant 9). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kselftest_harness.h>

#include "policy/policy.h"
#include "policy/t_table.h"

#include "build_dir.h"
#include "default_expected.h"
#include "policy_util.h"
#include "sandbox_util.h"
#include "selftests/build_dir.h"
#include "policyfile_util.h"

/* --- errors, each at its place --- */

TEST(unknown_system_call)
{
	EXPECT_ERROR("getppid: allow\n  opneat: allow\n",
		     "t.policy:2:3: unknown system call 'opneat'");
}

TEST(unknown_errno)
{
	EXPECT_ERROR("getppid: deny(EPREM)\n", "t.policy:1:15: unknown errno 'EPREM'");
	EXPECT_ERROR("getppid: return 0\n", "t.policy:1:17: errno 0 is out of range (1..4095)");
}

TEST(unknown_constant)
{
	EXPECT_ERROR("mmap: arg2 & (PROT_READ | PROT_EXECC) == 0\n",
		     "t.policy:1:27: unknown constant 'PROT_EXECC'");
}

TEST(bad_expressions)
{
	EXPECT_ERROR("lseek: arg2 = 1\n",
		     "t.policy:1:13: expected ==, !=, <=, <, &, or 'in' after arg2, found '='");
	EXPECT_ERROR("lseek: arg6 == 1\n",
		     "t.policy:1:8: no argument 'arg6': system calls have arg0..arg5");
	EXPECT_ERROR("lseek: arg2 == 1 || arg2 == 2\n",
		     "t.policy:1:18: '||' cannot be expressed; for values of one argument use "
		     "'argN in {a, b}'");
	EXPECT_ERROR("lseek: arg2 >= 1\n",
		     "t.policy:1:13: '>=' cannot be expressed: compare with ==, !=, <=, <, a mask, "
		     "or 'in'");
	EXPECT_ERROR("lseek: arg2 in {1, 100}\n",
		     "t.policy:1:16: the values of a set must lie within 64 of each other (0x1 and "
		     "0x64 do not)");
	EXPECT_ERROR("lseek: arg2 & 1 == 2\n",
		     "t.policy:1:17: 0x2 has bits outside the mask 0x1: always false");
	EXPECT_ERROR("lseek: arg2 == 1 && arg2 == 2\n",
		     "t.policy:1:21: contradicts the comparison at column 8: the call could never "
		     "pass; deny it instead");
	EXPECT_ERROR("lseek: alow\n",
		     "t.policy:1:8: expected an action (allow, deny(ERRNO), kill, trap, process, "
		     "emulate) or an expression, found 'alow'");
	EXPECT_ERROR("lseek allow\n",
		     "t.policy:1:7: expected ':' after the system call's name, found 'allow'");
	EXPECT_ERROR("lseek: arg2 == 1 junk\n", "t.policy:1:18: expected end of line, found 'junk'");
	EXPECT_ERROR("lseek: arg2 == 0x1g\n", "t.policy:1:16: bad number '0x1g'");
	EXPECT_ERROR("lseek: arg2 == 99999999999999999999\n",
		     "t.policy:1:16: bad number '99999999999999999999'");
	EXPECT_ERROR("lseek: arg2 == 1; deny(EPERM\n", "t.policy:1:29: expected ')', found end of line");
	EXPECT_ERROR("@inclde x\n", "t.policy:1:1: unknown directive '@inclde' (only @include)");
	EXPECT_ERROR("path read usr\n", "t.policy:1:11: 'usr' is not an absolute path");
	EXPECT_ERROR("path exec /usr\n",
		     "t.policy:1:6: expected 'read', 'write' or 'deny' after 'path', found 'exec'");
}

TEST(bad_path_deny_lines)
{
	EXPECT_ERROR("path deny\n", "t.policy:1:10: expected a path pattern");
	EXPECT_ERROR("path deny etc/shadow\n",
		     "t.policy:1:11: 'etc/shadow' is not an absolute path");
	EXPECT_ERROR(
		"getppid: allow\n path deny /etc/[ab\n",
		"t.policy:2:12: the pattern '/etc/[ab' has a '[' that no ']' closes in the same "
		"component");
	EXPECT_ERROR(
		"path deny /etc/[a/b]\n",
		"t.policy:1:11: the pattern '/etc/[a/b]' has a '[' that no ']' closes in the same "
		"component");
	EXPECT_ERROR(
		"path deny /etc/**/key\n",
		"t.policy:1:11: the pattern '/etc/**/key' has '**': '*' never matches '/', and a "
		"pattern denies everything under what it matches");
	EXPECT_ERROR("path deny /etc/../shadow\n",
		     "t.policy:1:11: the pattern '/etc/../shadow' has a '.' or '..' component");
	EXPECT_ERROR("path deny /etc/./shadow\n",
		     "t.policy:1:11: the pattern '/etc/./shadow' has a '.' or '..' component");
	EXPECT_ERROR("path deny /etc/x\\\n",
		     "t.policy:1:11: the pattern '/etc/x\\' ends in '\\', which quotes nothing");
	EXPECT_ERROR("path deny /etc/a\\/b\n",
		     "t.policy:1:11: the pattern '/etc/a\\/b' quotes a '/', which always separates "
		     "components");
	EXPECT_ERROR("path deny /etc/shadow extra\n",
		     "t.policy:1:23: expected end of line after a path pattern (paths cannot hold "
		     "spaces)");
}

TEST(duplicate_and_conflicting_lines)
{
	EXPECT_ERROR("getppid: allow\n\ngetppid: allow\n",
		     "t.policy:3:1: 'getppid' is already given at t.policy:1");
	EXPECT_ERROR("getppid: allow\ngetppid: deny(EPERM)\n",
		     "t.policy:2:1: 'getppid' is already given at t.policy:1");
	EXPECT_ERROR("default: kill\ndefault: deny(ENOSYS)\n",
		     "t.policy:2:1: the default is already given at t.policy:1");
	EXPECT_ERROR("default: allow\n",
		     "t.policy:1:10: the default may only be deny(ERRNO) or kill, not 'allow': a "
		     "call that no line names is never carried out");
}

TEST(memory_arguments_need_the_trusted_process)
{
	EXPECT_ERROR("openat: allow\n",
		     "t.policy:1:9: openat: 'allow' refused: its memory argument must be checked by "
		     "the trusted process; use 'process'");
	EXPECT_ERROR("rt_sigaction: trap\n",
		     "t.policy:1:15: rt_sigaction: 'trap' refused: its memory argument must be "
		     "checked by the trusted process; use 'process'");
	EXPECT_ERROR("openat: arg2 == 0\n",
		     "t.policy:1:9: openat: 'trap' refused: its memory argument must be checked by "
		     "the trusted process; use 'process'");
	EXPECT_ERROR("utimes: allow\n",
		     "t.policy:1:9: utimes: 'allow' refused: it takes a path, which only the trusted "
		     "process can check against the grants, and the trusted process has no check "
		     "for this call; deny it");
	EXPECT_ERROR("chown: allow\n",
		     "t.policy:1:8: chown: 'allow' refused: its memory argument must be checked by "
		     "the trusted process; use 'process'");
	/* a descriptor's file may be under a read grant: B checks it */
	EXPECT_ERROR("fchmod: allow\n",
		     "t.policy:1:9: fchmod: 'allow' refused: its descriptor may be of any file the "
		     "program opened, which only the trusted process can check against the write "
		     "grants; use 'process'");
	EXPECT_ERROR("fsetxattr: arg4 == 0\n",
		     "t.policy:1:12: fsetxattr: 'trap' refused: its descriptor may be of any file the "
		     "program opened, which only the trusted process can check against the write "
		     "grants; use 'process'");
	EXPECT_ERROR("utimes: process\n",
		     "t.policy:1:9: utimes: 'process' refused: the trusted process has no check for it");
	EXPECT_ERROR("getppid: process\n",
		     "t.policy:1:10: getppid: 'process' refused: the trusted process has no check "
		     "for it");
	EXPECT_ERROR("sendmsg: allow\n",
		     "t.policy:1:10: sendmsg: 'allow' refused: SCM_RIGHTS would hand U copies of "
		     "sandpit's descriptors, and its address may name a host no grant allows; use "
		     "'process'");
	EXPECT_ERROR("sendmmsg: allow\n",
		     "t.policy:1:11: sendmmsg: 'allow' refused: SCM_RIGHTS would hand U copies of "
		     "sandpit's descriptors, and the trusted process has no check for it; deny it");
}

TEST(inv7_calls_a_file_may_only_deny)
{
	EXPECT_ERROR("execve: allow\n",
		     "t.policy:1:9: execve: 'allow' refused, a policy may only deny or kill it: a new "
		     "program would run outside the sandbox (invariant 7)");
	EXPECT_ERROR("ptrace: trap\n",
		     "t.policy:1:9: ptrace: 'trap' refused, a policy may only deny or kill it: it "
		     "reaches other processes (B) or their memory (invariant 7)");
	EXPECT_ERROR("process_vm_writev: allow\n",
		     "t.policy:1:20: process_vm_writev: 'allow' refused, a policy may only deny or "
		     "kill it: it reaches other processes (B) or their memory (invariant 7)");
	EXPECT_ERROR("seccomp: allow\n",
		     "t.policy:1:10: seccomp: 'allow' refused, a policy may only deny or kill it: T "
		     "would install U's filter on itself (invariant 7)");
	/* close_range is never carried out as it is: T's emulation closes only
	 * the numbers around sandpit's descriptors */
	EXPECT_ERROR("close_range: allow\n",
		     "t.policy:1:14: close_range: 'allow' refused: it could close sandpit's "
		     "descriptors (invariant 3); T closes the numbers around them; use 'emulate'");
	{
		struct msgs m_;
		struct policy *p_ = policy_of_text("close_range: emulate\n", &m_, NULL);
		ASSERT_NE(NULL, p_) TH_LOG("%s", m_.text);
		EXPECT_EQ(POLICY_EMU, call(p_, "close_range")->cls);
		EXPECT_EQ(POLICY_EMU_CLOSE_RANGE, call(p_, "close_range")->err);
		policy_free(p_);
	}
	EXPECT_ERROR("close_range: trap\n",
		     "t.policy:1:14: close_range: 'trap' refused: it could close sandpit's "
		     "descriptors (invariant 3); T closes the numbers around them; use 'emulate'");
	EXPECT_ERROR("rseq: allow\n",
		     "t.policy:1:7: rseq: 'allow' refused: it would register T, and the kernel would "
		     "run U's abort handler in T (invariant 1); 'emulate' says yes without "
		     "registering; use 'emulate'");
	EXPECT_ERROR("getppid: emulate\n", "t.policy:1:10: getppid: sandpit has no emulation of it");
	EXPECT_ERROR("ioctl: allow\n",
		     "t.policy:1:8: ioctl: 'allow' refused: it would pass any arg1 unchecked; list "
		     "the values it may take (arg1 in {...})");

	/* deny and kill are always possible */
	struct msgs m;
	struct policy *p = policy_of_text("execve: deny(EPERM)\nptrace: kill\nopenat: deny(EACCES)\n", &m,
				 NULL);
	EXPECT_NE(NULL, p) TH_LOG("%s", m.text);
	policy_free(p);
}

TEST(every_error_is_reported_and_nothing_is_applied)
{
	struct msgs m;
	char err[512] = "";
	struct policy *p = (struct policy *)1;
	const char *text = "getppid: allow\n"
			   "bogus: allow\n"
			   "getpid: deny(EFOO)\n"
			   "getuid: allow\n"
			   "execve: allow\n";
	int rc;

	memset(&m, 0, sizeof(m));
	rc = policy_parse_text("t.policy", text, strlen(text), &p, collect, &m, err, sizeof(err));
	EXPECT_EQ(-ENOENT, rc); /* the first error's */
	EXPECT_EQ(NULL, p);
	EXPECT_EQ(3, m.n);
	EXPECT_STREQ("t.policy:2:1: unknown system call 'bogus'", err);
	EXPECT_NE(NULL, strstr(m.text, "t.policy:3:14: unknown errno 'EFOO'\n"));
	EXPECT_NE(NULL, strstr(m.text, "t.policy:5:9: execve: 'allow' refused"));
}

/* --- sandpit's protections --- */

TEST(inv3_protection_rules_cannot_be_removed)
{
	struct msgs m;
	struct policy *p = policy_of_text("close: allow\n"
				 "munmap: trap\n"
				 "mmap: arg2 & PROT_EXEC == 0; deny(EACCES)\n"
				 "dup2: arg1 <= 2\n"
				 "tgkill: allow\n"
				 "futex: arg1 & 0x7f == FUTEX_WAIT\n"
				 "prctl: allow\n"
				 "fcntl: allow\n"
				 "sendfile: allow\n"
				 "ioctl: arg1 == TCGETS\n",
				 &m, NULL);
	const struct policy_call *c;

	ASSERT_NE(NULL, p) TH_LOG("%s", m.text);
	c = call(p, "close"); /* allow of a guarded call: T checks the guard */
	EXPECT_EQ(POLICY_THREAD, c->cls);
	ASSERT_EQ(1, c->nrules);
	EXPECT_EQ(RULE_FD_FREE, c->rules[0].op);
	EXPECT_EQ(EBADF, c->rules[0].err);
	EXPECT_TRUE(has_rule(call(p, "munmap"), RULE_RANGE_FREE, 0));

	c = call(p, "mmap"); /* guards first, then the file's rule with the file's errno */
	ASSERT_EQ(3, c->nrules);
	EXPECT_EQ(RULE_FD_FREE, c->rules[0].op);
	EXPECT_EQ(4, c->rules[0].arg);
	EXPECT_EQ(RULE_RANGE_FREE, c->rules[1].op);
	EXPECT_EQ(EPERM, c->rules[1].err); /* not the file's EACCES */
	EXPECT_EQ(RULE_MASK_ZERO, c->rules[2].op);
	EXPECT_EQ(EACCES, c->err);

	c = call(p, "dup2");
	EXPECT_EQ(3, c->nrules);
	EXPECT_TRUE(has_rule(c, RULE_FD_FREE, 0));
	EXPECT_TRUE(has_rule(c, RULE_FD_FREE, 1));
	EXPECT_TRUE(has_rule(call(p, "tgkill"), RULE_SELF_PID, 0));
	EXPECT_TRUE(has_rule(call(p, "tgkill"), RULE_U_TID, 1));

	c = call(p, "futex"); /* the file's op excludes the requeues: only range_free is left */
	ASSERT_EQ(2, c->nrules);
	EXPECT_EQ(RULE_RANGE_FREE, c->rules[0].op);
	EXPECT_EQ(RULE_MASK_ZERO, c->rules[1].op);

	c = call(p, "prctl"); /* T must never install a filter on itself */
	ASSERT_EQ(4, c->nrules);
	EXPECT_EQ(RULE_MASKED_NE, c->rules[0].op);
	EXPECT_EQ((uint64_t)PR_SET_SECCOMP, c->rules[0].val);
	EXPECT_EQ(0xffffffffULL, c->rules[0].mask); /* the kernel reads an int */

	c = call(p, "fcntl"); /* an owner would send signals to B or T */
	ASSERT_EQ(3, c->nrules);
	EXPECT_EQ((uint64_t)F_SETOWN, c->rules[1].val);

	EXPECT_TRUE(has_rule(call(p, "sendfile"), RULE_FD_FREE, 0));
	EXPECT_TRUE(has_rule(call(p, "sendfile"), RULE_FD_FREE, 1));
	c = call(p, "ioctl"); /* TCGETS excludes the owner-setting requests */
	ASSERT_EQ(2, c->nrules);
	EXPECT_EQ(RULE_FD_FREE, c->rules[0].op);
	policy_free(p);
}

TEST(inv3_a_file_can_add_sandpits_checks_but_too_many_rules_is_an_error)
{
	struct msgs m;
	struct policy *p = policy_of_text("fstat: fd_free(arg0)\nmlock: range_free(arg0, arg1)\n", &m, NULL);

	ASSERT_NE(NULL, p) TH_LOG("%s", m.text);
	EXPECT_TRUE(has_rule(call(p, "fstat"), RULE_FD_FREE, 0));
	EXPECT_EQ(RULE_RANGE_FREE, call(p, "mlock")->rules[0].op);
	EXPECT_EQ(1, call(p, "mlock")->rules[0].arg2);
	policy_free(p);
	EXPECT_ERROR("futex: arg2 != 1 && arg2 != 2 && arg2 != 3\n",
		     "t.policy:1:8: futex: more than 8 rules, with the 6 sandpit adds to keep U "
		     "away from its memory and descriptors");
}

/* --- @include --- */

TEST(include_is_relative_to_the_including_file)
{
	struct tmp t;
	struct policy *p = NULL;
	struct msgs m = { 0 };
	char sub[PATH_MAX];

	tmp_init(&t);
	snprintf(sub, sizeof(sub), "%s/sub", t.dir);
	ASSERT_EQ(0, mkdir(sub, 0700));
	tmp_file(&t, "sub/common.policy", "getpid: allow\n@include ../leaf.policy\n");
	tmp_file(&t, "leaf.policy", "getuid: deny(EPERM)\n");
	const char *top = tmp_file(&t, "top.policy", "# top\n@include sub/common.policy\ngetppid: allow\n");
	EXPECT_EQ(0, policy_parse_file(top, &p, collect, &m, NULL, 0)) TH_LOG("%s", m.text);
	ASSERT_NE(NULL, p);
	EXPECT_EQ(POLICY_ALLOW, call(p, "getpid")->cls);
	EXPECT_EQ(POLICY_DENY, call(p, "getuid")->cls);
	EXPECT_EQ(POLICY_ALLOW, call(p, "getppid")->cls);
	policy_free(p);
	tmp_done(&t);
	rmdir(sub);
	rmdir(t.dir);
}

TEST(include_errors_name_the_included_file_and_line)
{
	struct tmp t;
	struct policy *p = NULL;
	struct msgs m = { 0 };
	char want[2 * PATH_MAX];

	tmp_init(&t);
	const char *inc = tmp_file(&t, "inc.policy", "getpid: allow\n  getpid: allow\n");
	const char *top = tmp_file(&t, "top.policy", "@include inc.policy\n");
	EXPECT_EQ(-EEXIST, policy_parse_file(top, &p, collect, &m, NULL, 0));
	EXPECT_EQ(NULL, p);
	snprintf(want, sizeof(want), "%s:2:3: 'getpid' is already given at %s:1\n", inc, inc);
	EXPECT_STREQ(want, m.text);

	memset(&m, 0, sizeof(m));
	top = tmp_file(&t, "missing.policy", "\n  @include nothere.policy\n");
	EXPECT_EQ(-ENOENT, policy_parse_file(top, &p, collect, &m, NULL, 0));
	snprintf(want, sizeof(want),
		 "%s:2:12: cannot include '%s/nothere.policy': No such file or directory\n", top,
		 t.dir);
	EXPECT_STREQ(want, m.text);

	memset(&m, 0, sizeof(m));
	top = tmp_file(&t, "dir.policy", "@include /tmp\n");
	EXPECT_EQ(-EINVAL, policy_parse_file(top, &p, collect, &m, NULL, 0));
	snprintf(want, sizeof(want), "%s:1:10: cannot include '/tmp': not a regular file\n", top);
	EXPECT_STREQ(want, m.text);
	tmp_done(&t);
}

TEST(include_cycles_are_errors_not_loops)
{
	struct tmp t;
	struct policy *p = NULL;
	struct msgs m = { 0 };
	char want[2 * PATH_MAX];

	tmp_init(&t);
	const char *a = tmp_file(&t, "a.policy", "getpid: allow\n@include b.policy\n");
	const char *b = tmp_file(&t, "b.policy", "getuid: allow\n@include a.policy\n");
	EXPECT_EQ(-ELOOP, policy_parse_file(a, &p, collect, &m, NULL, 0));
	EXPECT_EQ(NULL, p);
	snprintf(want, sizeof(want), "%s:2:10: include cycle: '%s/a.policy' is already being read\n",
		 b, t.dir);
	EXPECT_STREQ(want, m.text);

	memset(&m, 0, sizeof(m));
	const char *self = tmp_file(&t, "self.policy", "@include self.policy\n");
	EXPECT_EQ(-ELOOP, policy_parse_file(self, &p, collect, &m, NULL, 0));
	EXPECT_EQ(1, m.n);

	/* the same file twice, not nested, is no cycle: its lines are duplicates */
	memset(&m, 0, sizeof(m));
	tmp_file(&t, "leaf.policy", "getppid: allow\n");
	const char *twice = tmp_file(&t, "twice.policy", "@include leaf.policy\n@include leaf.policy\n");
	EXPECT_EQ(-EEXIST, policy_parse_file(twice, &p, collect, &m, NULL, 0));
	EXPECT_EQ(1, m.n);
	tmp_done(&t);
}

TEST(include_depth_is_limited)
{
	struct tmp t;
	struct policy *p = NULL;
	struct msgs m = { 0 };
	char name[32], text[64];

	tmp_init(&t);
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "d%d.policy", i);
		snprintf(text, sizeof(text), "@include d%d.policy\n", i + 1);
		tmp_file(&t, name, text);
	}
	EXPECT_EQ(-ELOOP, policy_parse_file(t.path[0], &p, collect, &m, NULL, 0));
	EXPECT_EQ(1, m.n);
	EXPECT_NE(NULL, strstr(m.text, "includes nest deeper than 8")) TH_LOG("%s", m.text);
	tmp_done(&t);
}

/* --- what the parser reads is bounded (invariant 9) --- */

struct deep {
	char *text;
	struct msgs m;
	int rc;
};

static void *parse_deep(void *arg)
{
	struct deep *d = arg;
	struct policy *p = NULL;

	memset(&d->m, 0, sizeof(d->m));
	d->rc = policy_parse_text("t.policy", d->text, strlen(d->text), &p, collect, &d->m, NULL, 0);
	policy_free(p);
	return NULL;
}

/* A 10 MB line of `prefix` then `unit` repeated, parsed on a 256 KiB
 * thread stack (what a program's thread may give sandpit_start). */
static void deep_line(struct __test_metadata *_metadata, const char *prefix, char unit,
		      const char *want)
{
	size_t n = 10 << 20, k = strlen(prefix);
	struct deep d = { .text = malloc(n + k + 1) };
	pthread_attr_t attr;
	pthread_t th;

	ASSERT_NE(NULL, d.text);
	memcpy(d.text, prefix, k);
	memset(d.text + k, unit, n);
	d.text[n + k] = 0;
	ASSERT_EQ(0, pthread_attr_init(&attr));
	ASSERT_EQ(0, pthread_attr_setstacksize(&attr, 256 << 10));
	ASSERT_EQ(0, pthread_create(&th, &attr, parse_deep, &d));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(-EINVAL, d.rc);
	EXPECT_EQ(1, d.m.n) TH_LOG("%.300s", d.m.text);
	EXPECT_STREQ(want, d.m.text);
	free(d.text);
}

TEST(inv9_a_10_mb_line_of_nesting_is_a_clean_error)
{
	deep_line(_metadata, "read: arg0 == ", '(', "t.policy:1:47: nested deeper than 32 levels\n");
	deep_line(_metadata, "read: arg0 == ", '-', "t.policy:1:47: nested deeper than 32 levels\n");
	deep_line(_metadata, "read: arg0 == ", '~', "t.policy:1:47: nested deeper than 32 levels\n");
	deep_line(_metadata, "read: ", '(', "t.policy:1:40: nested deeper than 32 levels\n");
	/* 32 levels are still fine */
	struct msgs m;
	struct policy *p = policy_of_text("read: arg0 == ((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))\n", &m, NULL);
	EXPECT_NE(NULL, p) TH_LOG("%s", m.text);
	policy_free(p);
}

TEST(inv9_include_bomb_stops_at_the_budget_and_names_the_chain)
{
	struct tmp t;
	struct policy *p = NULL;
	struct msgs m = { 0 };
	char name[32], text[2 * PATH_MAX + 8];

	/* 8 files, each including the next 10 times: 10^7 reads without a budget */
	tmp_init(&t);
	for (int i = 0; i < 8; i++) {
		text[0] = 0;
		for (int k = 0; k < 10 && i < 7; k++)
			snprintf(text + strlen(text), sizeof(text) - strlen(text),
				 "@include b%d.policy\n", i + 1);
		snprintf(name, sizeof(name), "b%d.policy", i);
		tmp_file(&t, name, i < 7 ? text : "# the leaf\n");
	}
	EXPECT_EQ(-E2BIG, policy_parse_file(t.path[0], &p, collect, &m, NULL, 0));
	EXPECT_EQ(NULL, p);
	EXPECT_EQ(1, m.n) TH_LOG("%s", m.text);
	EXPECT_NE(NULL, strstr(m.text, "read more than 256 files (in ")) TH_LOG("%s", m.text);
	snprintf(text, sizeof(text), "%s -> %s -> ", t.path[0], t.path[1]);
	EXPECT_NE(NULL, strstr(m.text, text)) TH_LOG("%s", m.text);
	tmp_done(&t);
}

/* 7 files each including the next twice, then a 1 MiB leaf read 64 times:
 * a leaf of one long comment passes the bytes budget, one of newlines the
 * lines budget first */
static void include_budget(struct __test_metadata *_metadata, char fill, const char *want)
{
	struct tmp t;
	struct policy *p = NULL;
	struct msgs m = { 0 };
	char name[32], text[64];
	char *leaf = malloc((1 << 20) + 1);

	ASSERT_NE(NULL, leaf);
	memset(leaf, fill, 1 << 20);
	leaf[0] = '#';
	leaf[(1 << 20) - 1] = '\n';
	leaf[1 << 20] = 0;
	tmp_init(&t);
	for (int i = 0; i < 7; i++) {
		snprintf(name, sizeof(name), "c%d.policy", i);
		snprintf(text, sizeof(text), "@include c%d.policy\n@include c%d.policy\n", i + 1, i + 1);
		tmp_file(&t, name, text);
	}
	tmp_file(&t, "c7.policy", leaf);
	free(leaf);
	EXPECT_EQ(-E2BIG, policy_parse_file(t.path[0], &p, collect, &m, NULL, 0));
	EXPECT_EQ(NULL, p);
	EXPECT_EQ(1, m.n) TH_LOG("%s", m.text);
	EXPECT_NE(NULL, strstr(m.text, want)) TH_LOG("%s", m.text);
	tmp_done(&t);
}

TEST(inv9_includes_stop_at_the_bytes_and_lines_budgets)
{
	include_budget(_metadata, 'x', "read more than 16777216 bytes");
	include_budget(_metadata, '\n', "read more than 2097152 lines");
}

TEST(a_missing_file_is_a_clear_error)
{
	struct policy *p = (struct policy *)1;
	char err[256];

	EXPECT_EQ(-ENOENT, policy_parse_file("/nonexistent/x.policy", &p, NULL, NULL, err,
					     sizeof(err)));
	EXPECT_EQ(NULL, p);
	EXPECT_STREQ("/nonexistent/x.policy: cannot read the policy: No such file or directory", err);
}

TEST_HARNESS_MAIN
