#!/bin/sh
# Runs each kselftest-harness binary given, as the kernel's runner does:
# one top-level TAP stream with each binary's own TAP indented beneath it,
# then a last line "N passed, N failed" that counts the individual tests.
# A binary that dies or hangs past $TEST_TIMEOUT seconds counts as failed.
TIMEOUT=${TEST_TIMEOUT:-300}
passed=0
failed=0
n=0
echo "TAP version 13"
echo "1..$#"
for t in "$@"; do
	n=$((n + 1))
	name=$(basename "$t")
	out=$(mktemp)
	timeout -k 5 "$TIMEOUT" "$t" >"$out" 2>&1
	rc=$?
	sed 's/^/  /' "$out"
	p=$(grep -cE '^ok [0-9]+' "$out")
	f=$(grep -cE '^not ok [0-9]+' "$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1 # crashed or timed out outside any test
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$rc" -eq 0 ]; then
		echo "ok $n selftests: $name"
	else
		echo "not ok $n selftests: $name # exit=$rc"
	fi
	rm -f "$out"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
