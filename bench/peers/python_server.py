#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A JSON-RPC 2.0 stdio server as teaching material writes one: read stdin line by line,
# json.loads, dispatch, json.dumps, write and flush each reply. A peer for bench/run.
import json
import sys


def echo(params):
    return params


METHODS = {"echo": echo}


def handle(request):
    if not isinstance(request, dict) or "id" not in request:
        return None
    method = METHODS.get(request.get("method"))
    if method is None:
        return {"jsonrpc": "2.0", "id": request["id"],
                "error": {"code": -32601, "message": "Method not found"}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": method(request.get("params"))}


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            reply = {"jsonrpc": "2.0", "id": None,
                     "error": {"code": -32700, "message": "Parse error"}}
        else:
            if isinstance(message, list):
                reply = [r for r in map(handle, message) if r is not None] or None
            else:
                reply = handle(message)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
