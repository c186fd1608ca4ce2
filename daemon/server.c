/* SPDX-License-Identifier: MIT */
/*
 * The read-dispatch loop over a line reader and an output.
 */
#include "server.h"

#include "dispatch.h"
#include "log.h"

#include <errno.h>
#include <string.h>

static void reader_idle(void *context, bool idle)
{
    out_set_reader_idle(context, idle);
}

int srv_serve(const registry *methods, const srv_options *options, lr_read_fn read, void *source,
              out_write_fn write, void *sink)
{
    output *out = NULL;
    line_reader *reader = NULL;
    int result = SRV_NO_MEMORY;
    if (out_new(write, sink, &out) != 0 ||
        lr_new(read, source, options->max_line_bytes, &reader) != 0)
        goto done;
    lr_set_idle_hook(reader, reader_idle, out);

    dispatcher dispatch = {
        .methods = methods,
        .calls = {.out = out, .max_depth = options->max_depth},
        .max_depth = options->max_depth,
    };
    for (;;) {
        const char *line;
        size_t length;
        int status = lr_next(reader, &line, &length);
        if (status == LR_LINE) {
            disp_line(&dispatch, line, length);
        } else if (status == LR_TOO_LONG) {
            disp_line_too_long(&dispatch, length, options->max_line_bytes);
        } else if (status == LR_EOF) {
            result = SRV_DONE;
            break;
        } else if (status == LR_ERROR) {
            log_message(LOG_ERROR, "reading requests failed: %s", strerror(errno));
            result = SRV_INPUT_FAILED;
            break;
        } else {
            log_message(LOG_ERROR, "out of memory while reading a line");
            result = SRV_NO_MEMORY;
            break;
        }
        if (out_failed(out))
            break;
    }
    if (out_flush(out) != 0 || out_failed(out)) {
        log_message(LOG_ERROR, "writing responses failed: the client closed its end");
        result = SRV_OUTPUT_FAILED;
    }
done:
    lr_free(reader);
    out_free(out);
    return result;
}
