/* SPDX-License-Identifier: MIT */
/*
 * Calls at the end of serving: every call that never ran is answered (-32800, with a detail
 * saying why), and the calls still running are named, plugin, method and id, as they are when
 * they hold the pool for long while serving. The end comes twice:
 * for the reading thread, and async-signal-safe for the end of a grace period that the reading
 * thread cannot keep itself.
 */
#include "calls/call_internal.h"
#include "base/running_call.h"
#include "base/lock.h"

#include "base/log.h"
#include "wire/response_line.h"
#include "wire/rpc_error.h"

#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char never_ran_detail[] = RPCERR_NEVER_RAN_DETAIL;

static call_slot *slot_of_job(exec_job *job)
{
    return (call_slot *)((char *)job - offsetof(call_slot, job));
}

/* Appends chain b to the end of chain a. */
static exec_job *join_chains(exec_job *a, exec_job *b)
{
    if (!a)
        return b;
    exec_job *last = a;
    while (last->next)
        last = last->next;
    last->next = b;
    return a;
}

void call_end_unstarted(call_table *table)
{
    exec_job *chain = NULL;
    lock_take(&table->lock);
    sched_take_waiting(table, &chain);
    lock_release(&table->lock);
    exec_job *queued = NULL;
    if (table->pool)
        exec_take_queued(table->pool, false, &queued);
    chain = join_chains(chain, queued);
    while (chain) {
        call_slot *slot = slot_of_job(chain);
        chain = chain->next;
        lock_take(&slot->lock);
        /* The reason goes into error.data.detail, as a plugin's call_fail message would; a call
         * the client cancelled itself is answered as it asked. */
        if (slot->cancel_style == CALL_CANCEL_FLAG || !atomic_load(&slot->cancelled)) {
            buf_clear(&slot->failure_message);
            slot->has_failure_message =
                buf_append(&slot->failure_message, never_ran_detail, sizeof never_ran_detail) == 0;
            slot->has_failure_data = false;
            slot->failure_status = RPCD_ERR_CANCELLED;
        }
        lock_release(&slot->lock);
        call_finish(slot->index, RPCD_ERR_CANCELLED);
    }
}

/* What a log line needs of a call, copied under its lock. */
typedef struct call_name {
    reg_shown names; /* escaped: they come from the plugin */
    char id[96];
    size_t id_length;
    bool deferred;
    bool answered; /* at its deadline */
} call_name;

/* Copies the name of the call in slot when it belongs to table and has started. */
static bool name_of(call_slot *slot, const call_table *table, call_name *name)
{
    if (!slot->active || slot->table != table || slot->state == SLOT_QUEUED)
        return false;
    reg_show(slot->method, &name->names);
    name->deferred = slot->state == SLOT_DEFERRED;
    name->answered = slot->answered;
    name->id_length = slot->is_request ? slot->id.length : 0;
    if (name->id_length > sizeof name->id - 4) {
        memcpy(name->id, slot->id.data, sizeof name->id - 4);
        memcpy(name->id + sizeof name->id - 4, "...", 3);
        name->id_length = sizeof name->id - 1;
    } else if (name->id_length > 0) {
        memcpy(name->id, slot->id.data, name->id_length);
    }
    return true;
}

/* How long a signal handler tries each lock before it does without. */
enum { SIGNAL_LOCK_WAIT_MS = 100 };

/* A lock for a signal handler: tried for a while, never waited on (its holder may be stuck). */
static bool try_lock_a_while(pthread_mutex_t *mutex)
{
    int wait_ms = SIGNAL_LOCK_WAIT_MS;
    return lock_try_for(mutex, &wait_ms) == 0;
}

/*
 * Logs one line for each call of table that has started and not ended. From a signal handler,
 * the line is built without printf and the slot locks are only tried (a slot whose lock stays
 * taken goes unnamed).
 */
