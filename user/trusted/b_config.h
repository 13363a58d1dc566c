/* The configuration the trusted process B is started with: filled by
 * start-up in P (user/start/sandbox.c).  B makes its record of P from the
 * fields that are P's (user/trusted/b_state.h, struct b_proc) and reads
 * the rest, the tree's, through b_cfg. */
#ifndef SANDPIT_B_CONFIG_H
#define SANDPIT_B_CONFIG_H
#include <stdint.h>
#include <sys/types.h>

struct mailbox;
struct secure_page;
struct sigtab;
struct policy;

struct trusted_process_config {
	pid_t pid;                  /* P */
	int fd;                     /* B's end of the socket pair: P's end hangs up when P ends */
	int pass_fd, pass_peer;     /* B's end of the descriptor hand-over (SP_V_RECV), and P's (B closes it) */
	int fd_lo, fd_hi;           /* P's sandpit descriptors: B closes its copies */
	int nslots;                 /* slots that fit sandpit's descriptor block (user/layout/slots.h) */
	struct secure_page *sp;     /* SM_NSLOTS secure pages, read-write in B */
	struct mailbox *mb;         /* SM_NSLOTS mailboxes */
	const struct policy *policy;
	struct sigtab *sigtab;      /* the program's own handlers */
	int fs_by_ptrace;           /* strict mode without FSGSBASE: B sets U's FS base */
	uint64_t task_size;         /* the kernel's TASK_SIZE_MAX (fs_base_task_size) */
	int log, log_json;          /* --log=denials, --log-format=json: B explains refusals */
	int report_fd;              /* the command's count of refusals (denial_log.h), or -1 */
	int exe_fd;                 /* under `sandpit run`, the program's file as the loader opened
				     * it, read-only (b_exe.c): B's /proc/self/exe answers; or -1 */
	/* the notifier N (user/start/notifier.h): the listener of its
	 * filter, the notification it waits in, its pid; -1 where every
	 * slot's eventfds were made at start-up */
	int notif_fd;
	uint64_t notif_id;
	int32_t notif_pid;
	int slots_made;             /* slots whose eventfds P has as B starts */
};
#endif
