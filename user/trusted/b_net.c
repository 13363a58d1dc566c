/* B's checks of the socket calls (kind PK_NET, user/trusted/b_net.h):
 * which family a socket may have, which address a connect or a sendmsg
 * may reach, which descriptors SCM_RIGHTS may pass, and that no option
 * or control message sets a source route.  Every address
 * and control message is B's one copy, written into S; T makes the call
 * from S, so the kernel reads exactly what was checked (invariant 2). */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "policy/policy.h"
#include "user/trusted/b_net.h"
#include "user/trusted/b_read.h"
#include "user/trusted/b_refusal.h"
#include "user/trusted/b_state.h"

/* the longest address the kernel takes (sockaddr_storage) */
#define ADDR_MAX 128
/* control data B copies: SCM_RIGHTS of up to 253 descriptors in one
 * message, as the kernel's own limit (SCM_MAX_FD), fits */
#define CONTROL_MAX 1200

/* The descriptor a connect or sendmsg names, looked at before anything
 * else as the kernel does: sandpit's (its block, invariant 3) EBADF as a
 * number not open, any other EBADF or ENOTSOCK as the kernel would say.
 * Only sandpit's must never reach the kernel; a number U changes after
 * this look changes no more than the errno it gets, since no number
 * outside the block can become sandpit's (dup2 onto it and SCM_RIGHTS of
 * it are refused). */
static long check_fd(int s, int fd)
{
	const struct b_proc *p = b_proc_of_slot(s);
	if (fd >= p->fd_lo && fd <= p->fd_hi)
		return -EBADF;
	char link[64];
	struct stat st;
	snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)p->pid, fd);
	if (stat(link, &st) < 0)
		return errno == ENOENT ? -EBADF : 0; /* the kernel says */
	return S_ISSOCK(st.st_mode) ? 0 : -ENOTSOCK;
}

/* socket(domain, type, protocol): AF_UNIX always (a socket with no name
 * reaches nothing: naming and reaching a named one are refused); AF_INET
 * and AF_INET6 for TCP and UDP when a connect grant exists; any other
 * family as on a kernel built without it */
static long check_socket(int s, const struct secure_page *sp)
{
	int domain = (int)sp->args[0];
	int type = (int)sp->args[1] & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	int proto = (int)sp->args[2];
	if (domain == AF_UNIX)
		return 0;
	if (domain != AF_INET && domain != AF_INET6) {
		b_denial(s, sp, -EAFNOSUPPORT, "no socket family but AF_UNIX, AF_INET and AF_INET6");
		return -EAFNOSUPPORT;
	}
	if (!policy_nconnects(b_cfg()->policy)) {
		b_denial_hint(s, sp, -EAFNOSUPPORT, "no network: no connect grant",
			      "--allow-connect=ADDR:PORT");
		return -EAFNOSUPPORT;
	}
	if (!((type == SOCK_STREAM && (proto == 0 || proto == IPPROTO_TCP)) ||
	      (type == SOCK_DGRAM && (proto == 0 || proto == IPPROTO_UDP)))) {
		b_denial(s, sp, -EACCES, "a connect grant allows TCP and UDP sockets only");
		return -EACCES;
	}
	return 0;
}

/* An address U gave (its copy in `sa`, len bytes): 0 if a grant allows
 * it; else refused, logged with the grant that would allow it */
static long check_address(int s, const struct secure_page *sp, const void *sa, size_t len)
{
	int r = policy_check_connect(b_cfg()->policy, sa, len);
	if (r == 0 || r == -EINVAL)
		return r;
	char text[160], why[220], allow[190];
	policy_connect_text(sa, len, text, sizeof(text));
	sa_family_t fam;
	memcpy(&fam, sa, sizeof(fam));
	if (fam == AF_INET || fam == AF_INET6) {
		snprintf(why, sizeof(why), "%s, which no connect grant allows", text);
		snprintf(allow, sizeof(allow), "--allow-connect=%s", text);
		b_denial_hint(s, sp, -EACCES, why, allow);
	} else {
		/* a named AF_UNIX socket lies in the file system, where the
		 * kernel follows links B cannot hold still; abstract names are
		 * every process's */
		snprintf(why, sizeof(why), "%s: no grant can allow it", text);
		b_denial(s, sp, -EACCES, why);
	}
	return -EACCES;
}

