#!/bin/sh
# Installs what a fresh Debian 12 machine lacks to build and test sandpit,
# and extracts the kernel's kselftest harness into build/include/.
set -eu
BUILD=${1:-build}
PKGS="build-essential libseccomp-dev libzydis-dev libzycore-dev libbpf-dev libelf-dev zlib1g-dev linux-libc-dev clang libclang-rt-dev bpftool gcc-multilib pkg-config xz-utils\
      busybox-static sqlite3 jq bc python3 perl gnuplot-nox golang-go gdb nodejs git curl"
PKGS="$PKGS cppcheck clang-tidy" # make lint
PKGS="$PKGS bubblewrap firejail" # sandpit bench's peers (bench/peers.c)
# make check-kernels (KERNELS=1): qemu, the kernel source and what building it needs
[ -z "${KERNELS:-}" ] || PKGS="$PKGS qemu-system-x86 linux-source-6.1 flex bison bc libelf-dev libssl-dev cpio"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "deps: installing$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi
H="$BUILD/include"
if [ ! -s "$H/kselftest_harness.h" ] || [ ! -s "$H/kselftest.h" ]; then
	echo "deps: extracting kselftest_harness.h from linux-source-6.1"
	mkdir -p "$H"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	chmod 777 "$tmp"
	(cd "$tmp" && apt-get download -qq linux-source-6.1 >/dev/null 2>&1) || {
		apt-get update -qq && (cd "$tmp" && apt-get download -qq linux-source-6.1 >/dev/null)
	}
	dpkg-deb --fsys-tarfile "$tmp"/linux-source-6.1_*.deb |
		tar -xO --wildcards './usr/src/linux-source-6.1.tar.*' |
		tar -xJ -C "$tmp" --wildcards \
			'linux-source-6.1/tools/testing/selftests/kselftest_harness.h' \
			'linux-source-6.1/tools/testing/selftests/kselftest.h'
	cp "$tmp"/linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
	   "$tmp"/linux-source-6.1/tools/testing/selftests/kselftest.h "$H/"
fi
