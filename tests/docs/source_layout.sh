#!/bin/sh
# SPDX-License-Identifier: MIT
# Every source file of daemon/ is named in docs/source-layout.md ("`name.c`, `.h`" or
# "`name.c`"), so that the map of the code stays whole. Usage: source_layout.sh SOURCE_ROOT
set -eu
root=$1
layout=$root/docs/source-layout.md
missing=0
for file in $(cd "$root/daemon" && find . -name '*.c' -o -name '*.h' | sed 's|^\./||' | sort); do
    stem=${file%.*}
    base=${file##*/}
    if ! grep -q -e "\`$file\`" -e "\`$stem.c\`, \`.h\`" -e "\`$base\`" "$layout"; then
        echo "docs/source-layout.md does not name daemon/$file" >&2
        missing=$((missing + 1))
    fi
done
[ "$missing" -eq 0 ] || exit 1
echo "every file of daemon/ is in docs/source-layout.md"
