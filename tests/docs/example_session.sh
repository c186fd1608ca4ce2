#!/bin/sh
# SPDX-License-Identifier: MIT
# Loads the example plugin built from rpcd-plugin(3) and replays the page's own session: the
# "-->" lines are sent, and rpcd must write exactly the "<--" lines.
set -eu
rpcd=$1 plugin=$2 page=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '[plugin later]\npath = %s\nmax_ms = 5000\n' "$plugin" > "$work/rpcd.conf"
sed -n 's/^--> //p' "$page" > "$work/requests"
sed -n 's/^<-- //p' "$page" > "$work/expected"
[ -s "$work/requests" ] || { echo "no session in $page"; exit 1; }
"$rpcd" -q -c "$work/rpcd.conf" < "$work/requests" > "$work/actual"
diff -u "$work/expected" "$work/actual"
