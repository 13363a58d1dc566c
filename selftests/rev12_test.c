/* One file over 700 lines: one outside review's record, as it was made
 * (the socket attacks share their listeners, flippers and message
 * builders; the executable's share one program and its runs).
 *
 * An outside review of two trusted surfaces, each attack run and counted.
 *
 * Sockets (user/trusted/b_net.c): a source route (IP_OPTIONS, IPv6's
 * routing header, in a socket option or in sendmsg's control data) would
 * make the kernel send a granted connection's packets first to an address
 * of the program's choosing: refused; control-message layouts the kernel
 * walks one way are walked the same way by B (a descriptor of sandpit's
 * anywhere the kernel would take it is EBADF, anywhere it would not is
 * left alone); sendmsg's name and control data rewritten while B checks
 * them; the addresses that name a host no grant does (0.0.0.0, ::,
 * v4-compatible, scope ids), TCP fast open, sendto, sendmmsg, AF_UNIX
 * names and autobind, descriptors that are sandpit's, bad pointers and
 * lengths.
 *
 * The program's own executable under `sandpit run` (user/trusted/b_exe.c):
 * no descriptor of the program's file is open in the program but its own,
 * the O_PATH descriptor of the link and its readlinkat(fd, ""), a thread's
 * /proc/<tid>/exe (and after the thread is gone), `..` spellings, other
 * processes' links, and every metadata change through the link or the
 * descriptor B hands over (EACCES, the file unchanged). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "kselftest_harness.h"

#ifndef MSG_CMSG_COMPAT
#define MSG_CMSG_COMPAT 0x80000000 /* the kernel's, which libc does not give */
#endif
#include "sandpit.h"
#include "selftests/build_dir.h"
#include "selftests/net_util.h"
#include "selftests/run_util.h"
#include "selftests/sandbox_util.h"
#include "selftests/u_state.h"

/* ---- helpers ---- */

static int datagrams(int s)
{
	char buf[64];
	int n = 0;
	while (recv(s, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		n++;
	return n;
}

static struct sockaddr_in6 addr6(const char *text, int port)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	inet_pton(AF_INET6, text, &a.sin6_addr);
	return a;
}

static const char *const *grants_of(char g[2][32], int tcp, int udp)
{
	static const char *grants[3];
	snprintf(g[0], 32, "127.0.0.1:%d", tcp);
	snprintf(g[1], 32, "127.0.0.1:%d", udp);
	grants[0] = g[0];
	grants[1] = g[1];
	grants[2] = NULL;
	return grants;
}

/* the body natively (a child, no sandbox), without the capabilities that
 * sandpit_start drops too (the suite may run as root) */
static int run_native(int (*fn)(void *), void *arg)
{
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];
		memset(d, 0, sizeof(d));
		if (syscall(SYS_capset, &h, d))
			_exit(99);
		_exit(fn(arg));
	}
	int st;
	waitpid(p, &st, 0);
	return st;
}

static int count_of(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* ---- source routes ---- */

/* IPv4 loose source route: first to 127.0.0.2, then (the kernel writes
 * it) the destination the call names */
static const unsigned char lsrr[8] = { 0x83, 7, 4, 127, 0, 0, 2, 0 };

/* IPv6 segment routing header: first to 2001:db8::7, then ::1 */
static void srh(unsigned char out[40])
{
	memset(out, 0, 40);
	out[1] = 4; /* hdrlen: 2 segments of 16 bytes, in 8-byte units */
	out[2] = 4; /* type: SRH */
	out[3] = 1; /* segments left */
	out[4] = 1; /* last entry */
	inet_pton(AF_INET6, "::1", out + 8);
	inet_pton(AF_INET6, "2001:db8::7", out + 24);
}

static long set(int fd, int level, int name, const void *v, socklen_t l)
{
	return setsockopt(fd, level, name, v, l) ? -errno : 0;
}

/* one byte to `to`, with a control message of level/type/data, behind an
 * IP_TOS one when lead */
static long send_ctl(int fd, const void *to, socklen_t tl, int level, int type, const void *data,
		     size_t dl, int lead)
{
	union {
		char buf[256];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	char byte = 'r';
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_name = (void *)to, .msg_namelen = tl, .msg_iov = &iov,
			    .msg_iovlen = 1, .msg_control = u.buf };
	size_t off = 0;
	if (lead) {
		struct cmsghdr *c = (struct cmsghdr *)u.buf;
		c->cmsg_level = SOL_IP;
		c->cmsg_type = IP_TOS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		off = CMSG_SPACE(sizeof(int));
	}
	struct cmsghdr *c = (struct cmsghdr *)(u.buf + off);
	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(dl);
	memcpy(CMSG_DATA(c), data, dl);
	m.msg_controllen = off + CMSG_SPACE(dl);
	return sendmsg(fd, &m, 0) < 0 ? -errno : 1;
}

struct route_out {
	int tcp_port, udp_port, lo, hi, boxed;
	long r[24];
};

#define NROUTE 22

static int body_routes(void *a)
{
	struct route_out *o = a;
	int t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int u6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int p[2];
	if (t < 0 || u < 0 || u6 < 0 || pipe(p))
		return 1;
	struct sockaddr_in to = loop4(o->udp_port);
	struct sockaddr_in6 to6 = addr6("::1", o->udp_port);
	unsigned char rh[40], pkt[CMSG_SPACE(40)];
	srh(rh);
	memset(pkt, 0, sizeof(pkt));
	struct cmsghdr *pc = (struct cmsghdr *)pkt;
	pc->cmsg_level = SOL_IPV6;
	pc->cmsg_type = IPV6_RTHDR;
	pc->cmsg_len = CMSG_LEN(40);
	memcpy(CMSG_DATA(pc), rh, 40);
	int one = 1, tos = 0x10, idle = 30;
	int i = 0;
	/* the source routes, as options */
	o->r[i++] = set(t, SOL_IP, IP_OPTIONS, lsrr, sizeof(lsrr));                /* 0 */
	o->r[i++] = set(u6, SOL_IPV6, IPV6_RTHDR, rh, sizeof(rh));                 /* 1 */
	o->r[i++] = set(u6, SOL_IPV6, IPV6_2292PKTOPTIONS, pkt, sizeof(pkt));      /* 2 */
	/* the level with a bit above the int the kernel takes */
	o->r[i++] = syscall(SYS_setsockopt, u, 0x100000000L | SOL_IP, IP_OPTIONS, lsrr,
			    sizeof(lsrr)) < 0 ? -errno : 0;                              /* 3 */
	o->r[i++] = syscall(SYS_setsockopt, u, SOL_IP, 0x100000000L | IP_OPTIONS, lsrr,
			    sizeof(lsrr)) < 0 ? -errno : 0;                              /* 4 */
	/* the source routes, as control data to the granted address */
	o->r[i++] = send_ctl(u, &to, sizeof(to), SOL_IP, IP_RETOPTS, lsrr, sizeof(lsrr), 0); /* 5 */
	o->r[i++] = send_ctl(u, &to, sizeof(to), SOL_IP, IP_RETOPTS, lsrr, sizeof(lsrr), 1); /* 6 */
	o->r[i++] = send_ctl(u6, &to6, sizeof(to6), SOL_IPV6, IPV6_RTHDR, rh, sizeof(rh), 0); /* 7 */
	o->r[i++] = send_ctl(u6, &to6, sizeof(to6), SOL_IPV6, IPV6_2292RTHDR, rh, sizeof(rh), 0); /* 8 */
	/* ordinary options and control data, the same name at another level */
	o->r[i++] = set(u, SOL_IP, IP_TOS, &tos, sizeof(tos));                     /* 9 */
	o->r[i++] = set(t, SOL_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));            /* 10 */
	o->r[i++] = set(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));           /* 11 */
	o->r[i++] = set(u6, SOL_IPV6, IPV6_V6ONLY, &one, sizeof(one));             /* 12 */
	o->r[i++] = send_ctl(u, &to, sizeof(to), SOL_IP, IP_TOS, &tos, sizeof(tos), 0); /* 13: arrives */
	/* a connected UDP socket given a route afterwards */
	o->r[i++] = connect(u, (struct sockaddr *)&to, sizeof(to)) ? -errno : 0;  /* 14 */
	o->r[i++] = set(u, SOL_IP, IP_OPTIONS, lsrr, sizeof(lsrr));                /* 15 */
	o->r[i++] = send(u, "c", 1, 0) < 0 ? -errno : 1;                           /* 16: arrives boxed */
	/* sandpit's descriptors and a descriptor that is no socket */
	if (o->boxed) {
		const struct secure_page *sp = state_of(my_mailbox())->sp;
		o->lo = sp->fd_lo;
		o->hi = sp->fd_hi;
	}
	o->r[i++] = o->boxed ? set(o->lo + 2, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one)) : -EBADF; /* 17 */
	o->r[i++] = set(p[0], SOL_SOCKET, SO_RCVBUF, &one, sizeof(one));           /* 18 */
	/* where a connection to the granted [::1] goes with a routing header:
	 * its source address is the route's (or there is no route) */
	int w6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	o->r[i++] = set(w6, SOL_IPV6, IPV6_RTHDR, rh, sizeof(rh));                 /* 19 */
	o->r[i++] = connect(w6, (struct sockaddr *)&to6, sizeof(to6)) ? -errno : 0; /* 20 */
	struct sockaddr_in6 src;
	socklen_t sl = sizeof(src);
	o->r[i++] = !getsockname(w6, (struct sockaddr *)&src, &sl) &&
		    IN6_IS_ADDR_LOOPBACK(&src.sin6_addr);                          /* 21: direct */
	return 0;
}

