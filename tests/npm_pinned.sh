# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Sourced by the run.sh of tests/mcp and tests/mcp-conformance: a Node.js recent enough (the
# system's, or the one tests/node_pinned.sh pins, installed from the npm registry when the
# system's is missing or too old), and the packages a directory's package-lock.json pins
# installed with npm ci when missing or stale, one build tree at a time. What cannot run (no
# registry) is skipped (exit 77), except in CI (CI set), where it fails.

# A test that cannot run here: skipped on a developer's machine, a failure in CI.
cannot_run() {
    if [ -n "${CI:-}" ]; then
        echo "$1 (CI: failing)" >&2
        exit 1
    fi
    echo "$1: skipped" >&2
    exit 77
}

# shellcheck source=tests/node_pinned.sh
source "$(dirname "${BASH_SOURCE[0]}")/node_pinned.sh"

# Puts a Node.js of RPCD_NODE_MIN_MAJOR or later, with npm, first on PATH: the system's when it
# will do, else the release tests/node_pinned.sh pins, installed from the npm registry into a
# cache the first time. Only a registry out of reach makes the test unable to run.
npm_need_node() {
    node_system_will_do && return 0
    local bin
    bin=$(node_pinned_install) || cannot_run "Node.js $RPCD_NODE_MIN_MAJOR or later is needed \
(the system has $(node --version 2>/dev/null || echo none)) and the pinned $RPCD_NODE_VERSION \
could not be installed"
    export PATH="$bin:$PATH"
    # The pinned npm is meant to stay as it is: no advice to upgrade it in the logs.
    export npm_config_update_notifier=false
    echo "Using Node.js $(node --version) and npm $(npm --version) from $bin" >&2
}

# The version a package.json gives, or the one package-lock.json pins for node_modules/KEY.
npm_version_of() {
    node -e 'const fs = require("fs"); const [file, key] = process.argv.slice(1);
             try { const j = JSON.parse(fs.readFileSync(file, "utf8"));
                   console.log((key ? j.packages[key].version : j.version) ?? ""); } catch { }' "$@"
}

# True when a package of DIR is not the version pinned, or the tree predates the lock file (npm
# writes node_modules/.package-lock.json once it has installed everything).
npm_stale() {
    local dir=$1 package
    shift
    for package in "$@"; do
        [ "$(npm_version_of "$dir/node_modules/$package/package.json")" = \
            "$(npm_version_of "$dir/package-lock.json" "node_modules/$package")" ] || return 0
    done
    [ ! -f "$dir/node_modules/.package-lock.json" ] ||
        [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]
}

# Installs the packages DIR's package-lock.json pins unless they are there, within SECONDS, then
# checks each. Usage: npm_install_pinned DIR SECONDS PACKAGE...
npm_install_pinned() {
    local dir=$1 seconds=$2 package
    shift 2
    for package in "$@"; do
        [ -n "$(npm_version_of "$dir/package-lock.json" "node_modules/$package")" ] ||
            { echo "$dir/package-lock.json pins no $package" >&2; exit 1; }
    done
    if npm_stale "$dir" "$@"; then
        # Two build trees at once must not both rewrite node_modules: the second waits on a lock
        # on the directory, then finds the tree installed.
        exec 9<"$dir"
        flock 9
        if npm_stale "$dir" "$@"; then
            echo "Installing $* ($dir/package-lock.json)" >&2
            local log
            log=$(mktemp)
            if ! (cd "$dir" && timeout "$seconds" npm ci --no-audit --no-fund --loglevel=error) \
                >"$log" 2>&1; then
                cat "$log" >&2
                rm -f "$log"
                cannot_run "npm ci failed in $dir (is the npm registry out of reach?)"
            fi
            rm -f "$log"
        fi
        exec 9<&-
    fi
    for package in "$@"; do
        local installed pinned
        installed=$(npm_version_of "$dir/node_modules/$package/package.json")
        pinned=$(npm_version_of "$dir/package-lock.json" "node_modules/$package")
        if [ "$installed" != "$pinned" ]; then
            echo "$package ${installed:-missing} in $dir/node_modules, expected $pinned" >&2
            exit 1
        fi
    done
}
