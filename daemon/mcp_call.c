/* SPDX-License-Identifier: MIT */
/*
 * MCP requests on their way in and out: mcp_route_message answers the MCP methods or turns them
 * into a plugin's call (tools/call: the tool's method, its arguments as params, _meta kept for
 * progress), and the tool shaper turns that call's result or failure into a tool result.
 */
#include "mcp.h"

#include "envelope.h"
#include "mcp_methods.h"
#include "mcp_revision.h"
#include "rpc_error.h"

#include <string.h>

int mcp_append_tool_result(buffer *out, const char *result, size_t length)
{
    int failed = buf_append_string(out, "{\"content\":[{\"type\":\"text\",\"text\":");
    /* A string is the text itself, as the model should read it: its JSON text, validated, is
     * already the text member's value. Any other value goes as its JSON text. */
    size_t start = 0, end = length;
    while (start < end && memchr(" \t\r\n", result[start], 4))
        start++;
    while (end > start && memchr(" \t\r\n", result[end - 1], 4))
        end--;
    if (start < end && result[start] == '"')
        failed |= buf_append(out, result + start, end - start);
    else
        failed |= buf_append_json_string(out, result, length);
    failed |= buf_append_string(out, "}]");
    if (length > 0 && result[0] == '{') {
        failed |= buf_append_string(out, ",\"structuredContent\":");
        failed |= buf_append(out, result, length);
    }
    return failed | buf_append_string(out, ",\"isError\":false}");
}

int mcp_append_tool_error(buffer *out, const char *text, size_t length)
{
    int failed = buf_append_string(out, "{\"content\":[{\"type\":\"text\",\"text\":");
    failed |= buf_append_json_string(out, text, length);
    return failed | buf_append_string(out, "}],\"isError\":true}");
}

/* A tool's failure is a result the model can read (isError), not a JSON-RPC error. */
static const call_shaper tool_shaper = {mcp_append_tool_result, mcp_append_tool_error, NULL};

/* What tools/call reads of its params. */
typedef struct tool_params {
    js_span name, arguments, meta; /* meta: empty when there is none */
    bool has_name, has_arguments;
    const char *duplicate; /* a member read here that appears twice, or NULL */
} tool_params;

static void read_tool_params(js_span params, tool_params *out)
{
    memset(out, 0, sizeof *out);
    if (params.length == 0 || js_kind_of(params) != JS_OBJECT)
        return;
    bool seen_name = false, seen_meta = false;
    js_iter members;
    js_span key, value;
    js_iter_init(&members, params);
    while (js_iter_next(&members, &key, &value)) {
        if (js_string_equals(key, "name", 4)) {
            if (seen_name)
                out->duplicate = "\"name\" appears twice";
            seen_name = true;
            out->name = value;
            out->has_name = js_kind_of(value) == JS_STRING;
        } else if (js_string_equals(key, "arguments", 9)) {
            if (out->has_arguments)
                out->duplicate = "\"arguments\" appears twice";
            out->arguments = value;
            out->has_arguments = true;
        } else if (js_string_equals(key, "_meta", 5)) {
            /* The progress token is read from it later: it must mean one thing now. */
            if (seen_meta)
                out->duplicate = "\"_meta\" appears twice";
            else if (env_meta_has_duplicate(value))
                out->duplicate = "\"progressToken\" appears twice in \"_meta\"";
            seen_meta = true;
            out->meta = value;
        }
    }
}

/* Refuses tools/call params: -32602, data naming the problem and the tool when there is one. */
static int refuse_tool_call(const char *problem, const char *tool, size_t tool_length, buffer *out,
                            mcp_route *route)
{
    int failed = buf_append_string(out, "{\"detail\":");
    failed |= buf_append_json_string(out, problem, strlen(problem));
    if (tool) {
        failed |= buf_append_string(out, ",\"tool\":");
        failed |= buf_append_json_string(out, tool, tool_length);
    }
    failed |= buf_append_char(out, '}');
    *route = (mcp_route){
        .kind = MCP_REFUSED, .status = RPCD_ERR_INVALID_PARAMS, .has_data = failed == 0};
    return 0;
}

/* A request whose _meta names no version rpcd can serve (mcp_revision_read's refusal). */
static int refuse_revision(int refusal, buffer *out, mcp_route *route)
{
    if (refusal == MCP_REVISION_UNSUPPORTED) {
        *route = (mcp_route){
            .kind = MCP_REFUSED, .code = RPC_UNSUPPORTED_PROTOCOL_VERSION, .has_data = true};
        return 0;
    }
    bool invalid = refusal == MCP_REVISION_INVALID;
    if (!invalid)
        buf_clear(out);
    *route = (mcp_route){
        .kind = MCP_REFUSED,
        .status = invalid ? RPCD_ERR_INVALID_PARAMS : RPCD_ERR_NO_MEMORY,
        .has_data = invalid,
    };
    return 0;
}