/* the kernel takes every one of these routes from an unprivileged program
 * (natively: each 0, the UDP datagrams with a route never reach the
 * granted address directly); in the sandbox each is EACCES, and what
 * arrives is only what was sent without one */
TEST(source_routes_in_options_and_control_data_never_leave_the_granted_address)
{
	int tport, uport;
	int l = listener(&tport, SOCK_STREAM), r = listener(&uport, SOCK_DGRAM);
	ASSERT_LE(0, l);
	ASSERT_LE(0, r);
	struct route_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	o->tcp_port = tport;
	o->udp_port = uport;
	/* natively, without capabilities: IPv6's routing header is there for
	 * any program, and a connection to ::1 then goes by its first
	 * segment (2001:db8::7): from another source address, or nowhere
	 * without a route; IPv4's options need CAP_NET_RAW on this kernel
	 * (EPERM), not on older ones (0) */
	ASSERT_EQ(0, outcome(run_native(body_routes, o)));
	EXPECT_EQ(0, o->r[1]);
	EXPECT_EQ(0, o->r[19]);
	EXPECT_TRUE(o->r[20] == -ENETUNREACH || (o->r[20] == 0 && o->r[21] == 0))
	TH_LOG("natively connect %ld, direct %ld", o->r[20], o->r[21]);
	TH_LOG("natively: IP_OPTIONS %ld, IP_RETOPTS %ld; %d datagram(s) of 4 arrived", o->r[0],
	       o->r[5], datagrams(r));
	/* in the sandbox, with both ports granted */
	memset(o->r, 0, sizeof(o->r));
	o->boxed = 1;
	char g[3][32];
	snprintf(g[0], 32, "127.0.0.1:%d", tport);
	snprintf(g[1], 32, "127.0.0.1:%d", uport);
	snprintf(g[2], 32, "[::1]:%d", uport);
	const char *grants[] = { g[0], g[1], g[2], NULL };
	struct sandpit_options opts = { .flags = SANDPIT_OPT_CONNECT, .allow_connect = grants };
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_routes, o, &opts, 30)));
	static const long want[NROUTE] = {
		-EACCES, -EACCES, -EACCES, -EACCES, 0 /* name 0x100000004: below */, -EACCES,
		-EACCES, -EACCES, -EACCES, 0, 0, 0, 0, 1, 0, -EACCES, 1, -EBADF, -ENOTSOCK,
		-EACCES, 0, 1
	};
	int refused = 0;
	for (int i = 0; i < NROUTE; i++) {
		if (i == 4) {
			/* the name as an int too */
			EXPECT_EQ(-EACCES, o->r[i]);
		} else {
			EXPECT_EQ(want[i], o->r[i]) TH_LOG("step %d (block %d..%d)", i, o->lo, o->hi);
		}
		refused += o->r[i] == -EACCES;
	}
	EXPECT_EQ(11, refused);
	/* the datagram with IP_TOS and the one on the connected socket */
	EXPECT_EQ(2, datagrams(r));
	close(l);
	close(r);
}

/* text (malloc'd, freed) with its one line `old` replaced by `new`, or NULL */
static char *replace_line(char *text, const char *old, const char *new)
{
	char *at = text ? strstr(text, old) : NULL;
	if (!at || (at != text && at[-1] != '\n')) {
		free(text);
		return NULL;
	}
	size_t head = (size_t)(at - text), ol = strlen(old), nl = strlen(new);
	char *out = malloc(strlen(text) - ol + nl + 1);
	memcpy(out, text, head);
	memcpy(out + head, new, nl);
	strcpy(out + head + nl, at + ol);
	free(text);
	return out;
}

extern const char sandpit_default_policy[];
extern const uint64_t sandpit_default_policy_len;

/* `sandpit run` with a policy file and a connect grant: setsockopt must be
 * B's too (or denied), or the grant is refused naming it */
TEST(a_policy_file_that_allows_setsockopt_is_refused_with_a_connect_grant)
{
	char dir[] = "/tmp/sandpit-rev12-XXXXXX", path[96], cli[PATH_MAX], err[4096];
	ASSERT_NE(NULL, mkdtemp(dir));
	/* the default policy with socket `process`, its setsockopt line each
	 * of these */
	char *text = replace_line(strndup(sandpit_default_policy, sandpit_default_policy_len),
				  "socket: arg0 == AF_UNIX; deny(EAFNOSUPPORT)\n", "socket: process\n");
	ASSERT_NE(NULL, text);
	snprintf(path, sizeof(path), "%s/net.policy", dir);
	snprintf(cli, sizeof(cli), "%s/sandpit", bindir);
	static const struct {
		const char *line;
		int status;
	} cases[] = {
		{ "setsockopt: allow\n", 125 },
		{ "setsockopt: process\n", 0 },
		{ "setsockopt: deny(EACCES)\n", 0 },
	};
	int fe = memfd_create("err", 0);
	ASSERT_LE(0, fe);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f = fopen(path, "w");
		ASSERT_NE(NULL, f);
		char *mine = replace_line(strdup(text), "setsockopt: process\n", cases[i].line);
		ASSERT_NE(NULL, mine);
		fputs(mine, f);
		free(mine);
		fclose(f);
		char opt[128];
		snprintf(opt, sizeof(opt), "--policy=%s", path);
		const char *argv[] = { cli, "run", opt, "--allow-connect=127.0.0.1:9", "--",
				       "/bin/true", NULL };
		ASSERT_EQ(0, ftruncate(fe, 0));
		EXPECT_EQ(cases[i].status, run_cli(cli, argv, fe, fe));
		read_all(fe, err, sizeof(err));
		if (cases[i].status) {
			EXPECT_NE(NULL, strstr(err, "setsockopt are 'process' (this one's setsockopt "
						    "is not)")) TH_LOG("%s", err);
		}
	}
	close(fe);
	free(text);
	unlink(path);
	rmdir(dir);
}

/* the minijail export keeps sendto's "no address" (the kinds' rule, which
 * minijail can say): dropped, it let a program under minijail send to
 * any named socket */
