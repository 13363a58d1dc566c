// SPDX-License-Identifier: GPL-2.0
/* Outside review of one change: extended attributes read through a
 * descriptor (fgetxattr, flistxattr) went from deny(EOPNOTSUPP) to allow
 * in the default policy, with no fd_free and no range rule (the kinds say
 * SK_FD and SK_OUT): T executes them in strict mode, the filter lets them
 * through in filter mode.  Each test attacks from the sandboxed program,
 * counts the attempts that reached the call, and asserts the precise
 * answer and what is left afterwards.
 *
 *   - sandpit's descriptor block: every number, both calls, against a
 *     descriptor of the program's own of the same kind (fstat answers on
 *     the block too: these calls read, they change nothing);
 *   - the value buffer on every page of every protected range: EFAULT on
 *     every page U cannot write, the bytes unchanged; sizes huge and
 *     negative; a buffer straddling into a range; the names list too;
 *     the pages the program can write (T's alternate stacks, the
 *     mailboxes: read(2) writes them as well) counted, and T's own
 *     alternate stack filled with a function's address while T makes the
 *     call, T serving on and never led there;
 *   - the name pointer on sandpit's pages: only a lookup key, answered as
 *     the same bytes copied into the program's own memory;
 *   - what else they open: trusted.* on a held file (the kernel's check,
 *     made by T in strict mode: T has no capability either), an O_PATH
 *     descriptor (EBADF), and a write-only descriptor of a file outside
 *     every grant, held before the start: its user.* values and ACL come
 *     back, which neither a read nor getxattr by path gives (a leak beyond
 *     fstat; docs/THREATS.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "u_state.h"
#include "block_util.h"
#include "user/layout/slots.h"
#include "rev4_util.h"

#define P 4096UL
#define VLEN 2048 /* user.rev15's value: half a page */
#define NAME "user.rev15"
#define LURE 1024 /* user.lure's: the file system's block holds both */

/* the held file: made outside every grant before the start, with a
 * user.* value of VLEN bytes, a second short one, a trusted.* one and an
 * ACL */
static const unsigned char acl[] = {
	2,  0, 0, 0,			     /* version 2 */
	1,  0, 6, 0, 0xff, 0xff, 0xff, 0xff, /* owner rw- */
	2,  0, 4, 0, 0xe8, 0x03, 0,    0,    /* user 1000 r-- */
	4,  0, 4, 0, 0xff, 0xff, 0xff, 0xff, /* group r-- */
	16, 0, 6, 0, 0xff, 0xff, 0xff, 0xff, /* mask rw- */
	32, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, /* other --- */
};

static unsigned char value_byte(int i)
{
	return (unsigned char)(0xa5 ^ (i * 7));
}

/* a file under a fresh directory of /tmp (no grant of the default
 * policy), opened with `flags` before the start */
