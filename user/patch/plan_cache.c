/* The patch-plan cache's directory and files (see plan_cache.h).  Runs
 * outside any sandbox, with libc. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "user/patch/patch_types.h"
#include "user/patch/patch_sys.h"
#include "user/patch/plan_cache.h"

#define MAPS_MAX (4u << 20)
#define PLAN_SETTLE_NS 2000000000ULL /* see plan_cache_put */

void plan_cache_note(const char *path, const char *what, const char *why)
{
	char line[PLAN_PATH_MAX + 512], *p = line;
	const char *part[] = { "sandpit: plan cache: ", path, ": ", what, why ? ": " : "",
			       why ? why : "" };

	/* no stdio: it runs inside the sandbox too */
	if (patch_debug <= 0)
		return;
	for (unsigned i = 0; i < sizeof part / sizeof part[0]; i++) {
		size_t n = strnlen(part[i], 200 + (i == 1 ? PLAN_PATH_MAX : 0));

		memcpy(p, part[i], n);
		p += n;
	}
	*p++ = '\n';
	p_sys(SYS_write, 2, line, p - line, 0, 0, 0);
}

/* The GNU build-id note of the object, read through its view. */
void plan_cache_build_id(const struct module *mod, const struct maps *m, struct plan_key *k)
{
	struct elf_view v;

	module_view(mod, m, &v);
	for (unsigned i = 0; i < mod->phnum; i++) {
		const ElfW(Phdr) *ph = &mod->phdr[i];
		uintptr_t a = mod->bias + ph->p_vaddr, end = a + ph->p_memsz;

		if (ph->p_type != PT_NOTE || end < a)
			continue;
		while (a + 12 <= end) {
			uint32_t h[3];
			uintptr_t name = a + 12, desc;

			if (!elf_view_get(&v, a, h, sizeof h))
				break;
			desc = name + ((h[0] + 3ULL) & ~3ULL);
			if (h[0] == 4 && h[2] == NT_GNU_BUILD_ID && h[1] <= PLAN_MAX_BUILD_ID &&
			    desc + h[1] <= end && elf_view_has(&v, name, 4) &&
			    !memcmp((const void *)name, "GNU", 4) &&
			    elf_view_get(&v, desc, k->build_id, h[1])) {
				k->build_id_len = h[1];
				return;
			}
			a = desc + ((h[1] + 3ULL) & ~3ULL);
		}
	}
}

int plan_cache_key(const struct module *mod, const struct maps *m, struct plan_key *k,
		   char *path, size_t pathlen)
{
	const char *env = getenv("SANDPIT_PLAN_CACHE");
	const struct vma *x = NULL;
	struct stat st;
	size_t len;

	memset(k, 0, sizeof *k);
	if (env && !strcmp(env, "off"))
		return -1;
	for (unsigned i = 0; i < m->n && !x; i++)
		if (m->v[i].lo <= mod->lo && mod->lo < m->v[i].hi)
			x = &m->v[i];
	len = x && x->path ? strlen(x->path) : pathlen;
	if (!x || !x->ino || !mod->phdr || len >= pathlen ||
	    (len > 10 && !strcmp(x->path + len - 10, " (deleted)")))
		return -1;
	memcpy(path, x->path, len + 1);
	if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_ino != x->ino ||
	    major(st.st_dev) != x->dev_major || minor(st.st_dev) != x->dev_minor)
		return -1;
	k->dev = st.st_dev;
	k->ino = st.st_ino;
	k->size = (uint64_t)st.st_size;
	k->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL + (uint64_t)st.st_mtim.tv_nsec;
	k->ctime_ns = (uint64_t)st.st_ctim.tv_sec * 1000000000ULL + (uint64_t)st.st_ctim.tv_nsec;
	k->text_lo = mod->lo - mod->bias;
	k->text_hi = mod->hi - mod->bias;
	plan_cache_build_id(mod, m, k);
	return 0;
}