TEST(export_minijail_keeps_sendtos_no_address)
{
	char cli[PATH_MAX], out[1 << 16];
	snprintf(cli, sizeof(cli), "%s/sandpit", bindir);
	int fo = memfd_create("out", 0), fe = memfd_create("err", 0);
	ASSERT_LE(0, fo);
	const char *argv[] = { cli, "policy", "export-minijail", NULL };
	ASSERT_EQ(0, run_cli(cli, argv, fo, fe));
	read_all(fo, out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "\nsendto: arg4 == 0; return EACCES\n"));
	EXPECT_EQ(NULL, strstr(out, "\nsendto: allow\n"));
	EXPECT_NE(NULL, strstr(out, "\nsocket: arg0 == 0x1; return EAFNOSUPPORT\n"));
	close(fo);
	close(fe);
}

/* ---- control-message layouts: B's walk is the kernel's ---- */

#define NLAYOUT 13

struct layout_out {
	int sandpit; /* the marker is one of sandpit's descriptors */
	int lo;
	long r[NLAYOUT];
	int got[NLAYOUT], marker_got[NLAYOUT];
	ino_t pipe_ino, marker_ino;
};

/* a SCM_RIGHTS header at off, of cmsg_len len, with the fds after it */
static size_t put_rights(unsigned char *b, size_t off, size_t len, const int *fds, int n)
{
	struct cmsghdr h = { .cmsg_len = len, .cmsg_level = SOL_SOCKET, .cmsg_type = SCM_RIGHTS };
	memcpy(b + off, &h, sizeof(h));
	memcpy(b + off + sizeof(h), fds, n * sizeof(int));
	return off + CMSG_ALIGN(len);
}

/* layout k with the pipe's descriptor and the marker: its controllen */
static size_t layout(int k, unsigned char *b, int pipe_fd, int marker, int *flags)
{
	int both[2] = { pipe_fd, marker };
	size_t off;
	*flags = MSG_DONTWAIT;
	switch (k) {
	case 0: /* two messages, the marker in the second */
		off = put_rights(b, 0, CMSG_LEN(4), &pipe_fd, 1);
		return put_rights(b, off, CMSG_LEN(4), &marker, 1);
	case 1: /* a misaligned length (23): the next starts at 24 */
		off = put_rights(b, 0, CMSG_LEN(4) + 3, &pipe_fd, 1);
		return put_rights(b, off, CMSG_LEN(4), &marker, 1);
	case 2: /* one message ending exactly at a controllen of 20 */
		put_rights(b, 0, CMSG_LEN(4), &marker, 1);
		return CMSG_LEN(4);
	case 3: /* the second ends exactly at the end (44) */
		off = put_rights(b, 0, CMSG_LEN(4), &pipe_fd, 1);
		put_rights(b, off, CMSG_LEN(4), &marker, 1);
		return off + CMSG_LEN(4);
	case 4: { /* another level's message, then the marker */
		struct cmsghdr h = { .cmsg_len = CMSG_LEN(4), .cmsg_level = 12345,
				     .cmsg_type = SCM_RIGHTS };
		memcpy(b, &h, sizeof(h));
		memcpy(b + sizeof(h), &pipe_fd, 4);
		return put_rights(b, CMSG_SPACE(4), CMSG_LEN(4), &marker, 1);
	}
	case 5: /* two descriptors and two stray bytes (26) */
		return put_rights(b, 0, CMSG_LEN(8) + 2, both, 2);
	case 6: /* the marker in a tail shorter than a header: not a message */
		off = put_rights(b, 0, CMSG_LEN(4), &pipe_fd, 1);
		memcpy(b + off + 8, &marker, 4);
		return off + 12;
	case 7: /* a length past the end */
		put_rights(b, 0, 4096, both, 2);
		return CMSG_SPACE(8);
	case 8: /* a length shorter than a header */
		put_rights(b, 0, 8, both, 2);
		return CMSG_SPACE(8);
	case 9: /* a controllen of 15: no header fits */
		put_rights(b, 0, CMSG_LEN(4), &marker, 1);
		return 15;
	case 10: /* more than B copies, the marker past it */
		off = 0;
		while (off + CMSG_SPACE(4) <= 1200)
			off = put_rights(b, off, CMSG_LEN(4), &pipe_fd, 1);
		return put_rights(b, off, CMSG_LEN(4), &marker, 1);
	case 11: /* MSG_CMSG_COMPAT, which the kernel refuses from a 64-bit call */
		*flags |= MSG_CMSG_COMPAT;
		return put_rights(b, 0, CMSG_LEN(4), &marker, 1);
	case 12: /* the marker in the second message, after a zero-length-data one */
		off = put_rights(b, 0, CMSG_LEN(0), NULL, 0);
		return put_rights(b, off, CMSG_LEN(4), &marker, 1);
	}
	return 0;
}

static int body_layouts(void *a)
{
	struct layout_out *o = a;
	int pair[2], p[2], q[2];
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, pair) || pipe(p) || pipe(q))
		return 1;
	int marker = q[1];
	if (o->sandpit) {
		const struct secure_page *sp = state_of(my_mailbox())->sp;
		o->lo = sp->fd_lo;
		marker = sp->fd_lo + 2;
	}
	struct stat ps, qs;
	fstat(p[1], &ps);
	fstat(q[1], &qs);
	o->pipe_ino = ps.st_ino;
	o->marker_ino = qs.st_ino;
	static unsigned char b[4096] __attribute__((aligned(8)));
	for (int k = 0; k < NLAYOUT; k++) {
		int flags;
		memset(b, 0, sizeof(b));
		size_t len = layout(k, b, p[1], marker, &flags);
		char byte = 'x';
		struct iovec iov = { &byte, 1 };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = b,
				    .msg_controllen = len };
		o->r[k] = sendmsg(pair[0], &m, flags) < 0 ? -errno : 1;
		/* what arrived: every descriptor of every message */
		union {
			char buf[CMSG_SPACE(300 * sizeof(int))];
			struct cmsghdr align;
		} u;
		struct msghdr in = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
				     .msg_controllen = sizeof(u.buf) };
		while (recvmsg(pair[1], &in, MSG_DONTWAIT) >= 0) {
			for (struct cmsghdr *c = CMSG_FIRSTHDR(&in); c; c = CMSG_NXTHDR(&in, c)) {
				if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
					continue;
				int n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
				for (int j = 0; j < n; j++) {
					int fd;
					struct stat gs;
					memcpy(&fd, CMSG_DATA(c) + j * sizeof(int), sizeof(fd));
					o->got[k]++;
					if (fstat(fd, &gs) || gs.st_ino != ps.st_ino)
						o->marker_got[k]++;
					close(fd);
				}
			}
			in.msg_controllen = sizeof(u.buf);
		}
	}
	return 0;
}

/* each layout natively with a pipe as the marker, then in the sandbox with
 * the pipe and with one of sandpit's descriptors: the kernel's outcome
 * and descriptors with the pipe; with sandpit's, EBADF wherever the kernel
 * took the marker (nothing arrives), the kernel's outcome elsewhere */
