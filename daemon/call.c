/* SPDX-License-Identifier: MIT */
/*
 * Calls from start to end: the context they share (ids in flight, back-pressure, cancellation,
 * serialized methods), batches, and the response each call ends with. Each slot keeps its
 * buffers from one call to the next, so a steady stream of calls allocates nothing once the
 * slots in use have warmed up.
 */
#include "call_internal.h"
#include "lock.h"

#include "buffer.h"
#include "crash_report.h"
#include "executor.h"
#include "log.h"
#include "response_line.h"
#include "rpc_error.h"
#include "stop_signals.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void run_job(exec_job *job);

/* The most calls a group holds back before it hands them over. */
enum { GROUP_MOST = 64 };

/*
 * Quick calls with params this long go to a worker all the same: writing their response takes
 * the reader's time that reading the next lines could use.
 */
enum { QUICK_PARAMS_MOST = 64 * 1024 };

int call_context_new(const call_settings *settings, call_context **out)
{
    call_context *context = calloc(1, sizeof *context);
    if (!context)
        return -1;
    context->out = settings->out;
    context->max_depth = settings->max_depth;
    context->max_in_flight = settings->max_in_flight ? settings->max_in_flight : 1;
    context->max_in_flight_bytes =
        settings->max_in_flight_bytes ? settings->max_in_flight_bytes : SIZE_MAX;
    /* One worker promises one call at a time: a quick call beside it would break that. */
    context->quick_on_reader = settings->workers != 1;
    pthread_mutex_init(&context->lock, NULL);
    /* Its waits are timed by the monotonic clock: a change of the date stretches none of them. */
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&context->changed, &monotonic);
    pthread_condattr_destroy(&monotonic);
    context->id_bucket_count = 64;
    context->id_buckets = malloc(context->id_bucket_count * sizeof *context->id_buckets);
    context->serial_count = settings->methods ? reg_count(settings->methods) : 0;
    context->serial = calloc(context->serial_count + 1, sizeof *context->serial);
    if (!context->id_buckets || !context->serial ||
        (settings->workers > 0 && exec_new(settings->workers, &context->pool) != 0)) {
        free(context->id_buckets);
        free(context->serial);
        free(context);
        return -1;
    }
    for (size_t i = 0; i < context->id_bucket_count; i++)
        context->id_buckets[i] = NO_SLOT;
    *out = context;
    return 0;
}

void call_context_free(call_context *context)
{
    if (!context)
        return;
    call_wait_idle(context, -1);
    exec_free(context->pool);
    pthread_cond_destroy(&context->changed);
    pthread_mutex_destroy(&context->lock);
    free(context->id_buckets);
    free(context->serial);
    free(context);
}

/* The slot in flight with exactly this id text, or NO_SLOT. Context lock held. */
static uint32_t find_id(const call_context *context, const char *id, size_t length)
{
    size_t bucket = reg_hash(id, length) & (context->id_bucket_count - 1);
    for (uint32_t index = context->id_buckets[bucket]; index != NO_SLOT;) {
        call_slot *slot = slot_at(index);
        if (slot->id.length == length && memcmp(slot->id.data, id, length) == 0)
            return index;
        index = slot->id_next;
    }
    return NO_SLOT;
}

/* Doubles the id table when it gets crowded; keeps it as it is when memory runs out. */
static void grow_ids(call_context *context)
{
    size_t count = context->id_bucket_count * 2;
    uint32_t *buckets = malloc(count * sizeof *buckets);
    if (!buckets)
        return;
    for (size_t i = 0; i < count; i++)
        buckets[i] = NO_SLOT;
    for (size_t i = 0; i < context->id_bucket_count; i++) {
        for (uint32_t index = context->id_buckets[i]; index != NO_SLOT;) {
            call_slot *slot = slot_at(index);
            uint32_t next = slot->id_next;
            size_t bucket = reg_hash(slot->id.data, slot->id.length) & (count - 1);
            slot->id_next = buckets[bucket];
            buckets[bucket] = index;
            index = next;
        }
    }
    free(context->id_buckets);
    context->id_buckets = buckets;
    context->id_bucket_count = count;
}

