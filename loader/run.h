/* `sandpit run` (loader/run.c). */
#ifndef SANDPIT_LOADER_RUN_H
#define SANDPIT_LOADER_RUN_H

#include <stddef.h>

/* sandpit's own failures, apart from the program's statuses */
enum {
	RUN_EXIT_SANDPIT = 125,  /* bad option, policy, mode not available, start-up */
	RUN_EXIT_CANNOT = 126,   /* PROGRAM cannot be run */
	RUN_EXIT_NOTFOUND = 127, /* PROGRAM not found */
};

extern const char run_usage[];

/* PROGRAM as execvp would find it, into out: 0, -ENOENT (nowhere),
 * -EACCES (found but not executable) or -ENAMETOOLONG. */
int run_find_program(const char *name, char *out, size_t outlen);

/* One line "sandpit: MESSAGE" on stderr; returns status. */
int run_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* argv: what follows "run".  Returns the exit status (or never returns in
 * the child that becomes the program). */
int run_main(int argc, char **argv);
/* --policy-format=minijail|sandpit: sets the format policy files are read
 * in (policy_set_file_format) and returns 1, *bad set if the value is
 * neither; 0 if arg is another option. */
int policy_format_option(const char *arg, int *bad);
#endif