TEST(control_layouts_are_walked_by_b_as_the_kernel_walks_them)
{
	struct layout_out *n = shared_page(sizeof(*n)), *s = shared_page(sizeof(*s)),
			  *x = shared_page(sizeof(*x));
	ASSERT_NE(NULL, n);
	ASSERT_NE(NULL, s);
	ASSERT_NE(NULL, x);
	ASSERT_EQ(0, outcome(run_native(body_layouts, n)));
	ASSERT_EQ(0, outcome(run_sandboxed(body_layouts, s)));
	x->sandpit = 1;
	ASSERT_EQ(0, outcome(run_sandboxed(body_layouts, x)));
	int taken = 0, refused = 0;
	for (int k = 0; k < NLAYOUT; k++) {
		TH_LOG("layout %d: native %ld (%d fds, %d marker), pipe %ld, sandpit's %ld (%d fds)",
		       k, n->r[k], n->got[k], n->marker_got[k], s->r[k], x->r[k], x->got[k]);
		if (k == 10) { /* more than B copies: refused whole */
			EXPECT_EQ(-ENOBUFS, s->r[k]);
			EXPECT_EQ(-ENOBUFS, x->r[k]);
			EXPECT_EQ(0, x->got[k]);
			refused++;
			continue;
		}
		EXPECT_EQ(n->r[k], s->r[k]) TH_LOG("layout %d", k);
		EXPECT_EQ(n->got[k], s->got[k]) TH_LOG("layout %d", k);
		EXPECT_EQ(n->marker_got[k], s->marker_got[k]) TH_LOG("layout %d", k);
		/* the kernel reads the marker where it would pass it, or
		 * refuses the message (compat) after reading it */
		int reads_marker = n->marker_got[k] > 0 || k == 11;
		if (reads_marker) {
			taken++;
			EXPECT_EQ(-EBADF, x->r[k]) TH_LOG("layout %d", k);
			EXPECT_EQ(0, x->got[k]) TH_LOG("layout %d", k);
			refused += x->r[k] == -EBADF;
		} else {
			EXPECT_EQ(n->r[k], x->r[k]) TH_LOG("layout %d", k);
			EXPECT_EQ(0, x->marker_got[k]) TH_LOG("layout %d", k);
		}
	}
	/* where the kernel takes the marker: 0-5 and 12, and the compat flag */
	EXPECT_EQ(8, taken);
	EXPECT_EQ(9, refused);
	EXPECT_EQ(-EINVAL, n->r[7]);
	EXPECT_EQ(-EINVAL, n->r[8]);
	EXPECT_EQ(-EINVAL, n->r[11]);
	EXPECT_EQ(0, n->got[6] - 1); /* the tail is not a message */
	EXPECT_EQ(0, n->got[9]);
}

/* ---- rewrites while B checks ---- */

#define REWRITE_ROUNDS 3000

struct rw_out {
	volatile int stop;
	int granted, other;
	long flips, sent, refused, strange;
	long tflips, tsent, trefused, tstrange;
};

static struct sockaddr_in rw_ok, rw_no;
static struct msghdr rw_msg;
static unsigned char rw_ctl[CMSG_SPACE(sizeof(int))] __attribute__((aligned(8)));

static void *name_flipper(void *p)
{
	struct rw_out *o = p;
	volatile struct msghdr *m = &rw_msg;
	while (!o->stop) {
		m->msg_name = &rw_ok;
		m->msg_name = &rw_no;
		o->flips++;
	}
	return NULL;
}

static void *type_flipper(void *p)
{
	struct rw_out *o = p;
	volatile int *type = &((struct cmsghdr *)rw_ctl)->cmsg_type;
	while (!o->stop) {
		*type = IP_TOS;
		*type = IP_RETOPTS;
		o->tflips++;
	}
	return NULL;
}

static int body_rewrites(void *a)
{
	struct rw_out *o = a;
	int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (u < 0)
		return 1;
	rw_ok = loop4(o->granted);
	rw_no = loop4(o->other);
	char byte = 'w';
	struct iovec iov = { &byte, 1 };
	rw_msg = (struct msghdr){ .msg_name = &rw_ok, .msg_namelen = sizeof(rw_ok), .msg_iov = &iov,
				  .msg_iovlen = 1 };
	pthread_t t;
	/* the header's name pointer: the granted address or the other */
	if (pthread_create(&t, NULL, name_flipper, o))
		return 2;
	for (int i = 0; i < REWRITE_ROUNDS ||
			((o->sent < 20 || o->refused < 20) && i < 50 * REWRITE_ROUNDS);
	     i++) {
		if (sendmsg(u, &rw_msg, 0) == 1)
			o->sent++;
		else if (errno == EACCES)
			o->refused++;
		else
			o->strange++;
	}
	o->stop = 1;
	pthread_join(t, NULL);
	/* the control message's type: IP_TOS or the source route */
	o->stop = 0;
	struct msghdr m = { .msg_name = &rw_ok, .msg_namelen = sizeof(rw_ok), .msg_iov = &iov,
			    .msg_iovlen = 1, .msg_control = rw_ctl, .msg_controllen = sizeof(rw_ctl) };
	struct cmsghdr *c = (struct cmsghdr *)rw_ctl;
	c->cmsg_level = SOL_IP;
	c->cmsg_type = IP_TOS;
	/* as IP_TOS, 0x10; as IP_RETOPTS, an option the kernel refuses
	 * (EINVAL): never seen, if the kernel reads only B's copy */
	c->cmsg_len = CMSG_LEN(sizeof(int));
	int tos = 0x10;
	memcpy(CMSG_DATA(c), &tos, sizeof(tos));
	m.msg_controllen = CMSG_SPACE(sizeof(int));
	if (pthread_create(&t, NULL, type_flipper, o))
		return 3;
	for (int i = 0; i < REWRITE_ROUNDS ||
			((o->tsent < 20 || o->trefused < 20) && i < 50 * REWRITE_ROUNDS);
	     i++) {
		long r = sendmsg(u, &m, 0);
		if (r == 1)
			o->tsent++;
		else if (errno == EACCES)
			o->trefused++;
		else
			o->tstrange++;
	}
	o->stop = 1;
	pthread_join(t, NULL);
	return 0;
}

struct drainer {
	int fd;
	volatile int stop;
	long n;
};

static void *drain_thread(void *p)
{
	struct drainer *d = p;
	char buf[8];
	while (!d->stop) {
		if (recv(d->fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
			d->n++;
		else
			usleep(100);
	}
	return NULL;
}

/* sendmsg whose name pointer, then whose control message's type, another
 * thread rewrites while B checks: both answers come, nothing reaches the
 * other port, and every datagram sent arrived at the granted one directly
 * (none went by a route) */
TEST(sendmsg_name_and_control_rewritten_during_the_check_never_reach_elsewhere)
{
	int granted, other;
	int g = listener(&granted, SOCK_DGRAM), x = listener(&other, SOCK_DGRAM);
	ASSERT_LE(0, g);
	ASSERT_LE(0, x);
	char gr[2][32];
	struct sandpit_options opts = { .flags = SANDPIT_OPT_CONNECT,
					.allow_connect = grants_of(gr, granted, granted) };
	struct rw_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	o->granted = granted;
	o->other = other;
	/* drained as they come: a full receive queue would drop some */
	struct drainer dr = { .fd = g };
	pthread_t t;
	ASSERT_EQ(0, pthread_create(&t, NULL, drain_thread, &dr));
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_rewrites, o, &opts, 120)));
	usleep(200000);
	dr.stop = 1;
	pthread_join(t, NULL);
	TH_LOG("name: %ld flips, %ld sent, %ld refused, %ld other", o->flips, o->sent, o->refused,
	       o->strange);
	TH_LOG("type: %ld flips, %ld sent, %ld refused, %ld other", o->tflips, o->tsent,
	       o->trefused, o->tstrange);
	EXPECT_LT(0, o->flips);
	EXPECT_LE(20, o->sent);
	EXPECT_LE(20, o->refused);
	EXPECT_EQ(0, o->strange);
	EXPECT_LT(0, o->tflips);
	EXPECT_LE(20, o->tsent);
	EXPECT_LE(20, o->trefused);
	EXPECT_EQ(0, o->tstrange);
	EXPECT_EQ(0, datagrams(x));
	EXPECT_EQ(o->sent + o->tsent, dr.n + datagrams(g));
	close(g);
	close(x);
}

/* ---- addresses, calls and arguments ---- */

struct misc_out {
	int granted, other, uport, lo;
	long r[40];
};

#define NMISC 33

/* a non-blocking connect under way is one that was allowed */
static long conn(int s, const void *sa, socklen_t len)
{
	return connect(s, sa, len) && errno != EINPROGRESS ? -errno : 0;
}

