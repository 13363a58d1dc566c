/* The patch-plan cache's directory and files (see plan_cache.h).  Runs
 * outside any sandbox, with libc. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "user/patch_sys.h"
#include "user/plan_cache.h"

#define MAPS_MAX (4u << 20)

static char *maps_text;  /* /proc/self/maps, read once a pass */
static size_t maps_len;

void plan_cache_note(const char *path, const char *what, const char *why)
{
	char line[PLAN_PATH_MAX + 256];
	int n;

	if (patch_debug <= 0)
		return;
	n = snprintf(line, sizeof line, "sandpit: plan cache: %s: %s%s%s\n", path, what,
		     why ? ": " : "", why ? why : "");
	if (n > 0)
		p_sys(SYS_write, 2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1, 0, 0,
		      0);
}

void plan_cache_pass(void)
{
	free(maps_text);
	maps_text = NULL;
	maps_len = 0;
}

static int read_maps(void)
{
	int fd;
	size_t cap = 65536;
	long r = 0;

	if (maps_text)
		return 0;
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	maps_text = malloc(cap + 1);
	while (maps_text) {
		r = read(fd, maps_text + maps_len, cap - maps_len);
		if (r <= 0)
			break;
		maps_len += (size_t)r;
		if (maps_len == cap) {
			char *q = cap < MAPS_MAX ? realloc(maps_text, 2 * cap + 1) : NULL;

			if (!q) {
				r = -1;
				break;
			}
			maps_text = q;
			cap *= 2;
		}
	}
	close(fd);
	if (!maps_text || r < 0) {
		plan_cache_pass();
		return -1;
	}
	maps_text[maps_len] = 0;
	return 0;
}

/* The path of the mapping that starts at lo, from the maps' text. */
static int maps_path(uintptr_t lo, char *path, size_t pathlen)
{
	char want[24];
	int n = snprintf(want, sizeof want, "%lx-", (unsigned long)lo);

	for (char *l = maps_text; l && *l;) {
		char *nl = strchr(l, '\n'), *s;

		if (nl)
			*nl = 0;
		if (!strncmp(l, want, (size_t)n) && (s = strchr(l, '/'))) {
			size_t len = strlen(s);
			bool bad = len >= pathlen || (len > 10 && !strcmp(s + len - 10, " (deleted)"));

			if (nl)
				*nl = '\n';
			if (bad)
				return -1;
			memcpy(path, s, len);
			path[len] = 0;
			return 0;
		}
		if (nl)
			*nl = '\n';
		l = nl ? nl + 1 : NULL;
	}
	return -1;
}

/* The GNU build-id note of the object, read through its view. */
static void build_id(const struct module *mod, const struct maps *m, struct plan_key *k)
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
	const struct vma *x = NULL;
	struct stat st;

	memset(k, 0, sizeof *k);
	for (unsigned i = 0; i < m->n && !x; i++)
		if (m->v[i].lo <= mod->lo && mod->lo < m->v[i].hi)
			x = &m->v[i];
	if (!x || !x->ino || !mod->phdr || read_maps() || maps_path(x->lo, path, pathlen) ||
	    stat(path, &st) || !S_ISREG(st.st_mode) || st.st_ino != x->ino ||
	    major(st.st_dev) != x->dev_major || minor(st.st_dev) != x->dev_minor)
		return -1;
	k->dev = st.st_dev;
	k->ino = st.st_ino;
	k->size = (uint64_t)st.st_size;
	k->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL + (uint64_t)st.st_mtim.tv_nsec;
	k->ctime_ns = (uint64_t)st.st_ctim.tv_sec * 1000000000ULL + (uint64_t)st.st_ctim.tv_nsec;
	k->text_lo = mod->lo - mod->bias;
	k->text_hi = mod->hi - mod->bias;
	build_id(mod, m, k);
	return 0;
}

/* The cache directory, opened and checked: 0700 (no group or other
 * access), a directory owned by us.  -1 (and *why) if there is none to
 * use; *why is NULL when the cache is simply off or absent. */
static int open_dir(bool create, const char **why)
{
	const char *env = getenv("SANDPIT_PLAN_CACHE"), *base;
	char dir[PLAN_PATH_MAX];
	struct stat st;
	int fd, n;

	*why = NULL;
	if (env && !strcmp(env, "off"))
		return -1;
	if (env && *env)
		n = snprintf(dir, sizeof dir, "%s", env);
	else if ((base = getenv("XDG_CACHE_HOME")) && base[0] == '/')
		n = snprintf(dir, sizeof dir, "%s/sandpit/plans", base);
	else if ((base = getenv("HOME")) && base[0] == '/')
		n = snprintf(dir, sizeof dir, "%s/.cache/sandpit/plans", base);
	else
		return -1;
	if (n <= 0 || (size_t)n >= sizeof dir)
		return -1;
	if (create)
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
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		*why = "the cache directory is not ours alone (owner, or group/other access)";
		close(fd);
		return -1;
	}
	return fd;
}

static void file_name(const struct plan_key *k, char *name, size_t n)
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
	int dfd = open_dir(false, &why), fd;

	*mem = NULL;
	if (dfd < 0) {
		if (why)
			plan_cache_note(path, "cache refused", why);
		return why ? -1 : 0;
	}
	file_name(k, name, sizeof name);
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(dfd);
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

	if (n > PLAN_MAX_SITES)
		return;
	for (unsigned i = 0; i < n; i++)
		nbytes += (size_t)r[i].before + r[i].after;
	len = plan_file_size(n, nbytes);
	if (len > PLAN_MAX_FILE || !(buf = malloc(len)))
		return;
	p = plan_file_begin(buf, k, n);
	for (unsigned i = 0; i < n; i++)
		p = plan_file_put(p, &r[i]);
	p = plan_file_end(buf, p);
	dfd = open_dir(true, &why);
	if (dfd < 0) {
		if (why)
			plan_cache_note(path, "cache not written", why);
		free(buf);
		return;
	}
	file_name(k, name, sizeof name);
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
	close(dfd);
	free(buf);
}
