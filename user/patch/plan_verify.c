/* A cached plan, checked whole against the mapped code before it is used
 * (see plan_verify.h). */
#include <string.h>
#include "user/patch/patch_stats.h"
#include "user/patch/patch_sys.h"
#include "user/patch/plan_cache.h"
#include "user/patch/plan_run.h"
#include "user/patch/plan_verify.h"

/* How far before a candidate the local check below starts: decodes from
 * different offsets mostly fall into step within a few instructions, but
 * padding (runs of 00, of nops) can keep two apart for longer. */
#define NEAR_FIRST 64
#define NEAR_LAST 4096

/* Does the planner's decode of c's stretch start an instruction at c?
 * Told without decoding the stretch from its start: that decode has an
 * instruction start within any ZYDIS_MAX_INSTRUCTION_LENGTH bytes, so it
 * passes through one of the first that many offsets `near` bytes before c
 * and goes on from there as a decode from that offset does.  Every such
 * decode is followed (each address once) up to c: if none reaches c
 * exactly, the planner's does not either (0); if all do, and through the
 * same instruction, so does the planner's (1, *prev that instruction, 0 if
 * c starts the stretch); else it is tried from further back, and at last
 * -1: only the planner's own decode can tell.  A decode that stops at a
 * byte that is no instruction never reaches c, and is left out: were it
 * the planner's, the planner would make no record of c and leave it as it
 * is, which is what a plan's claim that needs a 1 here (a number before a
 * site left native) comes to as well. */
static int starts_insn(struct planner *p, uintptr_t c, uintptr_t *prev)
{
	uint64_t reach[(NEAR_LAST + 63) / 64];
	uintptr_t lo, end;
	uint8_t how;

	*prev = 0;
	if (!planner_stretch_for(p, c, &lo, &end, &how) || c < lo || c >= end)
		return 0;
	if (c == lo)
		return 1;
	for (uintptr_t near = NEAR_FIRST; near <= NEAR_LAST; near *= 4) {
		uintptr_t from = c - lo > near ? c - near : lo, before = 0;
		unsigned n_from = from == lo ? 1 : ZYDIS_MAX_INSTRUCTION_LENGTH;
		bool hit = false, miss = false;

		memset(reach, 0, sizeof reach);
		for (unsigned i = 0; i < n_from; i++)
			reach[i / 64] |= 1ULL << (i % 64);
		for (uintptr_t a = from; a < c; a++) {
			ZydisDecodedInstruction in;
			uintptr_t next;

			if (!(reach[(a - from) / 64] >> ((a - from) % 64) & 1))
				continue;
			if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&p->fast, NULL, (const void *)a,
									end - a, &in)))
				continue;
			next = a + in.length;
			if (next < c)
				reach[(next - from) / 64] |= 1ULL << ((next - from) % 64);
			else if (next > c || (hit && before != a))
				miss = true; /* past c, or a second instruction that ends at c */
			else
				hit = true, before = a;
		}
		if (!hit)
			return 0;
		if (!miss) {
			*prev = before;
			return 1;
		}
		if (from == lo)
			break;
	}
	return -1;
}

/* What the planner itself makes of candidate c (plan_candidate's decision,
 * nothing planned): false if c starts no instruction of its span (or no
 * span can be trusted there), else true with r's nr, status and method as
 * the planner would record them.  It decodes c's function up to c: a
 * cached plan asks it only for the sites it says stay as they are. */
static bool derive(struct planner *p, uintptr_t c, struct plan_rec *r)
{
	struct span *s = planner_span_for(p, c);
	int i = s ? span_index(s, c) : -1;
	struct patch_site x;
	int why;

	if (i < 0)
		return false;
	r->nr = (int32_t)(i > 0 ? planner_static_nr(p, span_insn(s, i - 1)) : -1);
	r->method = s->method;
	if (r->nr == 15) {
		r->status = PLAN_NATIVE_SIGRETURN;
		return true;
	}
	why = planner_pick_region(p, s, i, &x);
	r->status = why == WIN_FIT ? PLAN_FIT : why == WIN_SKIP_TARGET ? PLAN_SKIP_TARGET : PLAN_SKIP_OTHER;
	return true;
}

