/* What the grant_*_test binaries share: a box of call results shared with
 * the sandboxed child, a write grant made for it, the same calls natively
 * and sandboxed compared call by call, and a policy file of the default
 * policy and more lines. */
#ifndef SANDPIT_SELFTEST_GRANT_BOX_H
#define SANDPIT_SELFTEST_GRANT_BOX_H
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sandbox_util.h"

#define NRES 64

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

/* write grants need openat2; a forced legacy kernel has none (sandpit_start
 * refuses them: api_write_grant_refused_without_openat2) */

/* Shared with the sandboxed child. */
struct box {
	char grant[64], grant2[64], outside[64];
	long res[NRES]; /* each call's result, or -errno */
	int n;
};

static inline void box_note(struct box *b, long r)
{
	if (b->n < NRES)
		b->res[b->n++] = r < 0 ? -errno : r;
}
#define R(call) box_note(b, (long)(call))

static inline void make_dir(struct __test_metadata *_metadata, char *tmpl)
{
	ASSERT_NE(NULL, mkdtemp(tmpl));
}

static inline void rm_rf(const char *d)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", d);
}

/* fn natively in one directory, and sandboxed in another that is a write
 * grant: the same results, call by call, and the same tree after. */
static inline void same_as_native(struct __test_metadata *_metadata, int (*fn)(void *))
{
	struct box *nat = shared_page(sizeof(*nat)), *box = shared_page(sizeof(*box));
	ASSERT_NE(NULL, nat);
	ASSERT_NE(NULL, box);
	strcpy(nat->grant, "/tmp/sandpit-native-XXXXXX");
	strcpy(box->grant, "/tmp/sandpit-grant-XXXXXX");
	make_dir(_metadata, nat->grant);
	make_dir(_metadata, box->grant);
	pid_t p = fork();
	ASSERT_LE(0, p);
	if (p == 0)
		_exit(fn(nat));
	int st;
	ASSERT_EQ(p, waitpid(p, &st, 0));
	ASSERT_EQ(0, outcome(st));
	const char *w[] = { box->grant, NULL };
	struct sandpit_options o = { .mode = suite_mode(), .allow_write = w };
	EXPECT_EQ(0, outcome(run_sandboxed_opts(fn, box, &o, 60)));
	EXPECT_EQ(nat->n, box->n);
	for (int i = 0; i < nat->n && i < box->n; i++) {
		long want = nat->res[i], got = box->res[i];
		EXPECT_EQ(want, got) TH_LOG("call %d: native %ld, sandboxed %ld", i, want, got);
	}
	static char a[16384], s[16384];
	a[0] = s[0] = '\0';
	tree_signature(nat->grant, "", a, sizeof(a));
	tree_signature(box->grant, "", s, sizeof(s));
	EXPECT_STREQ(a, s);
	EXPECT_LT(4, box->n);
	rm_rf(nat->grant);
	rm_rf(box->grant);
}

/* a box shared with the sandboxed child, and its write grant made */
static inline struct box *grant_box(struct __test_metadata *_metadata)
{
	struct box *box = shared_page(sizeof(*box));
	if (box) {
		strcpy(box->grant, "/tmp/sandpit-grant-XXXXXX");
		make_dir(_metadata, box->grant);
	}
	return box;
}

static inline int in_dir(struct box *b)
{
	return chdir(b->grant);
}

static inline int make_file(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	int r = write(fd, "data\n", 5) == 5 ? 0 : -1;
	close(fd);
	return r;
}

/* dir/name, as a string in buf */
#define AT(buf, dir, name) (snprintf(buf, sizeof(buf), "%s/%s", dir, name), buf)

extern const char sandpit_default_policy[];
extern const uint64_t sandpit_default_policy_len;

/* dir/name: the default policy's text and then `lines` */
static inline void policy_with(struct __test_metadata *_metadata, char *out, size_t n,
			       const char *dir, const char *name, const char *lines)
{
	snprintf(out, n, "%s/%s", dir, name);
	FILE *f = fopen(out, "w");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1u, fwrite(sandpit_default_policy, sandpit_default_policy_len, 1, f));
	fprintf(f, "\n%s", lines);
	ASSERT_EQ(0, fclose(f));
}

#endif
