/* T against the register rules' one definition (policy/rule_eval.c): real
 * calls, through a started sandbox, with many argument values, for rules
 * of every kind; what each call returns must be what the definition says
 * of the T table the sandbox runs with, in the world T reads from its
 * secure page: refused -> the rule's errno, allowed -> the kernel's result.
 * Run in every mode: in strict mode every call is T's; in filter mode BPF
 * decides what it can and T the rest (protected ranges, the program's tids). */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <kselftest_harness.h>
#include "policy/rule_eval.h"
#include "policy_util.h"
#include "sandbox_util.h"
#include "u_state.h"

/* One call per line: calls whose arguments the kernel ignores, so that any
 * value is safe and an allowed call's result is known; each line holds
 * rules of other kinds. */
static const char rule_lines[] =
	/* masked equal, mask zero */
	"getppid: arg0 & 0xff00 == 0x1200 && arg1 in 0xff; deny(EDOM)\n"
	/* masked not equal, at most */
	"getuid: arg0 != 0x7f && arg2 <= 4096; deny(ERANGE)\n"
	/* fd_free, a set of values */
	"getgid: fd_free(arg0) && arg1 in {3, 5, 8, 40}; deny(EBADMSG)\n"
	/* range_free of a range */
	"geteuid: range_free(arg0, arg1); deny(EFAULT)\n"
	/* range_free of one address, the own pid */
	"getegid: range_free(arg2) && arg3 == $pid; deny(ENOTSUP)\n"
	/* conditions */
	"getpgrp: if arg0 & 0x10 then arg1 <= 100 && if arg2 & 1 then arg3 & 0xf == 2; deny(EXDEV)\n"
	/* some bit of a mask, below */
	"sched_yield: arg4 & 0x8000000000000001 && arg5 < 0x100000000; deny(ENOTTY)\n";

/* and, as the default policy has them, with sandpit's own rules: kill
 * (arg0 == $pid) and tgkill (arg0 == $pid, arg1 a thread B knows as a U),
 * with signal 0, which only asks whether the target exists */
enum { GETPPID, GETUID, GETGID, GETEUID, GETEGID, GETPGRP, SCHED_YIELD, KILL, TGKILL, NCALLS };
static const long call_nr[NCALLS] = { SYS_getppid, SYS_getuid,  SYS_getgid,	 SYS_geteuid, SYS_getegid,
				      SYS_getpgrp, SYS_sched_yield, SYS_kill, SYS_tgkill };

#define PER_CALL 2000
#define NBAD 8

