/* sandpit's SIGSEGV handler in U.  Strict mode turns the TSC off for U
 * (DESIGN §9): rdtsc and rdtscp fault, and the vDSO's clock_gettime uses
 * them.  The handler recognises the instruction, asks T (which keeps the
 * TSC) to execute it, writes the result into the interrupted registers and
 * steps over the instruction.  Any other fault restores the default action
 * so that the retried instruction kills the process. */
#include <sys/ucontext.h>
#include "user/runtime.h"

/* SANDPIT_SIG: a request from this thread's own entry to change its
 * signal mask (u_sigprocmask).  The frame's uc_sigmask is the mask in force
 * when the signal came, and what the kernel restores on rt_sigreturn. */
void u_sandpit_sig(int sig, void *info, void *ucv)
{
	(void)sig;
	(void)info;
	ucontext_t *uc = ucv;
	struct u_state *st = u_self();
	uint64_t req = __atomic_load_n(&st->self_req, __ATOMIC_ACQUIRE);
	if (st->self_done == req)
		return; /* not asked for */
	uint64_t *mask = (uint64_t *)&uc->uc_sigmask;
	uint64_t old = *mask, set = st->self_set, now = old;
	if (st->self_how == 0)
		now |= set;
	else if (st->self_how == 1)
		now &= ~set;
	else if (st->self_how == 2)
		now = set;
	/* SIGKILL and SIGSTOP cannot be blocked, nor can sandpit's own */
	now &= ~((1ull << (9 - 1)) | (1ull << (19 - 1)) | (1ull << (SANDPIT_SIG - 1)));
	*mask = now;
	st->self_old = old;
	__atomic_store_n(&st->self_done, req, __ATOMIC_RELEASE);
}

void u_sigsegv(int sig, void *info, void *ucv)
{
	(void)sig;
	(void)info;
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	const unsigned char *ip = (const unsigned char *)g[REG_RIP];
	static const long none[6];
	int len = 0;

	if (ip[0] == 0x0f && ip[1] == 0x31)
		len = 2;
	else if (ip[0] == 0x0f && ip[1] == 0x01 && ip[2] == 0xf9)
		len = 3;
	if (!len || !__atomic_load_n(&sandpit_u_active, __ATOMIC_RELAXED)) {
		u_call_trusted(SANDPIT_NR_SEGV_DFL, none);
		return;
	}
	struct mailbox *mb = u_self()->mb;
	uint64_t lo = (uint64_t)u_call_trusted(SANDPIT_NR_RDTSC, none);
	g[REG_RAX] = (greg_t)(lo & 0xffffffffu);
	g[REG_RDX] = (greg_t)(mb->res2 & 0xffffffffu);
	if (len == 3)
		g[REG_RCX] = (greg_t)(mb->res3 & 0xffffffffu);
	g[REG_RIP] += len;
}