/* Context lock held. */
static void track_id(call_context *context, call_slot *slot)
{
    if (context->tracked_count >= context->id_bucket_count)
        grow_ids(context);
    size_t bucket = reg_hash(slot->id.data, slot->id.length) & (context->id_bucket_count - 1);
    slot->id_next = context->id_buckets[bucket];
    context->id_buckets[bucket] = slot->index;
    slot->tracked = true;
    context->tracked_count++;
}

/* Context lock held. */
static void untrack_id(call_context *context, call_slot *slot)
{
    size_t bucket = reg_hash(slot->id.data, slot->id.length) & (context->id_bucket_count - 1);
    for (uint32_t *link = &context->id_buckets[bucket]; *link != NO_SLOT;
         link = &slot_at(*link)->id_next) {
        if (*link == slot->index) {
            *link = slot->id_next;
            break;
        }
    }
    slot->tracked = false;
    context->tracked_count--;
}

static bool has_room(call_context *context)
{
    return atomic_load(&context->in_flight) < context->max_in_flight;
}

/*
 * call_interrupt_waits_from_signal sets interrupted without the lock and cannot signal the
 * condition variable: a wait must see the flag on its own, so it wakes at least this often. Only
 * the reader's waits for room and bytes, which are rare and short, pay for it.
 */
enum { INTERRUPT_CHECK_MS = 10 };

static void deadline_in(int timeout_ms, struct timespec *deadline)
{
    clock_gettime(CLOCK_MONOTONIC, deadline);
    deadline->tv_sec += timeout_ms / 1000;
    deadline->tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline->tv_nsec >= 1000000000L) {
        deadline->tv_sec++;
        deadline->tv_nsec -= 1000000000L;
    }
}

/*
 * Waits for changed, INTERRUPT_CHECK_MS at most, then lets a stop signal held back meanwhile
 * reach its handler (see stop_signals.h). Lock held, taken with pthread_mutex_lock.
 */
static void wait_for_change(call_context *context)
{
    struct timespec deadline;
    deadline_in(INTERRUPT_CHECK_MS, &deadline);
    pthread_cond_timedwait(&context->changed, &context->lock, &deadline);
    stop_signals_deliver_pending();
}

int call_wait_for_room(call_context *context)
{
    /* Changed under the lock, read here without it: this runs once per request, and taking the
     * lock the finishing workers take showed as contention in the throughput profile. */
    if (has_room(context))
        return atomic_load(&context->interrupted) ? -1 : 0;

    /* Held calls of a group count in flight: they must run, or nothing would ever end. */
    call_submit_group(context);

    /* The reader stops reading: what is written meanwhile must go out at once. */
    log_message(LOG_DEBUG, "%zu calls in flight (max_in_flight): reading paused",
                context->max_in_flight);
    stop_signals_hold();
    out_set_reader_idle(context->out, true);
    pthread_mutex_lock(&context->lock);
    while (!has_room(context) && !atomic_load(&context->interrupted))
        wait_for_change(context);
    pthread_mutex_unlock(&context->lock);
    stop_signals_release();
    out_set_reader_idle(context->out, false);
    return atomic_load(&context->interrupted) ? -1 : 0;
}

void call_wait_for_bytes(call_context *context)
{
    if (atomic_load(&context->in_flight_bytes) < context->max_in_flight_bytes)
        return;
    log_message(LOG_DEBUG, "calls in flight hold %zu bytes (max_in_flight_bytes): reading paused",
                atomic_load(&context->in_flight_bytes));
    stop_signals_hold();
    pthread_mutex_lock(&context->lock);
    while (context->in_flight_bytes >= context->max_in_flight_bytes &&
           !atomic_load(&context->interrupted))
        wait_for_change(context);
    pthread_mutex_unlock(&context->lock);
    stop_signals_release();
}