/* connect(fd, addr, len): AF_UNSPEC (a UDP socket's association
 * dissolved) as asked, AF_INET and AF_INET6 to a granted address and
 * port, nothing else */
static long check_connect(int s, struct secure_page *sp)
{
	uint64_t len = (uint32_t)sp->args[2];
	uint8_t *sa = sp->data;
	long bad = check_fd(s, (int)sp->args[0]);
	if (bad < 0)
		return bad;
	if (len < sizeof(sa_family_t) || len > ADDR_MAX)
		return -EINVAL;
	if (b_read_mem(s, sa, sp->args[1], len))
		return -EFAULT;
	b_copied();
	sa_family_t fam;
	memcpy(&fam, sa, sizeof(fam));
	if (fam != AF_UNSPEC) {
		long r = check_address(s, sp, sa, len);
		if (r < 0)
			return r;
	}
	b_arg_into_data(sp, 1, sa);
	sp->args[2] = len;
	return 0;
}

/* A socket option or control message that sets a source route: the
 * kernel would send the packets first to an address in the option, not
 * to the one connect or the message names (IPv4's LSRR and SSRR in
 * IP_OPTIONS, or IP_RETOPTS in the control data; IPv6's routing header,
 * also inside IPV6_2292PKTOPTIONS' control data), so no grant could hold.
 * The kernel takes level and name as ints.  Its name, or NULL. */
static const char *source_route(int level, int name, int cmsg)
{
	if (level == SOL_IP && name == (cmsg ? IP_RETOPTS : IP_OPTIONS))
		return cmsg ? "IP_RETOPTS" : "IP_OPTIONS";
	if (level == SOL_IPV6 && name == IPV6_RTHDR)
		return "IPV6_RTHDR";
	if (level == SOL_IPV6 && name == (cmsg ? IPV6_2292RTHDR : IPV6_2292PKTOPTIONS))
		return cmsg ? "IPV6_2292RTHDR" : "IPV6_2292PKTOPTIONS";
	return NULL;
}

static long route_denial(int s, const struct secure_page *sp, const char *what)
{
	char why[160];
	snprintf(why, sizeof(why),
		 "%s: a source route would send the packets first to an address no connect "
		 "grant names", what);
	b_denial(s, sp, -EACCES, why);
	return -EACCES;
}

/* The control messages as the kernel walks them (for_each_cmsghdr and
 * CMSG_OK): a header that does not fit ends the walk, one whose length is
 * short or runs past the end is EINVAL.  No descriptor SCM_RIGHTS passes
 * may be one of sandpit's (invariant 3): EBADF, as for a number not open. */
static long check_control(int s, const struct secure_page *sp, const uint8_t *ctl, size_t len)
{
	const struct b_proc *p = b_proc_of_slot(s);
	for (size_t off = 0; off + sizeof(struct cmsghdr) <= len;) {
		struct cmsghdr h;
		memcpy(&h, ctl + off, sizeof(h));
		if (h.cmsg_len < sizeof(struct cmsghdr) || h.cmsg_len > len - off)
			return -EINVAL;
		const char *route = source_route(h.cmsg_level, h.cmsg_type, 1);
		if (route)
			return route_denial(s, sp, route);
		if (h.cmsg_level == SOL_SOCKET && h.cmsg_type == SCM_RIGHTS) {
			size_t n = (h.cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < n; i++) {
				int fd;
				memcpy(&fd, ctl + off + CMSG_LEN(0) + i * sizeof(int), sizeof(fd));
				if (fd >= p->fd_lo && fd <= p->fd_hi) {
					b_denial(s, sp, -EBADF, "SCM_RIGHTS of one of sandpit's descriptors");
					return -EBADF;
				}
			}
		}
		off += CMSG_ALIGN(h.cmsg_len);
	}
	return 0;
}

