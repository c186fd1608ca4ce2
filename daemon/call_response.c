/* SPDX-License-Identifier: MIT */
/*
 * The response of a call: its result, or the error its status and recorded failure make
 * (code, message and data), or an MCP tool result; alone, or into its batch.
 */
#include "call_internal.h"

#include "buffer.h"
#include "envelope.h"
#include "log.h"
#include "mcp.h"
#include "rpc_error.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Sends one response line, alone or into its batch. */
static int respond(call_table *table, call_batch *batch, uint64_t ticket, const struct iovec *parts,
                   int part_count)
{
    if (batch)
        return call_batch_append(batch, parts, part_count);
    return out_write_ticket(table->out, ticket, parts, part_count);
}

int call_respond_result(call_table *table, call_batch *batch, uint64_t ticket, const js_span *id,
                        const char *result, size_t result_length)
{
    struct iovec parts[] = {
        {"{\"jsonrpc\":\"2.0\",\"id\":", 22},
        {(void *)id->start, id->length},
        {",\"result\":", 10},
        {(void *)result, result_length},
        {"}", 1},
    };
    return respond(table, batch, ticket, parts, 5);
}

int call_respond_error(call_table *table, call_batch *batch, uint64_t ticket, const js_span *id,
                       int64_t code, const char *message, const char *data, size_t data_length)
{
    buffer line = BUFFER_INIT;
    if (!message)
        message = rpcerr_standard_message(code);
    int status =
        env_append_error(&line, id, code, message ? message : "Server error", data, data_length);
    if (status == 0) {
        struct iovec part = {line.data, line.length};
        status = respond(table, batch, ticket, &part, 1);
    } else {
        out_ticket_drop(table->out, ticket);
    }
    buf_free(&line);
    return status;
}

/* ---- Ending a call -------------------------------------------------------------------- */

/*
 * The name of a handler's status in the ABI minor its plugin was built against: NULL for a
 * status that minor did not have (RPCD_DEFERRED before 1.1), which is then an unknown status,
 * as it was when the plugin was built.
 */
static const char *status_name(const call_slot *slot, int status)
{
    if (status == RPCD_DEFERRED && slot->method->abi_minor < 1)
        return NULL;
    return rpcerr_status_name(status);
}

/* error.data for an error that came from a plugin's status. */
static int append_plugin_error_data(buffer *data, const call_slot *slot, int status,
                                    const char *detail)
{
    const char *name = status_name(slot, status);
    /* A failure rpcd recorded itself (an isolated plugin's host that died) names what happened. */
    if (slot->exception[0] && slot->failure_status == status)
        name = slot->exception;
    int failed = buf_append_string(data, "{\"exception\":");
    failed |= name ? buf_append_json_string(data, name, strlen(name))
                   : buf_append_string(data, "\"unknown status\"");
    if (!name)
        failed |= buf_printf(data, ",\"status\":%d", status);
    failed |= buf_append_string(data, ",\"plugin\":");
    failed |=
        buf_append_json_string(data, slot->method->owner_name, strlen(slot->method->owner_name));
    failed |= buf_append_string(data, ",\"method\":");
    failed |= buf_append_json_string(data, slot->method->name, slot->method->name_length);
    if (detail) {
        failed |= buf_append_string(data, ",\"detail\":");
        failed |= buf_append_json_string(data, detail, strlen(detail));
    }
    if (slot->has_failure_data) {
        failed |= buf_append_string(data, ",\"data\":");
        failed |= buf_append(data, slot->failure_data.data, slot->failure_data.length);
    }
    failed |= buf_append_char(data, '}');
    return failed ? -1 : 0;
}

/* Builds the error response of a call that ended with status into slot->line. */
static int build_error(call_slot *slot, int status)
{
    const js_span id = {slot->id.data, slot->id.length};
    buffer *data = &slot->scratch;
    buf_clear(data);
    /* The recorded message and data belong to the failure the handler reports, no other. */
    bool recorded = slot->failure_status == status && status != 0;
    if (!recorded)
        slot->has_failure_data = false;
    const char *message = recorded && slot->has_failure_message ? slot->failure_message.data : NULL;

    int64_t code;
    const char *detail = message;
    char reason[96];
    if (status == RPCD_OK) {
        /* Only an invalid result ends here with success. */
        code = RPC_INTERNAL_ERROR;
        status = RPCD_ERR_INVALID_ARGUMENT;
        detail = "the handler's result is not valid JSON";
    } else if (status == RPCD_ERR_APPLICATION) {
        if (!recorded) {
            code = RPC_INTERNAL_ERROR;
            detail = "RPCD_ERR_APPLICATION returned without call_fail_code";
        } else if (!rpcerr_code_allowed_for_plugin(slot->failure_code)) {
            code = RPC_INTERNAL_ERROR;
            snprintf(reason, sizeof reason, "error code %" PRId64 " is reserved",
                     slot->failure_code);
            detail = reason;
        } else {
            /* The plugin's own error: its code, message and data, unchanged. */
            return env_append_error(&slot->line, &id, slot->failure_code, message,
                                    slot->has_failure_data ? slot->failure_data.data : NULL,
                                    slot->failure_data.length);
        }
    } else {
        code = rpcerr_code_for_status(status, 0);
    }
    if (append_plugin_error_data(data, slot, status, detail) != 0)
        return -1;
    return env_append_error(&slot->line, &id, code, rpcerr_standard_message(code), data->data,
                            data->length);
}

