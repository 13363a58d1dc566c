/* One line's meaning in a policy file (policy/parse_rule.c), for
 * policy/parse.c: internal to the parser. */
#ifndef SANDPIT_PARSE_RULE_H
#define SANDPIT_PARSE_RULE_H

#include "policy/parse_lex.h"

/* policy/parse_rule.c: a line's rules, and the action it asks for made the
 * model's class with sandpit's guards added (policy/guard.c says which) */
int parse_arg_index(const struct lexer *lx);
int parse_expression(struct parser *ps, struct lexer *lx, struct policy_rule *rules, int *n,
		     struct where *at);
int parse_resolve(struct parser *ps, struct line_call *c, int nr, int action,
		  const struct where *at, struct policy_rule *rules, int n);
#endif
