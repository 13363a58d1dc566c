/* The plan cache under `sandpit run` (see plan_run.h): the child reads,
 * before sandpit_start, the plans the program needed last time; the
 * run-time patcher inside the sandbox takes its plans only from those, and
 * names what it meets on the hint page; the parent, after the child has
 * ended, plans what the child named and keeps the program's list.  The
 * cache's keys, directory and files are plan_cache.c's. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "user/patch/patch_sys.h"
#include "user/patch/plan_cache.h"
#include "user/patch/plan_run.h"

/* The plans the loader read for this program (each: u32 length, then the
 * file), and the page the run-time patcher names unplanned files in.  Both
 * are in P's memory, which U can write: a hostile program can spoil only
 * its own plans (each is copied, parsed and verified before use) and its
 * own hints (which the parent treats as untrusted names). */
static const uint8_t *preload;
static size_t preload_len;
static struct plan_hints *hints;
static const char *needs_line[PLAN_MAX_HINTS]; /* the list read, a line each */
/* how many of needs_line are set: this process's own count, never the
 * hint page's (the program can write that page: a count there larger
 * than the lines read had strcmp read needs_line's NULLs) */
static uint32_t needs_lines;

static uint64_t dev_of(unsigned major, unsigned minor)
{
	uint64_t ma = major, mi = minor;

	return ((ma & 0xfffff000ULL) << 32) | ((ma & 0xfffULL) << 8) |
	       ((mi & 0xffffff00ULL) << 12) | (mi & 0xffULL);
}

int plan_cache_inside_key(const struct module *mod, const struct maps *m, struct plan_key *k,
			  const char **path)
{
	const struct vma *x = NULL;

	memset(k, 0, sizeof *k);
	for (unsigned i = 0; i < m->n && !x; i++)
		if (m->v[i].lo <= mod->lo && mod->lo < m->v[i].hi)
			x = &m->v[i];
	if (!x || !x->ino || !mod->phdr || (!preload && !hints))
		return -1;
	k->dev = dev_of(x->dev_major, x->dev_minor);
	k->ino = x->ino;
	k->text_lo = mod->lo - mod->bias;
	k->text_hi = mod->hi - mod->bias;
	plan_cache_build_id(mod, m, k);
	*path = x->path;
	return 0;
}

int plan_cache_preloaded(const struct plan_key *k, struct plan_file *f, void **mem)
{
	size_t at = 0, len = preload_len;
	const char *why;

	*mem = NULL;
	while (preload && len - at >= 4) {
		uint32_t n;
		uint8_t *copy;

		memcpy(&n, preload + at, 4);
		if (n > len - at - 4)
			return 0;
		copy = p_alloc(n ? n : 1);
		if (!copy)
			return 0;
		memcpy(copy, preload + at + 4, n);
		at += 4 + (size_t)n;
		if (!plan_file_parse(copy, n, f, &why) && f->key.dev == k->dev &&
		    f->key.ino == k->ino && f->key.text_lo == k->text_lo &&
		    f->key.text_hi == k->text_hi && f->key.build_id_len == k->build_id_len &&
		    !memcmp(f->key.build_id, k->build_id, k->build_id_len)) {
			*mem = copy;
			return 1;
		}
		p_free(copy);
	}
	return 0;
}

void plan_cache_hint(const char *path, bool planned)
{
	size_t len = path ? strnlen(path, PLAN_HINT_LEN) : PLAN_HINT_LEN;
	uint32_t i;

	if (!hints || len >= PLAN_HINT_LEN)
		return;
	i = __atomic_fetch_add(&hints->n, 1, __ATOMIC_RELAXED);
	if (i >= PLAN_MAX_HINTS)
		return;
	if (i >= needs_lines || strcmp(needs_line[i], path))
		hints->differs = 1;
	memcpy(hints->path[i], path, len + 1);
	if (planned)
		__atomic_fetch_or(&hints->planned, 1u << i, __ATOMIC_RELAXED);
}

/* The cache's file for the program open on fd: the libraries it named
 * last time ("<dev>-<ino>.needs", one path a line). */
