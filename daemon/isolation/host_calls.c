/* SPDX-License-Identifier: MIT */
/*
 * The host functions a plugin calls on its call, in its host process: each one a frame to rpcd,
 * which applies it to the call there (proxy_frames.c); call_is_cancelled, call_method and
 * call_meta are answered here, from what rpcd sent with the call.
 */
#include "isolation/host_internal.h"

#include "json/json_scan.h"
#include "methods/plugin_contract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Begins a frame of kind for call, on its lane (*out). Lock held. */
static int begin(chan_kind kind, const host_call *call, buffer **out, size_t *start)
{
    *out = host_out(call);
    int failed = chan_begin(*out, kind, start);
    return failed | chan_put_u64(*out, call->id);
}

static int finish(buffer *out, size_t start, int failed)
{
    int status = chan_end(out, start, failed != 0);
    host_flush_locked();
    pthread_mutex_unlock(&host.lock);
    return status;
}

/* ---- The host functions on a call ------------------------------------------------------- */

static int host_call_result(rpcd_call *handle, const char *json, size_t json_length)
{
    host_call *call = host_lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    contract_result_fault fault;
    char reason[256];
    int status = contract_check_result(json, json_length, host.max_depth, false,
                                       call->method->output, &fault, reason, sizeof reason);
    buffer *out;
    size_t start;
    int failed = begin(CHAN_RESULT, call, &out, &start);
    /* Sent even when refused: rpcd marks the result invalid, or refuses it and says why, as
     * in-process. */
    failed |= chan_put_str(out, json ? json : "", json ? json_length : 0);
    if (finish(out, start, failed) != 0)
        return RPCD_ERR_NO_MEMORY;
    return status;
}

/*
 * Puts a message into the frame: rpcd refuses text that is not UTF-8 from a host (it would go
 * into the protocol), so the bytes of such a text that are not ASCII become '?'.
 */
static int put_message(buffer *out, const char *message, bool optional)
{
    if (!message)
        return optional ? chan_put_opt(out, NULL, 0) : -1;
    size_t length = strlen(message);
    int failed = optional ? chan_put_u8(out, 1) : 0;
    if (js_utf8_valid(message, length))
        return failed | chan_put_str(out, message, length);
    size_t start = out->length + sizeof(uint32_t);
    failed |= chan_put_str(out, message, length);
    for (size_t i = 0; failed == 0 && i < length; i++)
        if ((unsigned char)out->data[start + i] >= 0x80)
            out->data[start + i] = '?';
    return failed;
}

static int host_call_fail(rpcd_call *handle, int status, const char *message, const char *data,
                          size_t data_length)
{
    if (contract_check_fail_status(status) != RPCD_OK)
        return RPCD_ERR_INVALID_ARGUMENT;
    host_call *call = host_lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    if (contract_check_failure(message, false, data, data_length, host.max_depth) != RPCD_OK) {
        pthread_mutex_unlock(&host.lock);
        return RPCD_ERR_INVALID_ARGUMENT;
    }
    buffer *out;
    size_t start;
    int failed = begin(CHAN_FAIL, call, &out, &start);
    failed |= chan_put_u32(out, (uint32_t)status);
    failed |= put_message(out, message, true);
    failed |= chan_put_opt(out, data, data_length);
    return finish(out, start, failed) == 0 ? status : RPCD_ERR_NO_MEMORY;
}

static int host_call_fail_code(rpcd_call *handle, int64_t code, const char *message,
                               const char *data, size_t data_length)
{
    if (!message)
        return RPCD_ERR_INVALID_ARGUMENT; /* checked again with the data, as in-process */
    host_call *call = host_lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    if (contract_check_failure(message, true, data, data_length, host.max_depth) != RPCD_OK) {
        pthread_mutex_unlock(&host.lock);
        return RPCD_ERR_INVALID_ARGUMENT;
    }
    buffer *out;
    size_t start;
    int failed = begin(CHAN_FAIL_CODE, call, &out, &start);
    failed |= chan_put_i64(out, code);
    failed |= put_message(out, message, false);
    failed |= chan_put_opt(out, data, data_length);
    return finish(out, start, failed) == 0 ? RPCD_ERR_APPLICATION : RPCD_ERR_NO_MEMORY;
}

