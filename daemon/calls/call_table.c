/* SPDX-License-Identifier: MIT */
/*
 * The call table: the ids of the calls in flight (a duplicate is refused, a cancel finds its
 * call), how many calls and params bytes are in flight (the reader's back-pressure waits),
 * cancellation, one call or all, and whether the reader has more input buffered.
 */
#include "calls/call_internal.h"
#include "base/lock.h"

#include "base/clock.h"
#include "base/executor.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/stop_signals.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int call_table_new(const call_settings *settings, call_table **out)
{
    call_table *table = calloc(1, sizeof *table);
    if (!table)
        return -1;
    table->out = settings->out;
    table->limits = settings->limits;
    if (table->limits.max_in_flight == 0)
        table->limits.max_in_flight = 1;
    if (table->limits.max_in_flight_bytes == 0)
        table->limits.max_in_flight_bytes = SIZE_MAX;
    /* One worker promises one call at a time: a quick call beside it would break that. */
    table->quick_on_reader = settings->limits.workers != 1;
    pthread_mutex_init(&table->lock, NULL);
    /* Its waits are timed by the monotonic clock: a change of the date stretches none of them. */
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&table->changed, &monotonic);
    pthread_mutex_init(&table->heap_lock, NULL);
    pthread_cond_init(&table->heap_changed, &monotonic);
    pthread_condattr_destroy(&monotonic);
    table->id_bucket_count = 64;
    table->id_buckets = malloc(table->id_bucket_count * sizeof *table->id_buckets);
    if (!table->id_buckets ||
        (settings->limits.workers > 0 && exec_new(settings->limits.workers, &table->pool) != 0)) {
        free(table->id_buckets);
        deadline_stop(table);
        free(table);
        return -1;
    }
    for (size_t i = 0; i < table->id_bucket_count; i++)
        table->id_buckets[i] = NO_SLOT;
    *out = table;
    return 0;
}

void call_table_free(call_table *table)
{
    if (!table)
        return;
    call_wait_idle(table, -1);
    deadline_stop(table);
    exec_free(table->pool);
    pthread_cond_destroy(&table->changed);
    pthread_mutex_destroy(&table->lock);
    free(table->id_buckets);
    free(table);
}

/* The slot in flight with exactly this id text, or NO_SLOT. Table lock held. */
uint32_t table_find_id(const call_table *table, const char *id, size_t length)
{
    size_t bucket = reg_hash(id, length) & (table->id_bucket_count - 1);
    for (uint32_t index = table->id_buckets[bucket]; index != NO_SLOT;) {
        call_slot *slot = slot_at(index);
        if (slot->id.length == length && memcmp(slot->id.data, id, length) == 0)
            return index;
        index = slot->id_next;
    }
    return NO_SLOT;
}

/* Doubles the id table when it gets crowded; keeps it as it is when memory runs out. */
static void grow_ids(call_table *table)
{
    size_t count = table->id_bucket_count * 2;
    uint32_t *buckets = malloc(count * sizeof *buckets);
    if (!buckets)
        return;
    for (size_t i = 0; i < count; i++)
        buckets[i] = NO_SLOT;
    for (size_t i = 0; i < table->id_bucket_count; i++) {
        for (uint32_t index = table->id_buckets[i]; index != NO_SLOT;) {
            call_slot *slot = slot_at(index);
            uint32_t next = slot->id_next;
            size_t bucket = reg_hash(slot->id.data, slot->id.length) & (count - 1);
            slot->id_next = buckets[bucket];
            buckets[bucket] = index;
            index = next;
        }
    }
    free(table->id_buckets);
    table->id_buckets = buckets;
    table->id_bucket_count = count;
}

/* Table lock held. */
void table_track_id(call_table *table, call_slot *slot)
{
    if (table->tracked_count >= table->id_bucket_count)
        grow_ids(table);
    size_t bucket = reg_hash(slot->id.data, slot->id.length) & (table->id_bucket_count - 1);
    slot->id_next = table->id_buckets[bucket];
    table->id_buckets[bucket] = slot->index;
    slot->tracked = true;
    table->tracked_count++;
}

/* Table lock held. */
void table_untrack_id(call_table *table, call_slot *slot)
{
    size_t bucket = reg_hash(slot->id.data, slot->id.length) & (table->id_bucket_count - 1);
    for (uint32_t *link = &table->id_buckets[bucket]; *link != NO_SLOT;
         link = &slot_at(*link)->id_next) {
        if (*link == slot->index) {
            *link = slot->id_next;
            break;
        }
    }
    slot->tracked = false;
    table->tracked_count--;
}

