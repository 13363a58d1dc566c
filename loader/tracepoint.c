/* Tracepoints for the command's BPF programs (see tracepoint.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "loader/tracepoint.h"

#define TP_MAX 8

/* The offset of field `name` in a tracepoint's format file. */
static int field_offset(const char *format, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = strstr(format, "field:"); l; l = strstr(l + 1, "field:")) {
		const char *semi = strchr(l, ';'), *o = semi ? strstr(semi, "offset:") : NULL;
		if (!o)
			break;
		const char *end = semi;
		const char *br = memchr(l, '[', semi - l);
		if (br)
			end = br;
		if (end - l >= (long)n + 1 && !strncmp(end - n, name, n) &&
		    (end[-(long)n - 1] == ' ' || end[-(long)n - 1] == '*'))
			return atoi(o + 7);
	}
	return -1;
}

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	int e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = 0;
	return 0;
}

static int read_tracepoints(const char *events, struct tracepoint *tp, int ntp)
{
	char path[PATH_MAX], buf[8192];

	for (int i = 0; i < ntp; i++) {
		snprintf(path, sizeof(path), "%s/%s/%s/id", events, tp[i].cat, tp[i].name);
		int rc = read_small(path, buf, sizeof(buf));
		if (rc < 0)
			return rc;
		tp[i].id = atoi(buf);
		snprintf(path, sizeof(path), "%s/%s/%s/format", events, tp[i].cat, tp[i].name);
		rc = read_small(path, buf, sizeof(buf));
		if (rc < 0)
			return rc;
		for (int f = 0; f < 2; f++)
			tp[i].off[f] = tp[i].field[f] ? field_offset(buf, tp[i].field[f]) : -1;
	}
	return 0;
}

int tracepoints_find(struct tracepoint *tp, int ntp, char *err, size_t errlen)
{
	static const char *const dirs[] = { "/sys/kernel/tracing/events",
					    "/sys/kernel/debug/tracing/events" };
	struct found {
		int rc;
		int id[TP_MAX], off[TP_MAX][2];
	} m = { 0 };
	int rc = -ENOENT, p[2];

	if (ntp > TP_MAX)
		return -EINVAL;
	for (size_t i = 0; i < 2 && rc < 0; i++)
		rc = read_tracepoints(dirs[i], tp, ntp);
	if (rc == 0)
		return 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid_t c = fork();
	if (c < 0)
		return -errno;
	if (c == 0) {
		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("tracefs", "/sys/kernel/tracing", "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  NULL) < 0)
			m.rc = -errno;
		else
			m.rc = read_tracepoints(dirs[0], tp, ntp);
		for (int i = 0; i < ntp; i++) {
			m.id[i] = tp[i].id;
			m.off[i][0] = tp[i].off[0];
			m.off[i][1] = tp[i].off[1];
		}
		_exit(write(p[1], &m, sizeof(m)) == sizeof(m) ? 0 : 1);
	}
	close(p[1]);
	ssize_t n = read(p[0], &m, sizeof(m));
	close(p[0]);
	waitpid(c, NULL, 0);
	if (n != sizeof(m)) {
		snprintf(err, errlen, "cannot read the tracepoints from tracefs");
		return -EIO;
	}
	if (m.rc < 0) {
		snprintf(err, errlen, "tracefs is not mounted and cannot be mounted: %s",
			 strerror(-m.rc));
		return m.rc;
	}
	for (int i = 0; i < ntp; i++) {
		tp[i].id = m.id[i];
		tp[i].off[0] = m.off[i][0];
		tp[i].off[1] = m.off[i][1];
	}
	return 0;
}

static char libbpf_last[512];

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	const char *debug = getenv("SANDPIT_DEBUG");
	if (debug && !strcmp(debug, "libbpf"))
		return vfprintf(stderr, fmt, ap);
	if (level == LIBBPF_WARN) {
		vsnprintf(libbpf_last, sizeof(libbpf_last), fmt, ap);
		libbpf_last[strcspn(libbpf_last, "\n")] = 0;
	}
	return 0;
}

void tracepoint_libbpf_quiet(void)
{
	libbpf_set_print(libbpf_print);
}

const char *tracepoint_libbpf_last(void)
{
	return libbpf_last;
}

int tracepoint_attach(struct bpf_program *prog, const struct tracepoint *tp,
		      struct bpf_link **link, char *err, size_t errlen)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = (unsigned)tp->id,
		.sample_period = 1,
		.wakeup_events = 1,
	};
	int pfd = syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);

	if (pfd < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot open tracepoint %s:%s: %s", tp->cat, tp->name,
			 strerror(e));
		return -e;
	}
	*link = bpf_program__attach_perf_event(prog, pfd);
	if (!*link) {
		int e = errno;
		close(pfd);
		snprintf(err, errlen, "cannot attach to tracepoint %s:%s: %s", tp->cat, tp->name,
			 strerror(e));
		return -e;
	}
	return 0;
}
