/* B's checks of socket, connect, sendmsg and setsockopt (kind PK_NET):
 * the family from the connect grants, the address against them, the
 * descriptors SCM_RIGHTS passes, no source route.  Only B includes it. */
#ifndef SANDPIT_B_NET_H
#define SANDPIT_B_NET_H

struct secure_page;

/* slot s's request, B's copy: 0 (T makes the call from S), or -errno */
long b_check_net(int s, struct secure_page *sp);
#endif
