/* rev17_test's program under `sandpit run`: makes threads without end
 * (each new one in a new slot while the older ones stay parked), writing a
 * line to stdout for each, and ends as argv[1] says: "exit" exit_group(7)
 * from a thread while the main thread makes threads; "mainexit" the main
 * thread pthread_exits while a thread makes 60 more, then the last ends;
 * "spin" does not end by itself (the test kills it); whatever the mode,
 * SIGALRM ends it after 150 s, so that a test that died first (its
 * timeout) leaves no program of 2,000 threads behind. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *parked(void *a)
{
	for (;;)
		pause();
	return a;
}

static pthread_attr_t at;

static void make(int n)
{
	for (int i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, &at, parked, NULL))
			printf("create failed %d\n", i);
		else
			printf("made %d\n", i);
		fflush(stdout);
	}
}

static void *exiter(void *a)
{
	usleep(20000);
	exit(7);
	return a;
}

static void *maker(void *a)
{
	(void)a;
	make(60);
	printf("maker done\n");
	fflush(stdout);
	_exit(0); /* a thread's exit alone would leave the parked ones: end all */
	return NULL;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "spin";
	alarm(150);
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	printf("start\n");
	fflush(stdout);
	pthread_t t;
	if (!strcmp(m, "exit")) {
		pthread_create(&t, &at, exiter, NULL);
		make(1000);
	} else if (!strcmp(m, "mainexit")) {
		pthread_create(&t, &at, maker, NULL);
		pthread_exit(NULL);
	} else {
		make(1000);
		for (;;)
			pause();
	}
	return 3;
}
