/* SPDX-License-Identifier: MIT */
/*
 * The insides of calls, shared by call.c (starting and ending calls), call_table.c (ids in
 * flight, back-pressure, cancellation), scheduler.c (running calls), call_batch.c,
 * call_response.c, call_slot.c (the slot store behind handles) and call_host.c (the host
 * functions plugins use on a call). Nothing else in the daemon includes it (unit tests do).
 */
#ifndef RPCD_CALL_INTERNAL_H
#define RPCD_CALL_INTERNAL_H

#include "base/buffer.h"
#include "base/clock.h"
#include "base/metrics.h"
#include "calls/call.h"
#include "base/executor.h"
#include "methods/generation.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum { SLOTS_PER_CHUNK = 256, MAX_CHUNKS = 16384 };
#define NO_SLOT UINT32_MAX

/* Buffers that grew past this for one large call are given back when the call ends. */
enum { KEEP_BUFFER_BYTES = 64 * 1024 };

#define INDEX_BITS (sizeof(uintptr_t) >= 8 ? 32u : 20u)
#define INDEX_MASK (((uintptr_t)1 << INDEX_BITS) - 1)
#define GENERATION_MASK ((uint32_t)(UINTPTR_MAX >> INDEX_BITS))

enum { TOKEN_UNKNOWN, TOKEN_ABSENT, TOKEN_PRESENT };

typedef enum slot_state {
    SLOT_QUEUED,   /* waiting for a worker (or for its serialized method) */
    SLOT_RUNNING,  /* its handler runs */
    SLOT_DEFERRED, /* its handler returned RPCD_DEFERRED: call_complete ends it */
} slot_state;

typedef struct call_slot {
    pthread_mutex_t lock; /* guards everything below while the call runs */
    uint32_t generation;  /* part of the handle; moves on when the call ends */
    bool active;
    uint32_t next_free;
    atomic_bool cancelled;
    int cancel_style; /* the strongest cancellation asked for (call_cancel_style) */
    slot_state state;
    bool completed_early; /* call_complete ran before the handler returned RPCD_DEFERRED */
    int early_status;
    exec_job job;
    uint32_t index;

    call_table *table;
    generation *gen; /* the method's, held until the call ends (gen_call_started) */
    const reg_method *method;
    call_batch *batch;
    uint64_t ticket;
    bool is_request;
    bool tracked;         /* in the table's id table */
    uint32_t id_next;     /* next slot in the same id bucket, NO_SLOT at the end */
    uint32_t serial_next; /* next slot waiting for the same serialized method */
    buffer id;
    int token_state;           /* TOKEN_UNKNOWN until the first progress report looks */
    buffer progress_token;     /* params._meta.progressToken, when TOKEN_PRESENT */
    buffer params_copy;        /* the params: the reader reuses its buffer for the next line */
    const call_shaper *shaper; /* makes the response's result, or NULL (call_request) */
    bool has_progress_params;  /* the progress token is read from progress_params */
    buffer progress_params;    /* call_request's progress_params, copied */
    const char *params;
    size_t params_length;
    size_t held_bytes; /* params and _meta: what counts against max_in_flight_bytes */

    bool has_result;
    bool result_is_params; /* the result is the params, as an echo's is: no copy was made */
    buffer result;
    bool result_invalid;  /* call_result got text that is not JSON */
    bool result_complete; /* (1.4) the result is a complete tool result (call_tool_result) */
    bool result_refused;  /* the result failed a check: the call fails with -32603 */
    int failure_status;   /* what call_fail/call_fail_code recorded, 0 when nothing */
    int64_t failure_code;
    bool has_failure_message;
    buffer failure_message;
    bool has_failure_data;
    buffer failure_data;
    char exception[96]; /* call_fail_exception's name for error.data.exception, or "" */

    /* (1.6) Asking the client (call_input.c): call_request's part, copied, and this round's
     * questions ("key":{...} members) and the state it keeps for the next. */
    unsigned ask_capabilities;
    const call_asker *asker;
    void *asker_context;
    buffer answers;
    bool has_round_state;
    buffer round_state;
    size_t question_count;
    buffer questions;
    bool has_next_state;
    buffer next_state;

    /* When it was read (clock_now_us), for the access log, the counters and its age in the
     * control socket's list; 0 when neither logs nor counts it. */
    long long started_us;
    bool logged;  /* the access log writes its line (log_calls) */
    bool counted; /* its end is counted (mx_on) */
    /* The last progress its plugin reported (call_progress), for the control socket's list. */
    bool has_progress;
    double progress_done, progress_total;

    /* call_request's cap on the result's bytes (0: none) and its rule; result_capped: the
     * result was over it, and the call failed naming the cap. */
    size_t max_result_bytes;
    const char *result_cap_rule;
    bool result_capped;

    /* (1.7) call_request's sink and its context; sink_told: it has had the response. */
    const call_sink *sink;
    void *sink_context;
    bool sink_told;

    /* Its deadline (call_deadline.c): the method's timeout_ms, or less when the request asked. */
    size_t timeout_ms; /* 0: none */
    size_t heap_place; /* 1 + its place in the table's deadline heap, 0: not there (heap lock) */
    /* Answered at its deadline: the client has its response and the id is free, but the slot
     * stays until the handler returns (or call_complete): what the plugin does after writes
     * nothing. */
    bool answered;

    buffer scratch; /* notification lines and error data */
    buffer line;    /* the response line */
} call_slot;

