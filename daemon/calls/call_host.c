/* SPDX-License-Identifier: MIT */
/*
 * The host functions a plugin calls on its call's context: result, failure, notifications,
 * progress, cancellation, deferred completion. Each finds its slot through the handle, under the
 * slot's lock, so they are safe from any thread and harmless once the call has ended.
 */
#include "calls/call_internal.h"
#include "base/lock.h"

#include "wire/envelope.h"
#include "base/log.h"
#include "methods/plugin_contract.h"
#include "wire/response_line.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The slot of a live call that has not been answered at its deadline, locked; NULL otherwise.
 * What would reach the client (a result, a failure, a notification, progress) finds the call
 * ended once it has been answered.
 */
static call_slot *lock_unanswered(rpcd_call *call)
{
    call_slot *slot = slot_lock_live(call);
    if (slot && slot->answered) {
        lock_release(&slot->lock);
        return NULL;
    }
    return slot;
}

/*
 * Appends validated JSON text from a plugin to buf, on one line: pretty-printed JSON must not
 * split the message it goes into. Every text a plugin hands over goes through here.
 */
static int append_json_line(buffer *buf, const char *text, size_t length)
{
    size_t start = buf->length;
    if (buf_append(buf, text, length) != 0)
        return -1;
    buf->length = start + js_drop_line_breaks(buf->data + start, length);
    return 0;
}

/* Records a failure; called with the slot locked. */
static int record_failure(call_slot *slot, int status, int64_t code, const char *message,
                          const char *data, size_t data_length)
{
    if (contract_check_failure(message, status == RPCD_ERR_APPLICATION, data, data_length,
                               slot->table->limits.max_depth) != RPCD_OK)
        return RPCD_ERR_INVALID_ARGUMENT;
    buf_clear(&slot->failure_message);
    buf_clear(&slot->failure_data);
    slot->has_failure_message = message != NULL;
    slot->has_failure_data = data != NULL;
    /* Kept with its NUL: build_error reads it as a C string. */
    if ((message && buf_append(&slot->failure_message, message, strlen(message) + 1) != 0) ||
        (data && append_json_line(&slot->failure_data, data, data_length) != 0)) {
        slot->has_failure_message = slot->has_failure_data = false;
        return RPCD_ERR_NO_MEMORY;
    }
    slot->failure_status = status;
    slot->failure_code = code;
    slot->exception[0] = '\0';
    return status;
}

/*
 * Refuses a result that failed a check (reason says which): the call fails with -32603 whatever
 * its handler returns, with the reason as error.data.detail, unless a later result passes.
 * Called with the slot locked.
 */
static int refuse_result(call_slot *slot, const char *reason)
{
    reg_shown shown;
    reg_show(slot->method, &shown);
    log_message(LOG_WARNING, "%s: %s gave a result rpcd cannot send: %s", shown.plugin,
                shown.method, reason);
    slot->has_result = slot->result_complete = false;
    slot->result_refused = true;
    slot->result_invalid = false;
    record_failure(slot, RPCD_ERR_INTERNAL, 0, reason, NULL, 0);
    return RPCD_ERR_INVALID_ARGUMENT;
}

/* Keeps a checked result (complete: a whole tool result) in the slot. Slot locked. */
static int keep_result(call_slot *slot, const char *json, size_t json_length, bool complete)
{
    buf_clear(&slot->result);
    slot->result_is_params = false;
    slot->result_invalid = slot->result_refused = false;
    if (append_json_line(&slot->result, json, json_length) != 0) {
        slot->has_result = slot->result_complete = false;
        return RPCD_ERR_NO_MEMORY;
    }
    slot->has_result = true;
    slot->result_complete = complete;
    return RPCD_OK;
}

static int host_call_result(rpcd_call *call, const char *json, size_t json_length)
{
    call_slot *slot = lock_unanswered(call);
    if (!slot)
        return RPCD_ERR_STALE;
    /* Handing back the params, as an echo does, needs no second check: they were validated,
     * and are one line but for a raw CR the client may have put between tokens. */
    bool is_params = json && json == slot->params && json_length == slot->params_length &&
                     !memchr(json, '\r', json_length);
    char reason[256];
    contract_result_fault fault;
    int status = contract_check_result(json, json_length, slot->table->limits.max_depth, is_params,
                                       slot->method->output, &fault, reason, sizeof reason);
    if (fault == CONTRACT_RESULT_NOT_JSON) {
        slot->result_invalid = true;
        slot->has_result = slot->result_complete = slot->result_refused = false;
    } else if (fault == CONTRACT_RESULT_OFF_SCHEMA) {
        status = refuse_result(slot, reason);
    } else if (is_params) {
        /* The params live in the slot until the call ends: the response takes them from there. */
        slot->has_result = slot->result_is_params = true;
        slot->result_invalid = slot->result_complete = slot->result_refused = false;
    } else {
        status = keep_result(slot, json, json_length, false);
    }
    lock_release(&slot->lock);
    return status;
}