static bool has_room(call_table *table)
{
    return atomic_load(&table->in_flight) < table->limits.max_in_flight;
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
static void wait_for_change(call_table *table)
{
    struct timespec deadline;
    deadline_in(INTERRUPT_CHECK_MS, &deadline);
    pthread_cond_timedwait(&table->changed, &table->lock, &deadline);
    stop_signals_deliver_pending();
}

int call_wait_for_room(call_table *table)
{
    /* Changed under the lock, read here without it: this runs once per request, and taking the
     * lock the finishing workers take showed as contention in the throughput profile. */
    if (has_room(table))
        return atomic_load(&table->interrupted) ? -1 : 0;

    /* Held calls of a group count in flight: they must run, or nothing would ever end. */
    call_submit_group(table);

    /* The reader stops reading: what is written meanwhile must go out at once. */
    log_message(LOG_DEBUG, "%zu calls in flight (max_in_flight): reading paused",
                table->limits.max_in_flight);
    stop_signals_hold();
    out_set_reader_idle(table->out, true);
    pthread_mutex_lock(&table->lock);
    while (!has_room(table) && !atomic_load(&table->interrupted))
        wait_for_change(table);
    pthread_mutex_unlock(&table->lock);
    stop_signals_release();
    out_set_reader_idle(table->out, false);
    return atomic_load(&table->interrupted) ? -1 : 0;
}

void call_wait_for_bytes(call_table *table)
{
    if (atomic_load(&table->in_flight_bytes) < table->limits.max_in_flight_bytes)
        return;
    log_message(LOG_DEBUG, "calls in flight hold %zu bytes (max_in_flight_bytes): reading paused",
                atomic_load(&table->in_flight_bytes));
    stop_signals_hold();
    pthread_mutex_lock(&table->lock);
    while (table->in_flight_bytes >= table->limits.max_in_flight_bytes &&
           !atomic_load(&table->interrupted))
        wait_for_change(table);
    pthread_mutex_unlock(&table->lock);
    stop_signals_release();
}

void call_interrupt_waits(call_table *table)
{
    lock_take(&table->lock);
    atomic_store(&table->interrupted, true);
    pthread_cond_broadcast(&table->changed);
    lock_release(&table->lock);
}

void call_interrupt_waits_from_signal(call_table *table)
{
    atomic_store(&table->interrupted, true);
}

/* Calls in flight not answered yet (with count_answered, all of them). Table lock held. */
static size_t unanswered(const call_table *table, bool count_answered)
{
    size_t count = table->in_flight;
    return count_answered ? count : count - atomic_load(&table->answered_in_flight);
}

static int wait_until_none(call_table *table, int timeout_ms, bool count_answered)
{
    struct timespec deadline;
    deadline_in(timeout_ms >= 0 ? timeout_ms : 0, &deadline);
    pthread_mutex_lock(&table->lock);
    int status = 0;
    while (unanswered(table, count_answered) > 0) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&table->changed, &table->lock);
        } else if (pthread_cond_timedwait(&table->changed, &table->lock, &deadline) != 0) {
            status = unanswered(table, count_answered) > 0 ? -1 : 0;
            break;
        }
    }
    pthread_mutex_unlock(&table->lock);
    return status;
}

int call_wait_idle(call_table *table, int timeout_ms)
{
    return wait_until_none(table, timeout_ms, true);
}

int call_wait_answered(call_table *table, int timeout_ms)
{
    return wait_until_none(table, timeout_ms, false);
}

void table_mark_cancelled(call_slot *slot, int style)
{
    if (!atomic_load(&slot->cancelled) || style < slot->cancel_style)
        slot->cancel_style = style;
    atomic_store(&slot->cancelled, true);
}

/*
 * A method with a cancel hook (an isolated plugin's) is told of the cancellation of a call its
 * handler has started, once no lock is held: the hook takes its own.
 */
void table_note_hook(const call_slot *slot, const reg_method **hooked, rpcd_call **handle)
{
    if (slot->method->cancel_hook && slot->state != SLOT_QUEUED) {
        *hooked = slot->method;
        *handle = slot_handle(slot->index, slot->generation);
    }
}

