#!/bin/sh
# check-kernels.sh: the kernel matrix (docs/KERNELS.md).  Boots each test
# kernel under qemu (TCG), runs the part of the suite that kernel decides
# in the guest, and prints one kselftest TAP stream, each guest's own run
# indented beneath its line, with the last line "N passed, N failed" over
# every test of every guest -- the form scripts/run-tests.sh nests.
#   BUILD=build [MODE_TESTS="..."] [ONCE_TESTS="..."] check-kernels.sh [strict-only] [stock]
# Each guest runs a named subset of the mode tests (STRICT_ONLY_TESTS,
# STOCK_TESTS below; docs/KERNELS.md says why these); MODE_TESTS (paths)
# replaces both, ONCE_TESTS the tests run once (run_test run_command_test
# run_attack_test compat_test).
# A guest that hangs is killed after $GUEST_TIMEOUT seconds and fails, as
# does a kernel not found or made within $KERNEL_TIMEOUT seconds.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
B=$(cd "${BUILD:-build}" && pwd)
# the source tree, shared on its own too: the host root's share does not
# show it when it lies where the guest mounts a tmpfs (a clone in /tmp)
T=$(cd "$(dirname "$0")/../.." && pwd)
K="$B/kernels"
GUEST_TIMEOUT=${GUEST_TIMEOUT:-1200}
KERNEL_TIMEOUT=${KERNEL_TIMEOUT:-2400}
# TCG runs the tests 3-8 times slower than the host: stretch every
# per-test timeout (harness_main.h) and per-binary timeout to match
SCALE=${GUEST_TIMEOUT_SCALE:-8}
kernels=${*:-strict-only stock}
# The mode tests each guest runs: those whose outcome depends on what the
# kernel has (seccomp's modes, FSGSBASE, the FS base set by ptrace,
# landlock's ABI, the fallbacks for what 6.1 lacks) and the attacks on
# sandpit's invariants that go through them.  The rest of the suite does
# not ask the kernel more than these do, runs on the host in make check
# (in every mode, real and forced fallbacks), and under TCG would take
# hours (docs/KERNELS.md: the subsets and the times)
STRICT_ONLY_TESTS=${STRICT_ONLY_TESTS-calls_test decided_calls_test secrets_test signals_test signals_pending_test
	signals_mask_test threads_test threads_signal_test invariants_test api_test core_test core_cpu_test
	core_request_test core_signal_test}
STOCK_TESTS=${STOCK_TESTS-calls_test decided_calls_test secrets_test signals_test signals_pending_test
	signals_mask_test threads_test threads_signal_test}
# run_test, run_command_test and run_attack_test, once in each guest, run
# a named part of their tests (SANDPIT_TESTS_ONLY_<binary>, harness_main.h):
# real programs, sandpit's own statuses and every attack program on
# strict-only, where strict mode is all there is; a few real programs and
# attacks in both modes on stock
RUN_ATTACKS="attack_raw_syscall_write attack_libc_write_outside_grants attack_int80_and_x32
	attack_execve_socket_fork attack_signal_to_another_process
	trusted_process_is_no_child_the_program_can_wait_for attack_sandpit_memory
	attack_raw_clone_and_clone3 attack_sandpit_descriptors attack_toctou_path_flip"
STRICT_ONLY_RUN=${STRICT_ONLY_RUN-true_false_echo ls_la python3_plain sqlite3_memory
	busybox_static_applets coreutils_in_a_write_grant coreutils_outside_the_write_grants_change_nothing
	exit_status_and_signal}
STRICT_ONLY_RUN_COMMAND=${STRICT_ONLY_RUN_COMMAND-own_errors_have_their_own_status
	root_reads_no_shadow_and_holds_no_capability}
STRICT_ONLY_RUN_ATTACK=${STRICT_ONLY_RUN_ATTACK-$RUN_ATTACKS}
STOCK_RUN=${STOCK_RUN-true_false_echo python3_plain sqlite3_memory busybox_static_applets}
STOCK_RUN_COMMAND=${STOCK_RUN_COMMAND-}
STOCK_RUN_ATTACK=${STOCK_RUN_ATTACK-attack_raw_syscall_write attack_int80_and_x32 attack_sandpit_memory
	attack_toctou_path_flip}
# Two loops too long for TCG run shorter in the guests, and say so in
# their TAP lines: signals_test's storm (50000 calls on the host) and
# threads_signal_test's calls under nested signal handlers (20000)
STORM_CALLS=${STORM_CALLS:-500}
NESTED_CALLS=${NESTED_CALLS:-4000}
paths() { for t in "$@"; do printf ' %s' "$B/selftests/$t"; done; }
mkdir -p "$K"

passed=0
failed=0
skipped=0
n=0
failures=""
echo "TAP version 13"
echo "1..$(($(echo $kernels | wc -w) * 2))"
line() { # STATUS NAME [WHY]
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n kernels: $2"
		passed=$((passed + 1))
	else
		echo "not ok $n kernels: $2"
		failed=$((failed + 1))
		failures="$failures
# failed: kernels: $2${3:+ ($3)}"
	fi
}