struct call_table {
    output *out;
    serving_limits limits; /* max_in_flight at least 1, max_in_flight_bytes SIZE_MAX for none */
    bool quick_on_reader;  /* RPCD_METHOD_QUICK calls run on the thread that starts them */
    executor *pool;        /* NULL: handlers run on the starting thread */

    pthread_mutex_t lock;   /* guards what follows */
    pthread_cond_t changed; /* a call ended, or waits were interrupted */
    atomic_size_t in_flight;
    atomic_size_t in_flight_bytes; /* params and _meta held by the calls in flight */
    atomic_bool interrupted;
    atomic_bool input_waiting; /* the reader has more input buffered (call_set_input_waiting) */
    long long read_us;         /* when the reader's last read returned (call_note_read), 0: not
                                  taken; the reading thread's alone */
    uint32_t *id_buckets;      /* slot indices by id hash; NO_SLOT when empty */
    size_t id_bucket_count;    /* a power of two */
    size_t tracked_count;
    gen_serial *busy_serial; /* serialized methods with a call running (for a stop) */

    /* Deadlines (call_deadline.c): one watcher thread for every call of the table, started with
     * the first call that has one. */
    pthread_mutex_t heap_lock; /* guards the heap, the slots' heap_place and what follows */
    pthread_cond_t heap_changed;
    struct deadline_entry *heap; /* a min-heap by due time */
    size_t heap_count, heap_capacity;
    bool watching, watch_stopping;
    pthread_t watcher;
    atomic_size_t answered_in_flight; /* calls answered at their deadline whose handler runs */

    /* The reading thread's group of calls not handed to the workers yet (call_begin_group). */
    int grouping; /* call_begin_group depth */
    exec_job *group_first;
    exec_job *group_last;
    size_t group_count;
};

/* The slot of index (NULL when its chunk was never made). */
call_slot *slot_at(uint32_t index);
/* The handle a plugin gets for the call in slot index at generation. */
rpcd_call *slot_handle(uint32_t index, uint32_t slot_generation);
/* The slot of a live call, locked; NULL when the handle is unknown or its call has ended. */
call_slot *slot_lock_live(rpcd_call *call);
/* A free slot for a new call. Returns 0 and *index, or -1 (memory, or the store is full). */
int slot_acquire(uint32_t *index);
/* Gives a slot back, its buffers trimmed, once its call has ended. */
void slot_release(uint32_t index);
/* How many slots the store has made so far (all below it can be looked at). */
uint32_t slot_count(void);

/* ---- call.c ---- */

/* Ends the call in slot index with status: response, bookkeeping, the next serialized call. */
void call_finish(uint32_t index, int status);
/*
 * call_finish for a slot whose lock the caller holds (and this releases): the check that the
 * call may end and its end happen under one hold of the lock, so that of several threads
 * ending one call exactly one does.
 */
void call_finish_locked(call_slot *slot, int status);

