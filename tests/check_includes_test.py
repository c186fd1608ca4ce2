#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""scripts/check-includes on small trees made here: it must fail on a cycle between folders (even
one that runs through a .c file alone), between headers, and pass a tree whose layers hold.
usage: check_includes_test.py SCRIPT"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile


def tree(files):
    """A temp dir holding files (path: text), removed when the test ends."""
    root = tempfile.mkdtemp(prefix="rpcd-tree-")
    atexit.register(shutil.rmtree, root, True)
    for path, text in files.items():
        os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(root, path), "w", encoding="utf-8") as f:
            f.write(text)
    return root


def run(script, root):
    done = subprocess.run([sys.executable, script, root, "--modules"], capture_output=True,
                          text=True)
    return done.returncode, done.stdout


def main():
    script = sys.argv[1]
    layered = {
        "base/lock.h": "",
        "base/lock.c": '#include "lock.h"\n',
        "calls/call.h": '#include "base/lock.h"\n',
        "calls/call.c": '#include "call.h"\n#include "base/lock.h"\n',
        "main.c": '#include "calls/call.h"\n',
    }
    failures = []
    status, out = run(script, tree(layered))
    if status != 0 or "no cycle" not in out:
        failures.append(f"a layered tree was refused: {out}")
    upward = dict(layered)
    upward["base/lock.c"] = '#include "lock.h"\n#include "calls/call.h"\n'
    status, out = run(script, tree(upward))
    if status != 1 or "cycle between modules: base -> calls -> base" not in out:
        failures.append(f"a .c file's upward include was not seen: {status} {out}")
    headers = dict(layered)
    headers["base/lock.h"] = '#include "other.h"\n'
    headers["base/other.h"] = '#include "lock.h"\n'
    status, out = run(script, tree(headers))
    if status != 1 or "include cycle between headers" not in out:
        failures.append(f"a cycle between headers was not seen: {status} {out}")
    for failure in failures:
        print(failure)
    if not failures:
        print("check-includes: layered tree passes, both kinds of cycle fail")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
