#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Rebuilds the seed corpora in fuzz/corpus/ from the tests' own inputs: the lines the case files
# send, the JSONTestSuite corpus, and the config files; and one of every MCP request shape, with
# names too long, spelled with escapes and given twice. Run from anywhere; commit what changes.
import hashlib
import json
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

# Every MCP request rpcd answers or reads itself, as a client sends it: the handshake, the tool
# list and its cursor, tools/call in each shape, progress, both cancellations, and batches.
def request(method, params=None, id=1):
    message = {"jsonrpc": "2.0", "method": method}
    if id is not None:
        message["id"] = id
    if params is not None:
        message["params"] = params
    return json.dumps(message, separators=(",", ":"))


shapes = [
    request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "seed", "version": "1"}}),
    request("notifications/initialized", id=None),
    request("ping"),
    request("server/discover"),
    request("tools/list"),
    request("tools/list", {"cursor": "0"}),
    request("tools/call", {"name": "echo", "arguments": {"a": 1}}),
    request("tools/call", {"name": "echo"}),
    request("tools/call", {"name": "fail", "arguments": {}}),
    request("tools/call", {"name": "progress", "arguments": {}, "_meta": {"progressToken": "p"}}),
    request("tools/call", {"name": "no.such", "arguments": {}}),
    request("tools/call", {"name": "echo", "arguments": [1]}),
    request("tools/call", {}),
    request("tools/call", {"name": "echo", "arguments": {}}, id=None),
    request("progress", {"_meta": {"progressToken": 7}}),
    request("$/cancelRequest", {"id": 1}, id=None),
    request("notifications/cancelled", {"requestId": 1, "reason": "seed"}, id=None),
    # Names at and over MCP's 128 bytes, plainly and through escapes.
    request("tools/call", {"name": "x" * 128, "arguments": {}}),
    request("tools/call", {"name": "x" * 129, "arguments": {}}),
    request("tools/call", {"name": "x" * 2000, "arguments": {}}),
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":{}}}'
    % ("\\u0078" * 129),
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\\u0065\\u0063\\u0068\\u006f"}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a\\u0000\\ud800"}}',
    # Members rpcd reads, given twice.
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"fail","arguments":{}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"arguments":{"a":1}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":1,"progressToken":2}}}',
    '{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1,"id":2}}',
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","protocolVersion":"x"}}',
]
# The Tasks extension (2026-07-28): a task tool called with the extension declared, and each
# request of the extension, with an id no task has and with wrong params.
TASKS_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities":
                  {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}}
shapes += [
    request("tools/call", {"name": "long", "arguments": {"a": 1}, "_meta": TASKS_META}),
    request("tasks/get", {"taskId": "0123456789abcdef0123456789abcdef", "_meta": TASKS_META}),
    request("tasks/update", {"taskId": "x", "inputResponses": {"1.a": {"action": "accept"}},
                             "_meta": TASKS_META}),
    request("tasks/cancel", {"taskId": 7, "_meta": TASKS_META}),
    request("subscriptions/listen", {"notifications": {"taskIds": ["x"]}, "_meta": TASKS_META}),
]
batch = "[" + ",".join(shapes[2:8]) + "]"
for line in shapes + [batch]:
    put("protocol", line.encode() + b"\n")
put("protocol", "\n".join(shapes).encode() + b"\n")
