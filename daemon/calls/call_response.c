/* SPDX-License-Identifier: MIT */
/*
 * The response of a call: its result, or the error its status and recorded failure make
 * (code, message and data), or a result made by the call's shaper; alone, or into its batch.
 */
#include "calls/call_internal.h"

#include "base/buffer.h"
#include "base/log.h"
#include "wire/response_line.h"
#include "wire/rpc_error.h"

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

/* Sends one response line of a call: to its sink when it has one, else as respond. */
static int slot_respond(call_slot *slot, const struct iovec *parts, int part_count)
{
    if (!slot->sink)
        return respond(slot->table, slot->batch, slot->ticket, parts, part_count);
    slot->sink_told = true;
    slot->sink->deliver(slot->sink_context, parts, part_count);
    return 0;
}

/* A call's result response (call_respond_result for its slot). */
static int slot_result(call_slot *slot, const char *result, size_t result_length)
{
    const js_span id = {slot->id.data, slot->id.length};
    struct iovec parts[RL_RESULT_PARTS];
    int count = rl_result_parts(parts, &id, result, result_length);
    return slot_respond(slot, parts, count);
}

/* A call's error response with the specification's message and no data. */
static int slot_error(call_slot *slot, int64_t code)
{
    const js_span id = {slot->id.data, slot->id.length};
    buffer line = BUFFER_INIT;
    int status = rl_append_error(&line, &id, code, rpcerr_message(code), NULL, 0);
    if (status == 0) {
        struct iovec part = {line.data, line.length};
        status = slot_respond(slot, &part, 1);
    } else {
        out_ticket_drop(slot->table->out, slot->ticket);
    }
    buf_free(&line);
    return status;
}

int call_respond_result(call_table *table, call_batch *batch, uint64_t ticket, const js_span *id,
                        const char *result, size_t result_length)
{
    struct iovec parts[RL_RESULT_PARTS];
    int count = rl_result_parts(parts, id, result, result_length);
    return respond(table, batch, ticket, parts, count);
}

