/* SPDX-License-Identifier: MIT */
/*
 * A control request read from its line with rpcd's own strict scanner (the id's text is kept as
 * the peer wrote it), and the lines that answer it or refuse it.
 */
#include "control/control_request.h"

#include "wire/response_line.h"

#include <string.h>

static const char *const method_names[CTL_METHOD_COUNT] = {
    "status", "calls", "reload", "metrics", "cancel",
};

const char *ctl_method_name(ctl_method method)
{
    return method < CTL_METHOD_COUNT ? method_names[method] : "?";
}

static int refuse(ctl_refusal *refusal, int64_t code, const char *message)
{
    refusal->code = code;
    refusal->message = message;
    return -1;
}

/* The member key of object, when it is there exactly once: 1 and *value; 0 when absent; -1 when
 * given twice. */
static int member(js_span object, const char *key, js_span *value)
{
    size_t count = js_object_get(object, key, strlen(key), value);
    return count > 1 ? -1 : (int)count;
}

static bool is_id(js_span value)
{
    js_kind kind = js_kind_of(value);
    return kind == JS_STRING || kind == JS_NUMBER || kind == JS_NULL;
}

/* The envelope: jsonrpc "2.0", an id (string, number or null) when there is one. */
static int read_envelope(js_span object, ctl_request *out, ctl_refusal *refusal)
{
    js_span version, id;
    int found = member(object, "id", &id);
    if (found < 0 || (found == 1 && !is_id(id)))
        return refuse(refusal, -32600, "Invalid Request: id must be a string, a number or null");
    if (found == 1) {
        out->has_id = refusal->has_id = true;
        out->id = refusal->id = id;
    }
    if (member(object, "jsonrpc", &version) != 1 || js_kind_of(version) != JS_STRING ||
        !js_string_equals(version, "2.0", 3))
        return refuse(refusal, -32600, "Invalid Request: jsonrpc must be \"2.0\"");
    return 0;
}

/* cancel's params: {"id": the id of the call to cancel, a string or a number}. */
static int read_cancel(js_span params, bool has_params, ctl_request *out, ctl_refusal *refusal)
{
    if (!has_params || member(params, "id", &out->cancel) != 1)
        return refuse(refusal, -32602, "Invalid params: cancel needs params.id, the call's id");
    js_kind kind = js_kind_of(out->cancel);
    if (kind != JS_STRING && kind != JS_NUMBER)
        return refuse(refusal, -32602, "Invalid params: params.id must be a string or a number");
    return 0;
}

int ctl_parse_request(const char *line, size_t length, ctl_request *out, ctl_refusal *refusal)
{
    memset(out, 0, sizeof *out);
    memset(refusal, 0, sizeof *refusal);
    js_span object, method, params;
    if (length > CTL_MAX_LINE_BYTES)
        return refuse(refusal, -32600, "Invalid Request: longer than 65536 bytes");
    if (js_validate(line, length, CTL_MAX_DEPTH, &object, NULL) != 0)
        return refuse(refusal, -32700, "Parse error");
    if (js_kind_of(object) != JS_OBJECT)
        return refuse(refusal, -32600, "Invalid Request: not an object (batches are not served)");
    if (read_envelope(object, out, refusal) != 0)
        return -1;
    if (member(object, "method", &method) != 1 || js_kind_of(method) != JS_STRING)
        return refuse(refusal, -32600, "Invalid Request: method must be a string");
    int has_params = member(object, "params", &params);
    if (has_params < 0 || (has_params == 1 && js_kind_of(params) != JS_OBJECT))
        return refuse(refusal, -32602, "Invalid params: params must be an object");
    for (int i = 0; i < CTL_METHOD_COUNT; i++) {
        if (!js_string_equals(method, method_names[i], strlen(method_names[i])))
            continue;
        out->method = (ctl_method)i;
        return out->method == CTL_CANCEL ? read_cancel(params, has_params == 1, out, refusal) : 0;
    }
    return refuse(refusal, -32601, "Method not found: status, calls, reload, metrics or cancel");
}

int ctl_append_refusal(buffer *out, const ctl_refusal *refusal)
{
    int failed = rl_append_error(out, refusal->has_id ? &refusal->id : NULL, refusal->code,
                                 refusal->message, NULL, 0);
    return failed | buf_append_char(out, '\n');
}

int ctl_append_result(buffer *out, js_span id, const char *result, size_t length)
{
    int failed = buf_append_string(out, "{\"jsonrpc\":\"2.0\",\"id\":");
    failed |= buf_append(out, id.start, id.length);
    failed |= buf_append_string(out, ",\"result\":");
    failed |= buf_append(out, result, length);
    return failed | buf_append_string(out, "}\n");
}