int call_cancel(call_table *table, js_span id, int style)
{
    const reg_method *hooked = NULL;
    rpcd_call *handle = NULL;
    lock_take(&table->lock);
    uint32_t index = table_find_id(table, id.start, id.length);
    if (index != NO_SLOT) {
        call_slot *slot = slot_at(index);
        lock_take(&slot->lock);
        table_mark_cancelled(slot, style);
        table_note_hook(slot, &hooked, &handle);
        lock_release(&slot->lock);
    }
    lock_release(&table->lock);
    /* The call may have ended since: its handle is then stale, which the hook finds out. */
    if (hooked)
        hooked->cancel_hook(handle, hooked->user_data);
    return index != NO_SLOT;
}

void call_cancel_all(call_table *table)
{
    /* Every slot of the store: only this table's active ones are touched. */
    uint32_t total = slot_count();
    for (uint32_t index = 0; index < total; index++) {
        call_slot *slot = slot_at(index);
        const reg_method *hooked = NULL;
        rpcd_call *handle = NULL;
        lock_take(&slot->lock);
        if (slot->active && slot->table == table) {
            table_mark_cancelled(slot, CALL_CANCEL_FLAG);
            table_note_hook(slot, &hooked, &handle);
        }
        lock_release(&slot->lock);
        if (hooked)
            hooked->cancel_hook(handle, hooked->user_data);
    }
}

/* Copies what call_view shows of a live slot. Slot lock held. */
static void view_slot(const call_slot *slot, long long now_us, call_view *view)
{
    memset(view, 0, sizeof *view);
    size_t length = slot->is_request ? slot->id.length : 0;
    view->id_cut = length >= sizeof view->id;
    if (view->id_cut)
        length = sizeof view->id - 1;
    if (length)
        memcpy(view->id, slot->id.data, length);
    reg_printable_name(slot->method->name, slot->method->name_length, view->method,
                       sizeof view->method);
    const char *plugin = slot->method->owner_name ? slot->method->owner_name : "";
    reg_printable_name(plugin, strlen(plugin), view->plugin, sizeof view->plugin);
    view->age_ms = slot->started_us ? (now_us - slot->started_us) / 1000 : -1;
    view->running = slot->state != SLOT_QUEUED;
    view->cancelled = atomic_load(&slot->cancelled);
    view->answered = slot->answered;
    view->has_progress = slot->has_progress;
    view->progress_done = slot->progress_done;
    view->progress_total = slot->progress_total;
}

size_t call_list(call_table *table, call_view_fn *each, void *context)
{
    size_t count = 0;
    long long now_us = clock_now_us();
    uint32_t total = slot_count();
    for (uint32_t index = 0; index < total; index++) {
        call_slot *slot = slot_at(index);
        call_view view;
        lock_take(&slot->lock);
        bool ours = slot->active && slot->table == table;
        if (ours)
            view_slot(slot, now_us, &view);
        lock_release(&slot->lock);
        if (ours) {
            each(context, &view);
            count++;
        }
    }
    return count;
}

void call_let_go_generation(void *context, generation *gen)
{
    call_table *table = context;
    lock_take(&table->lock);
    bool calls_left = gen_reader_leaves(gen);
    lock_release(&table->lock);
    if (!calls_left)
        gen_release(gen);
}

void call_set_input_waiting(call_table *table, bool waiting)
{
    atomic_store_explicit(&table->input_waiting, waiting, memory_order_relaxed);
}

_Thread_local call_deferred_counts call_deferred;

void call_note_read(call_table *table)
{
    table->read_us = mx_on() ? clock_now_us() : 0;
    call_deferred.on = true;
}

void call_count_deferred_now(void)
{
    if (call_deferred.count == 0)
        return;
    long long now = clock_now_us();
    for (size_t i = 0; i < call_deferred.count; i++) {
        const call_deferred_count *item = &call_deferred.items[i];
        mx_count_calls(item->series, item->outcome, now - item->started_us, item->calls,
                       item->bytes_in, item->bytes_out);
    }
    call_deferred.count = 0;
}

void call_count_deferred(call_table *table)
{
    (void)table;
    call_count_deferred_now();
}

bool call_caller_may_wait(rpcd_call *call)
{
    call_slot *slot = slot_lock_live(call);
    if (!slot)
        return false;
    bool may =
        !slot->batch && !atomic_load_explicit(&slot->table->input_waiting, memory_order_relaxed);
    lock_release(&slot->lock);
    return may;
}
