#!/bin/sh
# make kselftest-install: lays the selftests out as the kernel's
# `make -C tools/testing/selftests install` does, for run_kselftest.sh.
#   kselftest-install.sh BUILD INSTALL_PATH [--modes] BIN... [--once] BIN... [--fallbacks] BIN...
# The lists are make check's (scripts/run-tests.sh): every test after
# --modes gets one entry per sandbox mode, NAME.MODE, with the environment
# run-tests.sh gives that mode; after --fallbacks, NAME and
# NAME.no-fsgsbase-run.  Each entry is a small script in the collection
# directory INSTALL_PATH/sandpit; the binaries sit beneath it in build/,
# beside what they find at run time from their own path (build_dir.h:
# build/sandpit, build/selftests/attack_* and unwind_read, policy/default.policy, and
# library_test's examples/ and include/).
set -eu
BUILD=$1
DIR=$2
shift 2
col=$DIR/sandpit

rm -rf "$col"
mkdir -p "$col/build/selftests" "$col/examples" "$col/include" "$col/policy"
cp -P "$BUILD"/sandpit "$BUILD"/bench_static_true "$BUILD"/libsandpit.so* "$col/build/"
cp "$BUILD/selftests/attack_dyn" "$BUILD/selftests/attack_static" "$BUILD/selftests/unwind_read" \
	"$BUILD/selftests/tiny" \
	"$col/build/selftests/"
cp examples/*.c examples/*.h "$col/examples/"
cp include/sandpit.h "$col/include/"
cp policy/default.policy "$col/policy/"
cp scripts/run_kselftest.sh "$DIR/run_kselftest.sh"
chmod 755 "$DIR/run_kselftest.sh"
echo "timeout=${TEST_TIMEOUT:-300}" >"$col/settings"
list=$DIR/kselftest-list.txt
: >"$list"

# entry NAME BIN [low_nofile] [VAR=VALUE...]: the script the runner calls
# as sandpit:NAME; low_nofile lowers the soft RLIMIT_NOFILE to 1024 first
# where the hard limit allows, as run-tests.sh does for strict and filter
entry() {
	name=$1
	bin=$2
	shift 2
	low=
	if [ "${1:-}" = low_nofile ]; then
		low='h=$(ulimit -H -n); { [ "$h" = unlimited ] || [ "$h" -ge 4096 ]; } && ulimit -S -n 1024 # low_nofile'
		shift
	fi
	cat >"$col/$name" <<EOF
#!/bin/sh
# $bin${1:+ with $*}, as make check runs it
cd "\$(dirname "\$0")" || exit 1
$low
exec env $* ./build/selftests/$bin "\$@"
EOF
	chmod 755 "$col/$name"
	echo "sandpit:$name" >>"$list"
}

# the environment of each mode of scripts/run-tests.sh (kselftest-tap.sh
# checks that the two have the same modes, each with the same environment)
each=once
for a in "$@"; do
	case "$a" in
	--modes | --once | --fallbacks) each=${a#--}; continue ;;
	esac
	t=$(basename "$a")
	cp "$a" "$col/build/selftests/$t"
	case $each in
	modes)
		entry "$t.strict" "$t" low_nofile SANDPIT_MODE=strict
		entry "$t.filter" "$t" low_nofile SANDPIT_MODE=filter
		entry "$t.old-filter" "$t" \
			SANDPIT_KERNEL=no-seccomp-syscall,no-kill-process,no-memfd-future-write,no-pidfd \
			SANDPIT_MODE=filter
		entry "$t.no-fsgsbase" "$t" SANDPIT_KERNEL=no-fsgsbase SANDPIT_MODE=strict
		entry "$t.legacy" "$t" SANDPIT_KERNEL=legacy SANDPIT_MODE=auto
		;;
	fallbacks)
		entry "$t" "$t"
		entry "$t.no-fsgsbase-run" "$t" SANDPIT_KERNEL=no-fsgsbase
		;;
	*) entry "$t" "$t" ;;
	esac
done
echo "kselftest-install: $(wc -l <"$list") tests in $DIR (run $DIR/run_kselftest.sh)"
