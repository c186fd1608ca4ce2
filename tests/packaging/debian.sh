#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the Debian packages from a copy of the tree the way Debian's builders do, the package's own
# test run included, checks them with lintian (no error, no warning), installs them, builds
# examples/hello-plugin against the installed rpcd-dev alone (pkg-config, nothing from the tree),
# serves a call through the installed daemon, then purges the packages.
# Needs root (or sudo) and a Debian machine: scripts/test runs it as one of its stages.
# RPCD_DEB_UMASK (default 022) is the build's umask: 002 is the other one Debian's builders use,
# and with it the unpacked source is made writable by its group, as a umask-002 checkout is
# (dh sets 022 again for all it runs, the package's tests included).
set -euo pipefail
source_dir=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
sudo=()
[ "$(id -u)" -ne 0 ] && sudo=(sudo)

fail() {
    echo "debian packages: $*" >&2
    exit 1
}

# The test installs and purges the packages: never over copies a person installed.
for package in rpcd rpcd-dev; do
    if dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed"; then
        fail "$package is already installed on this machine; remove it first (the test purges it)"
    fi
done

work=$(mktemp -d)
installed=0
cleanup() {
    if [ "$installed" -eq 1 ]; then
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get purge -y -qq rpcd rpcd-dev >/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# dpkg-buildpackage writes its packages next to the source directory: build from a copy, with
# nothing of the developer's build directories in it, in a directory of the build's own.
build=$work/build
mkdir -p "$build/rpcd"
if git -C "$source_dir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$source_dir" && git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' file; do [ -e "$file" ] && printf '%s\0' "$file"; done |
        tar --null -T - -cf -) | tar -xf - -C "$build/rpcd"
else
    tar -C "$source_dir" --exclude='./build*' --exclude='./obj-*' -cf - . | tar -xf - -C "$build/rpcd"
fi

# Under umask 002 the unpacked source is as such a checkout leaves it: writable by its group
# (nogroup below, which nobody shares with _apt), a tree rpcd refuses to load from in place.
umask_build=${RPCD_DEB_UMASK:-022}
if [ "$umask_build" = 002 ]; then
    chmod -R g+w "$build/rpcd"
fi

# As Debian's builders (buildd, sbuild) build a package: its own test run included (no nocheck),
# as a user without privileges (nobody when this runs as root), with HOME a directory that does
# not exist, in the C.UTF-8 locale and nothing else of this shell's environment. The packages
# installed below are those of this build.
as_builder=()
if [ "$(id -u)" -eq 0 ]; then
    chmod 755 "$work"
    chown -R nobody:nogroup "$build"
    as_builder=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
fi
start=$SECONDS
# shellcheck disable=SC2016 # the umask and the jobs are the inner shell's arguments
if ! (cd "$build/rpcd" && "${as_builder[@]}" env -i PATH=/usr/bin:/bin HOME=/nonexistent \
        LC_ALL=C.UTF-8 DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-}" \
        sh -c 'umask "$1" && exec dpkg-buildpackage -us -uc -b -J"$2"' sh "$umask_build" "$jobs" \
        >"$work/build.log" 2>&1); then
    tail -n 80 "$work/build.log" >&2
    fail "dpkg-buildpackage failed (umask $umask_build, as $(id -un) or nobody; log above)"
fi
debs=$(cd "$build" && echo *.deb)
tested=1
case " ${DEB_BUILD_OPTIONS:-} " in *" nocheck "*) tested=0 ;; esac
what=$([ "$tested" -eq 1 ] && echo "built and tested" || echo "built (nocheck, not tested)")
echo "packages $what in $((SECONDS - start)) s (umask $umask_build): $debs"

# The test run happened, with the suites debian/rules names, and without valgrind (no
# Build-Depends of the package: a clean chroot has none).
testlog=$(echo "$build"/rpcd/obj-*/meson-logs/testlog.txt)
if [ "$tested" -eq 1 ]; then
    [ -f "$testlog" ] || fail "the package build ran no test (no $testlog)"
    for suite in unit plugins demo install; do
        grep -q "^test: *rpcd:$suite / " "$testlog" ||
            fail "the package build's test run has no test of the $suite suite"
    done
    ! grep -q 'valgrind --quiet' "$testlog" ||
        fail "the package build ran tests under valgrind: debian/rules leaves it to be found"
fi