void call_interrupt_waits(call_context *context)
{
    lock_take(&context->lock);
    atomic_store(&context->interrupted, true);
    pthread_cond_broadcast(&context->changed);
    lock_release(&context->lock);
}

void call_interrupt_waits_from_signal(call_context *context)
{
    atomic_store(&context->interrupted, true);
}

int call_wait_idle(call_context *context, int timeout_ms)
{
    struct timespec deadline;
    deadline_in(timeout_ms >= 0 ? timeout_ms : 0, &deadline);
    pthread_mutex_lock(&context->lock);
    int status = 0;
    while (context->in_flight > 0) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&context->changed, &context->lock);
        } else if (pthread_cond_timedwait(&context->changed, &context->lock, &deadline) != 0) {
            status = context->in_flight > 0 ? -1 : 0;
            break;
        }
    }
    pthread_mutex_unlock(&context->lock);
    return status;
}

/* Marks one slot cancelled; a stronger style wins over a weaker one. Slot lock held. */
static void mark_cancelled(call_slot *slot, int style)
{
    if (!atomic_load(&slot->cancelled) || style < slot->cancel_style)
        slot->cancel_style = style;
    atomic_store(&slot->cancelled, true);
}

int call_cancel(call_context *context, js_span id, int style)
{
    lock_take(&context->lock);
    uint32_t index = find_id(context, id.start, id.length);
    if (index != NO_SLOT) {
        call_slot *slot = slot_at(index);
        lock_take(&slot->lock);
        mark_cancelled(slot, style);
        lock_release(&slot->lock);
    }
    lock_release(&context->lock);
    return index != NO_SLOT;
}

void call_cancel_all(call_context *context)
{
    /* Every slot of the store: only this context's active ones are touched. */
    uint32_t total = slot_count();
    for (uint32_t index = 0; index < total; index++) {
        call_slot *slot = slot_at(index);
        lock_take(&slot->lock);
        if (slot->active && slot->context == context)
            mark_cancelled(slot, CALL_CANCEL_FLAG);
        lock_release(&slot->lock);
    }
}

/* ---- Batches -------------------------------------------------------------------------- */

struct call_batch {
    pthread_mutex_t lock; /* guards the items */
    atomic_size_t references;
    size_t item_count;
    buffer items; /* the responses so far, comma-separated */
    call_context *context;
    uint64_t ticket;
};

int call_batch_new(call_context *context, uint64_t ticket, call_batch **out)
{
    call_batch *batch = calloc(1, sizeof *batch);
    if (!batch || pthread_mutex_init(&batch->lock, NULL) != 0) {
        free(batch);
        return -1;
    }
    atomic_init(&batch->references, 1);
    batch->context = context;
    batch->ticket = ticket;
    *out = batch;
    return 0;
}

static void batch_hold(call_batch *batch)
{
    atomic_fetch_add(&batch->references, 1);
}

static int batch_append(call_batch *batch, const struct iovec *parts, int part_count)
{
    int status = 0;
    lock_take(&batch->lock);
    if (batch->item_count > 0)
        status |= buf_append_char(&batch->items, ',');
    for (int i = 0; i < part_count; i++)
        status |= buf_append(&batch->items, parts[i].iov_base, parts[i].iov_len);
    batch->item_count++;
    lock_release(&batch->lock);
    return status ? -1 : 0;
}

void call_batch_release(call_batch *batch)
{
    /* Each item appends its response before it lets go: the last one sees them all. */
    if (atomic_fetch_sub(&batch->references, 1) != 1)
        return;
    if (batch->item_count > 0) {
        struct iovec parts[] = {
            {"[", 1},
            {batch->items.data, batch->items.length},
            {"]", 1},
        };
        out_write_ticket(batch->context->out, batch->ticket, parts, 3);
    } else {
        out_ticket_drop(batch->context->out, batch->ticket);
    }
    buf_free(&batch->items);
    pthread_mutex_destroy(&batch->lock);
    free(batch);
}

