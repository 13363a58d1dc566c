/* Build time: the default policy's model (policy/model.h), so that
 * sandpit_start loads its calls instead of parsing them again.
 *   gen_model OUT */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/model.h"
#include "policy/policy.h"

extern const char sandpit_default_policy[];
extern const uint64_t sandpit_default_policy_len;

int main(int argc, char **argv)
{
	static struct policy_model_call calls[POLICY_MAX_NR];
	static char blank[POLICY_MAX_NR * 8 + 1]; /* lines whose calls the model holds */
	char err[512] = "", tmp[4096];
	struct policy *p;
	size_t len = (size_t)sandpit_default_policy_len, k = 0;
	uint32_t n = 0;

	if (argc != 2 || snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]) >= (int)sizeof(tmp)) {
		fprintf(stderr, "usage: gen_model OUT\n");
		return 2;
	}
	if (policy_parse_default(&p, err, sizeof(err)) < 0) {
		fprintf(stderr, "gen_model: %s\n", err);
		return 1;
	}
	for (int nr = 0; nr < POLICY_MAX_NR; nr++) {
		const struct policy_call *c = policy_call(p, nr);
		if (!c->mentioned)
			continue;
		if (c->line <= 0 || (size_t)c->line >= sizeof(blank) || !c->file ||
		    strcmp(c->file, POLICY_DEFAULT_NAME)) {
			fprintf(stderr, "gen_model: call %d has no line of the default policy\n", nr);
			return 1;
		}
		calls[n].nr = nr;
		calls[n].call = *c;
		calls[n].call.file = NULL;
		blank[c->line] = 1;
		n++;
	}
	/* the text, each of those lines emptied (the others keep their numbers) */
	char *text = malloc(len + 1);
	int line = 1;
	for (size_t i = 0; text && i < len; i++) {
		if (sandpit_default_policy[i] == '\n' || (size_t)line >= sizeof(blank) || !blank[line])
			text[k++] = sandpit_default_policy[i];
		if (sandpit_default_policy[i] == '\n')
			line++;
	}
	struct policy_model_head h = { .magic = POLICY_MODEL_MAGIC,
				       .call_size = sizeof(struct policy_call),
				       .ncalls = n,
				       .text_len = k };
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t cs = n * sizeof(calls[0]);
	if (!text || fd < 0 || write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) ||
	    write(fd, calls, cs) != (ssize_t)cs || write(fd, text, k) != (ssize_t)k || close(fd) < 0 ||
	    rename(tmp, argv[1]) < 0) {
		fprintf(stderr, "gen_model: %s: cannot write\n", argv[1]);
		unlink(tmp);
		return 1;
	}
	free(text);
	policy_free(p);
	return 0;
}