int plan_cache_pristine(const struct module *mod, const struct plan_key *k, const char *path)
{
	static uint8_t buf[65536];
	const ElfW(Phdr) *ph = NULL;
	uintptr_t lo = mod->lo - mod->bias;
	struct stat st;
	uint64_t off, left = mod->hi - mod->lo;
	const uint8_t *mem = (const uint8_t *)mod->lo;
	int fd, r = -1;

	for (unsigned i = 0; i < mod->phnum && !ph; i++)
		if (mod->phdr[i].p_type == PT_LOAD && (mod->phdr[i].p_flags & PF_X) &&
		    mod->phdr[i].p_vaddr <= lo && lo - mod->phdr[i].p_vaddr < mod->phdr[i].p_filesz &&
		    left <= mod->phdr[i].p_filesz - (lo - mod->phdr[i].p_vaddr))
			ph = &mod->phdr[i];
	if (!ph || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	off = ph->p_offset + (lo - ph->p_vaddr);
	if (!fstat(fd, &st) && st.st_dev == k->dev && st.st_ino == k->ino) {
		while (left) {
			size_t n = left < sizeof buf ? left : sizeof buf;

			if (pread(fd, buf, n, (off_t)off) != (ssize_t)n || memcmp(buf, mem, n))
				break;
			left -= n;
			off += n;
			mem += n;
		}
		r = left ? -1 : 0;
	}
	close(fd);
	return r;
}

/* The directories the cache may be in, as the environment names them:
 * SANDPIT_PLAN_CACHE (as given), XDG_CACHE_HOME/sandpit/plans,
 * HOME/.cache/sandpit/plans, those it names, in that order, each with how
 * many of its last components are sandpit's own (made by it, never a
 * symbolic link).  *in_use: the index of the one this run uses, -1 none
 * ("off", or a name too long). */
struct cache_dir {
	char path[PLAN_PATH_MAX];
	unsigned own;
};

static int cache_dirs(struct cache_dir d[3], int *in_use)
{
	const char *env = getenv("SANDPIT_PLAN_CACHE"), *base;
	int n = 0, len;

	*in_use = env && !strcmp(env, "off") ? -1 : 0;
	if (env && *env && strcmp(env, "off")) {
		len = snprintf(d[n].path, sizeof d[n].path, "%s", env);
		/* "dir/" is dir */
		while (len > 1 && d[n].path[len - 1] == '/')
			d[n].path[--len] = 0;
		if (len > 0 && (size_t)len < sizeof d[n].path && strcmp(d[n].path, "/"))
			d[n++].own = 1;
		else
			*in_use = -1;
	}
	if ((base = getenv("XDG_CACHE_HOME")) && base[0] == '/' &&
	    (len = snprintf(d[n].path, sizeof d[n].path, "%s/sandpit/plans", base)) > 0 &&
	    (size_t)len < sizeof d[n].path)
		d[n++].own = 2;
	if ((base = getenv("HOME")) && base[0] == '/' &&
	    (len = snprintf(d[n].path, sizeof d[n].path, "%s/.cache/sandpit/plans", base)) > 0 &&
	    (size_t)len < sizeof d[n].path)
		d[n++].own = 2;
	if (!n)
		*in_use = -1;
	return n;
}

/* The cache directory, opened and checked: the user's part of its path
 * (XDG_CACHE_HOME, HOME/.cache, or all but the last component of
 * SANDPIT_PLAN_CACHE) followed as it is, made 0700 where missing; then
 * sandpit's own components (sandpit, plans) each opened without following
 * a symbolic link, a directory owned by us that no one else may write,
 * the last one with no group or other access at all.  -1 (and *why) if
 * there is none to use; *why is NULL when the cache is simply off or
 * absent. */
/* The directory held open between plan_cache_hold and plan_cache_let_go
 * (one start-up: each plan it reads or writes would open it anew, about
 * ten calls a time), or -1. */
static bool holding;
static int held = -1;

void plan_cache_hold(void)
{
	holding = true;
}

void plan_cache_let_go(void)
{
	holding = false;
	if (held >= 0)
		close(held);
	held = -1;
}

void plan_cache_dir_done(int fd)
{
	if (fd >= 0 && fd != held)
		close(fd);
}

static int open_dir(bool create, const char **why);

int plan_cache_open_dir(bool create, const char **why)
{
	*why = NULL;
	if (held >= 0)
		return held;
	int fd = open_dir(create, why);
	if (holding)
		held = fd;
	return fd;
}

static int open_dir(bool create, const char **why)
{
	struct cache_dir d[3];
	char *dir, *own[2], root[] = "/", dot[] = ".";
	struct stat st;
	int in_use, fd;

	cache_dirs(d, &in_use);
	if (in_use < 0)
		return -1;
	dir = d[in_use].path;
	for (unsigned i = d[in_use].own; i-- > 0;) {
		char *slash = strrchr(dir, '/');

		own[i] = slash ? slash + 1 : dir;
		if (slash)
			*slash = 0;
	}
	if (d[in_use].own == 1 && own[0] == dir)
		dir = dot; /* a name relative to the working directory */
	else if (!*dir)
		dir = root;
	if (create) {
		for (char *s = dir + 1;; s++) {
			if (*s == '/' || !*s) {
				char c = *s;

				*s = 0;
				(void)!mkdir(dir, 0700);
				*s = c;
			}
			if (!*s)
				break;
		}
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (unsigned i = 0; fd >= 0 && i < d[in_use].own; i++) {
		int next = openat(fd, own[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (next < 0 && errno == ENOENT && create && !mkdirat(fd, own[i], 0700))
			next = openat(fd, own[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && (errno == ELOOP || errno == ENOTDIR))
			*why = "the cache directory is a symbolic link or not a directory";
		else if (next >= 0 && (fstat(next, &st) || st.st_uid != geteuid() ||
				       (st.st_mode & (i + 1 < d[in_use].own ? 022 : 077))))
			*why = "the cache directory is not ours alone (owner, or group/other access)";
		close(fd);
		fd = next;
		if (*why) {
			if (fd >= 0)
				close(fd);
			return -1;
		}
	}
	return fd;
}

int plan_cache_dirs(char dirs[][PLAN_PATH_MAX], int max)
{
	struct cache_dir d[3];
	char cwd[PLAN_PATH_MAX];
	const char *why;
	int in_use, n = cache_dirs(d, &in_use), fd;

	/* the one in use made now, so that the directories above it exist
	 * for the program too (it may make no name on the way to a deny) */
	if (in_use >= 0 && (fd = plan_cache_open_dir(true, &why)) >= 0)
		plan_cache_dir_done(fd);
	if (n > max)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		if (d[i].path[0] == '/')
			memcpy(dirs[i], d[i].path, sizeof d[i].path);
		else if (!getcwd(cwd, sizeof cwd))
			return -errno;
		else if ((size_t)snprintf(dirs[i], PLAN_PATH_MAX, "%s/%s", cwd, d[i].path) >=
			 PLAN_PATH_MAX)
			return -ENAMETOOLONG;
	}
	return n;
}

void plan_cache_file_name(const struct plan_key *k, char *name, size_t n)
{
	snprintf(name, n, "%llx-%llx.plan", (unsigned long long)k->dev,
		 (unsigned long long)k->ino);
}

static bool same_key(const struct plan_key *a, const struct plan_key *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns &&
	       a->text_lo == b->text_lo && a->text_hi == b->text_hi &&
	       a->build_id_len == b->build_id_len &&
	       !memcmp(a->build_id, b->build_id, a->build_id_len);
}

void plan_cache_release(void *mem)
{
	free(mem);
}

int plan_cache_get(const struct plan_key *k, const char *path, struct plan_file *f, void **mem)
{
	const char *why;
	char name[64];
	struct stat st;
	uint8_t *buf;
	size_t got = 0;
	int dfd = plan_cache_open_dir(false, &why), fd;

	*mem = NULL;
	if (dfd < 0) {
		if (why)
			plan_cache_note(path, "cache refused", why);
		return why ? -1 : 0;
	}
	plan_cache_file_name(k, name, sizeof name);
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	plan_cache_dir_done(dfd);
	if (fd < 0) {
		if (errno == ELOOP) {
			plan_cache_note(path, "cache refused", "its file is a symbolic link");
			return -1;
		}
		return 0;
	}
	why = fstat(fd, &st) ? "fstat failed"
	      : !S_ISREG(st.st_mode) ? "its file is not a regular file"
	      : st.st_uid != geteuid() || (st.st_mode & 077) ? "its file is not ours alone"
	      : st.st_size > PLAN_MAX_FILE ? "its file is too large"
					    : NULL;
	buf = why ? NULL : malloc((size_t)st.st_size + 1);
	while (buf && got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (!why && (!buf || got != (size_t)st.st_size))
		why = "could not read its file";
	if (!why && !plan_file_parse(buf, got, f, &why) && !same_key(&f->key, k))
		why = "it is for another file, or the file has changed";
	if (why) {
		free(buf);
		plan_cache_note(path, "cache refused", why);
		return -1;
	}
	*mem = buf;
	return 1;
}

void plan_cache_put(const struct plan_key *k, const char *path, const struct plan_rec *r,
		    unsigned n)
{
	static unsigned seq;
	const char *why;
	char name[64], tmp[96];
	size_t nbytes = 0, len;
	uint8_t *buf, *p;
	int dfd, fd;

	struct timespec now;

	if (n > PLAN_MAX_SITES)
		return;
	/* a file changed in the last seconds may change again within the
	 * same timestamp tick, unseen by the key (git's "racy" files): its
	 * plan is not kept */
	if (clock_gettime(CLOCK_REALTIME, &now) ||
	    (uint64_t)now.tv_sec * 1000000000ULL <
		    (k->ctime_ns > k->mtime_ns ? k->ctime_ns : k->mtime_ns) + PLAN_SETTLE_NS) {
		plan_cache_note(path, "cache not written", "the file changed too recently");
		return;
	}
	for (unsigned i = 0; i < n; i++)
		nbytes += (size_t)r[i].before + r[i].after;
	len = plan_file_size(n, nbytes);
	if (len > PLAN_MAX_FILE || !(buf = malloc(len)))
		return;
	p = plan_file_begin(buf, k, n);
	for (unsigned i = 0; i < n; i++)
		p = plan_file_put(p, &r[i]);
	p = plan_file_end(buf, p);
	dfd = plan_cache_open_dir(true, &why);
	if (dfd < 0) {
		if (why)
			plan_cache_note(path, "cache not written", why);
		free(buf);
		return;
	}
	plan_cache_file_name(k, name, sizeof name);
	snprintf(tmp, sizeof tmp, ".%s.%d.%u", name, (int)getpid(), seq++);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		bool ok = write(fd, buf, len) == (ssize_t)len;

		ok = !close(fd) && ok;
		if (!ok || renameat(dfd, tmp, dfd, name)) {
			unlinkat(dfd, tmp, 0);
			plan_cache_note(path, "cache not written", "write or rename failed");
		}
	}
	plan_cache_dir_done(dfd);
	free(buf);
}
