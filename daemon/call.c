/* SPDX-License-Identifier: MIT */
/*
 * Call slots, the host functions plugins use on a call, and response assembly.
 * Each slot keeps its buffers from one call to the next, so a steady stream of calls
 * allocates nothing once the slots in use have warmed up.
 */
#include "call.h"

#include "buffer.h"
#include "envelope.h"
#include "log.h"
#include "rpc_error.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Handles and the slot store ------------------------------------------------------- */

enum { SLOTS_PER_CHUNK = 256, MAX_CHUNKS = 16384, NO_SLOT = UINT32_MAX };

/* Buffers that grew past this for one large call are given back when the call ends. */
enum { KEEP_BUFFER_BYTES = 64 * 1024 };

#define INDEX_BITS (sizeof(uintptr_t) >= 8 ? 32u : 20u)
#define INDEX_MASK (((uintptr_t)1 << INDEX_BITS) - 1)
#define GENERATION_MASK ((uint32_t)(UINTPTR_MAX >> INDEX_BITS))

typedef struct call_slot {
    pthread_mutex_t lock; /* guards everything below while the call runs */
    uint32_t generation;  /* part of the handle; moves on when the call ends */
    bool active;
    uint32_t next_free;
    atomic_bool cancelled;

    const call_context *context;
    const reg_method *method;
    call_batch *batch;
    bool is_request;
    buffer id;
    bool has_progress_token;
    buffer progress_token;
    const char *params;
    size_t params_length;

    bool has_result;
    buffer result;
    bool result_invalid; /* call_result got text that is not JSON */
    int failure_status;  /* what call_fail/call_fail_code recorded, 0 when nothing */
    int64_t failure_code;
    bool has_failure_message;
    buffer failure_message;
    bool has_failure_data;
    buffer failure_data;

    buffer scratch; /* notification lines and error data */
    buffer line;    /* the response line */
} call_slot;

static pthread_mutex_t store_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(call_slot *) chunks[MAX_CHUNKS];
static uint32_t slot_total;
static uint32_t free_head = NO_SLOT;
static uint32_t active_count;

static call_slot *slot_at(uint32_t index)
{
    call_slot *chunk = atomic_load(&chunks[index / SLOTS_PER_CHUNK]);
    return chunk ? &chunk[index % SLOTS_PER_CHUNK] : NULL;
}

static rpcd_call *handle_of(uint32_t index, uint32_t generation)
{
    uintptr_t value =
        ((uintptr_t)index + 1) | ((uintptr_t)(generation & GENERATION_MASK) << INDEX_BITS);
    return (rpcd_call *)value;
}

/* The slot of a live call, locked; NULL when the handle is unknown or its call has ended. */
static call_slot *lock_live(rpcd_call *call)
{
    uintptr_t value = (uintptr_t)call;
    uintptr_t index_plus_one = value & INDEX_MASK;
    if (index_plus_one == 0 || index_plus_one > (uintptr_t)MAX_CHUNKS * SLOTS_PER_CHUNK)
        return NULL;
    call_slot *slot = slot_at((uint32_t)(index_plus_one - 1));
    if (!slot)
        return NULL;
    pthread_mutex_lock(&slot->lock);
    if (!slot->active || (slot->generation & GENERATION_MASK) != (uint32_t)(value >> INDEX_BITS)) {
        pthread_mutex_unlock(&slot->lock);
        return NULL;
    }
    return slot;
}

