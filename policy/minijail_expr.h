/* minijail's format at the bottom (policy/minijail_expr.c: the reader's
 * state, its messages, tokens and expressions), shared by the reader
 * (policy/minijail.c: statements, files) and the writer
 * (policy/minijail_export.c), which stand above it. */
#ifndef SANDPIT_MINIJAIL_EXPR_H
#define SANDPIT_MINIJAIL_EXPR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "policy/policy.h"

#define MJ_MAX_LINE    65536 /* one logical line, continuations joined */
#define MJ_MAX_ATOMS   64    /* comparisons in one expression */
#define MJ_MAX_CNF     64    /* clauses after distributing || over && */
#define MJ_MAX_NEST    32    /* '(' and '~' inside one another: the parser recurses */
#define MJ_MAX_FILES   64    /* the file and what it includes (one level, as minijail) */
#define MJ_MAX_ERRORS  100

enum { OP_EQ = 1, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_AND, OP_IN, OP_TRUE, OP_FALSE };

struct atom {
	int arg, op;
	uint64_t v;
};

/* The comparison as minijail writes it ("==", "&", "in", ...). */
const char *minijail_op_text(int op);



/* An expression in DNF: clause i is atoms [end[i-1], end[i]). */
struct dnf {
	int natoms, nclauses;
	struct atom atoms[MJ_MAX_ATOMS];
	int end[MJ_MAX_ATOMS];
};

struct origin {
	int file, line;
};

struct mj {
	const char *files[MJ_MAX_FILES];
	int nfiles;
	char *owned[MJ_MAX_FILES];
	struct origin included_at[MJ_MAX_FILES]; /* the @include that read each file */
	unsigned char nested_said[MJ_MAX_FILES]; /* its nested @include refused once */
	int files_said;                          /* more than MJ_MAX_FILES, said once */
	/* the sandpit text being written, and where each of its lines came from */
	char *out;
	size_t outlen;
	FILE *f;
	struct origin *map;
	int nmap, mapcap;
	int seen[POLICY_MAX_NR]; /* line + 1 of the call's statement, for duplicates */
	int seen_file[POLICY_MAX_NR];
	int denylist, nstatements;
	int deny_err[POLICY_MAX_NR]; /* @denylist: errno + 1 */
	int dflt_given;
	int dflt_line; /* the translated default's line in `out`, 0: none yet */
	int noted_frequency, noted_eperm;
	int nerrors, rc;
	policy_report_fn *report, *note;
	void *ctx;
	char *err;
	size_t errlen;
};


struct lex {
	const char *s;
	int nest;
};


/* messages at the minijail FILE:LINE */
__attribute__((format(printf, 4, 5))) void mj_error(struct mj *m, int file, int line,
						     const char *fmt, ...);
__attribute__((format(printf, 4, 5))) void mj_note(struct mj *m, int file, int line,
						    const char *fmt, ...);

/* policy/minijail_expr.c: tokens, an expression read into DNF, and the DNF
 * as sandpit's && of comparisons */
void mj_skip(struct lex *l);
size_t mj_ident(struct lex *l);
int mj_accept(struct lex *l, const char *tok);
int mj_word_is(const char *s, size_t n, const char *w);
int mj_number(struct lex *l, uint64_t *v);
int mj_expression(struct mj *m, struct origin at, struct lex *l, struct dnf *d, int *always);
int mj_translate(struct mj *m, struct origin at, const struct dnf *d, char *out, size_t len);

#endif
