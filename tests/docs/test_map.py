#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""docs/testing.md's map of the daemon's folders to their tests, against the tree: every folder
of daemon/ has a row; every unit test is in the row of the folder its file lives in, and names a
file there; every integration test is in some row; a row names no test that does not exist.
usage: test_map.py SOURCE_ROOT"""
import glob
import os
import re
import sys

HEADING = "## Which tests cover which part of the daemon"
# What a row may name beside the integration tests and fuzz targets: suites and stages.
OTHERS = {"kernel", "mcp", "docs", "*_isolated"}


def rows(text):
    start = text.index(HEADING)
    table = {}
    for line in text[start:].split("\n")[1:]:
        if line.startswith("## "):
            break
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        folder = re.findall(r"`([^`]+)`", cells[0])[0]
        table[folder] = (re.findall(r"`([^`]+)`", cells[1]), re.findall(r"`([^`]+)`", cells[2]))
    return table


def main(root):
    with open(os.path.join(root, "docs", "testing.md"), encoding="utf-8") as f:
        table = rows(f.read())
    problems = []
    daemon = os.path.join(root, "daemon")
    folders = sorted(d + "/" for d in os.listdir(daemon) if os.path.isdir(os.path.join(daemon, d)))
    for folder in folders + ["main.c"]:
        if folder not in table:
            problems.append(f"daemon/{folder} has no row")
    where = {}
    for path in glob.glob(os.path.join(daemon, "*", "*.[ch]")):
        where[os.path.splitext(os.path.basename(path))[0]] = path.split(os.sep)[-2] + "/"
    units = sorted(os.path.basename(p)[5:-2]
                   for p in glob.glob(os.path.join(root, "tests", "unit", "test_*.c")))
    integration = {os.path.basename(p)[5:-2]
                   for p in glob.glob(os.path.join(root, "tests", "integration", "test_*.c"))}
    fuzzers = {os.path.basename(p)[:-2] for p in glob.glob(os.path.join(root, "fuzz", "fuzz_*.c"))}
    for unit in units:
        folder = where.get(unit)
        if not folder:
            problems.append(f"tests/unit/test_{unit}.c names no file of daemon/")
        elif unit not in table.get(folder, ([], []))[0]:
            problems.append(f"tests/unit/test_{unit}.c is not in the row of daemon/{folder}")
    named = set()
    for folder, (unit_names, other_names) in table.items():
        for unit in unit_names:
            if unit not in units:
                problems.append(f"row {folder}: no tests/unit/test_{unit}.c")
            elif where.get(unit) != folder:
                problems.append(f"row {folder}: test_{unit} is about daemon/{where.get(unit)}")
        for name in other_names:
            named.add(name)
            if name not in integration and name not in fuzzers and name not in OTHERS:
                problems.append(f"row {folder}: `{name}` is no test, fuzz target or stage")
    for name in sorted(integration - named):
        problems.append(f"tests/integration/test_{name}.c is in no row")
    for problem in problems:
        print("docs/testing.md: " + problem)
    if not problems:
        print(f"docs/testing.md maps {len(table)} parts of daemon/ to {len(units)} unit and "
              f"{len(integration)} integration tests")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
