#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs rpcd into a scratch directory, builds examples/hello-plugin/hello.c the way an
# outsider would (pkg-config rpcd-plugin, nothing from the source tree), and loads it.
set -eu
build_dir=$1 source_dir=$2 rpcd=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

meson install -C "$build_dir" --no-rebuild --quiet --destdir "$work/root" >/dev/null
pc=$(find "$work/root" -name rpcd-plugin.pc | head -n 1)
[ -n "$pc" ] || { echo "rpcd-plugin.pc was not installed"; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")"
# The .pc file sits under the scratch root, not under its real prefix: move the prefix there.
prefix=$(pkg-config --variable=prefix rpcd-plugin)
pc() { pkg-config --define-variable=prefix="$work/root$prefix" "$@" rpcd-plugin; }
cflags=$(pc --cflags)
plugindir=$(pc --variable=plugindir)
case "$plugindir" in */rpcd/plugins) ;; *) echo "unexpected plugindir: $plugindir"; exit 1 ;; esac
[ -d "$plugindir" ] || { echo "plugindir $plugindir does not exist after install"; exit 1; }
for name in echo spec progress fail; do
    [ -f "$plugindir/$name.so" ] || { echo "bundled plugin $name.so not installed"; exit 1; }
done
find "$work/root" -path '*/rpcd/rpcd.conf' | grep -q . || { echo "config not installed"; exit 1; }

cc -std=c11 -Wall -Wextra -Wpedantic -Werror -fPIC -shared -fvisibility=hidden \
   -Wl,--no-undefined $cflags "$source_dir/examples/hello-plugin/hello.c" -o "$work/hello.so"

printf '[plugin hello]\npath = hello.so\nname = outsider\n' > "$work/rpcd.conf"
reply=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"hello"}' |
        "$rpcd" -q -c "$work/rpcd.conf")
expected='{"jsonrpc":"2.0","id":1,"result":"hello, outsider"}'
if [ "$reply" != "$expected" ]; then
    echo "got:      $reply"
    echo "expected: $expected"
    exit 1
fi
echo "out-of-tree plugin built with pkg-config and loaded"
