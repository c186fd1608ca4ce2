#!/bin/sh
# SPDX-License-Identifier: MIT
# Each built man page renders with man -l at 80 columns, without a warning from groff, and
# meson install puts it in its section of the manual.
set -eu
build_dir=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for page in "$@"; do
    name=$(basename "$page")
    groff -man -ww -z "$page" 2> "$work/warnings"
    if [ -s "$work/warnings" ]; then
        echo "$name: groff warns:"; cat "$work/warnings"; exit 1
    fi
    MANWIDTH=80 man -l "$page" > "$work/$name.txt" 2> "$work/warnings"
    if [ -s "$work/warnings" ]; then
        echo "$name: man warns:"; cat "$work/warnings"; exit 1
    fi
    grep -q '^NAME' "$work/$name.txt" || { echo "$name: no NAME section rendered"; exit 1; }
done
meson install -C "$build_dir" --no-rebuild --quiet --destdir "$work/root" > /dev/null
for page in "$@"; do
    name=$(basename "$page")
    find "$work/root" -path "*/man/man${name##*.}/$name" | grep -q . ||
        { echo "$name is not installed in man${name##*.}"; exit 1; }
done
