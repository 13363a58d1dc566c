/* The BPF back end evaluated in C, for the tests that check a policy's
 * verdicts: the exported program (load_prog) run as the kernel runs a
 * seccomp filter (run_prog).  T's side is policy/rule_eval.h. */
#ifndef SANDPIT_SELFTEST_POLICY_EVAL_H
#define SANDPIT_SELFTEST_POLICY_EVAL_H
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "policy/policy.h"

struct prog {
	size_t n;
	struct sock_filter insn[BPF_MAXINSNS + 1]; /* one more: a longer program is seen */
};

static inline int load_prog(const struct policy *p, const struct policy_runtime *rt, uint32_t flags,
		     struct prog *out)
{
	scmp_filter_ctx ctx;
	char err[256] = "";
	int fd, rc = policy_compile_bpf(p, rt, flags, &ctx, err, sizeof(err));
	ssize_t n;

	if (rc < 0) {
		fprintf(stderr, "policy_compile_bpf: %s\n", err);
		return rc;
	}
	fd = memfd_create("bpf", 0);
	rc = fd < 0 ? -errno : seccomp_export_bpf(ctx, fd);
	seccomp_release(ctx);
	if (rc < 0)
		return rc;
	n = pread(fd, out->insn, sizeof(out->insn), 0);
	close(fd);
	if (n <= 0 || n % sizeof(out->insn[0]) || n > BPF_MAXINSNS * (ssize_t)sizeof(out->insn[0])) {
		fprintf(stderr, "exported program: %zd bytes\n", n);
		return -EINVAL;
	}
	out->n = n / sizeof(out->insn[0]);
	return 0;
}

#define BAD_PROGRAM 0xdeadbeefu

/* Classic BPF as the kernel runs a seccomp filter (the subset libseccomp
 * emits, and a little more). */
static inline uint32_t run_prog(const struct prog *p, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };

	for (size_t pc = 0; pc < p->n; pc++) {
		const struct sock_filter *i = &p->insn[pc];
		uint32_t k = i->k, v = BPF_SRC(i->code) == BPF_X ? x : k;
		int t;

		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
			if (BPF_MODE(i->code) == BPF_ABS && BPF_SIZE(i->code) == BPF_W &&
			    k % 4 == 0 && k + 4 <= sizeof(*d))
				memcpy(&a, (const char *)d + k, 4);
			else if (BPF_MODE(i->code) == BPF_IMM)
				a = k;
			else if (BPF_MODE(i->code) == BPF_MEM && k < BPF_MEMWORDS)
				a = mem[k];
			else
				return BAD_PROGRAM;
			break;
		case BPF_LDX:
			if (BPF_MODE(i->code) == BPF_IMM)
				x = k;
			else if (BPF_MODE(i->code) == BPF_MEM && k < BPF_MEMWORDS)
				x = mem[k];
			else
				return BAD_PROGRAM;
			break;
		case BPF_ST:
		case BPF_STX:
			if (k >= BPF_MEMWORDS)
				return BAD_PROGRAM;
			mem[k] = BPF_CLASS(i->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			switch (BPF_OP(i->code)) {
			case BPF_ADD: a += v; break;
			case BPF_SUB: a -= v; break;
			case BPF_AND: a &= v; break;
			case BPF_OR: a |= v; break;
			case BPF_XOR: a ^= v; break;
			case BPF_LSH: a = v < 32 ? a << v : 0; break;
			case BPF_RSH: a = v < 32 ? a >> v : 0; break;
			case BPF_NEG: a = -a; break;
			default: return BAD_PROGRAM;
			}
			break;
		case BPF_JMP:
			if (BPF_OP(i->code) == BPF_JA) {
				pc += k;
				break;
			}
			switch (BPF_OP(i->code)) {
			case BPF_JEQ: t = a == v; break;
			case BPF_JGT: t = a > v; break;
			case BPF_JGE: t = a >= v; break;
			case BPF_JSET: t = (a & v) != 0; break;
			default: return BAD_PROGRAM;
			}
			pc += t ? i->jt : i->jf;
			break;
		case BPF_RET:
			return BPF_RVAL(i->code) == BPF_A ? a : k;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			return BAD_PROGRAM;
		}
	}
	return BAD_PROGRAM; /* fell off the end */
}

#endif
