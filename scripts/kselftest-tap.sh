#!/bin/sh
# make kselftest-install checked as TAP for scripts/run-tests.sh: install to
# a temporary directory, check that the installed runner lists every test in
# every mode make check runs it in, and run listed tests with it.
#   BUILD=build scripts/kselftest-tap.sh
BUILD=${BUILD:-build}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/tap.sh"
echo "TAP version 13"
echo "1..8"

make --no-print-directory -s kselftest-install BUILD="$BUILD" INSTALL_PATH="$dir/ks" >"$dir/log" 2>&1
result $? "kselftest_install_into_a_temporary_directory" "$dir/log"
run=$dir/ks/run_kselftest.sh

"$run" -l >"$dir/listed" 2>"$dir/log" && cmp -s "$dir/listed" "$dir/ks/kselftest-list.txt" &&
	[ -s "$dir/listed" ]
result $? "list_option_prints_kselftest_list" "$dir/log"

# every selftest is listed, once per mode of run-tests.sh for the mode tests
# and the fallback tests, and each entry is a program in its collection
ok=0
modes=$(sed -n 's/.*--modes) each=modes; modes="\(.*\)" ;;$/\1/p' scripts/run-tests.sh)
fallbacks=$(sed -n 's/.*runs="\$runs \(-:.*no-.*\)"$/\1/p' scripts/run-tests.sh | sed 's/:\$a//g')
[ -n "$modes" ] && [ -n "$fallbacks" ] || { echo "# cannot read the modes of run-tests.sh"; ok=1; }
for src in selftests/*_test.c; do
	t=$(basename "$src" .c)
	if grep -qx "sandpit:$t.strict" "$dir/listed"; then
		want=$modes
	elif grep -qx "sandpit:$t.no-fsgsbase-run" "$dir/listed"; then
		want=$fallbacks
	else
		want=-
	fi
	for m in $want; do
		e=sandpit:$t
		[ "$m" = - ] || e=$e.$m
		grep -qx "$e" "$dir/listed" || { echo "# $e is not listed"; ok=1; }
	done
	[ "$(grep -c "^sandpit:$t\(\.\|$\)" "$dir/listed")" -eq "$(echo $want | wc -w)" ] ||
		{ echo "# $t is listed in other modes than run-tests.sh has: $want"; ok=1; }
done
while read -r e; do
	[ -x "$dir/ks/${e%%:*}/${e#*:}" ] || { echo "# $e: no program"; ok=1; }
done <"$dir/listed"
result $ok "every_selftest_listed_in_every_mode_of_make_check"

# and each entry runs its test with the environment run-tests.sh gives that
# mode (the case arm of the mode, continuation lines joined; a lowered
# RLIMIT_NOFILE counts as the word low_nofile on both sides)
ok=0
arms=$(sed -e ':a' -e '/\\$/N; s/\\\n[[:space:]]*/ /; ta' scripts/run-tests.sh |
	sed -n 's/^[[:space:]]*\([a-z|-]*\)) \(.*\)timeout -k.*/\1 \2/p' | sed 's/(low_nofile; /low_nofile /')
[ -n "$arms" ] || { echo "# cannot read the environments of run-tests.sh"; ok=1; }
while read -r e; do
	t=${e#*:}
	m=${t#*.}
	[ "$m" != "$t" ] || m=-
	want=$(echo "$arms" | awk -v m="$m" '{ n = split($1, p, "|"); for (i = 1; i <= n; i++)
		if (p[i] == m) { for (j = 2; j <= NF; j++) print $j } }' | sed "s/\$mode/$m/" | sort)
	got=$( (sed -n 's|^exec env \(.*\) \./build/selftests/.*|\1|p' "$dir/ks/${e%%:*}/$t"
		grep -q '# low_nofile$' "$dir/ks/${e%%:*}/$t" && echo low_nofile) | tr ' ' '\n' |
		grep . | sort)
	[ "$want" = "$got" ] || { echo "# $e runs with '$(echo $got)', run-tests.sh with '$(echo $want)'"; ok=1; }
done <"$dir/listed"
result $ok "each_entry_has_the_environment_of_its_mode_in_run_tests"

# one test that runs once (it runs the installed build/sandpit), one
# sandboxed in a mode (it builds an example against the installed library):
# each test's own TAP, indented as a comment, under the runner's ok line
"$run" -t sandpit:compat_test -t sandpit:library_test.filter >"$dir/out" 2>&1
s=$?
grep -qx "1\.\.2" "$dir/out" && grep -qx "ok [12] selftests: sandpit: compat_test" "$dir/out" &&
	grep -qx "ok [12] selftests: sandpit: library_test.filter" "$dir/out" &&
	grep -qx "# ok [0-9]* global.outside_program_linked_with_libsandpit_passes_checklist" "$dir/out" &&
	grep -qx "# ok [0-9]* global.sandpit_probe_exits_0_and_follows_sandpit_kernel" "$dir/out" &&
	! grep -q "not ok" "$dir/out" && [ $s = 0 ]
result $? "installed_runner_runs_listed_tests_with_their_tap" "$dir/out"

"$run" -s -t sandpit:compat_test >"$dir/out" 2>&1
s=$?
[ $s = 0 ] && ! grep -q "^# ok" "$dir/out" && grep -qx "ok 1 selftests: sandpit: compat_test" "$dir/out" &&
	grep -q "^# ok 1 " "$dir/ks/output.log"
result $? "summary_option_prints_results_only_and_keeps_the_log" "$dir/out"

# a failing test is "not ok" and the runner's status says so
printf '#!/bin/sh\necho "TAP version 13"\nexit 1\n' >"$dir/ks/sandpit/failing"
chmod 755 "$dir/ks/sandpit/failing"
echo sandpit:failing >>"$dir/ks/kselftest-list.txt"
"$run" -t sandpit:failing >"$dir/out" 2>&1
s=$?
[ $s != 0 ] && grep -qx "not ok 1 selftests: sandpit: failing # exit=1" "$dir/out"
result $? "a_failing_test_is_not_ok" "$dir/out"

"$run" -t sandpit:no_such_test >"$dir/out" 2>&1 && { echo "# exit status 0"; false; }
s=$?
"$run" -h >"$dir/help" 2>&1 && grep -q -- "--test COLLECTION:TEST" "$dir/help" && [ $s != 0 ]
result $? "unknown_test_refused_and_help_printed" "$dir/out"
exit $rc
