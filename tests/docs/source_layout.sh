#!/bin/sh
# SPDX-License-Identifier: MIT
# Every source file of daemon/ is named in docs/source-layout.md by its path under daemon/
# ("`folder/name.c`, `.h`", "`folder/name.c`" or "`folder/name.h`"), and every path a row names
# there exists: the map of the code stays whole and true. Usage: source_layout.sh SOURCE_ROOT
set -eu
root=$1
layout=$root/docs/source-layout.md
missing=0
for file in $(cd "$root/daemon" && find . -name '*.c' -o -name '*.h' | sed 's|^\./||' | sort); do
    stem=${file%.*}
    if ! grep -q -e "\`$file\`" -e "\`$stem.c\`, \`.h\`" "$layout"; then
        echo "docs/source-layout.md does not name daemon/$file" >&2
        missing=$((missing + 1))
    fi
done
# The rows of the daemon's tables: their first cell's paths, a .h for ", `.h`".
for named in $(sed -n '/^## `daemon\/`/,/^## The rest/p' "$layout" | grep '^| `' |
    sed 's/^| \(.*\) | .*$/\1/; s/ | .*//' | sed 's/`\([^`]*\)\.c`, `\.h`/`\1.c` `\1.h`/g' |
    tr -d '`,' | tr ' ' '\n' | grep -v '^$'); do
    if [ ! -e "$root/daemon/$named" ]; then
        echo "docs/source-layout.md names daemon/$named, which does not exist" >&2
        missing=$((missing + 1))
    fi
done
[ "$missing" -eq 0 ] || exit 1
echo "every file of daemon/ is in docs/source-layout.md, and every file it names is there"
