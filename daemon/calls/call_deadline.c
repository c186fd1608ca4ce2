/* SPDX-License-Identifier: MIT */
/*
 * Deadlines: one watcher thread per call table keeps a heap of the calls that have one, and at
 * a call's deadline cancels it and answers it with -32603 "timed out". Its handler keeps its
 * worker until it returns: only a process of its own can stop it (isolation = process).
 */
#include "calls/call_internal.h"
#include "base/lock.h"

#include "base/clock.h"
#include "base/log.h"
#include "base/signals.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct deadline_entry {
    long long due_ms;    /* clock_now_ms at the deadline */
    uint32_t index;      /* the slot */
    uint32_t generation; /* its call's: the slot may have gone on to another call since */
};

/* ---- The request's deadline ------------------------------------------------------------- */

/* A JSON number that is a whole number from 1 to CALL_DEADLINE_MOST: 0 and *ms, or -1. */
static int whole_ms(js_span value, size_t *ms)
{
    if (js_kind_of(value) != JS_NUMBER || value.length > 8 || value.start[0] == '0')
        return -1;
    size_t number = 0;
    for (size_t i = 0; i < value.length; i++) {
        if (value.start[i] < '0' || value.start[i] > '9')
            return -1;
        number = number * 10 + (size_t)(value.start[i] - '0');
    }
    if (number > CALL_DEADLINE_MOST)
        return -1;
    *ms = number;
    return 0;
}

int deadline_of_request(const call_slot *slot, size_t *timeout_ms)
{
    *timeout_ms = slot->method->timeout_ms;
    /* Most params have no _meta: they are not scanned for it. */
    const char *params = slot->has_progress_params ? slot->progress_params.data : slot->params;
    size_t length = slot->has_progress_params ? slot->progress_params.length : slot->params_length;
    if (length == 0 || !memmem(params, length, "_meta", 5))
        return 0;
    /* _meta or its timeout_ms given twice asks nothing, as for a progress token: which one the
     * client meant is not for rpcd to guess. */
    js_span value;
    int found = call_find_meta(slot, "timeout_ms", &value);
    size_t asked;
    if (found > 0 && whole_ms(value, &asked) != 0)
        return -1;
    /* A client may ask for less than the config allows, never more. */
    if (found > 0 && (*timeout_ms == 0 || asked < *timeout_ms))
        *timeout_ms = asked;
    return 0;
}

/* ---- The heap (heap lock held) ------------------------------------------------------------ */

static void heap_put(call_table *table, size_t place, struct deadline_entry entry)
{
    table->heap[place] = entry;
    slot_at(entry.index)->heap_place = place + 1;
}

static void sift_up(call_table *table, size_t place)
{
    struct deadline_entry entry = table->heap[place];
    while (place > 0) {
        size_t parent = (place - 1) / 2;
        if (table->heap[parent].due_ms <= entry.due_ms)
            break;
        heap_put(table, place, table->heap[parent]);
        place = parent;
    }
    heap_put(table, place, entry);
}

static void sift_down(call_table *table, size_t place)
{
    struct deadline_entry entry = table->heap[place];
    for (;;) {
        size_t child = place * 2 + 1;
        if (child >= table->heap_count)
            break;
        if (child + 1 < table->heap_count &&
            table->heap[child + 1].due_ms < table->heap[child].due_ms)
            child++;
        if (entry.due_ms <= table->heap[child].due_ms)
            break;
        heap_put(table, place, table->heap[child]);
        place = child;
    }
    heap_put(table, place, entry);
}

static void heap_remove(call_table *table, size_t place)
{
    slot_at(table->heap[place].index)->heap_place = 0;
    if (--table->heap_count == place)
        return;
    uint32_t moved = table->heap[table->heap_count].index;
    table->heap[place] = table->heap[table->heap_count];
    sift_down(table, place);
    sift_up(table, slot_at(moved)->heap_place - 1);
}

/* ---- A call at its deadline ---------------------------------------------------------------- */

/*
 * Answers the call due names at its deadline, unless it has ended (its slot may have gone on to
 * another call) or was answered: cancelled as a client's cancel would, its id free again, and its
 * response written now, once. The handler's own outcome, whenever it comes, is dropped.
 */
