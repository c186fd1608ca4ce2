#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A client that reads slowly: sends N echo requests with params of SIZE bytes to a stdio server
# while reading its replies CHUNK bytes every PAUSE seconds, then prints how many replies came
# and the server's peak RSS (ru_maxrss from wait4, KiB). Shows whether a server's memory stays
# bounded when its client falls behind; see bench/README.md, "Figures behind design choices".
import argparse
import os
import subprocess
import threading
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", "--requests", type=int, default=200)
    parser.add_argument("-p", "--payload-bytes", type=int, default=1000000)
    parser.add_argument("--chunk", type=int, default=65536, help="bytes read at a time")
    parser.add_argument("--pause", type=float, default=0.002, help="seconds between reads")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG...]")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no server command")
    params = '["' + "x" * args.payload_bytes + '"]'
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)

    def feed():
        try:
            for i in range(args.requests):
                server.stdin.write(('{"jsonrpc":"2.0","id":%d,"method":"echo","params":%s}\n'
                                    % (i + 1, params)).encode())
            server.stdin.close()
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=feed)
    writer.start()
    replies = 0
    while True:
        data = os.read(server.stdout.fileno(), args.chunk)
        if not data:
            break
        replies += data.count(b"\n")
        time.sleep(args.pause)
    writer.join()
    _, status, usage = os.wait4(server.pid, 0)
    print("replies %d of %d, exit status %d, server peak RSS %d KiB"
          % (replies, args.requests, os.waitstatus_to_exitcode(status), usage.ru_maxrss))
    return 0 if replies == args.requests and status == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
