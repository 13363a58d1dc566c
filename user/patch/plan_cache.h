/* The patch-plan cache (internal to the patcher): what the planner decided
 * for an object depends only on the file's bytes, so it is kept between
 * processes, one file a mapped file, in $SANDPIT_PLAN_CACHE ("off": none),
 * else $XDG_CACHE_HOME/sandpit/plans, else $HOME/.cache/sandpit/plans.
 *
 * Only code outside any sandbox reads the directory or writes it
 * (sandpit_start before seccomp, the `sandpit run` loader and parent): a
 * plan's content never comes from a sandboxed process's memory.  Inside
 * the sandbox the run-time patcher consults only the plans the loader read
 * before sandpit_start (plan_cache_run_child, plan_run.h), and names the files it had to
 * plan itself for the `sandpit run` parent, which plans them from the
 * files (plan_cache_run_parent).  Every plan is verified against the mapped bytes
 * before use (patch_plan.c), and used whole or not at all.  The sandboxed
 * program can neither read nor change the directory, whatever its grants
 * (plan_cache_dirs: start-up denies every place the cache may be in). */
#ifndef SANDPIT_USER_PLAN_CACHE_H
#define SANDPIT_USER_PLAN_CACHE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "user/patch/patch_objects.h"
#include "user/patch/plan_file.h"
#include "user/patch/proc_maps.h"

#define PLAN_PATH_MAX 512

/* The key of mod's file (outside the sandbox only: it stats the file
 * /proc/self/maps names for it) and that path.  0, or -1 when the object
 * is no regular file we can name (anonymous, deleted, replaced). */
int plan_cache_key(const struct module *mod, const struct maps *m, struct plan_key *k,
		   char *path, size_t pathlen);

/* Is mod's mapped code exactly its file's (nothing patched or changed)?
 * 0 if so, after reading it from path (the file of key k) and comparing;
 * a plan is written only from such code. */
int plan_cache_pristine(const struct module *mod, const struct plan_key *k, const char *path);

/* A plan for k: 1 with *f parsed from memory the caller frees with
 * plan_cache_release(*mem), 0 if none; -1 if one was refused (said under
 * SANDPIT_DEBUG, with why). */
int plan_cache_get(const struct plan_key *k, const char *path, struct plan_file *f,
		   void **mem);
void plan_cache_release(void *mem);

/* Writes n records for k (outside the sandbox only), atomically; errors are
 * only said under SANDPIT_DEBUG. */
void plan_cache_put(const struct plan_key *k, const char *path, const struct plan_rec *r,
		    unsigned n);

/* Every directory the plan cache may be in, as this environment names
 * them (the one this run uses, and those a later run would use were
 * SANDPIT_PLAN_CACHE or XDG_CACHE_HOME not set): at most PLAN_CACHE_DIRS
 * absolute names, unresolved, into dirs; their number, or -errno.  The
 * one in use is made (0700) when missing, and the directories above it. */
#define PLAN_CACHE_DIRS 3
int plan_cache_dirs(char dirs[][PLAN_PATH_MAX], int max);

/* Under SANDPIT_DEBUG: "sandpit: plan cache: PATH: WHAT". */
void plan_cache_note(const char *path, const char *what, const char *why);

/* For plan_run.c: the GNU build-id note of mod into k (read through its
 * view); the name of k's file in the directory ("DEV-INO.plan"); and the
 * directory itself, opened (made 0700 where missing if create): its
 * descriptor, or -1 with *why when it is refused (NULL: off or absent),
 * given back with plan_cache_dir_done. */
void plan_cache_build_id(const struct module *mod, const struct maps *m, struct plan_key *k);
void plan_cache_file_name(const struct plan_key *k, char *name, size_t n);
int plan_cache_open_dir(bool create, const char **why);
void plan_cache_dir_done(int fd);

/* From plan_cache_hold to plan_cache_let_go the directory, once opened,
 * stays open (one start-up, whose every plan would open it anew).
 * sandpit_start lets it go before the program can run: the descriptor is
 * never the program's. */
void plan_cache_hold(void);
void plan_cache_let_go(void);
#endif