static int held_file(struct __test_metadata *_metadata, char *dir, char *path, int flags,
		     int with_trusted)
{
	unsigned char v[VLEN];
	for (int i = 0; i < VLEN; i++)
		v[i] = value_byte(i);
	strcpy(dir, "/tmp/rev15.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, 96, "%s/f", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, "data\n", 5) != 5)
		return -1;
	if (fsetxattr(fd, NAME, v, VLEN, 0) || fsetxattr(fd, "user.two", "2", 1, 0))
		return -1;
	if (fsetxattr(fd, "system.posix_acl_access", acl, sizeof(acl), 0))
		return -1;
	if (with_trusted && geteuid() == 0 && fsetxattr(fd, "trusted.rev15", "t", 1, 0))
		return -1;
	close(fd);
	return open(path, flags);
}

static long res(long r)
{
	return r < 0 ? -errno : r;
}

/* the calls with any size, past what the C library's declarations allow */
static long xget(int fd, const void *name, void *value, size_t size)
{
	return res(syscall(SYS_fgetxattr, fd, name, value, size));
}

static long xlist(int fd, void *list, size_t size)
{
	return res(syscall(SYS_flistxattr, fd, list, size));
}

/* ============================ sandpit's descriptor block */

/* what one descriptor answers: fstat's type, two gets, two lists */
struct fd_answer {
	long type, sockproto, user, list, listlen;
	char proto[32], names[64];
};

static void answer_of(int fd, struct fd_answer *a)
{
	struct stat st;
	memset(a, 0, sizeof(*a));
	a->type = fstat(fd, &st) ? -errno : (long)(st.st_mode & S_IFMT);
	a->sockproto = res(fgetxattr(fd, "system.sockprotoname", a->proto, sizeof(a->proto)));
	a->user = res(fgetxattr(fd, NAME, a->proto + 16, 8));
	a->list = res(flistxattr(fd, a->names, sizeof(a->names)));
	a->listlen = res(flistxattr(fd, NULL, 0));
}

enum { K_STREAM, K_SEQPACKET, K_EVENTFD, K_MAPS, K_FREE, K_N };
static const char *const kind_name[K_N] = { "T<->B (stream)", "B's hand-over (seqpacket)",
					    "eventfd", "/proc/self/maps",
					    "a slot's number not made yet" };

struct block_out {
	long lo, hi, attempts, held_expected, held_before, held_after, flags_changed, works;
	long notifier; /* slots made when first used (block_util.h): only slot 0's now */
	long per_kind[K_N], differ;
	struct fd_answer twin[K_N];
	long first_differ;
	struct fd_answer got;
};

static int body_block(void *a)
{
	struct block_out *o = a;
	const struct secure_page *sp = state_of(my_mailbox())->sp;
	static long before[SM_NFDS];
	o->lo = sp->fd_lo;
	o->hi = sp->fd_hi;
	/* the program's own descriptor of each kind sandpit's block holds */
	int st[2], sq[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, st) || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sq))
		return 1;
	int efd = eventfd(0, 0), maps = open("/proc/self/maps", O_RDONLY);
	if (efd < 0 || maps < 0)
		return 2;
	answer_of(st[0], &o->twin[K_STREAM]);
	answer_of(sq[0], &o->twin[K_SEQPACKET]);
	answer_of(efd, &o->twin[K_EVENTFD]);
	answer_of(maps, &o->twin[K_MAPS]);
	int gone = dup(maps); /* a number that holds nothing */
	if (gone < 0 || close(gone))
		return 3;
	answer_of(gone, &o->twin[K_FREE]);
	o->notifier = notifier_tid() != 0;
	long made_hi = o->notifier ? slots_u_fd((int)o->lo, 0) : o->hi;
	for (long fd = o->lo; fd <= o->hi && fd - o->lo < SM_NFDS; fd++)
		before[fd - o->lo] = fdinfo_flags(fd);
	o->held_expected = block_held_expected(o->lo, o->hi, 1);
	o->held_before = held_in(o->lo, o->hi);
	for (long fd = o->lo; fd <= o->hi; fd++) {
		int k = fd == sp->tb_fd	    ? K_STREAM
			: fd == sp->pass_fd ? K_SEQPACKET
			: fd == sp->maps_fd ? K_MAPS
			: fd <= made_hi     ? K_EVENTFD
					    : K_FREE;
		struct fd_answer got;
		answer_of((int)fd, &got);
		o->attempts += 4;
		o->per_kind[k]++;
		if (memcmp(&got, &o->twin[k], sizeof(got)) && !o->differ++) {
			o->first_differ = fd;
			o->got = got;
		}
	}
	for (long fd = o->lo; fd <= o->hi && fd - o->lo < SM_NFDS; fd++)
		o->flags_changed += fdinfo_flags(fd) != before[fd - o->lo];
	o->held_after = held_in(o->lo, o->hi);
	o->works = sandpit_works();
	return 0;
}

/* Every number of the block answers both calls as the program's own
 * descriptor of the same kind does, as fstat answers there too: sockets
 * their protocol's name (the only attribute sockfs has; the kind of
 * socket is no secret of sandpit's), eventfds and /proc/self/maps
 * EOPNOTSUPP and an empty list; nothing held, closed or re-flagged */
