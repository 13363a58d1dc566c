#!/bin/sh
# soak.sh: the race- and signal-heavy selftests and the real-program
# checks, over and over, in every mode and fallback (run-tests.sh's), under
# changing conditions, for SOAK_MINUTES (default 10).  Not part of
# `make check`.  No retry: a test that fails once is a bug.
#
# Each step runs one test binary through run-tests.sh (all five modes for
# the mode tests, both fallbacks for the run_*_test binaries and
# no_unwind_test) under one condition: once_test every other step, the
# rest in turn between, the conditions rotating so that every pair comes
# round:
#   quiet   nothing else running
#   busy    one busy loop per CPU beside the tests
#   cpu0    the whole run pinned to CPU 0 (taskset -c 0): U, T and B share it
#   nobody  as an ordinary user (needs the tree readable by nobody; only
#           when run as root, otherwise the runs are already an ordinary user's)
# SANDPIT_KERNEL=legacy is run-tests.sh's legacy mode, in every condition.
#
# Output: one line per failure, "FAIL test [mode] (condition): first failed
# expectation", then the steps run per binary, the sum per mode of
# once_test's "# calls N landed N wrong N" lines, and last "N passed, N
# failed" (individual tests, as run-tests.sh counts them).  Exit 0 only
# when none failed.
#
# Environment: SOAK_MINUTES (or SOAK_SECONDS); a step begun before the
# time is up runs to its end, so a soak can last one step longer (a
# run_*_test step takes up to ~3 minutes); SOAK_ONCE_CALLS (once_test's
# calls per run, default sized so that 60 minutes make >= 10 M per mode; a
# twentieth of it is once_test's raises, SANDPIT_ONCE_RAISES);
# SOAK_TESTS (binaries, default below); SOAK_CONDITIONS; SOAK_LOG (a
# directory that keeps each step's full output; default a temporary one,
# kept only when something failed); BUILD (default build).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
MINUTES=${SOAK_MINUTES:-10}
# once_test makes 50-100 k calls/s per mode on a quiet 2-CPU machine, a
# third of that under a busy loop per CPU: 1 M calls take 1.5-5 minutes for
# its five modes, and it runs every other step, so 60 minutes make about
# 10-20 M calls per mode
# (shorter soaks make shorter runs: 100 k calls per minute of soak, at most 1 M)
ONCE_CALLS=${SOAK_ONCE_CALLS:-$((MINUTES < 10 ? MINUTES * 100000 : 1000000))}
MODE_BINS="threads_test threads_signal_test signals_test signals_pending_test signals_mask_test \
eintr_test slots_test core_test core_cpu_test core_request_test core_signal_test once_test fault_test"
FALLBACK_BINS="run_test run_command_test run_attack_test run_tiny_test run_plan_cache_test no_unwind_test"
TESTS=${SOAK_TESTS:-"$MODE_BINS $FALLBACK_BINS"}
CONDITIONS=${SOAK_CONDITIONS:-"quiet busy cpu0 nobody"}
[ "$(id -u)" -eq 0 ] || CONDITIONS=$(echo "$CONDITIONS" | sed 's/nobody//')
LOG=${SOAK_LOG:-$(mktemp -d /tmp/sandpit-soak.XXXXXX)}
mkdir -p "$LOG"
chmod 755 "$LOG"

for t in $TESTS; do
	[ -x "$BUILD/selftests/$t" ] || { echo "soak: $BUILD/selftests/$t missing (make tests)" >&2; exit 2; }
done
set -- $CONDITIONS
nconds=$#

nth() { # N WORDS... -> the Nth word (0-based)
	i=$1; shift; shift "$i"; echo "$1"
}

busy_pids=""
busy_start() {
	for _ in $(seq "$(nproc)"); do
		sh -c 'while :; do :; done' &
		busy_pids="$busy_pids $!"
	done
}
busy_stop() {
	for p in $busy_pids; do kill "$p" 2>/dev/null; done
	for p in $busy_pids; do wait "$p" 2>/dev/null; done
	busy_pids=""
}
trap 'busy_stop; exit 130' INT TERM

# run-tests.sh for one binary under one condition: its output in $2
run_step() { # BIN COND OUT
	bin=$BUILD/selftests/$1
	case " $FALLBACK_BINS " in
	*" $1 "*) set -- "$1" "$2" "$3" --fallbacks ;;
	*) set -- "$1" "$2" "$3" --modes ;;
	esac
	env="BUILD=$BUILD SANDPIT_ONCE_CALLS=$ONCE_CALLS SANDPIT_ONCE_RAISES=$((ONCE_CALLS / 20)) TEST_TIMEOUT=${TEST_TIMEOUT:-900}"
	case $2 in
	busy) busy_start
	      env $env ./scripts/run-tests.sh "$4" "$bin" >"$3" 2>&1
	      busy_stop ;;
	cpu0) env $env taskset -c 0 ./scripts/run-tests.sh "$4" "$bin" >"$3" 2>&1 ;;
	nobody) env $env HOME=/tmp setpriv --reuid=nobody --regid=nogroup --clear-groups \
			./scripts/run-tests.sh "$4" "$bin" >"$3" 2>&1 ;;
	*) env $env ./scripts/run-tests.sh "$4" "$bin" >"$3" 2>&1 ;;
	esac
}

