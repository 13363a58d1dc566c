#!/bin/sh
# real-suites.sh: run real programs' own test suites natively and under
# `sandpit run` in both modes, and print one markdown row per module with
# pass/fail/error/skip counts for each.  Not part of `make check`; it takes
# minutes.  Needs Debian's libpython3.11-testsuite (apt-get install it).
#
#   scripts/real-suites.sh [MODULE...]     (default: the list below)
#
# Environment: SANDPIT (default build/sandpit), PY (default /usr/bin/python3,
# not a pyenv shim), T (per-run timeout in seconds, default 300),
# OUT (directory for the logs, default /tmp/real-suites), TABULATE (set:
# only tabulate the logs in OUT again, run nothing).
set -u
set -f # the patterns given to regrtest are its own
SANDPIT=${SANDPIT:-$(cd "$(dirname "$0")/.." && pwd)/build/sandpit}
PY=${PY:-/usr/bin/python3}
T=${T:-300}
OUT=${OUT:-/tmp/real-suites}
MODULES=${*:-"test_json test_os test_posix test_time test_tempfile test_shutil test_pathlib test_glob test_stat test_fileio test_select test_poll test_epoll test_selectors test_fcntl test_mmap test_signal test_threading test_socket test_subprocess test_zlib test_lzma test_tarfile test_zipfile"}

mkdir -p "$OUT"
# Each run gets its own scratch directory, granted for writing; the suite
# itself only needs reading, which the default policy grants.
count() { # LOG -> "PASSED/RAN fF eE sS"
	# RAN from unittest's "Ran N tests"; PASSED from its verbose "... ok"
	# lines (an expected failure counts as a pass); the failures, errors and
	# skips from its "OK (...)"/"FAILED (...)" summary, which counts a
	# subtest's or a clean-up's failure too, so that F + E + S can exceed RAN
	awk '/^Ran [0-9]+ tests? in/ {n += $2}
	     /( \.\.\. |^)ok$/ || / \.\.\. expected failure$/ {p++}
	     /^(OK|FAILED)( \(|$)/ {
		while (match($0, /(failures|errors|skipped)=[0-9]+/)) {
			k = substr($0, RSTART, RLENGTH); split(k, a, "=")
			c[a[1]] += a[2]; $0 = substr($0, RSTART + RLENGTH)
		}
	     }
	     END {if (n == 0) {print "-"; exit}
		  printf "%d/%d", p, n
		  if (c["failures"]) printf " f%d", c["failures"]
		  if (c["errors"]) printf " e%d", c["errors"]
		  if (c["skipped"]) printf " s%d", c["skipped"]}' "$1"
}
verdict() { # LOG -> the regrtest result, and the test that hung if one did
	h=$(sed -n 's/^\([a-zA-Z0-9_]*\) (.*Timeout (.*/\1/p' "$1" | head -1)
	r=$(sed -n 's/^Tests result: //p' "$1" | tail -1)
	echo "${r:-no result}${h:+, $h hung}"
}
run() { # KIND MODULE
	d=$OUT/tmp-$1-$2; rm -rf "$d"; mkdir -p "$d"
	log=$OUT/$2.$1.log
	# Left out of every column, so that one hang does not end the module:
	# test_socket's VSOCK tests hang natively where the machine has no vsock
	# transport (a container); its test_sendall_interrupted* hang sandboxed
	# (a send blocked on a full socket is not interrupted by a signal:
	# docs/REAL_SUITES.md)
	case $2 in
	test_socket) skip='-i *VSOCK* -i *test_sendall_interrupted*' ;;
	*) skip= ;;
	esac
	case $1 in
	native) set -- env TMPDIR="$d" timeout "$T" "$PY" -m test -v --timeout 60 $skip "$2" ;;
	*) set -- env TMPDIR="$d" timeout "$T" "$SANDPIT" run --mode="$1" \
		--allow-write="$d" --log=denials -- "$PY" -m test -v --timeout 60 $skip "$2" ;;
	esac
	[ -n "${TABULATE:-}" ] || (cd "$d" && "$@") >"$log" 2>&1
	printf '%s (%s)' "$(count "$log")" "$(verdict "$log")"
}

echo "| module | native | strict | filter |"
echo "|---|---|---|---|"
for m in $MODULES; do
	n=$(run native "$m"); s=$(run strict "$m"); f=$(run filter "$m")
	echo "| $m | $n | $s | $f |"
done
