/* Opens for writing inside write grants, made by B on the file it decides
 * on (user/trusted/write_open.h).
 *
 * Checking a name and letting T open the name again leaves the time in
 * between to a RENAME_EXCHANGE: a set-id file swapped over the checked
 * name would be opened for writing.  So B opens the name itself, without
 * links (O_PATH, RESOLVE_NO_SYMLINKS), looks at what it got (fstat),
 * refuses a set-id file, opens that same file again through
 * /proc/self/fd with the program's flags, and sends the result to T over
 * a socket pair whose P end lies in sandpit's descriptor block.  B runs
 * with P's credentials and no capabilities (caps.c drops them all before
 * B is forked), so B can open nothing P could not. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "user/layout/secure_mem.h"
#include "user/trusted/b_state.h"
#include "user/trusted/b_wait.h"
#include "user/trusted/path_op.h"
#include "user/trusted/write_open.h"

/* a name made and taken again by others between B's tries: a bounded
 * number of rounds, then the open is refused */
#define CREATE_TRIES 8

static const char setid_why[] = "a set-id file is never opened for writing";

static int open2(const char *path, long flags, long mode)
{
	struct open_how how = { .flags = (uint64_t)(uint32_t)flags,
				.mode = (flags & O_CREAT) ? (uint64_t)mode : 0,
				.resolve = RESOLVE_NO_SYMLINKS };
	long r = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	return r < 0 ? -errno : (int)r;
}

/* O_NONBLOCK for B's own open (a FIFO without a reader, a terminal that
 * waits for carrier), taken off afterwards unless the program asked it */
static int settle(int fd, long flags)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	/* the bits may have come since the look at the name: decided again on
	 * the file the program gets */
	if (S_ISREG(st.st_mode) && B_SETID(st.st_mode)) {
		close(fd);
		return -EACCES;
	}
	if (!(flags & O_NONBLOCK)) {
		int fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
			int r = -errno;
			close(fd);
			return r;
		}
	}
	return fd;
}

/* A FIFO's open without O_NONBLOCK waits for the other end: made here, in
 * slot s's server thread (only that slot's calls wait with it, as only
 * the calling thread would), on the file B pinned, and ended when U asks
 * to be interrupted, as the kernel ends it for a signal.  flags without
 * O_NONBLOCK. */
static int open_waiting(int s, const char *self, int flags)
{
	long r;
	b_wait_begin(s);
	for (;;) {
		if (b_wait_interrupted(s)) {
			r = -SP_ERESTARTSYS; /* the kernel's answer for it */
			break;
		}
		r = b_wait_call4(s, SYS_openat, AT_FDCWD, (long)self, flags);
		if (r != -EINTR)
			break;
	}
	b_wait_end(s);
	return (int)r;
}

/* the program's flags for B's opens: the file is B's to hand over, so
 * close-on-exec here (T's MSG_CMSG_CLOEXEC gives the program's); never a
 * controlling terminal for B */
#define B_OPEN_EXTRA (O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

static int open_existing(int s, const char *path, long flags, const char **why)
{
	int o = (int)path_open_no_links(path, O_NOFOLLOW);
	if (o < 0)
		return o;
	struct stat st;
	if (fstat(o, &st) < 0) {
		int r = -errno;
		close(o);
		return r;
	}
	if (S_ISREG(st.st_mode) && B_SETID(st.st_mode)) {
		close(o);
		*why = setid_why;
		return -EACCES;
	}
	if (S_ISLNK(st.st_mode)) { /* the program's O_NOFOLLOW, or a link swapped in */
		close(o);
		return -ELOOP;
	}
	char self[32];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", o);
	long f = (flags & ~(long)(O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC)) | B_OPEN_EXTRA;
	int r;
	if (S_ISFIFO(st.st_mode) && !(flags & O_NONBLOCK) && (flags & O_ACCMODE) != O_RDWR)
		r = open_waiting(s, self, (int)(f & ~(long)O_NONBLOCK));
	else if ((r = open(self, (int)f)) < 0)
		r = -errno;
	close(o);
	if (r < 0)
		return r;
	r = settle(r, flags);
	if (r == -EACCES)
		*why = setid_why;
	return r;
}

int b_write_open(int s, const char *path, long flags, long mode, const char **why)
{
	*why = NULL;
	if (!(flags & O_CREAT))
		return open_existing(s, path, flags, why);
	/* a file made here carries no set-id bit (chmod may not give one,
	 * path_op.c) and has the program's umask */
	mode_t m = (mode_t)mode & (ACCESSPERMS | S_ISVTX) & ~path_p_umask(s);
	long f = (flags & ~(long)(O_CLOEXEC | O_TRUNC)) | O_CREAT | O_EXCL | O_NOFOLLOW | B_OPEN_EXTRA;
	for (int i = 0; i < CREATE_TRIES; i++) {
		int fd = open2(path, f, m);
		if (fd >= 0) {
			int r = settle(fd, flags);
			if (r == -EACCES)
				*why = setid_why;
			return r;
		}
		if (fd != -EEXIST || (flags & O_EXCL))
			return fd;
		fd = open_existing(s, path, flags, why);
		if (fd != -ENOENT)
			return fd;
	}
	return -EAGAIN;
}

/* one descriptor in flight at a time: every T receives on the same
 * socket, so the next is sent only once the last was taken */
static pthread_mutex_t pass_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t pass_tag;

long b_hand_over(int s, struct secure_page *sp, int fd, long flags)
{
	pthread_mutex_lock(&pass_lock);
	uint64_t tag = ++pass_tag;
	char cbuf[CMSG_SPACE(sizeof(int))];
	memset(cbuf, 0, sizeof(cbuf));
	struct iovec iov = { &tag, sizeof(tag) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	ssize_t n = sendmsg(b_proc_of_slot(s)->pass_fd, &msg, MSG_NOSIGNAL);
	int e = errno;
	close(fd);
	if (n != (ssize_t)sizeof(tag)) {
		pthread_mutex_unlock(&pass_lock);
		return n < 0 ? -e : -EIO;
	}
	sp->nr = 0;
	memset(sp->args, 0, sizeof(sp->args));
	sp->args[0] = (flags & O_CLOEXEC) ? MSG_CMSG_CLOEXEC : 0;
	sp->args[1] = tag;
	return SP_V_RECV; /* pass_lock held until b_hand_over_done */
}

/* after the verdict is published: T's byte says the descriptor was taken
 * (or P is gone: the socket hangs up) */
void b_hand_over_done(int s)
{
	struct pollfd p = { .fd = b_proc_of_slot(s)->pass_fd, .events = POLLIN };
	char b;
	for (;;) {
		int r = poll(&p, 1, -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || (p.revents & (POLLHUP | POLLERR)) ||
		    recv(p.fd, &b, 1, MSG_DONTWAIT) <= 0)
			break;
		if (p.revents & POLLIN)
			break;
	}
	pthread_mutex_unlock(&pass_lock);
}
