#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs an MCP client against rpcd: client.mjs (SDK v1) by default, or the script given with its
# arguments (client_v2.mjs pin|auto: the v2 client; inspector.mjs legacy|modern: the MCP
# Inspector CLI; ai_sdk.mjs discover|initialize: the AI SDK's client). Uses the pinned Node.js
# (tests/node_pinned.sh, from the npm registry) when the system's is missing or too old, and
# installs the clients at the versions package-lock.json pins when missing or stale. When the
# registry is out of reach, the test is skipped (exit 77), except in CI (CI set): it fails.
# The config is TEMPLATE (etc/rpcd.conf) with plugin_dir the directory of $RPCD_BUILD_CONFIG and
# the fixture $RPCD_FIXTURE_TOOL_RESULT added, written into a new directory of its own.
# Usage: run.sh <rpcd> <template> [script.mjs [arguments...]]
set -euo pipefail

if [ $# -lt 2 ]; then
    echo "usage: $0 <rpcd> <template> [script.mjs [arguments...]]" >&2
    exit 2
fi
rpcd=$1 template=$2
shift 2
script=${1:-client.mjs}
[ $# -gt 0 ] && shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# shellcheck source=tests/npm_pinned.sh
source "$here/../npm_pinned.sh"
# The v2 client needs Node.js 20 (its package.json says so; the Inspector and the AI SDK say 22,
# but run on 20): RPCD_NODE_MIN_MAJOR.
npm_need_node
npm_install_pinned "$here" 150 @modelcontextprotocol/sdk @modelcontextprotocol/client \
    @modelcontextprotocol/inspector @ai-sdk/mcp

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
config=$work/rpcd-mcp.conf
sed -e "/^[[]rpcd[]]\$/a plugin_dir = ${RPCD_BUILD_CONFIG%/*}" -e '$a [plugin tool_result]' \
    -e "\$a path = $RPCD_FIXTURE_TOOL_RESULT" "$template" >"$config"

# 150 s for npm ci and 120 s here stay under the 300 s meson gives the test.
status=0
timeout -k 10 120 node "$here/$script" "$rpcd" "$config" "$@" || status=$?
exit "$status"
