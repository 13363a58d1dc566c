#!/bin/sh
# Runs kselftest-harness binaries as the kernel's runner does: one
# top-level TAP stream with each run's own TAP indented beneath it, then a
# last line "N passed, N failed" that counts the individual tests.
#   run-tests.sh [--modes] BIN... [--once] BIN... [--fallbacks] BIN...
# Binaries after --modes run once per sandbox mode: strict, filter (these
# two at a soft RLIMIT_NOFILE of 1024, low_nofile below), filter
# with the fallbacks for older kernels forced (no seccomp(2), no
# RET_KILL_PROCESS, no F_SEAL_FUTURE_WRITE, no pidfd), strict with the CPU's
# FSGSBASE taken away (B sets thread pointers by ptrace), and auto on a
# forced legacy kernel, which must pick strict.  After --once, once.  After
# --fallbacks, once as they are and once with FSGSBASE taken away.
# --modes=M,M... runs the binaries after it in the listed modes only (the
# kernel-matrix guests: a kernel without seccomp-bpf has no filter modes);
# mode auto is auto on the kernel as it is.  A "binary" whose output ends
# with a run's own "N passed, N failed" line (a nested run, such as
# scripts/kernels/check-kernels.sh) is counted by that line.
# A run that dies or hangs past $TEST_TIMEOUT seconds (--timeout=SECS: for
# the binaries after it) counts as failed.  RUN_TIMES=1 prints each run's
# wall time as a comment.
TIMEOUT=${TEST_TIMEOUT:-300}
runs=""
each=once
for a in "$@"; do
	case "$a" in
	--modes) each=modes; modes="strict filter old-filter no-fsgsbase legacy" ;;
	--modes=*) each=modes; modes=$(echo "${a#--modes=}" | tr , ' ') ;;
	--once) each=once ;;
	--timeout=*) runs="$runs timeout:${a#--timeout=}" ;;
	--fallbacks) each=fallbacks ;;
	*) if [ $each = modes ]; then
		for m in $modes; do runs="$runs $m:$a"; done
	   elif [ $each = fallbacks ]; then
		runs="$runs -:$a no-fsgsbase-run:$a"
	   else
		runs="$runs -:$a"
	   fi ;;
	esac
done
# strict and filter run at a soft RLIMIT_NOFILE of 1024 where the hard
# limit allows (a user's usual limit, under which sandpit's block lies
# above the program's), the other modes at the limit as inherited (a soft
# limit equal to the hard one, as a container or CI may set, puts the
# block below it): the suite sees both layouts
low_nofile() {
	h=$(ulimit -H -n)
	if [ "$h" = unlimited ] || [ "$h" -ge 4096 ]; then
		ulimit -S -n 1024
	fi
}
passed=0
failed=0
skipped=0
failures=""
n=0
total=$(echo $runs | tr ' ' '\n' | grep -vc '^timeout:')
echo "TAP version 13"
echo "1..$total"
for r in $runs; do
	case $r in timeout:*) TIMEOUT=${r#timeout:}; continue ;; esac
	n=$((n + 1))
	mode=${r%%:*}
	t=${r#*:}
	name=$(basename "$t")
	out=$(mktemp)
	t0=$(date +%s)
	case $mode in
	strict|filter) (low_nofile; SANDPIT_MODE=$mode timeout -k 5 "$TIMEOUT" "$t" >"$out" 2>&1) ;;
	auto) SANDPIT_MODE=$mode timeout -k 5 "$TIMEOUT" "$t" >"$out" 2>&1 ;;
	old-filter) SANDPIT_KERNEL=no-seccomp-syscall,no-kill-process,no-memfd-future-write,no-pidfd \
		SANDPIT_MODE=filter timeout -k 5 "$TIMEOUT" "$t" >"$out" 2>&1 ;;
	no-fsgsbase) SANDPIT_KERNEL=no-fsgsbase SANDPIT_MODE=strict \
		timeout -k 5 "$TIMEOUT" "$t" >"$out" 2>&1 ;;
	no-fsgsbase-run) SANDPIT_KERNEL=no-fsgsbase timeout -k 5 "$TIMEOUT" "$t" >"$out" 2>&1 ;;
	legacy) SANDPIT_KERNEL=legacy SANDPIT_MODE=auto timeout -k 5 "$TIMEOUT" "$t" >"$out" 2>&1 ;;
	*) timeout -k 5 "$TIMEOUT" "$t" >"$out" 2>&1 ;;
	esac
	rc=$?
	# LOWERED="TEST:VAR=N ..." (the kernel-matrix guests): the counts a
	# test runs with lowered, named in its line
	for l in ${LOWERED:-}; do
		case $l in "$name":*) name="$name (${l#*:}, count lowered)" ;; esac
	done
	# SANDPIT_TESTS_ONLY_<binary> (harness_main.h): a named part ran
	eval "only=\${SANDPIT_TESTS_ONLY_$(basename "$t" | tr -c 'A-Za-z0-9_\n' _):-}"
	[ -z "$only" ] || name="$name ($(echo $only | wc -w) named tests)"
	[ "$mode" = - ] || name="$name [$mode]"
	case $t in *build-asan/*) name="$name [asan]" ;; esac
	sed 's/^/  /' "$out"
	# RUN_TIMES=1 (the kernel-matrix guests): each run's wall time
	[ "${RUN_TIMES:-0}" = 0 ] || echo "# $name: $(($(date +%s) - t0)) s"
	if tail -n1 "$out" | grep -qE '^[0-9]+ passed, [0-9]+ failed$'; then
		p=$(tail -n1 "$out" | cut -d' ' -f1)
		f=$(tail -n1 "$out" | cut -d' ' -f3)
		k=$(sed -n 's/^# \([0-9]*\) skipped$/\1/p' "$out" | tail -n1)
		k=${k:-0}
	else
		p=$(grep -E '^ok [0-9]+' "$out" | grep -vc '# SKIP')
		k=$(grep -E '^ok [0-9]+' "$out" | grep -c '# SKIP')
		f=$(grep -cE '^not ok [0-9]+' "$out")
	fi
	skipped=$((skipped + k))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1 # crashed or timed out outside any test
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$rc" -eq 0 ]; then
		echo "ok $n selftests: $name"
	else
		echo "not ok $n selftests: $name # exit=$rc"
		# each failed test by name, repeated at the end where a reader of
		# only the last lines (CI's summary) sees it
		t_failed=$(sed -n 's/^not ok [0-9]* \(.*\)/\1/p' "$out" | tr '\n' ' ')
		why=$(grep -m1 -E '^# .*(:[0-9]+:.*Expected|terminated)' "$out")
		failures="$failures
# failed in $name: ${t_failed:-the run itself (exit=$rc)}${why:+
$why}"
	fi
	rm -f "$out"
done
[ "$skipped" -eq 0 ] || echo "# $skipped skipped"
[ -z "$failures" ] || echo "$failures" | sed 1d
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
