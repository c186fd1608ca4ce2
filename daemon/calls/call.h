/* SPDX-License-Identifier: MIT */
/*
 * Calls: the per-call context plugins see (rpcd_call), the host functions that act on it, the
 * pool that runs handlers, and the response each call ends with, alone or in its batch.
 *
 * A plugin's rpcd_call pointer is a handle (slot index and generation), not an address: when
 * the call ends its slot's generation moves on, so a handle kept too long finds a mismatch and
 * gets RPCD_ERR_STALE instead of touching freed or reused memory. Slots live in one
 * process-wide store, so a handle alone finds its slot from any thread.
 */
#ifndef RPCD_CALL_H
#define RPCD_CALL_H

#include "base/serving_limits.h"
#include "base/buffer.h"
#include "methods/generation.h"
#include "json/json_scan.h"
#include "base/output.h"
#include "methods/registry.h"

#include <rpcd/plugin.h>

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

typedef struct call_settings {
    output *out; /* borrowed: where responses and notifications go */
    /* max_depth: deepest nesting accepted in what plugins hand back; workers, max_in_flight
     * (before call_wait_for_room blocks), max_in_flight_bytes (call_wait_for_bytes; 0: none) */
    serving_limits limits;
} call_settings;

/*
 * The calls in flight of one server: their ids (a duplicate is refused, a cancel finds its
 * call), how many there are and what params they hold (back-pressure), and the pool that runs
 * them. Not a call's context: that is rpcd_call.
 */
typedef struct call_table call_table;

/* Starts the worker pool. Returns 0 and *out (new), or -1. */
int call_table_new(const call_settings *settings, call_table **out);
/* Waits for every call to end, stops the workers and frees the table. */
void call_table_free(call_table *table);

/* A batch in progress: one response array, written when its last item is done. */
typedef struct call_batch call_batch;

/*
 * Starts a batch whose array is written with ticket (see out_ticket_take; 0 for none). The
 * creator holds one reference, released with call_batch_release once every item has been
 * started. Returns 0 and *out (new), or -1 (memory).
 */
int call_batch_new(call_table *table, uint64_t ticket, call_batch **out);
/* Drops a reference; the last one writes the array (nothing when it is empty) and frees. */
void call_batch_release(call_batch *batch);

/*
 * Writes an error response for id (NULL: "id": null), alone with ticket or into batch (may be
 * NULL). message NULL uses the specification's text for code. data is raw JSON text or NULL.
 * Returns 0 or -1.
 */
int call_respond_error(call_table *table, call_batch *batch, uint64_t ticket, const js_span *id,
                       int64_t code, const char *message, const char *data, size_t data_length);

/*
 * Makes the result of a call's response, for a protocol that wraps what handlers give: the
 * response is then a result even when the handler failed (only a cancelled call is still
 * answered with an error). The functions append to out and return 0 or -1 (memory); they are
 * called on any thread, and must be thread-safe.
 */
typedef struct call_shaper {
    /* The result for a handler's result: valid JSON text, on one line. NULL: result_of. */
    int (*result)(buffer *out, const char *result, size_t length);
    /* The result for a handler's failure, told in text (see rpcerr_failure_text). NULL: a
     * failure is answered with its JSON-RPC error, as without a shaper. */
    int (*failure)(buffer *out, const char *text, size_t length);
    /* Used instead of result when set: the result with the call's method and the params its
     * handler was given in view. -1 (memory, or a result of the wrong shape, logged by it)
     * answers -32603. */
    int (*result_of)(buffer *out, const reg_method *method, js_span params, const char *result,
                     size_t length);
    /* A complete tool result (call_tool_result) as its era sends it; NULL: unchanged. */
    int (*complete)(buffer *out, const char *result, size_t length);
} call_shaper;

/* (1.6) A round that ends asking the client: what the asker is given. Spans and texts are
 * borrowed from the call, alive while ask runs. */
typedef struct call_round_end {
    const reg_method *method;
    js_span id;          /* the request's id text */
    js_span arguments;   /* the params its handler was given */
    js_span call_params; /* the params of the message the call came from (tools/call's whole
                            params: progress_params), or an empty span when the same */
    /* The text of the members of an object, each a key and its request
     * ("key":{"method":...,"params":...}), and how many. */
    const char *questions;
    size_t questions_length, question_count;
    /* What the handler kept for the next round (has_state false: nothing). */
    const char *state;
    size_t state_length;
    bool has_state;
} call_round_end;

