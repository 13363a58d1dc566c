/* B's check of setrlimit and prlimit64 (user/trusted/b_rlimit.c).  Only B
 * includes it. */
#ifndef SANDPIT_B_RLIMIT_H
#define SANDPIT_B_RLIMIT_H

struct secure_page;

/* slot s's setrlimit or prlimit64 in sp: made by B on P when it lowers or
 * keeps a limit of P's own; -SP_ANSWERED (the old value in sp's answer),
 * or -errno */
long b_check_rlimit(int s, struct secure_page *sp);
/* fn(arg) with P's soft RLIMIT_NOFILE above fd (the kernel puts nothing at
 * or above it, SECCOMP_IOCTL_NOTIF_ADDFD neither): raised just so far if it
 * is not, and put back after, under the lock every change of the
 * program's is made under.  fn's result, or -errno */
int b_nofile_above(int fd, int (*fn)(void *), void *arg);
#endif
