#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs an MCP client against rpcd: client.mjs (SDK v1) by default, or the script given with its
# arguments (client_v2.mjs pin|auto: the v2 client; inspector.mjs legacy|modern: the MCP
# Inspector CLI; ai_sdk.mjs discover|initialize: the AI SDK's client). Installs Node.js and
# npm with apt when missing, and the clients at the versions package-lock.json pins when missing
# or stale. When npm cannot install them (no registry), the test is skipped (exit 77), except in
# CI (CI set), where it fails.
# Usage: run.sh <rpcd> <config> [script.mjs [arguments...]]
set -euo pipefail

if [ $# -lt 2 ]; then
    echo "usage: $0 <rpcd> <config> [script.mjs [arguments...]]" >&2
    exit 2
fi
rpcd=$1 config=$2
shift 2
script=${1:-client.mjs}
[ $# -gt 0 ] && shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# A client that cannot run here: skipped on a developer's machine, a failure in CI.
cannot_run() {
    if [ -n "${CI:-}" ]; then
        echo "$1 (CI: failing)" >&2
        exit 1
    fi
    echo "$1: skipped" >&2
    exit 77
}

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    # shellcheck source=scripts/deps.sh source-path=SCRIPTDIR/../..
    source "$here/../../scripts/deps.sh"
    rpcd_install_packages nodejs npm
fi
for tool in node npm; do
    if ! command -v "$tool" >/dev/null; then
        echo "$tool is still missing after installing nodejs and npm" >&2
        exit 1
    fi
done
# The v2 client needs Node.js 20 (its package.json says so; the Inspector and the AI SDK say 22,
# but run on 20).
if [ "$script" != client.mjs ] &&
    ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
    cannot_run "$script needs Node.js 20 or later, this is $(node --version)"
fi

# The packages package-lock.json pins, each with the version it pins and the one installed.
packages=(@modelcontextprotocol/sdk @modelcontextprotocol/client @modelcontextprotocol/inspector
    @ai-sdk/mcp)
version_of() {
    node -e 'const fs = require("fs"); const [file, key] = process.argv.slice(1);
             try { const j = JSON.parse(fs.readFileSync(file, "utf8"));
                   console.log((key ? j.packages[key].version : j.version) ?? ""); } catch { }' "$@"
}
pinned_of() {
    version_of "$here/package-lock.json" "node_modules/$1"
}
for package in "${packages[@]}"; do
    [ -n "$(pinned_of "$package")" ] || { echo "package-lock.json pins no $package" >&2; exit 1; }
done
# npm writes node_modules/.package-lock.json when it has installed everything: when it is
# older than package-lock.json, the tree predates the last change of the lock file.
installed_lock=$here/node_modules/.package-lock.json
stale() {
    for package in "${packages[@]}"; do
        [ "$(version_of "$here/node_modules/$package/package.json")" = "$(pinned_of "$package")" ] ||
            return 0
    done
    [ ! -f "$installed_lock" ] || [ "$here/package-lock.json" -nt "$installed_lock" ]
}
if stale; then
    # Two runs at once (two build trees) must not both rewrite node_modules: the second waits
    # on a lock on this directory, then finds the tree installed.
    exec 9<"$here"
    flock 9
    if stale; then
        echo "Installing ${packages[*]} (tests/mcp/package-lock.json)" >&2
        log=$(mktemp)
        if ! (cd "$here" && timeout 150 npm ci --no-audit --no-fund --loglevel=error) >"$log" 2>&1
        then
            cat "$log" >&2
            rm -f "$log"
            cannot_run "npm ci failed in $here (is the npm registry out of reach?)"
        fi
        rm -f "$log"
    fi
    exec 9<&-
fi
for package in "${packages[@]}"; do
    installed=$(version_of "$here/node_modules/$package/package.json")
    if [ "$installed" != "$(pinned_of "$package")" ]; then
        echo "$package ${installed:-missing} in $here/node_modules," \
             "expected $(pinned_of "$package")" >&2
        exit 1
    fi
done

# 150 s for npm ci and 120 s here stay under the 300 s meson gives the test.
exec timeout -k 10 120 node "$here/$script" "$rpcd" "$config" "$@"
