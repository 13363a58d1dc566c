/* Attacks on the trusted core (invariant 2): a request rewritten in the
 * mailbox during B's slow check, and the path copy sent with a request
 * rewritten, never create or reach a file outside the grants.  Each test
 * counts the rewrites that landed (core_test says more). */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <kselftest_harness.h>
#include "sandbox_util.h"
#include "u_state.h"
#include "core_race.h"
#include "user/trusted/b_state.h"

/* ------------------------------------- a request rewritten during B's check */

#define DEPTH 40
#define HOPS 15 /* /proc/self and root are two links each; the kernel follows 40 */
struct slow {
	char dir[64], in_grant[80], slow_path[4096], evil[128];
};

static void *rewrite_request(void *a)
{
	struct slow *sl = a;
	while (!victim_mb)
		;
	struct mailbox *mb = victim_mb;
	uint64_t args[6] = { (uint64_t)AT_FDCWD, (uint64_t)(uintptr_t)sl->evil, O_WRONLY | O_CREAT, 0644 };
	while (!R->done) {
		mb->payload.nr = SYS_openat;
		memcpy(mb->payload.args, args, sizeof(args));
		mb->nr = SYS_openat;
		memcpy(mb->args, args, sizeof(args));
		R->writes++;
	}
	R->stopped = 1;
	return NULL;
}

/* S is published complete: a reader that sees the same even sequence
 * number before and after reading the verdict must always read the same
 * verdict for that number (B once wrote the raw request into S under the
 * old number, and left it there while it resolved a path). */
static void *watch_secure_page(void *a)
{
	(void)a;
	while (!victim_mb)
		;
	const volatile struct secure_page *sp = state_of(victim_mb)->sp;
	uint64_t seen_seq = ~0ull, seen[8];
	while (!R->done) {
		uint64_t s1 = __atomic_load_n(&sp->seq, __ATOMIC_ACQUIRE), v[8];
		v[0] = (uint64_t)sp->verdict;
		v[1] = sp->nr;
		for (int i = 0; i < 6; i++)
			v[2 + i] = sp->args[i];
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (s1 & 1 || __atomic_load_n(&sp->seq, __ATOMIC_ACQUIRE) != s1)
			continue;
		if (s1 != seen_seq) {
			seen_seq = s1;
			memcpy(seen, v, sizeof(seen));
			R->snapshots++;
		} else if (memcmp(seen, v, sizeof(seen))) {
			R->torn++;
			memcpy(seen, v, sizeof(seen));
		}
	}
	return NULL;
}

static int body_slow_check(void *a)
{
	struct slow *sl = a;
	pthread_t w, o;
	victim_mb = my_mailbox();
	/* the watcher first: once the rewriting starts, this thread's own
	 * requests are rewritten too */
	if (pthread_create(&o, NULL, watch_secure_page, NULL) || pthread_create(&w, NULL, rewrite_request, sl))
		return 1;
	/* 200 calls, and on until a rewrite has landed (for 20 s at most): on
	 * one CPU the rewriter can go a whole round without being scheduled */
	time_t until = time(NULL) + 20;
	for (int i = 0; i < 200 || (!R->landed && time(NULL) < until); i++) {
		int fd = open(sl->slow_path, O_RDONLY);
		if (fd >= 0) {
			close(fd);
			R->calls++;
		} else if (errno == EACCES) {
			R->landed++; /* B checked the rewritten request, and refused it */
		} else {
			R->bad++;
		}
	}
	R->done = 1;
	/* no call before the rewriter's last write has landed: it would be
	 * the rewritten openat (glibc aborts a futex wait that says EACCES) */
	while (!R->stopped)
		;
	pthread_join(w, NULL);
	pthread_join(o, NULL);
	return 0;
}

/* The observed attack: B took ~10 ms over a path while the request in the
 * mailbox was rewritten into a create outside every grant.  B checks its
 * one copy in full and publishes S complete: EACCES, and no file. */
