/* SPDX-License-Identifier: MIT */
/*
 * The stateless revision's part of every MCP answer: reading the version a request names,
 * refusing one rpcd does not speak, and the members its results carry.
 */
#include "mcp/mcp_revision.h"

#include "calls/call.h"
#include "mcp/mcp.h"
#include "methods/plugin_contract.h"

#include <string.h>

#ifndef RPCD_VERSION
#define RPCD_VERSION "unknown"
#endif

int mcp_append_implementation(buffer *out)
{
    int failed = buf_append_string(out, "{\"name\":\"rpcd\",\"version\":");
    failed |= buf_append_json_string(out, RPCD_VERSION, strlen(RPCD_VERSION));
    return failed | buf_append_char(out, '}');
}

static int refuse_invalid(const char *detail, buffer *data)
{
    int failed = buf_append_string(data, "{\"detail\":");
    failed |= buf_append_json_string(data, detail, strlen(detail));
    failed |= buf_append_char(data, '}');
    return failed ? -3 : MCP_REVISION_INVALID;
}

int mcp_revision_read(js_span params, buffer *data)
{
    js_span meta = {NULL, 0};
    if (params.length == 0 || js_kind_of(params) != JS_OBJECT)
        return MCP_ERA_HANDSHAKE;
    size_t metas = js_object_get(params, "_meta", 5, &meta);
    if (metas > 1)
        return refuse_invalid("\"_meta\" appears twice", data);
    return mcp_revision_of_meta(meta, data);
}

int mcp_revision_of_meta(js_span meta, buffer *data)
{
    js_span version;
    if (meta.length == 0 || js_kind_of(meta) != JS_OBJECT)
        return MCP_ERA_HANDSHAKE;
    size_t versions = js_object_get(meta, MCP_META_PROTOCOL_VERSION,
                                    sizeof MCP_META_PROTOCOL_VERSION - 1, &version);
    if (versions == 0)
        return MCP_ERA_HANDSHAKE;
    /* Given twice, a gateway and rpcd could each read another version: it means nothing. */
    if (versions > 1 || js_kind_of(version) != JS_STRING)
        return refuse_invalid("\"" MCP_META_PROTOCOL_VERSION "\" in \"_meta\" must be one string",
                              data);
    if (js_string_equals(version, MCP_STATELESS_VERSION, sizeof MCP_STATELESS_VERSION - 1)) {
        /* The revision requires them: a request without says nothing of what the client can
         * answer, which a call that asks for input depends on. */
        js_span capabilities;
        if (js_object_get(meta, MCP_META_CLIENT_CAPABILITIES,
                          sizeof MCP_META_CLIENT_CAPABILITIES - 1, &capabilities) != 1 ||
            js_kind_of(capabilities) != JS_OBJECT)
            return refuse_invalid("\"" MCP_META_CLIENT_CAPABILITIES
                                  "\" in \"_meta\" must be one object in " MCP_STATELESS_VERSION,
                                  data);
        return MCP_ERA_STATELESS;
    }
    /*
     * A handshake-era version rpcd speaks is served as that era is: its results have no
     * resultType, which its clients do not expect.
     */
    if (mcp_handshake_version(version))
        return MCP_ERA_HANDSHAKE;
    /* The version is echoed as the client wrote it: it is a valid JSON string already. */
    int failed = buf_append_string(data, "{\"supported\":");
    failed |= mcp_append_versions(data);
    failed |= buf_append_string(data, ",\"requested\":");
    failed |= buf_append(data, version.start, version.length);
    failed |= buf_append_char(data, '}');
    return failed ? -3 : MCP_REVISION_UNSUPPORTED;
}

/* True when object has the member key as an object, once. */
static bool has_object(js_span object, const char *key, js_span *value)
{
    return js_object_get(object, key, strlen(key), value) == 1 && js_kind_of(*value) == JS_OBJECT;
}

unsigned mcp_ask_capabilities(js_span meta)
{
    js_span capabilities;
    if (meta.length == 0 || js_kind_of(meta) != JS_OBJECT ||
        !has_object(meta, MCP_META_CLIENT_CAPABILITIES, &capabilities))
        return 0;
    return mcp_ask_capabilities_of(capabilities);
}

bool mcp_declares_tasks(js_span meta)
{
    js_span capabilities, extensions, tasks;
    return meta.length > 0 && js_kind_of(meta) == JS_OBJECT &&
           has_object(meta, MCP_META_CLIENT_CAPABILITIES, &capabilities) &&
           has_object(capabilities, "extensions", &extensions) &&
           has_object(extensions, MCP_TASKS_EXTENSION, &tasks);
}

