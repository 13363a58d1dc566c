/* The default policy's model as policy/tools/gen_model.c writes it at build
 * time and policy/default_model.c reads it: a header, one record a call the
 * policy names (its entry as the parser made it, without the file name),
 * then the policy's text with those calls' lines emptied (the rest, parsed
 * at start: the grants and denies, whose aliases depend on the file
 * system).  Only this build reads it: a header that does not match makes
 * the text be parsed whole. */
#ifndef SANDPIT_POLICY_MODEL_H
#define SANDPIT_POLICY_MODEL_H

#include <stdint.h>

#include "policy/policy.h"

#define POLICY_MODEL_MAGIC 0x6c65646f6d505300ull /* "\0SPmodel" */

struct policy_model_head {
	uint64_t magic;
	uint32_t call_size; /* sizeof(struct policy_call) of the build that wrote it */
	uint32_t ncalls;
	uint64_t text_len;
};

struct policy_model_call {
	int32_t nr, pad;
	struct policy_call call; /* file NULL */
};

#endif
