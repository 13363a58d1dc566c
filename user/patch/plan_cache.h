/* The patch-plan cache (internal to the patcher): what the planner decided
 * for an object depends only on the file's bytes, so it is kept between
 * processes, one file a mapped file, in $SANDPIT_PLAN_CACHE ("off": none),
 * else $XDG_CACHE_HOME/sandpit/plans, else $HOME/.cache/sandpit/plans.
 *
 * Only code outside any sandbox reads the directory or writes it
 * (sandpit_start before seccomp, the `sandpit run` loader and parent): a
 * plan's content never comes from a sandboxed process's memory.  Inside
 * the sandbox the run-time patcher consults only the plans the loader read
 * before sandpit_start (plan_cache_preload), and names the files it had to
 * plan itself for the `sandpit run` parent, which plans them from the
 * files (plan_cache_fill).  Every plan is verified against the mapped bytes
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

/* ---- `sandpit run` ---- */

#define PLAN_MAX_HINTS 15
#define PLAN_HINT_LEN 256
#define PLAN_MAX_PRELOAD (8u << 20)
#define PLAN_MAX_OBJECT (256ULL << 20)

/* What the run-time patcher names for the parent: files it had to plan
 * itself (a shared page the sandboxed program can write: untrusted). */
struct plan_hints {
	uint32_t n;
	uint32_t planned; /* bit i: path[i] was planned in the sandbox, not taken from the cache */
	char path[PLAN_MAX_HINTS][PLAN_HINT_LEN];
};

/* In the `sandpit run` child, before sandpit_start (outside the sandbox):
 * read the plans of the libraries the program open on prog_fd needed last
 * time into memory the run-time patcher consults, and name hint_page (a
 * struct plan_hints) as where it names the files it plans itself. */
void plan_cache_run_child(int prog_fd, void *hint_page);

/* In the `sandpit run` parent, after the child has ended: the files the
 * child named (regular files, at most PLAN_MAX_HINTS, each below
 * PLAN_MAX_OBJECT bytes) are remembered as what the program prog needs;
 * those the child planned itself, or without a plan in the cache, are
 * planned from the files themselves by plan_file_at (0: planned or
 * already cached). */
void plan_cache_run_parent(const char *prog, const void *hint_page,
			   int (*plan_file_at)(const char *path));

/* Inside the sandbox: the key of mod's file from the maps (device, inode,
 * code range, build-id; the rest was checked by the loader) and the name
 * the maps give it (in m's text; NULL: none); -1 if there is no file, or
 * no plan or hint page. */
int plan_cache_inside_key(const struct module *mod, const struct maps *m, struct plan_key *k,
			  const char **path);
/* A preloaded plan for k, copied into the patcher's memory (*mem, p_free)
 * and parsed: 1, or 0. */
int plan_cache_preloaded(const struct plan_key *k, struct plan_file *f, void **mem);
/* Name the file path (the maps' name of an object) in the hint page:
 * every object the run-time patcher meets, so that the next run's list has
 * them all; planned says it was planned here (no usable plan was
 * preloaded).  A name too long for the page is left out. */
void plan_cache_hint(const char *path, bool planned);

/* Every directory the plan cache may be in, as this environment names
 * them (the one this run uses, and those a later run would use were
 * SANDPIT_PLAN_CACHE or XDG_CACHE_HOME not set): at most PLAN_CACHE_DIRS
 * absolute names, unresolved, into dirs; their number, or -errno.  The
 * one in use is made (0700) when missing, and the directories above it. */
#define PLAN_CACHE_DIRS 3
int plan_cache_dirs(char dirs[][PLAN_PATH_MAX], int max);

/* Under SANDPIT_DEBUG: "sandpit: plan cache: PATH: WHAT". */
void plan_cache_note(const char *path, const char *what, const char *why);
#endif
