#!/bin/sh
# SPDX-License-Identifier: MIT
# The ABI version docs/plugin-author.md shows (its run's "plugin ABI X.Y" and rpcd inspect's
# "abi: X.Y (this rpcd: X.Y)") is the header's: a transcript that names an older ABI tells a
# newcomer of a plugin and an rpcd that are not the ones they build. Usage: abi_version.sh ROOT
set -eu
root=$1
header=$root/plugin-api/include/rpcd/plugin.h
major=$(sed -n 's/^#define RPCD_ABI_MAJOR \([0-9]*\)$/\1/p' "$header")
minor=$(sed -n 's/^#define RPCD_ABI_MINOR \([0-9]*\)$/\1/p' "$header")
version=$major.$minor
[ -n "$major" ] && [ -n "$minor" ] || { echo "no RPCD_ABI_MAJOR/MINOR in $header" >&2; exit 1; }
doc=$root/docs/plugin-author.md
bad=0
for shown in $(grep -o 'plugin ABI [0-9]*\.[0-9]*' "$doc" | sed 's/plugin ABI //') \
    $(grep -o 'abi: *[0-9]*\.[0-9]* (this rpcd: [0-9]*\.[0-9]*)' "$doc" | tr -d '()' |
        sed 's/abi: *//; s/this rpcd: //'); do
    if [ "$shown" != "$version" ]; then
        echo "docs/plugin-author.md shows ABI $shown; plugin.h is $version" >&2
        bad=1
    fi
done
grep -q "plugin ABI $version" "$doc" || { echo "docs/plugin-author.md names no plugin ABI" >&2; bad=1; }
grep -q "abi: *$version (this rpcd: $version)" "$doc" ||
    { echo "docs/plugin-author.md shows no rpcd inspect line of ABI $version" >&2; bad=1; }
[ "$bad" -eq 0 ] || exit 1
echo "docs/plugin-author.md shows ABI $version, as plugin.h is"