TEST(inv2_request_rewritten_during_a_slow_check_never_creates_outside_grants)
{
	struct slow *sl = shared_page(sizeof(*sl));
	R = shared_page(4096);
	ASSERT_NE(NULL, sl);
	ASSERT_NE(NULL, R);
	snprintf(sl->dir, sizeof(sl->dir), "/tmp/sandpit-core-%d", getpid());
	snprintf(sl->in_grant, sizeof(sl->in_grant), "%s/in", sl->dir);
	snprintf(sl->evil, sizeof(sl->evil), "%s/out/evil", sl->dir);
	char p[1024];
	ASSERT_EQ(0, mkdir(sl->dir, 0755));
	snprintf(p, sizeof(p), "%s/out", sl->dir);
	ASSERT_EQ(0, mkdir(p, 0755));
	snprintf(p, sizeof(p), "%s", sl->in_grant);
	ASSERT_EQ(0, mkdir(p, 0755));
	for (int i = 0; i < DEPTH; i++) {
		strcat(p, "/d");
		ASSERT_EQ(0, mkdir(p, 0755));
	}
	strcat(p, "/f");
	int fd = open(p, O_CREAT | O_WRONLY, 0644);
	ASSERT_LE(0, fd);
	close(fd);
	char *s = sl->slow_path;
	for (int i = 0; i < HOPS; i++)
		s += sprintf(s, "/proc/self/root");
	strcpy(s, p);

	const char *reads[] = { sl->in_grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = reads };
	char msg[4096];
	int r = run_capture(body_slow_check, sl, &o, 60, msg, sizeof(msg));
	TH_LOG("outcome %d, writes %ld, refused %ld, opened %ld, other %ld, verdicts seen %ld, "
	       "changed under one number %ld; %s",
	       r, R->writes, R->landed, R->calls, R->bad, R->snapshots, R->torn, msg);
	EXPECT_EQ(0, r);
	EXPECT_LT(1, R->snapshots);
	EXPECT_EQ(0, R->torn);
	EXPECT_LT(0, R->writes);
	EXPECT_LT(0, R->landed);
	EXPECT_EQ(-1, access(sl->evil, F_OK));
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", sl->dir);
	EXPECT_EQ(0, system(cmd));
}

/* ------------------------------- the path copy sent with a request, rewritten */

struct carried {
	char dir[64], in_path[96], out_path[96];
	ino_t out_ino;
};

/* U's entry copies a path B checks into the mailbox (MB_PATH); another
 * thread keeps replacing that copy with a path outside every grant, for
 * the victim's own pointer, so that B takes it for the victim's argument */
static void *rewrite_path_copy(void *a)
{
	struct carried *c = a;
	while (!victim_mb)
		;
	struct mailbox *mb = victim_mb;
	size_t len = strlen(c->out_path);
	while (!R->done) {
		memcpy(mb->path.bytes, c->out_path, len + 1);
		mb->path.len = (uint32_t)len;
		mb->path.addr = (uint64_t)(uintptr_t)c->in_path;
		R->writes++;
	}
	return NULL;
}

static int body_path_copy(void *a)
{
	struct carried *c = a;
	pthread_t w;
	victim_mb = my_mailbox();
	if (pthread_create(&w, NULL, rewrite_path_copy, c))
		return 1;
	time_t until = time(NULL) + 20;
	for (int i = 0; i < 400 || (!R->landed && time(NULL) < until); i++) {
		char buf[16] = { 0 };
		struct stat sb;
		int fd = open(c->in_path, O_RDONLY);
		if (fd >= 0) {
			if (read(fd, buf, sizeof(buf) - 1) < 0 || strcmp(buf, "inside"))
				R->bad++; /* the file outside: B checked one path, T opened another */
			else
				R->calls++;
			close(fd);
		} else if (errno == EACCES) {
			R->landed++; /* B checked the rewritten copy in full, and refused it */
		} else {
			R->bad++;
		}
		if (stat(c->in_path, &sb) == 0) {
			if (sb.st_ino == c->out_ino)
				R->bad++;
			else
				R->calls++;
		} else if (errno == EACCES) {
			R->landed++;
		} else {
			R->bad++;
		}
	}
	R->done = 1;
	pthread_join(w, NULL);
	return 0;
}

