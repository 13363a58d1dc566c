/* libFuzzer target: the plan cache's file reader (user/patch/plan_file.c), which
 * reads files anyone who can write the cache directory may have made
 * (invariant 9).  Each input is parsed as it is, and again with its
 * checksum made right, so that mutations reach the checks behind it.  A
 * file the reader accepts must give records inside the file, in order,
 * and be written back byte for byte. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "user/patch/plan_file.h"

static uint64_t fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static void check(const uint8_t *buf, size_t n)
{
	struct plan_file f;
	struct plan_rec r;
	const char *why;
	const uint8_t *pos;
	uint64_t prev = 0;
	uint32_t count = 0;
	size_t nbytes = 0;

	if (plan_file_parse(buf, n, &f, &why)) {
		if (!why)
			abort();
		return;
	}
	for (pos = f.rec; plan_file_next(&f, &pos, &r); count++) {
		if (r.bytes < buf || r.bytes + r.before + r.after > buf + n - 8 ||
		    (count && r.off < prev) || r.bytes[r.before] != 0x0f)
			abort();
		prev = r.off;
		nbytes += (size_t)r.before + r.after;
	}
	if (count != f.n_rec || plan_file_size(count, nbytes) != n)
		abort();
	uint8_t *out = malloc(n), *p = plan_file_begin(out, &f.key, count);

	for (pos = f.rec; plan_file_next(&f, &pos, &r);)
		p = plan_file_put(p, &r);
	if (plan_file_end(out, p) != out + n || memcmp(out, buf, n))
		abort();
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	check(data, size);
	if (size < 8 || size > PLAN_MAX_FILE)
		return 0;
	copy = malloc(size);
	memcpy(copy, data, size);
	uint64_t h = fnv(copy, size - 8);
	memcpy(copy + size - 8, &h, 8);
	check(copy, size);
	free(copy);
	return 0;
}
