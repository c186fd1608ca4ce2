#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/staged: a tree others can write is copied and the variables name the copies, a tree
# only its owner can write is used in place, and both work where /dev/fd does not exist (a
# minimal system: the kernel stage's initramfs has none).
# Usage: staged_test.sh SCRIPTS_STAGED
set -euo pipefail
staged=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/staged-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

mkdir -p "$work/tree/plugins" "$work/tree/etc"
echo plugin > "$work/tree/plugins/one.so"
echo config > "$work/tree/etc/rpcd.conf"
echo other > "$work/tree/etc/other.conf"
chmod -R go-w "$work/tree"

# $1: what the run is; the rest: the command. Prints the plugin and config paths it was given.
run_staged() {
    env -i PATH="$PATH" RPCD_PLUGIN_ONE="$work/tree/plugins/one.so" \
        RPCD_BUILD_CONFIG="$work/tree/etc/rpcd.conf" "$@" bash "$staged" "$work/tree" \
        sh -c 'echo "$RPCD_PLUGIN_ONE"; echo "$RPCD_BUILD_CONFIG"; umask;
               ls "$(dirname "$RPCD_BUILD_CONFIG")"; stat -c %a "$(dirname "$RPCD_PLUGIN_ONE")"'
}

# Only its owner can write the tree: the paths are the tree's own, the umask 022.
out=$(umask 002 && run_staged) || fail "in place: exit $?"
[ "$(sed -n 1p <<<"$out")" = "$work/tree/plugins/one.so" ] || fail "in place: plugin moved: $out"
[ "$(sed -n 2p <<<"$out")" = "$work/tree/etc/rpcd.conf" ] || fail "in place: config moved: $out"
[ "$(sed -n 3p <<<"$out")" = 0022 ] || fail "in place: umask is not 022: $out"

# A group-writable directory above the files: copies, with the layout and the config's whole
# directory, in a directory only its owner can write, removed afterwards.
check_copied() {
    local what=$1 out=$2 plugin config
    plugin=$(sed -n 1p <<<"$out")
    config=$(sed -n 2p <<<"$out")
    case $plugin in
        "$work/tree/"*) fail "$what: not staged: $out" ;;
        */plugins/one.so) ;;
        *) fail "$what: layout not kept: $out" ;;
    esac
    [ "${config%/etc/rpcd.conf}" = "${plugin%/plugins/one.so}" ] || fail "$what: two roots: $out"
    grep -qx other.conf <<<"$out" || fail "$what: the config's directory not copied: $out"
    [ "$(tail -1 <<<"$out")" = 755 ] || fail "$what: the copy's directory mode: $out"
    [ ! -e "$plugin" ] || fail "$what: the copy is left behind: $plugin"
}
chmod g+w "$work/tree"
out=$(run_staged) || fail "group-writable: exit $?"
check_copied group-writable "$out"

# Without /dev/fd (a private mount namespace with an empty /dev), where unshare can make one.
if unshare -m true 2>/dev/null; then
    export work staged
    out=$(unshare -m bash -c 'mount -t tmpfs tmpfs /dev && [ ! -e /dev/fd ] &&
        env -i PATH="$PATH" RPCD_PLUGIN_ONE="$work/tree/plugins/one.so" \
            RPCD_BUILD_CONFIG="$work/tree/etc/rpcd.conf" bash "$staged" "$work/tree" \
            sh -c "echo \$RPCD_PLUGIN_ONE; echo \$RPCD_BUILD_CONFIG; umask;
                   ls \$(dirname \$RPCD_BUILD_CONFIG); stat -c %a \$(dirname \$RPCD_PLUGIN_ONE)"' \
        2>&1) || fail "without /dev/fd: exit $?: $out"
    check_copied "without /dev/fd" "$out"
else
    echo "without /dev/fd: not checked (no mount namespace for this user)"
fi

[ "$failures" -eq 0 ] || exit 1
echo "scripts/staged: all checks passed"
