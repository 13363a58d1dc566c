/* The program's own executable under `sandpit run` (user/trusted/b_exe.c):
 * the calls that reach it through P's exe link, answered by B from the
 * file the loader opened.  Only B includes it. */
#ifndef SANDPIT_B_EXE_H
#define SANDPIT_B_EXE_H

struct policy_proc_arg;
struct secure_page;

/* 1 if B answers for the exe link of slot s's process (its record's
 * exe_fd is open) and the resolved text is that link (path_proc_exe) */
int b_exe_link(int s, const char *resolved);
/* readlink(at) of P's exe link: the name of the program's file, as the
 * kernel names a descriptor's file (" (deleted)" once it is removed),
 * truncated to the program's bufsiz.  -SP_ANSWERED or -errno. */
long b_exe_readlink(int s, const struct policy_proc_arg *pa, struct secure_page *sp,
		    const char *path);
/* A call of slot s that follows P's exe link (path: U's text, for the
 * denial log), made on the program's file: an open for reading made by B
 * and handed over, the stat family, access, statfs and the attributes
 * answered; any write is EACCES, chdir ENOTDIR.  The verdict or -errno. */
long b_exe_call(int s, const struct policy_proc_arg *pa, struct secure_page *sp, const char *path);
#endif
