# SPDX-License-Identifier: MIT
"""What `run --drawn` does besides running mutants: telling which drawn mutants are ones the
hand list or drawn-equivalent.ini already judged, the report per module, and the JSON report
(one record per mutant) that runs can be merged from (`run --merge`)."""
import configparser
import json
import os

import sites


def read_equivalents(path):
    """drawn-equivalent.ini: sections with file, from, to and equivalent (or survives)."""
    parser = configparser.ConfigParser(interpolation=None, strict=True,
                                       comment_prefixes=("#",), inline_comment_prefixes=None,
                                       empty_lines_in_values=False)
    parser.optionxform = str
    try:
        with open(path, encoding="utf-8") as f:
            parser.read_file(f)
    except FileNotFoundError:
        return []
    return [dict(parser[name], ident=name) for name in parser.sections()]


def check_equivalents(entries, root):
    problems = []
    for entry in entries:
        where = f"drawn-equivalent.ini: [{entry['ident']}]"
        if not all(entry.get(key) for key in ("file", "from", "to")) or \
                not (entry.get("equivalent") or entry.get("survives")):
            problems.append(f"{where}: needs file, from, to and equivalent (or survives)")
            continue
        try:
            with open(os.path.join(root, entry["file"]), encoding="utf-8") as f:
                count = f.read().count(entry["from"])
        except OSError:
            count = 0
        if count != 1:
            problems.append(f"{where}: `{entry['from']}` stands {count} times in {entry['file']}")
    return problems


def _mutated(root, path, original, replacement, cache):
    if path not in cache:
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                cache[path] = f.read()
        except OSError:
            cache[path] = ""
    text = cache[path]
    if text.count(original) != 1:
        return None
    return text.replace(original, replacement, 1)


def annotate(drawn, hand, entries, root):
    """A drawn mutant that makes the file what a hand mutant or an entry of
    drawn-equivalent.ini makes it takes that one's equivalent and survives notes: the texts
    compared are the mutated files, so a `from` widened otherwise still matches."""
    cache = {}
    files = {m.path for m in drawn}
    known = {}
    for mutant in hand:
        if mutant.path in files:
            text = _mutated(root, mutant.path, mutant.original, mutant.replacement, cache)
            if text is not None:
                known.setdefault((mutant.path, text), (mutant.ident, mutant.equivalent,
                                                       mutant.survives))
    for entry in entries:
        if entry.get("file") in files:
            text = _mutated(root, entry["file"], entry.get("from", ""), entry.get("to", ""),
                            cache)
            if text is not None:
                known[(entry["file"], text)] = (entry["ident"], entry.get("equivalent"),
                                                entry.get("survives"))
    for mutant in drawn:
        text = _mutated(root, mutant.path, mutant.original, mutant.replacement, cache)
        match = known.get((mutant.path, text))
        if match:
            mutant.same_as, mutant.equivalent, mutant.survives = match


def record(mutant, outcome, seconds, root):
    return {"id": mutant.ident, "module": mutant.module, "class": mutant.site.cls,
            "file": mutant.path, "line": sites.line_of(mutant.path, root, mutant.original),
            "from": mutant.original, "to": mutant.replacement, "outcome": outcome,
            "seconds": round(seconds, 1), "killed_by": mutant.stage, "same_as": mutant.same_as,
            "equivalent": mutant.equivalent, "survives": mutant.survives}


def write_json(path, meta, records):
    """Written anew after each mutant, through a rename: a stopped run leaves what it judged."""
    temporary = path + ".part"
    with open(temporary, "w", encoding="utf-8") as f:
        json.dump(dict(meta, mutants=records), f, indent=1)
        f.write("\n")
    os.replace(temporary, path)


def merge(paths):
    """The records of several reports; a mutant judged in more than one keeps the last."""
    merged = {}
    seeds = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        seeds.append(report.get("seed", "?"))
        for entry in report.get("mutants", []):
            if entry["outcome"] in ("killed", "survived") or entry["id"] not in merged:
                merged[entry["id"]] = entry
    return seeds, list(merged.values())


def print_report(records, fast_only=False):
    """The score per module and every survivor; returns (judged, stillborn, tried)."""
    modules = {}
    for entry in records:
        row = modules.setdefault(entry["module"], {"killed": 0, "survived": 0, "equivalent": 0,
                                                   "stillborn": 0})
        row[entry["outcome"]] = row.get(entry["outcome"], 0) + 1
    print("\ndrawn module         killed  survived  equivalent  stillborn  score")
    total = {"killed": 0, "survived": 0, "stillborn": 0, "equivalent": 0}
    for module in sorted(modules):
        row = modules[module]
        for key in total:
            total[key] += row[key]
        tried = row["killed"] + row["survived"]
        score = f"{100 * row['killed'] / tried:.0f}%" if tried else "-"
        print(f"{module:20} {row['killed']:6}  {row['survived']:8}  {row['equivalent']:10}  "
              f"{row['stillborn']:9}  {score:>5}")
    judged = total["killed"] + total["survived"]
    if judged:
        print(f"{'all':20} {total['killed']:6}  {total['survived']:8}  {total['equivalent']:10}  "
              f"{total['stillborn']:9}  {100 * total['killed'] / judged:.1f}%")
    by_class = {}
    for entry in records:
        if entry["outcome"] in ("killed", "survived"):
            row = by_class.setdefault(entry["class"], [0, 0])
            row[entry["outcome"] == "survived"] += 1
    if by_class:
        print("by class: " + ", ".join(f"{cls} {row[0]}/{row[0] + row[1]} killed"
                                       for cls, row in sorted(by_class.items())))
    stages = {}
    for entry in records:
        if entry["outcome"] == "killed" and entry.get("killed_by"):
            stages[entry["killed_by"]] = stages.get(entry["killed_by"], 0) + 1
    if stages:
        print("killed by: " + ", ".join(f"{stage} {n}" for stage, n in sorted(stages.items())))
    survivors = [e for e in records if e["outcome"] == "survived"]
    for entry in sorted(survivors, key=lambda e: (e["file"], e["line"])):
        why = entry.get("survives") or ("unit and integration only, no valgrind (--fast-only)"
                                        if fast_only else "not classified")
        same = f", same as [{entry['same_as']}]" if entry.get("same_as") else ""
        print(f"survivor [{entry['id']}] {entry['file']}:{entry['line']} ({entry['class']}"
              f"{same}): {why}\n    from: {entry['from']}\n    to:   {entry['to']}")
    print(f"stillborn (does not build, not counted): {total['stillborn']}")
    return judged, total["stillborn"], judged + total["stillborn"]