# One line per failed test of a run-tests.sh output: the test, its mode,
# the condition, and its first failed expectation (the harness's
# "file:line:test:Expected ..." line, or how the run ended).  Its output is
# indented two spaces under each "ok/not ok N selftests: BIN [mode]" line.
failures() { # OUT COND
	awk -v cond="$2" '
	/^  #  RUN / { first = "" }
	/^  # .*:[0-9]+:.*(Expected|terminated|timeout|Timed out)/ && first == "" {
		first = substr($0, 5)
	}
	/^  not ok [0-9]+ / { sub(/^  not ok [0-9]+ /, ""); failed[++nf] = $0 " : " (first == "" ? "(no expectation printed)" : first); first = "" }
	/^(ok|not ok) [0-9]+ selftests: / {
		run = $0; sub(/^(ok|not ok) [0-9]+ selftests: /, "", run); sub(/ # exit=.*/, "", run)
		if ($1 == "not" && nf == 0)
			printf "FAIL %s (%s): the run itself ended %s%s\n", run, cond, $NF,
			       first == "" ? "" : " : " first
		for (i = 1; i <= nf; i++)
			printf "FAIL %s (%s): %s\n", run, cond, failed[i]
		nf = 0; first = ""
	}' "$1"
}

# once_test's counts, by mode: "MODE calls landed wrong"
once_counts() { # OUT
	awk '/^  # calls [0-9]+ landed [0-9]+ wrong [0-9]+$/ { c = $3; l = $5; w = $7 }
	     /^(ok|not ok) [0-9]+ selftests: once_test / {
		m = $0; sub(/.*\[/, "", m); sub(/\].*/, "", m)
		if (c != "") print m, c, l, w
		c = ""
	     }' "$1"
}

end=$(($(date +%s) + ${SOAK_SECONDS:-$((MINUTES * 60))}))
passed=0
failed=0
step=0
: >"$LOG/once"
: >"$LOG/steps"
echo "soak: $MINUTES minutes, tests: $TESTS; conditions: $CONDITIONS; once_test calls per run: $ONCE_CALLS; logs in $LOG"
# once_test every other step (its calls per mode add up to the target),
# the other binaries in turn between; each binary meets the conditions in
# turn (shifted by one each round, so no binary keeps one condition)
case " $TESTS " in *" once_test "*) once=1 ;; *) once=0 ;; esac
others=$(echo " $TESTS " | sed 's/ once_test / /')
set -- $others
nothers=$#
o=0 j=0
while [ "$(date +%s)" -lt "$end" ]; do
	if [ $once = 1 ] && { [ $((step % 2)) = 0 ] || [ "$nothers" = 0 ]; }; then
		t=once_test
		c=$(nth $((o % nconds)) $CONDITIONS)
		o=$((o + 1))
	else
		t=$(nth $((j % nothers)) $others)
		c=$(nth $(((j + j / nothers) % nconds)) $CONDITIONS)
		j=$((j + 1))
	fi
	out=$LOG/$step.$t.$c
	t0=$(date +%s)
	run_step "$t" "$c" "$out"
	secs=$(($(date +%s) - t0))
	p=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$out" | tail -1)
	f=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$out" | tail -1)
	if [ -z "$p" ]; then
		p=0 f=1
		echo "FAIL $t ($c): run-tests.sh gave no count"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	failures "$out" "$c"
	once_counts "$out" >>"$LOG/once"
	echo "$t $c $secs" >>"$LOG/steps"
	[ "$f" -ne 0 ] || [ -n "${SOAK_LOG:-}" ] || rm -f "$out"
	step=$((step + 1))
done
echo "# steps: $step; runs of each binary (every mode each time), seconds, conditions:"
awk '{n[$1]++; s[$1] += $3; c[$1] = c[$1] " " $2}
     END {for (t in n) printf "#   %s %d runs %ds:%s\n", t, n[t], s[t], c[t]}' "$LOG/steps" | sort
echo "# once_test by mode: calls landed wrong"
awk '{c[$1] += $2; l[$1] += $3; w[$1] += $4; r[$1]++}
     END {for (m in c) printf "#   %s: calls %d landed %d wrong %d (%d runs)\n", m, c[m], l[m], w[m], r[m]}' "$LOG/once" | sort
[ "$failed" -ne 0 ] || [ -n "${SOAK_LOG:-}" ] || rm -rf "$LOG"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
