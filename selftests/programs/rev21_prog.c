/* rev21_prog: under `sandpit run`, leaves a thread in a call B waits on
 * (the open of a FIFO with no reader: B's server waits on it) and then
 * ends the program: "exit" by exit_group with status 3, "kill" by its own
 * SIGKILL, "leader" by the main thread's pthread_exit while the waiting
 * thread stays (until the FIFO's reader, which never comes: the test
 * kills nothing, sandpit must end by itself only for exit and kill). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *fifo;

static void *opener(void *arg)
{
	(void)arg;
	int fd = open(fifo, O_WRONLY); /* no reader: waits */
	printf("opened %d\n", fd);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	fifo = argv[2];
	pthread_t th;
	if (pthread_create(&th, NULL, opener, NULL))
		return 4;
	usleep(200000); /* the thread is in B's wait */
	printf("waiting\n");
	fflush(stdout);
	if (!strcmp(argv[1], "kill"))
		kill(getpid(), SIGKILL);
	_exit(3);
}
