/* SPDX-License-Identifier: MIT */
/*
 * bound_jansson: a minimal JSON-RPC echo server written the obvious way with jansson: parse
 * each line into a tree, build {"jsonrpc","id","result":params}, dump it compact. Same reading
 * and flushing as bound_line_echo, so the difference is the cost of the JSON work alone.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bound_io.h"

/* The response to one request object (new reference), or NULL for a notification. */
static json_t *respond(json_t *request)
{
    json_t *id = json_object_get(request, "id");
    if (!id)
        return NULL;
    json_t *params = json_object_get(request, "params");
    json_t *response = json_object();
    json_object_set_new(response, "jsonrpc", json_string("2.0"));
    json_object_set(response, "id", id);
    json_object_set(response, "result", params ? params : json_null());
    return response;
}

/* Appends the reply to one line, if it has one, to out. */
static int serve_line(const char *line, size_t length, buffer *out)
{
    json_error_t error;
    json_t *request = json_loadb(line, length, 0, &error);
    json_t *response = NULL;

    if (!request) {
        response = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", "error", "code",
                             -32700, "message", "Parse error");
    } else if (json_is_array(request)) {
        response = json_array();
        size_t index;
        json_t *item;
        json_array_foreach(request, index, item)
        {
            json_t *reply = respond(item);
            if (reply)
                json_array_append_new(response, reply);
        }
    } else {
        response = respond(request);
    }
    json_decref(request);
    if (!response)
        return 0;
    char *text = json_dumps(response, JSON_COMPACT);
    json_decref(response);
    if (!text)
        return -1;
    size_t text_length = strlen(text);
    int status = reserve(out, text_length + 1);
    if (status == 0) {
        memcpy(out->data + out->length, text, text_length);
        out->length += text_length;
        out->data[out->length++] = '\n';
    }
    free(text);
    return status;
}

int main(void)
{
    buffer in = {0}, out = {0};
    size_t start = 0, scanned = 0;
    int status = 1;

    signal(SIGPIPE, SIG_IGN);
    for (;;) {
        if (start > 0) {
            memmove(in.data, in.data + start, in.length - start);
            in.length -= start;
            scanned -= start;
            start = 0;
        }
        ssize_t got = read_more(&in, &out);
        if (got < 0)
            goto done;
        if (got == 0)
            break;
        char *newline;
        while ((newline = memchr(in.data + scanned, '\n', in.length - scanned))) {
            size_t end = (size_t)(newline - in.data);
            if (end > start && serve_line(in.data + start, end - start, &out) < 0)
                goto done;
            start = scanned = end + 1;
            if (out.length >= FLUSH_BYTES) {
                if (write_all(out.data, out.length) < 0)
                    goto done;
                out.length = 0;
            }
        }
        scanned = in.length;
    }
    if (in.length > start && serve_line(in.data + start, in.length - start, &out) < 0)
        goto done;
    if (write_all(out.data, out.length) < 0)
        goto done;
    status = 0;
done:
    free(in.data);
    free(out.data);
    return status;
}
