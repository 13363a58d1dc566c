/* Threads and signals inside the sandbox, as a checklist (built and run
 * by selftests/library_test.c the way a user would):
 *     gcc threads_checklist.c -Iinclude -Lbuild -lsandpit -lpthread
 *     SANDPIT_MODE=strict ./a.out
 * Prints one line per check, exits with the number that came out wrong. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sandpit.h>
#include "checklist.h"


static void *reader(void *arg)
{
	(void)arg;
	long bytes = 0;
	char buf[512];
	for (int i = 0; i < 50; i++) {
		int fd = open("/etc/passwd", O_RDONLY);
		if (fd < 0)
			return NULL;
		ssize_t n;
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			bytes += n;
		close(fd);
	}
	return (void *)bytes;
}

static volatile sig_atomic_t usr1;
static void on_usr1(int sig) { (void)sig; usr1++; }

static sigjmp_buf env;
static void on_segv(int sig) { (void)sig; siglongjmp(env, 1); }

static void *pauser(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(void)
{
	if (sandpit_start(NULL) < 0) {
		fprintf(stderr, "threads_checklist: %s\n", sandpit_error());
		return 100;
	}
	check("sandpit_mode() is the mode asked for", sandpit_mode() == mode_asked());

	pthread_t t[8];
	int created = 0, same = 1;
	void *first = NULL;
	for (int i = 0; i < 8; i++)
		created += pthread_create(&t[i], NULL, reader, NULL) == 0;
	for (int i = 0; i < created; i++) {
		void *r;
		pthread_join(t[i], &r);
		if (i == 0)
			first = r;
		same &= r == first && r != NULL;
	}
	check("8 threads read /etc/passwd and are joined", created == 8 && same);

	struct sigaction sa = { .sa_handler = on_usr1 };
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	check("SIGUSR1 handler runs on raise()", usr1 == 1);

	struct sigaction sb = { .sa_handler = on_segv };
	sigaction(SIGSEGV, &sb, NULL);
	volatile int *volatile bad = (int *)8;
	int recovered = 0;
	if (sigsetjmp(env, 1) == 0)
		*bad = 1;
	else
		recovered = 1;
	check("own SIGSEGV handler recovers with siglongjmp", recovered);

	pthread_t p;
	void *r = NULL;
	int ok = pthread_create(&p, NULL, pauser, NULL) == 0;
	usleep(20000);
	ok = ok && pthread_cancel(p) == 0 && pthread_join(p, &r) == 0;
	check("a thread blocked in pause() is cancelled and joined", ok && r == PTHREAD_CANCELED);

	check("refused in a thread too: create /tmp/x",
	      open("/tmp/sandpit-threads-checklist", O_CREAT | O_WRONLY, 0600) == -1 && errno == EACCES);
	printf("%d wrong\n", wrong);
	return wrong;
}
