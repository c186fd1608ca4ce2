#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the kernel-dependent tests (isolation, confinement, sandbox, privileges, time slice,
# signals) and rpcd --check on Debian 12's own kernel (6.1), booted under QEMU with the host's
# root file system shared read-only. See README.md beside this file.
# Usage: run.sh BUILD_DIR (built already: the guest runs meson test --no-rebuild)
# Environment: RPCD_KERNEL_CACHE (default ~/.cache/rpcd/kernel), RPCD_KERNEL_UNIT and
# RPCD_KERNEL_INTEGRATION (the meson tests of each suite to run, defaults below),
# RPCD_KERNEL_TIMEOUT (seconds for the whole boot, default 840).
set -euo pipefail

if [ $# -ne 1 ] || [ ! -f "$1/build.ninja" ]; then
    echo "usage: $0 BUILD_DIR (a configured and built meson build dir)" >&2
    exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "$1" && pwd)
cache=${RPCD_KERNEL_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/rpcd/kernel}
unit=${RPCD_KERNEL_UNIT:-"sandbox privileges time_slice signals supervisor host_namespace"}
integration=${RPCD_KERNEL_INTEGRATION:-"isolation confinement containment upgrade_isolated isolation_mcp cases_isolated reload"}
# A bound on a hang only: the stage takes 3 to 5 minutes on an idle 2-core machine, two to three
# times that beside two busy loops (tests/kernel/README.md).
limit=${RPCD_KERNEL_TIMEOUT:-1500}
started=$(date +%s)

sudo=()
[ "$(id -u)" -ne 0 ] && sudo=(sudo)
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
# The static build: the initramfs has no C library.
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "install ok installed" ||
    need+=(busybox-static)
if [ ${#need[@]} -gt 0 ]; then
    echo "== installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
busybox=/bin/busybox

# The kernel: the package linux-image-amd64 depends on, fetched (not installed) and unpacked.
mkdir -p "$cache"
package=$(apt-cache depends linux-image-amd64 2>/dev/null |
    sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -1)
if [ -z "$package" ]; then
    "${sudo[@]}" apt-get update -qq 2>/dev/null || true
    package=$(apt-cache depends linux-image-amd64 |
        sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -1)
fi
[ -n "$package" ] || { echo "kernel: cannot resolve linux-image-amd64" >&2; exit 1; }
release=${package#linux-image-}
tree=$cache/$release
if [ ! -f "$tree/boot/vmlinuz-$release" ]; then
    echo "== fetching $package"
    (cd "$cache" && rm -f "${package}"_*.deb && apt-get download "$package" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
    deb=$(ls "$cache/${package}"_*.deb 2>/dev/null | head -1)
    [ -n "$deb" ] || { echo "kernel: apt-get download $package failed" >&2; exit 1; }
    rm -rf "$tree.tmp" && mkdir -p "$tree.tmp"
    dpkg-deb -x "$deb" "$tree.tmp"
    # The package leaves modules.dep to depmod at install time.
    "$busybox" depmod -b "$tree.tmp" "$release"
    rm -rf "$tree" && mv "$tree.tmp" "$tree" && rm -f "$deb"
fi
modules=$tree/lib/modules/$release

# The modules the guest needs (none of them built in), each after what it depends on.
order=()
add_module() {
    local path
    path=$(sed -n "s#^\\(kernel/.*/$1\\.ko[.a-z]*\\):.*#\\1#p" "$modules/modules.dep")
    if [ -z "$path" ]; then
        grep -q "/$1\\.ko" "$modules/modules.builtin" && return 0
        echo "kernel: no module $1 in $release" >&2; exit 1
    fi
    local deps
    deps=$(sed -n "s#^$path: *##p" "$modules/modules.dep")
    local reversed=() dep
    for dep in $deps; do reversed=("$dep" "${reversed[@]}"); done
    for dep in "${reversed[@]}" "$path"; do
        [[ " ${order[*]} " == *" $dep "* ]] || order+=("$dep")
    done
}
for module in virtio_pci 9pnet_virtio 9p overlay; do add_module "$module"; done

work=$build/kernel-test
results=$work/results
rm -rf "$work" && mkdir -p "$results" "$work/initramfs"/{bin,modules,proc,sys,dev}
cp "$busybox" "$work/initramfs/bin/busybox"
cp "$here/init" "$work/initramfs/init"
for path in "${order[@]}"; do
    cp "$modules/$path" "$work/initramfs/modules/"
    basename "$path" >> "$work/initramfs/modules/modules.list"
done
echo "$results" > "$work/initramfs/results_dir"
echo "$build" > "$work/initramfs/build_dir"
echo "$here/guest.sh" > "$work/initramfs/guest_script"
(cd "$work/initramfs" && find . | "$busybox" cpio -o -H newc 2>/dev/null | gzip -1) > "$work/initramfs.gz"

# What the guest reads: the tests, a probe of the kernel and a config with an isolated plugin.
echo "$unit" > "$results/unit"
echo "$integration" > "$results/integration"
cc -O2 -o "$results/probe" "$here/probe.c"
plugin=$(find "$build/tests/plugins" -maxdepth 1 -name 'isolated_a.so' | head -1)
[ -n "$plugin" ] || { echo "kernel: $build has no tests/plugins/isolated_a.so" >&2; exit 1; }
mkdir -p "$results/writable"
cat > "$results/check.conf" <<CONF
[plugin confined]
path = $plugin
isolation = process
read_paths = $build
write_paths = $results/writable
CONF

echo "== booting $release under QEMU (TCG), modules: ${order[*]##*/}"
serial=$work/serial.log
status=0
# The kernel's command line is Debian's default but for the console and no_timer_check: no
# lsm=, as users boot. An emulated CPU on a busy machine runs too slowly for the kernel's check
# of the IO-APIC timer, which then panics at boot ("IO-APIC + timer doesn't work"): the check
# is skipped, as on most virtual machines; nothing the tests look at depends on it.
# Not nice'd: an emulated CPU at a low priority beside busy programs got a tenth of a core, and
# the stage ten times longer.
timeout --kill-after=10 "$limit" qemu-system-x86_64 \
    -accel tcg,thread=multi -smp 2 -m 2G -nographic -no-reboot \
    -kernel "$tree/boot/vmlinuz-$release" -initrd "$work/initramfs.gz" \
    -append "console=ttyS0 quiet panic=-1 no_timer_check" \
    -fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
    -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
    -fsdev local,id=results,path="$results",security_model=none,multidevs=remap \
    -device virtio-9p-pci,fsdev=results,mount_tag=results \
    </dev/null >"$serial" 2>&1 || status=$?
finished=$(date +%s)

[ -f "$results/guest.log" ] && cat "$results/guest.log"
marker=$(sed -n 's/.*RPCD-KERNEL-STATUS=\([0-9]*\).*/\1/p' "$serial" | tail -1)
if [ -z "$marker" ]; then
    echo "== no status from the guest (qemu exit $status); its console:" >&2
    tail -50 "$serial" >&2
    exit 1
fi
echo "== $release: guest status $marker, $((finished - started)) s in all"
exit "$marker"
