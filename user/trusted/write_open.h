/* B's opens for writing inside write grants (user/trusted/write_open.c): B opens
 * the checked name itself, decides on the file it opened, and hands that
 * very file to the program (SP_V_RECV).  Only B includes it. */
#ifndef SANDPIT_WRITE_OPEN_H
#define SANDPIT_WRITE_OPEN_H

struct secure_page;

/* a set-id regular file: any S_ISUID or S_ISGID bit (S_ISGID without
 * group-exec too: an ACL set later can give group-exec) */
#define B_SETID(mode) (((mode) & (S_ISUID | S_ISGID)) != 0)

/* Open `path` (absolute, no symlink on the way: resolved and checked) as
 * slot s's program asked (flags, mode; its umask applied).  Returns the
 * descriptor, -errno, or -EACCES with *why set when the file is one a
 * write never reaches (a set-id file).  An open that waits (a FIFO's)
 * waits here, and ends with -ERESTARTSYS when U asks to be interrupted
 * (b_wait_begin). */
int b_write_open(int s, const char *path, long flags, long mode, const char **why);

/* Send fd (closed here) to slot s's T and make sp the SP_V_RECV verdict;
 * the hand-over stays B's alone until T has acknowledged it, which the
 * server waits for after it published (b_hand_over_done).  Returns
 * SP_V_RECV or -errno. */
long b_hand_over(int s, struct secure_page *sp, int fd, long flags);
void b_hand_over_done(int s);

#endif
