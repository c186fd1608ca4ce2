/* SPDX-License-Identifier: MIT */
/*
 * The data path after framing: bytes of a line -> validated JSON -> envelope -> method -> call.
 */
#include "dispatch.h"

#include "envelope.h"
#include "json_scan.h"
#include "log.h"
#include "rpc_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_blank(const char *line, size_t length)
{
    for (size_t i = 0; i < length; i++)
        if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
            return false;
    return true;
}

/* Handles one message (a whole line or one batch element). */
static int handle_message(const dispatcher *dispatch, js_span value, call_batch *batch)
{
    env_message message;
    env_parse(value, &message);

    if (message.kind == ENV_RESPONSE) {
        log_message(LOG_DEBUG, "ignored a response object: rpcd sends no requests");
        return 0;
    }
    if (message.kind == ENV_INVALID) {
        log_message(LOG_DEBUG, "invalid request: %s", message.problem);
        return call_respond_error(&dispatch->calls, batch, message.has_id ? &message.id : NULL,
                                  RPC_INVALID_REQUEST, NULL, NULL, 0);
    }

    /* The method name, decoded only when it holds escapes. */
    char small[256];
    char *heap = NULL;
    const char *name = message.method.start + 1;
    size_t name_length = message.method.length - 2;
    if (memchr(name, '\\', name_length)) {
        js_string_decode(message.method, small, sizeof small, &name_length);
        name = small;
        if (name_length > sizeof small) {
            heap = malloc(name_length);
            if (!heap)
                return call_respond_error(&dispatch->calls, batch,
                                          message.kind == ENV_REQUEST ? &message.id : NULL,
                                          RPC_INTERNAL_ERROR, NULL, NULL, 0);
            js_string_decode(message.method, heap, name_length, &name_length);
            name = heap;
        }
    }
    const reg_method *method = reg_find(dispatch->methods, name, name_length);
    free(heap);

    if (!method) {
        if (message.kind == ENV_NOTIFICATION)
            return 0;
        return call_respond_error(&dispatch->calls, batch, &message.id, RPC_METHOD_NOT_FOUND, NULL,
                                  NULL, 0);
    }
    call_request request = {
        .method = method,
        .id = message.kind == ENV_REQUEST ? &message.id : NULL,
        .params = message.has_params ? &message.params : NULL,
        .progress_token = message.has_progress_token ? &message.progress_token : NULL,
        .batch = batch,
    };
    return call_run(&dispatch->calls, &request);
}

int disp_line(const dispatcher *dispatch, const char *line, size_t length)
{
    if (is_blank(line, length))
        return 0;

    js_span value;
    size_t offset = 0;
    int status = js_validate(line, length, dispatch->max_depth, &value, &offset);
    if (status == JS_ERR_DEPTH) {
        char data[96];
        int n = snprintf(data, sizeof data, "{\"detail\":\"nested deeper than max_depth (%zu)\"}",
                         dispatch->max_depth);
        return call_respond_error(&dispatch->calls, NULL, NULL, RPC_PARSE_ERROR, NULL, data,
                                  (size_t)n);
    }
    if (status != 0) {
        log_message(LOG_DEBUG, "parse error at byte %zu of a %zu-byte line", offset, length);
        return call_respond_error(&dispatch->calls, NULL, NULL, RPC_PARSE_ERROR, NULL, NULL, 0);
    }

    if (js_kind_of(value) != JS_ARRAY)
        return handle_message(dispatch, value, NULL);

    js_iter elements;
    js_span element;
    js_iter_init(&elements, value);
    if (!js_iter_next(&elements, NULL, &element)) /* "[]" is one invalid request, no array */
        return call_respond_error(&dispatch->calls, NULL, NULL, RPC_INVALID_REQUEST, NULL, NULL, 0);
    call_batch *batch;
    if (call_batch_new(&dispatch->calls, &batch) != 0)
        return call_respond_error(&dispatch->calls, NULL, NULL, RPC_INTERNAL_ERROR, NULL, NULL, 0);
    do {
        handle_message(dispatch, element, batch);
    } while (js_iter_next(&elements, NULL, &element));
    call_batch_release(batch);
    return out_failed(dispatch->calls.out) ? -1 : 0;
}

int disp_line_too_long(const dispatcher *dispatch, size_t length, size_t limit)
{
    log_message(LOG_WARNING, "skipped a %zu-byte line: longer than max_line_bytes (%zu)", length,
                limit);
    char data[96];
    int n = snprintf(data, sizeof data, "{\"detail\":\"line longer than max_line_bytes (%zu)\"}",
                     limit);
    return call_respond_error(&dispatch->calls, NULL, NULL, RPC_INVALID_REQUEST, NULL, data,
                              (size_t)n);
}