/* The static number the planner finds before candidate c: -1 none, -2 c
 * starts no instruction (its decode has no record there). */
static long nr_before(struct planner *p, uintptr_t c)
{
	struct plan_rec own;
	uintptr_t prev;

	switch (starts_insn(p, c, &prev)) {
	case 0:
		return -2;
	case 1:
		return prev ? planner_static_nr(p, prev) : -1;
	default:
		return derive(p, c, &own) ? own.nr : -2;
	}
}

/* Candidate c starts no instruction of the planner's decode (the planner
 * makes no record of it)? */
static bool no_syscall(struct planner *p, uintptr_t c)
{
	struct plan_rec own;
	uintptr_t prev;
	int r = starts_insn(p, c, &prev);

	return !r || (r < 0 && !derive(p, c, &own));
}

/* Does record r of a cached plan hold in memory: its bytes are the mapped
 * ones; a window that is to be patched decodes from its first instruction
 * to the syscall exactly, over simple instructions, and ends where the
 * window ends; and a site it says stays native is one the planner leaves
 * native for these bytes.  NULL, or why not. */
static const char *rec_holds(struct planner *p, const struct plan_rec *r)
{
	uintptr_t c = p->mod.lo + r->off, a = c - r->before;
	const struct decoded *d = NULL;
	struct plan_rec own;
	long last_nr = -1;

	if (a < p->lo || c + r->after > p->hi || memcmp((const void *)a, r->bytes,
							(size_t)r->before + r->after))
		return "a record's bytes are not the mapped code";
	if (c < p->cfg->skip_hi && c + 2 > p->cfg->skip_lo)
		return "a record lies in sandpit's own code";
	/* left native for rt_sigreturn: the planner finds `mov $15` before it */
	if (r->status == PLAN_NATIVE_SIGRETURN)
		return r->nr == 15 && nr_before(p, c) == 15
			       ? NULL : "a site it leaves native is no rt_sigreturn";
	/* left unpatched for want of a window: the planner must say so too */
	if (r->status != PLAN_FIT)
		return derive(p, c, &own) && own.status == r->status && own.nr == r->nr
			       ? NULL : "a site it leaves unpatched is one the planner patches";
	if (a < p->cfg->skip_hi && c + r->after > p->cfg->skip_lo)
		return "a record's window overlaps sandpit's own code";
	for (unsigned j = 0; j < r->n_pre; j++, a += d->in.length) {
		if (a >= c || !(d = planner_decode(p, a)) || !planner_is_simple(p, d))
			return "a window does not decode to its syscall";
		last_nr = planner_static_nr(p, a);
	}
	if (a != c || !(d = planner_decode(p, a)) || d->in.mnemonic != ZYDIS_MNEMONIC_SYSCALL ||
	    d->in.length != SYSCALL_LEN)
		return "a window does not decode to its syscall";
	a += SYSCALL_LEN;
	for (unsigned j = 0; j < r->n_post; j++, a += d->in.length)
		if (a >= c + r->after || !(d = planner_decode(p, a)) || !planner_is_simple(p, d))
			return "a window does not decode to its syscall";
	if (a != c + r->after)
		return "a window does not end where it says";
	/* filter mode leaves the site native by its recorded number: the
	 * number must be the one before the syscall (in the window, or as
	 * the planner finds it), in every mode, so that a plan holds or not
	 * whatever the run that checks it */
	if ((r->n_pre ? last_nr : nr_before(p, c)) != r->nr)
		return "a site it leaves native has another number";
	return NULL;
}

/* The plan of a cache file, checked whole against memory first: NULL, or
 * why it does not hold and nothing of it used.  Its records must be the
 * `syscall`s of the code: each of the n candidates (the 0f 05 pairs the
 * scan found, ascending) has its record, or the planner would find no
 * instruction starting there; and no record is anywhere else. */
