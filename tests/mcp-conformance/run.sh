#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the official MCP server conformance suite against rpcd (run.mjs, through bridge.mjs).
# Uses the pinned Node.js (tests/node_pinned.sh, from the npm registry) when the system's is
# missing or too old, and installs the suite at the version package-lock.json pins when missing
# or stale. When the registry is out of reach, the test is skipped (exit 77), except in CI (CI
# set): it fails. The fixture plugin is $RPCD_FIXTURE_CONFORMANCE, as the environment names it
# (scripts/staged's copy when the build tree is one rpcd refuses).
# Usage: run.sh <rpcd>
set -euo pipefail

if [ $# -ne 1 ] || [ -z "${RPCD_FIXTURE_CONFORMANCE:-}" ]; then
    echo "usage: RPCD_FIXTURE_CONFORMANCE=conformance.so $0 <rpcd>" >&2
    exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
package=@modelcontextprotocol/conformance

# shellcheck source=tests/npm_pinned.sh
source "$here/../npm_pinned.sh"
# The suite's dependencies need Node.js 20 (node20.mjs covers the one call that needs 22).
npm_need_node
npm_install_pinned "$here" 100 "$package"

# 100 s for npm ci and 240 s here (two modes of at most 100 s each, about 30 s each on a quiet
# machine; the bridge's own checks; the end), times the factor of a sanitizer build as in
# run.mjs, stay under the 360 s meson gives the test (times the same factor).
case "${RPCD_SANITIZE:-}" in
*thread*) scale=5 ;;
*address*) scale=3 ;;
*) scale=1 ;;
esac
exec timeout -k 10 $((240 * scale)) node "$here/run.mjs" "$1" "$RPCD_FIXTURE_CONFORMANCE"