/* ---- call_table.c: ids in flight (table lock held for each) ---- */

/* The slot in flight with exactly this id text, or NO_SLOT. */
uint32_t table_find_id(const call_table *table, const char *id, size_t length);
/* Enters slot's id, growing the table when it is crowded. */
void table_track_id(call_table *table, call_slot *slot);
/* Forgets slot's id. */
void table_untrack_id(call_table *table, call_slot *slot);

/* Marks one slot cancelled; a stronger style wins over a weaker one. Slot lock held. */
void table_mark_cancelled(call_slot *slot, int style);
/*
 * When slot's method has a cancel hook and its handler has started: *hooked and *handle, for
 * the caller to call once no lock is held. Slot lock held.
 */
void table_note_hook(const call_slot *slot, const reg_method **hooked, rpcd_call **handle);

/* ---- call_deadline.c ---- */

/*
 * The deadline of the call in slot (filled): its method's timeout_ms, or what the request asks
 * in _meta.timeout_ms when that is less. Returns 0 and *timeout_ms (0: none), or -1 when the
 * request asks something that is not a whole number of milliseconds from 1 to
 * CALL_DEADLINE_MOST.
 */
int deadline_of_request(const call_slot *slot, size_t *timeout_ms);
/* Starts the table's watcher, unless it runs. No lock_take lock held. Returns 0, or -1. */
int deadline_start(call_table *table);
/*
 * Watches the deadline of a call being started (slot->timeout_ms > 0), its watcher started.
 * Table lock held. Returns 0, or -1 (memory).
 */
int deadline_arm(call_table *table, call_slot *slot);
/* Forgets the deadline of a call that ends (nothing when it had none). */
void deadline_disarm(call_table *table, call_slot *slot);
/* Stops the watcher (no call is left) and frees what it had. */
void deadline_stop(call_table *table);

/* ---- call_host.c ---- */

/* call_fail_exception on a locked slot. */
int call_record_exception(call_slot *slot, const char *exception, const char *message,
                          const char *data, size_t data_length);

/* ---- call_batch.c ---- */

/* Takes a reference for one more item; call_batch_release drops it. */
void call_batch_hold(call_batch *batch);
/* Adds one response (parts) to the batch's array. Returns 0 or -1 (memory). */
int call_batch_append(call_batch *batch, const struct iovec *parts, int part_count);

/* ---- call_response.c ---- */

/* How a call ended, as the client was told (for the access log). */
typedef enum call_outcome_kind {
    CALL_OUTCOME_OK,
    CALL_OUTCOME_ERROR,      /* a JSON-RPC error; code says which (0: a notification's) */
    CALL_OUTCOME_TOOL_ERROR, /* an MCP tool result with isError */
    CALL_OUTCOME_CANCELLED,  /* cancelled: -32800, or no answer when asked so */
    CALL_OUTCOME_ASKED,      /* (1.6) the result asks the client for input */
} call_outcome_kind;

typedef struct call_outcome {
    call_outcome_kind kind;
    long long code; /* the error's code, 0 when none was written */
    size_t bytes;   /* what was written: the result's or the error line's bytes (counters) */
} call_outcome;

/* Writes the response of an ended call (nothing for notifications and silent cancels), and
 * how it ended into *outcome. */
void call_write_response(call_slot *slot, int status, bool silent, call_outcome *outcome);

/*
 * Finds the request's _meta (name NULL) or its member name: 1 and *value, 0 when absent, -1 when
 * either appears twice. The slot's lock held, or the call ended on this thread.
 */
int call_find_meta(const call_slot *slot, const char *name, js_span *value);

/* (1.6, call_input.c) True when the call ends by asking the client: a handler of 1.6 or later
 * returned RPCD_INPUT_REQUIRED after call_ask, and the call has an asker. */
bool call_asks(const call_slot *slot, int status);
/* The result that asks (the asker's), into slot->line. Returns 0 or -1. */
int call_write_asking(call_slot *slot);
/* call_ask, call_input, call_set_state and call_state into the host table. */
void call_fill_input_api(rpcd_host_api *api);

/* ---- call_log.c ---- */