/* tools/call: the tool's method, with the call's arguments as params. */
static int route_tool_call(const mcp_tools *tools, js_span params, buffer *out, mcp_route *route)
{
    tool_params read;
    read_tool_params(params, &read);
    char tool[128]; /* MCP's longest tool name */
    size_t tool_length = 0;
    /* No name is shown for a duplicate: which one would it be? */
    if (read.duplicate)
        return refuse_tool_call(read.duplicate, NULL, 0, out, route);
    /* Read while the members were, rather than in a second pass over the arguments. */
    int era = mcp_revision_of_meta(read.meta, out);
    if (era < 0)
        return refuse_revision(era, out, route);
    if (!read.has_name)
        return refuse_tool_call("\"name\" must be a tool name", NULL, 0, out, route);
    if (js_string_decode(read.name, tool, sizeof tool, &tool_length) != 0)
        return refuse_tool_call("\"name\" is longer than 128 bytes, the longest tool name", NULL, 0,
                                out, route);
    if (read.has_arguments && js_kind_of(read.arguments) != JS_OBJECT)
        return refuse_tool_call("\"arguments\" must be an object", tool, tool_length, out, route);
    const reg_method *method = mcp_tool_method(tools, tool, tool_length);
    if (!method)
        return refuse_tool_call("unknown tool", tool, tool_length, out, route);
    /* The tool's schema says object: a call without arguments has none, not no params. */
    *route = (mcp_route){
        .kind = MCP_CALL,
        .method = method,
        .params = read.has_arguments ? read.arguments : (js_span){"{}", 2},
        .shaper = era == MCP_ERA_STATELESS ? mcp_stateless_tool_shaper() : &tool_shaper,
        .progress_params = params,
    };
    return 0;
}

/* A boolean member of a subscription filter: 1 true, 0 false or absent, -1 anything else. */
static int filter_flag(js_span filter, const char *key)
{
    js_span value;
    size_t count = js_object_get(filter, key, strlen(key), &value);
    if (count == 0)
        return 0;
    if (count > 1 || (js_kind_of(value) != JS_TRUE && js_kind_of(value) != JS_FALSE))
        return -1;
    return js_kind_of(value) == JS_TRUE;
}

/*
 * subscriptions/listen: what its filter asks for. The kinds of notification rpcd has no source
 * for (prompts, resources) are checked, then left out of what it acknowledges.
 */
static int route_listen(js_span params, buffer *out, mcp_route *route)
{
    js_span filter = {NULL, 0}, uris;
    const char *problem = NULL;
    if (params.length == 0 || js_kind_of(params) != JS_OBJECT ||
        js_object_get(params, "notifications", 13, &filter) != 1 || js_kind_of(filter) != JS_OBJECT)
        problem = "\"notifications\" must be an object, given once";
    int tools = problem ? 0 : filter_flag(filter, "toolsListChanged");
    if (!problem && (tools < 0 || filter_flag(filter, "promptsListChanged") < 0 ||
                     filter_flag(filter, "resourcesListChanged") < 0))
        problem = "a \"...ListChanged\" member of \"notifications\" must be one boolean";
    size_t lists = problem ? 0 : js_object_get(filter, "resourceSubscriptions", 21, &uris);
    if (lists > 1 || (lists == 1 && js_kind_of(uris) != JS_ARRAY))
        problem = "\"resourceSubscriptions\" must be one array";
    if (problem)
        return refuse_tool_call(problem, NULL, 0, out, route);
    *route = (mcp_route){.kind = MCP_LISTEN, .listen = {.tools_list_changed = tools == 1}};
    return 0;
}

int mcp_route_message(const mcp_tools *tools, const char *method, size_t method_length,
                      js_span params, buffer *out, mcp_route *route)
{
    int id = mcp_method_find(method, method_length);
    if (id < 0)
        return -1;
    if (id == MCP_TOOLS_CALL)
        return route_tool_call(tools, params, out, route);
    /* initialize selects the handshake era, whatever its _meta says. */
    int era = id == MCP_INITIALIZE ? MCP_ERA_HANDSHAKE : mcp_revision_read(params, out);
    if (era < 0)
        return refuse_revision(era, out, route);
    if (id == MCP_SUBSCRIPTIONS_LISTEN)
        return route_listen(params, out, route);
    /* The methods the daemon answers itself. */
    int answer = mcp_answer_in(tools, id, era, params, out);
    if (answer == 0) {
        *route = (mcp_route){.kind = MCP_ANSWERED};
        return 0;
    }
    buf_clear(out);
    *route = (mcp_route){
        .kind = MCP_REFUSED,
        .status = answer == -2 ? RPCD_ERR_INVALID_PARAMS : RPCD_ERR_NO_MEMORY,
    };
    return 0;
}

bool mcp_starts_session(const char *method, size_t method_length, js_span params)
{
    int id = mcp_method_find(method, method_length);
    if (id == MCP_INITIALIZE || id == MCP_SERVER_DISCOVER)
        return true;
    if (id < 0)
        return false;
    buffer refusal = BUFFER_INIT; /* what a bad version would be told: not needed here */
    bool stateless = mcp_revision_read(params, &refusal) == MCP_ERA_STATELESS;
    buf_free(&refusal);
    return stateless;
}
