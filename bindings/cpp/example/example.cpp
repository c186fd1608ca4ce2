// SPDX-License-Identifier: MIT
// The C++ example plugin, on bindings/cpp/rpcd/plugin.hpp: cpp.hello (a plain call), cpp.count
// (progress, stopped by cancellation), cpp.later (completed later from a std::thread),
// cpp.fail (throws: the wrapper turns it into an error), cpp.meta (the request's _meta in a
// complete tool result). Params are read with jansson.
// Build: c++ -std=c++17 -shared -fPIC -I bindings/cpp example.cpp
//   $(pkg-config --cflags --libs rpcd-plugin-jansson)
//   -Wl,--version-script=$(pkg-config --variable=versionscript rpcd-plugin)
#include <rpcd/plugin.hpp>

#include <jansson.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace
{

using json_ptr = std::unique_ptr<json_t, decltype(&json_decref)>;

json_ptr parse(std::string_view params)
{
    json_ptr value(params.empty() ? json_object()
                                  : json_loadb(params.data(), params.size(), 0, nullptr),
                   json_decref);
    if (!value)
        throw rpcd::error(RPCD_ERR_INVALID_PARAMS, "params are not JSON");
    return value;
}

// JSON text of value (stolen). Throws std::bad_alloc.
std::string dump(json_t *value)
{
    json_ptr owned(value, json_decref);
    std::unique_ptr<char, decltype(&free)> text(
        owned ? json_dumps(owned.get(), JSON_COMPACT | JSON_ENCODE_ANY) : nullptr, free);
    if (!text)
        throw std::bad_alloc();
    return text.get();
}

json_int_t integer(const json_t *params, const char *key, json_int_t fallback)
{
    const json_t *member = json_object_get(params, key);
    if (!member)
        return fallback;
    if (!json_is_integer(member) || json_integer_value(member) < 0)
        throw rpcd::error(RPCD_ERR_INVALID_PARAMS, std::string(key) + " must be a count");
    return json_integer_value(member);
}

int hello(rpcd::call call, std::string_view params)
{
    json_ptr args = parse(params);
    const json_t *name = json_object_get(args.get(), "name");
    if (name && !json_is_string(name))
        throw rpcd::error(RPCD_ERR_INVALID_PARAMS, "name must be a string");
    std::string greeting = "hello, " + std::string(name ? json_string_value(name) : "world");
    call.result(dump(json_pack("{s:s}", "greeting", greeting.c_str())));
    return RPCD_OK;
}

int count(rpcd::call call, std::string_view params)
{
    json_ptr args = parse(params);
    json_int_t steps = integer(args.get(), "steps", 3);
    auto delay = std::chrono::milliseconds(integer(args.get(), "delay_ms", 0));
    for (json_int_t step = 1; step <= steps; step++) {
        if (call.cancelled())
            return RPCD_ERR_CANCELLED;
        call.progress(static_cast<double>(step), static_cast<double>(steps),
                      "step " + std::to_string(step) + " of " + std::to_string(steps));
        std::this_thread::sleep_for(delay);
    }
    call.result(dump(json_pack("{s:I}", "steps", steps)));
    return RPCD_OK;
}

int later(rpcd::call call, std::string_view params)
{
    json_ptr args = parse(params);
    auto delay = std::chrono::milliseconds(integer(args.get(), "delay_ms", 0));
    // The deferred call moves into the thread: if the thread ends without completing it, its
    // destructor fails the call, so the client always gets a response.
    rpcd::spawn([pending = rpcd::deferred(call), delay]() mutable noexcept {
        std::this_thread::sleep_for(delay);
        pending.complete("{\"deferred\":true}");
    });
    return RPCD_DEFERRED;
}

// A complete tool result carrying the request's trace context: its traceparent as text, its
// whole _meta as structuredContent.
int meta(rpcd::call call, std::string_view)
{
    std::string traceparent = call.meta("traceparent"), whole = call.meta();
    call.tool_result("{\"content\":[{\"type\":\"text\",\"text\":" +
                     (traceparent.empty() ? std::string("\"none\"") : traceparent) +
                     "}],\"structuredContent\":{\"meta\":" + (whole.empty() ? "null" : whole) +
                     "},\"isError\":false}");
    return RPCD_OK;
}

int fail(rpcd::call, std::string_view)
{
    throw std::runtime_error("deliberate failure, from a C++ exception");
}

void setup()
{
    rpcd::add_method("cpp.hello", hello, 0, "Greets {\"name\": ...}.",
                     "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}");
    rpcd::add_method("cpp.count", count, 0, "Counts steps, with progress, until cancelled.");
    rpcd::add_method("cpp.later", later, 0, "Answers later, from a thread of its own.");
    rpcd::add_method("cpp.fail", fail, 0, "Throws an exception.");
    rpcd::tool_info tool;
    tool.title = "Trace context";
    tool.annotations = "{\"readOnlyHint\":true}";
    rpcd::add_method("cpp.meta", meta, 0, "Hands back the request's _meta.", nullptr, tool);
    rpcd::log(RPCD_LOG_INFO, "ready");
}

} // namespace

RPCD_CPP_PLUGIN("cpp_example", "1.0.0", setup, nullptr);
