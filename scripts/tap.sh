# Sourced by the scripts that report plain checks as kselftest TAP
# (install-tap.sh, kselftest-tap.sh): the counter, the exit status, and one
# line a check.
n=0
rc=0
result() { # result STATUS NAME [DIAGNOSTIC FILE]: STATUS 0 is ok
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		[ -z "$3" ] || sed 's/^/# /' "$3"
		echo "not ok $n $2"
		rc=1
	fi
}