static size_t log_running(call_table *table, int level, const char *situation, bool from_signal)
{
    size_t count = 0;
    uint32_t total = slot_count();
    for (uint32_t index = 0; index < total; index++) {
        call_slot *slot = slot_at(index);
        call_name name;
        if (!from_signal)
            lock_take(&slot->lock);
        else if (!try_lock_a_while(&slot->lock))
            continue;
        bool named = name_of(slot, table, &name);
        lock_release(&slot->lock);
        if (!named)
            continue;
        count++;
        const char *id_head = name.id_length > 0 ? ", id " : ", a notification";
        const char *deferred = name.deferred ? " (deferred, not completed)" : "";
        const char *answered = name.answered ? " (answered at its deadline)" : "";
        if (!from_signal) {
            log_message(level, "%s: plugin %s, method %s%s%.*s%s%s", situation, name.names.plugin,
                        name.names.method, id_head, (int)name.id_length, name.id, deferred,
                        answered);
            continue;
        }
        log_line line;
        log_line_start(&line, level);
        log_line_add(&line, situation);
        log_line_add(&line, ": plugin ");
        log_line_add(&line, name.names.plugin);
        log_line_add(&line, ", method ");
        log_line_add(&line, name.names.method);
        log_line_add(&line, id_head);
        log_line_addn(&line, name.id, name.id_length);
        log_line_add(&line, deferred);
        log_line_add(&line, answered);
        log_line_end(&line);
    }
    return count;
}

size_t call_log_running(call_table *table, int level, const char *situation)
{
    return log_running(table, level, situation, false);
}

void call_drop_running_tickets(call_table *table)
{
    uint32_t total = slot_count();
    for (uint32_t index = 0; index < total; index++) {
        call_slot *slot = slot_at(index);
        lock_take(&slot->lock);
        uint64_t ticket = 0;
        if (slot->active && slot->table == table && slot->state != SLOT_QUEUED)
            ticket = slot->ticket;
        lock_release(&slot->lock);
        if (ticket != 0)
            out_ticket_drop(table->out, ticket);
    }
}

/* The pool is full and nothing ends: say who holds it. */
static void name_stall(void *table, size_t held, size_t waiting)
{
    call_table *calls = table;
    log_message(LOG_WARNING, "every worker (%zu) held with no call ending, %zu calls waiting", held,
                waiting);
    call_log_running(calls, LOG_WARNING, "the pool is held by");
}

void call_name_stalls_after(call_table *table, int after_ms)
{
    if (table->pool && after_ms > 0)
        exec_set_stall_hook(table->pool, after_ms, name_stall, table);
}

/* ---- From a signal handler --------------------------------------------------------------- */

size_t call_end_unstarted_from_signal(call_table *table, output *out, bool out_seized)
{
    /* On the reading thread (see call_in_handler), whose group of held calls is its own. */
    exec_job *chain = table->group_first;
    table->group_first = table->group_last = NULL;
    table->group_count = 0;
    if (try_lock_a_while(&table->lock)) {
        sched_take_waiting(table, &chain);
        lock_release(&table->lock);
    }
    exec_job *queued = NULL;
    if (table->pool) {
        for (int tries = 0; tries < 100 && exec_take_queued(table->pool, true, &queued) != 0;
             tries++) {
            struct timespec pause = {0, 1000 * 1000};
            nanosleep(&pause, NULL);
        }
    }
    chain = join_chains(chain, queued);

    size_t answered = 0, unanswered = 0;
    for (; chain; chain = chain->next) {
        call_slot *slot = slot_of_job(chain);
        if (!try_lock_a_while(&slot->lock)) {
            unanswered++;
            continue;
        }
        bool silent = atomic_load(&slot->cancelled) && slot->cancel_style == CALL_CANCEL_SILENT;
        bool wanted = slot->is_request && !silent && !slot->answered && !slot->sink;
        /* A batch's array and an ordered response wait for others: nothing safe to write. */
        bool writable = out_seized && !slot->batch && slot->ticket == 0;
        if (wanted && writable) {
            struct iovec parts[RL_NEVER_RAN_PARTS];
            int count = rl_never_ran_parts(parts, slot->id.data, slot->id.length);
            if (out_write_seized(out, parts, count) == 0)
                answered++;
            else
                unanswered++;
        } else if (wanted) {
            unanswered++;
        }
        lock_release(&slot->lock);
    }
    if (unanswered > 0) {
        log_line line;
        log_line_start(&line, LOG_WARNING);
        log_line_add(&line, "calls that never ran left unanswered (in a batch, in ordered output, "
                            "or the output was not free)");
        log_line_end(&line);
    }
    return answered;
}

size_t call_log_running_from_signal(call_table *table, const char *situation)
{
    return log_running(table, LOG_WARNING, situation, true);
}

/* ---- Which thread runs a handler ---------------------------------------------------------- */

bool call_in_handler(void)
{
    return running_call_current() != NULL;
}
