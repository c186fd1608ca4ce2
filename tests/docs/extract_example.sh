#!/bin/sh
# SPDX-License-Identifier: MIT
# Prints the example plugin of an scdoc page: the literal block that defines the entry point
# with a name (RPCD_PLUGIN_DEFINE("...), with scdoc's doubled backslashes made single again.
set -eu
awk '/^```$/ {
         if (inside) { if (block ~ /RPCD_PLUGIN_DEFINE\("/) { printf "%s", block; found = 1; exit } }
         inside = !inside; block = ""; next
     }
     inside { block = block $0 "\n" }
     END { if (!found) exit 1 }' "$1" | sed 's/\\\\/\\/g'