gcc -m32 -static -O2 -o "$K/hello32" "$HERE/hello32.c" || echo "# cannot build hello32 (gcc-multilib)"

initramfs() { # KIND KERNELDIR -> $K/KIND/initramfs.gz
	d="$K/$1/root"
	rm -rf "$d"
	mkdir -p "$d/bin" "$d/proc" "$d/sys" "$d/dev" "$d/mnt" "$d/modules"
	cp /bin/busybox "$d/bin/busybox"
	cp "$HERE/init" "$d/init"
	[ ! -d "$2/modules" ] || cp "$2"/modules/* "$d/modules/"
	(cd "$d" && find . | cpio -o -H newc --quiet | gzip -1) >"$K/$1/initramfs.gz"
}

# what the guest runs, per kernel: MODES and the selftests in them
guest_script() { # KIND
	case $1 in
	strict-only) run_only=$STRICT_ONLY_RUN run_command_only=$STRICT_ONLY_RUN_COMMAND
		run_attack_only=$STRICT_ONLY_RUN_ATTACK ;;
	stock) run_only=$STOCK_RUN run_command_only=$STOCK_RUN_COMMAND run_attack_only=$STOCK_RUN_ATTACK ;;
	esac
	# the run_*_test binaries with a named part in this guest
	run_bins=
	[ -z "$run_only" ] || run_bins="$run_bins $B/selftests/run_test"
	[ -z "$run_command_only" ] || run_bins="$run_bins $B/selftests/run_command_test"
	[ -z "$run_attack_only" ] || run_bins="$run_bins $B/selftests/run_attack_test"
	case $1 in
	strict-only)
		# no seccomp-bpf: every mode test in strict mode (FSGSBASE is
		# off for real: nofsgsbase and a CPU without it), calls_test
		# again in auto on the real kernel (it must pick strict), and
		# `sandpit run` of real programs
		tests="--modes=strict ${MODE_TESTS-$(paths $STRICT_ONLY_TESTS)} --modes=auto $B/selftests/calls_test \
			--once ${ONCE_TESTS-$run_bins $B/selftests/compat_test} $HERE/guest-checks.sh" ;;
	stock)
		tests="--modes=strict,filter ${MODE_TESTS-$(paths $STOCK_TESTS)} \
			--once ${ONCE_TESTS-$run_bins $B/selftests/compat_test} $HERE/guest-checks.sh" ;;
	esac
	cat >"$K/$1/run.sh" <<EOS
# written by check-kernels.sh; run inside the $1 guest
cd "$ROOT" || exit 1
echo "# guest kernel: \$(uname -r), \$(nproc) CPUs, \$(grep -o -m1 ' la57' /proc/cpuinfo || echo 'no la57'), \$(grep -o -m1 ' fsgsbase' /proc/cpuinfo || echo 'no fsgsbase')"
"$B/sandpit" probe | sed 's/^/# probe: /'
export RUN_TIMES=1 BUILD="$B" SANDPIT_TEST_TIMEOUT_SCALE=$SCALE TEST_TIMEOUT=$((300 * SCALE))
export SANDPIT_STORM_CALLS=$STORM_CALLS SANDPIT_NESTED_CALLS=$NESTED_CALLS
export SANDPIT_TESTS_ONLY_run_test="$(echo $run_only)"
export SANDPIT_TESTS_ONLY_run_command_test="$(echo $run_command_only)"
export SANDPIT_TESTS_ONLY_run_attack_test="$(echo $run_attack_only)"
export LOWERED="signals_test:SANDPIT_STORM_CALLS=$STORM_CALLS threads_signal_test:SANDPIT_NESTED_CALLS=$NESTED_CALLS"
exec sh "$ROOT/scripts/run-tests.sh" $tests
EOS
	# guest-checks.sh takes the kind as its argument through run-tests.sh's
	# plain argv: pass it by a wrapper
	sed -i "s|$HERE/guest-checks.sh|$K/$1/checks.sh|" "$K/$1/run.sh"
	printf '#!/bin/sh\nexec sh %s %s\n' "$HERE/guest-checks.sh" "$1" >"$K/$1/checks.sh"
	chmod +x "$K/$1/checks.sh"
}

boot() { # KIND KERNELDIR
	case $1 in
	# a CPU without FSGSBASE, and nofsgsbase: B sets FS by ptrace for real
	strict-only) cpu="-cpu max,-fsgsbase"; extra="nofsgsbase" ;;
	# -cpu max: FSGSBASE and 5-level paging (LA57) on
	stock) cpu="-cpu max"; extra="" ;;
	esac
	rm -f "$K/$1/console.log" "$K/$1/tap"
	start=$(date +%s)
	timeout -k 10 "$GUEST_TIMEOUT" qemu-system-x86_64 -machine q35 -m 3072 -smp 2 $cpu \
		-display none -no-reboot -nic none \
		-kernel "$2/kernel" -initrd "$K/$1/initramfs.gz" \
		-append "console=ttyS0 panic=-1 mitigations=off $extra sandpit.run=$K/$1/run.sh sandpit.build=$B sandpit.tree=$T" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs local,path="$T",mount_tag=tree,security_model=none,readonly=on,multidevs=remap \
		-virtfs local,path="$B",mount_tag=build,security_model=none,multidevs=remap \
		-serial "file:$K/$1/console.log" -serial "file:$K/$1/tap" </dev/null >"$K/$1/qemu.log" 2>&1
	echo $? >"$K/$1/qemu.rc"
	echo "# $1: guest ran $(($(date +%s) - start)) s"
}

# probe rows "feature state fallback" of a probe listing
rows() { sed -n 's/^\(# probe: \)\{0,1\}\([a-z0-9-]*\)  *\(present\|absent\|forced-off\)  *\(.*\)$/\2 \3 \4/p' "$1"; }

agree() { # KIND: the host's simulation of the kernel against the real one
	g="$K/$1/probe.guest"
	h="$K/$1/probe.host"
	rows "$K/$1/tap" >"$g"
	if [ ! -s "$g" ]; then
		line 1 "$1: probe agrees with the host's simulation" "no probe from the guest"
		return
	fi
	if [ "$1" = strict-only ]; then
		sim=legacy
	else
		sim=$(awk '$2 == "absent" { printf "%sno-%s", s, $1; s = "," }' "$g")
	fi
	SANDPIT_KERNEL=$sim "$B/sandpit" probe >"$K/$1/probe.host.txt" 2>&1
	rows "$K/$1/probe.host.txt" >"$h"
	"$B/sandpit" probe >"$K/$1/probe.native.txt" 2>&1
	bad=0
	while read -r f st fb; do
		hl=$(awk -v f="$f" '$1 == f' "$h")
		hst=$(echo "$hl" | cut -d' ' -f2)
		hfb=$(echo "$hl" | cut -d' ' -f3-)
		if [ "$st" = absent ]; then
			# absent for real: the simulation turns it off and falls back
			# the same way
			if [ "$hst" != forced-off ] && [ "$hst" != absent ]; then
				echo "# $f: absent on $1, $hst with SANDPIT_KERNEL=$sim"; bad=1
			elif [ "$hfb" != "$fb" ]; then
				echo "# $f: fallback on $1: $fb; simulated: $hfb"; bad=1
			fi
		elif [ "$hst" = forced-off ]; then
			# the strict-only kernel is a 6.1: newer than the pre-3.5
			# kernels `legacy` stands for, it has what 6.1 has
			echo "# $f: present on $1, forced off by SANDPIT_KERNEL=$sim"
		fi
	done <"$g"
	line $bad "$1: probe agrees feature by feature with SANDPIT_KERNEL=${sim:-''} on the host"
}

for kind in $kernels; do
	# a kernel made from scratch takes about 11 minutes on 2 CPUs
	dir=$(timeout -k 10 "$KERNEL_TIMEOUT" "$HERE/kernel.sh" "$kind" 2>"$K/kernel-$kind.log")
	sed 's/^/# /' "$K/kernel-$kind.log"
	if [ -z "$dir" ] || [ ! -s "$dir/kernel" ]; then
		line 1 "$kind: guest suite" "no kernel"
		line 1 "$kind: probe agrees with the host's simulation" "no kernel"
		continue
	fi
	mkdir -p "$K/$kind"
	initramfs "$kind" "$dir"
	guest_script "$kind"
	# REUSE_TAP=1: read the results of the last boot again, boot nothing
	[ "${REUSE_TAP:-0}" = 1 ] && [ -s "$K/$kind/tap" ] || boot "$kind" "$dir"
	sed 's/^/  /' "$K/$kind/tap"
	last=$(tail -n1 "$K/$kind/tap")
	if echo "$last" | grep -qE '^[0-9]+ passed, [0-9]+ failed$'; then
		p=$(echo "$last" | cut -d' ' -f1)
		f=$(echo "$last" | cut -d' ' -f3)
		k=$(sed -n 's/^# \([0-9]*\) skipped$/\1/p' "$K/$kind/tap" | tail -n1)
		skipped=$((skipped + ${k:-0}))
		# the guest's tests count one by one, not its line here
		passed=$((passed + p))
		failed=$((failed + f))
		n=$((n + 1))
		if [ "$f" = 0 ]; then
			echo "ok $n kernels: $kind: guest suite, $p passed"
		else
			echo "not ok $n kernels: $kind: guest suite, $f failed"
			failures="$failures
$(sed -n 's/^# failed in /# failed in ['"$kind"'] /p' "$K/$kind/tap")"
		fi
	else
		echo "# $kind: no summary from the guest (qemu status $(cat "$K/$kind/qemu.rc" 2>/dev/null)); console:"
		tail -n 30 "$K/$kind/console.log" | sed 's/^/#   /'
		line 1 "$kind: guest suite" "the guest did not finish"
	fi
	agree "$kind"
done
[ "$skipped" -eq 0 ] || echo "# $skipped skipped"
[ -z "$failures" ] || echo "$failures" | sed 1d
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
