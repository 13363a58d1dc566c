/* The plan cache under `sandpit run` (internal to the patcher): the plans
 * the loader reads for a program before sandpit_start, the page the
 * run-time patcher names files on inside the sandbox, and what the parent
 * does with those names once the child has ended (see plan_cache.h for the
 * cache itself, and docs/design/plan-cache.md). */
#ifndef SANDPIT_USER_PLAN_RUN_H
#define SANDPIT_USER_PLAN_RUN_H
#include <stdbool.h>
#include <stdint.h>
#include "user/patch/patch_objects.h"
#include "user/patch/plan_file.h"
#include "user/patch/proc_maps.h"

#define PLAN_MAX_HINTS 15
#define PLAN_HINT_LEN 256
#define PLAN_MAX_PRELOAD (8u << 20)
#define PLAN_MAX_OBJECT (256ULL << 20)

/* What the run-time patcher names for the parent: files it had to plan
 * itself (a shared page the sandboxed program can write: untrusted). */
struct plan_hints {
	uint32_t n;
	uint32_t planned; /* bit i: path[i] was planned in the sandbox, not taken from the cache */
	/* the lines of the list the child read, when it preloaded a plan for
	 * each (else 0), and whether a name differs from the line of its
	 * number: when all match, the list stays as it is (names only: a
	 * hostile child can only keep its own list from being rewritten) */
	uint32_t needs, differs;
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
#endif
