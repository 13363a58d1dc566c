#!/bin/sh
# kernel.sh strict-only|stock: finds in the cache, or makes, a kernel for
# the test guests and prints the directory holding it: `kernel` (the image)
# and `config`; for stock also modules/ with `order`, the list /init loads.
# The cache ($SANDPIT_KERNEL_CACHE, else ~/.cache/sandpit-kernels) is keyed
# by what determines the kernel: for stock the Debian package and version,
# for strict-only the linux-source-6.1 version and a hash of the config
# fragment and of the Kconfig edit, so a second run builds nothing.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${SANDPIT_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sandpit-kernels}
mkdir -p "$CACHE"
say() { echo "kernel.sh: $*" >&2; }

# 6.1 has no prompt for SECCOMP_FILTER (it follows SECCOMP && NET); this one
# line makes it a question the fragment can answer no to
KCONFIG_EDIT='/^config SECCOMP_FILTER$/{n;s/^\tdef_bool y$/\tbool "seccomp-bpf filters"\n\tdefault y/}'

stock() {
	pkg=$(apt-cache depends linux-image-amd64 | sed -n 's/^ *Depends: \(linux-image-6\.1[^ ]*\)$/\1/p' | head -1)
	ver=$(apt-cache policy "$pkg" | sed -n 's/^ *Candidate: //p')
	[ -n "$pkg" ] && [ -n "$ver" ] || { say "no linux-image-6.1 package known to apt"; exit 1; }
	d="$CACHE/stock-$pkg-$ver"
	if [ ! -s "$d/kernel" ]; then
		say "fetching $pkg $ver"
		t=$(mktemp -d "$CACHE/tmp.XXXXXX")
		chmod 777 "$t" # apt's sandbox user writes the download here
		(cd "$t" && apt-get download -qq "$pkg=$ver" >/dev/null) ||
			{ apt-get update -qq && (cd "$t" && apt-get download -qq "$pkg=$ver" >/dev/null); }
		dpkg-deb -x "$t"/*.deb "$t/x"
		mkdir -p "$t/out/modules"
		cp "$t"/x/boot/vmlinuz-* "$t/out/kernel"
		cp "$t"/x/boot/config-* "$t/out/config"
		# what the guest needs to reach the host's files: virtio-pci and
		# 9p, in dependency order
		for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev \
			virtio_pci 9pnet 9pnet_virtio netfs fscache 9p; do
			f=$(find "$t/x/lib/modules" -name "$m.ko*" | head -1)
			[ -n "$f" ] || { say "$m.ko not in $pkg"; exit 1; }
			case $f in
			*.xz) xz -dc "$f" >"$t/out/modules/$m.ko" ;;
			*.zst) zstd -qdc "$f" >"$t/out/modules/$m.ko" ;;
			*) cp "$f" "$t/out/modules/$m.ko" ;;
			esac
			echo "$m" >>"$t/out/modules/order"
		done
		rm -rf "$d"
		mv "$t/out" "$d"
		rm -rf "$t"
	fi
	echo "$d"
}

strict_only() {
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
	key=$( (cat "$HERE/strict-only.config"; echo "$KCONFIG_EDIT") | sha256sum | cut -c1-16)
	d="$CACHE/strict-only-$ver-$key"
	if [ ! -s "$d/kernel" ]; then
		t=$(mktemp -d "$CACHE/tmp.XXXXXX")
		say "configuring the strict-only kernel (linux-source-6.1 $ver) in $t"
		tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$t"
		src="$t/linux-source-6.1"
		sed -i "$KCONFIG_EDIT" "$src/arch/Kconfig"
		grep -q 'bool "seccomp-bpf filters"' "$src/arch/Kconfig" ||
			{ say "the Kconfig edit did not apply"; exit 1; }
		mkdir -p "$t/o"
		make -s -C "$src" ARCH=x86_64 O="$t/o" tinyconfig >/dev/null
		(cd "$src" && KCONFIG_CONFIG="$t/o/.config" scripts/kconfig/merge_config.sh \
			-m -O "$t/o" "$t/o/.config" "$HERE/strict-only.config" >/dev/null)
		make -s -C "$src" ARCH=x86_64 O="$t/o" olddefconfig >/dev/null
		grep -q '^# CONFIG_SECCOMP_FILTER is not set' "$t/o/.config" &&
			grep -q '^CONFIG_SECCOMP=y' "$t/o/.config" ||
			{ say "the fragment did not give SECCOMP without SECCOMP_FILTER"; exit 1; }
		mkdir -p "$t/out"
		cp "$t/o/.config" "$t/out/config"
		# a kernel built before from the same source and an identical
		# .config (under an older key) is the same kernel: reuse it
		for old in "$CACHE"/strict-only-"$ver"-*; do
			[ -f "$old/config" ] || continue
			grep '^CONFIG_\|is not set' "$old/config" >"$t/a"
			grep '^CONFIG_\|is not set' "$t/o/.config" >"$t/b"
			if cmp -s "$t/a" "$t/b"; then
				for img in "$old/kernel" "$old/bzImage"; do
					[ -s "$img" ] && { say "reusing $img (identical .config)"; cp "$img" "$t/out/kernel"; break; }
				done
			fi
			[ -s "$t/out/kernel" ] && break
		done
		if [ ! -s "$t/out/kernel" ]; then
			say "building the strict-only kernel (about 11 minutes on 2 CPUs)"
			nice -n 19 make -s -C "$src" ARCH=x86_64 O="$t/o" -j"$(nproc)" bzImage >"$t/build.log" 2>&1 ||
				{ tail -30 "$t/build.log" >&2; exit 1; }
			cp "$t/o/arch/x86/boot/bzImage" "$t/out/kernel"
		fi
		rm -rf "$d"
		mv "$t/out" "$d"
		rm -rf "$t"
	fi
	echo "$d"
}

case ${1:-} in
stock) stock ;;
strict-only) strict_only ;;
*) echo "usage: kernel.sh strict-only|stock" >&2; exit 2 ;;
esac
