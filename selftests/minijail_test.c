/* One file over 700 lines: one subject, minijail's format from parse to
 * sandpit_start, and its tests share the conformance table's parser (mj_parse) and verdicts. */
/* minijail's policy files (policy/minijail.c): conformance cases written
 * from minijail0(5)'s grammar, each a policy, a call with its arguments and
 * the verdict, checked against both back ends (T's interpreter over the T
 * table, and the exported BPF program run as the kernel runs it); what is
 * translated is noted, what cannot be expressed is refused with FILE:LINE;
 * export-minijail's output reads back; a minijail file through
 * sandpit_start in both modes. */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kselftest_harness.h>

#include "policy/policy.h"
#include "policy/rule_eval.h"
#include "policy/t_table.h"

#include "build_dir.h"
#include "kernel_probe.h"
#include "policy_eval.h"
#include "policy_util.h"
#include "sandbox_util.h"

struct parsed {
	struct policy *p;
	struct msgs errors, notes;
};

/* Errors and notes go to one callback; they are told apart by "note:". */
static void sort_msg(void *ctx, const char *msg)
{
	struct parsed *r = ctx;

	collect(strstr(msg, ": note: ") ? &r->notes : &r->errors, msg);
}

static int mj_parse(const char *text, struct parsed *r)
{
	char err[512] = "";
	int rc;

	memset(r, 0, sizeof(*r));
	rc = policy_parse_minijail("t.policy", text, strlen(text), &r->p, sort_msg, sort_msg, r,
				   err, sizeof(err));
	if ((rc < 0) != (r->p == NULL) || (rc < 0 && strncmp(err, r->errors.text, strlen(err))))
		abort(); /* a policy only on success; err is the first error */
	return rc;
}

enum verdict_kind { V_ALLOW = 1, V_ERRNO, V_KILL, V_PROCESS };

struct verdict {
	int kind, err;
};

#define ALLOW   { V_ALLOW, 0 }
#define ERR(e)  { V_ERRNO, e }
#define KILL    { V_KILL, 0 }
#define PROCESS { V_PROCESS, 0 }

struct mj_case {
	const char *policy;
	const char *call;
	uint64_t a[6];
	struct verdict want;
};

/* Written from minijail0(5), SECCOMP_FILTER SYNTAX: atoms, their operators,
 * constant expressions, DNF, actions, return values; the unlisted call's
 * kill; and the translations of sandpit.policy(5), MINIJAIL POLICIES.
 * umask and getpriority are calls sandpit keeps no rules of its own on,
 * so the verdict is the expression's alone. */
