#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the guest, as root, on the host's root file system (read-only, under a tmpfs
# overlay): the kernel's facts, rpcd --check on an isolated plugin, and the kernel-dependent
# meson tests. Writes its log and status to the results share; prints the status as a marker.
# Usage: guest.sh BUILD_DIR RESULTS_DIR
build=$1 results=$2
here=$(dirname "$0")
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
# The tests that count their work by the clock do less of it on an emulated CPU.
export RPCD_TEST_EMULATED=1
mount -t tmpfs -o mode=0755 tmpfs /run
# A fresh /tmp, as a booted system has; a checkout that lives under the host's /tmp (the build
# tree, this script, the results share) stays where it was, bound back into it.
mkdir -p /run/host-tmp
mount --rbind /tmp /run/host-tmp
mount -t tmpfs -o mode=1777 tmpfs /tmp
for path in "$build" "$results" "$here"; do
    case $path in
        /tmp/?*)
            top=${path#/tmp/}
            top=/tmp/${top%%/*}
            [ -d "$top" ] || { mkdir -p "$top" && mount --rbind "/run/host-tmp/${top#/tmp/}" "$top"; }
            ;;
    esac
done
mkdir -p /dev/shm /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t devpts devpts /dev/pts
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
log=$results/guest.log

run() {
    echo "== kernel (booted in $(cut -d" " -f1 /proc/uptime) s of guest time)"
    echo "cmdline: $(cat /proc/cmdline)"
    "$results/probe"
    grep -E '^(Seccomp|NoNewPrivs)' /proc/self/status
    # Whether a host not root's can have a PID namespace (in a user namespace): Debian's own
    # switch, where the kernel has it, and the limit every kernel has.
    for knob in kernel/unprivileged_userns_clone user/max_user_namespaces; do
        echo "$knob: $(cat /proc/sys/$knob 2>/dev/null || echo absent)"
    done
    echo "== rpcd --check (an isolated plugin, read_paths and write_paths)"
    status=0
    "$build/daemon/rpcd" --check --config "$results/check.conf" 2>&1 || status=1
    echo "rpcd --check: exit status $status"
    echo "== meson test"
    start=$(date +%s)
    for suite in unit integration; do
        # shellcheck disable=SC2046
        meson test -C "$build" --no-rebuild --print-errorlogs --timeout-multiplier 10 \
            --num-processes 2 --suite "$suite" $(cat "$results/$suite") || status=1
        cp "$build/meson-logs/testlog.txt" "$results/testlog-$suite.txt" 2>/dev/null
    done
    echo "meson test: exit $status after $(($(date +%s) - start)) s"
    echo "== what the tests said of this kernel (skips, and where they took its older behaviour)"
    grep -hE '^\[  SKIPPED \] test_|this kernel|skipped' "$results"/testlog-*.txt | sort | uniq -c
    return $status
}
run > "$log" 2>&1
status=$?
sync
echo "RPCD-KERNEL-STATUS=$status"
/bin/busybox poweroff -f 2>/dev/null || echo o > /proc/sysrq-trigger