static void time_out(call_table *table, struct deadline_entry due)
{
    uint32_t index = due.index;
    call_slot *slot = slot_at(index);
    const reg_method *hooked = NULL;
    rpcd_call *handle = NULL;
    /* The table's lock, then the slot's, as call_cancel takes them. */
    lock_take(&table->lock);
    lock_take(&slot->lock);
    if (!slot->active || slot->generation != due.generation || slot->table != table ||
        slot->answered) {
        lock_release(&slot->lock);
        lock_release(&table->lock);
        return;
    }
    slot->answered = true;
    table_mark_cancelled(slot, CALL_CANCEL_FLAG);
    /* The id is free before the answer leaves, as at any call's end. */
    if (slot->tracked)
        table_untrack_id(table, slot);
    atomic_fetch_add(&table->answered_in_flight, 1);
    pthread_cond_broadcast(&table->changed);
    lock_release(&table->lock);

    /* A client that cancelled gets what it asked for: -32800, or nothing. */
    bool silent = slot->cancel_style == CALL_CANCEL_SILENT;
    int status = RPCD_ERR_CANCELLED;
    if (slot->cancel_style != CALL_CANCEL_RESPOND) {
        char detail[96], data[64];
        snprintf(detail, sizeof detail, "no answer within timeout_ms (%zu ms)", slot->timeout_ms);
        snprintf(data, sizeof data, "{\"timed_out\":true,\"timeout_ms\":%zu}", slot->timeout_ms);
        status = call_record_exception(slot, "timed out", detail, data, strlen(data));
    }
    call_outcome outcome;
    call_write_response(slot, status, silent, &outcome);
    call_observe_end(slot, &outcome);
    slot->ticket = 0;
    /* A batch's array waits for its items' answers, not for their handlers. */
    call_batch *batch = slot->batch;
    slot->batch = NULL;
    table_note_hook(slot, &hooked, &handle);
    if (log_get_level() >= LOG_DEBUG) {
        reg_shown shown;
        reg_show(slot->method, &shown);
        log_message(LOG_DEBUG, "%s: a call of %s answered at its deadline (%zu ms)", shown.plugin,
                    shown.method, slot->timeout_ms);
    }
    lock_release(&slot->lock);
    if (batch)
        call_batch_release(batch);
    if (hooked)
        hooked->cancel_hook(handle, hooked->user_data);
}

bool call_answered_at_deadline(rpcd_call *call)
{
    call_slot *slot = slot_lock_live(call);
    if (!slot)
        return false;
    bool answered = slot->answered;
    lock_release(&slot->lock);
    return answered;
}

/* ---- The watcher ------------------------------------------------------------------------ */

enum { DUE_ROOM = 64 };

static void *watch_main(void *context)
{
    call_table *table = context;
    struct deadline_entry due[DUE_ROOM];
    pthread_mutex_lock(&table->heap_lock);
    while (!table->watch_stopping) {
        long long now = clock_now_ms();
        size_t count = 0;
        while (table->heap_count > 0 && table->heap[0].due_ms <= now && count < DUE_ROOM) {
            due[count++] = table->heap[0];
            heap_remove(table, 0);
        }
        if (count > 0) {
            pthread_mutex_unlock(&table->heap_lock);
            for (size_t i = 0; i < count; i++)
                time_out(table, due[i]);
            /* The reader may be busy with a burst of lines: the answers go out now. */
            out_flush(table->out);
            pthread_mutex_lock(&table->heap_lock);
            continue;
        }
        if (table->heap_count == 0) {
            pthread_cond_wait(&table->heap_changed, &table->heap_lock);
        } else {
            long long at = table->heap[0].due_ms;
            struct timespec until = clock_timespec_of_ms(at);
            pthread_cond_timedwait(&table->heap_changed, &table->heap_lock, &until);
        }
    }
    pthread_mutex_unlock(&table->heap_lock);
    return NULL;
}

/* Starts the watcher (heap lock held). Returns 0, or -1 with errno. */
static int start_watcher(call_table *table)
{
    /* rpcd's signals go to its own threads: the watcher takes none but its own faults. */
    int error = sig_start_quiet_thread(&table->watcher, watch_main, table);
    if (error != 0) {
        errno = error;
        return -1;
    }
    table->watching = true;
    return 0;
}

int deadline_start(call_table *table)
{
    pthread_mutex_lock(&table->heap_lock);
    int status = 0;
    if (!table->watching && start_watcher(table) != 0) {
        log_message(LOG_ERROR, "cannot start the thread that keeps deadlines: %s", strerror(errno));
        status = -1;
    }
    pthread_mutex_unlock(&table->heap_lock);
    return status;
}

int deadline_arm(call_table *table, call_slot *slot)
{
    long long due = clock_now_ms() + (long long)slot->timeout_ms;
    pthread_mutex_lock(&table->heap_lock);
    if (table->heap_count == table->heap_capacity) {
        size_t capacity = table->heap_capacity ? table->heap_capacity * 2 : 64;
        struct deadline_entry *grown = realloc(table->heap, capacity * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&table->heap_lock);
            return -1;
        }
        table->heap = grown;
        table->heap_capacity = capacity;
    }
    size_t place = table->heap_count++;
    heap_put(table, place, (struct deadline_entry){due, slot->index, slot->generation});
    sift_up(table, place);
    /* Only a new earliest deadline changes when the watcher must wake. */
    if (slot->heap_place == 1)
        pthread_cond_signal(&table->heap_changed);
    pthread_mutex_unlock(&table->heap_lock);
    return 0;
}

void deadline_disarm(call_table *table, call_slot *slot)
{
    pthread_mutex_lock(&table->heap_lock);
    if (slot->heap_place > 0)
        heap_remove(table, slot->heap_place - 1);
    pthread_mutex_unlock(&table->heap_lock);
}

void deadline_stop(call_table *table)
{
    pthread_mutex_lock(&table->heap_lock);
    table->watch_stopping = true;
    pthread_cond_broadcast(&table->heap_changed);
    bool watching = table->watching;
    pthread_mutex_unlock(&table->heap_lock);
    if (watching)
        pthread_join(table->watcher, NULL);
    free(table->heap);
    table->heap = NULL;
    pthread_cond_destroy(&table->heap_changed);
    pthread_mutex_destroy(&table->heap_lock);
}