static int host_call_tool_result(rpcd_call *call, const char *json, size_t json_length)
{
    call_slot *slot = lock_unanswered(call);
    if (!slot)
        return RPCD_ERR_STALE;
    char reason[256];
    int status = contract_check_tool_result(json, json_length, slot->table->limits.max_depth,
                                            slot->method->output, reason, sizeof reason);
    if (status != RPCD_OK)
        status = refuse_result(slot, reason);
    else
        status = keep_result(slot, json, json_length, true);
    lock_release(&slot->lock);
    return status;
}

int call_find_meta(const call_slot *slot, const char *name, js_span *value)
{
    js_span params = {slot->params, slot->params_length}, meta;
    if (slot->has_progress_params)
        params = (js_span){slot->progress_params.data, slot->progress_params.length};
    if (params.length == 0 || js_kind_of(params) != JS_OBJECT)
        return 0;
    size_t count = js_object_get(params, "_meta", 5, &meta);
    if (count != 1 || js_kind_of(meta) != JS_OBJECT)
        return count > 1 ? -1 : 0;
    if (!name) {
        *value = meta;
        return 1;
    }
    count = js_object_get_decoded(meta, name, strlen(name), value);
    return count > 1 ? -1 : (int)count;
}

static int host_call_meta(rpcd_call *call, const char *name, char *out, size_t out_size,
                          size_t *length)
{
    if (contract_begin_meta(name, out, out_size, length) != RPCD_OK)
        return RPCD_ERR_INVALID_ARGUMENT;
    call_slot *slot = slot_lock_live(call);
    if (!slot)
        return RPCD_ERR_STALE;
    js_span value = {NULL, 0};
    int found = call_find_meta(slot, name, &value);
    int status = RPCD_OK;
    if (found < 0) {
        status = RPCD_ERR_INVALID_PARAMS;
    } else if (found > 0) {
        /* On one line, as everything rpcd hands over is: a client may break lines in _meta. */
        buf_clear(&slot->scratch);
        if (append_json_line(&slot->scratch, value.start, value.length) != 0)
            status = RPCD_ERR_NO_MEMORY;
        else
            status = contract_answer_meta(slot->scratch.data, slot->scratch.length, out, out_size,
                                          length);
    }
    lock_release(&slot->lock);
    return status;
}

static int host_call_fail(rpcd_call *call, int status, const char *message, const char *data,
                          size_t data_length)
{
    if (contract_check_fail_status(status) != RPCD_OK)
        return RPCD_ERR_INVALID_ARGUMENT;
    call_slot *slot = lock_unanswered(call);
    if (!slot)
        return RPCD_ERR_STALE;
    int result = record_failure(slot, status, 0, message, data, data_length);
    lock_release(&slot->lock);
    return result;
}

int call_record_exception(call_slot *slot, const char *exception, const char *message,
                          const char *data, size_t data_length)
{
    int result = record_failure(slot, RPCD_ERR_INTERNAL, 0, message, data, data_length);
    if (result == RPCD_ERR_INTERNAL)
        snprintf(slot->exception, sizeof slot->exception, "%s", exception);
    return result;
}

int call_fail_exception(rpcd_call *call, const char *exception, const char *message,
                        const char *data, size_t data_length)
{
    call_slot *slot = lock_unanswered(call);
    if (!slot)
        return RPCD_ERR_STALE;
    int result = call_record_exception(slot, exception, message, data, data_length);
    lock_release(&slot->lock);
    return result;
}

static int host_call_fail_code(rpcd_call *call, int64_t code, const char *message, const char *data,
                               size_t data_length)
{
    if (!message)
        return RPCD_ERR_INVALID_ARGUMENT; /* checked again with the data (record_failure) */
    call_slot *slot = lock_unanswered(call);
    if (!slot)
        return RPCD_ERR_STALE;
    int result = record_failure(slot, RPCD_ERR_APPLICATION, code, message, data, data_length);
    lock_release(&slot->lock);
    return result;
}

/*
 * Writes the notification line built in slot->scratch (built: what building it returned); called
 * with the slot locked, which keeps it before the response.
 */
static int send_notification(call_slot *slot, int built)
{
    if (built != 0)
        return RPCD_ERR_NO_MEMORY;
    struct iovec part = {slot->scratch.data, slot->scratch.length};
    /* A client that went away is not the plugin's problem: the call just carries on. */
    out_write_line(slot->table->out, &part, 1);
    return RPCD_OK;
}