static void needs_name(const struct stat *st, char *name, size_t n)
{
	snprintf(name, n, "%llx-%llx.needs", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
}

/* Reads a cache file whole, checked as plan_cache_get does: its length,
 * or -1 (*why set when it was refused rather than absent). */
static long read_cached(int dfd, const char *name, uint8_t *buf, size_t cap, const char **why)
{
	struct stat st;
	size_t got = 0;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	*why = fd < 0 && errno == ELOOP ? "its file is a symbolic link" : NULL;
	if (fd < 0)
		return -1;
	*why = fstat(fd, &st) ? "fstat failed"
	       : !S_ISREG(st.st_mode) ? "its file is not a regular file"
	       : st.st_uid != geteuid() || (st.st_mode & 077) ? "its file is not ours alone"
	       : (uint64_t)st.st_size > cap ? "its file is too large"
					    : NULL;
	while (!*why && got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (!*why && got != (size_t)st.st_size)
		*why = "could not read its file";
	return *why ? -1 : (long)got;
}

/* The cache's plan for the regular file ls describes, read whole into buf
 * (PLAN_MAX_FILE bytes) and parsed into f: its length, or -1 (*why set when
 * a file was there but refused).  The file must still be the one planned:
 * device, inode, size and both times (the rest of the key is checked
 * against the mapped object where the plan is used). */
static long cached_plan_of(int dfd, const struct stat *ls, uint8_t *buf, struct plan_file *f,
			   const char **why)
{
	char name[64];
	long got;

	*why = NULL;
	plan_cache_file_name(&(struct plan_key){ .dev = ls->st_dev, .ino = ls->st_ino }, name, sizeof name);
	got = read_cached(dfd, name, buf, PLAN_MAX_FILE, why);
	if (got <= 0 || plan_file_parse(buf, (size_t)got, f, why))
		return -1;
	if (f->key.dev != (uint64_t)ls->st_dev || f->key.ino != (uint64_t)ls->st_ino ||
	    f->key.size != (uint64_t)ls->st_size ||
	    f->key.mtime_ns != (uint64_t)ls->st_mtim.tv_sec * 1000000000ULL +
				       (uint64_t)ls->st_mtim.tv_nsec ||
	    f->key.ctime_ns != (uint64_t)ls->st_ctim.tv_sec * 1000000000ULL +
				       (uint64_t)ls->st_ctim.tv_nsec) {
		*why = "the file has changed";
		return -1;
	}
	return got;
}

void plan_cache_run_child(int prog_fd, void *hint_page)
{
	static uint8_t needs[PLAN_MAX_HINTS * PLAN_HINT_LEN];
	const char *why;
	char name[64];
	struct stat st;
	uint8_t *block = NULL, *buf;
	size_t len = 0;
	long n;
	int dfd;

	const char *env = getenv("SANDPIT_PLAN_CACHE");

	if (env && !strcmp(env, "off"))
		return;
	hints = hint_page;
	plan_cache_hold(); /* for the start-up that follows, which lets it go */
	if (fstat(prog_fd, &st) || (dfd = plan_cache_open_dir(false, &why)) < 0)
		return;
	if (!(buf = malloc(PLAN_MAX_FILE))) {
		plan_cache_dir_done(dfd);
		return;
	}
	needs_name(&st, name, sizeof name);
	n = read_cached(dfd, name, needs, sizeof needs - 1, &why);
	uint32_t lines = 0, preloaded = 0;
	for (char *l = (char *)needs, *nl; n > 0 && (nl = memchr(l, '\n', (char *)needs + n - l));
	     l = nl + 1) {
		struct plan_file f;
		struct stat ls;
		uint8_t *nb;
		long got;

		*nl = 0;
		if (lines < PLAN_MAX_HINTS)
			needs_line[lines] = l;
		lines++;
		if (l[0] != '/' || lstat(l, &ls) || !S_ISREG(ls.st_mode))
			continue;
		got = cached_plan_of(dfd, &ls, buf, &f, &why);
		if (got > 0 && len + 4 + (size_t)got <= PLAN_MAX_PRELOAD &&
		    (nb = realloc(block, len + 4 + (size_t)got))) {
			uint32_t g = (uint32_t)got;

			block = nb;
			memcpy(block + len, &g, 4);
			memcpy(block + len + 4, buf, (size_t)got);
			len += 4 + (size_t)got;
			preloaded++;
		} else if (why) {
			plan_cache_note(l, "cache refused", why);
		}
	}
	if (lines && lines == preloaded && lines <= PLAN_MAX_HINTS)
		hints->needs = needs_lines = lines;
	free(buf);
	plan_cache_dir_done(dfd);
	preload = block;
	preload_len = len;
}

/* whether the list out (len bytes, a name a line) has the name p (n bytes) */
static bool listed(const char *out, size_t len, const char *p, size_t n)
{
	for (const char *l = out, *nl; l < out + len; l = nl + 1) {
		nl = memchr(l, '\n', (size_t)(out + len - l));
		if ((size_t)(nl - l) == n && !memcmp(l, p, n))
			return true;
	}
	return false;
}

void plan_cache_run_parent(const char *prog, const void *hint_page,
			   int (*plan_file_at)(const char *path))
{
	static char last[PLAN_MAX_HINTS * PLAN_HINT_LEN];
	struct plan_hints h;
	char name[64], tmp[96], out[PLAN_MAX_HINTS * PLAN_HINT_LEN];
	const char *why;
	struct plan_file f;
	struct stat st, ls;
	size_t len = 0;
	unsigned count = 0;
	uint8_t *buf;
	long n_last;
	int dfd, fd;

	/* one copy of what the sandboxed program may have written: names only */
	memcpy(&h, hint_page, sizeof h);
	/* every name the list's, in its order, each plan taken from it */
	if (h.n == h.needs && !h.planned && !h.differs)
		return;
	if (h.n > PLAN_MAX_HINTS)
		h.n = PLAN_MAX_HINTS;
	if (!h.n || stat(prog, &st) || (dfd = plan_cache_open_dir(true, &why)) < 0)
		return;
	if (!(buf = malloc(PLAN_MAX_FILE))) {
		plan_cache_dir_done(dfd);
		return;
	}
	needs_name(&st, name, sizeof name);
	n_last = read_cached(dfd, name, (uint8_t *)last, sizeof last, &why);
	for (uint32_t i = 0; i < h.n; i++) {
		char *p = h.path[i];
		size_t n = strnlen(p, PLAN_HINT_LEN);

		if (n == PLAN_HINT_LEN || p[0] != '/' || memchr(p, '\n', n) || listed(out, len, p, n) ||
		    lstat(p, &ls) || !S_ISREG(ls.st_mode) || (uint64_t)ls.st_size > PLAN_MAX_OBJECT)
			continue;
		/* what the child planned itself is planned here for the cache;
		 * a plan it took from the cache was verified against the file
		 * when it was used, and each run verifies it again before use
		 * (a hostile child can only ask for planning, or list a name
		 * the next run finds no good plan for) */
		if (h.planned & (1u << i) && plan_file_at(p))
			continue;
		memcpy(out + len, p, n);
		out[len + n] = '\n';
		len += n + 1;
		count++;
	}
	/* then what earlier runs needed and this one did not (another
	 * argument, another import), while its plan is still good: the list
	 * is what the program has needed, not what its last run did */
	for (char *l = last, *nl; n_last > 0 && count < PLAN_MAX_HINTS &&
				  (nl = memchr(l, '\n', (size_t)(last + n_last - l)));
	     l = nl + 1) {
		size_t n = (size_t)(nl - l);
		char p[PLAN_HINT_LEN];

		if (l[0] != '/' || n >= PLAN_HINT_LEN || listed(out, len, l, n))
			continue;
		memcpy(p, l, n);
		p[n] = '\0';
		if (lstat(p, &ls) || !S_ISREG(ls.st_mode) || cached_plan_of(dfd, &ls, buf, &f, &why) < 0)
			continue;
		memcpy(out + len, l, n + 1);
		len += n + 1;
		count++;
	}
	free(buf);
	/* nothing, or the same list as last time: nothing to write */
	if (!len || (n_last == (long)len && !memcmp(last, out, len))) {
		plan_cache_dir_done(dfd);
		return;
	}
	snprintf(tmp, sizeof tmp, ".%s.%d", name, (int)getpid());
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		bool ok = write(fd, out, len) == (ssize_t)len;

		ok = !close(fd) && ok;
		if (!ok || renameat(dfd, tmp, dfd, name))
			unlinkat(dfd, tmp, 0);
	}
	plan_cache_dir_done(dfd);
}
