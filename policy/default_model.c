/* The default policy from its build-time model (policy/model.h): its calls
 * loaded as the parser made them, the rest of its text parsed.  Parsing the
 * whole text again at each start took ≈ 0.6 of a cold start's 0.9 ms
 * (libseccomp's name lookups, the rules, their guards); policy_test checks
 * that both ways build the same policy. */
#include <errno.h>
#include <stddef.h>

#include "policy/model.h"
#include "policy/policy.h"

/* policy/default_model_bin.S (the build tools, which make it, parse) */
extern const unsigned char sandpit_default_model[];
extern const uint64_t sandpit_default_model_len;

int policy_default_model(struct policy **out, char *err, size_t errlen)
{
	*out = NULL;
	const struct policy_model_head *h = (const void *)sandpit_default_model;
	size_t len = (size_t)sandpit_default_model_len;
	if (len < sizeof(*h) || h->magic != POLICY_MODEL_MAGIC ||
	    h->call_size != sizeof(struct policy_call) || h->ncalls > POLICY_MAX_NR ||
	    (len - sizeof(*h)) / sizeof(struct policy_model_call) < h->ncalls ||
	    h->text_len != len - sizeof(*h) - h->ncalls * sizeof(struct policy_model_call))
		return 1;
	const struct policy_model_call *mc = (const void *)(h + 1);
	const char *text = (const char *)(mc + h->ncalls);
	int rc = policy_parse_text(POLICY_DEFAULT_NAME, text, (size_t)h->text_len, out, NULL, NULL,
				   err, errlen);
	for (uint32_t i = 0; rc == 0 && i < h->ncalls; i++)
		if ((rc = policy_load_call(*out, mc[i].nr, &mc[i].call)) == 0)
			rc = policy_set_source(*out, mc[i].nr, POLICY_DEFAULT_NAME, mc[i].call.line,
					       mc[i].call.nguard);
	if (rc < 0 && *out) {
		policy_free(*out);
		*out = NULL;
	}
	return rc;
}

int policy_new_default(struct policy **out, const char *const *allow_read,
		       const char *const *allow_write, char *err, size_t errlen)
{
	int rc = policy_default_model(out, err, errlen);

	if (rc > 0)
		rc = policy_parse_default(out, err, errlen);
	if (rc == 0 && (rc = policy_add_grants(*out, allow_read, allow_write, err, errlen)) < 0) {
		policy_free(*out);
		*out = NULL;
	}
	return rc;
}
