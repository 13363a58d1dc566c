#!/bin/sh
# make check's bounded fuzzing run of the policy parser as one TAP test, so
# that scripts/run-tests.sh counts it with the rest.
#   BUILD=build SECONDS=15 scripts/fuzz-tap.sh
echo "TAP version 13"
echo "1..1"
if make --no-print-directory fuzz-policy BUILD="${BUILD:-build}" SECONDS="${SECONDS:-15}"; then
	echo "ok 1 policy_fuzz for ${SECONDS:-15} s"
else
	echo "not ok 1 policy_fuzz (log: ${BUILD:-build}/fuzz/policy_fuzz.log)"
	exit 1
fi
