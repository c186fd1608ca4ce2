# SPDX-License-Identifier: MIT
# Sourced by the run.sh of tests/mcp and tests/mcp-conformance: Node.js and npm installed with
# apt when missing, and the packages a directory's package-lock.json pins installed with npm ci
# when missing or stale, one build tree at a time. What cannot run (no registry, an old Node.js)
# is skipped (exit 77), except in CI (CI set), where it fails.

# A test that cannot run here: skipped on a developer's machine, a failure in CI.
cannot_run() {
    if [ -n "${CI:-}" ]; then
        echo "$1 (CI: failing)" >&2
        exit 1
    fi
    echo "$1: skipped" >&2
    exit 77
}

# Installs node and npm when missing. Usage: npm_need_node SCRIPTS_DIR [MIN_MAJOR WHAT]
npm_need_node() {
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        # shellcheck source=scripts/deps.sh
        source "$1/deps.sh"
        rpcd_install_packages nodejs npm
    fi
    for tool in node npm; do
        if ! command -v "$tool" >/dev/null; then
            echo "$tool is still missing after installing nodejs and npm" >&2
            exit 1
        fi
    done
    if [ $# -ge 3 ] && ! node -e "process.exit(Number(process.versions.node.split('.')[0]) >= $2 ? 0 : 1)"; then
        cannot_run "$3 needs Node.js $2 or later, this is $(node --version)"
    fi
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
