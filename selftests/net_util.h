/* Loopback sockets for the network tests (net_test, rev12_test). */
#ifndef SANDPIT_SELFTEST_NET_UTIL_H
#define SANDPIT_SELFTEST_NET_UTIL_H
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/* a TCP listener (or a UDP socket) on 127.0.0.1, its port in *port;
 * non-blocking, so that what has not arrived is counted, not waited for.
 * Not inlined: inlined into a test, gcc's -Wclobbered takes the ports for
 * variables a longjmp could clobber */
static __attribute__((noinline, unused)) int listener(int *port, int type)
{
	int s = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) ||
	    (type == SOCK_STREAM && listen(s, 4096)) || getsockname(s, (struct sockaddr *)&a, &l))
		return -1;
	*port = ntohs(a.sin_port);
	return s;
}

/* how many connections wait on listener s (accepted and closed) */
static inline int drain(int s)
{
	int n = 0, c;
	while ((c = accept(s, NULL, NULL)) >= 0) {
		close(c);
		n++;
	}
	return n;
}

static inline struct sockaddr_in loop4(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	return a;
}
#endif
