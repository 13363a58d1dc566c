/* B's check of setrlimit and prlimit64 (user/trusted/b_rlimit.c).  Only B
 * includes it. */
#ifndef SANDPIT_B_RLIMIT_H
#define SANDPIT_B_RLIMIT_H

struct secure_page;

/* slot s's setrlimit or prlimit64 in sp: made by B on P when it lowers or
 * keeps a limit of P's own; -SP_ANSWERED (the old value in sp's answer),
 * or -errno */
long b_check_rlimit(int s, struct secure_page *sp);
#endif
