/* `sandpit run`'s count of refusals: the record the trusted process B
 * writes (user/trusted/denial_log.c) and the command reads
 * (loader/run.c).  A layout both sides include. */
#ifndef SANDPIT_DENIAL_REPORT_H
#define SANDPIT_DENIAL_REPORT_H
#include <stdint.h>

/* Written once, when P has ended, to SANDPIT_REPORT_FD: a pipe the
 * command reads to its end, whose writing end P closed before U ran. */
#define DENIAL_REPORT_MAGIC 0x53504452u /* "SPDR" */
struct denial_entry {
	char call[512];        /* "openat(AT_FDCWD, \".\", O_RDONLY) = -EACCES" */
	char decided[160];     /* what decided it (struct policy_why) */
	char builtin[96];
	char allow[4200];      /* the grant that would allow it, "" if none may */
};
struct denial_report {
	uint32_t magic, size;  /* size: sizeof(struct denial_report) */
	uint64_t count;        /* refusals so far */
	struct denial_entry first, last;
};
#endif