static const struct mj_case cases[] = {
	/* "1" and allow: any use of the call */
	{ "getpid: 1\n", "getpid", { 0 }, ALLOW },
	{ "getpid: allow\n", "getpid", { 0 }, ALLOW },
	/* by default, blocked calls kill the process */
	{ "getpid: 1\n", "getppid", { 0 }, KILL },
	{ "getpid: kill\n", "getpid", { 0 }, KILL },
	{ "getpid: kill-process\n", "getpid", { 0 }, KILL },
	/* return {NUM}: the errno, by name or number */
	{ "getpid: return EBADF\n", "getpid", { 0 }, ERR(EBADF) },
	{ "getpid: return 5\n", "getpid", { 0 }, ERR(5) },
	/* an expression with a return clause: allowed when it holds */
	{ "umask: arg0 == 0; return EBADF\n", "umask", { 0 }, ALLOW },
	{ "umask: arg0 == 0; return EBADF\n", "umask", { 1 }, ERR(EBADF) },
	/* each operator, unsigned */
	{ "umask: arg0 != 022\n", "umask", { 022 }, ERR(EPERM) },
	{ "umask: arg0 != 022\n", "umask", { 077 }, ALLOW },
	{ "umask: arg0 < 8\n", "umask", { 7 }, ALLOW },
	{ "umask: arg0 < 8\n", "umask", { 8 }, ERR(EPERM) },
	{ "umask: arg0 <= 8\n", "umask", { 8 }, ALLOW },
	{ "umask: arg0 <= 8\n", "umask", { 9 }, ERR(EPERM) },
	{ "umask: arg0 <= 8\n", "umask", { (uint64_t)-1 }, ERR(EPERM) },
	{ "umask: arg0 > 7\n", "umask", { 8 }, ALLOW },
	{ "umask: arg0 > 7\n", "umask", { 7 }, ERR(EPERM) },
	{ "umask: arg0 >= 0x10\n", "umask", { 0x10 }, ALLOW },
	{ "umask: arg0 >= 0x10\n", "umask", { 0x0f }, ERR(EPERM) },
	{ "umask: arg0 >= 0x10\n", "umask", { 1ULL << 40 }, ALLOW },
	{ "umask: arg0 >= 0\n", "umask", { 0 }, ALLOW },
	/* a negative number is its two's complement */
	{ "umask: arg0 != -1\n", "umask", { (uint64_t)-1 }, ERR(EPERM) },
	{ "umask: arg0 != -1\n", "umask", { 0xffffffff }, ALLOW },
	/* & tests for a flag being set */
	{ "umask: arg0 & 2\n", "umask", { 3 }, ALLOW },
	{ "umask: arg0 & 2\n", "umask", { 5 }, ERR(EPERM) },
	/* in: the flags set are included in the policy's */
	{ "mmap: arg3 in MAP_PRIVATE|MAP_ANONYMOUS\n", "mmap",
	  { 0, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0 }, ALLOW },
	{ "mmap: arg3 in MAP_PRIVATE|MAP_ANONYMOUS\n", "mmap",
	  { 0, 4096, PROT_READ, MAP_SHARED | MAP_ANONYMOUS, (uint64_t)-1, 0 }, ERR(EPERM) },
	/* write^exec, the man page's example */
	{ "mprotect: arg2 in ~PROT_EXEC || arg2 in ~PROT_WRITE\n", "mprotect",
	  { 0x10000, 4096, PROT_READ | PROT_WRITE }, ALLOW },
	{ "mprotect: arg2 in ~PROT_EXEC || arg2 in ~PROT_WRITE\n", "mprotect",
	  { 0x10000, 4096, PROT_READ | PROT_EXEC }, ALLOW },
	{ "mprotect: arg2 in ~PROT_EXEC || arg2 in ~PROT_WRITE\n", "mprotect",
	  { 0x10000, 4096, PROT_WRITE | PROT_EXEC }, ERR(EPERM) },
	/* constant expressions: |, ~, parentheses, octal, hex */
	{ "umask: arg0 in (1|2)\n", "umask", { 3 }, ALLOW },
	{ "umask: arg0 in (1|2)\n", "umask", { 4 }, ERR(EPERM) },
	{ "umask: arg0 in ~(0x4|010)\n", "umask", { 3 }, ALLOW },
	{ "umask: arg0 in ~(0x4|010)\n", "umask", { 8 }, ERR(EPERM) },
	/* disjunctions of conjunctions */
	{ "getpriority: arg0 == 0 || arg0 == 1 || arg0 == 2\n", "getpriority", { 2 }, ALLOW },
	{ "getpriority: arg0 == 0 || arg0 == 1 || arg0 == 2\n", "getpriority", { 3 }, ERR(EPERM) },
	{ "umask: arg0 == 0 || arg0 & 1 && arg0 <= 3\n", "umask", { 0 }, ALLOW },
	{ "umask: arg0 == 0 || arg0 & 1 && arg0 <= 3\n", "umask", { 3 }, ALLOW },
	{ "umask: arg0 == 0 || arg0 & 1 && arg0 <= 3\n", "umask", { 2 }, ERR(EPERM) },
	{ "umask: arg0 == 0 || arg0 & 1 && arg0 <= 3\n", "umask", { 5 }, ERR(EPERM) },
	{ "getpriority: arg0 in ~1 || arg1 == 7; return EACCES\n", "getpriority", { 1, 7 }, ALLOW },
	{ "getpriority: arg0 in ~1 || arg1 == 7; return EACCES\n", "getpriority", { 2, 8 }, ALLOW },
	{ "getpriority: arg0 in ~1 || arg1 == 7; return EACCES\n", "getpriority", { 1, 8 },
	  ERR(EACCES) },
	/* an expression that can never hold */
	{ "umask: arg0 < 0\n", "umask", { 0 }, ERR(EPERM) },
	/* a call by number; a long line broken with \ ; comments */
	{ "39: 1\n", "getpid", { 0 }, ALLOW },
	{ "umask: arg0 == 1 || \\\n  arg0 == 2 # the rest\n", "umask", { 2 }, ALLOW },
	/* translated: trap and kill-thread kill; log allows; user-notify and
	 * trace are what the kernel answers with nobody attached */
	{ "getpid: trap\n", "getpid", { 0 }, KILL },
	{ "getpid: kill-thread\n", "getpid", { 0 }, KILL },
	{ "getpid: log\n", "getpid", { 0 }, ALLOW },
	{ "getpid: user-notify\n", "getpid", { 0 }, ERR(ENOSYS) },
	{ "getpid: trace\n", "getpid", { 0 }, ERR(ENOSYS) },
	/* translated: a memory argument goes to the trusted process; a call no
	 * policy may allow is refused */
	{ "openat: 1\n", "openat", { 0 }, PROCESS },
	{ "open: arg1 == 32768 || arg1 == 0\n", "open", { 0 }, PROCESS },
	{ "execve: 1\n", "execve", { 0 }, ERR(EPERM) },
	/* @default and @denylist */
	{ "@default kill-thread\ngetpid: 1\n", "getppid", { 0 }, KILL },
	{ "@denylist\ngetppid: return EXDEV\n", "getppid", { 0 }, ERR(EXDEV) },
	{ "@denylist\ngetppid: return EXDEV\n", "getpid", { 0 }, ALLOW },
	{ "@frequency ./x.frequency\ngetpid: 1\n", "getpid", { 0 }, ALLOW },
};

/* the world of these cases: sandpit's descriptor 900, P's pid 1000 */
#define SELF_RT { .pid = 1000, .fd_lo = 900, .fd_hi = 900 }

static const char *verdict_text(struct verdict v, char *buf, size_t n)
{
	static const char *const k[] = { "?", "allow", "errno", "kill", "process" };
	snprintf(buf, n, "%s %d", k[v.kind], v.err);
	return buf;
}

