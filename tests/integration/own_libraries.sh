#!/bin/sh
# SPDX-License-Identifier: MIT
# rpcd keeps its own libraries to itself: it needs no shared jansson, libseccomp or inih, and
# exports none of their names, which would take the calls of a plugin's functions named alike.
set -eu
rpcd=$1
needed=$(readelf -d "$rpcd" | grep NEEDED || true)
if echo "$needed" | grep -E 'libjansson|libseccomp|libinih'; then
    echo "rpcd needs a shared library of its own (above)" >&2
    exit 1
fi
exported=$(nm -D --defined-only "$rpcd" | grep -E ' (json_|jansson_|seccomp_|ini_)' || true)
if [ -n "$exported" ]; then
    echo "rpcd exports names of its libraries:" >&2
    echo "$exported" | head -20 >&2
    exit 1
fi
echo "rpcd needs and exports none of its libraries"
