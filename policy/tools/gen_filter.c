/* Build time: the default policy's filter as templates (policy.h), for the
 * descriptor block sandpit_start normally gets and both kill actions, so
 * that sandpit_start need not wait ~10 ms for libseccomp.
 *   gen_filter OUT */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "policy/policy.h"
#include "user/layout/secure_mem.h"

int main(int argc, char **argv)
{
	/* with denials trapped too: `sandpit run` counts every refusal */
	static const uint32_t flags[] = { 0, POLICY_BPF_NO_KILL_PROCESS, POLICY_BPF_TRAP_DENY,
					  POLICY_BPF_NO_KILL_PROCESS | POLICY_BPF_TRAP_DENY };
	char err[512] = "", tmp[4096];
	struct policy *p;
	int fd, rc;

	if (argc != 2 || snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]) >= (int)sizeof(tmp)) {
		fprintf(stderr, "usage: gen_filter OUT\n");
		return 2;
	}
	if (policy_parse_default(&p, err, sizeof(err)) < 0) {
		fprintf(stderr, "gen_filter: %s\n", err);
		return 1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	rc = fd < 0 ? -1 : 0;
	for (size_t i = 0; rc == 0 && i < sizeof(flags) / sizeof(flags[0]); i++)
		rc = policy_bpf_write_template(p, SM_FD_TOP - SM_NFDS, SM_FD_TOP - 1, flags[i], fd, err,
					       sizeof(err));
	if (fd < 0 || rc < 0 || close(fd) < 0 || rename(tmp, argv[1]) < 0) {
		fprintf(stderr, "gen_filter: %s: %s\n", argv[1], err[0] ? err : "cannot write");
		unlink(tmp);
		return 1;
	}
	policy_free(p);
	return 0;
}
