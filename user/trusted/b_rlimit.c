/* B's check of setrlimit and prlimit64 (kind PK_RLIMIT): the program may
 * read its own limits, lower them, or set one to the value it has; it may
 * never raise one nor touch another process's.  B copies the new limit
 * once from P, compares it with the limit the kernel reports for P, and
 * makes the change itself with prlimit64 on P, under one lock, so that no
 * other thread's change comes between the comparison and the change (every
 * change the program can make goes through here).  The old value goes back
 * as B's answer, which U's entry copies to the program's buffer. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "user/layout/secure_mem.h"
#include "user/trusted/b_read.h"
#include "user/trusted/b_refusal.h"
#include "user/trusted/b_rlimit.h"
#include "user/trusted/b_state.h"
#include "user/trusted/slot_fds.h"

static pthread_mutex_t rlimit_lock = PTHREAD_MUTEX_INITIALIZER;

struct k_rlimit {
	uint64_t cur, max;
};

long b_check_rlimit(int s, struct secure_page *sp)
{
	int64_t pid = 0;
	uint64_t res, newp, oldp = 0;
	int old_arg = 3;
	if (sp->nr == SYS_setrlimit) {
		res = sp->args[0];
		newp = sp->args[1];
		if (!newp)
			return -EFAULT;
	} else if (sp->nr == SYS_prlimit64) {
		pid = (int32_t)sp->args[0];
		res = sp->args[1];
		newp = sp->args[2];
		oldp = sp->args[3];
	} else {
		return -ENOSYS;
	}
	/* limits are the process's: its own pid, or 0; never another's
	 * (B's, T's threads' and every other process's alike) */
	if (pid != 0 && pid != b_cfg()->pid) {
		b_denial(s, sp, -EPERM, "the limits of another process");
		return -EPERM;
	}
	if ((uint32_t)res >= RLIM_NLIMITS || res >> 32)
		return -EINVAL;
	struct k_rlimit want, cur, old;
	if (newp) {
		if (b_read_mem(&want, newp, sizeof(want)))
			return -EFAULT;
		b_copied();
		if (want.cur > want.max)
			return -EINVAL;
	}
	/* the kernel puts no descriptor at or above the soft limit, and B
	 * cannot raise a hard one: the slots B has not made yet are made
	 * before the hard limit falls below sandpit's block */
	if (newp && res == RLIMIT_NOFILE && want.max <= (uint64_t)b_cfg()->fd_hi &&
	    b_slot_fds_all() < 0) {
		b_denial(s, sp, -EAGAIN, "the thread slots' descriptors could not be made first");
		return -EAGAIN;
	}
	pthread_mutex_lock(&rlimit_lock);
	long r = syscall(SYS_prlimit64, b_cfg()->pid, (int)res, NULL, &cur);
	if (r == 0 && newp) {
		if (want.cur > cur.cur || want.max > cur.max) {
			pthread_mutex_unlock(&rlimit_lock);
			b_denial(s, sp, -EPERM, "a limit raised (it may only be lowered or kept)");
			return -EPERM;
		}
		r = syscall(SYS_prlimit64, b_cfg()->pid, (int)res, &want, &old);
	} else {
		old = cur;
	}
	if (r < 0)
		r = -errno;
	pthread_mutex_unlock(&rlimit_lock);
	if (r < 0)
		return r;
	struct sp_answer *a = (struct sp_answer *)sp->data;
	a->result = 0;
	a->len = 0;
	a->arg = 0;
	if (oldp) {
		memcpy(a->bytes, &old, sizeof(old));
		a->len = sizeof(old);
		a->arg = (uint32_t)old_arg;
	}
	return -SP_ANSWERED;
}

int b_nofile_above(int fd, int (*fn)(void *), void *arg)
{
	struct k_rlimit cur, up;
	pthread_mutex_lock(&rlimit_lock);
	int r = (int)syscall(SYS_prlimit64, b_cfg()->pid, RLIMIT_NOFILE, NULL, &cur);
	int raise = r == 0 && cur.cur <= (uint64_t)fd;
	up = (struct k_rlimit){ (uint64_t)fd + 1, cur.max };
	if (raise)
		r = (int)syscall(SYS_prlimit64, b_cfg()->pid, RLIMIT_NOFILE, &up, NULL);
	if (r < 0)
		r = -errno;
	else
		r = fn(arg);
	if (raise && syscall(SYS_prlimit64, b_cfg()->pid, RLIMIT_NOFILE, &cur, NULL) < 0)
		b_kill_p(); /* the program would keep a limit it did not set */
	pthread_mutex_unlock(&rlimit_lock);
	return r;
}
