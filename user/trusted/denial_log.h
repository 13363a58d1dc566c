/* B counts and explains every refusal (docs/design/trusted-process.md, "--log=denials"):
 * one line on stderr per refusal under --log=denials (text or JSON), and
 * for `sandpit run` a count in a file only B and the command hold. */
#ifndef SANDPIT_DENIAL_LOG_H
#define SANDPIT_DENIAL_LOG_H
#include <stdint.h>

#include "user/trusted/b_config.h"

struct mailbox;
struct policy_proc_arg;

/* One refusal, as B or T checked it. */
struct denial {
	pid_t pid;                   /* the process that made the call */
	int nr;
	uint64_t args[6];            /* for a path call, B's copy */
	long result;                 /* -errno */
	int rule;                    /* the call's register rule that refused it, or -1 */
	uint64_t caller;             /* where the call returns to, 0 if unknown */
	const struct policy_proc_arg *pa; /* a path refusal: how the call takes its path */
	const char *path;            /* B's one copy of the path, as checked */
	const char *resolved;        /* the path as B resolved it, NULL if not */
	int access;                  /* PA_* it needed */
	const char *why;             /* B's own check that refused it, NULL: the path's */
	const char *deny;            /* the `path deny` pattern that refused the path, or NULL */
	const char *allow;           /* a refusal that is not a path's: the option that
				      * would allow it (--allow-connect=...), or NULL */
	int killed;                  /* the policy kills the call: P dies (its line is always written) */
};

/* One refusal counted, and explained under --log=denials; a call the
 * policy kills is explained whatever --log says, P's last words. */
void denial_note(const struct trusted_process_config *cfg, const struct denial *d);
/* P has ended: the count, with what U's entries only counted (u_state's
 * `unreported`) in P's mailboxes mb of the slots where a thread has run
 * (ever_ran, B's record: asking the others would make the kernel allocate
 * their pages), goes to the command, once. */
void denial_final(const struct trusted_process_config *cfg, const struct mailbox *mb,
		  int (*ever_ran)(int slot));
/* a slot (its mailbox mb) is handed to a new thread: what its last one
 * only counted is kept */
void denial_slot_reused(const struct trusted_process_config *cfg, const struct mailbox *mb);

#endif
