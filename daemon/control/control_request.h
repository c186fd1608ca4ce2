/* SPDX-License-Identifier: MIT */
/*
 * The control socket's requests: a line of JSON-RPC 2.0 read into the method it names, its id
 * and its params, and the error lines that refuse one. What a peer sends is untrusted: every
 * line is validated (bounded depth) before anything of it is used.
 */
#ifndef RPCD_CONTROL_REQUEST_H
#define RPCD_CONTROL_REQUEST_H

#include "base/buffer.h"
#include "json/json_scan.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest line a peer may send; a longer one is refused and the peer dropped. */
enum { CTL_MAX_LINE_BYTES = 64 * 1024, CTL_MAX_DEPTH = 16 };

typedef enum ctl_method {
    CTL_STATUS,
    CTL_CALLS,
    CTL_RELOAD,
    CTL_METRICS,
    CTL_CANCEL,
    CTL_METHOD_COUNT,
} ctl_method;

/* A request read from a line; spans borrowed from the line. */
typedef struct ctl_request {
    ctl_method method;
    bool has_id;    /* false: a notification, answered with nothing */
    js_span id;     /* the id's JSON text, when has_id */
    js_span cancel; /* cancel: params.id's JSON text, the id of the call to cancel */
} ctl_request;

/* A refusal: the JSON-RPC error to answer with, and the id to answer (may be absent: null). */
typedef struct ctl_refusal {
    int64_t code; /* -32700, -32600, -32601 or -32602 */
    const char *message;
    bool has_id;
    js_span id;
} ctl_refusal;

/*
 * Reads line (length bytes, no line feed) as a request. Returns 0 and *out, or -1 and *refusal
 * (static text). Thread-safe: no state.
 */
int ctl_parse_request(const char *line, size_t length, ctl_request *out, ctl_refusal *refusal);

/* The name of method ("status"...). */
const char *ctl_method_name(ctl_method method);

/* Appends the error response of refusal, with its line feed. Returns 0 or -1 (memory). */
int ctl_append_refusal(buffer *out, const ctl_refusal *refusal);

/* Appends {"jsonrpc":"2.0","id":ID,"result":RESULT} and a line feed; result is JSON text. */
int ctl_append_result(buffer *out, js_span id, const char *result, size_t length);

#endif