static int acquire_slot(uint32_t *out_index)
{
    int status = -1;
    pthread_mutex_lock(&store_lock);
    uint32_t index = free_head;
    if (index != NO_SLOT) {
        free_head = slot_at(index)->next_free;
    } else {
        if (slot_total >= (uint32_t)MAX_CHUNKS * SLOTS_PER_CHUNK || slot_total >= INDEX_MASK)
            goto done;
        if (slot_total % SLOTS_PER_CHUNK == 0) {
            call_slot *chunk = calloc(SLOTS_PER_CHUNK, sizeof *chunk);
            if (!chunk)
                goto done;
            for (int i = 0; i < SLOTS_PER_CHUNK; i++)
                pthread_mutex_init(&chunk[i].lock, NULL);
            atomic_store(&chunks[slot_total / SLOTS_PER_CHUNK], chunk);
        }
        index = slot_total++;
    }
    active_count++;
    *out_index = index;
    status = 0;
done:
    pthread_mutex_unlock(&store_lock);
    return status;
}

static void trim(buffer *buf)
{
    if (buf->capacity > KEEP_BUFFER_BYTES)
        buf_free(buf);
    else
        buf_clear(buf);
}

static void release_slot(uint32_t index)
{
    call_slot *slot = slot_at(index);
    trim(&slot->id);
    trim(&slot->progress_token);
    trim(&slot->result);
    trim(&slot->failure_message);
    trim(&slot->failure_data);
    trim(&slot->scratch);
    trim(&slot->line);
    pthread_mutex_lock(&store_lock);
    slot->next_free = free_head;
    free_head = index;
    active_count--;
    pthread_mutex_unlock(&store_lock);
}

void call_store_release(void)
{
    pthread_mutex_lock(&store_lock);
    if (active_count == 0) {
        for (uint32_t chunk = 0; chunk * SLOTS_PER_CHUNK < slot_total; chunk++) {
            call_slot *slots = atomic_load(&chunks[chunk]);
            for (int i = 0; i < SLOTS_PER_CHUNK; i++) {
                call_slot *slot = &slots[i];
                buf_free(&slot->id);
                buf_free(&slot->progress_token);
                buf_free(&slot->result);
                buf_free(&slot->failure_message);
                buf_free(&slot->failure_data);
                buf_free(&slot->scratch);
                buf_free(&slot->line);
                pthread_mutex_destroy(&slot->lock);
            }
            free(slots);
            atomic_store(&chunks[chunk], NULL);
        }
        slot_total = 0;
        free_head = NO_SLOT;
    }
    pthread_mutex_unlock(&store_lock);
}

/* ---- Batches -------------------------------------------------------------------------- */

struct call_batch {
    pthread_mutex_t lock;
    size_t references;
    size_t item_count;
    buffer items; /* the responses so far, comma-separated */
    const call_context *context;
};

int call_batch_new(const call_context *context, call_batch **out)
{
    call_batch *batch = calloc(1, sizeof *batch);
    if (!batch || pthread_mutex_init(&batch->lock, NULL) != 0) {
        free(batch);
        return -1;
    }
    batch->references = 1;
    batch->context = context;
    *out = batch;
    return 0;
}

static void batch_hold(call_batch *batch)
{
    pthread_mutex_lock(&batch->lock);
    batch->references++;
    pthread_mutex_unlock(&batch->lock);
}

static int batch_append(call_batch *batch, const struct iovec *parts, int part_count)
{
    int status = 0;
    pthread_mutex_lock(&batch->lock);
    if (batch->item_count > 0)
        status |= buf_append_char(&batch->items, ',');
    for (int i = 0; i < part_count; i++)
        status |= buf_append(&batch->items, parts[i].iov_base, parts[i].iov_len);
    batch->item_count++;
    pthread_mutex_unlock(&batch->lock);
    return status ? -1 : 0;
}

void call_batch_release(call_batch *batch)
{
    pthread_mutex_lock(&batch->lock);
    bool last = --batch->references == 0;
    pthread_mutex_unlock(&batch->lock);
    if (!last)
        return;
    if (batch->item_count > 0) {
        struct iovec parts[] = {
            {"[", 1},
            {batch->items.data, batch->items.length},
            {"]", 1},
        };
        out_write_line(batch->context->out, parts, 3);
    }
    buf_free(&batch->items);
    pthread_mutex_destroy(&batch->lock);
    free(batch);
}

