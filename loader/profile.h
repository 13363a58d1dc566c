/* `sandpit profile` (loader/profile.c traces, loader/profile_policy.c
 * writes the policy). */
#ifndef SANDPIT_LOADER_PROFILE_H
#define SANDPIT_LOADER_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "policy/profiler_event.h"

/* the profiler cannot run (not root, no BPF, no tracepoint); the others
 * are those of `sandpit run` (loader/run.h) */
#define PROFILE_EXIT_NO_PROFILER 124

extern const char profile_usage[];

/* argv: what follows "profile".  Returns the exit status. */
int profile_main(int argc, char **argv);

/* A path grant the program needs, as it will be written. */
struct profile_grant {
	char *path;
	int write;
};

/* What the profiler saw. */
struct profile_record {
	uint64_t calls[PROF_NR_SLOTS]; /* how often each call was made */
	uint64_t calls_beyond;         /* calls numbered PROF_NR_SLOTS or more */
	uint64_t lost_events, lost_tasks, unreadable_paths, unresolved_paths;
	int looked_at_root; /* a path call on / itself, which is never granted */
	struct profile_grant *grants;
	size_t ngrants, cap_grants;
	char **execs; /* what the program itself tried to exec */
	size_t nexecs;
	char *const *argv; /* PROGRAM [ARGS] */
};

/* Adds the grant a path needs: `abs` is absolute and normalised; `write`:
 * opened for writing; `create`: O_CREAT; `dir`: a directory (O_DIRECTORY,
 * chdir); `failed`: the call failed (the path may not exist). */
int profile_add_access(struct profile_record *r, const char *abs, int write, int create, int dir,
		       int failed);
int profile_add_exec(struct profile_record *r, const char *path);
/* The policy file; 0 or a negative errno. */
int profile_write_policy(struct profile_record *r, FILE *f);
void profile_record_free(struct profile_record *r);

#endif