TEST(conformance_cases_in_both_back_ends)
{
	int tt_checked = 0, bpf_exact = 0, bpf_to_t = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct mj_case *c = &cases[i];
		const struct policy_runtime rt = SELF_RT;
		static struct tt_table t;
		static struct prog prog;
		struct parsed r;
		char err[256] = "", b1[32];
		int nr = nr_of(c->call);
		struct verdict got;

		ASSERT_EQ(0, mj_parse(c->policy, &r)) TH_LOG("case %zu: %s", i, r.errors.text);
		/* T's verdict */
		ASSERT_EQ(0, policy_compile_table(r.p, &t, err, sizeof(err))) TH_LOG("%s", err);
		const struct rule_world world = { .rt = SELF_RT, .t_facts = 1 };
		long v = tt_answer(&t, nr, c->a, &world);
		got = v == TT_ANS_EXEC ? (struct verdict)ALLOW :
		      v < 0 ? (struct verdict)ERR((int)-v) :
		      v == TT_ANS_KILL ? (struct verdict)KILL :
		      v == TT_ANS_B ? (struct verdict)PROCESS : (struct verdict){ 0, (int)v };
		EXPECT_EQ(c->want.kind, got.kind)
		TH_LOG("case %zu (%s %s): T says %s", i, c->policy, c->call,
		       verdict_text(got, b1, sizeof(b1)));
		EXPECT_EQ(c->want.err, got.err) TH_LOG("case %zu (%s %s)", i, c->policy, c->call);
		tt_checked++;

		/* the filter's: the same answer, or a trap to T where T decides */
		ASSERT_EQ(0, load_prog(r.p, &rt, 0, &prog));
		struct seccomp_data d = { .nr = nr, .arch = AUDIT_ARCH_X86_64 };
		memcpy(d.args, c->a, sizeof(d.args));
		uint32_t ret = run_prog(&prog, &d), want;
		switch (c->want.kind) {
		case V_ALLOW: want = SECCOMP_RET_ALLOW; break;
		case V_ERRNO: want = SECCOMP_RET_ERRNO | (uint32_t)c->want.err; break;
		/* a kill traps: T has B name the call, then kills P */
		case V_KILL: want = SECCOMP_RET_TRAP; break;
		default: want = SECCOMP_RET_TRAP; break;
		}
		if (ret == want) {
			bpf_exact++;
		} else {
			EXPECT_EQ(SECCOMP_RET_TRAP, ret)
			TH_LOG("case %zu (%s %s): filter says %#x, want %#x", i, c->policy, c->call,
			       ret, want);
			EXPECT_EQ(TT_THREAD, t.entries[nr].cls) TH_LOG("case %zu: a trap, not to T", i);
			bpf_to_t++;
		}
		policy_free(r.p);
	}
	TH_LOG("%d cases: T %d, filter exact %d, filter to T %d", (int)(sizeof(cases) /
	       sizeof(cases[0])), tt_checked, bpf_exact, bpf_to_t);
	EXPECT_EQ((int)(sizeof(cases) / sizeof(cases[0])), tt_checked);
	EXPECT_LE(40, bpf_exact); /* the filter decides most of them itself */
}

/* The one error a text must give, exactly. */
#define EXPECT_MJ_ERROR(policy_text, message)                                                  \
	do {                                                                            \
		struct parsed r_;                                                       \
		EXPECT_EQ(-EINVAL, mj_parse(policy_text, &r_));                                \
		EXPECT_EQ(NULL, r_.p);                                                  \
		EXPECT_EQ(1, r_.errors.n) TH_LOG("%s", r_.errors.text);                 \
		EXPECT_STREQ(message "\n", r_.errors.text);                             \
	} while (0)

TEST(what_sandpit_cannot_express_is_refused_with_file_and_line)
{
	EXPECT_MJ_ERROR("getpid: 1\numask: arg0 > 5\n",
			"t.policy:2: sandpit cannot express 'arg0 >= 0x6' (sandpit.policy(5), "
			"MINIJAIL POLICIES)");
	EXPECT_MJ_ERROR("getpriority: arg0 == 1 || arg1 == 2\n",
			"t.policy:1: sandpit cannot express 'arg0 == 0x1 || arg1 == 0x2' "
			"(sandpit.policy(5), MINIJAIL POLICIES)");
	EXPECT_MJ_ERROR("umask: arg0 == 1 || arg0 == 100\n",
			"t.policy:1: sandpit cannot express 'arg0 == 0x1 || arg0 == 0x64' "
			"(sandpit.policy(5), MINIJAIL POLICIES)");
	EXPECT_MJ_ERROR("umask: arg0 == 0; kill\n",
			"t.policy:1: only '; return ERRNO' may follow an expression");
	EXPECT_MJ_ERROR("getpid: 1\n\ngetpid: 1\n",
			"t.policy:3: 'getpid' given twice (first at t.policy:1)");
	EXPECT_MJ_ERROR("umask: arg6 == 0\n",
			"t.policy:1: an argument arg0..arg5 expected at 'arg6 == 0'");
	EXPECT_MJ_ERROR("umask: arg0 == NO_SUCH_FLAG\n",
			"t.policy:1: unknown constant 'NO_SUCH_FLAG'");
	EXPECT_MJ_ERROR("umask: return ENOTANERRNO\n", "t.policy:1: unknown errno 'ENOTANERRNO'");
	EXPECT_MJ_ERROR("@default allow\n", "t.policy:1: @default cannot allow");
	EXPECT_MJ_ERROR("getpid: 1\n@denylist\n", "t.policy:2: @denylist must be the first statement");
	EXPECT_MJ_ERROR("@denylist\nread: arg0 == 0; return EBADF\n",
			"t.policy:2: a @denylist policy may only give 'return ERRNO'");
	EXPECT_MJ_ERROR("@include /no/such/file.policy\n",
			"t.policy:1: cannot include '/no/such/file.policy': No such file or directory");
	/* what sandpit's own parser refuses in a translated line is given back
	 * at the minijail line, with the line it became */
	EXPECT_MJ_ERROR("getpid: 1\nsched_setaffinity: arg1 == 8\n",
			"t.policy:2: sched_setaffinity: 'trap' refused: it acts on the process arg0 "
			"names, which could be B; confine it to P (arg0 == $pid; 0 would name the "
			"thread that makes the call, T) (as sandpit's 'sched_setaffinity: "
			"arg1 == 0x8; deny(EPERM)')");
}

/* Invariant 9: what a minijail file may make the reader do is bounded, and
 * each bound is one clear FILE:LINE error. */
