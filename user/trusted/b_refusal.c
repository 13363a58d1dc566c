/* B's refusals recorded for the denial log (user/trusted/b_refusal.h):
 * each made into one struct denial from B's own copies and handed to
 * denial_note. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "policy/policy.h"
#include "user/trusted/b_read.h"
#include "user/trusted/b_refusal.h"
#include "user/trusted/b_state.h"
#include "user/trusted/denial_log.h"
#include "user/untrusted/runtime.h"


/* slot s's U-side state, in its mailbox (U's to write) */
static const struct u_state *slot_u_state(int s)
{
	return (const struct u_state *)b_proc_of_slot(s)->mb[s].u_state;
}

/* the caller of slot s's call in progress, as U's entry wrote it: only
 * shown, never decided on */
static uint64_t slot_caller(int s)
{
	return __atomic_load_n(&slot_u_state(s)->caller, __ATOMIC_RELAXED);
}

/* slot s's refusal d, of slot s's process */
static void note(int s, struct denial *d)
{
	d->pid = b_proc_of_slot(s)->pid;
	denial_note(b_cfg(), d);
}

/* a path the policy refuses (deny: the `path deny` pattern that did, or
 * NULL), explained from B's own copies */
void b_path_denial(int s, const struct policy_proc_arg *pa, const struct secure_page *sp,
		   const char *path, const char *resolved, int access, const char *deny)
{
	struct denial d = { .nr = (int)sp->nr, .result = -EACCES, .rule = -1,
			    .caller = slot_caller(s), .pa = pa, .path = path,
			    .resolved = resolved, .access = access, .deny = deny };
	memcpy(d.args, sp->args, sizeof(d.args));
	note(s, &d);
}

void b_path_refused(int s, const struct policy_proc_arg *pa, const struct secure_page *sp,
		    const char *path, const char *resolved, const char *why)
{
	struct denial d = { .nr = (int)sp->nr, .result = -EACCES, .rule = -1,
			    .caller = slot_caller(s), .pa = pa, .path = path,
			    .resolved = resolved, .access = PA_WRITE, .why = why };
	memcpy(d.args, sp->args, sizeof(d.args));
	note(s, &d);
}

/* a refusal by one of B's own checks of a memory argument */
void b_denial_hint(int s, const struct secure_page *sp, long r, const char *why,
		   const char *allow)
{
	struct denial d = { .nr = (int)sp->nr, .result = r, .rule = -1,
			    .caller = slot_caller(s), .why = why, .allow = allow };
	memcpy(d.args, sp->args, sizeof(d.args));
	note(s, &d);
}

void b_denial(int s, const struct secure_page *sp, long r, const char *why)
{
	b_denial_hint(s, sp, r, why, NULL);
}

/* a call the policy kills, which T sent before it kills P: the line that
 * names it, from B's one copy of T's request */
void b_killed(int s, const struct secure_page *sp)
{
	struct denial d = { .nr = (int)sp->nr, .result = 0, .rule = -1, .caller = slot_caller(s),
			    .killed = 1 };
	memcpy(d.args, sp->args, sizeof(d.args));
	note(s, &d);
}

/* A refusal U's entry or T made, reported by U (SANDPIT_NR_DENIED): one
 * copy of the report, checked for range, used to count and explain only */
long b_reported_denial(int s)
{
	const struct u_state *st = slot_u_state(s);
	struct u_denial u;
	memcpy(&u, (const void *)&st->denial, sizeof(u));
	b_copied();
	const struct policy_call *c = policy_call(b_cfg()->policy, (int)u.nr);
	struct denial d = { .nr = u.nr < POLICY_MAX_NR ? (int)u.nr : -1,
			    .result = u.result < 0 && u.result > -4096 ? (long)u.result : -EPERM,
			    .rule = u.rule >= 0 && u.rule < c->nrules ? (int)u.rule : -1,
			    .caller = u.caller };
	if (d.nr < 0)
		return -EINVAL;
	/* no rule said (T's word was overwritten by a handler's call): the
	 * errno's first rule, as for filter mode's SECCOMP_RET_ERRNO */
	if (d.rule < 0)
		d.rule = policy_rule_for_errno(b_cfg()->policy, d.nr, (int)-d.result);
	memcpy(d.args, u.args, sizeof(d.args));
	note(s, &d);
	return SP_V_ACK;
}
