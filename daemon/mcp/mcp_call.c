/* SPDX-License-Identifier: MIT */
/* MCP requests on their way in and out: mcp_route_message answers the MCP methods or turns them
 * into a plugin's call (tools/call: the tool's method, its arguments as params, _meta kept for
 * progress), and the tool shaper turns that call's result or failure into a tool result. */
#include "mcp/mcp.h"

#include "wire/envelope.h"
#include "methods/mcp_catalog.h"
#include "wire/mcp_events.h"
#include "methods/mcp_methods.h"
#include "methods/tool_policy.h"
#include "mcp/mcp_results.h"
#include "mcp/mcp_revision.h"
#include "mcp/mcp_rounds.h"
#include "mcp/mcp_tasks.h"
#include "mcp/mcp_tool_params.h"
#include "wire/rpc_error.h"
#include "base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* An unknown tool: -32602 as refuse_tool_call, with the name in the message too. */
static int refuse_unknown_tool(const char *tool, size_t tool_length, buffer *out, mcp_route *route)
{
    refuse_tool_call("unknown tool", tool, tool_length, out, route);
    char shown[520];
    reg_printable_name(tool, tool_length, shown, sizeof shown);
    snprintf(route->message, sizeof route->message, "unknown tool %s", shown);
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
static int route_tool_call(const mcp_tools *tools, js_span params, buffer *out, mcp_route *route,
                           int *era_read)
{
    tool_params read;
    mcp_read_tool_params(params, &read);
    char tool[128]; /* MCP's longest tool name */
    size_t tool_length = 0;
    /* No name is shown for a duplicate: which one would it be? Its era still tells whether an
     * MCP client sent it (the refusal a bad version would get is not needed). */
    if (read.duplicate) {
        buffer refusal = BUFFER_INIT;
        *era_read = mcp_revision_of_meta(read.meta, &refusal);
        buf_free(&refusal);
        return refuse_tool_call(read.duplicate, NULL, 0, out, route);
    }
    /* Read while the members were, rather than in a second pass over the arguments. */
    int era = mcp_revision_of_meta(read.meta, out);
    *era_read = era;
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
    const char *denied_by = NULL;
    /* A tool the policy denies is answered as one that does not exist, and is not listed. */
    if (method && !pol_served(mcp_tools_policy(tools), method, &denied_by)) {
        refuse_unknown_tool(tool, tool_length, out, route);
        route->method = method;
        route->refused_by = denied_by;
        return 0;
    }
    if (!method)
        return refuse_unknown_tool(tool, tool_length, out, route);
    bool may_be_task, task_required;
    if (mcp_tool_task_mode(era, read.meta, method, &may_be_task, &task_required) != 0)
        return mcp_refuse_without_tasks(out, route);
    /* The tool's schema says object: a call without arguments has none, not no params. */
    *route = (mcp_route){
        .kind = MCP_CALL,
        .method = method,
        .params = read.has_arguments ? read.arguments : (js_span){"{}", 2},
        .shaper = era == MCP_ERA_STATELESS ? mcp_stateless_tool_shaper() : mcp_tool_shaper(),
        .progress_params = params,
        /* Asked through its results (what _meta declares), or with rpcd's requests. */
        .ask_capabilities = era == MCP_ERA_STATELESS ? mcp_ask_capabilities(read.meta) : 0,
        .asks_by_request = era == MCP_ERA_HANDSHAKE,
        .request_state = read.request_state,
        .input_responses = read.input_responses,
        .may_be_task = may_be_task,
        .task_required = task_required,
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

/* Whether every item of an array is a string. */
static bool strings_only(js_span array)
{
    js_iter items;
    js_span ignored, item;
    js_iter_init(&items, array);
    while (js_iter_next(&items, &ignored, &item))
        if (js_kind_of(item) != JS_STRING)
            return false;
    return true;
}

/*
 * subscriptions/listen: what its filter asks for. The kinds of notification rpcd has no source
 * for (prompts, resources) are checked, then left out of what it acknowledges.
 */
static int route_listen(const mcp_tools *tools, js_span params, buffer *out, mcp_route *route)
{
    js_span filter = {NULL, 0}, uris;
    const char *problem = NULL;
    if (params.length == 0 || js_kind_of(params) != JS_OBJECT ||
        js_object_get(params, "notifications", 13, &filter) != 1 || js_kind_of(filter) != JS_OBJECT)
        problem = "\"notifications\" must be an object, given once";
    int tools_flag = problem ? 0 : filter_flag(filter, "toolsListChanged");
    int prompts = problem ? 0 : filter_flag(filter, "promptsListChanged");
    int resources = problem ? 0 : filter_flag(filter, "resourcesListChanged");
    if (!problem && (tools_flag < 0 || prompts < 0 || resources < 0))
        problem = "a \"...ListChanged\" member of \"notifications\" must be one boolean";
    size_t lists = problem ? 0 : js_object_get(filter, "resourceSubscriptions", 21, &uris);
    if (lists > 1 || (lists == 1 && js_kind_of(uris) != JS_ARRAY))
        problem = "\"resourceSubscriptions\" must be one array";
    if (!problem && lists == 1 && !strings_only(uris))
        problem = "\"resourceSubscriptions\" must hold URIs (strings)";
    js_span task_ids = {NULL, 0}, meta = {NULL, 0};
    size_t task_lists = problem ? 0 : js_object_get(filter, "taskIds", 7, &task_ids);
    if (task_lists > 1 ||
        (task_lists == 1 && (js_kind_of(task_ids) != JS_ARRAY || !strings_only(task_ids))))
        problem = "\"taskIds\" must be one array of task ids (strings)";
    if (problem)
        return refuse_tool_call(problem, NULL, 0, out, route);
    js_object_get(params, "_meta", 5, &meta);
    if (task_lists == 1 && !mcp_declares_tasks(meta))
        return mcp_refuse_without_tasks(out, route);
    /* Only what rpcd can tell of is acknowledged: lists that plugins fill. */
    const struct mcp_catalog *catalog = mcp_tools_catalog(tools);
    bool has_resources = mcp_catalog_count(catalog, RPCD_MCP_RESOURCE) > 0;
    *route = (mcp_route){
        .kind = MCP_LISTEN,
        .listen = {.tools_list_changed = tools_flag == 1,
                   .prompts_list_changed =
                       prompts == 1 && mcp_catalog_count(catalog, RPCD_MCP_PROMPT) > 0,
                   .resources_list_changed = resources == 1 && has_resources,
                   .resource_uris = lists == 1 && has_resources ? uris : (js_span){NULL, 0},
                   .task_ids = task_ids}};
    return 0;
}

/* The longest URI or name rpcd reads from a request of the resources and prompts. */
enum { MOST_KEY_BYTES = 65536 };

/*
 * A string member of params decoded into *text (new, NUL-terminated; free it): 0, or -1 when
 * it is missing, not one string, or longer than MOST_KEY_BYTES (*text NULL).
 */
static int decoded_member(js_span params, const char *key, js_span *value, char **text,
                          size_t *length)
{
    *text = NULL;
    if (params.length == 0 || js_kind_of(params) != JS_OBJECT ||
        js_object_get(params, key, strlen(key), value) != 1 || js_kind_of(*value) != JS_STRING)
        return -1;
    size_t needed = js_string_decoded_length(*value);
    if (needed > MOST_KEY_BYTES || !(*text = malloc(needed + 1)))
        return -1;
    if (js_string_decode(*value, *text, needed + 1, length) != 0) {
        free(*text);
        *text = NULL;
        return -1;
    }
    (*text)[*length] = '\0';
    return 0;
}

/* Refuses a request of the resources, prompts or completions: -32602 with data. */
static int refuse_with(const char *problem, const char *member, js_span value, buffer *out,
                       mcp_route *route)
{
    buf_clear(out);
    int failed = buf_append_string(out, "{\"detail\":");
    failed |= buf_append_json_string(out, problem, strlen(problem));
    if (member) {
        failed |= buf_printf(out, ",\"%s\":", member);
        failed |= buf_append(out, value.start, value.length);
    }
    failed |= buf_append_char(out, '}');
    *route = (mcp_route){
        .kind = MCP_REFUSED, .status = RPCD_ERR_INVALID_PARAMS, .has_data = failed == 0};
    return 0;
}

/* The "uri" of params, decoded into *text (free it): 0, or -1 with the refusal in *route. */
static int read_uri(js_span params, js_span *uri, char **text, size_t *length, buffer *out,
                    mcp_route *route)
{
    if (decoded_member(params, "uri", uri, text, length) == 0)
        return 0;
    refuse_with("\"uri\" must be a string (of at most 65536 bytes), given once", NULL, *uri, out,
                route);
    return -1;
}

/* A request of what the policy hides, answered as if it were not there: the access log's line. */
static int note_hidden(const mcp_tools *tools, const reg_method *hidden, mcp_route *route)
{
    const char *rule = NULL;
    if (hidden && !pol_served(mcp_tools_policy(tools), hidden, &rule)) {
        route->method = hidden;
        route->refused_by = rule;
    }
    return 0;
}

/* How a prompts/get or resources/read asks (1.6), into route: with rpcd's requests in the
 * handshake era, through its results in the stateless revision. NULL, or why params are wrong. */
static const char *read_asking(int era, js_span params, mcp_route *route)
{
    js_span meta;
    route->asks_by_request = era == MCP_ERA_HANDSHAKE;
    if (era != MCP_ERA_STATELESS || params.length == 0 || js_kind_of(params) != JS_OBJECT)
        return NULL;
    route->ask_capabilities =
        js_object_get(params, "_meta", 5, &meta) == 1 ? mcp_ask_capabilities(meta) : 0;
    return mcp_rounds_read_retry(params, &route->request_state, &route->input_responses);
}

/* resources/read: the method serving the URI, given {"uri":...} and a template's variables. */
static int route_resource_read(const mcp_tools *tools, int era, js_span params, buffer *out,
                               mcp_route *route)
{
    js_span uri;
    char *text;
    size_t length;
    if (read_uri(params, &uri, &text, &length, out, route) != 0)
        return 0;
    buffer variables = BUFFER_INIT;
    bool templated = false;
    const mcp_catalog *catalog = mcp_tools_catalog(tools);
    const reg_method *method = mcp_catalog_resource(catalog, text, length, &variables, &templated);
    const reg_method *hidden = method ? NULL
                                      : mcp_catalog_resource(mcp_catalog_hidden(catalog), text,
                                                             length, &variables, &templated);
    free(text);
    if (!method) {
        buf_free(&variables);
        /* The 2026-07-28 revision's answer to an unknown resource, which older clients read as
         * -32002 does: -32602 with the URI in data. */
        buf_clear(out);
        int failed = buf_append_string(out, "{\"uri\":");
        failed |= buf_append(out, uri.start, uri.length);
        failed |= buf_append_char(out, '}');
        *route = (mcp_route){
            .kind = MCP_REFUSED, .status = RPCD_ERR_INVALID_PARAMS, .has_data = failed == 0};
        return note_hidden(tools, hidden, route);
    }
    /* The handler's params are built in out, which lives until the call has copied them. */
    buf_clear(out);
    int failed = buf_append_string(out, "{\"uri\":");
    failed |= buf_append(out, uri.start, uri.length);
    if (templated) {
        failed |= buf_append_string(out, ",\"variables\":{");
        failed |= buf_append(out, variables.data, variables.length);
        failed |= buf_append_char(out, '}');
    }
    failed |= buf_append_char(out, '}');
    buf_free(&variables);
    if (failed) {
        *route = (mcp_route){.kind = MCP_REFUSED, .status = RPCD_ERR_NO_MEMORY};
        return 0;
    }
    *route = (mcp_route){
        .kind = MCP_CALL,
        .method = method,
        .params = {out->data, out->length},
        .shaper = mcp_result_shaper(MCP_RESULT_RESOURCE, era == MCP_ERA_STATELESS),
        .progress_params = params,
    };
    const char *twice = read_asking(era, params, route);
    return twice ? refuse_with(twice, NULL, params, out, route) : 0;
}

/* prompts/get: the prompt's method, given the request's params as they are. */
static int route_prompt_get(const mcp_tools *tools, int era, js_span params, buffer *out,
                            mcp_route *route)
{
    js_span name, arguments = {NULL, 0};
    char *text;
    size_t length;
    if (decoded_member(params, "name", &name, &text, &length) != 0)
        return refuse_with("\"name\" must be a prompt's name, given once", NULL, name, out, route);
    const mcp_catalog *catalog = mcp_tools_catalog(tools), *hidden = mcp_catalog_hidden(catalog);
    const reg_method *method = mcp_catalog_prompt(catalog, text, length),
                     *denied = method ? NULL : mcp_catalog_prompt(hidden, text, length);
    free(text);
    if (!method) /* the refusal first, then what the log says of it */
        return refuse_with("unknown prompt", "prompt", name, out, route),
               note_hidden(tools, denied, route);
    size_t given = js_object_get(params, "arguments", 9, &arguments);
    if (given > 1 || (given == 1 && js_kind_of(arguments) != JS_OBJECT))
        return refuse_with("\"arguments\" must be one object", "prompt", name, out, route);
    const char *problem = mcp_catalog_prompt_arguments_problem(method, arguments);
    if (problem)
        return refuse_with(problem, "prompt", name, out, route);
    *route = (mcp_route){
        .kind = MCP_CALL,
        .method = method,
        .params = params,
        .shaper = mcp_result_shaper(MCP_RESULT_PROMPT, era == MCP_ERA_STATELESS),
    };
    const char *twice = read_asking(era, params, route);
    return twice ? refuse_with(twice, "prompt", name, out, route) : 0;
}

/*
 * completion/complete: the completion of the reference, given the request's params; a
 * reference nothing completes has no values.
 */
static int route_completion(const mcp_tools *tools, int era, js_span params, buffer *out,
                            mcp_route *route)
{
    js_span ref, type, key, argument, value;
    char *text = NULL;
    size_t length = 0;
    bool prompt = false;
    const char *problem = NULL;
    if (params.length == 0 || js_kind_of(params) != JS_OBJECT ||
        js_object_get(params, "ref", 3, &ref) != 1 || js_kind_of(ref) != JS_OBJECT ||
        js_object_get(ref, "type", 4, &type) != 1 || js_kind_of(type) != JS_STRING)
        problem = "\"ref\" must be one object with a string \"type\"";
    else if (!(prompt = js_string_equals(type, "ref/prompt", 10)) &&
             !js_string_equals(type, "ref/resource", 12))
        problem = "\"ref\".\"type\" must be \"ref/prompt\" or \"ref/resource\"";
    else if (decoded_member(ref, prompt ? "name" : "uri", &key, &text, &length) != 0)
        problem = "\"ref\" must name its prompt (\"name\") or template (\"uri\") once";
    else if (js_object_get(params, "argument", 8, &argument) != 1 ||
             js_kind_of(argument) != JS_OBJECT || js_object_get(argument, "name", 4, &value) != 1 ||
             js_kind_of(value) != JS_STRING || js_object_get(argument, "value", 5, &value) != 1 ||
             js_kind_of(value) != JS_STRING)
        problem = "\"argument\" must be one object with a string \"name\" and \"value\"";
    if (problem) {
        free(text);
        return refuse_with(problem, NULL, params, out, route);
    }
    const reg_method *method =
        mcp_catalog_completion(mcp_tools_catalog(tools), prompt, text, length);
    free(text);
    if (!method) {
        size_t start = out->length;
        int failed = buf_append_string(
            out, "{\"completion\":{\"values\":[],\"total\":0,\"hasMore\":false}}");
        if (era == MCP_ERA_STATELESS)
            failed |= mcp_finish_stateless_result(out, start, true, false);
        *route = failed ? (mcp_route){.kind = MCP_REFUSED, .status = RPCD_ERR_NO_MEMORY}
                        : (mcp_route){.kind = MCP_ANSWERED};
        return 0;
    }
    *route = (mcp_route){
        .kind = MCP_CALL,
        .method = method,
        .params = params,
        .shaper = mcp_result_shaper(MCP_RESULT_COMPLETION, era == MCP_ERA_STATELESS),
    };
    return 0;
}

/* resources/subscribe and unsubscribe: the URI, for the dispatcher's subscriptions. */
static int route_subscribe(int id, js_span params, buffer *out, mcp_route *route)
{
    js_span uri;
    char *text;
    size_t length;
    if (read_uri(params, &uri, &text, &length, out, route) != 0)
        return 0;
    free(text);
    *route =
        (mcp_route){.kind = MCP_SUBSCRIBE, .uri = uri, .subscribe = id == MCP_RESOURCES_SUBSCRIBE};
    return 0;
}

/* logging/setLevel: MCP's eight levels onto rpcd's four. */
static int route_log_level(int era, js_span params, buffer *out, mcp_route *route)
{
    js_span name = {NULL, 0};
    int level = -1;
    if (params.length > 0 && js_kind_of(params) == JS_OBJECT &&
        js_object_get(params, "level", 5, &name) == 1)
        level = mcp_events_level_of(name);
    if (level < 0)
        return refuse_with("\"level\" must be one of MCP's levels (debug, info, notice, warning, "
                           "error, critical, alert, emergency), given once",
                           NULL, name, out, route);
    size_t start = out->length;
    int failed = buf_append_string(out, "{}");
    if (era == MCP_ERA_STATELESS)
        failed |= mcp_finish_stateless_result(out, start, true, false);
    *route = failed ? (mcp_route){.kind = MCP_REFUSED, .status = RPCD_ERR_NO_MEMORY}
                    : (mcp_route){.kind = MCP_LOG_LEVEL, .log_level = level};
    return 0;
}

/* The routing of an MCP method (id) of a message, its era read once (route_tool_call reads it
 * with the tool's members); *era is what was read, an mcp_revision_refusal included. */
static int route_method(const mcp_tools *tools, int id, js_span params, buffer *out,
                        mcp_route *route, int *era_read)
{
    if (id == MCP_TOOLS_CALL)
        return route_tool_call(tools, params, out, route, era_read);
    int era = mcp_revision_read(params, out);
    /* initialize selects the handshake era, unless its _meta names the revision that removed
     * it: a client of either era that sends it gets the handshake it knows. */
    if (id == MCP_INITIALIZE && era != MCP_ERA_STATELESS) {
        buf_clear(out);
        era = MCP_ERA_HANDSHAKE;
    }
    *era_read = era;
    if (era < 0)
        return refuse_revision(era, out, route);
    if (era == MCP_ERA_STATELESS && mcp_revision_removed(id)) {
        buf_clear(out);
        *route = (mcp_route){.kind = MCP_REFUSED, .status = RPCD_ERR_METHOD_NOT_FOUND};
        return 0;
    }
    /* Discovery is the revision's own request: it names the revision like any other. */
    if (id == MCP_SERVER_DISCOVER && !mcp_revision_named(params))
        return refuse_with("server/discover needs \"_meta\" naming the protocol version "
                           "(\"" MCP_META_PROTOCOL_VERSION "\") and the client's capabilities",
                           NULL, params, out, route);
    switch (id) {
    case MCP_SUBSCRIPTIONS_LISTEN: return route_listen(tools, params, out, route);
    case MCP_RESOURCES_READ: return route_resource_read(tools, era, params, out, route);
    case MCP_PROMPTS_GET: return route_prompt_get(tools, era, params, out, route);
    case MCP_COMPLETION_COMPLETE: return route_completion(tools, era, params, out, route);
    case MCP_RESOURCES_SUBSCRIBE:
    case MCP_RESOURCES_UNSUBSCRIBE: return route_subscribe(id, params, out, route);
    case MCP_LOGGING_SET_LEVEL: return route_log_level(era, params, out, route);
    case MCP_TASKS_GET:
    case MCP_TASKS_UPDATE:
    case MCP_TASKS_CANCEL: return mcp_route_task_method(id, era, params, out, route);
    default: break;
    }
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

int mcp_route_message(const registry *methods, const mcp_tools *tools, const char *method,
                      size_t method_length, js_span params, buffer *out, mcp_route *route)
{
    int id = mcp_method_find(method, method_length);
    if (id < 0)
        return -1;
    /* A plugin built before ABI 1.5 may serve a method MCP came to name (resources/read...)
     * itself, as it did then: its method, called as any other, keeps the name. */
    if (mcp_method_reserved_since(id) > 0 && methods && reg_find(methods, method, method_length))
        return -1;
    int era = MCP_ERA_HANDSHAKE;
    int status = route_method(tools, id, params, out, route, &era);
    route->starts_session =
        id == MCP_INITIALIZE || id == MCP_SERVER_DISCOVER || era == MCP_ERA_STATELESS;
    route->initializes = id == MCP_INITIALIZE;
    /* What the client can be asked, for the session: initialize's capabilities. */
    route->client_capabilities = (js_span){NULL, 0};
    if (id == MCP_INITIALIZE && params.length > 0 && js_kind_of(params) == JS_OBJECT &&
        js_object_get(params, "capabilities", 12, &route->client_capabilities) != 1)
        route->client_capabilities = (js_span){NULL, 0};
    return status;
}