TEST(inv9_minijail_lines_nesting_and_expressions_are_bounded)
{
	size_t n = 90000;
	char *text = malloc(n + 64);
	struct parsed r;
	size_t k;

	ASSERT_NE(NULL, text);
	/* a logical line longer than 64 KiB, continuations joined */
	k = (size_t)sprintf(text, "getpid: 1\numask: arg0 == 0 || \\\n");
	while (k < n)
		k += (size_t)sprintf(text + k, "arg0 == 1 || \\\n");
	strcpy(text + k, "arg0 == 2\n");
	EXPECT_EQ(-EINVAL, mj_parse(text, &r));
	EXPECT_STREQ("t.policy:2: line longer than 65536 bytes\n", r.errors.text);
	/* constants nested 40 deep */
	k = (size_t)sprintf(text, "umask: arg0 == ");
	for (int i = 0; i < 40; i++)
		text[k++] = '(';
	text[k++] = '1';
	for (int i = 0; i < 40; i++)
		text[k++] = ')';
	strcpy(text + k, "\n");
	EXPECT_EQ(-EINVAL, mj_parse(text, &r));
	EXPECT_STREQ("t.policy:1: constants nest more than 32 deep\n", r.errors.text);
	/* 65 comparisons */
	k = (size_t)sprintf(text, "umask: arg0 != 0");
	for (int i = 1; i < 65; i++)
		k += (size_t)sprintf(text + k, " && arg0 != %d", i);
	strcpy(text + k, "\n");
	EXPECT_EQ(-EINVAL, mj_parse(text, &r));
	EXPECT_STREQ("t.policy:1: more than 64 comparisons in one expression\n", r.errors.text);
	/* || over && that would give more than 64 alternatives */
	EXPECT_MJ_ERROR("umask: arg0 == 0 && arg1 == 0 && arg2 == 0 || arg0 == 1 && arg1 == 1 && "
			"arg2 == 1 || arg0 == 2 && arg1 == 2 && arg2 == 2 || arg0 == 3 && arg1 == 3 "
			"&& arg2 == 3\n",
			"t.policy:1: sandpit cannot express this expression: distributing its || "
			"over && gives more than 64 clauses");
	/* a NUL byte */
	memcpy(text, "getpid: 1\nget\0pid: 1\n", 21);
	memset(&r, 0, sizeof(r));
	EXPECT_EQ(-EINVAL, policy_parse_minijail("t.policy", text, 21, &r.p, sort_msg, sort_msg, &r,
						 NULL, 0));
	EXPECT_STREQ("t.policy:2: a NUL byte\n", r.errors.text);
	/* 150 bad lines: 100 errors, then one that says where it gave up
	 * (the fuzzer found the last one without its line) */
	k = 0;
	for (int i = 0; i < 150; i++)
		k += (size_t)sprintf(text + k, "08\n");
	EXPECT_EQ(-EINVAL, mj_parse(text, &r));
	int lines = 0;
	for (const char *c = r.errors.text; (c = strchr(c, '\n')); c++)
		lines++;
	EXPECT_EQ(101, lines);
	EXPECT_NE(NULL, strstr(r.errors.text, "t.policy:100: a system call name or number expected "
					      "at '08'\nt.policy:101: too many errors, giving up\n"))
	TH_LOG("%s", r.errors.text);
	free(text);
}

TEST(includes_are_one_level_as_in_minijail)
{
	char dir[] = "/tmp/minijail_test.XXXXXX", a[64], b[64], text[256];
	struct parsed r;
	FILE *f;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.policy", dir);
	snprintf(b, sizeof(b), "%s/b.policy", dir);
	f = fopen(a, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "getppid: return EXDEV\n@include %s\n", b);
	fclose(f);
	f = fopen(b, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "getpid: 1\n");
	fclose(f);
	snprintf(text, sizeof(text), "@include %s\numask: 1\n", a);
	/* a file that includes another is not itself includable */
	EXPECT_EQ(-EINVAL, mj_parse(text, &r));
	EXPECT_EQ(1, r.errors.n);
	EXPECT_NE(NULL, strstr(r.errors.text, "/a.policy:2: @include nested too deep"))
	TH_LOG("%s", r.errors.text);
	/* one level works, and a line of the included file is named by it */
	snprintf(text, sizeof(text), "@include %s\numask: 1\n", b);
	ASSERT_EQ(0, mj_parse(text, &r)) TH_LOG("%s", r.errors.text);
	EXPECT_EQ(POLICY_ALLOW, policy_call(r.p, nr_of("getpid"))->cls);
	policy_free(r.p);
	snprintf(text, sizeof(text), "@include %s\ngetpid: 1\n", b);
	EXPECT_EQ(-EINVAL, mj_parse(text, &r));
	EXPECT_NE(NULL, strstr(r.errors.text, "t.policy:2: 'getpid' given twice (first at "))
	TH_LOG("%s", r.errors.text);
	EXPECT_NE(NULL, strstr(r.errors.text, "/b.policy:1)"));
	unlink(a);
	unlink(b);
	rmdir(dir);
}

/* A file of a hundred nested @includes (an include bomb, one level deep
 * as minijail reads it) is one error, said once, with the include that
 * led there; a second such file is its own error. */