/* Sends one response line, alone or into its batch. */
static int respond(const call_context *context, call_batch *batch, const struct iovec *parts,
                   int part_count)
{
    if (batch)
        return batch_append(batch, parts, part_count);
    return out_write_line(context->out, parts, part_count);
}

int call_respond_error(const call_context *context, call_batch *batch, const js_span *id,
                       int64_t code, const char *message, const char *data, size_t data_length)
{
    buffer line = BUFFER_INIT;
    if (!message)
        message = rpcerr_standard_message(code);
    int status =
        env_append_error(&line, id, code, message ? message : "Server error", data, data_length);
    if (status == 0) {
        struct iovec part = {line.data, line.length};
        status = respond(context, batch, &part, 1);
    }
    buf_free(&line);
    return status;
}

/* ---- Host functions ------------------------------------------------------------------- */

static bool valid_json(const call_slot *slot, const char *text, size_t length)
{
    return text && js_validate(text, length, slot->context->max_depth, NULL, NULL) == 0;
}

static int host_call_result(rpcd_call *call, const char *json, size_t json_length)
{
    call_slot *slot = lock_live(call);
    if (!slot)
        return RPCD_ERR_STALE;
    int status = RPCD_OK;
    /* Handing back the params, as an echo does, needs no second check: they were validated. */
    bool is_params = json && json == slot->params && json_length == slot->params_length;
    if (!is_params && !valid_json(slot, json, json_length)) {
        slot->result_invalid = true;
        slot->has_result = false;
        status = RPCD_ERR_INVALID_ARGUMENT;
    } else {
        buf_clear(&slot->result);
        if (buf_append(&slot->result, json, json_length) != 0) {
            status = RPCD_ERR_NO_MEMORY;
        } else {
            slot->has_result = true;
            slot->result_invalid = false;
        }
    }
    pthread_mutex_unlock(&slot->lock);
    return status;
}

/* Records a failure; called with the slot locked. */
static int record_failure(call_slot *slot, int status, int64_t code, const char *message,
                          const char *data, size_t data_length)
{
    if (data && !valid_json(slot, data, data_length))
        return RPCD_ERR_INVALID_ARGUMENT;
    buf_clear(&slot->failure_message);
    buf_clear(&slot->failure_data);
    slot->has_failure_message = message != NULL;
    slot->has_failure_data = data != NULL;
    /* Kept with its NUL: build_error reads it as a C string. */
    if ((message && buf_append(&slot->failure_message, message, strlen(message) + 1) != 0) ||
        (data && buf_append(&slot->failure_data, data, data_length) != 0)) {
        slot->has_failure_message = slot->has_failure_data = false;
        return RPCD_ERR_NO_MEMORY;
    }
    slot->failure_status = status;
    slot->failure_code = code;
    return status;
}

static int host_call_fail(rpcd_call *call, int status, const char *message, const char *data,
                          size_t data_length)
{
    if (status == RPCD_OK || status == RPCD_ERR_APPLICATION)
        return RPCD_ERR_INVALID_ARGUMENT;
    call_slot *slot = lock_live(call);
    if (!slot)
        return RPCD_ERR_STALE;
    int result = record_failure(slot, status, 0, message, data, data_length);
    pthread_mutex_unlock(&slot->lock);
    return result;
}

static int host_call_fail_code(rpcd_call *call, int64_t code, const char *message, const char *data,
                               size_t data_length)
{
    if (!message)
        return RPCD_ERR_INVALID_ARGUMENT;
    call_slot *slot = lock_live(call);
    if (!slot)
        return RPCD_ERR_STALE;
    int result = record_failure(slot, RPCD_ERR_APPLICATION, code, message, data, data_length);
    pthread_mutex_unlock(&slot->lock);
    return result;
}

