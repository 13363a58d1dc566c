/* The guard is complete by construction: every call libseccomp knows is
 * classified in policy/syscall_kinds.c, the guard of each is what its
 * kinds ask for, and no policy file can allow a call the kinds mark unsafe
 * (invariants 1, 3, 4, 7).  Last, the attack a review made: a file that
 * allows prlimit64 let U set another process's RLIMIT_NOFILE. */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <kselftest_harness.h>

#include "policy/policy.h"

#include "policy_util.h"
#include "sandbox_util.h"

/* numbers an x86-64 libseccomp may name (x32 and int $0x80 have others) */
#define WALK_NR 1024

/* 0 and the policy, or -errno and the messages in m. */
static int parse(const char *text, struct msgs *m, struct policy **p)
{
	char err[512] = "";

	memset(m, 0, sizeof(*m));
	*p = NULL;
	return policy_parse_text("t.policy", text, strlen(text), p, collect, m, err, sizeof(err));
}

static int has_rule(const struct policy_guard *g, int op, int arg)
{
	for (int i = 0; g && i < g->nrules; i++)
		if (g->rules[i].op == op && g->rules[i].arg == arg)
			return 1;
	return 0;
}

/* What the kinds say a file may never allow as it is: the call would run
 * with something no rule of sandpit's keeps to U. */
static const char *unsafe(const struct syscall_kinds *k, const struct policy_guard *g)
{
	unsigned covered = g && g->kind == GUARD_RULES ? g->covers : 0;

	/* the metadata calls on a descriptor: its file may be a read grant's */
	if (g && g->kind == GUARD_NEEDS_B && g->proc && g->proc->kind == PK_PATH_OP &&
	    g->proc->path_arg == POLICY_NOARG)
		return k->arg[0] == SK_FD ? "the file a descriptor holds" : NULL;

	if (k->effects & SE_NEVER & ~covered)
		return "an effect on T, another process or the system";
	for (int a = 0; a < 6; a++) {
		switch (k->arg[a]) {
		case SK_PATH:
		case SK_STRUCT:
		case SK_OHOW:
			return "memory the kernel acts on";
		case SK_ADDR:
		case SK_UADDR:
			if (!has_rule(g, RULE_RANGE_FREE, a))
				return "memory it changes";
			break;
		case SK_TID:
			if (!has_rule(g, RULE_U_TID, a))
				return "a thread";
			break;
		case SK_PID:
		case SK_PID0:
			if (!has_rule(g, RULE_SELF_PID, a))
				return "a process";
			break;
		}
	}
	return NULL;
}

TEST(every_call_libseccomp_knows_is_in_the_kinds_table)
{
	int known = 0, classified = 0;

	for (int nr = 0; nr < WALK_NR; nr++) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
		const struct syscall_kinds *k = syscall_kinds(nr);

		if (!name) {
			EXPECT_EQ(NULL, k) TH_LOG("%d: classified, but libseccomp has no name", nr);
			continue;
		}
		known++;
		EXPECT_NE(NULL, k) TH_LOG("libseccomp knows %s (%d); policy/syscall_kinds.c does "
					  "not classify it", name, nr);
		if (k) {
			classified++;
			EXPECT_STREQ(name, k->name);
		}
		free(name);
	}
	ASSERT_GE(known, 300); /* the walk really ran */
	EXPECT_EQ(known, classified);
	/* and no name twice */
	for (size_t i = 0; i < syscall_kinds_count(); i++)
		for (size_t j = 0; j < i; j++)
			EXPECT_STRNE(syscall_kinds_at(i)->name, syscall_kinds_at(j)->name);
}

