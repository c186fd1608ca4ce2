/* SPDX-License-Identifier: MIT */
/*
 * The shapes of the lines rpcd writes: responses, notifications, and the answer a signal handler
 * can give without allocating.
 */
#include "wire/response_line.h"

#include "wire/rpc_error.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

int rl_append_error(buffer *out, const js_span *id, int64_t code, const char *message,
                    const char *data, size_t data_length)
{
    int status = buf_append_string(out, RL_HEAD "\"id\":");
    if (id)
        status |= buf_append(out, id->start, id->length);
    else
        status |= buf_append_string(out, "null");
    status |= buf_printf(out, ",\"error\":{\"code\":%" PRId64 ",\"message\":", code);
    status |= buf_append_json_string(out, message, strlen(message));
    if (data) {
        status |= buf_append_string(out, ",\"data\":");
        status |= buf_append(out, data, data_length);
    }
    status |= buf_append_string(out, "}}");
    return status ? -1 : 0;
}

int rl_append_notification(buffer *out, const char *method, size_t method_length,
                           const char *params, size_t params_length)
{
    int status = buf_append_string(out, RL_HEAD "\"method\":");
    status |= buf_append_json_string(out, method, method_length);
    if (params) {
        /* Pretty-printed JSON must not split the line it goes into. */
        status |= buf_append_string(out, ",\"params\":");
        size_t start = out->length;
        if (buf_append(out, params, params_length) == 0)
            out->length = start + js_drop_line_breaks(out->data + start, params_length);
        else
            status = -1;
    }
    status |= buf_append_char(out, '}');
    return status ? -1 : 0;
}

/* JSON has no NaN or infinity; integral values print without a fraction. */
static int append_number(buffer *out, double value)
{
    if (!isfinite(value))
        return -1;
    if (value == floor(value) && fabs(value) < 9007199254740992.0)
        return buf_printf(out, "%.0f", value);
    return buf_printf(out, "%.17g", value);
}

int rl_append_progress(buffer *out, const char *token, size_t token_length, double done,
                       double total, const char *message)
{
    int status = buf_append_string(out, RL_HEAD "\"method\":\"notifications/progress\",\"params\":"
                                                "{\"progressToken\":");
    status |= buf_append(out, token, token_length);
    status |= buf_append_string(out, ",\"progress\":");
    status |= append_number(out, done);
    if (total >= 0 && isfinite(total)) {
        status |= buf_append_string(out, ",\"total\":");
        status |= append_number(out, total);
    }
    if (message) {
        status |= buf_append_string(out, ",\"message\":");
        status |= buf_append_json_string(out, message, strlen(message));
    }
    status |= buf_append_string(out, "}}");
    return status ? -1 : 0;
}

int rl_never_ran_parts(struct iovec parts[RL_NEVER_RAN_PARTS], const char *id, size_t id_length)
{
    static const char head[] = RL_HEAD "\"id\":";
    static const char tail[] = ",\"error\":{\"code\":-32800,\"message\":\"Request cancelled\","
                               "\"data\":{\"detail\":\"" RPCERR_NEVER_RAN_DETAIL "\"}}}";
    parts[0] = (struct iovec){(void *)head, sizeof head - 1};
    parts[1] = (struct iovec){(void *)id, id_length};
    parts[2] = (struct iovec){(void *)tail, sizeof tail - 1};
    return RL_NEVER_RAN_PARTS;
}
