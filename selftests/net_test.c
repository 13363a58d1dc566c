/* Sockets in the sandbox: AF_UNIX sockets and SCM_RIGHTS over the
 * program's own socket pair work as natively; SCM_RIGHTS never passes one
 * of sandpit's descriptors, not even when U rewrites the message while B
 * checks it; connect and sendmsg reach only the addresses a connect grant
 * names, not even when U rewrites the address while B checks it; and
 * `sandpit run --allow-connect` lets curl fetch from a loopback server,
 * which without the grant it cannot reach (user/trusted/b_net.c). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sandpit.h"
#include "selftests/build_dir.h"
#include "selftests/kernel_probe.h"
#include "selftests/net_util.h"
#include "selftests/sandbox_util.h"
#include "selftests/u_state.h"

/* ---- descriptors passed over the program's own socket pair ---- */

static int send_fds(int sock, const int *fds, int n)
{
	char byte = 'x';
	struct iovec iov = { &byte, 1 };
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = CMSG_SPACE(n * sizeof(int)) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	return sendmsg(sock, &m, MSG_DONTWAIT) < 0 ? -errno : 0;
}

/* one descriptor received, or -errno */
static int recv_fd(int sock)
{
	char byte;
	struct iovec iov = { &byte, 1 };
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	if (recvmsg(sock, &m, MSG_DONTWAIT) < 0)
		return -errno;
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -ENOENT;
	int fd;
	memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	return fd;
}

/* an unnamed AF_UNIX socket, and a pipe's write end passed over a socket
 * pair and written through: the bytes come out of the pipe */
static int body_pass_a_pipe(void *a)
{
	(void)a;
	int u = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (u < 0)
		return 1;
	close(u);
	int sp[2], p[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) || pipe(p))
		return 2;
	if (send_fds(sp[0], &p[1], 1))
		return 3;
	int got = recv_fd(sp[1]);
	if (got < 0)
		return 4;
	char out[8] = "";
	if (write(got, "passed", 6) != 6 || read(p[0], out, sizeof(out)) != 6 ||
	    memcmp(out, "passed", 6))
		return 5;
	return 0;
}

TEST(af_unix_socket_and_descriptors_passed_over_a_socket_pair_work_as_natively)
{
	int st;
	pid_t p = fork();
	ASSERT_LE(0, p);
	if (p == 0)
		_exit(body_pass_a_pipe(NULL));
	ASSERT_EQ(p, waitpid(p, &st, 0));
	ASSERT_EQ(0, outcome(st)) TH_LOG("natively");
	EXPECT_EQ(0, outcome(run_sandboxed(body_pass_a_pipe, NULL)));
}

struct block_out {
	int tried, refused, received, lo, hi;
	long results[16];
};

/* SCM_RIGHTS of each of a few of sandpit's descriptors (the block's
 * first, P's end of T<->B, slot 0's and 1's eventfds, the last), alone
 * and behind one of the program's: EBADF, and nothing arrives */
static int body_block(void *a)
{
	struct block_out *o = a;
	const struct secure_page *sp = state_of(my_mailbox())->sp;
	o->lo = sp->fd_lo;
	o->hi = sp->fd_hi;
	int sp2[2], p[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp2) || pipe(p))
		return 1;
	const int mine[] = { o->lo, o->lo + 2, o->lo + 3, o->lo + 4, o->hi };
	for (int i = 0; i < 5; i++) {
		int two[2] = { p[1], mine[i] };
		long r1 = send_fds(sp2[0], &mine[i], 1), r2 = send_fds(sp2[0], two, 2);
		o->results[2 * i] = r1;
		o->results[2 * i + 1] = r2;
		o->tried += 2;
		o->refused += (r1 == -EBADF) + (r2 == -EBADF);
		int got;
		while ((got = recv_fd(sp2[1])) >= 0 || got == -ENOENT)
			o->received++;
	}
	return 0;
}