TEST(the_guard_of_every_call_is_what_its_kinds_ask_for)
{
	int checked = 0;

	for (int nr = 0; nr < WALK_NR; nr++) {
		const struct syscall_kinds *k = syscall_kinds(nr);
		const struct policy_guard *g = policy_guard(nr);
		int rules = g && g->kind == GUARD_RULES;

		if (!k)
			continue;
		checked++;
		/* guard.c's own entries meet the kinds as written */
		EXPECT_FALSE(g && g->amended) TH_LOG("%s: guard.c's entry misses what the kinds ask "
						     "for", k->name);
		if (unsafe(k, g)) {
			/* executed only after B's check, or never as it is */
			EXPECT_TRUE(g && (!rules || g->self_args))
				TH_LOG("%s: %s, and its guard lets it run", k->name, unsafe(k, g));
			if (g && rules && g->self_args)
				EXPECT_EQ(0, (int)(k->effects & SE_NEVER & ~g->covers));
		}
		if (k->effects & SE_NOSYS)
			EXPECT_TRUE(g && g->kind == GUARD_NEVER) TH_LOG("%s", k->name);
		for (int a = 0; a < 6 && rules; a++) {
			switch (k->arg[a]) {
			case SK_FD_MOD:
				EXPECT_TRUE(has_rule(g, RULE_FD_FREE, a)) TH_LOG("%s arg%d", k->name, a);
				break;
			case SK_STRUCT0: /* NULL only */
				EXPECT_TRUE(has_rule(g, RULE_MASKED_EQ, a)) TH_LOG("%s arg%d", k->name, a);
				for (int i = 0; i < g->nrules; i++)
					if (g->rules[i].arg == a && g->rules[i].op == RULE_MASKED_EQ)
						EXPECT_TRUE(g->rules[i].mask == ~0ULL && !g->rules[i].val &&
							    g->rules[i].carg == POLICY_NOARG);
				break;
			case SK_MODE: /* no set-id bit */
				EXPECT_TRUE(has_rule(g, RULE_MASK_ZERO, a)) TH_LOG("%s arg%d", k->name, a);
				break;
			case SK_PID:
			case SK_PID0:
				EXPECT_TRUE(has_rule(g, RULE_SELF_PID, a) || ((g->self_args >> a) & 1))
					TH_LOG("%s arg%d", k->name, a);
				EXPECT_EQ(k->arg[a] == SK_PID0 && ((g->self_args >> a) & 1),
					  (int)((g->self0_args >> a) & 1)) TH_LOG("%s arg%d", k->name, a);
				break;
			case SK_QUERY:
				if (g->self_args)
					EXPECT_EQ(a, g->query_arg) TH_LOG("%s", k->name);
				break;
			}
		}
		/* a guard only where the kinds or guard.c ask for one */
		if (g && rules && !g->nrules && !g->self_args && !g->proc)
			EXPECT_NE(POLICY_NOARG, g->restrict_arg) TH_LOG("%s: an empty guard", k->name);
	}
	ASSERT_GE(checked, 300);
}

/* One table says which argument is a path: B's checks read that one. */
TEST(b_checks_the_path_argument_the_kinds_name)
{
	int paths = 0, checked = 0;

	for (int nr = 0; nr < WALK_NR; nr++) {
		const struct policy_guard *g = policy_guard(nr);
		const struct syscall_kinds *k = syscall_kinds(nr);
		struct syscall_path sp;
		int has = syscall_path(nr, &sp) == 0;

		if (!k)
			continue;
		paths += has;
		if (has)
			EXPECT_TRUE(g && g->kind != GUARD_RULES) TH_LOG("%s", k->name);
		if (!g || g->kind != GUARD_NEEDS_B || !g->proc || (g->proc->kind != PK_PATH && g->proc->kind != PK_PATH_OP))
			continue;
		if (!has && g->proc->kind == PK_PATH_OP && g->proc->path_arg == POLICY_NOARG) {
			/* no path: B takes the file of the descriptor in arg0 */
			EXPECT_EQ(SK_FD, k->arg[0]) TH_LOG("%s", k->name);
			EXPECT_EQ(0, g->proc->dirfd_arg) TH_LOG("%s", k->name);
			continue;
		}
		ASSERT_TRUE(has) TH_LOG("%s: B checks a path the kinds do not know", k->name);
		EXPECT_EQ(sp.path_arg, g->proc->path_arg) TH_LOG("%s", k->name);
		EXPECT_EQ(sp.dirfd_arg, g->proc->dirfd_arg) TH_LOG("%s", k->name);
		EXPECT_EQ(sp.flags_arg, g->proc->flags_arg) TH_LOG("%s", k->name);
		/* creat's open flags are implied: B checks it as that open, the
		 * model calls it a write */
		if (sp.oflags) {
			EXPECT_EQ(PA_WRITE, g->proc->access) TH_LOG("%s", k->name);
		} else {
			EXPECT_EQ(sp.opens, g->proc->access == PA_OPEN) TH_LOG("%s", k->name);
		}
		checked++;
	}
	EXPECT_GE(paths, 60);
	EXPECT_GE(checked, 12);
}

