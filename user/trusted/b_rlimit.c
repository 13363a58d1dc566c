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
	pid_t own = b_proc_of_slot(s)->pid;
	if (pid != 0 && pid != own) {
		b_denial(s, sp, -EPERM, "the limits of another process");
		return -EPERM;
	}
	if ((uint32_t)res >= RLIM_NLIMITS || res >> 32)
		return -EINVAL;
	struct k_rlimit want, cur, old;
	if (newp) {
		if (b_read_mem(s, &want, newp, sizeof(want)))
			return -EFAULT;
		b_copied();
		if (want.cur > want.max)
			return -EINVAL;
	}
	pthread_mutex_lock(&rlimit_lock);
	long r = syscall(SYS_prlimit64, own, (int)res, NULL, &cur);
	if (r == 0 && newp) {
		if (want.cur > cur.cur || want.max > cur.max) {
			pthread_mutex_unlock(&rlimit_lock);
			b_denial(s, sp, -EPERM, "a limit raised (it may only be lowered or kept)");
			return -EPERM;
		}
		r = syscall(SYS_prlimit64, own, (int)res, &want, &old);
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