struct shared {
	long native[NCALLS]; /* what the kernel answers each (tgkill: for U's tid) */
	long cases, wrong, not_decided;
	long allowed[NCALLS], refused[NCALLS];
	long t_requests;  /* requests T received meanwhile */
	long bpf_blind;   /* cases whose answer needs what only T knows */
	long t_refused;   /* ... and refused (a protected range, a tid not a U's) */
	long nranges, ntids, facts_changed;
	struct {
		int call;
		uint64_t a[6];
		long got, want;
	} bad[NBAD];
};
static struct shared *S;

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* A value near an edge of one of the call's rules in table t on argument
 * k (its value, or its condition's), or 0 if none has one. */
static uint64_t rule_edge(const struct tt_table *t, long nr, int k)
{
	const struct tt_entry *e = &t->entries[nr];
	const struct tt_rule *r = NULL;
	uint64_t m;
	int n = 0;

	for (int i = e->first; i < e->first + e->nrules; i++)
		if ((t->rules[i].arg == k || t->rules[i].carg == k) && rnd() % ++n == 0)
			r = &t->rules[i];
	if (!r)
		return 0;
	if (r->carg == k && (r->arg != k || rnd() % 2))
		return rnd() % 2 ? rnd() & r->cmask : rnd() & ~r->cmask;
	switch (rnd() % 6) {
	case 0: return r->val;
	case 1: return r->val + 1;
	case 2: return r->val - 1;
	case 3: /* one of a set of values, or a neighbour */
		m = r->mask & rnd();
		return r->val + (m && rnd() % 2 ? (uint64_t)__builtin_ctzll(m) : rnd() % 64);
	case 4: return r->val | (rnd() & ~r->mask); /* the mask's bits, the others anything */
	default: return rnd() & r->mask;
	}
}

/* the sandboxed thread's T, which the kernel named in its mailbox */
static int32_t t_tid;

/* An argument near an edge some rule or fact has, or anything at all. */
static uint64_t pick(const struct tt_table *t, long nr, int k, const struct rule_world *w,
		     int32_t u_tid)
{
	static const uint64_t consts[] = {
		0, 1, 2, 3, 4, 5, 8, 39, 40, 41, 0x10, 0x11, 0x12, 0x7f, 0x80, 0xff, 0x100, 100, 101,
		0x1200, 0x1234, 0x12ff, 0x11ff, 0x1300, 4095, 4096, 4097, 0xffffffff, 0x100000000,
		0x8000000000000000ULL, 0x8000000000000001ULL, ~0ULL, ~0ULL - 4095,
	};
	uint64_t v, hi = rnd() % 4 ? 0 : rnd() << 32;
	const struct rule_range *r;

	if (rnd() % 3 == 0)
		return rule_edge(t, nr, k);
	switch (rnd() % 9) {
	case 0: return rnd();
	case 1: return rnd() % 300;
	case 2: return consts[rnd() % (sizeof(consts) / sizeof(consts[0]))] | (rnd() % 3 ? 0 : hi);
	case 3: /* sandpit's descriptors and their neighbours */
		v = (uint32_t)(w->rt.fd_lo - 1 + (int)(rnd() % (uint64_t)(w->rt.fd_hi - w->rt.fd_lo + 3)));
		return v | hi;
	case 4: return ((uint32_t)w->rt.pid ^ (rnd() % 3 ? 0 : 1)) | hi;
	case 5: /* U's tid, one of the table's, its T's, a neighbour */
		v = rnd() % 3 == 0 ? (uint32_t)u_tid
		    : rnd() % 2 || !w->ntids ? (uint32_t)t_tid
					     : (uint32_t)w->tids[rnd() % w->ntids];
		return (v + (rnd() % 4 ? 0 : 1)) | hi;
	case 6: /* near a protected range's ends */
		if (!w->nranges)
			return rnd();
		r = &w->ranges[rnd() % w->nranges];
		v = rnd() % 2 ? r->lo : r->hi;
		switch (rnd() % 6) {
		case 0: return v - 1;
		case 1: return v + 1;
		case 2: return v - 4096;
		case 3: return v - 4097;
		case 4: return v + rnd() % 8192;
		default: return v;
		}
	case 7: /* lengths */
		if (w->nranges && rnd() % 2) {
			r = &w->ranges[rnd() % w->nranges];
			return r->hi - r->lo + (rnd() % 3) - 1;
		}
		return consts[rnd() % (sizeof(consts) / sizeof(consts[0]))];
	default: return (uint64_t)-(int64_t)(rnd() % 8192);
	}
}

/* The kernel's answer to an allowed call. */
static long kernel_result(int call, const uint64_t a[6], int32_t u_tid)
{
	if (call == TGKILL) {
		int32_t tid = (int32_t)a[1];

		return tid <= 0 ? -EINVAL : tid == u_tid ? 0 : -ESRCH;
	}
	return S->native[call];
}

static void world_of(const struct secure_page *sp, struct rule_world *w, struct rule_range *ranges,
		     int32_t *tids)
{
	size_t nr = sp->nranges < SM_MAX_RANGES ? sp->nranges : SM_MAX_RANGES;
	const int32_t *table = (const int32_t *)(uintptr_t)sp->tids;
	size_t nt = 0;

	for (size_t i = 0; i < nr; i++)
		ranges[i] = (struct rule_range){ sp->ranges[i].lo, sp->ranges[i].hi };
	/* the table has a word per slot, 0 where B knows no U; T skips tids <= 0 */
	for (size_t i = 0; i < SM_NSLOTS; i++)
		if (table[i] > 0)
			tids[nt++] = table[i];
	*w = (struct rule_world){ .rt = { .pid = sp->pid, .fd_lo = sp->fd_lo, .fd_hi = sp->fd_hi },
				  .t_facts = 1, .nranges = nr, .ranges = ranges, .ntids = nt,
				  .tids = tids };
}

static int body_differential(void *arg)
{
	struct mailbox *mb = my_mailbox();
	const struct u_state *st = state_of(mb);
	const struct secure_page *sp = st->sp;
	const struct tt_table *t = st->table;
	struct rule_range ranges[SM_MAX_RANGES], ranges2[SM_MAX_RANGES];
	int32_t tids[SM_NSLOTS], tids2[SM_NSLOTS];
	struct rule_world w, w2, blind;
	int32_t u_tid = sp->u_tid;
	uint64_t seq0 = mb->req_seq;

	/* the kernel writes it when T first runs */
	while ((t_tid = (int32_t)__atomic_load_n(&mb->t_ctid, __ATOMIC_RELAXED)) == -1)
		sched_yield();

	(void)arg;
	world_of(sp, &w, ranges, tids);
	blind = w;
	blind.t_facts = 0;
	S->nranges = (long)w.nranges;
	S->ntids = (long)w.ntids;
	rnd_state = 0x5eed1e;
	for (int call = 0; call < NCALLS; call++) {
		for (int i = 0; i < PER_CALL; i++) {
			uint64_t a[6];
			long want, got;

			for (int k = 0; k < 6; k++)
				a[k] = pick(t, call_nr[call], k, &w, u_tid);
			if (call == KILL || call == TGKILL)
				a[call == KILL ? 1 : 2] = 0; /* signal 0 */
			want = tt_answer(t, call_nr[call], a, &w);
			if (tt_answer(t, call_nr[call], a, &blind) == TT_ANS_UNKNOWN) {
				S->bpf_blind++;
				S->t_refused += want < 0;
			}
			if (want > 0)
				S->not_decided++; /* not a register-rule call: a wrong test */
			if (want == TT_ANS_EXEC) {
				S->allowed[call]++;
				want = kernel_result(call, a, u_tid);
			} else {
				S->refused[call]++;
			}
			got = syscall(call_nr[call], a[0], a[1], a[2], a[3], a[4], a[5]);
			if (got == -1)
				got = -errno;
			S->cases++;
			if (got != want) {
				if (S->wrong < NBAD) {
					S->bad[S->wrong].call = call;
					for (int k = 0; k < 6; k++)
						S->bad[S->wrong].a[k] = a[k];
					S->bad[S->wrong].got = got;
					S->bad[S->wrong].want = want;
				}
				S->wrong++;
			}
		}
	}
	S->t_requests = (long)(mb->req_seq - seq0);
	/* the facts the definition was given held all along */
	world_of(sp, &w2, ranges2, tids2);
	S->facts_changed = w2.nranges != w.nranges || w2.ntids != w.ntids ||
			   memcmp(ranges, ranges2, w.nranges * sizeof(*ranges)) ||
			   memcmp(tids, tids2, w.ntids * sizeof(*tids)) || w2.rt.pid != w.rt.pid ||
			   w2.rt.fd_lo != w.rt.fd_lo || w2.rt.fd_hi != w.rt.fd_hi;
	return 0;
}

TEST(t_answers_every_register_rule_as_its_definition_says)
{
	static char path[32];
	struct sandpit_options o = { .mode = suite_mode(), .policy_file = path };

	S = shared_page(sizeof(*S));
	ASSERT_NE(NULL, S);
	default_policy_with(rule_lines, path);
	S->native[GETPPID] = getpid(); /* the sandboxed child's parent */
	S->native[GETUID] = getuid();
	S->native[GETGID] = getgid();
	S->native[GETEUID] = geteuid();
	S->native[GETEGID] = getegid();
	S->native[GETPGRP] = getpgrp();
	S->native[SCHED_YIELD] = 0;
	S->native[KILL] = 0;
	EXPECT_EQ(0, outcome(run_sandboxed_opts(body_differential, NULL, &o, 60)));
	unlink(path);
	for (long i = 0; i < S->wrong && i < NBAD; i++)
		TH_LOG("call %ld (%#llx, %#llx, %#llx, %#llx, %#llx, %#llx): got %ld, the definition says %ld",
		       call_nr[S->bad[i].call], (unsigned long long)S->bad[i].a[0],
		       (unsigned long long)S->bad[i].a[1], (unsigned long long)S->bad[i].a[2],
		       (unsigned long long)S->bad[i].a[3], (unsigned long long)S->bad[i].a[4],
		       (unsigned long long)S->bad[i].a[5], S->bad[i].got, S->bad[i].want);
	TH_LOG("%ld cases, %ld requests reached T, %ld need what only T knows (%ld refused); %ld "
	       "protected ranges, %ld tids of U's", S->cases, S->t_requests, S->bpf_blind,
	       S->t_refused, S->nranges, S->ntids);
	/* every case ran, and each was a register-rule call */
	ASSERT_EQ((long)NCALLS * PER_CALL, S->cases);
	EXPECT_EQ(0, S->not_decided);
	EXPECT_EQ(0, S->facts_changed);
	EXPECT_EQ(0, S->wrong);
	/* every call was both allowed and refused, many times */
	for (int c = 0; c < NCALLS; c++) {
		TH_LOG("call %ld: %ld allowed, %ld refused", call_nr[c], S->allowed[c], S->refused[c]);
		EXPECT_LE(PER_CALL / 50, S->allowed[c]) TH_LOG("call %ld", call_nr[c]);
		EXPECT_LE(PER_CALL / 50, S->refused[c]) TH_LOG("call %ld", call_nr[c]);
	}
	/* T itself answered: every case in strict mode, and in filter mode at
	 * least those that BPF cannot decide */
	EXPECT_LE(100, S->bpf_blind);
	EXPECT_LE(100, S->t_refused);
	EXPECT_LE(100, S->bpf_blind - S->t_refused);
	EXPECT_LE(1, S->ntids);
	EXPECT_LE(1, S->nranges);
	if (o.mode == SANDPIT_MODE_STRICT) {
		EXPECT_LE(S->cases, S->t_requests);
	} else {
		EXPECT_LE(S->bpf_blind, S->t_requests);
	}
}

TEST_HARNESS_MAIN
