/* SPDX-License-Identifier: MIT */
/*
 * Status to JSON-RPC error mapping, and the names that error.data.exception reports.
 */
#include "rpc_error.h"

#include <rpcd/plugin.h>

#include <stddef.h>

const char *rpcerr_status_name(int status)
{
    switch (status) {
    case RPCD_OK: return "RPCD_OK";
    case RPCD_ERR_INVALID_PARAMS: return "RPCD_ERR_INVALID_PARAMS";
    case RPCD_ERR_METHOD_NOT_FOUND: return "RPCD_ERR_METHOD_NOT_FOUND";
    case RPCD_ERR_INTERNAL: return "RPCD_ERR_INTERNAL";
    case RPCD_ERR_NO_MEMORY: return "RPCD_ERR_NO_MEMORY";
    case RPCD_ERR_CANCELLED: return "RPCD_ERR_CANCELLED";
    case RPCD_ERR_APPLICATION: return "RPCD_ERR_APPLICATION";
    case RPCD_ERR_INVALID_ARGUMENT: return "RPCD_ERR_INVALID_ARGUMENT";
    case RPCD_ERR_STALE: return "RPCD_ERR_STALE";
    case RPCD_ERR_EXISTS: return "RPCD_ERR_EXISTS";
    case RPCD_ERR_UNSUPPORTED: return "RPCD_ERR_UNSUPPORTED";
    default: return NULL;
    }
}

bool rpcerr_code_allowed_for_plugin(int64_t code)
{
    if (code < -32768 || code > -32000)
        return true;
    return code >= -32099;
}

int64_t rpcerr_code_for_status(int status, int64_t application_code)
{
    switch (status) {
    case RPCD_ERR_INVALID_PARAMS: return RPC_INVALID_PARAMS;
    case RPCD_ERR_METHOD_NOT_FOUND: return RPC_METHOD_NOT_FOUND;
    case RPCD_ERR_CANCELLED: return RPC_REQUEST_CANCELLED;
    case RPCD_ERR_APPLICATION:
        return rpcerr_code_allowed_for_plugin(application_code) ? application_code
                                                                : RPC_INTERNAL_ERROR;
    default: return RPC_INTERNAL_ERROR;
    }
}

const char *rpcerr_standard_message(int64_t code)
{
    switch (code) {
    case RPC_PARSE_ERROR: return "Parse error";
    case RPC_INVALID_REQUEST: return "Invalid Request";
    case RPC_METHOD_NOT_FOUND: return "Method not found";
    case RPC_INVALID_PARAMS: return "Invalid params";
    case RPC_INTERNAL_ERROR: return "Internal error";
    case RPC_REQUEST_CANCELLED: return "Request cancelled";
    default: return NULL;
    }
}
