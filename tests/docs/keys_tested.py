#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every key rpcd.conf(5) documents is set by some test: a key no test writes is a promise
nothing checks. Prints each key no file of tests/ names, and exits 1 when there is one; a key
named in a test only as a word of a comment is a gap this cannot see, which review must."""
import os
import re
import sys

root = sys.argv[1]
with open(os.path.join(root, "docs", "rpcd.conf.5.scd"), encoding="utf-8") as f:
    page = f.read()
# A key's entry begins a line: *name* = VALUE (per-method forms like timeout_ms.METHOD too).
keys = sorted(set(re.findall(r"^\*([a-z_]+)(?:\.[A-Z_]+)?\* =", page, re.MULTILINE)))
if len(keys) < 20:
    sys.exit(f"only {len(keys)} keys found in rpcd.conf(5): has its layout changed?")

texts = []
for folder in ("integration", "unit", "mcp", "install", "packaging", "bindings", "scaffold",
               "plugins"):
    for directory, _, files in os.walk(os.path.join(root, "tests", folder)):
        if "node_modules" in directory:
            continue
        for name in files:
            if name.endswith((".c", ".h", ".case", ".sh", ".mjs", ".py", ".conf")):
                with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
                    texts.append(f.read())
# C strings hold their line breaks as backslash-n: read them as breaks.
corpus = "\n".join(texts).replace("\\n", "\n")
untested = [key for key in keys if not re.search(r"\b" + re.escape(key) + r"\s*=", corpus)]
for key in untested:
    print(f"rpcd.conf(5) documents {key}, and no test sets it")
print(f"{len(keys) - len(untested)} of {len(keys)} keys set by a test")
sys.exit(1 if untested else 0)