/* The copy is U's request: B copies it once and checks that copy, so a
 * rewrite is either refused (EACCES) or too late for this call; the file
 * outside the grant is never opened or stat'ed. */
TEST(inv2_path_copy_rewritten_in_the_mailbox_never_reaches_a_file_outside_grants)
{
	struct carried *c = shared_page(sizeof(*c));
	R = shared_page(4096);
	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, R);
	snprintf(c->dir, sizeof(c->dir), "/tmp/sandpit-core-copy-%d", getpid());
	snprintf(c->in_path, sizeof(c->in_path), "%s/in0/f", c->dir);
	snprintf(c->out_path, sizeof(c->out_path), "%s/out/f", c->dir);
	char p[128];
	ASSERT_EQ(0, mkdir(c->dir, 0755));
	snprintf(p, sizeof(p), "%s/in0", c->dir);
	ASSERT_EQ(0, mkdir(p, 0755));
	snprintf(p, sizeof(p), "%s/out", c->dir);
	ASSERT_EQ(0, mkdir(p, 0755));
	const char *files[2][2] = { { c->in_path, "inside" }, { c->out_path, "secret" } };
	for (int i = 0; i < 2; i++) {
		int fd = open(files[i][0], O_CREAT | O_WRONLY, 0644);
		ASSERT_LE(0, fd);
		ASSERT_EQ(6, write(fd, files[i][1], 6));
		close(fd);
	}
	struct stat sb;
	ASSERT_EQ(0, stat(c->out_path, &sb));
	c->out_ino = sb.st_ino;

	snprintf(p, sizeof(p), "%s/in0", c->dir);
	const char *reads[] = { p, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_read = reads };
	char msg[4096];
	int r = run_capture(body_path_copy, c, &o, 60, msg, sizeof(msg));
	TH_LOG("outcome %d, rewrites %ld, refused %ld, inside %ld, outside or other %ld; %s", r,
	       R->writes, R->landed, R->calls, R->bad, msg);
	EXPECT_EQ(0, r);
	EXPECT_LT(0, R->writes);
	EXPECT_LT(0, R->landed);
	EXPECT_EQ(0, R->bad);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", c->dir);
	EXPECT_EQ(0, system(cmd));
}

/* ------------------------- a program's value that looks like B's own copy */

/* B checks a request in a copy on its own stack and points the arguments
 * it rewrites (a resolved path) into that copy's data; publishing the copy
 * to S, it once moved every argument whose value fell in that range, the
 * program's own too.  B is forked from P, so its threads' stacks can lie
 * where P later maps a 64 KiB thread stack: clone's tls was moved into S
 * and the new thread died at its first TLS access (rev17_test, about one
 * run in twenty; run_test's threads_with_small_stacks_start_every_time).
 * Only an argument a check pointed there, and that still points there,
 * moves. */
TEST(only_arguments_b_pointed_into_its_copy_move_into_s)
{
	static struct secure_page out, s;
	memset(&out, 0, sizeof(out));
	out.args[0] = (uintptr_t)out.data + 100;      /* the program's value */
	b_arg_into_data(&out, 1, out.data + 200);     /* B's resolved path */
	b_arg_into_data(&out, 2, out.data);           /* pointed there, then */
	out.args[2] = (uint64_t)(int64_t)AT_FDCWD;    /* rewritten by B */
	out.args[3] = (uintptr_t)out.data + sizeof(out.data); /* just past */
	EXPECT_EQ((uintptr_t)out.data + 100, b_arg_for_s(&out, 0, &s));
	EXPECT_EQ((uintptr_t)s.data + 200, b_arg_for_s(&out, 1, &s));
	EXPECT_EQ((uint64_t)(int64_t)AT_FDCWD, b_arg_for_s(&out, 2, &s));
	EXPECT_EQ((uintptr_t)out.data + sizeof(out.data), b_arg_for_s(&out, 3, &s));
	EXPECT_EQ(0u, b_arg_for_s(&out, 4, &s));
}

TEST_HARNESS_MAIN
