#!/bin/sh
# SPDX-License-Identifier: MIT
# Prints an example plugin of an scdoc page: the literal block that defines the entry point with
# the name given (RPCD_PLUGIN_DEFINE("name"), with scdoc's doubled backslashes made single again.
set -eu
awk -v name="$2" '/^```$/ {
         if (inside) {
             if (index(block, "RPCD_PLUGIN_DEFINE(\"" name "\"")) { printf "%s", block; found = 1; exit }
         }
         inside = !inside; block = ""; next
     }
     inside { block = block $0 "\n" }
     END { if (!found) exit 1 }' "$1" | sed 's/\\\\/\\/g'
