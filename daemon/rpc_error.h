/* SPDX-License-Identifier: MIT */
/*
 * The one place where statuses become JSON-RPC error codes and messages.
 */
#ifndef RPCD_RPC_ERROR_H
#define RPCD_RPC_ERROR_H

#include <stdbool.h>
#include <stdint.h>

enum {
    RPC_PARSE_ERROR = -32700,
    RPC_INVALID_REQUEST = -32600,
    RPC_METHOD_NOT_FOUND = -32601,
    RPC_INVALID_PARAMS = -32602,
    RPC_INTERNAL_ERROR = -32603,
    RPC_REQUEST_CANCELLED = -32800, /* the LSP convention, outside the reserved range */
};

/*
 * The JSON-RPC code for a handler's status. For RPCD_ERR_APPLICATION, application_code is the
 * plugin's own code; it is kept when the plugin may send it, else the result is -32603.
 */
int64_t rpcerr_code_for_status(int status, int64_t application_code);

/* The specification's text for a standard code, or NULL for any other code. */
const char *rpcerr_standard_message(int64_t code);

/* The name of an rpcd_status ("RPCD_ERR_INTERNAL"), or NULL for a value outside the enum. */
const char *rpcerr_status_name(int status);

/* True when a plugin may send code as its own: outside -32768..-32000, or in -32099..-32000. */
bool rpcerr_code_allowed_for_plugin(int64_t code);

#endif