TEST(scm_rights_of_sandpits_descriptors_is_ebadf_and_passes_nothing)
{
	struct block_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	ASSERT_EQ(0, outcome(run_sandboxed(body_block, o)));
	EXPECT_EQ(10, o->tried);
	for (int i = 0; i < 10; i++) {
		EXPECT_EQ(-EBADF, o->results[i]) TH_LOG("attempt %d (block %d..%d)", i, o->lo, o->hi);
	}
	EXPECT_EQ(10, o->refused);
	EXPECT_EQ(0, o->received);
}

/* ---- the message rewritten while B checks it ---- */

#define FLIPS_ROUNDS 3000

struct flip_out {
	volatile int stop;
	int target, flips_seen;
	long sent, refused, other, flips, foreign;
	ino_t pipe_ino;
};

struct flip_arg {
	struct flip_out *o;
	volatile int *slot; /* the descriptor number in the control data */
	int a, b;
};

static void *flipper(void *p)
{
	struct flip_arg *f = p;
	while (!f->o->stop) {
		*f->slot = f->a;
		*f->slot = f->b;
		f->o->flips++;
	}
	return NULL;
}

/* one thread sends SCM_RIGHTS of the pipe again and again while another
 * rewrites the number in the control data between the pipe's and
 * sandpit's T<->B end: every descriptor that arrives is the pipe */
static int body_flip_rights(void *a)
{
	struct flip_out *o = a;
	const struct secure_page *sp = state_of(my_mailbox())->sp;
	int pair[2], p[2];
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, pair) || pipe(p))
		return 1;
	struct stat ps;
	if (fstat(p[1], &ps))
		return 2;
	o->pipe_ino = ps.st_ino;
	char byte = 'x';
	struct iovec iov = { &byte, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	struct flip_arg f = { o, (volatile int *)CMSG_DATA(c), p[1], sp->fd_lo };
	*f.slot = p[1]; /* before the rewriting thread's first turn, too */
	pthread_t t;
	if (pthread_create(&t, NULL, flipper, &f))
		return 3;
	/* until each outcome has come often enough (on one CPU the rewriting
	 * thread runs only while the sender waits for B, so it takes longer) */
	for (int i = 0; i < FLIPS_ROUNDS || ((o->sent < 20 || o->refused < 20) && i < 50 * FLIPS_ROUNDS);
	     i++) {
		long r = sendmsg(pair[0], &m, MSG_DONTWAIT);
		if (r == 1)
			o->sent++;
		else if (errno == EBADF)
			o->refused++;
		else
			o->other++;
		int got = recv_fd(pair[1]);
		if (got >= 0) {
			struct stat gs;
			if (fstat(got, &gs) || gs.st_ino != o->pipe_ino)
				o->foreign++;
			close(got);
		}
	}
	o->stop = 1;
	pthread_join(t, NULL);
	return 0;
}

TEST(scm_rights_rewritten_to_a_sandpit_descriptor_during_the_check_never_passes_it)
{
	struct flip_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_flip_rights, o, NULL, 60)));
	TH_LOG("%ld sent, %ld refused (EBADF), %ld other, %ld flips", o->sent, o->refused,
	       o->other, o->flips);
	/* the race ran: the rewriting thread ran during the calls, and B read
	 * both numbers */
	EXPECT_LT(0, o->flips);
	EXPECT_LE(20, o->sent);
	EXPECT_LE(20, o->refused);
	EXPECT_EQ(0, o->other);
	EXPECT_EQ(0, o->foreign);
}

/* ---- connect grants ---- */

struct net_out {
	int granted, other, udp_port, udp_other;
	long r[16];
	char why[64];
};

