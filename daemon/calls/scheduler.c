/* SPDX-License-Identifier: MIT */
/*
 * Running calls: a serialized method's calls one at a time in their order, the quick path (a
 * call run on the thread that starts it), the reading thread's groups of calls handed over
 * together, handing calls to the executor (or running them here without workers), and a call's
 * run from its handler to its end or its deferral.
 */
#include "calls/call_internal.h"
#include "base/lock.h"

#include "base/running_call.h"
#include "base/executor.h"

#include <stddef.h>

/* The most calls a group holds back before it hands them over. */
enum { GROUP_MOST = 64 };

/*
 * Quick calls with params this long go to a worker all the same: writing their response takes
 * the reader's time that reading the next lines could use.
 */
enum { QUICK_PARAMS_MOST = 64 * 1024 };

bool sched_take_turn(call_table *table, call_slot *slot)
{
    gen_serial *queue = gen_serial_of(slot->gen, slot->method);
    if (!queue)
        return true;
    if (!queue->busy) {
        queue->busy = true;
        queue->head = queue->tail = NO_SLOT;
        /* On the table's list while busy: a stop finds the calls waiting behind it there. */
        queue->busy_next = table->busy_serial;
        if (queue->busy_next)
            queue->busy_next->busy_link = &queue->busy_next;
        queue->busy_link = &table->busy_serial;
        table->busy_serial = queue;
        return true;
    }
    if (queue->head == NO_SLOT)
        queue->head = slot->index;
    else
        slot_at(queue->tail)->serial_next = slot->index;
    queue->tail = slot->index;
    return false;
}

call_slot *sched_pass_turn(generation *gen, const reg_method *method)
{
    gen_serial *queue = gen_serial_of(gen, method);
    if (!queue || !queue->busy)
        return NULL;
    if (queue->head == NO_SLOT) {
        queue->busy = false;
        *queue->busy_link = queue->busy_next;
        if (queue->busy_next)
            queue->busy_next->busy_link = queue->busy_link;
        return NULL;
    }
    call_slot *next = slot_at(queue->head);
    queue->head = next->serial_next;
    if (queue->head == NO_SLOT)
        queue->tail = NO_SLOT;
    return next;
}

void sched_take_waiting(call_table *table, exec_job **chain)
{
    for (gen_serial *queue = table->busy_serial; queue; queue = queue->busy_next) {
        while (queue->head != NO_SLOT) {
            call_slot *slot = slot_at(queue->head);
            queue->head = slot->serial_next;
            slot->job.next = *chain;
            *chain = &slot->job;
        }
        queue->tail = NO_SLOT;
    }
}

/* Queues a call for a worker, or runs it here when there are none. */
void sched_dispatch(call_slot *slot)
{
    if (slot->table->pool)
        exec_submit(slot->table->pool, &slot->job);
    else
        sched_run(&slot->job);
}

void sched_run(exec_job *job)
{
    call_slot *slot = (call_slot *)((char *)job - offsetof(call_slot, job));
    lock_take(&slot->lock);
    /* Not started yet: a client's cancel, or a shutdown, means it never needs to. */
    bool skip = slot->answered ||
                (atomic_load(&slot->cancelled) && (slot->cancel_style != CALL_CANCEL_FLAG ||
                                                   atomic_load(&slot->table->interrupted)));
    slot->state = SLOT_RUNNING;
    rpcd_call *handle = slot_handle(slot->index, slot->generation);
    lock_release(&slot->lock);

    /* A call cancelled before it started (or answered at its deadline while it waited) never
     * reaches its handler. */
    /* The one record of the running call: the crash report, the client's log lines and a stop's
     * view of this thread all read it. */
    running_call running = {
        slot->method->owner_name, slot->method->name, slot->id.data, slot->id.length, handle, NULL};
    running_call_enter(&running);
    int status = skip ? RPCD_ERR_CANCELLED
                      : slot->method->handler(handle, slot->params, slot->params_length,
                                              slot->method->user_data);
    running_call_leave(&running);
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

void sched_hand_over(call_table *table, call_slot *slot)
{
    /* A call with a deadline may be one whose handler does not return: on the reading thread
     * it would stop all reading. An isolated plugin's proxy (the methods with a cancel hook)
     * only queues a frame, and stays there. */
    bool quick = table->quick_on_reader && slot->method->flags & RPCD_METHOD_QUICK &&
                 slot->params_length < QUICK_PARAMS_MOST &&
                 (slot->timeout_ms == 0 || slot->method->cancel_hook);
    if (quick) {
        sched_run(&slot->job); /* no hand-off: the call is over before the next line is read */
    } else if (table->grouping > 0 && table->pool) {
        if (table->group_last)
            table->group_last->next = &slot->job;
        else
            table->group_first = &slot->job;
        table->group_last = &slot->job;
        if (++table->group_count == GROUP_MOST)
            call_submit_group(table);
    } else {
        sched_dispatch(slot);
    }
}

void call_begin_group(call_table *table)
{
    table->grouping++;
}

void call_end_group(call_table *table)
{
    if (--table->grouping == 0)
        call_submit_group(table);
}

void call_submit_group(call_table *table)
{
    if (table->group_count == 0)
        return;
    exec_submit_chain(table->pool, table->group_first, table->group_last, table->group_count);
    table->group_first = table->group_last = NULL;
    table->group_count = 0;
}