/* What an asker's ask returns besides 0 and -1. */
enum {
    CALL_ASK_DEFERRED = 1,  /* the asker answers the request itself, later: nothing written now */
    CALL_ASK_CANCELLED = 2, /* the client cannot be asked any more (its session ends): -32800 */
};

/*
 * (1.6) Where a round that asks the client (a handler's RPCD_INPUT_REQUIRED after call_ask)
 * becomes a result, or requests to the client: the MCP front end's, for a client that can be
 * asked. Static.
 */
typedef struct call_asker {
    /*
     * Appends to out the result that asks and returns 0; or takes the round over, to ask the
     * client itself and answer the request later, and returns CALL_ASK_DEFERRED (never for a
     * call in a batch); or returns CALL_ASK_CANCELLED, or -1 (memory, or too many rounds
     * wait): the call then fails with -32603. context is call_request's asker_context. Any
     * thread.
     */
    int (*ask)(void *context, buffer *out, const call_round_end *round);
} call_asker;

/*
 * (1.7) Where a call's response goes instead of the output: the MCP front end's task store, for
 * a tools/call that may become a task (mcp/mcp_tasks.h). Static.
 */
typedef struct call_sink {
    /*
     * Takes the call's response line, in parts as they would be written (one JSON-RPC response,
     * its newline last; count 0: the call ended without one, a silent cancel or a round whose
     * asker answers later). Called exactly once per call, on any thread, with no lock of the
     * call layer held: it may start or cancel calls. context is call_request's
     * sink_context.
     */
    void (*deliver)(void *context, const struct iovec *parts, int count);
} call_sink;

/* A request or notification ready to run. Spans are borrowed: call_start copies them. */
typedef struct call_request {
    /* Borrowed, held by the caller: the method's generation; its calls hold it. */
    generation *gen;
    const reg_method *method;
    const js_span *id;     /* NULL for a notification */
    const js_span *params; /* NULL when the request had none */
    call_batch *batch;     /* NULL when not part of a batch */
    uint64_t ticket;       /* for an ordered response, 0 otherwise; not in a batch */
    /* Borrowed, static: shapes the result. NULL: the handler's result is the response's. */
    const call_shaper *shaper;
    /* Where a progress report looks for _meta.progressToken, when not in params: the params of
     * a message that were rewritten into the handler's. NULL: in params. */
    const js_span *progress_params;
    /*
     * (1.6) Asking the client: what it declared it can be asked (contract_ask_capability
     * bits; 0: nobody can be asked, call_ask is RPCD_ERR_UNSUPPORTED), the asker of its rounds
     * (NULL when capabilities are 0) with its context (borrowed, outlives the call), and what
     * the previous round left: the client's answers (one-line JSON object text; empty: none)
     * and the state the handler kept (has_state).
     */
    unsigned ask_capabilities;
    const call_asker *asker;
    void *asker_context;
    js_span answers;
    js_span state;
    bool has_state;
    /* The most bytes its result may have (the tool policy's max_result_bytes), 0: no cap; and
     * the rule that sets it (borrowed, alive with gen), for the failure and the access log. */
    size_t max_result_bytes;
    const char *result_cap_rule;
    /* (1.7) Where its response goes (NULL: the output) and the sink's context (borrowed,
     * alive until deliver ran). A request's alone: no batch, no ticket. */
    const call_sink *sink;
    void *sink_context;
} call_request;

enum call_start_result {
    CALL_STARTED = 0,
    CALL_NO_MEMORY = -1,
    CALL_DUPLICATE_ID = -2, /* a call with the same id is still in flight: nothing started */
    CALL_BAD_DEADLINE = -3, /* _meta.timeout_ms is not a whole number of ms in range */
};

/* The longest deadline, from the config or a request: a day, in milliseconds. */
enum { CALL_DEADLINE_MOST = 86400000 };

/*
 * Starts a call: queued for a worker (or run at once without workers). Its response is written
 * when it ends. Does not wait for room: the reader calls call_wait_for_room first.
 */
int call_start(call_table *table, const call_request *request);

/*
 * Between these two, calls started on this thread are held back and then handed to the workers
 * together (64 at most, or when call_submit_group says): one lock and one wake-up round for many
 * calls instead of one each. Only for the reading thread; pairs may nest, the outermost end
 * hands over what is held.
 */
void call_begin_group(call_table *table);
void call_end_group(call_table *table);
/* Hands over the calls held so far and keeps grouping: the reader is about to wait. */
void call_submit_group(call_table *table);

