/* SPDX-License-Identifier: MIT */
/*
 * The JSON-RPC 2.0 envelope rules: what a message is (request, notification, response or
 * invalid) judged from its members alone. The lines rpcd writes back are shaped in
 * response_line.c.
 */
#ifndef RPCD_ENVELOPE_H
#define RPCD_ENVELOPE_H

#include "base/buffer.h"
#include "json/json_scan.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum env_kind {
    ENV_REQUEST,      /* has an id: gets exactly one response */
    ENV_NOTIFICATION, /* no id: never answered */
    ENV_RESPONSE,     /* a response object sent to us: ignored */
    ENV_INVALID,      /* answered with -32600 */
} env_kind;

/* One message; every span is borrowed from the validated text it was parsed from. */
typedef struct env_message {
    env_kind kind;
    bool has_id; /* id holds a valid id (string, number or null), echoed verbatim */
    js_span id;
    js_span method; /* the method string, quotes included */
    bool has_params;
    js_span params;      /* an array or object */
    const char *problem; /* why the message is invalid, for the log */
} env_message;

/* Classifies one validated JSON value (a batch element or a whole line). Never fails. */
void env_parse(js_span value, env_message *out);

/* The same for an object whose members the validator already listed (js_validate_indexed). */
void env_parse_members(const js_child *members, size_t count, env_message *out);

/*
 * Finds params._meta.progressToken (a string or a number) in validated params. Returns true and
 * its span, or false, also when "_meta" or its "progressToken" appears twice. Only looked for
 * when a handler reports progress: most calls never do, and large params are then never walked
 * twice.
 */
bool env_find_progress_token(js_span params, js_span *token);

/* True when a validated "_meta" value is an object that holds "progressToken" twice. */
bool env_meta_has_duplicate(js_span meta);

/*
 * Appends an error response (no newline) to out, as rl_append_error does. id NULL means "id": null;
 * message is UTF-8 (copied, escaped); data is raw JSON text or NULL for none. Returns 0 or -1
 * (memory).
 */
int env_append_error(buffer *out, const js_span *id, int64_t code, const char *message,
                     const char *data, size_t data_length);

#endif
