/* SPDX-License-Identifier: MIT */
/*
 * Status to JSON-RPC error mapping, the names that error.data.exception reports, the error a
 * failed call is answered with, and the text of a failed tool call.
 */
#include "wire/rpc_error.h"

#include <rpcd/plugin.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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
    case RPCD_INPUT_REQUIRED: return "RPCD_INPUT_REQUIRED";
    default: return NULL;
    }
}

bool rpcerr_code_allowed_for_plugin(int64_t code)
{
    if (code < -32768 || code > RPC_SERVER_ERROR_HIGHEST)
        return true;
    return code >= RPC_SERVER_ERROR_LOWEST;
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

const char *rpcerr_message(int64_t code)
{
    const char *message = rpcerr_standard_message(code);
    if (!message && code == RPC_UNSUPPORTED_PROTOCOL_VERSION)
        message = "Unsupported protocol version";
    return message ? message : "Server error";
}

const char *rpcerr_status_name_in(int status, uint32_t abi_minor)
{
    if ((status == RPCD_DEFERRED && abi_minor < 1) ||
        (status == RPCD_INPUT_REQUIRED && abi_minor < 6))
        return NULL;
    return rpcerr_status_name(status);
}

/* What a handler that gave a result that is not JSON is told it did. */
static const char invalid_result[] = "the handler's result is not valid JSON";

/* error.data for a failure: the status as named, the plugin, the method, why, the plugin's data. */
static int append_failure_data(buffer *data, const rpcerr_failure *failure, int status,
                               const char *detail)
{
    const char *name =
        failure->exception ? failure->exception : rpcerr_status_name_in(status, failure->abi_minor);
    int failed = buf_append_string(data, "{\"exception\":");
    failed |= name ? buf_append_json_string(data, name, strlen(name))
                   : buf_append_string(data, "\"unknown status\"");
    if (!name)
        failed |= buf_printf(data, ",\"status\":%d", status);
    failed |= buf_append_string(data, ",\"plugin\":");
    failed |= buf_append_json_string(data, failure->plugin, strlen(failure->plugin));
    failed |= buf_append_string(data, ",\"method\":");
    failed |= buf_append_json_string(data, failure->method, failure->method_length);
    if (detail) {
        failed |= buf_append_string(data, ",\"detail\":");
        failed |= buf_append_json_string(data, detail, strlen(detail));
    }
    if (failure->data) {
        failed |= buf_append_string(data, ",\"data\":");
        failed |= buf_append(data, failure->data, failure->data_length);
    }
    failed |= buf_append_char(data, '}');
    return failed ? -1 : 0;
}

int rpcerr_for_failure(const rpcerr_failure *failure, buffer *scratch, rpcerr_error *out)
{
    int status = failure->status;
    int64_t code;
    const char *detail = failure->message;
    char reason[96];
    if (status == RPCD_OK) {
        /* Only an invalid result ends here with success. */
        code = RPC_INTERNAL_ERROR;
        status = RPCD_ERR_INVALID_ARGUMENT;
        detail = invalid_result;
    } else if (status == RPCD_ERR_APPLICATION) {
        if (!failure->recorded) {
            code = RPC_INTERNAL_ERROR;
            detail = "RPCD_ERR_APPLICATION returned without call_fail_code";
        } else if (!rpcerr_code_allowed_for_plugin(failure->code)) {
            code = RPC_INTERNAL_ERROR;
            snprintf(reason, sizeof reason, "error code %" PRId64 " is reserved", failure->code);
            detail = reason;
        } else {
            /* The plugin's own error: its code, message and data, unchanged. */
            *out = (rpcerr_error){failure->code, failure->message, failure->data,
                                  failure->data_length};
            return 0;
        }
    } else {
        code = rpcerr_code_for_status(status, 0);
    }
    buf_clear(scratch);
    if (append_failure_data(scratch, failure, status, detail) != 0)
        return -1;
    *out = (rpcerr_error){code, rpcerr_standard_message(code), scratch->data, scratch->length};
    return 0;
}

void rpcerr_failure_text(const rpcerr_failure *failure, char *text, size_t size)
{
    int status = failure->status;
    const char *detail = status == RPCD_OK ? invalid_result : failure->message;
    /* A code the handler did not record now belongs to no one: never another call's. */
    int64_t code = status == RPCD_OK
                       ? RPC_INTERNAL_ERROR
                       : rpcerr_code_for_status(status, failure->recorded ? failure->code : 0);
    const char *standard = rpcerr_standard_message(code);
    const char *name = rpcerr_status_name_in(status, failure->abi_minor);
    if (status == RPCD_ERR_APPLICATION && detail)
        snprintf(text, size, "%s (error %" PRId64 ")", detail, failure->code);
    else if (detail)
        snprintf(text, size, "%s: %s", standard ? standard : "Error", detail);
    else
        snprintf(text, size, "%s (%s, in %s)", standard ? standard : "Error",
                 name ? name : "unknown status", failure->method);
}

int rpcerr_arguments_data(buffer *out, const char *plugin, const char *method,
                          const schema_failure *failure)
{
    int failed = buf_append_string(out, "{\"plugin\":");
    failed |= buf_append_json_string(out, plugin, strlen(plugin));
    failed |= buf_append_string(out, ",\"method\":");
    failed |= buf_append_json_string(out, method, strlen(method));
    failed |= buf_append_string(
        out, ",\"detail\":\"the params do not fit the method's params_schema\",\"pointer\":");
    failed |= buf_append_json_string(out, failure->pointer, strlen(failure->pointer));
    failed |= buf_append_string(out, ",\"keyword\":");
    failed |= buf_append_json_string(out, failure->keyword, strlen(failure->keyword));
    failed |= buf_append_string(out, ",\"expected\":");
    failed |= buf_append_json_string(out, failure->expected, strlen(failure->expected));
    return failed | buf_append_string(out, "}");
}

void rpcerr_arguments_text(const schema_failure *failure, char *text, size_t size)
{
    snprintf(text, size,
             "Invalid arguments: at \"%s\"%s, \"%s\" expects %s. Correct the arguments and call "
             "again.",
             failure->pointer, failure->pointer[0] ? "" : " (the arguments)", failure->keyword,
             failure->expected);
}
