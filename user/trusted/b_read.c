/* Memory reads of P by the trusted process B (user/trusted/b_read.h):
 * process_vm_readv of U's arguments, the path copy U's entry sent with a
 * request, and whether an address lies in sandpit's own memory. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "policy/policy.h"
#include "user/trusted/b_read.h"
#include "user/trusted/b_state.h"

long b_read_mem(int s, void *dst, uint64_t addr, size_t n)
{
	struct iovec local = { dst, n };
	struct iovec remote = { (void *)(uintptr_t)addr, n };
	pid_t pid = b_proc_of_slot(s)->pid;
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

long b_read_string(int s, char *buf, size_t max, uint64_t addr)
{
	pid_t pid = b_proc_of_slot(s)->pid;
	size_t got = 0;
	while (got < max) {
		size_t chunk = 4096 - ((addr + got) & 4095);
		if (chunk > max - got)
			chunk = max - got;
		struct iovec local = { buf + got, chunk };
		struct iovec remote = { (void *)(uintptr_t)(addr + got), chunk };
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			return -EFAULT;
		char *nul = memchr(buf + got, 0, (size_t)n);
		if (nul)
			return nul - buf;
		got += (size_t)n;
	}
	return -ENAMETOOLONG;
}


/* The path argument at addr of slot s's request: from the copy U's entry
 * sent with it (MB_PATH) when that copy is of this argument, else read
 * from P.  The mailbox is U's: one copy of it here, and only that copy is
 * looked at (its length against its bytes) and then checked in full like
 * any path (invariant 8); a forged copy is U's request, as a rewritten
 * argument would be. */
long b_read_path(int s, char *buf, size_t max, uint64_t addr)
{
	struct mb_path copy;
	memcpy(&copy, (const void *)&b_proc_of_slot(s)->mb[s].path, sizeof(copy));
	b_copied();
	long n = addr && copy.addr == addr ?
			 path_from_copy(copy.bytes, sizeof(copy.bytes), copy.len, buf, max) :
			 -1;
	return n >= 0 ? n : b_read_string(s, buf, max, addr);
}

int b_in_protected(int s, uint64_t a)
{
	const struct secure_page *sp = &b_proc_of_slot(s)->sp[0];
	for (uint64_t i = 0; i < sp->nranges && i < SM_MAX_RANGES; i++)
		if (a >= sp->ranges[i].lo && a < sp->ranges[i].hi)
			return 1;
	return 0;
}