int call_respond_error(call_table *table, call_batch *batch, uint64_t ticket, const js_span *id,
                       int64_t code, const char *message, const char *data, size_t data_length)
{
    buffer line = BUFFER_INIT;
    int status = rl_append_error(&line, id, code, message ? message : rpcerr_message(code), data,
                                 data_length);
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

/* The name of a handler's status in the ABI minor its plugin was built against, or NULL. */
static const char *status_name(const call_slot *slot, int status)
{
    return rpcerr_status_name_in(status, slot->method->abi_minor);
}

/* What the error decisions need of a call that ended with status. */
static void failure_of(const call_slot *slot, int status, rpcerr_failure *out)
{
    /* The recorded message and data belong to the failure the handler reports, no other. */
    bool recorded = slot->failure_status == status && status != RPCD_OK;
    *out = (rpcerr_failure){
        .status = status,
        .abi_minor = slot->method->abi_minor,
        .recorded = recorded,
        .code = slot->failure_code,
        .message = recorded && slot->has_failure_message ? slot->failure_message.data : NULL,
        .data = recorded && slot->has_failure_data ? slot->failure_data.data : NULL,
        .data_length = slot->failure_data.length,
        .plugin = slot->method->owner_name,
        .method = slot->method->name,
        .method_length = slot->method->name_length,
        /* A failure rpcd recorded itself (an isolated plugin's host that died) names what
         * happened. */
        .exception = recorded && slot->exception[0] ? slot->exception : NULL,
    };
}

/* Builds the error response of a call that ended with status into slot->line, its code into
 * *code. */
static int build_error(call_slot *slot, int status, long long *code)
{
    const js_span id = {slot->id.data, slot->id.length};
    rpcerr_failure failure;
    failure_of(slot, status, &failure);
    rpcerr_error error;
    if (rpcerr_for_failure(&failure, &slot->scratch, &error) != 0)
        return -1;
    *code = error.code;
    return rl_append_error(&slot->line, &id, error.code, error.message, error.data,
                           error.data_length);
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
 * The response of a call whose result is shaped (call_shaper): a handler's failure is told in
 * its result, not as a JSON-RPC error; only a cancelled call is answered as one. Returns 0, or
 * -1 when the shaper failed and -32603 went instead.
 */
static int write_shaped_result(call_slot *slot, int status, bool failed)
{
    buffer *result = &slot->line;
    buf_clear(result);
    int written;
    if (!failed) {
        js_span text = result_text(slot);
        written = slot->shaper->result_of
                      ? slot->shaper->result_of(result, slot->method,
                                                (js_span){slot->params, slot->params_length},
                                                text.start, text.length)
                      : slot->shaper->result(result, text.start, text.length);
    } else {
        rpcerr_failure failure;
        failure_of(slot, status, &failure);
        char text[512];
        rpcerr_failure_text(&failure, text, sizeof text);
        written = slot->shaper->failure(result, text, strlen(text));
    }
    if (written == 0)
        slot_result(slot, result->data, result->length);
    else
        slot_error(slot, RPC_INTERNAL_ERROR);
    return written == 0 ? 0 : -1;
}

/* A complete tool result as the shaper's era sends it. Returns 0, or -1 when -32603 went instead.
 */
static int write_finished_complete(call_slot *slot)
{
    js_span text = result_text(slot);
    buf_clear(&slot->line);
    if (slot->shaper->complete(&slot->line, text.start, text.length) == 0) {
        slot_result(slot, slot->line.data, slot->line.length);
        return 0;
    }
    slot_error(slot, RPC_INTERNAL_ERROR);
    return -1;
}

/*
 * (1.6) A failure with the plugin's own code in -32099..-32000, where MCP puts the errors of its
 * protocol (a client capability missing, -32021), is that JSON-RPC error even where a failure
 * is otherwise a result (a tool's, in tools/call). A plugin built earlier gets the tool error it
 * was built with.
 */
static bool is_protocol_error(const call_slot *slot, int status)
{
    return status == RPCD_ERR_APPLICATION && slot->failure_status == RPCD_ERR_APPLICATION &&
           slot->method->abi_minor >= 6 && slot->failure_code >= RPC_SERVER_ERROR_LOWEST &&
           slot->failure_code <= RPC_SERVER_ERROR_HIGHEST;
}

/* The response of a round that asks the client: its questions as the asker makes them, or none
 * now when the asker asks with requests of its own and answers later. */
static void write_asking(call_slot *slot, call_outcome *outcome)
{
    *outcome = (call_outcome){CALL_OUTCOME_ASKED, 0, 0};
    if (!slot->is_request) {
        out_ticket_drop(slot->table->out, slot->ticket);
        return;
    }
    int asked = call_write_asking(slot);
    if (asked == 0) {
        outcome->bytes = slot->line.length;
        slot_result(slot, slot->line.data, slot->line.length);
        return;
    }
    if (asked == CALL_ASK_DEFERRED) {
        out_ticket_drop(slot->table->out, slot->ticket);
        return;
    }
    int64_t code = asked == CALL_ASK_CANCELLED ? RPC_REQUEST_CANCELLED : RPC_INTERNAL_ERROR;
    *outcome = (call_outcome){
        asked == CALL_ASK_CANCELLED ? CALL_OUTCOME_CANCELLED : CALL_OUTCOME_ERROR, code, 0};
    slot_error(slot, code);
}

/*
 * A result over the call's max_result_bytes fails the call naming the cap: in tools/call a tool
 * error (the tool ran; the model can ask for less), else -32603. Returns the status to answer.
 */
static int cap_result(call_slot *slot, int status)
{
    if (status != RPCD_OK || slot->max_result_bytes == 0 || slot->result_invalid ||
        result_text(slot).length <= slot->max_result_bytes)
        return status;
    char detail[160], data[64];
    snprintf(detail, sizeof detail, "the result of %zu bytes is over max_result_bytes (%zu)",
             result_text(slot).length, slot->max_result_bytes);
    snprintf(data, sizeof data, "{\"max_result_bytes\":%zu}", slot->max_result_bytes);
    slot->result_capped = true;
    slot->result_complete = false; /* a complete tool result is refused as a whole too */
    return call_record_exception(slot, "result too large", detail, data, strlen(data));
}

/* Writes the response of an ended call (nothing for notifications and silent cancels). */
void call_write_response(call_slot *slot, int status, bool silent, call_outcome *outcome)
{
    status = cap_result(slot, status);
    if (status == RPCD_OK && slot->result_invalid) {
        reg_shown shown;
        reg_show(slot->method, &shown);
        log_message(LOG_WARNING, "%s: %s gave a result that is not valid JSON", shown.plugin,
                    shown.method);
    }
    /* A result that failed its checks (refuse_result) is the server's fault, not the tool's:
     * a JSON-RPC error in tools/call too, with the reason recorded as the failure, whatever
     * the handler returned (it may pass on the status the refusal gave it). */
    bool refused = slot->result_refused && status != RPCD_ERR_CANCELLED;
    if (refused)
        status = RPCD_ERR_INTERNAL;
    /* A call the client cancelled asks nothing more: it is answered as cancelled. */
    if (call_asks(slot, status) && atomic_load(&slot->cancelled))
        status = RPCD_ERR_CANCELLED;
    if (!silent && call_asks(slot, status)) {
        write_asking(slot, outcome);
        return;
    }
    bool failed = status != RPCD_OK || slot->result_invalid;
    if (failed)
        log_failure(slot, status);
    *outcome = (call_outcome){failed ? CALL_OUTCOME_ERROR : CALL_OUTCOME_OK, 0, 0};
    if (status == RPCD_ERR_CANCELLED || silent)
        *outcome = (call_outcome){CALL_OUTCOME_CANCELLED, silent ? 0 : RPC_REQUEST_CANCELLED, 0};
    if (!slot->is_request || silent) {
        out_ticket_drop(slot->table->out, slot->ticket);
        return;
    }
    /* A complete tool result is the result as it stands, shaped or not. */
    bool complete = !failed && slot->result_complete;
    if (slot->shaper && status != RPCD_ERR_CANCELLED && !refused && !complete &&
        (!failed || (slot->shaper->failure && !is_protocol_error(slot, status)))) {
        if (failed)
            outcome->kind = CALL_OUTCOME_TOOL_ERROR;
        if (write_shaped_result(slot, status, failed) != 0)
            *outcome = (call_outcome){CALL_OUTCOME_ERROR, RPC_INTERNAL_ERROR, 0};
        outcome->bytes = slot->line.length;
        return;
    }
    if (complete && slot->shaper && slot->shaper->complete) {
        if (write_finished_complete(slot) != 0)
            *outcome = (call_outcome){CALL_OUTCOME_ERROR, RPC_INTERNAL_ERROR, 0};
        outcome->bytes = slot->line.length;
        return;
    }
    if (!failed) {
        slot_result(slot, result_text(slot).start, result_text(slot).length);
        outcome->bytes = result_text(slot).length;
        return;
    }
    buf_clear(&slot->line);
    if (build_error(slot, status, &outcome->code) == 0) {
        outcome->bytes = slot->line.length;
        struct iovec part = {slot->line.data, slot->line.length};
        slot_respond(slot, &part, 1);
    } else {
        outcome->code = RPC_INTERNAL_ERROR;
        slot_error(slot, RPC_INTERNAL_ERROR);
    }
}