/* Sends one response line, alone or into its batch. */
static int respond(call_context *context, call_batch *batch, uint64_t ticket,
                   const struct iovec *parts, int part_count)
{
    if (batch)
        return batch_append(batch, parts, part_count);
    return out_write_ticket(context->out, ticket, parts, part_count);
}

int call_respond_result(call_context *context, call_batch *batch, uint64_t ticket,
                        const js_span *id, const char *result, size_t result_length)
{
    struct iovec parts[RL_RESULT_PARTS];
    int count = rl_result_parts(parts, id, result, result_length);
    return respond(context, batch, ticket, parts, count);
}

int call_respond_error(call_context *context, call_batch *batch, uint64_t ticket, const js_span *id,
                       int64_t code, const char *message, const char *data, size_t data_length)
{
    buffer line = BUFFER_INIT;
    int status = rl_append_error(&line, id, code, message ? message : rpcerr_message(code), data,
                                 data_length);
    if (status == 0) {
        struct iovec part = {line.data, line.length};
        status = respond(context, batch, ticket, &part, 1);
    } else {
        out_ticket_drop(context->out, ticket);
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
    };
}

/* Builds the error response of a call that ended with status into slot->line. */
static int build_error(call_slot *slot, int status)
{
    const js_span id = {slot->id.data, slot->id.length};
    rpcerr_failure failure;
    failure_of(slot, status, &failure);
    rpcerr_error error;
    if (rpcerr_for_failure(&failure, &slot->scratch, &error) != 0)
        return -1;
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
 * its result, not as a JSON-RPC error; only a cancelled call is answered as one.
 */
static void write_shaped_result(call_slot *slot, int status, bool failed)
{
    const js_span id = {slot->id.data, slot->id.length};
    buffer *result = &slot->line;
    buf_clear(result);
    int written;
    if (!failed) {
        js_span text = result_text(slot);
        written = slot->shaper->result(result, text.start, text.length);
    } else {
        rpcerr_failure failure;
        failure_of(slot, status, &failure);
        char text[512];
        rpcerr_failure_text(&failure, text, sizeof text);
        written = slot->shaper->failure(result, text, strlen(text));
    }
    if (written == 0)
        call_respond_result(slot->context, slot->batch, slot->ticket, &id, result->data,
                            result->length);
    else
        call_respond_error(slot->context, slot->batch, slot->ticket, &id, RPC_INTERNAL_ERROR, NULL,
                           NULL, 0);
}

/* Writes the response of an ended call (nothing for notifications and silent cancels). */
static void write_response(call_slot *slot, int status, bool silent)
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
        out_ticket_drop(slot->context->out, slot->ticket);
        return;
    }
    const js_span id = {slot->id.data, slot->id.length};
    if (slot->shaper && status != RPCD_ERR_CANCELLED) {
        write_shaped_result(slot, status, failed);
        return;
    }
    if (!failed) {
        call_respond_result(slot->context, slot->batch, slot->ticket, &id, result_text(slot).start,
                            result_text(slot).length);
        return;
    }
    buf_clear(&slot->line);
    if (build_error(slot, status) == 0) {
        struct iovec part = {slot->line.data, slot->line.length};
        respond(slot->context, slot->batch, slot->ticket, &part, 1);
    } else {
        call_respond_error(slot->context, slot->batch, slot->ticket, &id, RPC_INTERNAL_ERROR, NULL,
                           NULL, 0);
    }
}

/* Queues a call for a worker, or runs it here when there are none. */
static void dispatch_slot(call_slot *slot)
{
    if (slot->context->pool)
        exec_submit(slot->context->pool, &slot->job);
    else
        run_job(&slot->job);
}

void call_finish(uint32_t index, int status)
{
    call_slot *slot = slot_at(index);
    lock_take(&slot->lock);
    call_finish_locked(slot, status);
}

