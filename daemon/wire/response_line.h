/* SPDX-License-Identifier: MIT */
/*
 * The lines rpcd writes, byte for byte: a success response, an error response, a notification
 * (a plugin's, or progress), and the answer a signal handler gives a call that never ran. Every
 * shape is built here and nowhere else; what goes into them (codes, messages, data) is decided in
 * rpc_error.c.
 */
#ifndef RPCD_RESPONSE_LINE_H
#define RPCD_RESPONSE_LINE_H

#include "base/buffer.h"
#include "json/json_scan.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

enum { RL_RESULT_PARTS = 5, RL_NEVER_RAN_PARTS = 3 };

/* Every line starts so: the one place the version is written. */
#define RL_HEAD "{\"jsonrpc\":\"2.0\","

/*
 * A success response (no newline) for id with result (raw JSON text), as parts that borrow both:
 * the result is written without a copy. Returns how many parts it filled (RL_RESULT_PARTS).
 */
static inline int rl_result_parts(struct iovec parts[RL_RESULT_PARTS], const js_span *id,
                                  const char *result, size_t result_length)
{
    /* Inline: every successful call's response goes through it. */
    static const char head[] = RL_HEAD "\"id\":";
    static const char middle[] = ",\"result\":";
    parts[0] = (struct iovec){(void *)head, sizeof head - 1};
    parts[1] = (struct iovec){(void *)id->start, id->length};
    parts[2] = (struct iovec){(void *)middle, sizeof middle - 1};
    parts[3] = (struct iovec){(void *)result, result_length};
    parts[4] = (struct iovec){"}", 1};
    return RL_RESULT_PARTS;
}

/*
 * Appends an error response (no newline) to out. id NULL means "id": null; message is UTF-8
 * (copied, escaped); data is raw JSON text or NULL for none. Returns 0 or -1 (memory).
 */
int rl_append_error(buffer *out, const js_span *id, int64_t code, const char *message,
                    const char *data, size_t data_length);

/*
 * Appends a notification (no newline) to out: method (method_length bytes of UTF-8, escaped),
 * and params (valid JSON text, put on one line) unless params is NULL. Returns 0 or -1 (memory).
 */
int rl_append_notification(buffer *out, const char *method, size_t method_length,
                           const char *params, size_t params_length);

/*
 * Appends a notifications/progress line (no newline) to out: token (raw JSON, a string or a
 * number), done, total when it is finite and not negative, message (UTF-8, or NULL). Numbers that
 * are whole print without a fraction. Returns 0, or -1 (memory, or done not finite).
 */
int rl_append_progress(buffer *out, const char *token, size_t token_length, double done,
                       double total, const char *message);

/*
 * The -32800 response of a call that a stop ended before it ran (data.detail says so), for id
 * (id_length bytes of raw JSON), as parts of static text around the borrowed id: nothing is
 * allocated, which makes it async-signal-safe. Returns how many parts (RL_NEVER_RAN_PARTS).
 */
int rl_never_ran_parts(struct iovec parts[RL_NEVER_RAN_PARTS], const char *id, size_t id_length);

#endif
