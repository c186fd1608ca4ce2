/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the control socket's request parser. Any line is a request or a refusal, never a
 * crash; a request's spans lie inside the line, a refusal is one JSON-RPC error line that rpcd's
 * scanner accepts, and cancel always has the id of a call to cancel.
 */
#include "control/control_request.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(const char *line, size_t size, js_span span)
{
    if (span.length && (span.start < line || span.start + span.length > line + size))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of its own size: a read past the line is ASan's to see. */
    char *line = malloc(size ? size : 1);
    if (!line)
        return 0;
    memcpy(line, data, size);
    ctl_request request;
    ctl_refusal refusal;
    if (ctl_parse_request(line, size, &request, &refusal) == 0) {
        if (request.method >= CTL_METHOD_COUNT)
            abort();
        inside(line, size, request.id);
        inside(line, size, request.cancel);
        if (request.method == CTL_CANCEL && request.cancel.length == 0)
            abort();
    } else {
        buffer out = BUFFER_INIT;
        if (ctl_append_refusal(&out, &refusal) == 0) {
            if (out.length == 0 || out.data[out.length - 1] != '\n' ||
                memchr(out.data, '\n', out.length - 1) ||
                js_validate(out.data, out.length - 1, 64, NULL, NULL) != 0)
                abort();
        }
        buf_free(&out);
    }
    free(line);
    return 0;
}
