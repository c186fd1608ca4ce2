/* SPDX-License-Identifier: MIT */
/*
 * The results made from what a plugin's handler gave: a tool's (its text, its failure, a
 * complete result in the handshake era), and those of resources/read, prompts/get and
 * completion/complete: the short forms (a string, an array of strings) become MCP's objects,
 * and an object given whole is checked to be MCP's before it is written. A failure stays a
 * JSON-RPC error: unlike a tool's, it is no answer a model should read.
 */
#include "mcp/mcp_results.h"

#include "base/log.h"
#include "mcp/mcp.h"
#include "mcp/mcp_revision.h"
#include "methods/mcp_tool.h"

#include <jansson.h>

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

/*
 * A complete result in the handshake era goes unchanged, unless it asks the client for input
 * the 2026-07-28 way, which no client of that era can answer: -32603 then, as for any result
 * that is not the era's.
 */
static int handshake_complete(buffer *out, const char *result, size_t length)
{
    if (mcp_result_type_is(result, length, "input_required")) {
        log_message(LOG_WARNING, "a tool answered with an \"input_required\" result, which a "
                                 "client of the handshake era (2025-11-25 and older) cannot read");
        return -1;
    }
    return buf_append(out, result, length);
}

/* A tool's failure is a result the model can read (isError), not a JSON-RPC error. */
static const call_shaper tool_shaper = {mcp_append_tool_result, mcp_append_tool_error, NULL,
                                        handshake_complete};

const call_shaper *mcp_tool_shaper(void)
{
    return &tool_shaper;
}

/* The most values one completion carries (MCP's bound). */
enum { MOST_VALUES = 100 };

static json_t *parse(const char *text, size_t length)
{
    return json_loadb(text, length, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
}

/* Logs why a handler's result cannot be sent, and returns -1 so that -32603 goes instead. */
static int refuse(const reg_method *method, const char *what, const char *problem)
{
    reg_shown shown;
    reg_show(method, &shown);
    log_message(LOG_WARNING, "%s: %s gave %s that is not MCP's: %s", shown.plugin, shown.method,
                what, problem);
    return -1;
}

/* Appends value (jansson's) compactly on one line. Returns 0 or -1. */
static int append_json(buffer *out, const json_t *value)
{
    char *text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text)
        return -1;
    int failed = buf_append_string(out, text);
    free(text);
    return failed;
}

static const char *contents_problem(const json_t *result)
{
    const json_t *contents = json_object_get(result, "contents");
    if (!json_is_array(contents))
        return "\"contents\" is not an array";
    size_t i;
    const json_t *item;
    json_array_foreach(contents, i, item)
    {
        if (!json_is_object(item) || !json_is_string(json_object_get(item, "uri")))
            return "an item of \"contents\" has no string \"uri\"";
        bool text = json_is_string(json_object_get(item, "text"));
        bool blob = json_is_string(json_object_get(item, "blob"));
        if (text == blob)
            return "an item of \"contents\" needs a string \"text\" or a base64 \"blob\"";
    }
    return NULL;
}

static int resource_result(buffer *out, const reg_method *method, js_span params,
                           const char *result, size_t length)
{
    json_t *value = parse(result, length);
    json_t *given = parse(params.start, params.length);
    json_t *descriptor = json_loads(method->mcp_descriptor, 0, NULL);
    int failed = 0;
    if (json_is_object(value)) {
        const char *problem = contents_problem(value);
        failed = problem ? refuse(method, "a resource", problem) : append_json(out, value);
    } else {
        /* The short form: one item, of the URI read, with the resource's type. */
        const json_t *uri = json_object_get(given, "uri");
        const json_t *mime = json_object_get(descriptor, "mimeType");
        failed = buf_append_string(out, "{\"contents\":[{\"uri\":");
        failed |= append_json(out, uri ? uri : json_null());
        if (json_is_string(value) && mime) {
            failed |= buf_append_string(out, ",\"mimeType\":");
            failed |= append_json(out, mime);
        } else if (!json_is_string(value)) {
            failed |= buf_append_string(out, ",\"mimeType\":\"application/json\"");
        }
        failed |= buf_append_string(out, ",\"text\":");
        if (json_is_string(value))
            failed |= append_json(out, value);
        else
            failed |= buf_append_json_string(out, result, length);
        failed |= buf_append_string(out, "}]}");
    }
    json_decref(value);
    json_decref(given);
    json_decref(descriptor);
    return failed ? -1 : 0;
}

