#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs rpcd into a scratch directory and, with what was installed alone (the rpcd executable
# and its embedded templates, the headers, the .pc files), makes a plugin project with
# `rpcd new --lang LANGUAGE`, builds it as written (meson and ninja for C and C++, Cargo offline
# for Rust, go build -buildmode=c-shared for Go), runs the project's own test (its tool called
# through `rpcd call --plugin`), checks that the plugin exports only its entry point, and loads
# it through the drop-in the project holds (`rpcd --check`). The C project is built a second
# time without rpcd-plugin.pc, from the options -Drpcd_include and -Drpcd_version_script.
# A missing toolchain skips the test (77), except in CI (CI set) or under
# RPCD_REQUIRE_TOOLCHAINS=1 (scripts/test sets it), where it fails.
# Usage: build-and-run.sh LANGUAGE BUILD_DIR SOURCE_DIR
set -eu
language=$1 build_dir=$2 source_dir=$3
name=scaffold_$language

missing() {
    if [ -n "${CI:-}" ] || [ "${RPCD_REQUIRE_TOOLCHAINS:-}" = 1 ]; then
        echo "scaffold-$language: $1, in CI or with RPCD_REQUIRE_TOOLCHAINS=1: failing" >&2
        exit 1
    fi
    echo "scaffold-$language: skipped, $1 (install it: scripts/deps.sh)"
    exit 77
}
need() {
    for tool; do
        command -v "$tool" >/dev/null 2>&1 || missing "no $tool found"
    done
}
need cc pkg-config
case "$language" in
c) need meson ninja ;;
cpp) need meson ninja c++ ;;
rust) need cargo rustc ;;
go) need go ;;
*)
    echo "unknown language $language" >&2
    exit 2
    ;;
esac
case "$language:${RPCD_SANITIZE:-}" in
rust:*thread* | go:*thread*)
    # As in tests/bindings: their runtimes synchronise with futexes ThreadSanitizer does not see.
    echo "scaffold-$language: skipped under ThreadSanitizer (the plugin's runtime is not instrumented)"
    exit 77
    ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
meson install -C "$build_dir" --no-rebuild --quiet --destdir "$work/root" >/dev/null
# The installed .pc files name the real prefix: copies that name the scratch root instead, so
# that meson's dependency(), Cargo's build script and build.sh find what was installed.
pc=$(find "$work/root" -name rpcd-plugin.pc | head -n 1)
prefix=$(sed -n 's/^prefix=//p' "$pc")
mkdir "$work/pkgconfig"
for file in "$(dirname "$pc")"/rpcd-plugin*.pc; do
    sed "s|^prefix=.*|prefix=$work/root$prefix|" "$file" >"$work/pkgconfig/${file##*/}"
done
export PKG_CONFIG_PATH="$work/pkgconfig"
rpcd=$(find "$work/root" -path '*/bin/rpcd' -type f | head -n 1)
export PATH="${rpcd%/rpcd}:$PATH" RPCD="$rpcd"

cd "$work"
rpcd new "$name" --lang "$language"
cd "$name"
started=$(date +%s)
case "$language" in
c | cpp)
    meson setup build >build.log 2>&1 || { cat build.log; exit 1; }
    meson compile -C build
    meson test -C build --print-errorlogs
    plugin=build/$name.so
    ;;
rust)
    cargo build --release --offline
    cargo test --release --offline
    plugin=target/release/lib$name.so
    ;;
go)
    # The Go fixtures' build cache (tests/plugins), or the one build trees share (RPCD_GO_CACHE).
    cache=$build_dir/tests/plugins/go-cache
    GOCACHE="${RPCD_GO_CACHE:-$cache}" GOPATH="$work/gopath" sh build.sh
    sh tests/call.sh "./$name.so"
    plugin=$name.so
    ;;
esac
echo "scaffold-$language: built and tested in $(($(date +%s) - started)) s"
if [ "$language" = c ]; then
    # Without rpcd-plugin.pc: the header and the version script from the options.
    header=$(find "$work/root" -path '*/rpcd/plugin.h' | head -n 1)
    map=$(find "$work/root" -name rpcd-plugin.map | head -n 1)
    PKG_CONFIG_PATH="" meson setup build-options -Drpcd_include="${header%/rpcd/plugin.h}" \
        -Drpcd_version_script="$map" >build.log 2>&1 || { cat build.log; exit 1; }
    meson test -C build-options --print-errorlogs
fi

NM=${NM:-nm} sh "$source_dir/tests/header/check-exports.sh" "$plugin"

# The drop-in, its path pointed at the plugin built here, read and loaded by rpcd --check.
mkdir -p "$work/etc/rpcd.conf.d"
: >"$work/etc/rpcd.conf"
sed "s|^path = .*|path = $PWD/$plugin|" "$name.conf" >"$work/etc/rpcd.conf.d/$name.conf"
rpcd --check -c "$work/etc/rpcd.conf"
rpcd list -c "$work/etc/rpcd.conf" | grep -qF "$name.greet" ||
    { echo "the drop-in does not bring $name.greet" >&2; exit 1; }