unsigned mcp_ask_capabilities_of(js_span capabilities)
{
    js_span elicitation, ignored;
    if (!(capabilities.length > 0 && js_kind_of(capabilities) == JS_OBJECT))
        return 0;
    unsigned bits = 0;
    if (has_object(capabilities, "elicitation", &elicitation)) {
        /* An empty object is a form's, as before the modes came (MCP 2025-11-25). */
        bool form = has_object(elicitation, "form", &ignored);
        bool url = has_object(elicitation, "url", &ignored);
        js_iter members;
        js_span key;
        js_iter_init(&members, elicitation);
        bool empty = !js_iter_next(&members, &key, &ignored);
        bits |=
            (form || empty ? CONTRACT_ASK_ELICIT_FORM : 0u) | (url ? CONTRACT_ASK_ELICIT_URL : 0u);
    }
    if (has_object(capabilities, "sampling", &ignored))
        bits |= CONTRACT_ASK_SAMPLING;
    if (has_object(capabilities, "roots", &ignored))
        bits |= CONTRACT_ASK_ROOTS;
    return bits;
}

bool mcp_revision_named(js_span params)
{
    js_span meta, version;
    return params.length > 0 && js_kind_of(params) == JS_OBJECT &&
           js_object_get(params, "_meta", 5, &meta) > 0 && js_kind_of(meta) == JS_OBJECT &&
           js_object_get(meta, MCP_META_PROTOCOL_VERSION, sizeof MCP_META_PROTOCOL_VERSION - 1,
                         &version) > 0;
}

bool mcp_revision_removed(int id)
{
    return id == MCP_INITIALIZE || id == MCP_PING || id == MCP_LOGGING_SET_LEVEL ||
           id == MCP_RESOURCES_SUBSCRIBE || id == MCP_RESOURCES_UNSUBSCRIBE;
}

int mcp_finish_stateless_result(buffer *out, size_t start, bool with_meta, bool cacheable)
{
    if (out->length < start + 2 || out->data[start] != '{' || out->data[out->length - 1] != '}')
        return -1;
    /* The members go last, so that the result before them stays as its builder made it. */
    out->length--;
    bool empty = out->length == start + 1;
    int failed = buf_append_string(out, empty ? "\"resultType\":\"complete\""
                                              : ",\"resultType\":\"complete\"");
    if (cacheable) {
        /* Private: rpcd cannot tell whether a gateway serves one config to several users. */
        failed |= buf_printf(out, ",\"ttlMs\":%d,\"cacheScope\":\"private\"", MCP_LIST_TTL_MS);
    }
    if (with_meta) {
        failed |= buf_append_string(out, ",\"_meta\":{\"io.modelcontextprotocol/serverInfo\":");
        failed |= mcp_append_implementation(out);
        failed |= buf_append_char(out, '}');
    }
    return failed | buf_append_char(out, '}');
}

static int stateless_result(buffer *out, const char *result, size_t length)
{
    size_t start = out->length;
    if (mcp_append_tool_result(out, result, length) != 0)
        return -1;
    return mcp_finish_stateless_result(out, start, false, false);
}

static int stateless_failure(buffer *out, const char *text, size_t length)
{
    size_t start = out->length;
    if (mcp_append_tool_error(out, text, length) != 0)
        return -1;
    return mcp_finish_stateless_result(out, start, false, false);
}

bool mcp_result_type_is(const char *result, size_t length, const char *type)
{
    js_span value, given;
    return js_validate(result, length, MCP_RESULT_DEPTH, &value, NULL) == 0 &&
           js_kind_of(value) == JS_OBJECT && js_object_get(value, "resultType", 10, &given) == 1 &&
           js_string_equals(given, type, strlen(type));
}

/*
 * A complete result is the plugin's object, with the resultType every result of the revision
 * has; one that names its type (checked by mcp_tool_check_result when the plugin gave it) goes
 * as given.
 */
static int stateless_complete(buffer *out, const char *result, size_t length)
{
    size_t start = out->length;
    if (buf_append(out, result, length) != 0)
        return -1;
    if (mcp_result_type_is(result, length, "complete") ||
        mcp_result_type_is(result, length, "input_required"))
        return 0;
    return mcp_finish_stateless_result(out, start, false, false);
}

static const call_shaper stateless_tool_shaper = {stateless_result, stateless_failure, NULL,
                                                  stateless_complete};

const call_shaper *mcp_stateless_tool_shaper(void)
{
    return &stateless_tool_shaper;
}
