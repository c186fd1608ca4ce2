#!/bin/sh
# SPDX-License-Identifier: MIT
# Asserts that each plugin given as an argument exports exactly one dynamic symbol,
# rpcd_plugin_entry: anything else would leak into the daemon's symbol space and become ABI.
# Usage: check-exports.sh PLUGIN.so...   (the environment variable NM names nm, if not on PATH)

nm_program=${NM:-nm}
if ! command -v "$nm_program" >/dev/null 2>&1; then
    echo "check-exports: nm not found (install binutils, or set NM); cannot check exports" >&2
    exit 1
fi
if [ "$#" -eq 0 ]; then
    echo "check-exports: no plugin given" >&2
    exit 1
fi

failed=0
for plugin in "$@"; do
    if ! symbols=$("$nm_program" -D --defined-only "$plugin"); then
        echo "check-exports: $plugin: nm failed" >&2
        failed=1
        continue
    fi
    names=$(printf '%s\n' "$symbols" | awk 'NF { print $NF }')
    if [ "$names" = "rpcd_plugin_entry" ]; then
        echo "ok: $plugin exports only rpcd_plugin_entry"
    else
        echo "check-exports: $plugin must export only rpcd_plugin_entry, but exports:" >&2
        printf '%s\n' "$names" | sed 's/^/    /' >&2
        failed=1
    fi
done
exit "$failed"
