#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs rpcd into a scratch directory, builds the example plugin of one language of
# bindings/ against that install with pkg-config only, checks that it exports nothing but its
# entry point, and runs the behaviour test against it with the real rpcd.
# Usage: build-and-run.sh LANGUAGE BUILD_DIR SOURCE_DIR BEHAVIOUR TOOL
# (LANGUAGE cpp, rust or go; TOOL the compiler, or empty when there is none)
set -eu
language=$1 build_dir=$2 source_dir=$3 behaviour=$4 tool=$5
if [ -z "$tool" ]; then
    if [ "${RPCD_REQUIRE_TOOLCHAINS:-}" = 1 ]; then
        echo "bindings-$language: no toolchain found, and RPCD_REQUIRE_TOOLCHAINS=1" >&2
        exit 1
    fi
    echo "bindings-$language: skipped, no toolchain found (install it: scripts/deps.sh)"
    exit 77
fi
case "$language:${RPCD_SANITIZE:-}" in
rust:*thread* | go:*thread*)
    # Rust's std and Go's runtime synchronise their threads with futexes of their own, which
    # ThreadSanitizer does not see: it would report their plugin's memory handed from thread to
    # thread as races. C++ threads go through pthreads, which it does see.
    echo "bindings-$language: skipped under ThreadSanitizer (the plugin's runtime is not instrumented)"
    exit 77
    ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

meson install -C "$build_dir" --no-rebuild --quiet --destdir "$work/root" >/dev/null
pc=$(find "$work/root" -name rpcd-plugin.pc | head -n 1)
export PKG_CONFIG_PATH="$(dirname "$pc")"
prefix=$(pkg-config --variable=prefix rpcd-plugin)
pc() { pkg-config --define-variable=prefix="$work/root$prefix" "$@"; }
cflags=$(pc --cflags rpcd-plugin)
versionscript=$(pc --variable=versionscript rpcd-plugin)
bindings=$source_dir/bindings
plugin=$work/example.so

started=$(date +%s)
case "$language" in
cpp)
    # No -fvisibility flags: the version script alone keeps libstdc++'s instances local.
    "$tool" -std=c++17 -Wall -Wextra -Wpedantic -Werror -Wshadow -Wconversion \
        -Wmissing-declarations -fPIC -shared -Wl,--no-undefined -I "$bindings/cpp" \
        "$bindings/cpp/example/example.cpp" $(pc --cflags --libs rpcd-plugin-jansson) \
        -Wl,--version-script="$versionscript" -o "$plugin"
    prefix_name=cpp name=cpp_example
    ;;
rust)
    # The layout of the installed header, as Rust constants the binding asserts against.
    cc $cflags -o "$work/layout" "$bindings/rust/layout.c"
    "$work/layout" > "$work/layout.rs"
    export RPCD_LAYOUT="$work/layout.rs"
    "$tool" --edition 2018 --crate-type rlib --crate-name rpcd -O -D warnings \
        "$bindings/rust/rpcd.rs" -o "$work/librpcd.rlib"
    "$tool" --edition 2018 --test --crate-name rpcd -D warnings "$bindings/rust/rpcd.rs" \
        -o "$work/rpcd-layout-test"
    "$work/rpcd-layout-test" --quiet
    # A cdylib exports its #[no_mangle] functions alone: rustc writes its own version script.
    "$tool" --edition 2018 --crate-type cdylib --crate-name rust_example -O -D warnings \
        --extern rpcd="$work/librpcd.rlib" "$bindings/rust/example/example.rs" -o "$plugin"
    prefix_name=rust name=rust_example
    ;;
go)
    # The Go fixtures' build cache (tests/plugins), or the one shared by build trees
    # (RPCD_GO_CACHE): the runtime is compiled once for all.
    cache=$build_dir/tests/plugins/go-cache
    cp -R "$bindings/go" "$work/go"
    (cd "$work/go/example" &&
        env GOCACHE="${RPCD_GO_CACHE:-$cache}" GOPATH="$cache/path" GOFLAGS=-mod=mod GO111MODULE=on \
            CGO_ENABLED=1 CGO_CFLAGS="$cflags" \
            "$tool" build -buildmode=c-shared \
            -ldflags="-extldflags=-Wl,--version-script=$versionscript" -o "$plugin" .)
    prefix_name=go name=go_example
    ;;
*)
    echo "unknown language $language" >&2
    exit 2
    ;;
esac
echo "bindings-$language: built in $(($(date +%s) - started)) s"

NM=${NM:-nm} sh "$source_dir/tests/header/check-exports.sh" "$plugin"
"$behaviour" "$plugin" "$prefix_name" "$name"