static int body_misc(void *a)
{
	struct misc_out *o = a;
	const struct secure_page *sp = state_of(my_mailbox())->sp;
	o->lo = sp->fd_lo;
	struct sockaddr_in ok = loop4(o->granted), no = loop4(o->other), uok = loop4(o->uport);
	struct sockaddr_in any = ok;
	any.sin_addr.s_addr = 0;
	struct sockaddr_in6 compat = addr6("::127.0.0.1", o->granted),
			    unspec6 = addr6("::", o->granted),
			    scoped = addr6("fe80::1", o->granted),
			    mapped = addr6("::ffff:127.0.0.1", o->granted);
	scoped.sin6_scope_id = 1;
	int i = 0;
	char byte = 'm';
	struct iovec iov = { &byte, 1 };
#define S(fam, type) socket(fam, (type) | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)
#define R(call) (o->r[i++] = (call) < 0 ? -errno : 0)
	int t = S(AF_INET, SOCK_STREAM), u = S(AF_INET, SOCK_DGRAM);
	/* sendto names no address, not even a granted one, fast open or not */
	R(sendto(u, "x", 1, 0, (struct sockaddr *)&uok, sizeof(uok)));              /* 0 */
	R(sendto(t, "x", 1, MSG_FASTOPEN, (struct sockaddr *)&ok, sizeof(ok)));     /* 1 */
	/* fast open through sendmsg: only the granted address */
	struct msghdr m = { .msg_name = &no, .msg_namelen = sizeof(no), .msg_iov = &iov,
			    .msg_iovlen = 1 };
	R(sendmsg(t, &m, MSG_FASTOPEN));                                          /* 2 */
	close(t);
	t = S(AF_INET, SOCK_STREAM);
	m.msg_name = &ok;
	long fo = sendmsg(t, &m, MSG_FASTOPEN);
	o->r[i++] = fo < 0 && errno != EINPROGRESS ? -errno : 0;                   /* 3 */
	close(t);
	/* sendmmsg, whatever it names */
	struct mmsghdr mm = { .msg_hdr = { .msg_name = &uok, .msg_namelen = sizeof(uok),
					   .msg_iov = &iov, .msg_iovlen = 1 } };
	R(sendmmsg(u, &mm, 1, 0));                                                 /* 4 */
	/* addresses that reach a host the grant does not name */
	int s6;
	R(connect(t = S(AF_INET, SOCK_STREAM), (struct sockaddr *)&any, sizeof(any))); /* 5 */
	close(t);
	R(connect(s6 = S(AF_INET6, SOCK_STREAM), (struct sockaddr *)&unspec6, sizeof(unspec6))); /* 6 */
	close(s6);
	R(connect(s6 = S(AF_INET6, SOCK_STREAM), (struct sockaddr *)&compat, sizeof(compat))); /* 7 */
	close(s6);
	R(connect(s6 = S(AF_INET6, SOCK_STREAM), (struct sockaddr *)&scoped, sizeof(scoped))); /* 8 */
	close(s6);
	/* the mapped address in the 24 bytes the kernel takes: the grant's */
	o->r[i++] = conn(s6 = S(AF_INET6, SOCK_STREAM), &mapped, 24);             /* 9: 0 */
	close(s6);
	/* an IPv4 address too short, and too long */
	R(connect(t = S(AF_INET, SOCK_STREAM), (struct sockaddr *)&ok, 8));         /* 10 */
	static unsigned char longer[200];
	memcpy(longer, &ok, sizeof(ok));
	R(connect(t, (struct sockaddr *)longer, 129));                             /* 11 */
	R(connect(t, (struct sockaddr *)longer, 0x7fffffff));                      /* 12 */
	R(connect(t, (struct sockaddr *)8, 16));                                   /* 13 */
	R(connect(t, (struct sockaddr *)&ok, 0));                                  /* 14 */
	/* AF_UNSPEC on TCP: a disconnect, no address */
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };
	R(connect(t, &unspec, sizeof(unspec)));                                    /* 15 */
	close(t);
	/* AF_UNIX: autobind, abstract, named; listen and bind */
	int x = S(AF_UNIX, SOCK_DGRAM);
	struct sockaddr_un auto_ = { .sun_family = AF_UNIX };
	R(connect(x, (struct sockaddr *)&auto_, sizeof(sa_family_t)));             /* 16 */
	struct sockaddr_un abs = { .sun_family = AF_UNIX, .sun_path = "\0rev12" };
	m = (struct msghdr){ .msg_name = &abs, .msg_namelen = offsetof(struct sockaddr_un, sun_path) + 6,
			     .msg_iov = &iov, .msg_iovlen = 1 };
	R(sendmsg(x, &m, 0));                                                      /* 17 */
	struct sockaddr_un named = { .sun_family = AF_UNIX, .sun_path = "/dev/log" };
	m.msg_name = &named;
	m.msg_namelen = sizeof(named);
	R(sendmsg(x, &m, 0));                                                      /* 18 */
	int y = S(AF_UNIX, SOCK_STREAM);
	R(listen(y, 1));                                                           /* 19 */
	R(bind(x, (struct sockaddr *)&auto_, sizeof(sa_family_t)));               /* 20 */
	/* the message header and its parts unreadable or out of range */
	R(sendmsg(u, NULL, 0));                                                    /* 21 */
	m = (struct msghdr){ .msg_name = (void *)8, .msg_namelen = 16, .msg_iov = &iov,
			     .msg_iovlen = 1 };
	R(sendmsg(u, &m, 0));                                                      /* 22 */
	m.msg_name = &uok;
	m.msg_namelen = 0x80000000u;
	R(sendmsg(u, &m, 0));                                                      /* 23 */
	m.msg_namelen = sizeof(uok);
	m.msg_control = (void *)8;
	m.msg_controllen = 16;
	R(sendmsg(u, &m, 0));                                                      /* 24 */
	m.msg_control = &m;
	m.msg_controllen = (size_t)-1;
	R(sendmsg(u, &m, 0));                                                      /* 25 */
	/* sandpit's descriptors, a pipe, a number not open */
	int p[2];
	if (pipe(p))
		return 1;
	m.msg_control = NULL;
	m.msg_controllen = 0;
	R(connect(sp->fd_lo, (struct sockaddr *)&ok, sizeof(ok)));                 /* 26 */
	R(sendmsg(sp->fd_lo + 2, &m, 0));                                          /* 27 */
	R(connect(p[0], (struct sockaddr *)&ok, sizeof(ok)));                      /* 28 */
	R(sendmsg(999, &m, 0));                                                    /* 29 */
	/* no io_uring, which would make these calls unchecked */
	R(syscall(SYS_io_uring_setup, 8, (void *)longer));                         /* 30 */
	/* and B still answers: the granted port, and a datagram */
	o->r[i++] = conn(t = S(AF_INET, SOCK_STREAM), &ok, sizeof(ok));           /* 31 */
	R(sendmsg(u, &m, 0));                                                      /* 32 */
	close(t);
	return 0;
#undef R
#undef S
}

