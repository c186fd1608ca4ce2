#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages rpcd needs to build and test, when any is missing.
# Sourced by scripts/run and scripts/test; safe to run on its own.
set -euo pipefail

RPCD_PACKAGES=(meson ninja-build pkg-config gcc g++ libc6-dev binutils sed
               libjansson-dev libcmocka-dev libinih-dev libseccomp-dev clang-format git
               clang libclang-rt-dev valgrind golang-go rustc scdoc groff-base man-db
               dpkg-dev debhelper lintian abigail-tools systemd)

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
    rpcd_install_packages "${RPCD_PACKAGES[@]}"
fi