/* Ends a call once: stale handle, response, bookkeeping, the next serialized call. */
void call_finish_locked(call_slot *slot, int status)
{
    uint32_t index = slot->index;
    call_context *context = slot->context;
    slot->active = false;
    slot->generation++; /* from here on, the plugin's handle is stale */
    bool cancelled = atomic_load(&slot->cancelled);
    int style = slot->cancel_style;
    lock_release(&slot->lock);

    if (cancelled && style == CALL_CANCEL_RESPOND)
        status = RPCD_ERR_CANCELLED; /* the client asked, and gets the answer it expects */
    /* The id is free before the response leaves: a client that reuses it as soon as it reads
     * the answer must not be told the call is still in flight. The call itself counts as in
     * flight until its response is out, so that max_in_flight bounds what is not answered yet. */
    if (slot->tracked) {
        lock_take(&context->lock);
        untrack_id(context, slot);
        lock_release(&context->lock);
    }
    write_response(slot, status, cancelled && style == CALL_CANCEL_SILENT);

    if (slot->batch)
        call_batch_release(slot->batch);
    const reg_method *method = slot->method;
    size_t held_bytes = slot->held_bytes;
    slot_release(index);

    call_slot *next = NULL;
    lock_take(&context->lock);
    if (method->flags & RPCD_METHOD_SERIALIZED && method->index < context->serial_count) {
        serial_queue *queue = &context->serial[method->index];
        if (queue->head != NO_SLOT && queue->busy) {
            next = slot_at(queue->head);
            queue->head = next->serial_next;
            if (queue->head == NO_SLOT)
                queue->tail = NO_SLOT;
        } else {
            queue->busy = false;
        }
    }
    /* The last touch of the context: once nothing is in flight, its owner may free it and the
     * output while this thread (a worker, or a plugin's own after call_complete) goes on. A next
     * call is itself in flight. */
    context->in_flight--;
    context->in_flight_bytes -= held_bytes;
    pthread_cond_broadcast(&context->changed);
    lock_release(&context->lock);
    if (next)
        dispatch_slot(next);
}

static void run_job(exec_job *job)
{
    call_slot *slot = (call_slot *)((char *)job - offsetof(call_slot, job));
    lock_take(&slot->lock);
    /* Not started yet: a client's cancel, or a shutdown, means it never needs to. */
    bool skip = atomic_load(&slot->cancelled) && (slot->cancel_style != CALL_CANCEL_FLAG ||
                                                  atomic_load(&slot->context->interrupted));
    slot->state = SLOT_RUNNING;
    rpcd_call *handle = slot_handle(slot->index, slot->generation);
    lock_release(&slot->lock);

    /* A call cancelled before it started never reaches its handler. */
    crash_call running = {slot->method->owner_name, slot->method->name, slot->id.data,
                          slot->id.length};
    const crash_call *outer = crash_call_enter(&running);
    call_handler_enter();
    int status = skip ? RPCD_ERR_CANCELLED
                      : slot->method->handler(handle, slot->params, slot->params_length,
                                              slot->method->user_data);
    call_handler_leave();
    crash_call_leave(outer);
    /* RPCD_DEFERRED came with ABI 1.1: from a plugin built before, 1 is an unknown status. */
    if (status == RPCD_DEFERRED && slot->method->abi_minor >= 1) {
        lock_take(&slot->lock);
        slot->state = SLOT_DEFERRED;
        if (!slot->completed_early) {
            lock_release(&slot->lock);
            return; /* call_complete ends it */
        }
        /* Under the same hold of the lock: a late call_complete finds the call ended. */
        call_finish_locked(slot, slot->early_status);
        return;
    }
    call_finish(slot->index, status);
}

