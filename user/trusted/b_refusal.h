/* A refusal by the trusted process B, recorded for the denial log
 * (user/trusted/denial_log.c) from B's own copies: counted, and explained
 * under --log=denials.  Only B includes it. */
#ifndef SANDPIT_B_REFUSAL_H
#define SANDPIT_B_REFUSAL_H

struct policy_proc_arg;
struct secure_page;

/* a path slot s's call may not use: resolved is B's resolution of path,
 * deny the `path deny` pattern that refused it (or NULL) */
void b_path_denial(int s, const struct policy_proc_arg *pa, const struct secure_page *sp,
		   const char *path, const char *resolved, int access, const char *deny);
/* the same, for a write that no grant added would allow: why says what
 * refused it (a grant's root, a device node), and no grant is suggested */
void b_path_refused(int s, const struct policy_proc_arg *pa, const struct secure_page *sp,
		    const char *path, const char *resolved, const char *why);
/* a refusal by one of B's own checks of a memory argument */
void b_denial(int s, const struct secure_page *sp, long r, const char *why);
/* the same, with the option that would allow it (allow, or NULL) */
void b_denial_hint(int s, const struct secure_page *sp, long r, const char *why,
		   const char *allow);
/* a call the policy kills, which T sent before it kills P */
void b_killed(int s, const struct secure_page *sp);
/* a refusal U's entry or T made, reported by U (SANDPIT_NR_DENIED):
 * SP_V_ACK, or -EINVAL for a report out of range */
long b_reported_denial(int s);
#endif
