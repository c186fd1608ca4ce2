#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs rpcd into a scratch directory, builds plugins the way an outsider would (pkg-config
# only, nothing from the source tree): examples/hello-plugin/hello.c with rpcd-plugin, a plugin
# using <rpcd/plugin-jansson.h> with rpcd-plugin-jansson, examples/hello-plugin-cpp/hello.cpp
# with the strict warnings and the version script; checks that each exports only its entry
# point, and loads them all.
set -eu
build_dir=$1 source_dir=$2 rpcd=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

meson install -C "$build_dir" --no-rebuild --quiet --destdir "$work/root" >/dev/null
pc=$(find "$work/root" -name rpcd-plugin.pc | head -n 1)
[ -n "$pc" ] || { echo "rpcd-plugin.pc was not installed"; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")"
# The .pc file sits under the scratch root, not under its real prefix: move the prefix there.
prefix=$(pkg-config --variable=prefix rpcd-plugin)
pc() { pkg-config --define-variable=prefix="$work/root$prefix" "$@" rpcd-plugin; }
cflags=$(pc --cflags)
# Nothing in Libs: a toolchain with a version script of its own (Rust cdylib, cgo) could not
# take a second one. The version script is a variable, passed by those who want it.
libs=$(pc --libs)
case "$libs" in *version-script*) echo "rpcd-plugin.pc puts a version script in Libs: $libs"; exit 1 ;; esac
plugindir=$(pc --variable=plugindir)
case "$plugindir" in */rpcd/plugins) ;; *) echo "unexpected plugindir: $plugindir"; exit 1 ;; esac
[ -d "$plugindir" ] || { echo "plugindir $plugindir does not exist after install"; exit 1; }
for name in echo spec progress fail; do
    [ -f "$plugindir/$name.so" ] || { echo "bundled plugin $name.so not installed"; exit 1; }
done
config=$(find "$work/root" -path '*/rpcd/rpcd.conf' | head -n 1)
[ -n "$config" ] || { echo "config not installed"; exit 1; }
# The installed config loads no plugin (the demo's set is the build tree's), names the installed
# plugin directory, and its drop-in directory is there for the plugins an operator adds.
[ -d "$(dirname "$config")/rpcd.conf.d" ] || { echo "rpcd.conf.d/ not installed beside $config"; exit 1; }
if grep -q '^[[]plugin ' "$config"; then echo "the installed config loads a plugin"; exit 1; fi
grep -q "^plugin_dir = $prefix/.*/rpcd/plugins\$" "$config" ||
    { echo "the installed config does not name the installed plugin directory"; exit 1; }

# The .pc files say the ABI of the installed header, and sit where pkg-config looks by default
# for this prefix (the multiarch libdir on Debian).
header=$(find "$work/root" -path '*/rpcd/plugin.h' | head -n 1)
abi="$(sed -n 's/^#define RPCD_ABI_MAJOR //p' "$header").$(sed -n 's/^#define RPCD_ABI_MINOR //p' "$header")"
for package in rpcd-plugin rpcd-plugin-jansson; do
    description=$(pkg-config --print-errors --modversion "$package" >/dev/null &&
                  sed -n 's/^Description: //p' "$(dirname "$pc")/$package.pc")
    case "$description" in
    *"plugin ABI $abi)") ;;
    *) echo "$package.pc: description '$description' does not give plugin ABI $abi"; exit 1 ;;
    esac
done
# With the usual prefixes, the .pc files sit where pkg-config looks without PKG_CONFIG_PATH.
case "$prefix" in
/usr | /usr/local)
    case ":$(pkg-config --variable=pc_path pkg-config):" in
    *":$(dirname "${pc#"$work/root"}"):"*) ;;
    *) echo "${pc#"$work/root"} is not on pkg-config's default path"; exit 1 ;;
    esac
    ;;
esac
[ "$(pc --variable=abi)" = "$abi" ] || { echo "abi variable is not $abi"; exit 1; }
versionscript=$(pc --variable=versionscript)
[ -f "$versionscript" ] || { echo "version script $versionscript not installed"; exit 1; }
libs="$libs -Wl,--version-script=$versionscript"

strict="-Wall -Wextra -Wpedantic -Werror -Wredundant-decls -Wshadow -Wconversion"
cc -std=c11 $strict -Wmissing-prototypes -Wstrict-prototypes -fPIC -shared -fvisibility=hidden \
   -Wl,--no-undefined $cflags "$source_dir/examples/hello-plugin/hello.c" $libs -o "$work/hello.so"

