#!/bin/sh
# SPDX-License-Identifier: MIT
# Loads an example plugin built from rpcd-plugin(3) and replays the page's own session for it
# (the "-->" and "<--" lines between the plugin's code and the next example's): the "-->" lines
# are sent, and rpcd must write exactly the "<--" lines. The plugin is $RPCD_FIXTURE_MAN_EXAMPLE
# (scripts/staged's copy when the build tree is one rpcd refuses).
#   RPCD_FIXTURE_MAN_EXAMPLE=X.so example_session.sh RPCD PAGE NAME [CONFIG_LINE...]
set -eu
rpcd=$1 page=$2 name=$3
plugin=${RPCD_FIXTURE_MAN_EXAMPLE:?the example plugin}
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
    printf '[plugin %s]\npath = %s\n' "$name" "$plugin"
    for line in "$@"; do printf '%s\n' "$line"; done
} > "$work/rpcd.conf"
session() {
    awk -v name="$name" -v prefix="$1" '
        index($0, "RPCD_PLUGIN_DEFINE(\"") { on = index($0, "RPCD_PLUGIN_DEFINE(\"" name "\"") > 0 }
        on && substr($0, 1, length(prefix)) == prefix { print substr($0, length(prefix) + 1) }
    ' "$page"
}
session '--> ' > "$work/requests"
session '<-- ' > "$work/expected"
[ -s "$work/requests" ] || { echo "no session for $name in $page"; exit 1; }
"$rpcd" -q -c "$work/rpcd.conf" < "$work/requests" > "$work/actual"
diff -u "$work/expected" "$work/actual"
