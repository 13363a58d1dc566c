/* The trusted process B's servers (user/trusted/b_serve.c): a slot's
 * requests checked and answered, its exit accepted.  Only B includes it. */
#ifndef SANDPIT_B_SERVE_H
#define SANDPIT_B_SERVE_H
#include <stdint.h>

/* B's CPUs and its threads' attributes, as B starts */
void b_serve_init(void);
/* Slot s's server (and watchers) started, once, when the slot is first
 * used: 0, or -EAGAIN */
int b_serve_start(intptr_t s);
/* another of B's threads, with the same attributes: pthread_create's result */
int b_thread(void *(*fn)(void *), void *arg);
#endif