TEST(xattr_reads_on_sandpits_descriptors_answer_as_the_programs_own_of_the_kind)
{
	struct block_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	ASSERT_EQ(0, outcome(run_sandboxed_opts(body_block, o, NULL, 60)));
	EXPECT_EQ(SM_NFDS, o->hi - o->lo + 1);
	EXPECT_EQ(4 * SM_NFDS, o->attempts);
	EXPECT_EQ(1, o->per_kind[K_STREAM]);
	EXPECT_EQ(1, o->per_kind[K_SEQPACKET]);
	EXPECT_EQ(1, o->per_kind[K_MAPS]);
	/* every slot's eventfds made at start, or only slot 0's: the
	 * numbers of the others answer as a number that holds nothing does */
	EXPECT_EQ(o->notifier ? 2 : 2 * SM_NSLOTS, o->per_kind[K_EVENTFD]);
	EXPECT_EQ(2 * SM_NSLOTS, o->per_kind[K_EVENTFD] + o->per_kind[K_FREE]);
	const struct fd_answer *f = &o->twin[K_FREE];
	EXPECT_EQ(-EBADF, f->type);
	EXPECT_EQ(-EBADF, f->sockproto);
	EXPECT_EQ(-EBADF, f->user);
	EXPECT_EQ(-EBADF, f->list);
	EXPECT_EQ(-EBADF, f->listlen);
	EXPECT_EQ(0, o->differ)
	TH_LOG("%ld numbers differ, first %ld: type %lo proto %ld '%s' user %ld list %ld",
	       o->differ, o->first_differ, o->got.type, o->got.sockproto, o->got.proto, o->got.user,
	       o->got.list);
	/* the twins themselves, precisely */
	EXPECT_EQ(S_IFSOCK, o->twin[K_STREAM].type);
	EXPECT_EQ(12, o->twin[K_STREAM].sockproto);
	EXPECT_STREQ("UNIX-STREAM", o->twin[K_STREAM].proto);
	EXPECT_EQ(5, o->twin[K_SEQPACKET].sockproto);
	EXPECT_STREQ("UNIX", o->twin[K_SEQPACKET].proto);
	for (int k = 0; k < 2; k++) {
		EXPECT_EQ(-ENODATA, o->twin[k].user) TH_LOG("%s", kind_name[k]);
		EXPECT_EQ(21, o->twin[k].list) TH_LOG("%s", kind_name[k]);
		EXPECT_STREQ("system.sockprotoname", o->twin[k].names);
	}
	/* user.* of what is neither a file nor a directory: ENODATA first */
	EXPECT_EQ(-ENODATA, o->twin[K_EVENTFD].user);
	EXPECT_EQ(-EOPNOTSUPP, o->twin[K_MAPS].user);
	for (int k = K_EVENTFD; k < K_FREE; k++) {
		EXPECT_EQ(-EOPNOTSUPP, o->twin[k].sockproto) TH_LOG("%s", kind_name[k]);
		EXPECT_EQ(0, o->twin[k].list) TH_LOG("%s", kind_name[k]);
		EXPECT_EQ(0, o->twin[k].listlen) TH_LOG("%s", kind_name[k]);
	}
	EXPECT_EQ(0, o->twin[K_EVENTFD].type); /* an anonymous inode */
	EXPECT_EQ(S_IFREG, o->twin[K_MAPS].type);
	EXPECT_EQ(o->held_expected, o->held_before);
	EXPECT_EQ(o->held_before, o->held_after);
	EXPECT_EQ(0, o->flags_changed);
	EXPECT_EQ(1, o->works);
}

/* ============================ sandpit's memory */

struct map {
	uintptr_t lo, hi;
	int r, w;
};
#define NMAPS 1024

