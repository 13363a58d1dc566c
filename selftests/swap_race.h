/* A directory raced against a symbolic link out of a grant (the
 * grant_*_test binaries, answer_test, invariants_test): a child of the
 * test swaps GRANT/d with GRANT/l, a link to OUTSIDE, by RENAME_EXCHANGE
 * until *stop, while the sandboxed body makes its calls through GRANT/d
 * and sorts what each answered about. */
#ifndef SANDPIT_SWAP_RACE_H
#define SANDPIT_SWAP_RACE_H

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* the swapping child's pid, or -1 */
static inline pid_t swap_race_start(const char *d, const char *l, volatile int *stop)
{
	pid_t p = fork();
	if (p == 0) {
		while (!*stop)
			syscall(SYS_renameat2, AT_FDCWD, d, AT_FDCWD, l, RENAME_EXCHANGE);
		_exit(0);
	}
	return p;
}

/* What the calls answered: about the object inside the grant, about the
 * one outside (the hole), a refusal (EACCES: B resolved the path out of
 * the grant), the swap met between B's check and its own open (ELOOP,
 * ENOENT, ENOTDIR), or anything else. */
struct swap_tally {
	int inside, outside_seen, refused, raced, other;
};

/* one call: about 1 (inside), 2 (outside) or 0 (neither); v its result,
 * err its errno */
static inline void swap_tally_add(struct swap_tally *t, int about, long v, int err)
{
	if (about == 2)
		t->outside_seen++;
	else if (about == 1)
		t->inside++;
	else if (v >= 0)
		t->other++;
	else if (err == EACCES)
		t->refused++;
	else if (err == ELOOP || err == ENOENT || err == ENOTDIR)
		t->raced++;
	else
		t->other++;
}

/* whether the body goes on after call i: 3000 calls at least, then until
 * an answer from inside and a met swap were both seen, or the time is up */
static inline int swap_race_more(const struct swap_tally *t, int i, time_t until)
{
	return i < 3000 || ((!t->inside || !(t->refused + t->raced)) && time(NULL) < until);
}

#endif
