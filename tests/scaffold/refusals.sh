#!/bin/sh
# SPDX-License-Identifier: MIT
# rpcd new, refusing: bad names (empty, too long, a '/', '..', other bytes, reserved words), an
# unknown language, a directory that is not empty, a symbolic link, a file, a directory it may
# not write; each with its status and message, and nothing written. Then projects written: the
# files of each language, the name filled in everywhere and no placeholder left, the bindings
# copied byte for byte, no file or directory writable by others whatever the umask; and two at
# once into one directory, never both written.
# Usage: refusals.sh SOURCE_DIR (RPCD_BINARY: the rpcd; RPCD_TEST_WRAPPER: valgrind, say)
set -eu
source_dir=$1
rpcd=$RPCD_BINARY
wrap=${RPCD_TEST_WRAPPER:-}
work=$(mktemp -d)
trap 'chmod -R u+rwx "$work"; rm -rf "$work"' EXIT
chmod 755 "$work"
cd "$work"
umask 000
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
# expect STATUS TEXT ARG...: rpcd new ARG... exits STATUS with TEXT on stderr.
expect() {
    want=$1 text=$2
    shift 2
    status=0
    $wrap "$rpcd" new "$@" >"$work/out" 2>"$work/err" || status=$?
    [ "$status" = "$want" ] || fail "rpcd new $*: status $status, not $want: $(cat "$work/err")"
    grep -qF -- "$text" "$work/err" || fail "rpcd new $*: no \"$text\" in: $(cat "$work/err")"
}
# Nothing may have been written into projects/ by a refusal.
untouched() {
    [ -z "$(ls -A "$work/projects")" ] || fail "a refusal wrote: $(ls -A "$work/projects")"
}
mkdir projects

for case in "|it is empty" "a/b|holds a '/'" "../x|holds a '/'" "x..y|holds '..'" \
    "..|holds '..'" "Upper|does not begin with a lowercase letter" "9lives|does not begin" \
    "a-b|a byte other than" "a b|a byte other than" "fn|reserved word" "rpcd|reserved word" \
    "std|reserved word" "rpc|reserved by JSON-RPC" \
    "abcdefghijklmnopqrstuvwxyz0123456|longer than 32 bytes"; do
    name=${case%%|*}
    expect 64 "${case#*|}" "$name" --dir "projects/x"
    expect 64 "cannot name a plugin" "$name" --dir "projects/x"
    untouched
done
expect 64 "unknown language 'cobol'" good --lang cobol --dir projects/x
expect 64 "unknown language ''" good --lang= --dir projects/x
expect 64 "give one NAME" --dir projects/x
expect 64 "give one NAME" one two --dir projects/x
expect 64 "unrecognized option" good --color --dir projects/x
untouched

# A directory with anything in it, a symbolic link (even to an empty directory), a file.
mkdir full empty
echo keep >full/keep
ln -s empty link
: >file
expect 73 "full exists and is not empty" good --dir full
[ "$(ls -A full)" = keep ] && [ "$(cat full/keep)" = keep ] || fail "full/ was changed"
expect 73 "link is a symbolic link: give the directory itself" good --dir link
ln -s file file_link
expect 73 "file_link is a symbolic link" good --dir file_link
expect 73 "file exists and is not a directory" good --dir file
[ -z "$(ls -A empty)" ] && [ ! -s file ] || fail "a refused target was written"

# Directories rpcd may not write: as root, that is as nobody.
as_user=""
if [ "$(id -u)" = 0 ]; then
    command -v setpriv >/dev/null || fail "running as root without setpriv to drop privileges"
    as_user="setpriv --reuid=nobody --regid=nogroup --clear-groups"
fi
mkdir -p locked/empty
chmod 555 locked locked/empty
status=0
$as_user $wrap "$rpcd" new good --dir locked/new 2>"$work/err" || status=$?
[ "$status" = 73 ] && grep -qF "cannot make the directory locked/new: Permission denied" err ||
    fail "an unwritable parent: status $status: $(cat err)"
status=0
$as_user $wrap "$rpcd" new good --dir locked/empty 2>"$work/err" || status=$?
[ "$status" = 73 ] && grep -qF "cannot write locked/empty/" err &&
    grep -qF "(the 0 files written before stay in locked/empty)" err ||
    fail "an unwritable empty directory: status $status: $(cat err)"
