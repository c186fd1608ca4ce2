/* SPDX-License-Identifier: MIT */
/*
 * The one place where statuses become JSON-RPC error codes, messages and error data, and where
 * a failure becomes the text a tool result tells.
 */
#ifndef RPCD_RPC_ERROR_H
#define RPCD_RPC_ERROR_H

#include "base/buffer.h"
#include "schema/schema.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    RPC_PARSE_ERROR = -32700,
    RPC_INVALID_REQUEST = -32600,
    RPC_METHOD_NOT_FOUND = -32601,
    RPC_INVALID_PARAMS = -32602,
    RPC_INTERNAL_ERROR = -32603,
    RPC_REQUEST_CANCELLED = -32800, /* the LSP convention, outside the reserved range */

    /* JSON-RPC's server errors, where MCP defines the errors of its protocol */
    RPC_SERVER_ERROR_LOWEST = -32099,
    RPC_SERVER_ERROR_HIGHEST = -32000,

    /* MCP's, from its stateless revision (2026-07-28) on */
    RPC_MISSING_CLIENT_CAPABILITY = -32021,
    RPC_UNSUPPORTED_PROTOCOL_VERSION = -32022,

    /* rpcd's own: a call refused by a rate limit (rate_limit), data.retryAfterMs */
    RPC_RATE_LIMITED = -32029,
};

/*
 * The JSON-RPC code for a handler's status. For RPCD_ERR_APPLICATION, application_code is the
 * plugin's own code; it is kept when the plugin may send it, else the result is -32603.
 */
int64_t rpcerr_code_for_status(int status, int64_t application_code);

/* The specification's text for a standard code, or NULL for any other code. */
const char *rpcerr_standard_message(int64_t code);

/* The message of an error rpcd sends with code: the standard one, MCP's for its own codes, or
 * "Server error". */
const char *rpcerr_message(int64_t code);

/* The name of an rpcd_status ("RPCD_ERR_INTERNAL"), or NULL for a value outside the enum. */
const char *rpcerr_status_name(int status);

/*
 * The name of status in the ABI minor a plugin was built against: NULL for a status that minor
 * did not have (RPCD_DEFERRED before 1.1), which is then an unknown status, as it was when the
 * plugin was built.
 */
const char *rpcerr_status_name_in(int status, uint32_t abi_minor);

/* True when a plugin may send code as its own: outside -32768..-32000, or in -32099..-32000. */
bool rpcerr_code_allowed_for_plugin(int64_t code);

/* error.data.detail of a call that a stop ended before it ran. */
#define RPCERR_NEVER_RAN_DETAIL "rpcd stopped before the call ran"

/* How a call ended without a result, as its handler and the plugin's host calls told. Borrowed. */
typedef struct rpcerr_failure {
    int status;          /* the handler's status; RPCD_OK when its result was not valid JSON */
    uint32_t abi_minor;  /* of the plugin: which statuses it knew */
    bool recorded;       /* call_fail or call_fail_code recorded this very status */
    int64_t code;        /* the code call_fail_code last recorded (0 after call_fail) */
    const char *message; /* the recorded message (NUL-terminated) when recorded, else NULL */
    const char *data;    /* the recorded data (raw JSON) when recorded, else NULL */
    size_t data_length;
    const char *plugin; /* the method's plugin and name */
    const char *method;
    size_t method_length;
    /* When not NULL, what error.data.exception says in place of the status's name: a failure
     * rpcd recorded itself (call_fail_exception), such as an isolated plugin's host that died. */
    const char *exception;
} rpcerr_failure;

/* An error object's three members; data is raw JSON text or NULL. */
typedef struct rpcerr_error {
    int64_t code;
    const char *message;
    const char *data;
    size_t data_length;
} rpcerr_error;

/*
 * The error a failed call is answered with. A plugin's own code (call_fail_code, allowed) goes
 * out with its message and data unchanged; any other failure gets a standard code and message,
 * and data naming the status ("exception"), the plugin, the method, why ("detail") and the
 * plugin's data. The data is built in scratch, which *out then borrows, as it borrows failure.
 * Returns 0, or -1 when memory ran out.
 */
int rpcerr_for_failure(const rpcerr_failure *failure, buffer *scratch, rpcerr_error *out);

/*
 * The one-line text that tells a failure in a tool result: "Invalid params: need two numbers",
 * the plugin's message and code for its own error, or the status and method when nothing was
 * said. Written into text (size bytes, truncated, NUL-terminated).
 */
void rpcerr_failure_text(const rpcerr_failure *failure, char *text, size_t size);

/*
 * A call's params that fail its method's params_schema, answered before its handler runs: the
 * -32602 error's data, appended to out ({"plugin", "method", "detail", "pointer", "keyword",
 * "expected"}; 0 or -1), and the one-line text of the tool result that tells a model the same
 * (into text, size bytes).
 */
int rpcerr_arguments_data(buffer *out, const char *plugin, const char *method,
                          const schema_failure *failure);
void rpcerr_arguments_text(const schema_failure *failure, char *text, size_t size);

#endif
