/* Connect grants (policy/policy.h): parsed from --allow-connect's
 * HOST:PORT, and the check of a socket address against them.  The check
 * runs in B on B's own copy of the address; the text is for messages. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "policy/policy.h"

static int bad(char *err, size_t errlen, const char *hp, const char *why)
{
	if (err && errlen)
		snprintf(err, errlen, "--allow-connect=%s: %s", hp, why);
	return -EINVAL;
}

/* one HOST:PORT into out[0..*n) (localhost: both loopbacks) */
static int parse_one(const char *hp, struct policy_connect out[2], int *n, char *err,
		     size_t errlen)
{
	const char *colon = strrchr(hp, ':');
	if (!colon || colon == hp)
		return bad(err, errlen, hp, "name an address and a port: ADDR:PORT, [ADDR6]:PORT "
					    "or localhost:PORT");
	char *end;
	errno = 0;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port < 1 || port > 65535 || colon[1] == '+' ||
	    colon[1] == '-')
		return bad(err, errlen, hp, "the port must be a number from 1 to 65535");
	char host[INET6_ADDRSTRLEN + 2];
	size_t hl = (size_t)(colon - hp);
	if (hl >= sizeof(host))
		return bad(err, errlen, hp, "the address is not a numeric IPv4 or IPv6 address");
	memcpy(host, hp, hl);
	host[hl] = 0;
	memset(out, 0, 2 * sizeof(*out));
	out[0].port = out[1].port = (uint16_t)port;
	*n = 1;
	if (!strcmp(host, "localhost")) {
		out[0].family = AF_INET;
		inet_pton(AF_INET, "127.0.0.1", out[0].addr);
		out[1].family = AF_INET6;
		inet_pton(AF_INET6, "::1", out[1].addr);
		*n = 2;
		return 0;
	}
	if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
		host[hl - 1] = 0;
		if (inet_pton(AF_INET6, host + 1, out[0].addr) == 1) {
			out[0].family = AF_INET6;
			/* a mapped IPv4 address is the IPv4 address */
			if (IN6_IS_ADDR_V4MAPPED((struct in6_addr *)out[0].addr)) {
				out[0].family = AF_INET;
				memmove(out[0].addr, out[0].addr + 12, 4);
				memset(out[0].addr + 4, 0, 12);
			}
			return 0;
		}
	} else if (inet_pton(AF_INET, host, out[0].addr) == 1) {
		out[0].family = AF_INET;
		return 0;
	}
	/* a name would be resolved here, before the sandbox, and could mean
	 * other addresses by the time the program connects: not a grant */
	return bad(err, errlen, hp, "the address must be numeric (IPv4, [IPv6]) or localhost");
}

int policy_add_connects(struct policy *p, const char *const *hostports, char *err, size_t errlen)
{
	struct policy_connect all[POLICY_MAX_CONNECT];
	size_t n = 0;
	for (size_t i = 0; hostports && hostports[i]; i++) {
		struct policy_connect two[2];
		int k, r = parse_one(hostports[i], two, &k, err, errlen);
		if (r < 0)
			return r;
		for (int j = 0; j < k; j++) {
			if (n + policy_nconnects(p) >= POLICY_MAX_CONNECT) {
				if (err && errlen)
					snprintf(err, errlen, "more than %d connect grants",
						 POLICY_MAX_CONNECT);
				return -E2BIG;
			}
			all[n++] = two[j];
		}
	}
	for (size_t i = 0; i < n; i++)
		if (policy_add_connect(p, &all[i]) < 0)
			return -E2BIG; /* counted above: cannot happen */
	return 0;
}

/* the address in a grant's form: family, 4 or 16 bytes, port */
static int to_grant(const void *sa, size_t len, struct policy_connect *c)
{
	sa_family_t fam;
	if (len < sizeof(fam))
		return -EINVAL;
	memcpy(&fam, sa, sizeof(fam));
	memset(c, 0, sizeof(*c));
	if (fam == AF_INET) {
		struct sockaddr_in in;
		if (len < sizeof(in))
			return -EINVAL;
		memcpy(&in, sa, sizeof(in));
		c->family = AF_INET;
		c->port = ntohs(in.sin_port);
		memcpy(c->addr, &in.sin_addr, 4);
		return 0;
	}
	if (fam == AF_INET6) {
		struct sockaddr_in6 in6;
		/* the kernel takes the address without its scope id (24 bytes) */
		if (len < offsetof(struct sockaddr_in6, sin6_scope_id))
			return -EINVAL;
		memset(&in6, 0, sizeof(in6));
		memcpy(&in6, sa, len < sizeof(in6) ? len : sizeof(in6));
		c->family = AF_INET6;
		c->port = ntohs(in6.sin6_port);
		memcpy(c->addr, &in6.sin6_addr, 16);
		if (IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr)) {
			c->family = AF_INET;
			memmove(c->addr, c->addr + 12, 4);
			memset(c->addr + 4, 0, 12);
		}
		return 0;
	}
	c->family = fam;
	return 0;
}

int policy_check_connect(const struct policy *p, const void *sa, size_t len)
{
	struct policy_connect c;
	int r = to_grant(sa, len, &c);
	if (r < 0)
		return r;
	if (c.family != AF_INET && c.family != AF_INET6)
		return -EACCES;
	for (size_t i = 0; i < policy_nconnects(p); i++) {
		const struct policy_connect *g = policy_connect_at(p, i);
		if (g->family == c.family && g->port == c.port &&
		    !memcmp(g->addr, c.addr, c.family == AF_INET ? 4 : 16))
			return 0;
	}
	return -EACCES;
}

void policy_connect_text(const void *sa, size_t len, char *out, size_t n)
{
	struct policy_connect c;
	char a[INET6_ADDRSTRLEN];
	if (to_grant(sa, len, &c) < 0) {
		snprintf(out, n, "a socket address of %zu bytes", len);
		return;
	}
	if (c.family == AF_INET || c.family == AF_INET6) {
		inet_ntop(c.family, c.addr, a, sizeof(a));
		snprintf(out, n, c.family == AF_INET ? "%s:%u" : "[%s]:%u", a, c.port);
	} else if (c.family == AF_UNIX) {
		struct sockaddr_un un;
		memset(&un, 0, sizeof(un));
		memcpy(&un, sa, len < sizeof(un) ? len : sizeof(un));
		size_t pl = len > offsetof(struct sockaddr_un, sun_path)
				    ? len - offsetof(struct sockaddr_un, sun_path) : 0;
		if (pl > sizeof(un.sun_path))
			pl = sizeof(un.sun_path);
		if (pl == 0)
			snprintf(out, n, "an unnamed AF_UNIX address");
		else if (un.sun_path[0] == 0)
			snprintf(out, n, "the abstract AF_UNIX address @%.*s", (int)pl - 1,
				 un.sun_path + 1);
		else
			snprintf(out, n, "the AF_UNIX socket %.*s", (int)strnlen(un.sun_path, pl),
				 un.sun_path);
	} else {
		snprintf(out, n, "an address of family %d", c.family);
	}
}
