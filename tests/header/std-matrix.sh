#!/bin/sh
# SPDX-License-Identifier: MIT
# Compiles plugin_header.c (both public headers, their inline functions and macros) with gcc and
# clang as C99, C11, C17 and C23, and as C++11, C++17 and C++20, under the strict warnings plugin
# authors use. A standard a compiler lacks is skipped with a message (C23 falls back to its draft
# name c2x); a missing compiler too, unless RPCD_REQUIRE_TOOLCHAINS=1.
# Usage: std-matrix.sh INCLUDE_DIR SOURCE_DIR
set -u
include_dir=$1 source_dir=$2
warnings="-Wall -Wextra -Wpedantic -Werror -Wredundant-decls -Wshadow -Wconversion"
c_warnings="$warnings -Wmissing-prototypes -Wstrict-prototypes"
cxx_warnings="$warnings -Wmissing-declarations"
jansson=$(pkg-config --cflags jansson 2>/dev/null || true)
failed=0 checked=0

# compile COMPILER LANGUAGE STANDARD... : the first standard the compiler knows is used.
compile() {
    compiler=$1 language=$2
    shift 2
    if ! command -v "$compiler" >/dev/null 2>&1; then
        echo "SKIP $compiler: not installed"
        [ "${RPCD_REQUIRE_TOOLCHAINS:-0}" = 1 ] && failed=1
        return
    fi
    for standard in "$@"; do
        if echo 'int rpcd_matrix_probe;' | "$compiler" -x "$language" -std="$standard" -fsyntax-only - \
            >/dev/null 2>&1; then
            if [ "$language" = c ]; then
                flags=$c_warnings source=plugin_header.c
            else
                flags=$cxx_warnings source=plugin_header.cpp
            fi
            checked=$((checked + 1))
            # shellcheck disable=SC2086 # the flags are word lists
            if output=$("$compiler" -std="$standard" $flags -I"$include_dir" $jansson \
                    -c "$source_dir/$source" -o /dev/null 2>&1); then
                echo "ok   $compiler -std=$standard"
            else
                echo "FAIL $compiler -std=$standard"
                echo "$output"
                failed=1
            fi
            return
        fi
    done
    echo "SKIP $compiler: knows none of $*"
}

for compiler in gcc clang; do
    compile "$compiler" c c99
    compile "$compiler" c c11
    compile "$compiler" c c17
    compile "$compiler" c c23 c2x
done
for compiler in g++ clang++; do
    compile "$compiler" c++ c++11
    compile "$compiler" c++ c++17
    compile "$compiler" c++ c++20 c++2a
done
echo "$checked compilations"
exit "$failed"