TEST(inv7_no_file_can_allow_a_call_the_kinds_mark_unsafe)
{
	int refused = 0, accepted = 0;

	for (int nr = 0; nr < WALK_NR; nr++) {
		const struct syscall_kinds *k = syscall_kinds(nr);
		const struct policy_guard *g = policy_guard(nr);
		char text[128], want[128];
		struct policy *p;
		struct msgs m;
		int rc;

		if (!k)
			continue;
		for (int trap = 0; trap < 2; trap++) {
			snprintf(text, sizeof(text), "%s: %s\n", k->name, trap ? "trap" : "allow");
			snprintf(want, sizeof(want), "t.policy:1:%zu: %s: '%s' refused",
				 strlen(k->name) + 3, k->name, trap ? "trap" : "allow");
			rc = parse(text, &m, &p);
			if (unsafe(k, g)) {
				EXPECT_NE(0, rc) TH_LOG("%s accepted: %s", text, unsafe(k, g));
				EXPECT_EQ(1, m.n);
				EXPECT_EQ(0, strncmp(m.text, want, strlen(want)))
					TH_LOG("%s: %s", k->name, m.text);
				refused += rc != 0;
			} else if (!(g && g->kind == GUARD_RULES && g->restrict_arg != POLICY_NOARG) &&
				   !(g && g->kind == GUARD_EMU) &&
				   !(g && g->kind == GUARD_NEVER)) {
				/* everything else can be allowed, with its guards */
				EXPECT_EQ(0, rc) TH_LOG("%s refused: %s", k->name, m.text);
				accepted += rc == 0;
			}
			policy_free(p);
		}
	}
	/* the loops really ran, over most of the calls there are */
	EXPECT_GE(refused, 2 * 150);
	EXPECT_GE(accepted, 2 * 100);
	TH_LOG("refused %d, accepted %d (allow and trap)", refused, accepted);
}

#define EXPECT_REFUSED(line, message)                                                \
	do {                                                                         \
		struct policy *p_;                                                   \
		struct msgs m_;                                                      \
		EXPECT_NE(0, parse(line, &m_, &p_));                                 \
		EXPECT_EQ(NULL, p_);                                                 \
		EXPECT_STREQ(message "\n", m_.text);                                 \
	} while (0)

TEST(inv7_the_calls_a_review_allowed_are_refused)
{
	EXPECT_REFUSED("prlimit64: allow\n",
		       "t.policy:1:12: prlimit64: 'allow' refused: it acts on the process arg0 "
		       "names, which could be B; confine it to P (arg0 == 0) or make it a query "
		       "(arg2 == 0)");
	EXPECT_REFUSED("sched_setaffinity: allow\n",
		       "t.policy:1:20: sched_setaffinity: 'allow' refused: it acts on the process "
		       "arg0 names, which could be B; confine it to P (arg0 == $pid; 0 would name "
		       "the thread that makes the call, T)");
	EXPECT_REFUSED("sched_setattr: allow\n",
		       "t.policy:1:16: sched_setattr: 'allow' refused: it acts on the process arg0 "
		       "names, which could be B; confine it to P (arg0 == $pid; 0 would name the "
		       "thread that makes the call, T)");
	EXPECT_REFUSED("sched_setscheduler: trap\n",
		       "t.policy:1:21: sched_setscheduler: 'trap' refused: it acts on the process "
		       "arg0 names, which could be B; confine it to P (arg0 == $pid; 0 would name "
		       "the thread that makes the call, T)");
	EXPECT_REFUSED("setpriority: allow\n",
		       "t.policy:1:14: setpriority: 'allow' refused, a policy may only deny or kill "
		       "it: it reaches other processes (B), their memory, or what they share "
		       "(invariant 7)");
	EXPECT_REFUSED("ioprio_set: allow\n",
		       "t.policy:1:13: ioprio_set: 'allow' refused, a policy may only deny or kill "
		       "it: it reaches other processes (B), their memory, or what they share "
		       "(invariant 7)");
	EXPECT_REFUSED("io_submit: allow\n",
		       "t.policy:1:12: io_submit: 'allow' refused: a pointer argument holds what the "
		       "kernel acts on (descriptors, processes, addresses, handlers), and the trusted "
		       "process has no check for it; deny it");
	EXPECT_REFUSED("rt_sigtimedwait: allow\n",
		       "t.policy:1:18: rt_sigtimedwait: 'allow' refused, a policy may only deny or "
		       "kill it: it would act on the trusted thread, not on U");
	/* a rule on another argument does not make them safe */
	EXPECT_REFUSED("prlimit64: arg1 == RLIMIT_NOFILE\n",
		       "t.policy:1:12: prlimit64: 'trap' refused: it acts on the process arg0 "
		       "names, which could be B; confine it to P (arg0 == 0) or make it a query "
		       "(arg2 == 0)");
}

