/* SPDX-License-Identifier: MIT */
/*
 * Running calls: handing them to the executor (or running them here without workers), the
 * reading thread's groups of calls handed over together, and a call's run from its handler to
 * its end or its deferral.
 */
#include "call_internal.h"
#include "lock.h"

#include "crash_report.h"
#include "executor.h"

#include <stddef.h>

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
    bool skip = atomic_load(&slot->cancelled) &&
                (slot->cancel_style != CALL_CANCEL_FLAG || atomic_load(&slot->table->interrupted));
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
