/* Build time: the filter of sandpit's notifier N
 * (user/start/notifier.c), made by libseccomp: getppid waits for B
 * (SECCOMP_RET_USER_NOTIF), exit and one FUTEX_WAKE_PRIVATE run, anything
 * else, or another architecture, kills the process.
 *   gen_notifier OUT */
#include <fcntl.h>
#include <linux/futex.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char tmp[4096];
	if (argc != 2 || snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]) >= (int)sizeof(tmp)) {
		fprintf(stderr, "usage: gen_notifier OUT\n");
		return 2;
	}
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int rc = ctx ? 0 : -1, fd = -1;
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(getppid), 0);
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(exit), 0);
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(futex), 1,
				      SCMP_A1(SCMP_CMP_EQ, FUTEX_WAKE_PRIVATE));
	if (!rc && (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		rc = -1;
	if (!rc)
		rc = seccomp_export_bpf(ctx, fd);
	if (fd >= 0 && close(fd) < 0)
		rc = -1;
	if (!rc && rename(tmp, argv[1]) < 0)
		rc = -1;
	if (rc) {
		fprintf(stderr, "gen_notifier: %s: %s\n", argv[1], rc < -1 ? strerror(-rc) : "failed");
		unlink(tmp);
	}
	if (ctx)
		seccomp_release(ctx);
	return rc ? 1 : 0;
}
