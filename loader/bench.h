/* `sandpit bench` (loader/bench.c, measurements in bench/). */
#ifndef SANDPIT_LOADER_BENCH_H
#define SANDPIT_LOADER_BENCH_H

extern const char bench_usage[];

/* argv: what follows "bench".  Returns the exit status. */
int bench_main(int argc, char **argv);
#endif