/*
 * Blocks while max_in_flight calls are queued or running, until one ends or
 * call_interrupt_waits is called. Returns 0, or -1 when interrupted.
 */
int call_wait_for_room(call_table *table);
/*
 * Blocks while the calls in flight hold max_in_flight_bytes of params and _meta or more, until
 * one ends or call_interrupt_waits is called. For the reader, inside a long line: a single call
 * may hold more than the limit, so that any line up to max_line_bytes is served.
 */
void call_wait_for_bytes(call_table *table);
/* Makes call_wait_for_room and call_wait_for_bytes return now and from now on. Thread-safe,
 * idempotent. */
void call_interrupt_waits(call_table *table);
/*
 * The same for a signal handler: async-signal-safe, any thread. It cannot wake the waits, which
 * see it within 10 ms.
 */
void call_interrupt_waits_from_signal(call_table *table);

enum call_cancel_style {
    CALL_CANCEL_RESPOND, /* $/cancelRequest: the call ends with -32800 */
    CALL_CANCEL_SILENT,  /* notifications/cancelled: the call ends with no response */
    CALL_CANCEL_FLAG,    /* shutdown: the handler is told, its own outcome stands */
};

/*
 * Cancels the call in flight whose id is exactly id's text. Returns 1 when one was found, 0
 * otherwise (unknown or finished ids are no error). Thread-safe.
 */
int call_cancel(call_table *table, js_span id, int style);
/* Marks every call in flight cancelled (CALL_CANCEL_FLAG). Thread-safe. */
void call_cancel_all(call_table *table);

/* One call in flight, copied out of its slot for the control socket's list. */
enum { CALL_VIEW_ID_BYTES = 256, CALL_VIEW_NAME_BYTES = 128 };
typedef struct call_view {
    char id[CALL_VIEW_ID_BYTES]; /* the id's JSON text, NUL-terminated; "" for a notification */
    bool id_cut;                 /* the id was longer: id holds its first bytes */
    char method[CALL_VIEW_NAME_BYTES]; /* reg_printable_name of each */
    char plugin[CALL_VIEW_NAME_BYTES];
    long long age_ms; /* since it was read; -1 when not known (see call_observe_end) */
    bool running;     /* its handler has started; false: queued for a worker or its turn */
    bool cancelled;
    bool answered; /* answered at its deadline, its handler not back yet */
    bool has_progress;
    double progress_done, progress_total; /* the last call_progress, when has_progress */
} call_view;

/* Called once per call by call_list with a view (borrowed, for the call's duration). */
typedef void call_view_fn(void *context, const call_view *view);

/*
 * Calls each for every call in flight of table, each slot's lock held only while it is copied
 * (never while each runs). Thread-safe. Returns how many.
 */
size_t call_list(call_table *table, call_view_fn *each, void *context);

/*
 * Waits until no call is in flight, at most timeout_ms (negative: no limit).
 * Returns 0 when none is left, -1 on timeout.
 */
int call_wait_idle(call_table *table, int timeout_ms);
/*
 * The same, but a call answered at its deadline whose handler still runs counts as ended: waits
 * until every call in flight has its answer.
 */
int call_wait_answered(call_table *table, int timeout_ms);

/*
 * Writes a success response for id with result (raw JSON text), alone with ticket or into
 * batch (may be NULL). Returns 0 or -1.
 */
int call_respond_result(call_table *table, call_batch *batch, uint64_t ticket, const js_span *id,
                        const char *result, size_t result_length);

/*
 * A reader of generations (see gen_reader_init) that starts calls in table lets go of gen: its
 * reference passes to the calls of gen still running, or is released. table is a call_table.
 */
void call_let_go_generation(void *table, generation *gen);

/*
 * call_fail for rpcd's own failures of a plugin's call (an isolated plugin's host that died, a
 * deadline): status RPCD_ERR_INTERNAL, with exception (copied, cut to 95 bytes) in place of the
 * status name in error.data.exception. Returns RPCD_ERR_INTERNAL, or as call_fail.
 */
int call_fail_exception(rpcd_call *call, const char *exception, const char *message,
                        const char *data, size_t data_length);

/*
 * call_complete for an isolated plugin's END: the status its handler returned, whatever it is.
 * 1 comes only from a plugin built before 1.1, to which it was no RPCD_DEFERRED but a status
 * rpcd does not know: answered as in process (-32603, error.data.exception "unknown status",
 * error.data.status 1), where call_complete refuses 1. Returns as call_complete.
 */