/* Whether calls are logged (call_log_enable): read when a call starts. */
bool call_log_on(void);
/* The access log line of a call that ended as outcome says. */
void call_log_ended(const call_slot *slot, const call_outcome *outcome);
/*
 * The counts of calls that ended on the reading thread, taken when it next waits, with one clock
 * read for all (call_count_deferred): a clock read is most of what counting costs the cheapest
 * call, and the responses of these calls leave only then, so that is when they end for the
 * client too. Calls of one method that started at one read and ended alike share a group: with
 * one start and one end they share a latency, and a burst of echoes costs a comparison and three
 * additions a call. When every group is taken, the groups are counted then (their responses are
 * on their way), so no call is counted with a clock read of its own.
 */
typedef struct call_deferred_count {
    mx_series *series;
    mx_outcome outcome;
    long long started_us;
    unsigned long long calls;
    size_t bytes_in, bytes_out;
} call_deferred_count;
enum { CALL_DEFERRED_COUNTS = 64 };
typedef struct call_deferred_counts {
    bool on; /* this thread is a reading thread (call_note_read) */
    size_t count;
    call_deferred_count items[CALL_DEFERRED_COUNTS];
} call_deferred_counts;
extern _Thread_local call_deferred_counts call_deferred;

/* Counts the calling thread's deferred calls now, with one clock read (call_count_deferred). */
void call_count_deferred_now(void);

/* What observes a call's end: its access log line (logged) and its counters (counted). Inline:
 * every call ends through it. */
static inline void call_observe_end(const call_slot *slot, const call_outcome *outcome)
{
    if (slot->logged)
        call_log_ended(slot, outcome);
    if (!slot->counted)
        return;
    mx_outcome counted = MX_OK;
    if (outcome->kind == CALL_OUTCOME_TOOL_ERROR)
        counted = MX_TOOL_ERROR;
    else if (outcome->kind == CALL_OUTCOME_CANCELLED)
        counted = MX_CANCELLED;
    else if (outcome->kind == CALL_OUTCOME_ERROR)
        /* An error whose code was not written (a notification's) is still an error. */
        counted = outcome->code ? mx_outcome_of_code(outcome->code) : MX_OTHER_ERROR;
    if (call_deferred.on) {
        call_deferred_count *last =
            call_deferred.count ? &call_deferred.items[call_deferred.count - 1] : NULL;
        if (last && last->series == slot->method->series && last->outcome == counted &&
            last->started_us == slot->started_us) {
            last->calls++;
            last->bytes_in += slot->params_length;
            last->bytes_out += outcome->bytes;
            return;
        }
        if (call_deferred.count == CALL_DEFERRED_COUNTS)
            call_count_deferred_now();
        call_deferred.items[call_deferred.count++] = (call_deferred_count){
            .series = slot->method->series,
            .outcome = counted,
            .started_us = slot->started_us,
            .calls = 1,
            .bytes_in = slot->params_length,
            .bytes_out = outcome->bytes,
        };
        return;
    }
    /* Both times from CLOCK_MONOTONIC, the start the earlier: never negative. */
    mx_count_call(slot->method->series, counted, clock_now_us() - slot->started_us,
                  slot->params_length, outcome->bytes);
}

/* ---- scheduler.c ---- */

/*
 * Takes the turn of slot's serialized method, or queues slot behind the call that has it.
 * Returns true when slot may run now. Table lock held.
 */
bool sched_take_turn(call_table *table, call_slot *slot);
/*
 * Passes the turn of a serialized method whose call ended to the next call waiting for it,
 * returned (to hand over), or ends the turn and returns NULL. Table lock held.
 */
call_slot *sched_pass_turn(generation *gen, const reg_method *method);
/*
 * Moves the calls waiting behind a running serialized call onto *chain (through job.next). They
 * go first: ending one of them must not hand the next to the pool. Table lock held.
 */
void sched_take_waiting(call_table *table, exec_job **chain);
/* Hands a call that may run now over: run here (a quick call), held in the group, or queued. */
void sched_hand_over(call_table *table, call_slot *slot);
/* Queues a call for a worker, or runs it here when there are none. */
void sched_dispatch(call_slot *slot);
/* Runs a call's handler, then ends the call unless the handler deferred it. */
void sched_run(exec_job *job);

#endif
