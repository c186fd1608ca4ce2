#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the official MCP server conformance suite against rpcd (run.mjs, through bridge.mjs).
# Installs Node.js and npm with apt when missing, and the suite at the version
# package-lock.json pins when missing or stale. When npm cannot install it (no registry), or
# Node.js is older than 20, the test is skipped (exit 77), except in CI (CI set): it fails.
# Usage: run.sh <rpcd> <conformance.so>
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 <rpcd> <conformance.so>" >&2
    exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
package=@modelcontextprotocol/conformance

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
    command -v "$tool" >/dev/null || { echo "$tool is still missing after installing nodejs and npm" >&2; exit 1; }
done
# The suite's dependencies need Node.js 20 (node20.mjs covers the one call that needs 22).
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
    cannot_run "the MCP conformance suite needs Node.js 20 or later, this is $(node --version)"
fi

version_of() {
    node -e 'const fs = require("fs"); const [file, key] = process.argv.slice(1);
             try { const j = JSON.parse(fs.readFileSync(file, "utf8"));
                   console.log((key ? j.packages[key].version : j.version) ?? ""); } catch { }' "$@"
}
pinned=$(version_of "$here/package-lock.json" "node_modules/$package")
[ -n "$pinned" ] || { echo "package-lock.json pins no $package" >&2; exit 1; }
# npm writes node_modules/.package-lock.json once it has installed everything: older than
# package-lock.json, the tree predates the last change of the lock file.
installed_lock=$here/node_modules/.package-lock.json
stale() {
    [ "$(version_of "$here/node_modules/$package/package.json")" != "$pinned" ] ||
        [ ! -f "$installed_lock" ] || [ "$here/package-lock.json" -nt "$installed_lock" ]
}
if stale; then
    # Two build trees at once must not both rewrite node_modules: the second waits, then finds
    # the tree installed.
    exec 9<"$here"
    flock 9
    if stale; then
        echo "Installing $package $pinned (tests/mcp-conformance/package-lock.json)" >&2
        log=$(mktemp)
        if ! (cd "$here" && timeout 100 npm ci --no-audit --no-fund --loglevel=error) >"$log" 2>&1
        then
            cat "$log" >&2
            rm -f "$log"
            cannot_run "npm ci failed in $here (is the npm registry out of reach?)"
        fi
        rm -f "$log"
    fi
    exec 9<&-
fi
installed=$(version_of "$here/node_modules/$package/package.json")
if [ "$installed" != "$pinned" ]; then
    echo "$package ${installed:-missing} in $here/node_modules, expected $pinned" >&2
    exit 1
fi

# 100 s for npm ci and 180 s here stay under the 300 s meson gives the test.
exec timeout -k 10 180 node "$here/run.mjs" "$@"