int call_complete_with_status(rpcd_call *call, int status);

/*
 * Whether call was answered at its deadline (its handler, or an isolated plugin's host, has yet
 * to let go of it). False for a call that has ended. Thread-safe.
 */
bool call_answered_at_deadline(rpcd_call *call);

/*
 * The reading thread says, before it starts the calls of a line, whether more input is
 * buffered behind that line: a handler that could wait for its answer (an isolated plugin's
 * quick method) then must not, since the requests behind would wait too.
 */
void call_set_input_waiting(call_table *table, bool waiting);
/*
 * The reading thread says a read of the input has just returned: the calls started from what
 * it read are timed from now for the counters (base/metrics.h). One clock read when counting,
 * nothing otherwise.
 */
void call_note_read(call_table *table);
/*
 * The reading thread is about to wait (or serving ends): the calls that ended on it since it last
 * read are counted now, timed to now, with one clock read for all. Before the output is let go,
 * so that a client that has their responses finds them counted. Reading thread only.
 */
void call_count_deferred(call_table *table);
/*
 * Whether the thread running call's handler may wait for its answer: the call is no part of a
 * batch and its reader has nothing more buffered. False for a stale handle.
 */
bool call_caller_may_wait(rpcd_call *call);

/* Puts the call_* members of the host table in place. */
void call_fill_host_api(rpcd_host_api *api);

/* (1.6) What a call's round starts with, for a plugin host that answers call_input and
 * call_state itself: spans into the call, valid while its handler runs. */
typedef struct call_round_view {
    unsigned ask_capabilities; /* contract_ask_capability bits: what call_ask may ask */
    js_span answers;           /* the previous round's answers (JSON object); empty: none */
    bool has_state;
    js_span state; /* the previous round's state, when has_state */
} call_round_view;

/* Fills *view for a live call. Returns 0, or RPCD_ERR_STALE once the call has ended. */
int call_round_of(rpcd_call *call, call_round_view *view);

/* Frees the slot store once no call is left (at exit), so leak checkers see a clean heap. */
void call_store_release(void);

/* ---- The end of serving (call_shutdown.c) ------------------------------------------------- */

/*
 * Ends every call that has not started (queued for a worker or behind a serialized call) with
 * -32800 and data.detail "rpcd stopped before the call ran" (a call the client cancelled is
 * answered as it asked): after a stop, none of them will run. Thread-safe.
 */
void call_end_unstarted(call_table *table);

/*
 * Logs one line at level for each call that has started and not ended: "situation: plugin P,
 * method M, id X". Returns how many. Thread-safe.
 */
size_t call_log_running(call_table *table, int level, const char *situation);

/*
 * While serving: when calls have waited behind workers that were all held for after_ms, no call
 * ending meanwhile, logs a warning naming the calls that hold them (once until one ends).
 */
void call_name_stalls_after(call_table *table, int after_ms);

/*
 * In ordered output (workers = 1), gives up the places of the calls still running, so that the
 * lines after theirs go out; should one of them end after all, its response may be dropped.
 */
void call_drop_running_tickets(call_table *table);

/*
 * The same two for a signal handler on the reading thread that ends the process: no allocation,
 * locks only tried. call_end_unstarted_from_signal writes its answers with out_write_seized when
 * out_seized (see out_seize_dying), except those of batches and ordered output, which wait
 * for others; it warns about calls left unanswered. Each returns how many calls it answered or
 * named.
 */
size_t call_end_unstarted_from_signal(call_table *table, output *out, bool out_seized);
size_t call_log_running_from_signal(call_table *table, const char *situation);

/*
 * Whether this thread is inside plugin code (a handler runs here: base/running_call.h), not in
 * the middle of rpcd's own. From a signal handler too.
 */
bool call_in_handler(void);

/*
 * Per-request log lines (2026-07-28): the finest RPCD_LOG_* level the request of the handler
 * running on this thread asked to hear with its _meta "io.modelcontextprotocol/logLevel", or -1
 * (none asked, an older revision, or no handler runs here).
 */
int call_running_log_level(void);
/*
 * Sends a plugin's log line (logger and text borrowed, text length bytes) as notifications/message
 * of the request whose handler runs on this thread, before its response, when the request asked
 * for level. Returns 1 when sent, 0 otherwise.
 */
int call_running_log(const char *logger, int level, const char *text, size_t length);

#endif