TEST(a_nested_include_bomb_is_said_once_with_its_chain)
{
	char dir[] = "/tmp/minijail_test.XXXXXX", a[64], b[64], c[64], text[256];
	struct parsed r;
	FILE *f;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.policy", dir);
	snprintf(b, sizeof(b), "%s/b.policy", dir);
	snprintf(c, sizeof(c), "%s/c.policy", dir);
	f = fopen(a, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "getpid: 1\n");
	for (int i = 0; i < 100; i++)
		fprintf(f, "@include %s\n", a);
	fclose(f);
	f = fopen(b, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "@include %s\n@include %s\n", c, c);
	fclose(f);
	f = fopen(c, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "getppid: 1\n");
	fclose(f);
	snprintf(text, sizeof(text), "umask: 1\n@include %s\n", a);
	EXPECT_EQ(-EINVAL, mj_parse(text, &r));
	EXPECT_EQ(1, r.errors.n) TH_LOG("%s", r.errors.text);
	char want[512];
	snprintf(want, sizeof(want), "%s:2: @include nested too deep (minijail includes one level): "
		 "t.policy:2 includes %s, which includes %s (said once a file)\n", a, a, a);
	EXPECT_STREQ(want, r.errors.text);
	/* two such files: two errors, each naming its own chain */
	snprintf(text, sizeof(text), "@include %s\numask: 1\n@include %s\n", a, b);
	EXPECT_EQ(-EINVAL, mj_parse(text, &r));
	EXPECT_EQ(2, r.errors.n) TH_LOG("%s", r.errors.text);
	snprintf(want, sizeof(want), "%s:1: @include nested too deep (minijail includes one level): "
		 "t.policy:3 includes %s, which includes %s (said once a file)\n", b, b, c);
	EXPECT_NE(NULL, strstr(r.errors.text, want)) TH_LOG("%s", r.errors.text);
	unlink(a);
	unlink(b);
	unlink(c);
	rmdir(dir);
}

/* More nested @includes in one file than a byte counts: still said once. */
TEST(three_hundred_nested_includes_in_one_file_are_said_once)
{
	char dir[] = "/tmp/minijail_test.XXXXXX", a[64], text[256];
	struct parsed r;
	FILE *f;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.policy", dir);
	f = fopen(a, "w");
	ASSERT_NE(NULL, f);
	for (int i = 0; i < 300; i++)
		fprintf(f, "@include %s\n", a);
	fclose(f);
	snprintf(text, sizeof(text), "@include %s\n", a);
	EXPECT_EQ(-EINVAL, mj_parse(text, &r));
	EXPECT_EQ(1, r.errors.n) TH_LOG("%s", r.errors.text);
	unlink(a);
	rmdir(dir);
}

TEST(every_translation_is_noted)
{
	struct parsed r;

	ASSERT_EQ(0, mj_parse("@frequency ./a.frequency\n@frequency ./b.frequency\n"
			      "getpid: trap\nopenat: 1\nexecve: 1\nsocket: user-notify\n"
			      "brk: log\numask: arg0 == 0\ngetppid: arg0 == 0\nmseal: 1\n",
			      &r));
	EXPECT_EQ(0, r.errors.n);
	EXPECT_EQ(8, r.notes.n) TH_LOG("%s", r.notes.text);
	static const char *const want[] = {
		"t.policy:1: note: @frequency is ignored",
		"t.policy:3: note: getpid: trap (SIGSYS, which sandpit keeps for itself) becomes kill",
		"t.policy:4: note: openat: its memory argument is checked by the trusted process",
		"t.policy:5: note: execve: allowed by minijail, refused by sandpit",
		"t.policy:6: note: socket: user-notify becomes deny(ENOSYS)",
		"t.policy:7: note: brk: log is allow",
		"t.policy:8: note: a call that fails an expression without '; return' gets EPERM",
		"t.policy:10: note: 'mseal' is not a system call libseccomp knows",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		EXPECT_NE(NULL, strstr(r.notes.text, want[i])) TH_LOG("missing: %s", want[i]);
	}
	EXPECT_EQ(NULL, strstr(r.notes.text, "t.policy:2:")); /* @frequency: said once */
	policy_free(r.p);
}