static const char *messages_problem(const json_t *result)
{
    const json_t *messages = json_object_get(result, "messages");
    if (!json_is_array(messages))
        return "\"messages\" is not an array";
    const json_t *description = json_object_get(result, "description");
    if (description && !json_is_string(description))
        return "\"description\" is not a string";
    size_t i;
    const json_t *message;
    json_array_foreach(messages, i, message)
    {
        const char *role = json_string_value(json_object_get(message, "role"));
        if (!role || (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0))
            return "a message's \"role\" is not \"user\" or \"assistant\"";
        const char *problem = mcp_tool_block_problem(json_object_get(message, "content"));
        if (problem)
            return "a message's \"content\" is no MCP content block";
    }
    return NULL;
}

static int prompt_result(buffer *out, const reg_method *method, js_span params, const char *result,
                         size_t length)
{
    (void)params;
    json_t *value = parse(result, length);
    int failed = 0;
    if (json_is_object(value)) {
        const char *problem = messages_problem(value);
        failed = problem ? refuse(method, "a prompt", problem) : append_json(out, value);
    } else if (json_is_string(value)) {
        json_t *descriptor = json_loads(method->mcp_descriptor, 0, NULL);
        const json_t *description = json_object_get(descriptor, "description");
        failed = buf_append_char(out, '{');
        if (json_is_string(description)) {
            failed |= buf_append_string(out, "\"description\":");
            failed |= append_json(out, description);
            failed |= buf_append_char(out, ',');
        }
        failed |= buf_append_string(
            out, "\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":");
        failed |= append_json(out, value);
        failed |= buf_append_string(out, "}}]}");
        json_decref(descriptor);
    } else {
        failed = refuse(method, "a prompt", "neither a string nor an object with \"messages\"");
    }
    json_decref(value);
    return failed ? -1 : 0;
}

static bool all_strings(const json_t *values)
{
    size_t i;
    const json_t *item;
    json_array_foreach(values, i, item)
    {
        if (!json_is_string(item))
            return false;
    }
    return json_is_array(values);
}

static int completion_result(buffer *out, const reg_method *method, js_span params,
                             const char *result, size_t length)
{
    (void)params;
    json_t *value = parse(result, length);
    int failed = 0;
    if (json_is_array(value) && all_strings(value)) {
        size_t total = json_array_size(value);
        while (json_array_size(value) > MOST_VALUES)
            json_array_remove(value, MOST_VALUES);
        failed = buf_append_string(out, "{\"completion\":{\"values\":");
        failed |= append_json(out, value);
        failed |= buf_printf(out, ",\"total\":%zu,\"hasMore\":%s}}", total,
                             total > MOST_VALUES ? "true" : "false");
    } else if (json_is_object(value) && all_strings(json_object_get(value, "values")) &&
               json_array_size(json_object_get(value, "values")) <= MOST_VALUES) {
        failed = buf_append_string(out, "{\"completion\":");
        failed |= append_json(out, value);
        failed |= buf_append_char(out, '}');
    } else {
        failed = refuse(method, "a completion",
                        "neither an array of strings nor an object with \"values\" (at most 100 "
                        "strings)");
    }
    json_decref(value);
    return failed ? -1 : 0;
}

/* The same results in the stateless revision's shape. */
#define STATELESS(name)                                                                            \
    static int stateless_##name(buffer *out, const reg_method *method, js_span params,             \
                                const char *result, size_t length)                                 \
    {                                                                                              \
        size_t start = out->length;                                                                \
        if (name(out, method, params, result, length) != 0)                                        \
            return -1;                                                                             \
        return mcp_finish_stateless_result(out, start, true, false);                               \
    }
STATELESS(prompt_result)
STATELESS(completion_result)
#undef STATELESS

/*
 * The revision requires ttlMs and cacheScope of a resource read. A plugin's resource may change
 * at any time (resource_updated says when, not how long it stays), so no client is to keep it:
 * ttlMs 0.
 */
static int stateless_resource_result(buffer *out, const reg_method *method, js_span params,
                                     const char *result, size_t length)
{
    size_t start = out->length;
    if (resource_result(out, method, params, result, length) != 0)
        return -1;
    out->length--; /* the object's closing brace, put back by the members after */
    if (buf_append_string(out, ",\"ttlMs\":0,\"cacheScope\":\"private\"}") != 0)
        return -1;
    return mcp_finish_stateless_result(out, start, true, false);
}

static const call_shaper shapers[2][3] = {
    {{NULL, NULL, resource_result, NULL},
     {NULL, NULL, prompt_result, NULL},
     {NULL, NULL, completion_result, NULL}},
    {{NULL, NULL, stateless_resource_result, NULL},
     {NULL, NULL, stateless_prompt_result, NULL},
     {NULL, NULL, stateless_completion_result, NULL}},
};

const call_shaper *mcp_result_shaper(mcp_result_kind kind, bool stateless)
{
    return &shapers[stateless ? 1 : 0][kind];
}
