// SPDX-License-Identifier: MIT
// The C++ example plugin, on bindings/cpp/rpcd/plugin.hpp: cpp.hello (a plain call, and a tool
// that declares its input and output schemas, title, annotations and icons), cpp.count
// (progress, stopped by cancellation), cpp.later (completed later from a std::thread; a tool
// that may run as an MCP task, RPCD_METHOD_TASK), cpp.fail (throws: the wrapper turns it into
// an error), cpp.meta (the request's _meta in a complete tool result), cpp.notes (an MCP
// resource, cpp://notes), cpp.touch (tells subscribed clients it changed), cpp.greet (an MCP
// prompt) and cpp.confirm (asks the client for a confirmation, and finishes on the retry with
// the answer and the state it kept). Params are read with jansson.
// Build: c++ -std=c++17 -shared -fPIC -I bindings/cpp example.cpp
//   $(pkg-config --cflags --libs rpcd-plugin-jansson)
//   -Wl,--version-script=$(pkg-config --variable=versionscript rpcd-plugin)
#include <rpcd/plugin.hpp>

#include <jansson.h>

#include <chrono>
#include <memory>
#include <optional>
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

// The text of the resource cpp://notes.
int notes(rpcd::call call, std::string_view)
{
    call.result("\"a note\"");
    return RPCD_OK;
}

// Tells the clients subscribed to cpp://notes that it changed.
int touch(rpcd::call call, std::string_view)
{
    rpcd::resource_updated("cpp://notes");
    call.result("true");
    return RPCD_OK;
}

// The prompt cpp.greet: prompts/get hands over {"name":...,"arguments":{"who":...}}, and a
// string result is one user message.
int greet(rpcd::call call, std::string_view params)
{
    json_ptr args = parse(params);
    const json_t *who = json_object_get(json_object_get(args.get(), "arguments"), "who");
    if (!json_is_string(who))
        throw rpcd::error(RPCD_ERR_INVALID_PARAMS, "arguments.who must be a string");
    std::string text = "Please greet " + std::string(json_string_value(who)) + ".";
    call.result(dump(json_string(text.c_str())));
    return RPCD_OK;
}

// Asks the client to confirm (round 1) and keeps a state; the retry (round 2) finds the answer
// and the state, and reports both. A client that cannot be asked gets -32021.
int confirm(rpcd::call call, std::string_view)
{
    if (std::optional<std::string> answer = call.input("confirm")) {
        std::string state = call.state().value_or(std::string());
        call.result("{\"answer\":" + *answer +
                    ",\"state\":" + dump(json_stringn(state.data(), state.size())) + "}");
        return RPCD_OK;
    }
    static const char form[] = "{\"message\":\"Go on?\",\"requestedSchema\":{\"type\":"
                               "\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}},"
                               "\"required\":[\"ok\"]}}";
    if (!call.ask("confirm", "elicitation/create", form))
        return call.fail_code(-32021, "Missing required client capability",
                              "{\"requiredCapabilities\":{\"elicitation\":{}}}");
    call.set_state("kept by cpp");
    return RPCD_INPUT_REQUIRED;
}

int fail(rpcd::call, std::string_view)
{
    throw std::runtime_error("deliberate failure, from a C++ exception");
}

void setup()
{
    // A tool that says all MCP lets it: what it takes, what it gives, and how to show it.
    rpcd::tool_info hello_tool;
    hello_tool.title = "Say hello";
    hello_tool.annotations = R"({"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false})";
    hello_tool.output_schema =
        R"({"type":"object","properties":{"greeting":{"type":"string"}},"required":["greeting"]})";
    hello_tool.icons =
        R"([{"src":"https://example.org/hello.png","mimeType":"image/png","sizes":["48x48"]}])";
    rpcd::add_method(
        "cpp.hello", hello, 0, "Greets {\"name\": ...}.",
        R"({"type":"object","properties":{"name":{"type":"string","description":"who to greet"}}})",
        hello_tool);
    rpcd::add_method("cpp.count", count, 0, "Counts steps, with progress, until cancelled.");
    rpcd::add_method("cpp.later", later, RPCD_METHOD_TASK,
                     "Answers later, from a thread of its own.");
    rpcd::add_method("cpp.fail", fail, 0, "Throws an exception.");
    rpcd::add_method("cpp.confirm", confirm, 0, "Asks the client to confirm, then says so.");
    rpcd::tool_info tool;
    tool.title = "Trace context";
    tool.annotations = "{\"readOnlyHint\":true}";
    rpcd::add_method("cpp.meta", meta, 0, "Hands back the request's _meta.", nullptr, tool);
    rpcd::add_method("cpp.touch", touch, 0, "Tells subscribers that cpp://notes changed.");
    rpcd::mcp_info resource;
    resource.role = RPCD_MCP_RESOURCE;
    resource.descriptor = R"({"uri":"cpp://notes","name":"notes","mimeType":"text/plain"})";
    rpcd::add_method("cpp.notes", notes, 0, "Notes.", nullptr, rpcd::tool_info(), resource);
    // A prompt: MCP clients see it in prompts/list, not among the tools.
    rpcd::mcp_info prompt;
    prompt.role = RPCD_MCP_PROMPT;
    prompt.descriptor =
        R"({"name":"cpp.greet","title":"Greeting","description":"Asks for a greeting.",)"
        R"("arguments":[{"name":"who","description":"who to greet","required":true}]})";
    rpcd::add_method("cpp.greet", greet, 0, "A prompt asking for a greeting.", nullptr,
                     rpcd::tool_info(), prompt);
    rpcd::log(RPCD_LOG_INFO, "ready");
}

} // namespace

RPCD_CPP_PLUGIN("cpp_example", "1.0.0", setup, nullptr);