static void log_failure(const call_slot *slot, int status)
{
    if (log_get_level() < LOG_DEBUG)
        return;
    const char *name = status_name(slot, status);
    reg_shown shown;
    reg_show(slot->method, &shown);
    log_message(LOG_DEBUG, "%s: %s failed with %s (%d)%s", shown.plugin, shown.method,
                name ? name : "an unknown status", status,
                slot->is_request ? "" : " in a notification");
}

/* The text of a call's result: its own copy, its params (an echo's), or null. */
static js_span result_text(const call_slot *slot)
{
    if (!slot->has_result)
        return (js_span){"null", 4};
    if (slot->result_is_params)
        return (js_span){slot->params, slot->params_length};
    return (js_span){slot->result.data, slot->result.length};
}

/*
 * The response of an MCP tools/call: a handler's failure is a tool error the model can read
 * (isError), not a JSON-RPC error; only a cancelled call is answered as one.
 */
static void write_tool_result(call_slot *slot, int status, bool failed)
{
    const js_span id = {slot->id.data, slot->id.length};
    buffer *result = &slot->line;
    buf_clear(result);
    int written;
    if (!failed) {
        js_span text = result_text(slot);
        written = mcp_append_tool_result(result, text.start, text.length);
    } else {
        /* "Invalid params: need two numbers", or the plugin's own message for its own code. */
        bool recorded = slot->failure_status == status && status != RPCD_OK;
        const char *detail =
            recorded && slot->has_failure_message ? slot->failure_message.data : NULL;
        if (status == RPCD_OK)
            detail = "the handler's result is not valid JSON";
        int64_t code = status == RPCD_OK ? RPC_INTERNAL_ERROR
                                         : rpcerr_code_for_status(status, slot->failure_code);
        const char *standard = rpcerr_standard_message(code);
        char text[512];
        if (status == RPCD_ERR_APPLICATION && detail)
            snprintf(text, sizeof text, "%s (error %" PRId64 ")", detail, slot->failure_code);
        else if (detail)
            snprintf(text, sizeof text, "%s: %s", standard ? standard : "Error", detail);
        else
            snprintf(text, sizeof text, "%s (%s, in %s)", standard ? standard : "Error",
                     status_name(slot, status) ? status_name(slot, status) : "unknown status",
                     slot->method->name);
        written = mcp_append_tool_error(result, text, strlen(text));
    }
    if (written == 0)
        call_respond_result(slot->table, slot->batch, slot->ticket, &id, result->data,
                            result->length);
    else
        call_respond_error(slot->table, slot->batch, slot->ticket, &id, RPC_INTERNAL_ERROR, NULL,
                           NULL, 0);
}

/* Writes the response of an ended call (nothing for notifications and silent cancels). */
void call_write_response(call_slot *slot, int status, bool silent)
{
    if (status == RPCD_OK && slot->result_invalid) {
        reg_shown shown;
        reg_show(slot->method, &shown);
        log_message(LOG_WARNING, "%s: %s gave a result that is not valid JSON", shown.plugin,
                    shown.method);
    }
    bool failed = status != RPCD_OK || slot->result_invalid;
    if (failed)
        log_failure(slot, status);
    if (!slot->is_request || silent) {
        out_ticket_drop(slot->table->out, slot->ticket);
        return;
    }
    const js_span id = {slot->id.data, slot->id.length};
    if (slot->mcp_tool && status != RPCD_ERR_CANCELLED) {
        write_tool_result(slot, status, failed);
        return;
    }
    if (!failed) {
        call_respond_result(slot->table, slot->batch, slot->ticket, &id, result_text(slot).start,
                            result_text(slot).length);
        return;
    }
    buf_clear(&slot->line);
    if (build_error(slot, status) == 0) {
        struct iovec part = {slot->line.data, slot->line.length};
        respond(slot->table, slot->batch, slot->ticket, &part, 1);
    } else {
        call_respond_error(slot->table, slot->batch, slot->ticket, &id, RPC_INTERNAL_ERROR, NULL,
                           NULL, 0);
    }
}
