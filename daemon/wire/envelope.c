/* SPDX-License-Identifier: MIT */
/*
 * Envelope classification over spans of an already validated text.
 */
#include "wire/envelope.h"

#include "wire/response_line.h"

#include <string.h>

#define KEY_IS(key, literal) js_string_equals((key), (literal), sizeof(literal) - 1)

bool env_meta_has_duplicate(js_span meta)
{
    js_span token;
    return js_kind_of(meta) == JS_OBJECT && js_object_get(meta, "progressToken", 13, &token) > 1;
}

bool env_find_progress_token(js_span params, js_span *token)
{
    if (params.length == 0 || js_kind_of(params) != JS_OBJECT)
        return false;
    js_span meta, value;
    /* Given twice, the token is ambiguous: a client and a gateway may each read another. */
    if (js_object_get(params, "_meta", 5, &meta) != 1 || js_kind_of(meta) != JS_OBJECT ||
        js_object_get(meta, "progressToken", 13, &value) != 1)
        return false;
    js_kind kind = js_kind_of(value);
    if (kind != JS_STRING && kind != JS_NUMBER)
        return false;
    *token = value;
    return true;
}

/* What the members of one envelope said, gathered member by member. */
typedef struct envelope_members {
    bool seen_jsonrpc, seen_id, seen_method, seen_params, seen_result_or_error;
    bool duplicate, duplicate_id;
    js_span jsonrpc, id;
} envelope_members;

/* The envelope member a key names, by its decoded bytes; MEMBER_OTHER for any other key. */
enum member {
    MEMBER_OTHER,
    MEMBER_JSONRPC,
    MEMBER_ID,
    MEMBER_METHOD,
    MEMBER_PARAMS,
    MEMBER_ANSWER
};

static enum member member_of(js_span key)
{
    const char *name = key.start + 1;
    size_t length = key.length - 2;
    char decoded[8];
    if (memchr(name, '\\', length)) {
        /* Escaped keys are rare: decode, and anything longer than "jsonrpc" is no member. */
        if (js_string_decode(key, decoded, sizeof decoded, &length) != 0)
            return MEMBER_OTHER;
        name = decoded;
    }
    switch (length) {
    case 2: return memcmp(name, "id", 2) == 0 ? MEMBER_ID : MEMBER_OTHER;
    case 5: return memcmp(name, "error", 5) == 0 ? MEMBER_ANSWER : MEMBER_OTHER;
    case 6:
        if (memcmp(name, "method", 6) == 0)
            return MEMBER_METHOD;
        if (memcmp(name, "params", 6) == 0)
            return MEMBER_PARAMS;
        return memcmp(name, "result", 6) == 0 ? MEMBER_ANSWER : MEMBER_OTHER;
    case 7: return memcmp(name, "jsonrpc", 7) == 0 ? MEMBER_JSONRPC : MEMBER_OTHER;
    default: return MEMBER_OTHER;
    }
}

static void note_member(envelope_members *seen, env_message *out, js_span key, js_span member)
{
    switch (member_of(key)) {
    case MEMBER_JSONRPC:
        seen->duplicate |= seen->seen_jsonrpc;
        seen->seen_jsonrpc = true;
        seen->jsonrpc = member;
        break;
    case MEMBER_ID:
        seen->duplicate_id |= seen->seen_id;
        seen->seen_id = true;
        seen->id = member;
        break;
    case MEMBER_METHOD:
        seen->duplicate |= seen->seen_method;
        seen->seen_method = true;
        out->method = member;
        break;
    case MEMBER_PARAMS:
        seen->duplicate |= seen->seen_params;
        seen->seen_params = true;
        out->params = member;
        break;
    case MEMBER_ANSWER: seen->seen_result_or_error = true; break;
    case MEMBER_OTHER: break; /* not ours to judge: JSON-RPC 2.0 does not forbid them */
    }
}

static void judge(const envelope_members *seen, env_message *out);

void env_parse(js_span value, env_message *out)
{
    memset(out, 0, sizeof *out);
    out->kind = ENV_INVALID;
    if (js_kind_of(value) != JS_OBJECT) {
        out->problem = "not an object";
        return;
    }
    envelope_members seen = {0};
    js_iter members;
    js_span key, member;
    js_iter_init(&members, value);
    while (js_iter_next(&members, &key, &member))
        note_member(&seen, out, key, member);
    judge(&seen, out);
}

void env_parse_members(const js_child *members, size_t count, env_message *out)
{
    memset(out, 0, sizeof *out);
    envelope_members seen = {0};
    for (size_t i = 0; i < count; i++)
        note_member(&seen, out, members[i].key, members[i].value);
    judge(&seen, out);
}

/* The envelope rules, from what the members said. */
static void judge(const envelope_members *seen, env_message *out)
{
    bool seen_jsonrpc = seen->seen_jsonrpc, seen_id = seen->seen_id;
    bool seen_method = seen->seen_method, seen_params = seen->seen_params;
    bool seen_result_or_error = seen->seen_result_or_error;
    bool duplicate = seen->duplicate, duplicate_id = seen->duplicate_id;
    js_span jsonrpc = seen->jsonrpc, id = seen->id;
    out->kind = ENV_INVALID;

    /* A valid id is echoed even when the rest is wrong, so the client can match the error. */
    if (seen_id && !duplicate_id) {
        js_kind kind = js_kind_of(id);
        if (kind == JS_STRING || kind == JS_NUMBER || kind == JS_NULL) {
            out->has_id = true;
            out->id = id;
        }
    }

    /* Only a valid id makes it a response a client could mean: without one it is answered as
     * the invalid request it is, so that a client that forgot the id hears of it. */
    if (!seen_method && seen_result_or_error && out->has_id) {
        out->kind = ENV_RESPONSE;
        return;
    }
    if (duplicate_id || duplicate) {
        out->problem = "a member appears twice";
        return;
    }
    if (!seen_jsonrpc || js_kind_of(jsonrpc) != JS_STRING || !KEY_IS(jsonrpc, "2.0")) {
        out->problem = "\"jsonrpc\" is not \"2.0\"";
        return;
    }
    if (seen_id && !out->has_id) {
        out->problem = "\"id\" is not a string, number or null";
        return;
    }
    if (!seen_method || js_kind_of(out->method) != JS_STRING) {
        out->problem = "\"method\" is missing or not a string";
        return;
    }
    if (seen_params) {
        js_kind kind = js_kind_of(out->params);
        if (kind != JS_OBJECT && kind != JS_ARRAY) {
            out->problem = "\"params\" is not an array or object";
            return;
        }
        out->has_params = true;
    }
    out->kind = seen_id ? ENV_REQUEST : ENV_NOTIFICATION;
}

int env_append_error(buffer *out, const js_span *id, int64_t code, const char *message,
                     const char *data, size_t data_length)
{
    return rl_append_error(out, id, code, message, data, data_length);
}