int call_start(call_context *context, const call_request *request)
{
    uint32_t index;
    if (slot_acquire(&index) != 0)
        return CALL_NO_MEMORY;
    /* Nobody reads a slot's fields before it is active (see lock_live, call_cancel_all): they
     * are filled without its lock, which publishes them when active is set. */
    call_slot *slot = slot_at(index);
    slot->index = index;
    slot->context = context;
    slot->method = request->method;
    slot->batch = request->batch;
    slot->ticket = request->ticket;
    slot->is_request = request->id != NULL;
    slot->tracked = false;
    slot->token_state = TOKEN_UNKNOWN;
    slot->has_result = slot->result_is_params = slot->result_invalid = false;
    slot->failure_status = 0;
    slot->has_failure_message = slot->has_failure_data = false;
    slot->state = SLOT_QUEUED;
    slot->completed_early = false;
    slot->cancel_style = CALL_CANCEL_FLAG;
    slot->job.run = run_job;
    slot->serial_next = NO_SLOT;
    atomic_store(&slot->cancelled, false);
    int failed = 0;
    if (request->id)
        failed |= buf_append(&slot->id, request->id->start, request->id->length);
    slot->params = NULL;
    slot->params_length = 0;
    slot->shaper = request->shaper;
    slot->has_progress_params = request->progress_params != NULL;
    if (request->progress_params)
        failed |= buf_append(&slot->progress_params, request->progress_params->start,
                             request->progress_params->length);
    if (request->params) {
        /* The reader moves on to the next line (and a deferred call outlives this one): the
         * call keeps its own copy. */
        failed |= buf_append(&slot->params_copy, request->params->start, request->params->length);
        slot->params = slot->params_copy.data;
        slot->params_length = request->params->length;
    }
    slot->held_bytes = slot->params_length + slot->progress_params.length;
    if (failed) {
        slot_release(index);
        return CALL_NO_MEMORY;
    }

    bool run_now = true;
    lock_take(&context->lock);
    /* An id null cannot be told apart from another: only real ids are tracked. */
    bool trackable = request->id && js_kind_of(*request->id) != JS_NULL;
    if (trackable && find_id(context, request->id->start, request->id->length) != NO_SLOT) {
        lock_release(&context->lock);
        slot_release(index);
        return CALL_DUPLICATE_ID;
    }
    if (trackable)
        track_id(context, slot);
    if (request->method->flags & RPCD_METHOD_SERIALIZED &&
        request->method->index < context->serial_count) {
        serial_queue *queue = &context->serial[request->method->index];
        if (queue->busy) {
            if (queue->head == NO_SLOT)
                queue->head = index;
            else
                slot_at(queue->tail)->serial_next = index;
            queue->tail = index;
            run_now = false;
        } else {
            queue->busy = true;
            queue->head = queue->tail = NO_SLOT;
        }
    }
    context->in_flight++;
    context->in_flight_bytes += slot->held_bytes;
    lock_release(&context->lock);

    lock_take(&slot->lock);
    slot->active = true;
    lock_release(&slot->lock);
    if (slot->batch)
        batch_hold(slot->batch);
    bool quick = context->quick_on_reader && request->method->flags & RPCD_METHOD_QUICK &&
                 slot->params_length < QUICK_PARAMS_MOST;
    if (run_now && quick) {
        run_job(&slot->job); /* no hand-off: the call is over before the next line is read */
    } else if (run_now && context->grouping > 0 && context->pool) {
        if (context->group_last)
            context->group_last->next = &slot->job;
        else
            context->group_first = &slot->job;
        context->group_last = &slot->job;
        if (++context->group_count == GROUP_MOST)
            call_submit_group(context);
    } else if (run_now) {
        dispatch_slot(slot);
    }
    return CALL_STARTED;
}

void call_begin_group(call_context *context)
{
    context->grouping++;
}

void call_end_group(call_context *context)
{
    if (--context->grouping == 0)
        call_submit_group(context);
}

void call_submit_group(call_context *context)
{
    if (context->group_count == 0)
        return;
    exec_submit_chain(context->pool, context->group_first, context->group_last,
                      context->group_count);
    context->group_first = context->group_last = NULL;
    context->group_count = 0;
}
