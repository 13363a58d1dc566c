/* The policy-file parser's state and its smallest pieces, shared by its
 * files and by no one else: the limits, the parser and the lexer, the
 * tokens, and policy/parse_lex.c's messages, tokens and values.  Above it
 * policy/parse_rule.c (a line's rules and its action made the model's,
 * parse_rule.h) and policy/parse.c (lines, files and @include, building the
 * model). */
#ifndef SANDPIT_PARSE_LEX_H
#define SANDPIT_PARSE_LEX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/policy.h"

#define MAX_DEPTH   8        /* @include nesting */
#define MAX_NEST    32       /* '(', '-' and '~' inside one another: the parser recurses */
/* what one policy may read, @includes and all: fan-out is bounded too */
#define MAX_FILES   256
#define MAX_LINES   (2 << 20)
#define MAX_BYTES   (16 << 20)
#define MAX_ERRORS  100      /* reported per parse; then one "too many" */
#define MAX_FILE    (1 << 20)
#define MAX_NAME    64

enum action { A_ALLOW = 1, A_DENY, A_KILL, A_TRAP, A_PROCESS, A_EMULATE };

struct where {
	const char *file;
	int line, col;
};

/* One syscall's line, checked. */
struct line_call {
	struct where at;
	char name[MAX_NAME];
	int cls, err, nrules;
	int nguard; /* the first nguard rules are sandpit's guards */
	struct policy_rule rules[POLICY_MAX_RULES];
	const struct policy_proc_arg *proc;
};

struct grant {
	struct where at;
	char *path;
	int writable;
	int deny; /* path deny PATTERN */
};

struct source {
	const char *name; /* as messages call it */
	dev_t dev;
	ino_t ino;
	int has_id;
	const struct source *parent;
};

struct parser {
	struct line_call *calls[POLICY_MAX_NR]; /* NULL: not given */
	int given[POLICY_MAX_NR]; /* the numbers given, as read (build sorts them) */
	int ngiven;
	struct grant *grants;
	size_t ngrants, grants_cap;
	int dflt_given, dflt_cls, dflt_err;
	struct where dflt_at;
	char **names; /* file names, kept for the messages' sake */
	size_t nnames;
	int nerrors;
	int rc; /* first error's errno */
	size_t files, lines, bytes; /* read so far, against MAX_FILES, MAX_LINES, MAX_BYTES */
	int over;                   /* past one of them: nothing more is read */
	policy_report_fn *report;
	void *ctx;
	char *err;
	size_t errlen;
};

/* --- tokens --- */

enum tok {
	T_END, T_IDENT, T_NUM, T_VAR, /* $pid */
	T_COLON, T_LPAREN, T_RPAREN, T_LBRACE, T_RBRACE, T_COMMA, T_SEMI, T_OR, T_NOT, T_MINUS,
	T_AND, T_ANDAND, T_OROR, T_EQ, T_NE, T_LE, T_LT, T_GE, T_GT, T_BANG, T_BAD,
};

struct lexer {
	const char *s, *end; /* the line, without its newline */
	const char *line_start;
	struct where at;     /* of the current token */
	enum tok t;
	const char *tok;
	size_t len;
	uint64_t num;
	int num_bad;         /* a number that does not fit, or has junk */
	int nest;            /* parsing functions entered for '(', '-', '~' */
};

/* Each reports its own error and returns -1, else 0. */
#define EXPECTED(ps, lx, what)                                                          \
	({                                                                              \
		char b_[48];                                                            \
		parse_report(ps, -EINVAL, &(lx)->at, "expected %s, found %s", what,          \
		       parse_shown(lx, b_, sizeof(b_)));                                      \
		-1;                                                                     \
	})

/* policy/parse_lex.c: messages, tokens and values */
void parse_report(struct parser *ps, int rc, const struct where *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int parse_is_ident(int c, int first);
void parse_next(struct lexer *lx);
int parse_is_word(const struct lexer *lx, const char *w);
const char *parse_shown(const struct lexer *lx, char *buf, size_t n);
int parse_nest_in(struct parser *ps, struct lexer *lx);
int parse_constant(struct parser *ps, struct lexer *lx, uint64_t *v);
int parse_errno_spec(struct parser *ps, struct lexer *lx, int *e);
#endif
