#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""scripts/check-sizes on small trees made here: it must fail on a file over its line bound and
on a function over its own, and pass a tree within both.
usage: check_sizes_test.py SCRIPT"""
import subprocess
import sys

# The trees are made as check_includes_test.py makes them.
from check_includes_test import tree


def function(name, body_lines):
    return f"int {name}(void)\n{{\n" + "    x++;\n" * body_lines + "    return 0;\n}\n"


def run(script, root):
    done = subprocess.run([sys.executable, script, root, "--most-lines", "40",
                           "--most-function-lines", "10"], capture_output=True, text=True)
    return done.returncode, done.stdout


def main():
    script = sys.argv[1]
    failures = []
    status, out = run(script, tree({"a/small.c": function("fits", 7)}))
    if status != 0:
        failures.append(f"a tree within bounds was refused: {out}")
    status, out = run(script, tree({"a/long.c": function("too_long", 8)}))
    if status != 1 or "too_long is 11 lines long" not in out:
        failures.append(f"an 11-line function passed a bound of 10: {out}")
    status, out = run(script, tree({"b/big.h": "/* line */\n" * 41}))
    if status != 1 or "41 lines, more than 40" not in out:
        failures.append(f"a 41-line file passed a bound of 40: {out}")
    for failure in failures:
        print(failure)
    if not failures:
        print("check-sizes: a tree within bounds passes, a long file and a long function fail")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