TEST(the_format_is_detected_and_can_be_forced)
{
	static const char mj[] = "getpid: 1\numask: arg0 == 0 || arg0 == 1\n";
	static const char both[] = "getpid: 1\n";
	char path[] = "/tmp/minijail_test.XXXXXX";
	struct policy *p = NULL;
	char err[256];
	int fd;

	EXPECT_EQ(1, policy_text_is_minijail(mj, strlen(mj)));
	EXPECT_EQ(1, policy_text_is_minijail("@denylist\n", 10));
	EXPECT_EQ(1, policy_text_is_minijail("39: kill-process\n", 17));
	EXPECT_EQ(0, policy_text_is_minijail(both, strlen(both)));
	EXPECT_EQ(0, policy_text_is_minijail("a: 1 || 2\ndefault: deny(EPERM)\n", 31));
	/* a file: policy_parse_file, and so sandpit_start, read it as minijail's:
	 * the call no line names kills */
	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)strlen(mj), write(fd, mj, strlen(mj)));
	close(fd);
	ASSERT_EQ(0, policy_parse_file(path, &p, NULL, NULL, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(POLICY_KILL, policy_call(p, nr_of("getppid"))->cls);
	policy_free(p);
	/* forced: the common subset read as minijail's (kill) or sandpit's (ENOSYS) */
	fd = open(path, O_WRONLY | O_TRUNC);
	ASSERT_EQ((ssize_t)strlen(both), write(fd, both, strlen(both)));
	close(fd);
	ASSERT_EQ(0, policy_parse_file(path, &p, NULL, NULL, err, sizeof(err)));
	EXPECT_EQ(POLICY_DENY, policy_call(p, nr_of("getppid"))->cls);
	EXPECT_EQ(ENOSYS, policy_call(p, nr_of("getppid"))->err);
	policy_free(p);
	policy_set_file_format(POLICY_FORMAT_MINIJAIL);
	ASSERT_EQ(0, policy_parse_file(path, &p, NULL, NULL, err, sizeof(err)));
	policy_set_file_format(POLICY_FORMAT_AUTO);
	EXPECT_EQ(POLICY_KILL, policy_call(p, nr_of("getppid"))->cls);
	policy_free(p);
	unlink(path);
}

/* export-minijail: the default policy written in minijail's format reads
 * back, call by call the same or refused where minijail cannot say it. */
TEST(export_minijail_reads_back)
{
	struct policy *def = default_policy(), *back = NULL;
	char *text = NULL, err[512] = "";
	size_t len = 0;
	struct msgs m = { 0 };
	FILE *f = open_memstream(&text, &len);
	int same = 0, refused = 0, process = 0;

	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, policy_export_minijail(def, f));
	fclose(f);
	EXPECT_NE(NULL, strstr(text, "\nexecve: return EACCES\n"));
	EXPECT_NE(NULL, strstr(text, "\nopenat: allow\n"));
	EXPECT_NE(NULL, strstr(text, "# openat: sandpit's trusted process checks its path"));
	ASSERT_EQ(0, policy_parse_minijail("export.policy", text, len, &back, collect, NULL, &m, err,
					   sizeof(err)))
	TH_LOG("%s", m.text);
	for (int nr = 0; nr < POLICY_DEFAULT_NR; nr++) {
		const struct policy_call *a = policy_call(def, nr), *b = policy_call(back, nr);
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);

		if (!name)
			continue;
		free(name);
		if (a->cls == b->cls && a->err == b->err && a->nrules == b->nrules)
			same++;
		else if (b->cls == POLICY_DENY && (a->cls == POLICY_THREAD || a->cls == POLICY_EMU))
			refused++; /* said in a comment, refused: never looser */
		else if (a->cls == POLICY_PROCESS && a->proc.kind == PK_RLIMIT &&
			 (b->cls == POLICY_DENY || b->cls == POLICY_THREAD))
			refused++; /* limits: read only, where B would let them be lowered */
		else if (a->cls == POLICY_PROCESS && a->proc.kind == PK_NET &&
			 (b->cls == POLICY_DENY || b->cls == POLICY_THREAD))
			refused++; /* socket: AF_UNIX only, where B follows the grants */
		else {
			EXPECT_EQ(a->cls, b->cls) TH_LOG("call %d: %d/%d, back %d/%d", nr, a->cls,
							 a->err, b->cls, b->err);
		}
		process += a->cls == POLICY_PROCESS && b->cls == POLICY_PROCESS;
	}
	TH_LOG("%d calls the same, %d refused", same, refused);
	EXPECT_LE(300, same);
	EXPECT_LE(10, process);
	free(text);
	policy_free(def);
	policy_free(back);
}

static int denylisted(void *arg)
{
	(void)arg;
	if (syscall(SYS_getppid) != -1 || errno != EXDEV)
		return 1;
	if (syscall(SYS_getpid) <= 0)
		return 2;
	return 0;
}

#ifdef __SANITIZE_ADDRESS__
#define NOT_UNDER_ASAN() SKIP(return, "the sandbox does not run under ASan")
static const int under_asan = 1;
#else
#define NOT_UNDER_ASAN() do { } while (0)
static const int under_asan = 0;
#endif

TEST(sandpit_start_takes_a_minijail_file_in_both_modes)
{
	static const char text[] = "@denylist\ngetppid: return EXDEV\n";
	static const char *const modes[] = { "strict", "filter" };
	char path[] = "/tmp/minijail_test.XXXXXX";
	int fd;

	NOT_UNDER_ASAN();
	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)strlen(text), write(fd, text, strlen(text)));
	close(fd);
	for (int i = 0; i < 2; i++) {
		struct sandpit_options o = { .policy_file = path };
		setenv("SANDPIT_MODE", modes[i], 1);
		EXPECT_EQ(0, outcome(run_sandboxed_opts(denylisted, NULL, &o, 20)))
		TH_LOG("%s mode", modes[i]);
	}
	unlink(path);
}