/* A warning about a notification a plugin tried to send: what it did, the name, what came of it. */
static void warn_notification(const call_slot *slot, const char *method, const char *did,
                              const char *outcome)
{
    char name[128];
    reg_printable_name(method, strlen(method), name, sizeof name);
    reg_shown shown;
    reg_show(slot->method, &shown);
    log_message(LOG_WARNING, "%s: %s %s \"%s\"%s", shown.plugin, shown.method, did, name, outcome);
}

static int host_call_notify(rpcd_call *call, const char *method, const char *params,
                            size_t params_length)
{
    if (!method || !js_utf8_valid(method, strlen(method)))
        return RPCD_ERR_INVALID_ARGUMENT;
    call_slot *slot = lock_unanswered(call);
    if (!slot)
        return RPCD_ERR_STALE;
    contract_refusal refusal;
    int status = contract_check_notify(method, params, params_length, slot->table->limits.max_depth,
                                       &refusal);
    if (status != RPCD_OK) {
        if (refusal.did)
            warn_notification(slot, method, refusal.did, refusal.outcome);
    } else {
        buf_clear(&slot->scratch);
        status =
            send_notification(slot, rl_append_notification(&slot->scratch, method, strlen(method),
                                                           params, params_length));
    }
    lock_release(&slot->lock);
    return status;
}

static int host_call_progress(rpcd_call *call, double done, double total, const char *message)
{
    if (contract_check_progress(done, total, message) != RPCD_OK)
        return RPCD_ERR_INVALID_ARGUMENT;
    call_slot *slot = lock_unanswered(call);
    if (!slot)
        return RPCD_ERR_STALE;
    int status = RPCD_OK;
    /* Kept for the control socket's list of calls, token or not. */
    slot->has_progress = true;
    slot->progress_done = done;
    slot->progress_total = total;
    if (slot->token_state == TOKEN_UNKNOWN) {
        js_span params = {slot->params, slot->params_length}, token;
        if (slot->has_progress_params)
            params = (js_span){slot->progress_params.data, slot->progress_params.length};
        slot->token_state = TOKEN_ABSENT;
        if (env_find_progress_token(params, &token) &&
            buf_append(&slot->progress_token, token.start, token.length) == 0)
            slot->token_state = TOKEN_PRESENT;
    }
    if (slot->token_state == TOKEN_PRESENT) {
        buf_clear(&slot->scratch);
        status = send_notification(
            slot, rl_append_progress(&slot->scratch, slot->progress_token.data,
                                     slot->progress_token.length, done, total, message));
    }
    lock_release(&slot->lock);
    return status;
}

static int host_call_is_cancelled(rpcd_call *call)
{
    call_slot *slot = slot_lock_live(call);
    if (!slot)
        return 1;
    int cancelled = atomic_load(&slot->cancelled) ? 1 : 0;
    lock_release(&slot->lock);
    return cancelled;
}

static const char *host_call_method(rpcd_call *call)
{
    call_slot *slot = slot_lock_live(call);
    if (!slot)
        return NULL;
    const char *name = slot->method->name; /* alive while the call holds its generation */
    lock_release(&slot->lock);
    return name;
}

/* call_complete without its check of the status: any status ends the call, 1 included. */
static int complete(rpcd_call *call, int status)
{
    call_slot *slot = slot_lock_live(call);
    if (!slot)
        return RPCD_ERR_STALE;
    if (slot->completed_early || (slot->state != SLOT_RUNNING && slot->state != SLOT_DEFERRED)) {
        lock_release(&slot->lock);
        return RPCD_ERR_UNSUPPORTED; /* another call_complete came first */
    }
    if (slot->state == SLOT_RUNNING) {
        /* The handler has not returned RPCD_DEFERRED yet: it ends the call when it does. */
        slot->completed_early = true;
        slot->early_status = status;
        lock_release(&slot->lock);
        return RPCD_OK;
    }
    /* Checked and ended under one hold of the lock: no second completion can slip between. */
    call_finish_locked(slot, status);
    return RPCD_OK;
}

static int host_call_complete(rpcd_call *call, int status)
{
    int checked = contract_check_complete(status);
    return checked != RPCD_OK ? checked : complete(call, status);
}

int call_complete_with_status(rpcd_call *call, int status)
{
    return complete(call, status);
}

void call_fill_host_api(rpcd_host_api *api)
{
    api->call_result = host_call_result;
    api->call_fail = host_call_fail;
    api->call_fail_code = host_call_fail_code;
    api->call_notify = host_call_notify;
    api->call_progress = host_call_progress;
    api->call_is_cancelled = host_call_is_cancelled;
    api->call_method = host_call_method;
    api->call_complete = host_call_complete;
    api->call_tool_result = host_call_tool_result;
    api->call_meta = host_call_meta;
    call_fill_input_api(api);
}
