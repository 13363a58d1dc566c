/* What policy/bpf.c shares with policy/bpf_template.c, which stands above
 * it: the message of a failed build. */
#ifndef SANDPIT_POLICY_BPF_INTERNAL_H
#define SANDPIT_POLICY_BPF_INTERNAL_H
#include <stddef.h>

/* "bpf: NAME (nr): what: strerror" (nr < 0: no call) into err; returns rc */
int bpf_fail_msg(char *err, size_t errlen, int nr, int rc, const char *what);
#endif