static int starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* A minijail file's lines keep their own FILE:LINE in the compiled policy
 * (not the translation's), so strict mode's refusal (and --log=denials)
 * names the line the user wrote. */
TEST(minijail_lines_keep_their_line_and_strict_mode_names_it)
{
	struct parsed r;
	char err[512];

	ASSERT_EQ(0, mj_parse("# read rules\nwrite: 1\nread: arg0 == 0\nexit: 1\n"
			      "rt_sigreturn: 1\nexit_group: 1\n",
			      &r));
	EXPECT_EQ(2, policy_call(r.p, nr_of("write"))->line);
	EXPECT_EQ(3, policy_call(r.p, nr_of("read"))->line);
	EXPECT_STREQ("t.policy", policy_call(r.p, nr_of("read"))->file);
	EXPECT_EQ(-EOPNOTSUPP, policy_strict_check(r.p, "t.policy", NULL, NULL, err, sizeof(err)));
	EXPECT_TRUE(starts_with(err, "t.policy:3: read: strict mode cannot enforce a rule on its "
				  "arguments")) TH_LOG("%s", err);
	policy_free(r.p);

	/* minijail's kill of unnamed calls stands for exit: no line gives it */
	ASSERT_EQ(0, mj_parse("write: 1\nread: 1\nrt_sigreturn: 1\n", &r));
	EXPECT_EQ(-EOPNOTSUPP, policy_strict_check(r.p, "t.policy", NULL, NULL, err, sizeof(err)));
	EXPECT_TRUE(starts_with(err, "t.policy: exit: no line names it, and strict mode cannot "
				  "enforce the default, kill:")) TH_LOG("%s", err);
	policy_free(r.p);
	ASSERT_EQ(0, mj_parse("write: 1\nread: 1\nrt_sigreturn: 1\n@default kill-process\n", &r));
	EXPECT_EQ(-EOPNOTSUPP, policy_strict_check(r.p, "t.policy", NULL, NULL, err, sizeof(err)));
	EXPECT_TRUE(starts_with(err, "t.policy:4: exit: no line names it")) TH_LOG("%s", err);
	policy_free(r.p);

	/* @denylist: the default policy's lines, and the file's own */
	ASSERT_EQ(0, mj_parse("@denylist\ngetppid: return EXDEV\nwrite: return 1\n", &r));
	EXPECT_EQ(3, policy_call(r.p, nr_of("write"))->line);
	EXPECT_EQ(-EOPNOTSUPP, policy_strict_check(r.p, "t.policy", NULL, NULL, err, sizeof(err)));
	EXPECT_STREQ("t.policy:3: write: strict mode cannot enforce deny(EPERM): seccomp strict "
		     "mode lets the program make write itself; allow it, or use filter mode", err);
	policy_free(r.p);
	ASSERT_EQ(0, mj_parse("@denylist\ngetppid: return EXDEV\n", &r));
	EXPECT_EQ(0, policy_strict_check(r.p, "t.policy", NULL, NULL, err, sizeof(err)));
	policy_free(r.p);
}

/* Writes to fd 2 through libc and through a site the patcher cannot patch;
 * the attempts that came back, and their results */
struct write_attack {
	int attempts;
	long libc, missed;
};

static int denylisted_write(void *arg)
{
	struct write_attack *a = arg;
	missed_fn f = missed_code(SYS_write);

	if (!f)
		return 1;
	if (syscall(SYS_getppid) != -1 || errno != EXDEV)
		return 2;
	a->libc = write(2, "leak\n", 5) < 0 ? -errno : 5;
	a->attempts++;
	a->missed = f(2, (long)"leak\n", 5);
	a->attempts++;
	return a->libc == -EPERM && a->missed == -EPERM ? 0 : 3;
}

/* `@denylist` + `write: return 1`: minijail refuses every write; strict
 * mode would let a missed one through to the kernel, so it refuses the
 * file (asked for, or auto's choice on a legacy kernel), naming its line;
 * filter mode refuses the writes, patched site or not, with EPERM. */
TEST(denylisted_write_is_refused_for_strict_mode_and_enforced_in_filter_mode)
{
	static const char text[] = "@denylist\ngetppid: return EXDEV\nwrite: return 1\n";
	struct write_attack *a = shared_page(sizeof(*a));
	char path[] = "/tmp/minijail_test.XXXXXX", want[128];
	int fd;

	NOT_UNDER_ASAN();
	ASSERT_NE(NULL, a);
	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)strlen(text), write(fd, text, strlen(text)));
	close(fd);
	struct sandpit_options o = { .policy_file = path };
	snprintf(want, sizeof(want), "%s:3: write: strict mode cannot enforce deny(EPERM): ", path);
	strict_refuses_filter_enforces(_metadata, &o, want, denylisted_write, a, sizeof(*a), 2);
	unlink(path);
}

/* The command: policy check notes and refuses with FILE:LINE, export-minijail
 * reads back, --policy-format forces the format, sandpit run enforces a
 * minijail file in both modes. */
static const char *tmp_policy(char *path, size_t n, const char *name, const char *text)
{
	FILE *f;

	snprintf(path, n, "/tmp/minijail_test.%d.%s", (int)getpid(), name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		abort();
	return path;
}

/* empties a capture file for the next command (the offset is shared with it) */
static void reset(int fd)
{
	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
		abort();
}

TEST(cli_check_export_and_run)
{
	char cli[PATH_MAX], good[128], bad[128], deny[128], exported[128];
	char out[65536], errs[4096];
	int fo = memfd_create("out", 0), fe = memfd_create("err", 0);

	snprintf(cli, sizeof(cli), "%s/sandpit", bindir);
	if (access(cli, X_OK))
		SKIP(return, "build/sandpit is not built");
	ASSERT_LE(0, fo);
	ASSERT_LE(0, fe);
	tmp_policy(good, sizeof(good), "good.policy",
		   "read: 1\nopenat: 1\ngetpid: trap\numask: arg0 == 0 || arg0 == 1\n");
	tmp_policy(bad, sizeof(bad), "bad.policy", "read: 1\numask: arg0 > 5\n");
	tmp_policy(deny, sizeof(deny), "deny.policy", "@denylist\nuname: return EPERM\n");

	const char *check_good[] = { cli, "policy", "check", good, NULL };
	EXPECT_EQ(0, run_cli(cli, check_good, fo, fe));
	read_all(fe, errs, sizeof(errs));
	char want[256];
	snprintf(want, sizeof(want), "%s:2: note: openat: its memory argument", good);
	EXPECT_NE(NULL, strstr(errs, want)) TH_LOG("%s", errs);
	snprintf(want, sizeof(want), "%s:3: note: getpid: trap", good);
	EXPECT_NE(NULL, strstr(errs, want)) TH_LOG("%s", errs);

	const char *check_bad[] = { cli, "policy", "check", bad, NULL };
	reset(fe);
	EXPECT_EQ(1, run_cli(cli, check_bad, fo, fe));
	read_all(fe, errs, sizeof(errs));
	snprintf(want, sizeof(want), "%s:2: sandpit cannot express 'arg0 >= 0x6'", bad);
	EXPECT_NE(NULL, strstr(errs, want)) TH_LOG("%s", errs);

	/* the default in minijail's format, then read back as minijail's */
	const char *export[] = { cli, "policy", "export-minijail", NULL };
	reset(fo);
	EXPECT_EQ(0, run_cli(cli, export, fo, fe));
	read_all(fo, out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "\nopenat: allow\n"));
	tmp_policy(exported, sizeof(exported), "exported.policy", out);
	const char *check_exported[] = { cli, "policy", "--policy-format=minijail", "check",
					 exported, NULL };
	reset(fe);
	EXPECT_EQ(0, run_cli(cli, check_exported, fo, fe));
	read_all(fe, errs, sizeof(errs));
	EXPECT_EQ(NULL, strstr(errs, "error")) TH_LOG("%s", errs);

	/* run: uname refused by the minijail file, in both modes (not with
	 * the CLI built under ASan: the sandbox does not run under it) */
	static const char *const modes[] = { "--mode=strict", "--mode=filter" };
	for (int i = 0; i < 2 && !under_asan; i++) {
		char pol[160];
		snprintf(pol, sizeof(pol), "--policy=%s", deny);
		const char *run[] = { cli, "run", modes[i], pol, "--", "/bin/uname", NULL };
		reset(fe);
		EXPECT_EQ(1, run_cli(cli, run, fo, fe)) TH_LOG("%s", modes[i]);
		read_all(fe, errs, sizeof(errs));
		EXPECT_NE(NULL, strstr(errs, "Operation not permitted")) TH_LOG("%s: %s", modes[i], errs);
		snprintf(want, sizeof(want), "sandpit: %s: minijail's format, 1 translation", deny);
		EXPECT_NE(NULL, strstr(errs, want)) TH_LOG("%s: %s", modes[i], errs);
	}
	/* forced to sandpit's format, the same file is an error of sandpit's */
	char pol[160];
	snprintf(pol, sizeof(pol), "--policy=%s", deny);
	const char *forced[] = { cli, "run", "--policy-format=sandpit", pol, "--", "/bin/uname", NULL };
	reset(fe);
	EXPECT_EQ(125, run_cli(cli, forced, fo, fe));
	read_all(fe, errs, sizeof(errs));
	EXPECT_NE(NULL, strstr(errs, "unknown directive '@denylist'")) TH_LOG("%s", errs);

	close(fo);
	close(fe);
	unlink(good);
	unlink(bad);
	unlink(deny);
	unlink(exported);
}

