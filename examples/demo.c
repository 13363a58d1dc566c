/* A newcomer's first look at sandpit: the program enters the sandbox, then
 * tries things a program might do and prints what it was allowed and what
 * it was refused.  Run it with `make demo`. */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <sandpit.h>

static void report(const char *what, long r)
{
	if (r >= 0)
		printf("  allowed  %-44s -> %ld\n", what, r);
	else
		printf("  refused  %-44s -> %s\n", what, strerror(errno));
}

int main(void)
{
	if (sandpit_start(NULL) < 0) {
		fprintf(stderr, "demo: %s\n", sandpit_error());
		return 1;
	}
	printf("demo: running under sandpit (%s mode)\n",
	       sandpit_mode() == SANDPIT_MODE_STRICT ? "strict" : "filter");

	report("getppid()", getppid());
	char buf[64];
	int fd = open("/etc/passwd", O_RDONLY);
	report("open(\"/etc/passwd\", O_RDONLY)", fd);
	if (fd >= 0) {
		report("read(/etc/passwd, 64 bytes)", read(fd, buf, sizeof(buf)));
		close(fd);
	}
	struct stat sb;
	report("stat(\"/usr/bin\")", stat("/usr/bin", &sb));
	char *p = malloc(1 << 20);
	report("malloc(1 MiB)", p ? 0 : -1);
	free(p);
	struct timespec ts;
	report("clock_gettime(CLOCK_REALTIME)", clock_gettime(CLOCK_REALTIME, &ts));
	report("time()", (long)time(NULL));

	report("open(\"/tmp/demo-file\", O_CREAT|O_WRONLY)",
	       open("/tmp/demo-file", O_CREAT | O_WRONLY, 0644));
	report("open(\"/home\", O_RDONLY)", open("/home", O_RDONLY));
	report("socket(AF_INET, SOCK_STREAM)", socket(AF_INET, SOCK_STREAM, 0));
	char *argv[] = { "/bin/true", NULL };
	report("execve(\"/bin/true\")", execve("/bin/true", argv, NULL));
	report("kill(1, 0)", kill(1, 0));
	report("raw syscall(SYS_ptrace, PTRACE_TRACEME)", syscall(SYS_ptrace, 0, 0, 0, 0));
	printf("demo: done; every refusal above was made by the sandbox\n");
	return 0;
}