static int host_call_notify(rpcd_call *handle, const char *method, const char *params,
                            size_t params_length)
{
    if (!method || !js_utf8_valid(method, strlen(method)))
        return RPCD_ERR_INVALID_ARGUMENT;
    host_call *call = host_lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    /* Sent when refused too: rpcd checks again, refuses, and logs the refusal naming the
     * plugin, as in-process. */
    contract_refusal refusal;
    int status = contract_check_notify(method, params, params_length, host.max_depth, &refusal);
    buffer *out;
    size_t start;
    int failed = begin(CHAN_NOTIFY, call, &out, &start);
    failed |= chan_put_str(out, method, strlen(method));
    failed |= chan_put_opt(out, params, params_length);
    if (finish(out, start, failed) != 0)
        return RPCD_ERR_NO_MEMORY;
    return status;
}

static int host_call_progress(rpcd_call *handle, double done, double total, const char *message)
{
    if (contract_check_progress(done, total, message) != RPCD_OK)
        return RPCD_ERR_INVALID_ARGUMENT;
    host_call *call = host_lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    buffer *out;
    size_t start;
    int failed = begin(CHAN_PROGRESS, call, &out, &start);
    failed |= chan_put_f64(out, done);
    failed |= chan_put_f64(out, total);
    failed |= put_message(out, message, true);
    return finish(out, start, failed) == 0 ? RPCD_OK : RPCD_ERR_NO_MEMORY;
}

static int host_call_is_cancelled(rpcd_call *handle)
{
    host_call *call = host_lock_live(handle);
    if (!call)
        return 1;
    int cancelled = call->cancelled;
    pthread_mutex_unlock(&host.lock);
    return cancelled;
}

static const char *host_call_method(rpcd_call *handle)
{
    host_call *call = host_lock_live(handle);
    if (!call)
        return NULL;
    const char *name = call->method->name; /* lives as long as the process's registry */
    pthread_mutex_unlock(&host.lock);
    return name;
}

static int host_call_complete(rpcd_call *handle, int status)
{
    int checked = contract_check_complete(status);
    if (checked != RPCD_OK)
        return checked;
    host_call *call = host_lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    int result = RPCD_OK;
    if (call->completed_early || (!call->running && !call->deferred)) {
        result = RPCD_ERR_UNSUPPORTED;
    } else if (call->running) {
        call->completed_early = true; /* the handler's RPCD_DEFERRED ends it */
        call->early_status = status;
    } else {
        host_end_locked(call, status);
    }
    pthread_mutex_unlock(&host.lock);
    return result;
}

static int host_call_tool_result(rpcd_call *handle, const char *json, size_t json_length)
{
    host_call *call = host_lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    /* Checked here as rpcd checks it (the plugin learns at once), and sent all the same: rpcd
     * checks it again and answers the call as in-process. */
    char reason[256];
    int status = contract_check_tool_result(json, json_length, host.max_depth, call->method->output,
                                            reason, sizeof reason);
    buffer *out;
    size_t start;
    int failed = begin(CHAN_TOOL_RESULT, call, &out, &start);
    failed |= chan_put_str(out, json ? json : "", json ? json_length : 0);
    if (finish(out, start, failed) != 0)
        return RPCD_ERR_NO_MEMORY;
    return status;
}

/* call_meta from the copy of _meta rpcd sent with the call, as call_host.c answers it. */
static int host_call_meta(rpcd_call *handle, const char *name, char *out, size_t out_size,
                          size_t *length)
{
    if (contract_begin_meta(name, out, out_size, length) != RPCD_OK)
        return RPCD_ERR_INVALID_ARGUMENT;
    host_call *call = host_lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    js_span meta = {call->meta.data, call->meta.length}, value = meta;
    int found = call->meta_state;
    if (found == 1 && name) {
        size_t count = js_object_get_decoded(meta, name, strlen(name), &value);
        found = count > 1 ? -1 : (int)count;
    }
    int status = found < 0 ? RPCD_ERR_INVALID_PARAMS : RPCD_OK;
    if (found > 0) /* rpcd sent it on one line */
        status = contract_answer_meta(value.start, value.length, out, out_size, length);
    pthread_mutex_unlock(&host.lock);
    return status;
}

