#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages rpcd needs to build (scripts/run) and to test (scripts/test),
# when any is missing. Sourced by scripts/run and scripts/test; run on its own, it installs both.
set -euo pipefail

# What `meson setup build && ninja -C build` needs: rpcd, its plugins and its config.
RPCD_BUILD_PACKAGES=(meson ninja-build pkg-config gcc libc6-dev binutils sed
                     libjansson-dev libinih-dev libseccomp-dev libpcre2-dev
                     python3)
# What scripts/test needs besides: cmocka, the sanitizers' and fuzzers' clang, valgrind, the
# bindings' toolchains (and Cargo, which builds the Rust projects of rpcd new), the man pages,
# the Debian packaging, git for the tree's file list, and certificates for the npm registry (the
# MCP clients, and a Node.js when the system's is too old: tests/node_pinned.sh).
RPCD_TEST_PACKAGES=(g++ libcmocka-dev clang-format git clang libclang-rt-dev valgrind golang-go
                    rustc cargo scdoc groff-base man-db dpkg-dev debhelper lintian abigail-tools systemd
                    python3 ca-certificates build-essential)

rpcd_install_packages() {
    local missing=()
    for package in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$package")
        fi
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "Installing missing packages: ${missing[*]}" >&2
    local sudo=()
    [ "$(id -u)" -ne 0 ] && sudo=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    rpcd_install_packages "${RPCD_BUILD_PACKAGES[@]}" "${RPCD_TEST_PACKAGES[@]}"
fi