# rpcd carries libseccomp and jansson linked in: the package names their sources.
built_using=$(dpkg-deb -f "$(echo "$build"/rpcd_*.deb)" Built-Using)
for source in libseccomp jansson; do
    grep -q "\b$source (= " <<<"$built_using" || fail "rpcd's Built-Using lacks $source: '$built_using'"
done

# lintian: an error or a warning fails; the tags it gives (information too) are printed.
changes=$(echo "$build"/rpcd_*.changes)
lintian_status=0
lintian --fail-on error,warning --display-info "$changes" >"$work/lintian.log" 2>&1 || lintian_status=$?
grep -v 'root privileges' "$work/lintian.log" || echo "lintian: no tag"
[ "$lintian_status" -eq 0 ] || fail "lintian found errors or warnings (exit $lintian_status)"

installed=1
if ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
        "$build"/rpcd_*.deb "$build"/rpcd-dev_*.deb >"$work/apt.log" 2>&1; then
    cat "$work/apt.log" >&2
    fail "apt-get could not install the packages"
fi

rpcd=$(dpkg-query -L rpcd | grep -E '/s?bin/rpcd$') || fail "the rpcd package holds no rpcd executable"
dpkg-query -W -f='${Conffiles}\n' rpcd | grep -q '^ /etc/rpcd/rpcd.conf ' ||
    fail "/etc/rpcd/rpcd.conf is not a conffile of rpcd"
for page in man8/rpcd.8.gz man5/rpcd.conf.5.gz; do
    dpkg-query -L rpcd | grep -q "/usr/share/man/$page$" || fail "rpcd does not install $page"
done
dpkg-query -L rpcd-dev | grep -q '/usr/share/man/man3/rpcd-plugin.3.gz$' ||
    fail "rpcd-dev does not install rpcd-plugin(3)"

# The installed default config loads no plugin; a drop-in in /etc/rpcd/rpcd.conf.d/, which the
# package makes, adds one by its name in the installed plugin directory.
[ -d /etc/rpcd/rpcd.conf.d ] || fail "the package does not make /etc/rpcd/rpcd.conf.d"
reply=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"echo","params":{"via":"package"}}' | "$rpcd" -q)
[ "$reply" = '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}' ] ||
    fail "echo through /etc/rpcd/rpcd.conf without a drop-in answered: $reply"
printf '[plugin echo]\npath = echo.so\n' | "${sudo[@]}" tee /etc/rpcd/rpcd.conf.d/50-echo.conf >/dev/null
reply=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"echo","params":{"via":"package"}}' | "$rpcd" -q)
"${sudo[@]}" rm -f /etc/rpcd/rpcd.conf.d/50-echo.conf
[ "$reply" = '{"jsonrpc":"2.0","id":1,"result":{"via":"package"}}' ] ||
    fail "echo through a drop-in of /etc/rpcd/rpcd.conf answered: $reply"

# The example plugin, from a copy of its one file, with what rpcd-dev installed: pkg-config's own
# search path only.
cp "$source_dir/examples/hello-plugin/hello.c" "$work/hello.c"
unset PKG_CONFIG_PATH PKG_CONFIG_LIBDIR CPATH C_INCLUDE_PATH
cflags=$(pkg-config --cflags rpcd-plugin) || fail "pkg-config does not find rpcd-plugin"
libs=$(pkg-config --libs rpcd-plugin)
versionscript=$(pkg-config --variable=versionscript rpcd-plugin)
[ -f "$versionscript" ] || fail "the version script $versionscript is not installed"
pkg-config --exists rpcd-plugin-jansson || fail "pkg-config does not resolve rpcd-plugin-jansson"
(cd "$work" && cc -std=c11 -Wall -Wextra -Wpedantic -Werror -fPIC -shared -fvisibility=hidden \
    -Wl,--no-undefined $cflags hello.c $libs -Wl,--version-script="$versionscript" -o hello.so)

printf '[plugin hello]\npath = %s\nname = package\n' "$work/hello.so" >"$work/rpcd.conf"
reply=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"hello"}' | "$rpcd" -q -c "$work/rpcd.conf")
[ "$reply" = '{"jsonrpc":"2.0","id":1,"result":"hello, package"}' ] ||
    fail "hello through $rpcd answered: $reply"

DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get purge -y -qq rpcd rpcd-dev >/dev/null
installed=0
[ ! -e "$rpcd" ] && [ ! -e /etc/rpcd ] || fail "files of rpcd are left after purge"
echo "debian packages: built, lintian clean of errors and warnings, installed, a plugin built against rpcd-dev served by $rpcd, purged"
