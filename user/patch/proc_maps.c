/* /proc/self/maps (see proc_maps.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "user/patch/patch_sys.h"
#include "user/patch/proc_maps.h"

/* A read of the maps: libc's at start-up; inside the sandbox the caller's
 * (patch_ops.maps), a pread at `len` on the descriptor sandpit opened
 * before the sandbox, which no policy needs to allow and the program
 * cannot move (its file position is not used). */
static long maps_chunk(int fd, char *buf, size_t n, size_t len)
{
	if (patch_sys_ops->maps)
		return patch_sys_ops->maps(buf, n, (long)len);
	return p_sys(SYS_read, fd, buf, n, 0, 0, 0);
}

static char *slurp(const char *path, int *err)
{
	size_t len = 0, cap = 16384;
	char *buf = p_alloc(cap);
	int fd = patch_sys_ops->maps ? -1 :
				       (int)p_sys(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC,
						  0, 0, 0);
	long r;

	*err = fd < 0 && !patch_sys_ops->maps ? fd : -ENOMEM;
	if (!buf || (fd < 0 && !patch_sys_ops->maps))
		goto fail;
	while ((r = maps_chunk(fd, buf + len, cap - len - 1, len)) != 0) {
		char *nb;

		if (r < 0) {
			if (r == -EINTR)
				continue;
			*err = (int)r;
			goto fail;
		}
		len += r;
		if (cap - len > 1)
			continue;
		nb = p_realloc(buf, cap *= 2);
		*err = -ENOMEM;
		if (!nb)
			goto fail;
		buf = nb;
	}
	buf[len] = 0;
	if (fd >= 0)
		p_sys(SYS_close, fd, 0, 0, 0, 0, 0);
	return buf;
fail:
	if (fd >= 0)
		p_sys(SYS_close, fd, 0, 0, 0, 0, 0);
	p_free(buf);
	return NULL;
}

/* strtoul needs libc's locale through %fs, which inside the sandbox is the
 * program's: numbers are read here */
static unsigned long num(char **pp, unsigned base)
{
	unsigned long v = 0;
	char *p = *pp;

	for (;; p++) {
		unsigned d = *p >= '0' && *p <= '9' ? (unsigned)(*p - '0') :
			     *p >= 'a' && *p <= 'f' ? (unsigned)(*p - 'a' + 10) : 99;
		if (d >= base)
			break;
		v = v * base + d;
	}
	*pp = p;
	return v;
}

/* lo-hi perms offset major:minor inode [path] */
static void parse_vma(char *line, struct vma *v)
{
	char *p = line;

	v->lo = num(&p, 16);
	p++;
	v->hi = num(&p, 16);
	p++;
	v->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		  (p[2] == 'x' ? PROT_EXEC : 0);
	p += strcspn(p, " ");
	p += strspn(p, " ");
	v->off = num(&p, 16);
	p += strspn(p, " ");
	v->dev_major = (unsigned)num(&p, 16);
	p += *p == ':';
	v->dev_minor = (unsigned)num(&p, 16);
	p += strspn(p, " ");
	v->ino = num(&p, 10);
	p += strspn(p, " ");
	v->kind = !strcmp(p, "[stack]") ? VMA_STACK : !strcmp(p, "[vdso]") ? VMA_VDSO :
		  !strcmp(p, "[heap]") ? VMA_HEAP : 0;
}

int maps_read(struct maps *m)
{
	int err;
	char *buf = slurp("/proc/self/maps", &err), *line, *nl;

	m->n = 0;
	p_free(m->text);
	m->text = buf;
	if (!buf)
		return err;
	for (line = buf; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		*nl = 0;
		if (p_grow(&m->v, &m->cap, m->n, sizeof *m->v))
			return -ENOMEM;
		parse_vma(line, &m->v[m->n]);
		m->v[m->n++].path = strchr(line, '/');
	}
	return 0;
}

void maps_free(struct maps *m)
{
	p_free(m->v);
	p_free(m->text);
	*m = (struct maps){ 0 };
}

bool maps_readable(const struct maps *m, uintptr_t lo, uintptr_t hi)
{
	for (unsigned i = 0; i < m->n && lo < hi; i++)
		if (m->v[i].lo <= lo && lo < m->v[i].hi && (m->v[i].prot & PROT_READ))
			lo = m->v[i].hi;
	return lo >= hi;
}
