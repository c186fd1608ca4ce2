/* SPDX-License-Identifier: MIT */
/*
 * The call table: the ids of the calls in flight (a duplicate is refused, a cancel finds its
 * call), how many calls and params bytes are in flight (the reader's back-pressure waits), and
 * cancellation, one call or all.
 */
#include "call_internal.h"
#include "lock.h"

#include "executor.h"
#include "log.h"
#include "stop_signals.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
uint32_t find_id(const call_context *context, const char *id, size_t length)
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
void track_id(call_context *context, call_slot *slot)
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
void untrack_id(call_context *context, call_slot *slot)
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