static const char *plan_from_cache(struct planner *p, const struct plan_file *f,
				   const uintptr_t *cand, unsigned n)
{
	struct patch_plan *pl = p->plan;
	struct patch_stats *st = &pl->st;
	const uint8_t *pos = f->rec;
	const char *why = NULL;
	struct plan_rec r;
	unsigned k = 0;

	while (!why && plan_file_next(f, &pos, &r)) {
		uintptr_t c = p->mod.lo + r.off;

		for (; !why && k < n && cand[k] < c; k++)
			if (!no_syscall(p, cand[k]))
				why = "it leaves out a syscall of the code";
		if (!why && (k == n || cand[k] != c))
			why = "a record is no candidate of the code";
		if (!why)
			why = rec_holds(p, &r);
		k++;
	}
	for (; !why && k < n; k++)
		if (!no_syscall(p, cand[k]))
			why = "it leaves out a syscall of the code";
	if (why)
		return why;
	st->candidates = n;
	for (pos = f->rec; plan_file_next(f, &pos, &r);) {
		uintptr_t c = p->mod.lo + r.off;

		st->sites++;
		st->by_method[r.method]++;
		if (r.status == PLAN_NATIVE_SIGRETURN) {
			st->native_sigreturn++;
			patch_note_site(c, r.method, "left native (rt_sigreturn)");
		} else if (planner_left_native(p, r.nr)) {
			st->native_allowed++;
			patch_note_site(c, r.method, "left native (allowed in the filter)");
		} else if (r.status == PLAN_FIT) {
			struct patch_site *x = &pl->site[pl->n_site++];

			*x = (struct patch_site){ .addr = c, .lo = c - r.before, .hi = c + r.after,
						  .n_pre = r.n_pre, .n_post = r.n_post };
			st->patched++;
			p->bound += (size_t)(x->n_pre + x->n_post) * ZYDIS_MAX_INSTRUCTION_LENGTH +
				    TRAMP_FIXED;
			patch_note_site(c, r.method, "patched");
		} else if (r.status == PLAN_SKIP_TARGET) {
			st->skipped_target++;
			patch_note_site(c, r.method, "not patched (a branch target is in the way)");
		} else {
			st->skipped_other++;
			patch_note_site(c, r.method, "not patched (no window fits)");
		}
	}
	return NULL;
}

/* The cache's plan for the object, given the scan's n candidates: true if
 * it held whole in memory and is p's plan now.  The scan reads all of the
 * code (a big object's pages are mapped for it), but a plan that only the
 * key tied to the code could leave out any syscall, or leave it native,
 * and every later run of every program using that object would be killed
 * there (strict mode) or trapped at each call (filter mode). */
bool plan_try_cache(struct planner *p, const uintptr_t *cand, unsigned n)
{
	struct patch_plan *pl = p->plan;
	struct plan_file f;
	void *mem = NULL;
	bool taken = false;
	int r = p->inside ? plan_cache_preloaded(&p->key, &f, &mem)
		: p->cacheable ? plan_cache_get(&p->key, p->path, &f, &mem) : 0;

	if (r == 1 && (pl->site = p_calloc(f.n_rec ? f.n_rec : 1, sizeof *pl->site))) {
		const char *why = plan_from_cache(p, &f, cand, n);

		taken = !why;
		plan_cache_note(p->path, taken ? "plan from cache (verified)" : "cache refused", why);
		if (!taken) { /* nothing of it kept: planned from the scan below */
			p_free(pl->site);
			pl->site = NULL;
		}
	}
	if (p->inside) {
		p_free(mem);
		/* still needed next time; or planned here, for the parent to cache */
		plan_cache_hint(p->path, !taken);
		if (!taken)
			plan_cache_note(p->path, "plan computed", "named for the parent to cache");
	} else {
		plan_cache_release(mem);
	}
	return taken;
}
