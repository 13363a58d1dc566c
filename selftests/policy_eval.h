/* The two back ends evaluated in C, for the tests that check a policy's
 * verdicts: T's rule interpreter over a compiled T table (tt_eval), and the
 * exported BPF program run as the kernel runs a seccomp filter (run_prog). */
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

/* What T sees of the world in these tests. */
#define SELF_PID  1000
#define T_TID     1001
#define SANDPIT_FD 900
#define PROT_LO   0x70000000ULL /* sandpit's protected pages */
#define PROT_HI   0x70004000ULL

/* A C model of T's rule interpreter: 0 if T would execute the call, else
 * -errno; TT_PROCESS etc. return 1 + class so tests can tell them apart. */
static inline long tt_eval(const struct tt_table *t, int nr, uint64_t a0, uint64_t a1,
		    uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	const uint64_t a[6] = { a0, a1, a2, a3, a4, a5 };
	const struct tt_entry *e = &t->entries[nr];

	if (e->cls == TT_DENY)
		return -e->err;
	if (e->cls == TT_ALLOW)
		return 0;
	if (e->cls != TT_THREAD)
		return 1 + e->cls;
	for (int i = e->first; i < e->first + e->nrules; i++) {
		const struct tt_rule *r = &t->rules[i];
		uint64_t v = a[r->arg], d, lo, hi;
		int ok = 0;

		if (r->carg != TT_NOARG && !(a[r->carg] & r->cmask))
			continue;
		switch (r->op) {
		case TR_MASK_ZERO: ok = (v & r->mask) == 0; break;
		case TR_MASKED_EQ: ok = (v & r->mask) == r->val; break;
		case TR_MASKED_NE: ok = (v & r->mask) != r->val; break;
		case TR_FD_FREE: ok = (int)v != SANDPIT_FD; break;
		case TR_RANGE_FREE:
			lo = v & ~4095ULL;
			hi = (v + a[r->arg2] + 4095) & ~4095ULL;
			ok = hi >= lo && (hi <= PROT_LO || lo >= PROT_HI);
			break;
		case TR_SELF_PID: ok = v == SELF_PID; break;
		case TR_NOT_TID: ok = v != T_TID; break;
		case TR_LE: ok = v <= r->val; break;
		case TR_BITSET:
			d = v - r->val;
			ok = d < 64 && (r->mask >> d & 1);
			break;
		}
		if (!ok)
			return -r->err;
	}
	return 0;
}

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