[ -z "$(ls -A locked/empty)" ] || fail "locked/empty was written"

# Projects written: into a directory made, an empty one, the default ./NAME.
count_files() { find "$1" -type f | wc -l | tr -d ' '; }
for language in c cpp rust go; do
    name=p_$language
    $wrap "$rpcd" new "$name" --lang "$language" --dir "projects/$language" >out 2>err ||
        fail "rpcd new --lang $language: $(cat err)"
    dir=projects/$language
    grep -qF "wrote $(count_files "$dir") files of the $language plugin $name in $dir" out ||
        fail "$language: the count said is not the files written: $(cat out)"
    [ -f "$dir/tests/call.sh" ] && [ -f "$dir/$name.conf" ] && [ -f "$dir/README.md" ] ||
        fail "$language: a common file is missing"
    grep -qx "\[plugin $name\]" "$dir/$name.conf" || fail "$language: no [plugin $name] section"
    grep -q "^path = /.*/$name\.so$" "$dir/$name.conf" || fail "$language: no absolute path"
    grep -qF "$name.greet" "$dir/tests/call.sh" || fail "$language: tests/call.sh calls no tool"
    if grep -rlE '@(NAME|PLUGINDIR|CONFDIR|ABI)@' "$dir"; then
        fail "$language: a placeholder is left"
    fi
    if [ -n "$(find "$dir" -perm /022)" ]; then
        fail "$language: writable by others: $(find "$dir" -perm /022)"
    fi
done
[ -f projects/c/src/p_c.c ] && [ -f projects/c/meson.build ] && [ -f projects/c/meson_options.txt ] ||
    fail "c: a file is missing"
grep -qF "RPCD_PLUGIN_DEFINE(\"p_c\"" projects/c/src/p_c.c || fail "c: the plugin is not named"
grep -qF "dependency('rpcd-plugin')" projects/c/meson.build || fail "c: rpcd-plugin not used"
[ -f projects/cpp/src/p_cpp.cpp ] || fail "cpp: the source is missing"
cmp projects/cpp/include/rpcd/plugin.hpp "$source_dir/bindings/cpp/rpcd/plugin.hpp"
cmp projects/rust/rpcd/rpcd.rs "$source_dir/bindings/rust/rpcd.rs"
cmp projects/rust/rpcd/layout.c "$source_dir/bindings/rust/layout.c"
grep -qx 'name = "p_rust"' projects/rust/Cargo.toml || fail "rust: the package is not named"
for file in rpcd.go glue.c glue.h; do
    cmp "projects/go/rpcd/$file" "$source_dir/bindings/go/rpcd/$file"
done
grep -qx 'module rpcd.local/p_go' projects/go/go.mod || fail "go: the module is not named"

# The longest name, into an empty directory; the default directory, ./NAME.
long=abcdefghijklmnopqrstuvwxyz012345
$wrap "$rpcd" new "$long" --dir empty >/dev/null || fail "a name of 32 bytes was refused"
[ -f "empty/$long.conf" ] || fail "the empty directory was not written"
$wrap "$rpcd" new plain >/dev/null || fail "rpcd new plain failed"
[ -f plain/src/plain.c ] || fail "rpcd new plain did not write ./plain, in C"
# Once written, never again.
expect 73 "plain exists and is not empty" plain

# Two rpcd new at once into one empty directory: both may find it empty, but each file is
# created with O_EXCL, so never do both succeed, each writing over the other's files.
tries=100
[ -z "$wrap" ] || tries=5
try=0
while [ "$try" -lt "$tries" ]; do
    mkdir "race$try"
    $wrap "$rpcd" new racer --dir "race$try" >/dev/null 2>&1 &
    first=$!
    second=0
    $wrap "$rpcd" new racer --dir "race$try" >/dev/null 2>&1 || second=$?
    status=0
    wait "$first" || status=$?
    [ "$status" != 0 ] || [ "$second" != 0 ] || fail "two rpcd new into race$try both succeeded"
    try=$((try + 1))
done
echo "rpcd new: refusals and projects as expected"