static int read_maps(struct map *m)
{
	static char buf[1 << 18];
	int fd = open("/proc/self/maps", O_RDONLY), n = 0;
	size_t len = 0;
	ssize_t got;
	if (fd < 0)
		return -1;
	while (len < sizeof(buf) - 1 && (got = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)got;
	close(fd);
	buf[len] = 0;
	for (char *l = buf; *l && n < NMAPS;
	     l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		char *e;
		m[n].lo = strtoul(l, &e, 16);
		m[n].hi = strtoul(e + 1, &e, 16);
		m[n].r = e[1] == 'r';
		m[n].w = e[2] == 'w';
		n++;
	}
	return n;
}

static const struct map *map_of(const struct map *m, int n, uintptr_t a)
{
	for (int i = 0; i < n; i++)
		if (a >= m[i].lo && a < m[i].hi)
			return &m[i];
	return NULL;
}

struct mem_out {
	int fd;
	long ranges, pages_ro, pages_unmapped, pages_w, attempts, not_efault, changed;
	long straddles, straddle_bad;
	long names_tried, name_differ, name_found, value_written;
	long alt_written, alt_sp_lo, t_led, works_after;
	long first_bad_res;
	uintptr_t first_bad;
	char msg[256];
};

static volatile long led_astray;
static void astray(void)
{
	led_astray = 1;
	_exit(99);
}

static void bad(struct mem_out *o, uintptr_t p, long r, const char *what)
{
	if (!o->msg[0]) {
		o->first_bad = p;
		o->first_bad_res = r;
		snprintf(o->msg, sizeof(o->msg), "%s at %#lx: %ld", what, (unsigned long)p, r);
	}
}

static int body_mem(void *a)
{
	struct mem_out *o = a;
	const struct secure_page *sp = state_of(my_mailbox())->sp;
	static struct map m[NMAPS];
	static unsigned char snap[P], key[512];
	unsigned char out[64], out2[64];
	/* B confirms slot 0 from the kernel a moment after the start (its
	 * count of the slot's starts, in S, moves then): not a change of the
	 * calls' making, so the pages are compared only after it */
	for (int i = 0; i < 5000 && !__atomic_load_n(&sp->started, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	int nm = read_maps(m);
	if (nm <= 0)
		return 1;
	o->ranges = (long)sp->nranges;
	for (unsigned i = 0; i < sp->nranges && i < SM_MAX_RANGES; i++) {
		uintptr_t lo = sp->ranges[i].lo, hi = sp->ranges[i].hi;
		for (uintptr_t p = lo & ~(P - 1); p < hi; p += P) {
			const struct map *mp = map_of(m, nm, p);
			if (mp && mp->w) { /* the program's to write, as read(2) does */
				o->pages_w++;
				continue;
			}
			if (mp && mp->r)
				memcpy(snap, (void *)p, P);
			o->pages_ro += mp != NULL;
			o->pages_unmapped += mp == NULL;
			long r[6] = {
				xget(o->fd, NAME, (void *)p, VLEN),
				xget(o->fd, NAME, (void *)p, SIZE_MAX),
				xget(o->fd, NAME, (void *)(p + P - 8), 0x10001),
				xget(o->fd, NAME, (void *)p, (size_t)-4096),
				xlist(o->fd, (void *)p, 256),
				xlist(o->fd, (void *)p, SIZE_MAX),
			};
			for (int k = 0; k < 6; k++) {
				o->attempts++;
				if (r[k] != -EFAULT && ++o->not_efault)
					bad(o, p, r[k], "not EFAULT");
			}
			if (mp && mp->r && memcmp(snap, (void *)p, P) && ++o->changed)
				bad(o, p, 0, "changed");
			/* the name pointer on sandpit's readable bytes: a lookup
			 * key, answered as the same bytes in the program's own
			 * memory (the kernel reads at most 255 and a NUL) */
			if (mp && mp->r && p + 256 <= mp->hi) {
				memset(key, 0, sizeof(key));
				memcpy(key, (void *)p, 256);
				memset(out, 0x5a, sizeof(out));
				memset(out2, 0x5a, sizeof(out2));
				long n1 = xget(o->fd, (const char *)p, out, sizeof(out));
				long n2 = xget(o->fd, (const char *)key, out2, sizeof(out2));
				o->names_tried++;
				if ((n1 != n2 || memcmp(out, out2, sizeof(out))) &&
				    ++o->name_differ)
					bad(o, p, n1, "name answered otherwise than its copy");
				o->name_found += n1 >= 0;
				for (size_t b = 0; b < sizeof(out); b++)
					o->value_written += out[b] != 0x5a;
			}
		}
		/* a buffer of the program's own right below the range, the
		 * value running into the range: EFAULT, the range unchanged */
		uintptr_t below = (lo & ~(P - 1)) - P;
		const struct map *first = map_of(m, nm, lo);
		if (first && first->r && !first->w && !map_of(m, nm, below)) {
			void *q = mmap((void *)below, P, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (q == (void *)below) {
				memcpy(snap, (void *)lo, P);
				long r = xget(o->fd, NAME, (char *)(below + P - 100), SIZE_MAX);
				o->straddles++;
				o->attempts++;
				if ((r != -EFAULT || memcmp(snap, (void *)lo, P)) &&
				    ++o->straddle_bad)
					bad(o, lo, r, "straddle");
				munmap(q, P);
			}
		}
	}
	/* T's own alternate stack (U can write it, T never returns through
	 * it): filled with the address of a function of the program's, while
	 * T itself makes the call in strict mode (user.lure: the address of
	 * astray, over and over); then T serves on */
	uintptr_t alt = (uintptr_t)sp->altstack[0];
	o->alt_sp_lo = (long)alt;
	long w = xget(o->fd, "user.lure", (void *)(alt + sp->altstack[2] - 4096), VLEN);
	o->alt_written = w;
	o->works_after = sandpit_works();
	o->t_led = led_astray;
	return 0;
}

/* The value and names land only where the program could write anyway:
 * on every other page of sandpit's ranges both calls say EFAULT whatever
 * the size, and the bytes stay */
TEST(value_buffer_on_sandpits_pages_faults_and_the_name_there_is_only_a_key)
{
	char dir[64], path[96];
	struct mem_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	static uintptr_t lure[LURE / sizeof(uintptr_t)];
	for (size_t i = 0; i < LURE / sizeof(uintptr_t); i++)
		lure[i] = (uintptr_t)astray;
	o->fd = held_file(_metadata, dir, path, O_RDONLY, 0);
	ASSERT_LE(0, o->fd);
	ASSERT_EQ(0, fsetxattr(o->fd, "user.lure", lure, sizeof(lure), 0));
	int st = run_sandboxed_opts(body_mem, o, NULL, 120);
	close(o->fd);
	rm_rf(dir);
	ASSERT_EQ(0, outcome(st));
	EXPECT_GE(o->ranges, 9);
	EXPECT_GE(o->pages_ro, 1024 + 4 + 4); /* secure pages, table, T's code... */
	EXPECT_EQ(6 * (o->pages_ro + o->pages_unmapped) + o->straddles, o->attempts);
	EXPECT_EQ(0, o->not_efault) TH_LOG("%s", o->msg);
	EXPECT_EQ(0, o->changed) TH_LOG("%s", o->msg);
	EXPECT_GE(o->straddles, 1);
	EXPECT_EQ(0, o->straddle_bad) TH_LOG("%s", o->msg);
	EXPECT_GE(o->names_tried, o->pages_ro / 2);
	EXPECT_EQ(0, o->name_differ) TH_LOG("%s", o->msg);
	EXPECT_EQ(0, o->name_found);
	EXPECT_EQ(0, o->value_written);
	/* the writable ones: T's alternate stacks and the mailboxes */
	EXPECT_EQ((long)(SM_NSLOTS * 5), o->pages_w);
	EXPECT_EQ(LURE, o->alt_written);
	EXPECT_EQ(1, o->works_after);
	EXPECT_EQ(0, o->t_led);
	TH_LOG("%ld ranges: %ld read-only pages, %ld unmapped, %ld writable; %ld attempts, "
	       "%ld straddles, %ld names",
	       o->ranges, o->pages_ro, o->pages_unmapped, o->pages_w, o->attempts, o->straddles,
	       o->names_tried);
}

/* ============================ sizes, as natively */

#define NSIZES 7
struct size_out {
	int fd;
	long r[NSIZES];
	long value_ok;
};

static int sizes_calls(void *a)
{
	struct size_out *o = a;
	static unsigned char big[1 << 17];
	int i = 0;
	o->r[i++] = xget(o->fd, NAME, big, SIZE_MAX);
	o->r[i++] = xget(o->fd, NAME, big, (size_t)LONG_MIN);
	o->r[i++] = xget(o->fd, NAME, big, 0x10001);
	o->r[i++] = xget(o->fd, NAME, NULL, SIZE_MAX);
	o->r[i++] = xget(o->fd, NAME, big, VLEN - 1);
	o->r[i++] = xlist(o->fd, (char *)big, SIZE_MAX);
	o->r[i++] = xlist(o->fd, (char *)big, (size_t)INT_MIN);
	o->value_ok = 1;
	fgetxattr(o->fd, NAME, big, sizeof(big));
	for (int b = 0; b < VLEN; b++)
		o->value_ok &= big[b] == value_byte(b);
	return 0;
}

TEST(huge_and_negative_sizes_answer_as_natively)
{
	char dir[64], path[96];
	struct size_out *nat = shared_page(sizeof(*nat)), *box = shared_page(sizeof(*box));
	ASSERT_NE(NULL, nat);
	ASSERT_NE(NULL, box);
	nat->fd = box->fd = held_file(_metadata, dir, path, O_RDONLY, 0);
	ASSERT_LE(0, nat->fd);
	pid_t pid = fork();
	if (pid == 0)
		_exit(sizes_calls(nat));
	int st;
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	st = run_sandboxed(sizes_calls, box);
	close(box->fd);
	rm_rf(dir);
	ASSERT_EQ(0, outcome(st));
	for (int i = 0; i < NSIZES; i++) {
		EXPECT_EQ(nat->r[i], box->r[i]) TH_LOG("size case %d", i);
	}
	EXPECT_EQ(VLEN, box->r[0]);
	EXPECT_EQ(-EFAULT, box->r[3]);
	EXPECT_EQ(-ERANGE, box->r[4]);
	EXPECT_EQ(1, box->value_ok);
}

/* ============================ what else the two calls open */

struct open_out {
	int wfd, rfd, fd200;
	char path[96];
	long opath_get, opath_list, opath_open;
	long trusted_get, list_len, list_has_trusted, list_has_user;
	long w_read, w_reopen, w_fstat, w_getxattr_path, w_getxattr_proc, w_get, w_value_ok, w_acl,
		w_acl_same, w_list;
	long m_user, m_acl; /* the file with mode 0200: as root without capabilities */
	long attempts;
};

static int body_open(void *a)
{
	struct open_out *o = a;
	unsigned char v[VLEN + 16], names[256];
	char proc[64];
	struct stat st;
	/* an O_PATH descriptor of a file of the grants: the kernel has no xattr
	 * call on one */
	int op = open("/etc/passwd", O_PATH);
	o->opath_open = op < 0 ? -errno : 0;
	o->opath_get = res(fgetxattr(op, NAME, v, sizeof(v)));
	o->opath_list = res(flistxattr(op, (char *)names, sizeof(names)));
	/* trusted.*: the kernel answers a reader without CAP_SYS_ADMIN as if
	 * there were none, T included */
	o->trusted_get = res(fgetxattr(o->rfd, "trusted.rev15", v, sizeof(v)));
	memset(names, 0, sizeof(names));
	o->list_len = res(flistxattr(o->rfd, (char *)names, sizeof(names)));
	for (long k = 0; k >= 0 && k < o->list_len; k += (long)strlen((char *)names + k) + 1) {
		o->list_has_trusted += !strncmp((char *)names + k, "trusted.", 8);
		o->list_has_user += !strcmp((char *)names + k, NAME);
	}
	/* a write-only descriptor of a file outside every grant, held
	 * before the start: no read, no attribute by path, fstat answers */
	o->w_read = res(read(o->wfd, v, 1));
	o->w_fstat = res(fstat(o->wfd, &st));
	o->w_getxattr_path = res(getxattr(o->path, NAME, v, sizeof(v)));
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->wfd);
	o->w_getxattr_proc = res(getxattr(proc, NAME, v, sizeof(v)));
	int re = open(proc, O_RDONLY); /* the magic link: a read of the file */
	o->w_reopen = re < 0 ? -errno : 0;
	if (re >= 0)
		close(re);
	memset(v, 0, sizeof(v));
	o->w_get = res(fgetxattr(o->wfd, NAME, v, sizeof(v)));
	o->w_value_ok = 1;
	for (int b = 0; b < VLEN; b++)
		o->w_value_ok &= v[b] == value_byte(b);
	o->w_acl = res(fgetxattr(o->wfd, "system.posix_acl_access", v, sizeof(v)));
	o->w_acl_same = o->w_acl == (long)sizeof(acl) && !memcmp(v, acl, sizeof(acl));
	o->w_list = res(flistxattr(o->wfd, (char *)names, sizeof(names)));
	/* mode 0200: user.* needs read permission on the file, which root
	 * without CAP_DAC_OVERRIDE lacks; the ACL needs none */
	o->m_user = res(fgetxattr(o->fd200, NAME, v, sizeof(v)));
	o->m_acl = res(fgetxattr(o->fd200, "system.posix_acl_access", v, sizeof(v)));
	o->attempts = 14;
	return 0;
}

/* O_PATH: EBADF as natively.  trusted.*: hidden from T too.  A write-only
 * descriptor of a file outside the grants, held before the start: read
 * EBADF, getxattr by path and a reopen through /proc/self/fd EACCES, but
 * fgetxattr gives its user.* value and its ACL (owner, named users and
 * groups), which fstat does not: the leak docs/THREATS.md records */
TEST(opath_trusted_and_a_held_write_only_descriptor_outside_the_grants)
{
	char dir[64], dir2[64], path2[96];
	struct open_out *o = shared_page(sizeof(*o));
	ASSERT_NE(NULL, o);
	o->wfd = held_file(_metadata, dir, o->path, O_WRONLY | O_APPEND, 1);
	ASSERT_LE(0, o->wfd);
	o->rfd = open(o->path, O_RDONLY);
	ASSERT_LE(0, o->rfd);
	o->fd200 = held_file(_metadata, dir2, path2, O_WRONLY, 0);
	ASSERT_LE(0, o->fd200);
	ASSERT_EQ(0, fchmod(o->fd200, 0200)); /* the ACL's entries follow the mode */
	int st = run_sandboxed(body_open, o);
	close(o->wfd);
	close(o->rfd);
	close(o->fd200);
	rm_rf(dir);
	rm_rf(dir2);
	ASSERT_EQ(0, outcome(st));
	EXPECT_EQ(14, o->attempts);
	EXPECT_EQ(0, o->opath_open);
	EXPECT_EQ(-EBADF, o->opath_get);
	EXPECT_EQ(-EBADF, o->opath_list);
	if (geteuid() == 0) {
		EXPECT_EQ(-ENODATA, o->trusted_get);
	}
	EXPECT_EQ(0, o->list_has_trusted);
	EXPECT_EQ(1, o->list_has_user);
	EXPECT_EQ(-EBADF, o->w_read);
	EXPECT_EQ(0, o->w_fstat);
	EXPECT_EQ(-EACCES, o->w_getxattr_path);
	EXPECT_EQ(-EACCES, o->w_getxattr_proc);
	EXPECT_EQ(-EACCES, o->w_reopen);
	/* the leak: the value and the ACL of a file the program may neither
	 * read nor name */
	EXPECT_EQ(VLEN, o->w_get);
	EXPECT_EQ(1, o->w_value_ok);
	EXPECT_EQ((long)sizeof(acl), o->w_acl);
	EXPECT_EQ(1, o->w_acl_same);
	EXPECT_EQ((long)(sizeof(NAME) + sizeof("user.two") + sizeof("system.posix_acl_access")),
		  o->w_list);
	if (geteuid() == 0) {
		EXPECT_EQ(-EACCES, o->m_user);
	}
	EXPECT_EQ((long)sizeof(acl), o->m_acl);
}

TEST_HARNESS_MAIN