static long try_connect(int family, int type, const void *sa, socklen_t len)
{
	int s = socket(family, type | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1000 - errno;
	long r = connect(s, sa, len) ? -errno : 0;
	if (r == 0 && type == SOCK_STREAM && write(s, "hi", 2) != 2)
		r = -2000;
	close(s);
	return r;
}

static int body_connects(void *a)
{
	struct net_out *o = a;
	struct sockaddr_in ok = loop4(o->granted), no = loop4(o->other);
	struct sockaddr_in6 mapped = { .sin6_family = AF_INET6, .sin6_port = htons(o->granted) };
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &mapped.sin6_addr);
	struct sockaddr_in6 mapped_no = mapped;
	mapped_no.sin6_port = htons(o->other);
	struct sockaddr_un path = { .sun_family = AF_UNIX, .sun_path = "/tmp/.X11-unix/X0" };
	struct sockaddr_un abstract = { .sun_family = AF_UNIX, .sun_path = "\0sandpit-abstract" };
	int i = 0;
	o->r[i++] = try_connect(AF_INET, SOCK_STREAM, &ok, sizeof(ok));             /* 0 */
	o->r[i++] = try_connect(AF_INET, SOCK_STREAM, &no, sizeof(no));             /* EACCES */
	o->r[i++] = try_connect(AF_INET6, SOCK_STREAM, &mapped, sizeof(mapped));    /* 0 */
	o->r[i++] = try_connect(AF_INET6, SOCK_STREAM, &mapped_no, sizeof(mapped_no)); /* EACCES */
	o->r[i++] = try_connect(AF_UNIX, SOCK_STREAM, &path, sizeof(path));         /* EACCES */
	o->r[i++] = try_connect(AF_UNIX, SOCK_STREAM, &abstract,
				offsetof(struct sockaddr_un, sun_path) + 17);       /* EACCES */
	/* UDP: connect to the granted port and send; an address in sendmsg
	 * only a granted one, AF_UNSPEC (an address to IPv4's UDP) never */
	int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in uok = loop4(o->udp_port), uno = loop4(o->udp_other);
	char byte = 'u';
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_name = &uno,
			    .msg_namelen = sizeof(uno) };
	o->r[i++] = sendmsg(u, &m, 0) < 0 ? -errno : 0;                             /* EACCES */
	uno.sin_family = AF_UNSPEC;
	o->r[i++] = sendmsg(u, &m, 0) < 0 ? -errno : 0;                             /* EACCES */
	m.msg_name = &uok;
	o->r[i++] = sendmsg(u, &m, 0) < 0 ? -errno : 0;                             /* 1 -> 0 */
	o->r[i++] = connect(u, (struct sockaddr *)&uok, sizeof(uok)) ? -errno : 0; /* 0 */
	m.msg_name = NULL;
	m.msg_namelen = 0;
	o->r[i++] = sendmsg(u, &m, 0) < 0 ? -errno : 0;                             /* 0 */
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };
	o->r[i++] = connect(u, &unspec, sizeof(unspec)) ? -errno : 0;              /* 0 */
	/* a family no grant can name, and a raw socket */
	o->r[i++] = socket(AF_PACKET, SOCK_DGRAM, 0) < 0 ? -errno : 0;             /* EAFNOSUPPORT */
	o->r[i++] = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP) < 0 ? -errno : 0;      /* EACCES */
	close(u);
	return 0;
}

TEST(connect_and_sendmsg_reach_only_the_granted_address_and_port)
{
	int granted, other, uport, uother;
	int l1 = listener(&granted, SOCK_STREAM), l2 = listener(&other, SOCK_STREAM);
	int u1 = listener(&uport, SOCK_DGRAM), u2 = listener(&uother, SOCK_DGRAM);
	ASSERT_LE(0, l1);
	ASSERT_LE(0, l2);
	ASSERT_LE(0, u1);
	ASSERT_LE(0, u2);
	char g1[32], g2[32];
	snprintf(g1, sizeof(g1), "127.0.0.1:%d", granted);
	snprintf(g2, sizeof(g2), "127.0.0.1:%d", uport);
	const char *grants[] = { g1, g2, NULL };
	struct sandpit_options opts = { .flags = SANDPIT_OPT_CONNECT, .allow_connect = grants };
	struct net_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	o->granted = granted;
	o->other = other;
	o->udp_port = uport;
	o->udp_other = uother;
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_connects, o, &opts, 30)));
	static const long want[] = { 0, -EACCES, 0, -EACCES, -EACCES, -EACCES, -EACCES, -EACCES,
				     0, 0, 0, 0, -EAFNOSUPPORT, -EACCES };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		EXPECT_EQ(want[i], o->r[i]) TH_LOG("step %zu", i);
	}
	EXPECT_EQ(2, drain(l1));
	EXPECT_EQ(0, drain(l2));
	char buf[8];
	int n = 0;
	while (recv(u1, buf, sizeof(buf), MSG_DONTWAIT) == 1)
		n++;
	EXPECT_EQ(2, n);
	EXPECT_EQ(-1, recv(u2, buf, sizeof(buf), MSG_DONTWAIT));
	close(l1);
	close(l2);
	close(u1);
	close(u2);
}

