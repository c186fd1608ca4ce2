#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs one fuzz target for a bounded time on a copy of its seed corpus, so that a short run in
# the test suite leaves the repository untouched. Usage: run-fuzzer.sh FUZZER SEEDS SECONDS [DICT]
set -eu
fuzzer=$1 seeds=$2 seconds=$3 dict=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cp -R "$seeds"/. "$work/corpus/"
cd "$work"
set -- -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
    -error_exitcode=1 -timeout_exitcode=1
if [ -n "$dict" ]; then
    set -- "$@" -dict="$dict"
fi
# libFuzzer exits 77 on a crash by default, which meson would count as a skip: make it 1.
exec "$fuzzer" "$@" corpus
