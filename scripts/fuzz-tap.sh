#!/bin/sh
# make check's bounded fuzzing runs (the policy parser, minijail's format,
# B's path resolution,
# the ELF reader as the loader and as the patcher use it, the plan
# cache's file reader)
# as TAP tests, so that scripts/run-tests.sh counts them with the rest.
#   BUILD=build SECONDS=15 scripts/fuzz-tap.sh
echo "TAP version 13"
echo "1..6"
n=0
rc=0
for f in policy minijail path elf-load elf-patch plan-file; do
	n=$((n + 1))
	if make --no-print-directory fuzz-$f BUILD="${BUILD:-build}" SECONDS="${SECONDS:-15}"; then
		echo "ok $n $(echo $f | tr - _)_fuzz for ${SECONDS:-15} s"
	else
		echo "not ok $n $(echo $f | tr - _)_fuzz (log: ${BUILD:-build}/fuzz/$(echo $f | tr - _)_fuzz.log)"
		rc=1
	fi
done
exit $rc
