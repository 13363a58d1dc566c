/* The build directory (build/), for tests that run build/sandpit and the
 * programs beside it: found from the test's own path, build/selftests/NAME. */
#ifndef SANDPIT_SELFTEST_BUILD_DIR_H
#define SANDPIT_SELFTEST_BUILD_DIR_H
#include <limits.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static char bindir[PATH_MAX - 64]; /* room left to name a file in it */

static void __attribute__((constructor)) find_build_dir(void)
{
	ssize_t n = readlink("/proc/self/exe", bindir, sizeof bindir - 1);
	if (n < 0)
		return;
	bindir[n] = 0;
	for (int i = 0; i < 2; i++) { /* build/selftests/NAME -> build */
		char *slash = strrchr(bindir, '/');
		if (slash)
			*slash = 0;
	}
}

/* Runs a command (build/sandpit) with stdout to out_fd and stderr to err_fd; exit status. */
static inline int run_cli(const char *cli, const char *const argv[], int out_fd, int err_fd)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		dup2(out_fd, 1);
		dup2(err_fd, 2);
		execv(cli, (char *const *)argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline void read_all(int fd, char *buf, size_t n)
{
	ssize_t r = pread(fd, buf, n - 1, 0);

	buf[r > 0 ? r : 0] = 0;
}

#endif
