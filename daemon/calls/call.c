/* SPDX-License-Identifier: MIT */
/*
 * A call from start to end: its slot filled from the request, its id tracked, its place behind
 * a serialized method taken, and at its end the response, the bookkeeping and the next call of
 * its serialized method. Each slot keeps its buffers from one call to the next, so a steady
 * stream of calls allocates nothing once the slots in use have warmed up.
 */
#include "calls/call_internal.h"
#include "base/clock.h"
#include "base/lock.h"
#include "base/metrics.h"

#include "base/buffer.h"
#include "base/executor.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

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
    call_table *table = slot->table;
    slot->active = false;
    slot->generation++; /* from here on, the plugin's handle is stale */
    bool cancelled = atomic_load(&slot->cancelled);
    int style = slot->cancel_style;
    bool answered = slot->answered; /* at its deadline: the answer is out, the id free */
    lock_release(&slot->lock);
    if (slot->timeout_ms)
        deadline_disarm(table, slot);

    if (cancelled && style == CALL_CANCEL_RESPOND)
        status = RPCD_ERR_CANCELLED; /* the client asked, and gets the answer it expects */
    /* The id is free before the response leaves: a client that reuses it as soon as it reads
     * the answer must not be told the call is still in flight. The call itself counts as in
     * flight until its response is out, so that max_in_flight bounds what is not answered yet. */
    if (slot->tracked) {
        lock_take(&table->lock);
        table_untrack_id(table, slot);
        lock_release(&table->lock);
    }
    if (!answered) {
        call_outcome outcome;
        call_write_response(slot, status, cancelled && style == CALL_CANCEL_SILENT, &outcome);
        call_observe_end(slot, &outcome);
        /* A sink hears of every end, one without a response too. */
        if (slot->sink && !slot->sink_told)
            slot->sink->deliver(slot->sink_context, NULL, 0);
    }

    if (slot->batch)
        call_batch_release(slot->batch);
    generation *gen = slot->gen;
    const reg_method *method = slot->method;
    size_t held_bytes = slot->held_bytes;
    slot_release(index);

    call_slot *next = NULL;
    lock_take(&table->lock);
    if (method->flags & RPCD_METHOD_SERIALIZED)
        next = sched_pass_turn(gen, method);
    /* The last touch of the table: once nothing is in flight, its owner may free it and the
     * output while this thread (a worker, or a plugin's own after call_complete) goes on. A next
     * call is itself in flight. */
    bool last_of_gen = gen_call_ended(gen);
    table->in_flight--;
    table->in_flight_bytes -= held_bytes;
    if (answered)
        table->answered_in_flight--;
    pthread_cond_broadcast(&table->changed);
    lock_release(&table->lock);
    if (last_of_gen)
        gen_release_after_call(gen); /* its plugins may go: nothing of them is used after */
    if (next)
        sched_dispatch(next);
}

/* Fills a free slot from request. Returns 0, or -1 when memory ran out copying its text. */
static int fill_slot(call_slot *slot, uint32_t index, call_table *table,
                     const call_request *request)
{
    /* Nobody reads a slot's fields before it is active (see lock_live, call_cancel_all): they
     * are filled without its lock, which publishes them when active is set. */
    slot->index = index;
    slot->table = table;
    slot->gen = request->gen;
    slot->method = request->method;
    slot->batch = request->batch;
    slot->ticket = request->sink ? 0 : request->ticket; /* a sink answers the request */
    slot->is_request = request->id != NULL;
    slot->tracked = false;
    slot->token_state = TOKEN_UNKNOWN;
    slot->has_result = slot->result_is_params = slot->result_invalid = false;
    slot->result_complete = slot->result_refused = false;
    slot->failure_status = 0;
    slot->failure_code = 0;
    slot->exception[0] = '\0';
    slot->logged = call_log_on();
    slot->counted = mx_on() && request->method->series;
    /* The access log times the call itself; the counters time it from the read of its line,
     * taken once per read, so that counting costs one clock read per call, not two. */
    slot->started_us = slot->logged    ? clock_now_us()
                       : slot->counted ? (table->read_us ? table->read_us : clock_now_us())
                                       : 0;
    slot->has_progress = false;
    slot->has_failure_message = slot->has_failure_data = false;
    slot->state = SLOT_QUEUED;
    slot->completed_early = false;
    slot->cancel_style = CALL_CANCEL_FLAG;
    slot->answered = false;
    slot->heap_place = 0;
    slot->job.run = sched_run;
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
    slot->ask_capabilities = request->asker ? request->ask_capabilities : 0;
    slot->asker = request->asker;
    slot->asker_context = request->asker_context;
    slot->question_count = 0;
    slot->has_next_state = false;
    slot->has_round_state = request->has_state;
    failed |= buf_append(&slot->answers, request->answers.start, request->answers.length);
    failed |= buf_append(&slot->round_state, request->state.start, request->state.length);
    slot->held_bytes = slot->params_length + slot->progress_params.length + slot->answers.length +
                       slot->round_state.length;
    slot->timeout_ms = 0;
    slot->max_result_bytes = request->max_result_bytes;
    slot->result_cap_rule = request->result_cap_rule;
    slot->result_capped = false;
    slot->sink = request->sink;
    slot->sink_context = request->sink_context;
    slot->sink_told = false;
    return failed ? -1 : 0;
}

int call_start(call_table *table, const call_request *request)
{
    uint32_t index;
    if (slot_acquire(&index) != 0)
        return CALL_NO_MEMORY;
    call_slot *slot = slot_at(index);
    if (fill_slot(slot, index, table, request) != 0) {
        slot_release(index);
        return CALL_NO_MEMORY;
    }
    size_t timeout_ms;
    if (deadline_of_request(slot, &timeout_ms) != 0) {
        slot_release(index);
        return CALL_BAD_DEADLINE;
    }
    /* Its watcher starts before a lock is taken (see lock.h); without it (no thread), the call
     * goes without a deadline. */
    if (timeout_ms && deadline_start(table) != 0)
        timeout_ms = 0;
    slot->timeout_ms = timeout_ms;

    lock_take(&table->lock);
    /* An id null cannot be told apart from another: only real ids are tracked. */
    bool trackable = request->id && js_kind_of(*request->id) != JS_NULL;
    if (trackable && table_find_id(table, request->id->start, request->id->length) != NO_SLOT) {
        lock_release(&table->lock);
        slot_release(index);
        return CALL_DUPLICATE_ID;
    }
    if (trackable)
        table_track_id(table, slot);
    bool run_now =
        !(request->method->flags & RPCD_METHOD_SERIALIZED) || sched_take_turn(table, slot);
    gen_call_started(slot->gen);
    table->in_flight++;
    table->in_flight_bytes += slot->held_bytes;
    if (slot->batch)
        call_batch_hold(slot->batch);
    /* Armed before the call runs (a deadline counts from the read, time waiting for a worker
     * included), and the call whole once the table's lock is let go: the watcher takes that
     * lock first, and a serialized call may be handed on by another thread from then on. */
    if (timeout_ms && deadline_arm(table, slot) != 0)
        slot->timeout_ms = 0;
    lock_take(&slot->lock);
    slot->active = true;
    lock_release(&slot->lock);
    lock_release(&table->lock);

    if (run_now)
        sched_hand_over(table, slot);
    return CALL_STARTED;
}