/* ---- 1.6: asking the client, answered as call_input.c answers in rpcd ------------------ */

int host_begin_round(host_call *call, uint32_t ask_capabilities, chan_str answers, chan_str state)
{
    buf_clear(&call->answers);
    buf_clear(&call->state);
    if ((answers.bytes && buf_append(&call->answers, answers.bytes, answers.length) != 0) ||
        (state.bytes && buf_append(&call->state, state.bytes, state.length) != 0))
        return -1;
    call->ask_capabilities = ask_capabilities;
    call->has_state = state.bytes != NULL;
    call->question_count = 0;
    return 0;
}

void host_free_round(host_call *call)
{
    buf_free(&call->answers);
    buf_free(&call->state);
}

/* The place of key among the keys asked this round, or -1. Lock held. */
static int asked_at(const host_call *call, const char *key)
{
    for (size_t i = 0; i < call->question_count; i++)
        if (strcmp(call->asked[i], key) == 0)
            return (int)i;
    return -1;
}

static int host_call_ask(rpcd_call *handle, const char *key, const char *method, const char *params,
                         size_t params_length)
{
    host_call *call = host_lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    int at = key ? asked_at(call, key) : -1;
    int status = contract_check_ask(key, method, params, params_length, host.max_depth,
                                    call->ask_capabilities, call->question_count, at >= 0);
    if (status != RPCD_OK) {
        pthread_mutex_unlock(&host.lock);
        return status;
    }
    if (at < 0)
        snprintf(call->asked[call->question_count++], sizeof call->asked[0], "%s", key);
    buffer *out;
    size_t start;
    int failed = begin(CHAN_ASK, call, &out, &start);
    failed |= chan_put_str(out, key, strlen(key));
    failed |= chan_put_str(out, method, strlen(method));
    failed |= chan_put_opt(out, params, params_length);
    return finish(out, start, failed) == 0 ? RPCD_OK : RPCD_ERR_NO_MEMORY;
}

static int host_call_input(rpcd_call *handle, const char *key, char *out, size_t out_size,
                           size_t *length)
{
    if (contract_begin_meta(key, out, out_size, length) != RPCD_OK || !key)
        return RPCD_ERR_INVALID_ARGUMENT;
    host_call *call = host_lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    int status = RPCD_OK;
    js_span answers = {call->answers.data, call->answers.length}, value;
    if (answers.length > 0 && js_object_get_decoded(answers, key, strlen(key), &value) == 1)
        status = contract_answer_meta(value.start, value.length, out, out_size, length);
    pthread_mutex_unlock(&host.lock);
    return status;
}

static int host_call_set_state(rpcd_call *handle, const char *state, size_t length)
{
    if (contract_check_state(state, length) != RPCD_OK)
        return RPCD_ERR_INVALID_ARGUMENT;
    host_call *call = host_lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    buffer *out;
    size_t start;
    int failed = begin(CHAN_STATE, call, &out, &start);
    failed |= chan_put_opt(out, length > 0 ? state : NULL, length);
    return finish(out, start, failed) == 0 ? RPCD_OK : RPCD_ERR_NO_MEMORY;
}

static int host_call_state(rpcd_call *handle, char *out, size_t out_size, size_t *length)
{
    if (contract_begin_meta(NULL, out, out_size, length) != RPCD_OK)
        return RPCD_ERR_INVALID_ARGUMENT;
    host_call *call = host_lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    int status = RPCD_OK;
    if (call->has_state)
        status = contract_answer_meta(call->state.data, call->state.length, out, out_size, length);
    pthread_mutex_unlock(&host.lock);
    return status;
}

void host_fill_call_api(rpcd_host_api *api)
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
    api->call_ask = host_call_ask;
    api->call_input = host_call_input;
    api->call_set_state = host_call_set_state;
    api->call_state = host_call_state;
}