TEST(addresses_calls_and_arguments_that_reach_no_grant_are_refused_precisely)
{
	int granted, other, uport;
	int l1 = listener(&granted, SOCK_STREAM), l2 = listener(&other, SOCK_STREAM),
	    u1 = listener(&uport, SOCK_DGRAM);
	ASSERT_LE(0, l1);
	ASSERT_LE(0, l2);
	ASSERT_LE(0, u1);
	char g[2][32];
	struct sandpit_options opts = { .flags = SANDPIT_OPT_CONNECT,
					.allow_connect = grants_of(g, granted, uport) };
	struct misc_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	o->granted = granted;
	o->other = other;
	o->uport = uport;
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_misc, o, &opts, 30)));
	static const long want[NMISC] = {
		-EACCES, -EACCES, -EACCES, 0, -EACCES,                 /* 0-4 */
		-EACCES, -EACCES, -EACCES, -EACCES, 0,                 /* 5-9 */
		-EINVAL, -EINVAL, -EINVAL, -EFAULT, -EINVAL, 0,        /* 10-15 */
		-EACCES, -EACCES, -EACCES, -EACCES, -EACCES,           /* 16-20 */
		-EFAULT, -EFAULT, -EINVAL, -EFAULT, -ENOBUFS,          /* 21-25 */
		-EBADF, -EBADF, -ENOTSOCK, -EBADF, -EPERM, 0, 0        /* 26-32 */
	};
	for (int i = 0; i < NMISC; i++) {
		EXPECT_EQ(want[i], o->r[i]) TH_LOG("step %d (block from %d)", i, o->lo);
	}
	/* what reached the granted listener: fast open's and the mapped
	 * connect, the last connect; the other: nothing */
	usleep(100000);
	EXPECT_EQ(3, drain(l1));
	EXPECT_EQ(0, drain(l2));
	EXPECT_EQ(1, datagrams(u1));
	close(l1);
	close(l2);
	close(u1);
}

/* ---- sockets from before the start, and names the kernel gives ---- */

struct before_out {
	int s6, port, other;
	volatile int named, outside_done;
	struct sockaddr_un name;
	socklen_t namelen;
	long r[8];
	int got;
};

static int body_before(void *a)
{
	struct before_out *o = a;
	unsigned char rh[40];
	srh(rh);
	struct sockaddr_in6 other = addr6("::1", o->other);
	char byte = 'b';
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_name = &other, .msg_namelen = sizeof(other), .msg_iov = &iov,
			    .msg_iovlen = 1 };
	int i = 0;
	/* a UDP socket connected before the start, no grant: no route, no
	 * other address; its own association as it was */
	o->r[i++] = set(o->s6, SOL_IPV6, IPV6_RTHDR, rh, sizeof(rh));             /* EACCES */
	o->r[i++] = sendmsg(o->s6, &m, 0) < 0 ? -errno : 0;                        /* EACCES */
	o->r[i++] = connect(o->s6, (struct sockaddr *)&other, sizeof(other)) ? -errno : 0; /* EACCES */
	o->r[i++] = send(o->s6, "s", 1, 0) < 0 ? -errno : 0;                        /* 0 */
	/* SO_PASSCRED makes the kernel give a socket pair's end an abstract
	 * name when it sends: a name, but only its peer may send to it */
	int sp[2], one = 1;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp))
		return 1;
	o->r[i++] = set(sp[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));       /* 0 */
	o->r[i++] = send(sp[0], "p", 1, 0) < 0 ? -errno : 0;                        /* 0 */
	o->namelen = sizeof(o->name);
	o->r[i++] = getsockname(sp[0], (struct sockaddr *)&o->name, &o->namelen) ? -errno : 0;
	o->named = 1;
	for (int w = 0; w < 500 && !o->outside_done; w++)
		usleep(10000);
	char buf[8];
	while (recv(sp[0], buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		o->got++;
	return 0;
}

/* a socket from before the start reaches no other address and takes no
 * route; an autobound name of the program's is no way in from outside */
TEST(a_socket_from_before_the_start_and_an_autobound_name_reach_nothing_new)
{
	int port, other;
	int r1 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0),
	    r2 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in6 a1 = addr6("::1", 0), a2 = addr6("::1", 0);
	socklen_t l = sizeof(a1);
	if (r1 < 0 || bind(r1, (struct sockaddr *)&a1, sizeof(a1)))
		SKIP(return, "no IPv6 loopback");
	ASSERT_EQ(0, getsockname(r1, (struct sockaddr *)&a1, &l));
	ASSERT_EQ(0, bind(r2, (struct sockaddr *)&a2, sizeof(a2)));
	l = sizeof(a2);
	ASSERT_EQ(0, getsockname(r2, (struct sockaddr *)&a2, &l));
	port = ntohs(a1.sin6_port);
	other = ntohs(a2.sin6_port);
	struct before_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	o->port = port;
	o->other = other;
	o->s6 = socket(AF_INET6, SOCK_DGRAM, 0);
	ASSERT_EQ(0, connect(o->s6, (struct sockaddr *)&a1, sizeof(a1)));
	pid_t p = fork();
	ASSERT_LE(0, p);
	if (p == 0)
		_exit(outcome(run_sandboxed(body_before, o)));
	for (int w = 0; w < 1000 && !o->named; w++)
		usleep(10000);
	ASSERT_TRUE(o->named);
	/* from outside: the name is there, and takes nothing */
	int x = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	long sent = sendto(x, "o", 1, 0, (struct sockaddr *)&o->name, o->namelen) < 0 ? -errno : 0;
	int y = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	long conn = connect(y, (struct sockaddr *)&o->name, o->namelen) ? -errno : 0;
	o->outside_done = 1;
	int st;
	ASSERT_EQ(p, waitpid(p, &st, 0));
	EXPECT_EQ(0, st);
	static const long want[] = { -EACCES, -EACCES, -EACCES, 0, 0, 0, 0 };
	for (int i = 0; i < 7; i++) {
		EXPECT_EQ(want[i], o->r[i]) TH_LOG("step %d", i);
	}
	EXPECT_LT(sizeof(sa_family_t), o->namelen);
	EXPECT_EQ(0, o->name.sun_path[0]) TH_LOG("an abstract name");
	EXPECT_EQ(-EPERM, sent);
	EXPECT_EQ(-ECONNREFUSED, conn);
	EXPECT_EQ(0, o->got);
	EXPECT_EQ(1, datagrams(r1));
	EXPECT_EQ(0, datagrams(r2));
	close(x);
	close(y);
	close(r1);
	close(r2);
}

/* ---- what the denial log says ---- */

/* an AF_UNIX name the program chose, with a line of its own and a
 * terminal escape in it: named and abstract, by connect and by sendmsg */
static const char forged[] = "x\nsandpit: denied open(\"/forged\") = -EACCES\n\033[2J";

static int body_forge(void *a)
{
	int *tried = a;
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	memcpy(un.sun_path, forged, sizeof(forged));
	int x = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	char byte = 'f';
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_name = &un, .msg_namelen = sizeof(un), .msg_iov = &iov,
			    .msg_iovlen = 1 };
	int refused = 0;
	refused += connect(x, (struct sockaddr *)&un, sizeof(un)) && errno == EACCES;
	refused += sendmsg(x, &m, 0) < 0 && errno == EACCES;
	un.sun_path[0] = 0; /* abstract: "\0\nsandpit: ..." */
	refused += connect(x, (struct sockaddr *)&un, sizeof(un)) && errno == EACCES;
	*tried = 3;
	return refused == 3 ? 0 : 1;
}

/* each refusal is one line of the log, the program's bytes escaped: no
 * line it wrote, no escape reaches the terminal */
TEST(the_denial_log_shows_a_programs_socket_name_escaped)
{
	int *tried = shared_page(sizeof(int));
	ASSERT_NE(NULL, tried);
	char tmpl[] = "/tmp/sandpit-rev12-logXXXXXX";
	int fd = mkstemp(tmpl);
	ASSERT_LE(0, fd);
	unlink(tmpl);
	int saved = dup(2);
	ASSERT_LE(0, saved);
	fflush(NULL);
	dup2(fd, 2);
	setenv("SANDPIT_LOG", "denials", 1);
	int st = outcome(run_sandboxed(body_forge, tried));
	unsetenv("SANDPIT_LOG");
	dup2(saved, 2);
	close(saved);
	usleep(50000);
	char log[8192];
	ssize_t n = pread(fd, log, sizeof(log) - 1, 0);
	log[n > 0 ? n : 0] = 0;
	close(fd);
	EXPECT_EQ(0, st) TH_LOG("%s", log);
	EXPECT_EQ(3, *tried);
	int lines = 0, denied = 0;
	for (char *l = log; *l;) {
		char *end = strchr(l, '\n');
		lines++;
		denied += !strncmp(l, "sandpit: denied ", 16);
		if (!end)
			break;
		l = end + 1;
	}
	EXPECT_EQ(3, lines) TH_LOG("%s", log);
	EXPECT_EQ(3, denied) TH_LOG("%s", log);
	EXPECT_EQ(NULL, strstr(log, "\nsandpit: denied open(\"/forged\")")) TH_LOG("%s", log);
	EXPECT_EQ(NULL, strchr(log, '\033')) TH_LOG("%s", log);
	EXPECT_EQ(2, count_of(log, ": the AF_UNIX socket x\\u000asandpit: denied open(\\\"/forged\\\") = "
				   "-EACCES\\u000a\\u001b[2J: no grant can allow it; from "))
	TH_LOG("%s", log);
	EXPECT_EQ(1, count_of(log, ": the abstract AF_UNIX address @\\u000asandpit: denied open("))
	TH_LOG("%s", log);
}