# <rpcd/plugin-jansson.h> needs jansson at link time: rpcd-plugin-jansson brings it.
cat > "$work/greet_json.c" <<'PLUGIN'
#include <rpcd/plugin-jansson.h>
static const rpcd_host_api *host;
static int greet(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    return rpcd_call_result_json(host, call, json_pack("{s:s}", "greeting", "hello"));
}
static int greet_init(rpcd_plugin *plugin, const rpcd_host_api *api, void **state, char *error,
                      size_t error_size)
{
    (void)state, (void)error, (void)error_size;
    host = api;
    rpcd_method method = rpcd_method_new("greet.json", greet);
    return host->register_method(plugin, &method);
}
RPCD_PLUGIN_DEFINE("greet_json", "1.0.0", greet_init, NULL);
PLUGIN
jansson_flags=$(pkg-config --define-variable=prefix="$work/root$prefix" --cflags --libs \
                rpcd-plugin-jansson)
cc -std=c11 $strict -Wmissing-prototypes -Wstrict-prototypes -fPIC -shared -fvisibility=hidden \
   -Wl,--no-undefined "$work/greet_json.c" $jansson_flags -Wl,--version-script="$versionscript" -o "$work/greet_json.so"

# C++: no -fvisibility flags at all, the version script alone keeps libstdc++'s instances local.
c++ -std=c++17 $strict -Wmissing-declarations -fPIC -shared -Wl,--no-undefined $cflags \
    "$source_dir/examples/hello-plugin-cpp/hello.cpp" $libs -o "$work/hello_cpp.so"

NM=${NM:-nm} sh "$source_dir/tests/header/check-exports.sh" \
    "$work/hello.so" "$work/greet_json.so" "$work/hello_cpp.so"

printf '[plugin hello]\npath = hello.so\nname = outsider\n[plugin greet_json]\npath = greet_json.so\n[plugin hello_cpp]\npath = hello_cpp.so\nname = c++ "quoted" \\ back\n' \
    > "$work/rpcd.conf"
reply=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"hello"}' \
        '{"jsonrpc":"2.0","id":2,"method":"greet.json"}' \
        '{"jsonrpc":"2.0","id":3,"method":"hello.cpp"}' |
        "$rpcd" -q -c "$work/rpcd.conf" | LC_ALL=C sort)
# Calls run concurrently, so responses come in any order: compared sorted (ids 1, 2, 3).
expected='{"jsonrpc":"2.0","id":1,"result":"hello, outsider"}
{"jsonrpc":"2.0","id":2,"result":{"greeting":"hello"}}
{"jsonrpc":"2.0","id":3,"result":"hello, c++ \"quoted\" \\ back"}'
if [ "$reply" != "$expected" ]; then
    echo "got:      $reply"
    echo "expected: $expected"
    exit 1
fi

# The plugin author's path of docs/plugin-author.md, with the installed rpcd: one call, no config.
installed_rpcd=$(find "$work/root" -path '*/bin/rpcd' | head -n 1)
[ -x "$installed_rpcd" ] || { echo "rpcd was not installed"; exit 1; }
for args in "hello|\"hello, world\"" "--set name=Ada hello|\"hello, Ada\""; do
    # shellcheck disable=SC2086 # the arguments split at spaces on purpose
    got=$(cd "$work" && "$installed_rpcd" call --plugin ./hello.so ${args%%|*})
    [ "$got" = "${args#*|}" ] || { echo "rpcd call ${args%%|*}: got $got"; exit 1; }
done
# The installed config with a drop-in in its rpcd.conf.d/, beside a broken one, which is skipped
# with one error line while the rest serve.
dropins="$(dirname "$config")/rpcd.conf.d"
printf '[plugin hello]\npath = %s\nname = drop-in\n' "$work/hello.so" >"$dropins/50-hello.conf"
printf '[plugin broken\n' >"$dropins/60-broken.conf"
got=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"hello"}' |
      "$installed_rpcd" -c "$config" 2>"$work/stderr")
[ "$got" = '{"jsonrpc":"2.0","id":1,"result":"hello, drop-in"}' ] ||
    { echo "hello through the installed config's drop-in: got $got"; cat "$work/stderr"; exit 1; }
skipped=$(grep -c "drop-in $dropins/60-broken.conf skipped: line 1: syntax error" "$work/stderr")
[ "$skipped" = 1 ] || { echo "the broken drop-in is not one error line:"; cat "$work/stderr"; exit 1; }
echo "out-of-tree plugins (C, C with jansson, C++) built with pkg-config and loaded"