/* A refusal under a minijail file names the line of that file that
 * refused it, counted as an editor counts: comments, blank lines and a
 * line joined by '\\' before it all count.  Both the translated file
 * (an allow-list) and an @denylist one, in both modes, through --log and
 * through the closing line. */
TEST(a_refusal_names_its_exact_minijail_line)
{
	NOT_UNDER_ASAN();
	/* getppid's line is the 12th of each */
	static const char allow_list[] =
		"# tiny, in minijail's format\n"
		"\n"
		"# read and write\n"
		"read: 1\n"
		"write: \\\n"
		"  1\n"
		"\n"
		"exit_group: 1   # the end\n"
		"exit: 1\n"
		"rt_sigreturn: 1\n"
		"# the one it refuses\n"
		"getppid: return EPERM\n"
		"# after it\n";
	static const char deny_list[] =
		"@denylist\n# c\n\n# c\n\n\n\n\n\n\n\ngetppid: return EPERM\n\n";
	static const char *const texts[] = { allow_list, deny_list };
	static const char *const modes[] = { "--mode=strict", "--mode=filter" };
	char cli[PATH_MAX], tiny[PATH_MAX], path[128], pol[160], want[256], errs[4096];
	int fo = memfd_create("out", 0), fe = memfd_create("err", 0), runs = 0;

	snprintf(cli, sizeof(cli), "%s/sandpit", bindir);
	snprintf(tiny, sizeof(tiny), "%s/selftests/tiny", bindir);
	if (access(cli, X_OK) || access(tiny, X_OK))
		SKIP(return, "build/sandpit or build/selftests/tiny is not built");
	ASSERT_LE(0, fo);
	ASSERT_LE(0, fe);
	for (int t = 0; t < 2; t++) {
		struct parsed r;
		ASSERT_EQ(0, mj_parse(texts[t], &r));
		EXPECT_EQ(12, policy_call(r.p, nr_of("getppid"))->line) TH_LOG("file %d", t);
		policy_free(r.p);
		tmp_policy(path, sizeof(path), t ? "deny_line.policy" : "allow_line.policy", texts[t]);
		snprintf(pol, sizeof(pol), "--policy=%s", path);
		for (int i = 0; i < 2; i++) {
			if (i && !kernel_has_filter())
				continue;
			const char *logged[] = { cli, "run", modes[i], pol, "--log=denials", "--",
						 tiny, "refused", NULL };
			const char *closing[] = { cli, "run", modes[i], pol, "--", tiny, "refused", NULL };
			reset(fe);
			EXPECT_EQ(4, run_cli(cli, logged, fo, fe)) TH_LOG("%s %s", modes[i], path);
			read_all(fe, errs, sizeof(errs));
			snprintf(want, sizeof(want), "sandpit: denied getppid() = -EPERM; by %s:12", path);
			EXPECT_NE(NULL, strstr(errs, want)) TH_LOG("%s: %s", modes[i], errs);
			reset(fe);
			EXPECT_EQ(4, run_cli(cli, closing, fo, fe)) TH_LOG("%s %s", modes[i], path);
			read_all(fe, errs, sizeof(errs));
			snprintf(want, sizeof(want), "sandpit: 1 call refused; the first: getppid() = "
				 "-EPERM, by %s:12;", path);
			EXPECT_NE(NULL, strstr(errs, want)) TH_LOG("%s: %s", modes[i], errs);
			runs++;
		}
		unlink(path);
	}
	TH_LOG("%d runs of tiny, each refused getppid once", runs);
	close(fo);
	close(fe);
}

TEST_HARNESS_MAIN