/* ---- the program's own executable ---- */

static void say(const char *name, long v)
{
	printf("%s=%ld\n", name, v);
}

static long err_of(long r)
{
	return r < 0 ? -errno : r;
}

struct tid_arg {
	volatile pid_t tid;
	volatile int go;
};

static void *a_thread(void *p)
{
	struct tid_arg *t = p;
	t->tid = (pid_t)syscall(SYS_gettid);
	while (!t->go)
		usleep(1000);
	return NULL;
}

/* 1 if fd is the program's file (dev and inode), 0 if another, -errno */
static long same_file(int fd, const struct stat *me)
{
	struct stat st;
	if (fd < 0)
		return -errno;
	long r = fstat(fd, &st) ? -errno : st.st_dev == me->st_dev && st.st_ino == me->st_ino;
	close(fd);
	return r;
}

/* what the program sees, as lines name=value (the same natively and under
 * `sandpit run`; the writes only under it: REV12_EXE_PROBE=write) */
static void exe_probe(const char *what)
{
	struct stat me;
	int f = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (f < 0 || fstat(f, &me)) {
		say("open", -errno);
		_exit(1);
	}
	close(f);
	if (!strcmp(what, "write")) {
		/* through the descriptor B hands over, and through the link */
		f = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		say("fchmod", err_of(fchmod(f, 0777)));
		say("fchown", err_of(fchown(f, getuid(), getgid())));
		say("ftruncate", err_of(ftruncate(f, 0)));
		say("write", err_of(write(f, "x", 1)));
		say("futimens", err_of(futimens(f, NULL)));
		say("fsetxattr", err_of(fsetxattr(f, "user.rev12", "x", 1, 0)));
		close(f);
		say("chmod", err_of(chmod("/proc/self/exe", 0777)));
		say("truncate", err_of(truncate("/proc/self/exe", 0)));
		say("utimensat", err_of(utimensat(AT_FDCWD, "/proc/self/exe", NULL, 0)));
		const char *dir = getenv("REV12_DIR");
		char to[PATH_MAX];
		snprintf(to, sizeof(to), "%s/hard", dir ? dir : "/nonexistent");
		say("linkat", err_of(linkat(AT_FDCWD, "/proc/self/exe", AT_FDCWD, to,
					    AT_SYMLINK_FOLLOW)));
		snprintf(to, sizeof(to), "%s/moved", dir ? dir : "/nonexistent");
		say("rename", err_of(rename("/proc/self/exe", to)));
		say("unlink", err_of(unlink("/proc/self/exe")));
		/* the O_PATH descriptor of the file, as a path for writing */
		int k = open("/proc/self/exe", O_PATH | O_CLOEXEC);
		char via[64];
		snprintf(via, sizeof(via), "/proc/self/fd/%d", k);
		say("via-opath-rdwr", err_of(open(via, O_RDWR | O_CLOEXEC)));
		say("via-opath-chmod", err_of(chmod(via, 0777)));
		close(k);
		fflush(stdout);
		_exit(0);
	}
	if (!strcmp(what, "ingrant")) {
		/* the file's name is in a write grant: the link still only
		 * reads; the name, and a descriptor of the file, as the grant
		 * says (the mode set is the one it has) */
		say("link-rdwr", err_of(open("/proc/self/exe", O_RDWR | O_CLOEXEC)));
		say("link-chmod", err_of(chmod("/proc/self/exe", me.st_mode & 07777)));
		say("link-truncate", err_of(truncate("/proc/self/exe", me.st_size)));
		f = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		say("handed-fchmod", err_of(fchmod(f, me.st_mode & 07777)));
		close(f);
		const char *name = getenv("REV12_PROG");
		f = open(name ? name : "/nonexistent", O_RDWR | O_CLOEXEC);
		say("byname-rdwr", f >= 0 ? same_file(f, &me) : -errno);
		fflush(stdout);
		_exit(0);
	}
	/* no descriptor of the program's file is open but those it opens */
	long leaks = 0, open_fds = 0;
	for (int fd = 0; fd < 4096; fd++) {
		struct stat st;
		if (fstat(fd, &st))
			continue;
		open_fds++;
		leaks += st.st_dev == me.st_dev && st.st_ino == me.st_ino;
	}
	say("leaks", leaks);
	/* the O_PATH descriptor of the link itself */
	int k = open("/proc/self/exe", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	char text[PATH_MAX] = "", name[PATH_MAX] = "", via[64];
	ssize_t n = readlinkat(k, "", text, sizeof(text) - 1);
	ssize_t m = readlink("/proc/self/exe", name, sizeof(name) - 1);
	if (n >= 0)
		text[n] = 0;
	if (m >= 0)
		name[m] = 0;
	say("readlinkat-empty-is-the-name", n > 0 && n == m && !strcmp(text, name));
	snprintf(via, sizeof(via), "/proc/self/fd/%d", k);
	say("via-opath", same_file(open(via, O_RDONLY | O_CLOEXEC), &me));
	say("via-opath-rdwr", err_of(open(via, O_RDWR | O_CLOEXEC)));
	say("opath-dirfd-dotdot", same_file(openat(k, "..", O_RDONLY | O_CLOEXEC), &me));
	close(k);
	/* .. spellings and directory descriptors */
	say("task-dotdot", same_file(open("/proc/self/task/../exe", O_RDONLY | O_CLOEXEC), &me));
	say("thread-self-dotdot",
	    same_file(open("/proc/thread-self/../../exe", O_RDONLY | O_CLOEXEC), &me));
	int d = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	say("dirfd-self", same_file(openat(d, "exe", O_RDONLY | O_CLOEXEC), &me));
	say("dirfd-self-dotdot", same_file(openat(d, "../self/exe", O_RDONLY | O_CLOEXEC), &me));
	close(d);
	/* a thread's tid as a process directory, while it runs and after */
	struct tid_arg ta = { 0, 0 };
	pthread_t th;
	if (pthread_create(&th, NULL, a_thread, &ta))
		_exit(2);
	while (!ta.tid)
		usleep(1000);
	char tp[64];
	snprintf(tp, sizeof(tp), "/proc/%d/exe", (int)ta.tid);
	say("tid-exe", same_file(open(tp, O_RDONLY | O_CLOEXEC), &me));
	snprintf(tp, sizeof(tp), "/proc/self/task/%d/exe", (int)ta.tid);
	say("task-tid-exe", same_file(open(tp, O_RDONLY | O_CLOEXEC), &me));
	ta.go = 1;
	pthread_join(th, NULL);
	/* pthread_join returns once the kernel cleared the thread's tid
	 * word, a moment before it lets the thread's /proc entry go: natively
	 * the file is still reached for that moment (a loaded CI run, 1
	 * where -2), so asked again for up to 2 s while it is */
	snprintf(tp, sizeof(tp), "/proc/%d/exe", (int)ta.tid);
	long gone = 1;
	for (int i = 0; i < 2000 && (gone = same_file(open(tp, O_RDONLY | O_CLOEXEC), &me)) == 1; i++)
		usleep(1000);
	say("gone-tid-exe", gone);
	/* other processes' links are never the program's file */
	snprintf(tp, sizeof(tp), "/proc/%d/exe", (int)getppid());
	long pp = same_file(open(tp, O_RDONLY | O_CLOEXEC), &me);
	say("parent-exe-is-mine", pp == 1);
	long init = same_file(open("/proc/1/exe", O_RDONLY | O_CLOEXEC), &me);
	say("init-exe-is-mine", init == 1);
	fflush(stdout);
	_exit(0);
}

static void __attribute__((constructor)) maybe_probe(void)
{
	const char *what = getenv("REV12_EXE_PROBE");
	if (what)
		exe_probe(what);
}

struct exe_fixture {
	char dir[64], prog[128];
};

static void copy_prog(struct __test_metadata *_metadata, struct exe_fixture *x)
{
	strcpy(x->dir, "/tmp/sandpit-rev12-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(x->dir));
	snprintf(x->prog, sizeof(x->prog), "%s/prog", x->dir);
	char from[PATH_MAX];
	snprintf(from, sizeof(from), "%s/selftests/rev12_test", bindir);
	int in = open(from, O_RDONLY), out = open(x->prog, O_WRONLY | O_CREAT | O_EXCL, 0755);
	ASSERT_LE(0, in);
	ASSERT_LE(0, out);
	char buf[1 << 16];
	ssize_t n;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ASSERT_EQ(n, write(out, buf, n));
	close(in);
	close(out);
}

static void remove_prog(struct exe_fixture *x)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", x->dir);
	if (system(cmd))
		abort();
}

static const char *suite_mode_name(void)
{
	return suite_mode() == SANDPIT_MODE_STRICT ? "strict" : "filter";
}

/* every name the program may use of its exe link, natively and under
 * `sandpit run`: the same answers, no descriptor of the file leaked */
TEST(the_program_file_is_reached_only_through_p_and_never_leaks)
{
	struct exe_fixture x;
	copy_prog(_metadata, &x);
	struct result n, s;
	char *const argv[] = { x.prog, NULL };
	ASSERT_EQ(0, capture(argv, NULL, NULL, "REV12_EXE_PROBE=look", &n));
	ASSERT_EQ(0, sandboxed(suite_mode_name(), NULL, argv, NULL, NULL, "REV12_EXE_PROBE=look", &s));
	EXPECT_EQ(0, n.status);
	EXPECT_EQ(0, s.status);
	char *nat = result_text(&n), *box = result_text(&s);
	/* natively the O_PATH descriptor of the link itself opens as the
	 * link (ELOOP) */
	EXPECT_STREQ("leaks=0\nreadlinkat-empty-is-the-name=1\nvia-opath=-40\nvia-opath-rdwr=-40\n"
		     "opath-dirfd-dotdot=-20\ntask-dotdot=1\nthread-self-dotdot=1\ndirfd-self=1\n"
		     "dirfd-self-dotdot=1\ntid-exe=1\ntask-tid-exe=1\ngone-tid-exe=-2\n"
		     "parent-exe-is-mine=0\ninit-exe-is-mine=0\n",
		     nat);
	/* in the sandbox: no leak, and never another file; where B differs
	 * from the kernel it is the program's own file for reading (the
	 * descriptor of the link, which B follows) or a refusal (B reads
	 * thread-self as the process's directory, so ../../exe is /exe; a
	 * gone thread's directory is outside the grants), never more */
	EXPECT_STREQ("leaks=0\nreadlinkat-empty-is-the-name=1\nvia-opath=1\nvia-opath-rdwr=-13\n"
		     "opath-dirfd-dotdot=-20\ntask-dotdot=1\nthread-self-dotdot=-13\ndirfd-self=1\n"
		     "dirfd-self-dotdot=1\ntid-exe=1\ntask-tid-exe=1\ngone-tid-exe=-13\n"
		     "parent-exe-is-mine=0\ninit-exe-is-mine=0\n",
		     box);
	free(n.out);
	free(s.out);
	remove_prog(&x);
}

/* every change of the file's data or metadata through the link or the
 * descriptor B hands over is refused, and the file is unchanged */
TEST(no_change_reaches_the_program_file_through_its_exe_link)
{
	NEED_OPENAT2();
	struct exe_fixture x;
	copy_prog(_metadata, &x);
	struct stat before, after;
	ASSERT_EQ(0, stat(x.prog, &before));
	struct result s;
	char grant[160];
	snprintf(grant, sizeof(grant), "--allow-write=%s/w", x.dir);
	char wdir[96];
	snprintf(wdir, sizeof(wdir), "%s/w", x.dir);
	ASSERT_EQ(0, mkdir(wdir, 0755));
	setenv("REV12_DIR", wdir, 1); /* inherited through sandpit run */
	const char *extra[] = { grant, NULL };
	char *const pargv[] = { x.prog, NULL };
	ASSERT_EQ(0, sandboxed(suite_mode_name(), extra, pargv, NULL, NULL, "REV12_EXE_PROBE=write",
			       &s));
	unsetenv("REV12_DIR");
	EXPECT_EQ(0, s.status);
	EXPECT_STREQ("fchmod=-13\nfchown=-13\nftruncate=-22\nwrite=-9\nfutimens=-13\n"
		     "fsetxattr=-13\nchmod=-13\ntruncate=-13\nutimensat=-13\nlinkat=-13\n"
		     "rename=-13\nunlink=-13\nvia-opath-rdwr=-13\nvia-opath-chmod=-13\n",
		     result_text(&s));
	free(s.out);
	ASSERT_EQ(0, stat(x.prog, &after));
	EXPECT_EQ(before.st_mode, after.st_mode);
	EXPECT_EQ(before.st_size, after.st_size);
	EXPECT_EQ(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
	EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
	EXPECT_EQ(before.st_nlink, after.st_nlink);
	char hard[160];
	snprintf(hard, sizeof(hard), "%s/hard", wdir);
	EXPECT_EQ(-1, access(hard, F_OK));
	remove_prog(&x);
}

/* the program's file inside a write grant: through its exe link it is
 * still only read; by its name as the grant says (natively ETXTBSY: under
 * `sandpit run` the loader maps it, nothing executes it) */
TEST(a_program_file_inside_a_write_grant_is_only_read_through_its_link)
{
	NEED_OPENAT2();
	struct exe_fixture x;
	copy_prog(_metadata, &x);
	char wdir[96], prog[160], grant[160], env[200];
	snprintf(wdir, sizeof(wdir), "%s/w", x.dir);
	ASSERT_EQ(0, mkdir(wdir, 0755));
	snprintf(prog, sizeof(prog), "%s/prog", wdir);
	ASSERT_EQ(0, rename(x.prog, prog));
	snprintf(grant, sizeof(grant), "--allow-write=%s", wdir);
	snprintf(env, sizeof(env), "REV12_PROG=%s", prog);
	struct stat before, after;
	ASSERT_EQ(0, stat(prog, &before));
	setenv("REV12_EXE_PROBE", "ingrant", 1);
	struct result s;
	const char *extra[] = { grant, NULL };
	char *const argv[] = { prog, NULL };
	ASSERT_EQ(0, sandboxed(suite_mode_name(), extra, argv, NULL, NULL, env, &s));
	unsetenv("REV12_EXE_PROBE");
	EXPECT_EQ(0, s.status);
	EXPECT_STREQ("link-rdwr=-13\nlink-chmod=-13\nlink-truncate=-13\nhanded-fchmod=0\n"
		     "byname-rdwr=1\n",
		     result_text(&s));
	free(s.out);
	ASSERT_EQ(0, stat(prog, &after));
	EXPECT_EQ(before.st_mode, after.st_mode);
	EXPECT_EQ(before.st_size, after.st_size);
	remove_prog(&x);
}

TEST_HARNESS_MAIN
