/* The patch-plan cache's file format (internal to the patcher): what the
 * planner decided for one object's code, keyed by the file it was mapped
 * from.  A cache file is untrusted input (invariant 9): plan_file_parse
 * checks every field and the whole file's checksum against the bytes
 * read, and is fuzzed (selftests/fuzz/plan_file_fuzz.c).  No allocation,
 * no system call. */
#ifndef SANDPIT_USER_PLAN_FILE_H
#define SANDPIT_USER_PLAN_FILE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PLAN_MAGIC "SPPLAN01"
#define PLAN_MAX_SITES 16384
#define PLAN_MAX_FILE (4u << 20)
#define PLAN_MAX_BUILD_ID 32
#define PLAN_SITE_MAX 122         /* SITE_MAX of patch_plan.h */
#define PLAN_MAX_SIDE 4           /* MAX_SIDE */
#define PLAN_N_METHODS 4          /* PATCH_N_METHODS */

/* The file a plan is for, and the link addresses of the code planned. */
struct plan_key {
	uint64_t dev, ino, size, mtime_ns, ctime_ns;
	uint64_t text_lo, text_hi;
	uint32_t build_id_len;
	uint8_t build_id[PLAN_MAX_BUILD_ID];
};

enum plan_status { PLAN_FIT, PLAN_SKIP_TARGET, PLAN_SKIP_OTHER, PLAN_NATIVE_SIGRETURN,
		   PLAN_N_STATUS };

/* One `syscall` found: at text_lo + off (link address); for PLAN_FIT the
 * window [addr - before, addr + after) of n_pre + 1 + n_post instructions
 * and its original bytes, else just the two bytes of the syscall. */
struct plan_rec {
	uint32_t off;
	int32_t nr;               /* the static number before it, -1: unknown */
	uint8_t before, after, n_pre, n_post, status, method;
	const uint8_t *bytes;     /* before + after bytes, inside the file */
};

struct plan_file {
	struct plan_key key;
	uint32_t n_rec;
	const uint8_t *rec, *end; /* the records, checked */
};

/* Checks all n bytes of buf as a plan file: 0, or -1 with *why one short
 * reason ("bad checksum", "record 3 runs past the file"). */
int plan_file_parse(const uint8_t *buf, size_t n, struct plan_file *out, const char **why);

/* The next record of a parsed file (at *pos, which starts at f->rec);
 * false after the last. */
bool plan_file_next(const struct plan_file *f, const uint8_t **pos, struct plan_rec *r);

/* Bytes a file of n records with nbytes window bytes in all takes. */
size_t plan_file_size(uint32_t n, size_t nbytes);
/* Writes the header for key and n records at buf (plan_file_size bytes);
 * returns where the first record goes. */
uint8_t *plan_file_begin(uint8_t *buf, const struct plan_key *key, uint32_t n);
/* Writes one record (with its bytes) at p; returns where the next goes. */
uint8_t *plan_file_put(uint8_t *p, const struct plan_rec *r);
/* Writes the checksum of [buf, p) at p; returns the end of the file. */
uint8_t *plan_file_end(uint8_t *buf, uint8_t *p);
#endif