TEST(inv7_a_pid_call_confined_to_p_is_accepted)
{
	struct policy *p;
	struct msgs m;
	const struct policy_call *c;

	/* the default's: reading any process's limits, setting none */
	ASSERT_EQ(0, parse("prlimit64: arg2 == 0\n", &m, &p)) TH_LOG("%s", m.text);
	c = policy_call(p, nr_of("prlimit64"));
	ASSERT_EQ(1, c->nrules);
	EXPECT_EQ(2, c->rules[0].arg);
	policy_free(p);

	/* setting P's own (pid 0 is the calling process for prlimit) */
	ASSERT_EQ(0, parse("prlimit64: arg0 == 0\n", &m, &p)) TH_LOG("%s", m.text);
	c = policy_call(p, nr_of("prlimit64"));
	ASSERT_EQ(POLICY_THREAD, c->cls);
	ASSERT_EQ(1, c->nrules);
	EXPECT_EQ(RULE_MASKED_EQ, c->rules[0].op);
	EXPECT_EQ(0, c->rules[0].arg);
	policy_free(p);

	ASSERT_EQ(0, parse("sched_setaffinity: arg0 == $pid\nsetpgid: arg0 == $pid && "
			   "arg1 == $pid\n", &m, &p)) TH_LOG("%s", m.text);
	EXPECT_EQ(RULE_SELF_PID, policy_call(p, nr_of("sched_setaffinity"))->rules[0].op);
	policy_free(p);

	/* for the scheduler, 0 is the calling thread: T */
	EXPECT_REFUSED("sched_setaffinity: arg0 == 0\n",
		       "t.policy:1:20: sched_setaffinity: 'trap' refused: it acts on the process "
		       "arg0 names, which could be B; confine it to P (arg0 == $pid; 0 would name "
		       "the thread that makes the call, T)");
	EXPECT_REFUSED("setpgid: arg0 == $pid\n",
		       "t.policy:1:10: setpgid: 'trap' refused: it acts on the process arg1 names, "
		       "which could be B; confine it to P (arg1 == 0)");
}

/* --- the attack, through sandpit_start --- */

/* The default policy with its prlimit64 line replaced by `line`, in a
 * temporary file. */
static char *default_with_prlimit(const char *line)
{
	static char path[32], text[128];

	snprintf(text, sizeof(text), "%s\n", line);
	default_policy_with(text, path);
	return path;
}

TEST(inv7_prlimit64_allow_is_refused_at_start_and_nothing_is_applied)
{
	char *file = default_with_prlimit("prlimit64: allow");
	struct sandpit_options o = { .policy_file = file };
	char want[128];

	EXPECT_EQ(-EPERM, sandpit_start(&o));
	snprintf(want, sizeof(want), "%s:", file);
	EXPECT_EQ(0, strncmp(sandpit_error(), want, strlen(want))) TH_LOG("%s", sandpit_error());
	EXPECT_NE(NULL, strstr(sandpit_error(), "prlimit64: 'allow' refused"))
		TH_LOG("%s", sandpit_error());
	EXPECT_EQ((int)SANDPIT_MODE_NONE, (int)sandpit_mode());
	/* nothing applied: this process still makes any call */
	EXPECT_EQ(getppid(), syscall(SYS_getppid));
	unlink(file);
}

/* The test process stands for B: another process of the same user. */
static int set_the_parents_limit(void *arg)
{
	struct rlimit seven = { 7, 7 }, mine;
	pid_t parent = *(pid_t *)arg;

	if (syscall(SYS_prlimit64, parent, RLIMIT_NOFILE, &seven, NULL) != -1 || errno != EPERM)
		return 1;
	if (syscall(SYS_prlimit64, -1, RLIMIT_NOFILE, &seven, NULL) != -1 || errno != EPERM)
		return 2;
	/* its own, through pid 0 as glibc's setrlimit does */
	if (getrlimit(RLIMIT_NOFILE, &mine) || setrlimit(RLIMIT_NOFILE, &mine))
		return 3;
	if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &mine, NULL))
		return 4;
	return 0;
}

TEST(inv7_u_cannot_set_another_process_rlimit_in_both_modes)
{
	static const char *const modes[] = { "strict", "filter" };
	char *file = default_with_prlimit("prlimit64: arg0 == 0");
	struct sandpit_options o = { .policy_file = file };
	struct rlimit before, after;
	pid_t me = getpid();

#ifdef __SANITIZE_ADDRESS__
	SKIP(return, "the sandbox does not run under ASan");
#endif
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &before));
	for (int i = 0; i < 2; i++) {
		setenv("SANDPIT_MODE", modes[i], 1);
		EXPECT_EQ(0, outcome(run_sandboxed_opts(set_the_parents_limit, &me, &o, 20)))
			TH_LOG("%s mode", modes[i]);
		ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &after));
		EXPECT_EQ(before.rlim_cur, after.rlim_cur) TH_LOG("%s mode", modes[i]);
		EXPECT_EQ(before.rlim_max, after.rlim_max);
	}
	unlink(file);
}

TEST_HARNESS_MAIN
