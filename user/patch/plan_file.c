/* The patch-plan cache's file format (see plan_file.h).  Little-endian:
 *   magic[8] version:u32 n_rec:u32
 *   dev ino size mtime_ns ctime_ns text_lo text_hi :u64  build_id_len:u32 build_id[32]
 *   n_rec records: off:u32 nr:i32 before after n_pre n_post status method :u8
 *                  then before + after bytes
 *   FNV-1a 64 of everything before it :u64 */
#include <string.h>
#include "user/patch/plan_file.h"

#define PLAN_VERSION 1
#define HDR_LEN (8 + 4 + 4 + 7 * 8 + 4 + PLAN_MAX_BUILD_ID)
#define REC_LEN 14

static uint64_t fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static const uint8_t *get_rec(const uint8_t *p, struct plan_rec *r)
{
	r->off = get32(p);
	r->nr = (int32_t)get32(p + 4);
	r->before = p[8];
	r->after = p[9];
	r->n_pre = p[10];
	r->n_post = p[11];
	r->status = p[12];
	r->method = p[13];
	r->bytes = p + REC_LEN;
	return p + REC_LEN + r->before + r->after;
}

static const char *check_rec(const struct plan_rec *r, const struct plan_key *k, uint64_t prev_end)
{
	unsigned len = (unsigned)r->before + r->after;

	if (r->status >= PLAN_N_STATUS || r->method >= PLAN_N_METHODS)
		return "a record has an unknown status or method";
	if (r->nr < -1 || r->nr > 0xffff)
		return "a record has a bad system call number";
	if (r->after < 2 || len > PLAN_SITE_MAX || r->n_pre > PLAN_MAX_SIDE ||
	    r->n_post > PLAN_MAX_SIDE)
		return "a record's window is too large";
	if (r->status == PLAN_FIT ? len < 5 || (r->before > 0) != (r->n_pre > 0) ||
					    (r->after > 2) != (r->n_post > 0)
				  : r->before || r->after != 2 || r->n_pre || r->n_post)
		return "a record's window does not match its status";
	if (r->off < r->before || (uint64_t)r->off - r->before < prev_end ||
	    (uint64_t)r->off + r->after > k->text_hi - k->text_lo)
		return "records overlap, are out of order or lie outside the code";
	if (r->bytes[r->before] != 0x0f || r->bytes[r->before + 1] != 0x05)
		return "a record's bytes are not a syscall";
	return NULL;
}

int plan_file_parse(const uint8_t *buf, size_t n, struct plan_file *out, const char **why)
{
	const uint8_t *p, *end;
	uint64_t prev_end = 0;
	struct plan_rec r;

	memset(out, 0, sizeof *out);
	*why = "shorter than its header";
	if (n < HDR_LEN + 8)
		return -1;
	*why = "not a plan file (magic or version)";
	if (memcmp(buf, PLAN_MAGIC, 8) || get32(buf + 8) != PLAN_VERSION)
		return -1;
	*why = "bad checksum";
	if (fnv(buf, n - 8) != get64(buf + n - 8))
		return -1;
	out->n_rec = get32(buf + 12);
	p = buf + 16;
	out->key.dev = get64(p);
	out->key.ino = get64(p + 8);
	out->key.size = get64(p + 16);
	out->key.mtime_ns = get64(p + 24);
	out->key.ctime_ns = get64(p + 32);
	out->key.text_lo = get64(p + 40);
	out->key.text_hi = get64(p + 48);
	out->key.build_id_len = get32(p + 56);
	memcpy(out->key.build_id, p + 60, PLAN_MAX_BUILD_ID);
	*why = "bad header (site count, code range or build-id length)";
	if (out->n_rec > PLAN_MAX_SITES || out->key.text_hi <= out->key.text_lo ||
	    out->key.text_hi - out->key.text_lo > 0xffffffffULL ||
	    out->key.build_id_len > PLAN_MAX_BUILD_ID)
		return -1;
	p = buf + HDR_LEN;
	end = buf + n - 8;
	for (uint32_t i = 0; i < out->n_rec; i++) {
		*why = "a record runs past the end of the file";
		if ((size_t)(end - p) < REC_LEN)
			return -1;
		get_rec(p, &r);
		if ((size_t)(end - p) - REC_LEN < (size_t)r.before + r.after)
			return -1;
		if ((*why = check_rec(&r, &out->key, prev_end)))
			return -1;
		prev_end = (uint64_t)r.off + r.after;
		p = r.bytes + r.before + r.after;
	}
	*why = "bytes after the last record";
	if (p != end)
		return -1;
	out->rec = buf + HDR_LEN;
	out->end = end;
	*why = NULL;
	return 0;
}

bool plan_file_next(const struct plan_file *f, const uint8_t **pos, struct plan_rec *r)
{
	if (*pos >= f->end)
		return false;
	*pos = get_rec(*pos, r);
	return true;
}

size_t plan_file_size(uint32_t n, size_t nbytes)
{
	return HDR_LEN + (size_t)n * REC_LEN + nbytes + 8;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return p + 4;
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
	return p + 8;
}

uint8_t *plan_file_begin(uint8_t *buf, const struct plan_key *k, uint32_t n)
{
	uint8_t *p = buf;

	memcpy(p, PLAN_MAGIC, 8);
	p = put32(p + 8, PLAN_VERSION);
	p = put32(p, n);
	p = put64(p, k->dev);
	p = put64(p, k->ino);
	p = put64(p, k->size);
	p = put64(p, k->mtime_ns);
	p = put64(p, k->ctime_ns);
	p = put64(p, k->text_lo);
	p = put64(p, k->text_hi);
	p = put32(p, k->build_id_len);
	memcpy(p, k->build_id, PLAN_MAX_BUILD_ID);
	return p + PLAN_MAX_BUILD_ID;
}

uint8_t *plan_file_put(uint8_t *p, const struct plan_rec *r)
{
	p = put32(p, r->off);
	p = put32(p, (uint32_t)r->nr);
	*p++ = r->before;
	*p++ = r->after;
	*p++ = r->n_pre;
	*p++ = r->n_post;
	*p++ = r->status;
	*p++ = r->method;
	memcpy(p, r->bytes, (size_t)r->before + r->after);
	return p + r->before + r->after;
}

uint8_t *plan_file_end(uint8_t *buf, uint8_t *p)
{
	return put64(p, fnv(buf, (size_t)(p - buf)));
}
