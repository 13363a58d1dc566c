#!/bin/sh
# Runs installed sandpit selftests (make kselftest-install) the way the
# kernel's tools/testing/selftests runner runs its own: the same options, the
# tests named COLLECTION:TEST in kselftest-list.txt beside this script, each
# run from its collection's directory, one TAP stream with each test's own
# output as "# " comments under its result line.  Exit status 4 is a skip,
# 124 a timeout (the collection's settings file: timeout=SECONDS).  Unlike
# the kernel's, it exits 1 when a test failed, so scripts can use it.
BASE=$(cd "$(dirname "$0")" && pwd)
LIST=$BASE/kselftest-list.txt

usage() {
	cat <<EOF
Usage: $0 [OPTIONS]
  -s | --summary                 result lines only; the tests' output goes to $BASE/output.log
  -p | --per-test-log            result lines only; each test's output goes to /tmp/TEST
  -t | --test COLLECTION:TEST    run only this test (may be repeated)
  -c | --collection COLLECTION   run only this collection's tests (may be repeated)
  -l | --list                    list the COLLECTION:TEST entries and exit
  -d | --dry-run                 say what would run, run nothing
  -o | --override-timeout SECS   timeout for each test instead of the settings file's
  -h | --help                    this text
EOF
	exit "$1"
}

summary=0
per_test=0
dry=0
tests=""
collections=""
override=""
while [ $# -gt 0 ]; do
	case "$1" in
	-s | --summary) summary=1 ;;
	-p | --per-test-log) per_test=1 ;;
	-t | --test) [ $# -gt 1 ] || usage 1; tests="$tests $2"; shift ;;
	-c | --collection) [ $# -gt 1 ] || usage 1; collections="$collections $2"; shift ;;
	-l | --list) cat "$LIST"; exit 0 ;;
	-d | --dry-run) dry=1 ;;
	-o | --override-timeout) [ $# -gt 1 ] || usage 1; override=$2; shift ;;
	-h | --help) usage 0 ;;
	*) echo "$0: unknown option: $1" >&2; usage 1 ;;
	esac
	shift
done

# the selection, in the list's order; a name that is not listed is an error
# (the kernel's runs nothing for it, which hides a typo)
for t in $tests; do
	grep -qxF "$t" "$LIST" || { echo "$0: no test $t (see -l)" >&2; exit 1; }
done
selected=$(while read -r e; do
	[ -n "$e" ] || continue
	if [ -z "$tests$collections" ]; then
		echo "$e"
		continue
	fi
	for t in $tests; do [ "$t" = "$e" ] && echo "$e"; done
	for c in $collections; do [ "$c" = "${e%%:*}" ] && echo "$e"; done
done <"$LIST" | awk '!seen[$0]++')

# reads the collection's timeout (the kernel's default is 45 s)
timeout_of() {
	if [ -n "$override" ]; then
		echo "$override"
	else
		t=$(sed -n 's/^timeout=//p' "$BASE/$1/settings" 2>/dev/null)
		echo "${t:-45}"
	fi
}

[ $summary = 0 ] || : >"$BASE/output.log"
echo "TAP version 13"
echo "1..$(echo "$selected" | grep -c .)"
n=0
pass=0
fail=0
skip=0
for e in $selected; do
	n=$((n + 1))
	c=${e%%:*}
	t=${e#*:}
	head="selftests: $c: $t"
	if [ $dry = 1 ]; then
		echo "ok $n $head # SKIP dry run"
		continue
	fi
	secs=$(timeout_of "$c")
	[ $summary = 1 ] || [ $per_test = 1 ] || echo "# $head"
	out=$(mktemp)
	(cd "$BASE/$c" && timeout -k 5 "$secs" "./$t") >"$out" 2>&1
	rc=$?
	if [ $summary = 1 ]; then
		{ echo "# $head"; sed 's/^/# /' "$out"; } >>"$BASE/output.log"
	elif [ $per_test = 1 ]; then
		cp "$out" "/tmp/$t"
	else
		sed 's/^/# /' "$out"
	fi
	rm -f "$out"
	case $rc in
	0) echo "ok $n $head"; pass=$((pass + 1)) ;;
	4) echo "ok $n $head # SKIP"; skip=$((skip + 1)) ;;
	124) echo "not ok $n $head # TIMEOUT $secs seconds"; fail=$((fail + 1)) ;;
	*) echo "not ok $n $head # exit=$rc"; fail=$((fail + 1)) ;;
	esac
done
echo "# Totals: pass:$pass fail:$fail skip:$skip"
[ $fail = 0 ]