/* without a grant: no AF_INET socket at all, as on a kernel without it */
static int body_no_grant(void *a)
{
	(void)a;
	if (socket(AF_INET, SOCK_STREAM, 0) != -1 || errno != EAFNOSUPPORT)
		return 1;
	if (socket(AF_INET6, SOCK_DGRAM, 0) != -1 || errno != EAFNOSUPPORT)
		return 2;
	return 0;
}

TEST(without_a_connect_grant_no_network_socket)
{
	EXPECT_EQ(0, outcome(run_sandboxed(body_no_grant, NULL)));
}

struct cflip_out {
	volatile int stop;
	int granted, other;
	long flips, allowed, refused, strange;
};

static struct sockaddr_in cflip_addr;

static void *port_flipper(void *p)
{
	struct cflip_out *o = p;
	volatile uint16_t *port = &cflip_addr.sin_port;
	while (!o->stop) {
		*port = htons(o->granted);
		*port = htons(o->other);
		o->flips++;
	}
	return NULL;
}

/* non-blocking connects to an address whose port another thread rewrites
 * between the granted one and another: no connection reaches the other */
static int body_flip_connect(void *a)
{
	struct cflip_out *o = a;
	cflip_addr = loop4(o->granted);
	pthread_t t;
	if (pthread_create(&t, NULL, port_flipper, o))
		return 1;
	for (int i = 0; i < 400 || ((o->allowed < 20 || o->refused < 20) && i < 20000); i++) {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (s < 0)
			return 2;
		int r = connect(s, (struct sockaddr *)&cflip_addr, sizeof(cflip_addr));
		if (r == 0 || errno == EINPROGRESS)
			o->allowed++;
		else if (errno == EACCES)
			o->refused++;
		else
			o->strange++;
		close(s);
	}
	o->stop = 1;
	pthread_join(t, NULL);
	return 0;
}

TEST(connect_address_rewritten_during_the_check_never_reaches_another_port)
{
	int granted, other;
	int l1 = listener(&granted, SOCK_STREAM), l2 = listener(&other, SOCK_STREAM);
	ASSERT_LE(0, l1);
	ASSERT_LE(0, l2);
	char g[32];
	snprintf(g, sizeof(g), "127.0.0.1:%d", granted);
	const char *grants[] = { g, NULL };
	struct sandpit_options opts = { .flags = SANDPIT_OPT_CONNECT, .allow_connect = grants };
	struct cflip_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	o->granted = granted;
	o->other = other;
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_flip_connect, o, &opts, 60)));
	TH_LOG("%ld allowed, %ld refused, %ld other errors, %ld flips", o->allowed, o->refused,
	       o->strange, o->flips);
	EXPECT_LT(0, o->flips);
	EXPECT_LE(20, o->allowed);
	EXPECT_LE(20, o->refused);
	EXPECT_EQ(0, o->strange);
	EXPECT_EQ(0, drain(l2));
	close(l1);
	close(l2);
}

/* ---- sandpit run --allow-connect: curl and a loopback server ---- */

/* a server that answers each of n connections with one HTTP response */
static pid_t http_server(int l, int n)
{
	pid_t p = fork();
	if (p)
		return p;
	fcntl(l, F_SETFL, 0);
	for (int i = 0; i < n; i++) {
		int c = accept(l, NULL, NULL);
		if (c < 0)
			_exit(1);
		char req[2048];
		if (read(c, req, sizeof(req)) <= 0)
			_exit(2);
		static const char resp[] = "HTTP/1.0 200 OK\r\nContent-Length: 14\r\n\r\nfrom loopback\n";
		if (write(c, resp, sizeof(resp) - 1) < 0)
			_exit(3);
		close(c);
	}
	_exit(0);
}

/* an output file emptied for the next run (the children share its offset) */
static void empty(int fd)
{
	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
		abort();
}

