#!/bin/sh
# make install as a packager runs it, checked as TAP for scripts/run-tests.sh:
# stage into a temporary DESTDIR, build examples/demo.c the way a user of
# the package would (pkg-config, nothing from the source tree), run it in
# the sandbox, and check that the shared library exports exactly the API.
#   BUILD=build scripts/install-tap.sh
BUILD=${BUILD:-build}
CC=${CC:-cc}
PREFIX=/usr/local
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
lib=$dest$PREFIX/lib
. "$(dirname "$0")/tap.sh"
echo "TAP version 13"
echo "1..7"

make --no-print-directory -s install BUILD="$BUILD" PREFIX=$PREFIX DESTDIR="$dest" \
	>"$dest/log" 2>&1
result $? "make_install_into_a_destdir" "$dest/log"

ok=0
for f in lib/libsandpit.a lib/libsandpit.so lib/libsandpit.so.0 lib/pkgconfig/sandpit.pc \
	include/sandpit.h bin/sandpit share/man/man1/sandpit.1 share/man/man5/sandpit.policy.5; do
	[ -e "$dest$PREFIX/$f" ] || { echo "# missing $PREFIX/$f"; ok=1; }
done
# the dev symlink leads to the soname's file, whose DT_SONAME is that name
[ "$(readlink "$lib/libsandpit.so")" = libsandpit.so.0 ] || { echo "# libsandpit.so is no link to libsandpit.so.0"; ok=1; }
soname=$(readelf -d "$lib/libsandpit.so.0" 2>/dev/null | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libsandpit.so.0 ] || { echo "# soname is '$soname'"; ok=1; }
result $ok "installs_library_soname_links_pc_header_man_pages"

# --define-prefix: the .pc file's prefix becomes the staged one
pc() { PKG_CONFIG_PATH=$lib/pkgconfig \
	pkg-config --define-prefix "$@"; }
flags=$(pc --cflags --libs sandpit 2>"$dest/log")
ok=$?
echo "# pkg-config --cflags --libs sandpit: $flags"
case " $flags " in
*" -I$dest$PREFIX/include "*"-L$lib "*) ;;
*) ok=1 ;;
esac
[ "$(pc --modversion sandpit 2>/dev/null)" = "$(sed -n 's/^VERSION *:= *//p' Makefile)" ] || ok=1
result $ok "pkg_config_finds_the_staged_package" "$dest/log"

# the demo, copied out of the tree so that only the package's header is seen
cp examples/demo.c "$dest/demo.c"
(cd "$dest" && $CC -Wall -Wextra -Werror demo.c $flags -o demo) >"$dest/log" 2>&1
result $? "demo_builds_with_pkg_config_flags" "$dest/log"

LD_LIBRARY_PATH=$lib SANDPIT_MODE=strict "$dest/demo" >"$dest/log" 2>&1 &&
	grep -q "every refusal above was made by the sandbox" "$dest/log" &&
	LD_LIBRARY_PATH=$lib ldd "$dest/demo" | grep -q "libsandpit.so.0 => $lib/libsandpit.so.0"
result $? "demo_runs_in_the_sandbox_with_the_installed_library" "$dest/log"

# exactly the functions of sandpit.h, in the version node
nm -D --defined-only "$lib/libsandpit.so.0" | awk '{ print $3 }' | sort >"$dest/got"
printf '%s\n' SANDPIT_0 sandpit_error@@SANDPIT_0 sandpit_mode@@SANDPIT_0 \
	sandpit_start@@SANDPIT_0 sandpit_supported@@SANDPIT_0 | sort >"$dest/want"
diff "$dest/want" "$dest/got" >"$dest/log"
result $? "exports_exactly_the_public_api" "$dest/log"

# every function the header declares is in the version script and exported
ok=0
for f in $(sed -n 's/^SANDPIT_API [a-z ]*[ *]\(sandpit_[a-z_]*\)(.*/\1/p' include/sandpit.h); do
	grep -q "^$f@@SANDPIT_0\$" "$dest/got" || { echo "# $f declared, not exported"; ok=1; }
done
[ "$(sed -n 's/^SANDPIT_API .*\(sandpit_[a-z_]*\)(.*/\1/p' include/sandpit.h | wc -l)" -eq 4 ] || ok=1
result $ok "every_declared_function_is_exported"
exit $rc