/* Writes a notification line; called with the slot locked, which keeps it before the response. */
static int send_notification(call_slot *slot, const char *method, size_t method_length,
                             const char *params, size_t params_length)
{
    buffer *line = &slot->scratch;
    buf_clear(line);
    int status = buf_append_string(line, "{\"jsonrpc\":\"2.0\",\"method\":");
    status |= buf_append_json_string(line, method, method_length);
    if (params) {
        status |= buf_append_string(line, ",\"params\":");
        status |= buf_append(line, params, params_length);
    }
    status |= buf_append_char(line, '}');
    if (status != 0)
        return RPCD_ERR_NO_MEMORY;
    struct iovec part = {line->data, line->length};
    /* A client that went away is not the plugin's problem: the call just carries on. */
    out_write_line(slot->context->out, &part, 1);
    return RPCD_OK;
}

static int host_call_notify(rpcd_call *call, const char *method, const char *params,
                            size_t params_length)
{
    if (!method || !js_utf8_valid(method, strlen(method)))
        return RPCD_ERR_INVALID_ARGUMENT;
    call_slot *slot = lock_live(call);
    if (!slot)
        return RPCD_ERR_STALE;
    int status;
    if (params && (!valid_json(slot, params, params_length) ||
                   (params_length > 0 && params[strspn(params, " \t\r\n")] != '{' &&
                    params[strspn(params, " \t\r\n")] != '['))) {
        log_message(LOG_WARNING,
                    "%s: %s sent a notification \"%s\" with params that are not "
                    "a JSON array or object; dropped",
                    slot->method->owner_name, slot->method->name, method);
        status = RPCD_ERR_INVALID_ARGUMENT;
    } else {
        status = send_notification(slot, method, strlen(method), params, params_length);
    }
    pthread_mutex_unlock(&slot->lock);
    return status;
}

/* JSON has no NaN or infinity; integral values print without a fraction. */
static int append_number(buffer *buf, double value)
{
    if (!isfinite(value))
        return -1;
    if (value == floor(value) && fabs(value) < 9007199254740992.0)
        return buf_printf(buf, "%.0f", value);
    return buf_printf(buf, "%.17g", value);
}

static int host_call_progress(rpcd_call *call, double done, double total, const char *message)
{
    if (!isfinite(done) || isnan(total) || (message && !js_utf8_valid(message, strlen(message))))
        return RPCD_ERR_INVALID_ARGUMENT;
    call_slot *slot = lock_live(call);
    if (!slot)
        return RPCD_ERR_STALE;
    int status = RPCD_OK;
    if (slot->has_progress_token) {
        buffer params = BUFFER_INIT;
        int failed = buf_append_string(&params, "{\"progressToken\":");
        failed |= buf_append(&params, slot->progress_token.data, slot->progress_token.length);
        failed |= buf_append_string(&params, ",\"progress\":");
        failed |= append_number(&params, done);
        if (total >= 0 && isfinite(total)) {
            failed |= buf_append_string(&params, ",\"total\":");
            failed |= append_number(&params, total);
        }
        if (message) {
            failed |= buf_append_string(&params, ",\"message\":");
            failed |= buf_append_json_string(&params, message, strlen(message));
        }
        failed |= buf_append_char(&params, '}');
        static const char method[] = "notifications/progress";
        status =
            failed ? RPCD_ERR_NO_MEMORY
                   : send_notification(slot, method, sizeof method - 1, params.data, params.length);
        buf_free(&params);
    }
    pthread_mutex_unlock(&slot->lock);
    return status;
}

static int host_call_is_cancelled(rpcd_call *call)
{
    call_slot *slot = lock_live(call);
    if (!slot)
        return 1;
    int cancelled = atomic_load(&slot->cancelled) ? 1 : 0;
    pthread_mutex_unlock(&slot->lock);
    return cancelled;
}

static const char *host_call_method(rpcd_call *call)
{
    call_slot *slot = lock_live(call);
    if (!slot)
        return NULL;
    const char *name = slot->method->name; /* owned by the registry, alive until exit */
    pthread_mutex_unlock(&slot->lock);
    return name;
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
}