/* in the suite's mode ($SANDPIT_MODE, which `sandpit run` follows) */
TEST(curl_reaches_a_loopback_server_only_with_a_connect_grant)
{
	if (access("/usr/bin/curl", X_OK))
		SKIP(return, "no /usr/bin/curl");
	int port, l = listener(&port, SOCK_STREAM);
	ASSERT_LE(0, l);
	char url[64], grant[64], cli[PATH_MAX];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
	snprintf(grant, sizeof(grant), "--allow-connect=127.0.0.1:%d", port);
	snprintf(cli, sizeof(cli), "%s/sandpit", bindir);
	pid_t srv = http_server(l, 2);
	ASSERT_LT(0, srv);
	char out[4096], err[4096];
	int fo = memfd_create("out", 0), fe = memfd_create("err", 0);
	ASSERT_LE(0, fo);
	ASSERT_LE(0, fe);
	/* natively, then with the grant: the same page */
	const char *native[] = { "/usr/bin/curl", "-q", "-sS", url, NULL };
	ASSERT_EQ(0, run_cli("/usr/bin/curl", native, fo, fe));
	read_all(fo, out, sizeof(out));
	EXPECT_STREQ("from loopback\n", out);
	empty(fo);
	const char *granted[] = { cli, "run", grant, "--", "/usr/bin/curl", "-q", "-sS",
				  url, NULL };
	EXPECT_EQ(0, run_cli(cli, granted, fo, fe));
	read_all(fo, out, sizeof(out));
	read_all(fe, err, sizeof(err));
	EXPECT_STREQ("from loopback\n", out) TH_LOG("stderr: %s", err);
	/* without: curl's own error, and sandpit's line naming the grant */
	empty(fo);
	empty(fe);
	const char *bare[] = { cli, "run", "--", "/usr/bin/curl", "-q", "-sS", url, NULL };
	EXPECT_EQ(7, run_cli(cli, bare, fo, fe)); /* curl: could not connect */
	read_all(fe, err, sizeof(err));
	EXPECT_NE(NULL, strstr(err, "--allow-connect=ADDR:PORT would allow the last")) TH_LOG("%s", err);
	/* a grant of another port: the refusal names the one that would do */
	empty(fe);
	char other[64], want[96];
	snprintf(other, sizeof(other), "--allow-connect=127.0.0.1:%d", port == 65535 ? 1 : port + 1);
	snprintf(want, sizeof(want), "--allow-connect=127.0.0.1:%d would allow the last", port);
	const char *wrong[] = { cli, "run", other, "--", "/usr/bin/curl", "-q", "-sS", url,
				NULL };
	EXPECT_EQ(7, run_cli(cli, wrong, fo, fe));
	read_all(fe, err, sizeof(err));
	EXPECT_NE(NULL, strstr(err, want)) TH_LOG("%s", err);
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	close(l);
	close(fo);
	close(fe);
}

/* bad grants are refused before anything runs, each naming the problem */
TEST(bad_connect_grants_are_refused_naming_the_problem)
{
	static const struct {
		const char *grant, *msg;
	} bad[] = {
		{ "example.org:80", "the address must be numeric (IPv4, [IPv6]) or localhost" },
		{ "127.0.0.1:0", "the port must be a number from 1 to 65535" },
		{ "127.0.0.1:65536", "the port must be a number from 1 to 65535" },
		{ "127.0.0.1", "name an address and a port" },
		{ "[::1:80", "the address must be numeric" },
	};
	char cli[PATH_MAX], opt[96], err[4096];
	snprintf(cli, sizeof(cli), "%s/sandpit", bindir);
	int fe = memfd_create("err", 0);
	ASSERT_LE(0, fe);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(opt, sizeof(opt), "--allow-connect=%s", bad[i].grant);
		const char *argv[] = { cli, "run", opt, "--", "/bin/true", NULL };
		empty(fe);
		EXPECT_EQ(125, run_cli(cli, argv, fe, fe));
		read_all(fe, err, sizeof(err));
		EXPECT_NE(NULL, strstr(err, bad[i].msg)) TH_LOG("%s: %s", bad[i].grant, err);
	}
	close(fe);
}

TEST_HARNESS_MAIN
