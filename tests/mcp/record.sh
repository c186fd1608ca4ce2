#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs a server command for a client that spawns it, keeping what the client wrote to it in
# DIR/input, what the server answered in DIR/output and the server's exit status in DIR/status,
# for clients whose API shows none of them.
# A SIGTERM or SIGINT the client sends is passed on to the server.
# Usage: record.sh DIR command [arguments...]
dir=$1
shift
"$@" < <(tee "$dir/input") > >(tee "$dir/output") &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' TERM
trap 'kill -INT "$pid" 2>/dev/null' INT
wait "$pid"
status=$?
# A trapped signal ends wait early: wait again for the server's own status.
while kill -0 "$pid" 2>/dev/null; do
    wait "$pid"
    status=$?
done
echo "$status" >"$dir/status"
