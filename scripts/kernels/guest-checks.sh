#!/bin/sh
# guest-checks.sh KIND: the checks of a kernel-matrix guest that are not
# selftests, as kselftest TAP (run inside the guest by the script
# check-kernels.sh writes).  KIND is strict-only or stock.
#  strict-only: the kernel really has no seccomp-bpf -- the probe reports
#    filter and what needs it absent (not forced-off), auto picks strict,
#    `sandpit run --mode=filter` fails with one line and status 125, and
#    strict mode runs real programs;
#  both: a 32-bit static program runs (the host this suite was written on
#    cannot run one; these guests have IA32_EMULATION).
. "$(dirname "$0")/../tap.sh"
B=${BUILD:-build}
kind=$1
t=$(mktemp -d)
echo "TAP version 13"

"$B/sandpit" probe >"$t/probe" 2>&1
result $? "$kind: sandpit probe runs" "$t/probe"
if [ "$kind" = strict-only ]; then
	bad=""
	for f in filter tsync actions-avail kill-process ret-trap ret-log user-notif; do
		awk -v f="$f" '$1 == f && $2 == "absent" { ok = 1 } END { exit !ok }' "$t/probe" || bad="$bad $f"
	done
	[ -z "$bad" ] || echo "# not absent:$bad"
	[ -z "$bad" ]
	result $? "$kind: probe reports filter and every feature built on it absent" "$t/probe"

	"$B/sandpit" run --mode=filter -- /bin/true >"$t/out" 2>"$t/err"
	st_rc=$?
	[ "$st_rc" = 125 ] && [ "$(wc -l <"$t/err")" = 1 ] && [ ! -s "$t/out" ]
	st=$?
	echo "# status $st_rc, stderr: $(cat "$t/err")"
	result $st "$kind: sandpit run --mode=filter exits 125 with one line" "$t/err"

	for m in auto strict; do
		"$B/sandpit" run --mode=$m -- /bin/echo "ran in $m" >"$t/out" 2>"$t/err"
		[ "$(cat "$t/out")" = "ran in $m" ]
		result $? "$kind: sandpit run --mode=$m runs a program (no filter to pick)" "$t/err"
	done

	# busybox-static: a static program run under the sandbox in strict mode
	"$B/sandpit" run --mode=strict -- /bin/busybox sh -c 'echo $((6 * 7))' >"$t/out" 2>"$t/err"
	[ "$(cat "$t/out")" = 42 ]
	result $? "$kind: sandpit run --mode=strict of busybox-static" "$t/err"
fi

"$B/kernels/hello32" >"$t/out" 2>&1
[ "$(cat "$t/out")" = "i386 ok" ]
result $? "$kind: a gcc -m32 -static program runs" "$t/out"
rm -rf "$t"
exit $rc