/* ---- Ending a call -------------------------------------------------------------------- */

/* error.data for an error that came from a plugin's status. */
static int append_plugin_error_data(buffer *data, const call_slot *slot, int status,
                                    const char *detail)
{
    const char *name = rpcerr_status_name(status);
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
    const char *name = rpcerr_status_name(status);
    log_message(LOG_DEBUG, "%s: %s failed with %s (%d)%s", slot->method->owner_name,
                slot->method->name, name ? name : "an unknown status", status,
                slot->is_request ? "" : " in a notification");
}

static int end_call(uint32_t index, int status)
{
    call_slot *slot = slot_at(index);
    pthread_mutex_lock(&slot->lock);
    slot->active = false;
    slot->generation++; /* from here on, the plugin's handle is stale */
    pthread_mutex_unlock(&slot->lock);

    if (status == RPCD_OK && slot->result_invalid)
        log_message(LOG_WARNING, "%s: %s gave a result that is not valid JSON",
                    slot->method->owner_name, slot->method->name);

    int written = 0;
    bool failed = status != RPCD_OK || slot->result_invalid;
    if (failed)
        log_failure(slot, status);
    if (slot->is_request) {
        if (!failed) {
            struct iovec parts[] = {
                {"{\"jsonrpc\":\"2.0\",\"id\":", 22},
                {slot->id.data, slot->id.length},
                {",\"result\":", 10},
                {slot->has_result ? slot->result.data : "null",
                 slot->has_result ? slot->result.length : 4},
                {"}", 1},
            };
            written = respond(slot->context, slot->batch, parts, 5);
        } else {
            buf_clear(&slot->line);
            if (build_error(slot, status) == 0) {
                struct iovec part = {slot->line.data, slot->line.length};
                written = respond(slot->context, slot->batch, &part, 1);
            } else {
                const js_span id = {slot->id.data, slot->id.length};
                written = call_respond_error(slot->context, slot->batch, &id, RPC_INTERNAL_ERROR,
                                             NULL, NULL, 0);
            }
        }
    }
    if (slot->batch)
        call_batch_release(slot->batch);
    release_slot(index);
    return written;
}

int call_run(const call_context *context, const call_request *request)
{
    uint32_t index;
    if (acquire_slot(&index) != 0) {
        log_message(LOG_ERROR, "out of memory for a call of %s", request->method->name);
        if (!request->id)
            return 0;
        return call_respond_error(context, request->batch, request->id, RPC_INTERNAL_ERROR, NULL,
                                  "{\"exception\":\"RPCD_ERR_NO_MEMORY\"}", 33);
    }
    call_slot *slot = slot_at(index);
    pthread_mutex_lock(&slot->lock);
    slot->context = context;
    slot->method = request->method;
    slot->batch = request->batch;
    slot->is_request = request->id != NULL;
    slot->has_progress_token = request->progress_token != NULL;
    slot->params = request->params ? request->params->start : NULL;
    slot->params_length = request->params ? request->params->length : 0;
    slot->has_result = slot->result_invalid = false;
    slot->failure_status = 0;
    slot->has_failure_message = slot->has_failure_data = false;
    atomic_store(&slot->cancelled, false);
    int failed = 0;
    if (request->id)
        failed |= buf_append(&slot->id, request->id->start, request->id->length);
    if (request->progress_token)
        failed |= buf_append(&slot->progress_token, request->progress_token->start,
                             request->progress_token->length);
    slot->active = true;
    rpcd_call *handle = handle_of(index, slot->generation);
    pthread_mutex_unlock(&slot->lock);
    if (slot->batch)
        batch_hold(slot->batch);

    int status = RPCD_ERR_NO_MEMORY;
    if (!failed)
        status = request->method->handler(handle, slot->params, slot->params_length,
                                          request->method->user_data);
    return end_call(index, status);
}
