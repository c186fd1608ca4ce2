#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Rebuilds the seed corpora in fuzz/corpus/ from the tests' own inputs: the lines the case files
# send, the JSONTestSuite corpus, and the config files. Run from anywhere; commit what changes.
import hashlib
import pathlib

root = pathlib.Path(__file__).resolve().parent.parent
corpus = root / "fuzz" / "corpus"


def put(kind, data):
    directory = corpus / kind
    directory.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    (directory / name).write_bytes(data)


suite = root / "tests" / "data" / "jsontestsuite" / "test_parsing"
for path in sorted(suite.iterdir()):
    data = path.read_bytes()
    if len(data) > 4096:
        continue  # the deep-nesting files: the fuzzer builds such inputs by itself
    put("json", data)
    put("protocol", data.replace(b"\n", b" ") + b"\n")

for case in sorted((root / "tests" / "integration" / "cases").glob("*.case")):
    sent = [line[4:] for line in case.read_bytes().split(b"\n") if line.startswith(b"--> ")]
    put("protocol", b"\n".join(sent) + b"\n")
    for line in sent:
        put("protocol", line + b"\n")
        put("json", line)

configs = [root / "etc" / "rpcd.conf", *sorted((root / "tests" / "integration" / "cases").glob("*.conf"))]
for path in configs:
    put("config", path.read_bytes())
put("config", b"[rpcd]\nworkers = 4\nmax_in_flight = 10\nmax_batch = 5\nshutdown_grace_ms = 100\n"
              b"max_line_bytes = 1024\nmax_depth = 8\nlog_level = debug\nplugin_dir = /x\n"
              b"[plugin a]\npath = a.so\nrequired = false\nkey = value ; comment\n")
