#!/bin/sh
# docs/BENCHMARKS.md and docs/bench-per-call.svg from one run of
# `sandpit bench` on this machine (make bench-docs; BENCH_ARGS=--quick for a
# try that is not worth committing).  docs/ is only touched if the run worked.
set -eu
BUILD=${1:-build}
dat="$BUILD/bench-per-call.dat"
md="$BUILD/BENCHMARKS.md.new"
svg="$BUILD/bench-per-call.svg.new"
# shellcheck disable=SC2086
if ! "$BUILD/sandpit" bench --verbose --markdown --plot="$dat" ${BENCH_ARGS:-} >"$md"; then
	echo "bench-docs: sandpit bench failed; docs/ left as it was" >&2
	exit 1
fi
# the system-call counts need root (BPF); without it the tables say so
if grep -q "not counted (" "$md"; then
	echo "bench-docs: system calls not counted: $(grep -o 'not counted ([^)]*)' "$md" | head -1)" >&2
fi
gnuplot -e "data='$dat'; out='$svg'" scripts/bench-per-call.gp
mv "$svg" docs/bench-per-call.svg
mv "$md" docs/BENCHMARKS.md
echo "bench-docs: wrote docs/BENCHMARKS.md and docs/bench-per-call.svg"