/* sendmsg(fd, msg, flags): the header, its address and its control data
 * copied into S (the data U's iovecs name may change as they like); no
 * address but a granted one, no descriptor of sandpit's passed */
static long check_sendmsg(int s, struct secure_page *sp)
{
	struct msghdr m;
	long bad = check_fd(s, (int)sp->args[0]);
	if (bad < 0)
		return bad;
	if (b_read_mem(s, &m, sp->args[1], sizeof(m)))
		return -EFAULT;
	b_copied();
	/* S's data: the header, then the address, then the control data;
	 * the pointers in the header are S's, where T makes the call */
	uint8_t *hdr = sp->data, *name = hdr + sizeof(m), *ctl = name + ADDR_MAX;
	_Static_assert(sizeof(struct msghdr) + ADDR_MAX + CONTROL_MAX <= SP_DATA_SIZE,
		       "a message header, its address and its control data fit in S");
	uintptr_t in_s = (uintptr_t)b_proc_of_slot(s)->sp[s].data;
	/* the kernel's reading of the header (__copy_msghdr): no name
	 * without both a pointer and a length, a negative length EINVAL, a
	 * longer one cut to sockaddr_storage's */
	if ((int)m.msg_namelen < 0)
		return -EINVAL;
	if (m.msg_namelen > ADDR_MAX)
		m.msg_namelen = ADDR_MAX;
	if (m.msg_name && m.msg_namelen) {
		if (m.msg_namelen < sizeof(sa_family_t))
			return -EINVAL;
		if (b_read_mem(s, name, (uintptr_t)m.msg_name, m.msg_namelen))
			return -EFAULT;
		long r = check_address(s, sp, name, m.msg_namelen);
		if (r < 0)
			return r;
		m.msg_name = (void *)(in_s + (uintptr_t)(name - sp->data));
	} else {
		m.msg_name = NULL;
		m.msg_namelen = 0;
	}
	if (m.msg_controllen) {
		if (m.msg_controllen > CONTROL_MAX) {
			b_denial(s, sp, -ENOBUFS, "more control data than sandpit copies (1200 bytes)");
			return -ENOBUFS;
		}
		if (b_read_mem(s, ctl, (uintptr_t)m.msg_control, m.msg_controllen))
			return -EFAULT;
		long r = check_control(s, sp, ctl, m.msg_controllen);
		if (r < 0)
			return r;
		m.msg_control = (void *)(in_s + (uintptr_t)(ctl - sp->data));
	} else {
		m.msg_control = NULL;
	}
	memcpy(hdr, &m, sizeof(m));
	b_arg_into_data(sp, 1, hdr);
	return 0;
}

/* setsockopt(fd, level, name, value, len): any option but a source
 * route, on any descriptor but sandpit's (the value is the kernel's to
 * read: B decides from the registers alone) */
static long check_setsockopt(int s, const struct secure_page *sp)
{
	long bad = check_fd(s, (int)sp->args[0]);
	if (bad < 0)
		return bad;
	const char *route = source_route((int)sp->args[1], (int)sp->args[2], 0);
	return route ? route_denial(s, sp, route) : 0;
}

long b_check_net(int s, struct secure_page *sp)
{
	switch (sp->nr) {
	case SYS_socket:
		return check_socket(s, sp);
	case SYS_connect:
		return check_connect(s, sp);
	case SYS_sendmsg:
		return check_sendmsg(s, sp);
	case SYS_setsockopt:
		return check_setsockopt(s, sp);
	default:
		return -ENOSYS;
	}
}
