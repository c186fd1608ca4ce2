#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs client.mjs, the official MCP TypeScript SDK client, against rpcd. Installs Node.js and npm
# with apt when missing, and the SDK at the version package-lock.json pins when missing or stale.
# Usage: run.sh <rpcd> <config>
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 <rpcd> <config>" >&2
    exit 2
fi
rpcd=$1 config=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

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

sdk=$here/node_modules/@modelcontextprotocol/sdk
# The SDK version the lock file pins and the one installed (empty when missing).
version_of() {
    node -e 'const fs = require("fs"); const [file, key] = process.argv.slice(1);
             try { const j = JSON.parse(fs.readFileSync(file, "utf8"));
                   console.log((key ? j.packages[key].version : j.version) ?? ""); } catch { }' "$@"
}
pinned=$(version_of "$here/package-lock.json" node_modules/@modelcontextprotocol/sdk)
[ -n "$pinned" ] || { echo "package-lock.json pins no @modelcontextprotocol/sdk" >&2; exit 1; }
# npm writes node_modules/.package-lock.json when it has installed everything: when it is
# older than package-lock.json, the tree predates the last change of the lock file.
installed_lock=$here/node_modules/.package-lock.json
stale() {
    [ "$(version_of "$sdk/package.json")" != "$pinned" ] || [ ! -f "$installed_lock" ] ||
        [ "$here/package-lock.json" -nt "$installed_lock" ]
}
if stale; then
    # Two runs at once (two build trees) must not both rewrite node_modules: the second waits
    # on a lock on this directory, then finds the tree installed.
    exec 9<"$here"
    flock 9
    if stale; then
        echo "Installing @modelcontextprotocol/sdk $pinned (tests/mcp/package-lock.json)" >&2
        log=$(mktemp)
        if ! (cd "$here" && timeout 150 npm ci --no-audit --no-fund --loglevel=error) >"$log" 2>&1
        then
            cat "$log" >&2
            rm -f "$log"
            echo "npm ci failed in $here" >&2
            exit 1
        fi
        rm -f "$log"
    fi
    exec 9<&-
fi
installed=$(version_of "$sdk/package.json")
if [ "$installed" != "$pinned" ]; then
    echo "@modelcontextprotocol/sdk ${installed:-missing} in $here/node_modules," \
         "expected $pinned" >&2
    exit 1
fi

# 150 s for npm ci and 120 s here stay under the 300 s meson gives the test.
exec timeout -k 10 120 node "$here/client.mjs" "$rpcd" "$config"
