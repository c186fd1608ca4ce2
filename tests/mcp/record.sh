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
interrupted=0
trap 'interrupted=1; kill -TERM "$pid" 2>/dev/null' TERM
trap 'interrupted=1; kill -INT "$pid" 2>/dev/null' INT
wait "$pid"
status=$?
# A trapped signal ends wait early, with 128 + its number: wait again for the server's own status.
# bash keeps that status when the server ended meanwhile (asking whether it still runs would miss
# it: a server that exits at once on the signal was recorded as 143). 127: the signal came after
# the first wait had the status already.
while [ "$interrupted" = 1 ]; do
    interrupted=0
    wait "$pid"
    again=$?
    [ "$again" -ne 127 ] && status=$again
done
echo "$status" >"$dir/status"
