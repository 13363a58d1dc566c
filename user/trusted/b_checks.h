/* B's checks of one request's memory arguments (user/trusted/b_checks.c),
 * called by the servers (user/trusted/b_serve.c).  Only B includes it. */
#ifndef SANDPIT_B_CHECKS_H
#define SANDPIT_B_CHECKS_H

struct policy_proc_arg;
struct secure_page;

/* A path argument of slot s's call (kind PK_PATH): copied, resolved as the
 * kernel will, checked; the resolved absolute path handed to T in sp, or
 * the call answered or opened by B.  The verdict, or -errno. */
long b_check_path(int s, const struct policy_proc_arg *pa, struct secure_page *sp);
/* slot s's rt_sigaction: the handler and restorer checked and recorded,
 * the kernel's action rewritten in sp.  The verdict, or -errno. */
long b_check_sigaction(int s, struct secure_page *sp);
#endif
