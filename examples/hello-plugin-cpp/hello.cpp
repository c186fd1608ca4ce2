// SPDX-License-Identifier: MIT
// A minimal rpcd plugin in C++: "hello.cpp" greets whoever its config names. Handlers are
// noexcept and turn every exception into an error status: an exception that left a handler
// would cross rpcd's C frames and terminate the daemon. Link with
// -Wl,--version-script=$(pkg-config --variable=versionscript rpcd-plugin): libstdc++'s template
// instances stay local, and the plugin exports rpcd_plugin_entry alone.
#include <rpcd/plugin.h>

#include <cstdio>
#include <exception>
#include <new>
#include <string>

namespace
{

const rpcd_host_api *host;
std::string greeting = "\"hello, world\"";

// text as a JSON string, quotes included: a name from the config may hold quotes, backslashes
// or control characters. May throw std::bad_alloc.
std::string json_string(const std::string &text)
{
    std::string quoted = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            quoted += '\\';
            quoted += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char escape[8];
            std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(c));
            quoted += escape;
        } else {
            quoted += c;
        }
    }
    return quoted + '"';
}

int hello(rpcd_call *call, const char *, size_t, void *) noexcept
{
    try {
        const std::string text = greeting; // may throw std::bad_alloc
        return host->call_result(call, text.data(), text.size());
    } catch (const std::bad_alloc &) {
        return RPCD_ERR_NO_MEMORY;
    } catch (const std::exception &error) {
        return host->call_fail(call, RPCD_ERR_INTERNAL, error.what(), nullptr, 0);
    } catch (...) {
        return RPCD_ERR_INTERNAL;
    }
}

int hello_init(rpcd_plugin *plugin, const rpcd_host_api *api, void **, char *error,
               size_t error_size) noexcept
{
    try {
        host = api;
        if (const char *name = host->config_get(plugin, "name")) // [plugin hello_cpp] name = ...
            greeting = json_string("hello, " + std::string(name));
        rpcd_method method = rpcd_method_new("hello.cpp", hello);
        method.description = "Returns a greeting, from C++.";
        return host->register_method(plugin, &method);
    } catch (const std::exception &failure) {
        std::snprintf(error, error_size, "%s", failure.what());
        return RPCD_ERR_INTERNAL;
    } catch (...) {
        std::snprintf(error, error_size, "an unknown exception");
        return RPCD_ERR_INTERNAL;
    }
}

} // namespace

RPCD_PLUGIN_DEFINE("hello_cpp", "1.0.0", hello_init, nullptr);
