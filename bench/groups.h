/* The groups of `sandpit bench`, each in its own file (calls.c: per call,
 * memory, scaling; floor.c; alternatives.c; programs.c: start-up and real
 * programs; peers.c; busy.c), run by bench/suite.c. */
#ifndef SANDPIT_BENCH_GROUPS_H
#define SANDPIT_BENCH_GROUPS_H

#include "bench/bench.h"

/* The groups.  Each returns 0, or -1 with a message on stderr. */
int bench_calls(const struct bench_cfg *c);        /* per call, by path and mode */
int bench_alternatives(const struct bench_cfg *c); /* seccomp alone, TRAP, USER_NOTIF, SUD */
int bench_startup(const struct bench_cfg *c);      /* sandpit run /bin/true, sandpit_start */
int bench_memory(const struct bench_cfg *c);       /* per sandboxed thread */
int bench_programs(const struct bench_cfg *c);     /* real programs under sandpit run */
int bench_peers(const struct bench_cfg *c);        /* bubblewrap, firejail, sandpit, same programs */
int bench_scaling(const struct bench_cfg *c);      /* stat from 1..8 threads at once */
int bench_busy(const struct bench_cfg *c);         /* calls and programs, a busy loop per CPU */
/* bench_busy's parts, from bench/calls.c and bench/programs.c */
int bench_calls_busy(const struct bench_cfg *c);
int bench_programs_busy(const struct bench_cfg *c);
/* one round of the hand-off floor (bench/floor.c), in bench_calls' rounds */
int bench_floor_round(const struct bench_cfg *c);
#endif
