/* SPDX-License-Identifier: MIT */
/*
 * The read-dispatch loop, and the three ways it ends: end of input (finish everything, or in an
 * MCP session cancel as a stop does), a stop (cancel, wait a bounded time), a closed output
 * (nobody to answer: cancel and go).
 */
#include "serve/server.h"

#include "calls/call.h"
#include "base/clock.h"
#include "base/crash_report.h"
#include "serve/dispatch.h"
#include "calls/grace.h"
#include "base/log.h"
#include "json/json_scan.h"
#include "wire/mcp_events.h"
#include "mcp/mcp.h"
#include "mcp/mcp_listen.h"
#include "mcp/mcp_requests.h"
#include "methods/generation.h"
#include "methods/mcp_catalog.h"
#include "base/stop_signals.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct server {
    srv_options options;
    gen_current *own_generations; /* when options.generations is NULL */
    gen_reader generations;
    out_write_fn write;
    void *sink;
    output *out;
    call_table *calls;
    mcp_listeners *listeners;
    atomic_bool stopping;
    grace_target grace; /* what the grace period's timer acts on (keep_grace_period) */
    bool grace_watched;
    mcp_session session; /* the client's, the MCP component's state of it */
};

/* Writes through the caller's function; a failure also stops a reader waiting for input. */
static int write_through(void *sink, const struct iovec *parts, int part_count)
{
    server *srv = sink;
    int status = srv->write(srv->sink, parts, part_count);
    if (status != 0 && srv->options.stop_reading)
        srv->options.stop_reading(srv->options.stop_reading_context);
    return status;
}

enum { LONG_LINE_BYTES = 64 * 1024 };
/* How often the waits for the last calls look for a stop. */
enum { STOP_CHECK_MS = 10 };

/*
 * The reader is about to read (and maybe wait): calls it held back go to the workers, and what
 * is written from now on goes out at once. Inside a long line, reading waits while the calls in
 * flight hold max_in_flight_bytes: memory stays bounded however far ahead a client sends large
 * messages, and short lines (a cancel, a ping) are never held back by the limit.
 */
static void reader_idle(void *context, bool idle, size_t held_bytes)
{
    server *srv = context;
    if (idle) {
        call_submit_group(srv->calls);
        call_count_deferred(srv->calls); /* before the output goes: its calls counted */
    } else {
        call_note_read(srv->calls);
    }
    out_set_reader_idle(srv->out, idle);
    if (idle && held_bytes >= LONG_LINE_BYTES)
        call_wait_for_bytes(srv->calls);
}

/*
 * Whether the tool policy hides the resource at uri: the current set serves it through a hidden
 * method only. Released as at a call's end, since a plugin's thread may be asking.
 */
static bool resource_hidden(server *srv, const char *uri, size_t length)
{
    generation *now = srv->generations.source ? gen_take_current(srv->generations.source) : NULL;
    if (!now)
        return false;
    const mcp_catalog *catalog = mcp_tools_catalog(gen_tools(now));
    buffer variables = BUFFER_INIT;
    bool templated;
    bool hidden =
        !mcp_catalog_resource(catalog, uri, length, &variables, &templated) &&
        mcp_catalog_resource(mcp_catalog_hidden(catalog), uri, length, &variables, &templated);
    buf_free(&variables);
    gen_release_after_call(now);
    return hidden;
}

/* host->resource_updated from any plugin: to the subscribed session and streams, unless the
 * policy hides that resource (its updates then reach no one, as for one that is not there). */
static void tell_resource_updated(void *context, const char *uri, size_t length)
{
    server *srv = context;
    if (!resource_hidden(srv, uri, length))
        mcp_listen_resource_updated(srv->listeners, uri, length);
}

/* A plugin's log line the client asked for, as MCP's notifications/message. */
static void tell_log_line(void *context, const char *logger, int level, const char *text,
                          size_t length)
{
    server *srv = context;
    buffer line = BUFFER_INIT;
    if (mcp_events_append_message(&line, logger, level, text, length) == 0) {
        struct iovec part = {line.data, line.length};
        out_write_line(srv->out, &part, 1);
    }
    buf_free(&line);
}

call_table *srv_calls(server *srv)
{
    return srv->calls;
}

int srv_new(const registry *methods, const srv_options *options, out_write_fn write, void *sink,
            server **out)
{
    server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return -1;
    srv->options = *options;
    srv->write = write;
    srv->sink = sink;
    if (out_new(write_through, srv, &srv->out) != 0)
        goto fail;
    out_set_ordered(srv->out, options->ordered);
    if (mcp_listeners_new(srv->out, &srv->listeners) != 0 ||
        mcp_session_open(&srv->session, srv->out) != 0)
        goto fail;
    crash_report_watch(srv->out);
    gen_current *generations = options->generations;
    if (!generations) {
        generation *gen;
        if (gen_new_borrowed(methods, options->tools, &gen) != 0 ||
            gen_current_new(gen, &srv->own_generations) != 0)
            goto fail;
        generations = srv->own_generations;
    }
    call_settings settings = {
        .out = srv->out,
        .limits = options->limits,
    };
    if (call_table_new(&settings, &srv->calls) != 0)
        goto fail;
    mcp_tasks_configure(srv->session.tasks, srv->calls, srv->listeners,
                        options->tasks.most_tasks ? options->tasks : MCP_TASKS_LIMITS);
    gen_reader_init(&srv->generations, generations, call_let_go_generation, srv->calls);
    /* Held longer than a stop would wait for them: worth a warning. */
    call_name_stalls_after(srv->calls, options->shutdown_grace_ms);
    const mcp_event_sink events = {srv, tell_resource_updated, tell_log_line};
    mcp_events_attach(&events);
    *out = srv;
    return 0;
fail:
    srv_free(srv);
    return -1;
}

void srv_free(server *srv)
{
    if (!srv)
        return;
    mcp_events_attach(NULL);
    /* Before the table it lets go through: calls still running take over its reference. */
    if (srv->generations.source)
        gen_reader_fini(&srv->generations);
    call_table_free(srv->calls);
    /* After the calls: one that ends asking keeps its round in the session's store. */
    mcp_session_close(&srv->session);
    mcp_listeners_free(srv->listeners);
    gen_current_free(srv->own_generations);
    if (srv->out)
        crash_report_watch(NULL);
    out_free(srv->out);
    free(srv);
}

/* Only flags and what stop_reading does: nothing here may take a lock. The reader does the rest
 * (it cancels the calls in flight once out of its loop). */
void srv_stop(server *srv)
{
    atomic_store(&srv->stopping, true);
    grace_start();
    call_interrupt_waits_from_signal(srv->calls);
    if (srv->options.stop_reading)
        srv->options.stop_reading(srv->options.stop_reading_context);
}

/*
 * Whether answers can still reach the client: once the output failed, or its reader is seen
 * gone (then the output fails as a write to it would have), there is nobody to wait for.
 */
static bool output_lost(server *srv)
{
    if (out_failed(srv->out))
        return true;
    bool (*closed)(void *context) = srv->options.output_closed;
    if (!closed || !closed(srv->options.output_closed_context))
        return false;
    log_message(LOG_INFO,
                "end of input: the client closed its end of the output, nobody to answer");
    out_set_failed(srv->out, EPIPE);
    return true;
}

/*
 * Waits until no call is in flight, timeout_ms at most (negative: no limit). A stop cannot wake
 * this wait (srv_stop may run in a signal handler), so it waits STOP_CHECK_MS at a time and
 * takes stop signals in between (see stop_signals.h); with until_stopped it also returns once
 * the server is stopped or its output is lost (see output_lost), and counts a call answered at
 * its deadline as ended. Returns 0 when no call is left, -1 otherwise.
 */
static int wait_for_calls(server *srv, int timeout_ms, bool until_stopped)
{
    /* Until the end of input, a call answered at its deadline is over: its client has its
     * answer, and only its handler still runs. */
    int (*wait)(call_table *, int) = until_stopped ? call_wait_answered : call_wait_idle;
    long long started = clock_now_ms();
    long long deadline = started + timeout_ms;
    bool logged = false, named = false;
    int status = 0;
    stop_signals_hold();
    for (;;) {
        int step = STOP_CHECK_MS;
        if (timeout_ms >= 0) {
            long long left = deadline - clock_now_ms();
            if (left < step)
                step = left > 0 ? (int)left : 0;
        }
        if (wait(srv->calls, step) == 0)
            break;
        if (until_stopped && !logged) {
            log_message(LOG_DEBUG, "end of input: waiting for the calls in flight");
            logged = true;
        }
        /* A pool held by calls that never end keeps rpcd here until a stop: say which. */
        if (until_stopped && !named && clock_now_ms() - started >= srv->options.shutdown_grace_ms) {
            call_log_running(srv->calls, LOG_WARNING, "end of input: still waiting for");
            named = true;
        }
        stop_signals_deliver_pending();
        if ((until_stopped && (atomic_load(&srv->stopping) || output_lost(srv))) ||
            (timeout_ms >= 0 && clock_now_ms() >= deadline)) {
            status = -1;
            break;
        }
    }
    stop_signals_release();
    return status;
}

/* Reads and dispatches lines until the end of input, a stop or a failure: an srv_result. */
static int serve_lines(server *srv, line_reader *reader)
{
    dispatcher dispatch = {
        .generations = &srv->generations,
        .calls = srv->calls,
        .out = srv->out,
        .limits = srv->options.limits,
        .listeners = srv->listeners,
        .session = &srv->session,
    };
    while (!atomic_load(&srv->stopping) && !out_failed(srv->out)) {
        const char *line;
        size_t length;
        int status = lr_next(reader, &line, &length);
        if (status == LR_LINE) {
            call_set_input_waiting(srv->calls, lr_has_more(reader));
            /* Scanning a long line takes a while: calls held back must not wait for it. */
            if (length >= LONG_LINE_BYTES)
                call_submit_group(srv->calls);
            disp_line(&dispatch, line, length);
        } else if (status == LR_TOO_LONG) {
            disp_line_too_long(&dispatch, length, srv->options.limits.max_line_bytes);
        } else if (status == LR_EOF) {
            return SRV_DONE;
        } else if (status == LR_ERROR) {
            if (errno == ECANCELED)
                return SRV_DONE;
            log_message(LOG_ERROR, "reading requests failed: %s", strerror(errno));
            return SRV_INPUT_FAILED;
        } else {
            log_message(LOG_ERROR, "out of memory while reading a line");
            return SRV_NO_MEMORY;
        }
    }
    return SRV_DONE;
}

/*
 * Once nothing more is read: at the end of input every request read gets its answer, unless a
 * stop or a closed output comes meanwhile, or the input was an MCP session's; then (or when
 * reading ended any other way) the calls are told and given the grace period. Returns result,
 * or what the stop made of it.
 */
static int end_calls(server *srv, int result)
{
    bool stopped = atomic_load(&srv->stopping);
    /* An MCP host ends a session by closing our input, and kills rpcd shortly after (the SDK
     * signals after 2 s): the calls in flight are cancelled at once, as for a stop, so that rpcd
     * and its plugins end in time. Plain JSON-RPC clients get every answer. */
    bool session_ended = srv->session.started && result == SRV_DONE && !stopped;
    if (session_ended && !out_failed(srv->out) && call_wait_idle(srv->calls, 0) != 0)
        log_message(LOG_INFO, "end of input of an MCP session: cancelling the calls in flight");
    if (!out_failed(srv->out) && result == SRV_DONE && !stopped && !session_ended) {
        if (wait_for_calls(srv, -1, true) != 0)
            stopped = atomic_load(&srv->stopping);
    }
    if (!out_failed(srv->out) && result == SRV_DONE && !stopped && !session_ended &&
        call_wait_idle(srv->calls, 0) == 0)
        return result;
    /* Nobody to answer, or asked to go: tell the calls, give them the grace period. Calls that
     * have not started never will: they are answered now, whatever holds the pool. At the end of
     * an MCP session they still run, told they are cancelled: one that ignores it (a quick one)
     * is answered as it should be, within the same period. */
    call_cancel_all(srv->calls);
    if (!session_ended || out_failed(srv->out)) {
        call_interrupt_waits(srv->calls);
        call_end_unstarted(srv->calls);
    }
    grace_set_phase(GRACE_WAITING);
    /* The period counts from the stop, not from when this thread got here. */
    int grace_ms = srv->grace_watched && stopped ? grace_left_ms() : srv->options.shutdown_grace_ms;
    /* An MCP session's end is still the end of input: every call was answered. */
    if (wait_for_calls(srv, grace_ms, false) == 0)
        return result == SRV_DONE && !session_ended ? SRV_STOPPED : result;
    grace_set_phase(GRACE_ENDING);
    call_end_unstarted(srv->calls);
    call_log_running(srv->calls, LOG_WARNING,
                     "still running at the end of the grace period; left unanswered");
    call_drop_running_tickets(srv->calls);
    log_message(LOG_WARNING, "calls still running after %d ms; leaving them",
                srv->options.shutdown_grace_ms);
    return result == SRV_DONE ? SRV_STOPPED_EARLY : result;
}

int srv_run(server *srv, lr_read_fn read, void *source)
{
    line_reader *reader = NULL;
    if (lr_new(read, source, srv->options.limits.max_line_bytes, &reader) != 0)
        return SRV_NO_MEMORY;
    lr_set_idle_hook(reader, reader_idle, srv);
    if (srv->options.keep_grace_period) {
        srv->grace = (grace_target){srv->out, srv->calls, srv->options.shutdown_grace_ms,
                                    srv->options.exit_stopped, srv->options.exit_output_failed};
        srv->grace_watched = grace_watch(&srv->grace) == 0;
    }
    /* Calls started from one read are handed to the workers together (see reader_idle). */
    call_begin_group(srv->calls);
    int result = serve_lines(srv, reader);
    call_end_group(srv->calls);
    call_count_deferred(srv->calls);
    lr_free(reader);
    /* From here on nothing is read: whatever is still in flight, a flush must not wait. */
    out_set_reader_idle(srv->out, true);
    /* A stream stays open until the server goes: it ends now, its request answered. */
    mcp_listen_close_all(srv->listeners);
    /* So does a call that waits for the client's answers to rpcd's requests: -32800. */
    mcp_requests_close(srv->session.requests);
    mcp_tasks_close(srv->session.tasks);

    result = end_calls(srv, result);
    grace_set_phase(GRACE_ENDING);
    if (out_flush(srv->out) != 0 || out_failed(srv->out)) {
        int error = out_error(srv->out);
        if (error == 0 || error == EPIPE)
            log_message(LOG_ERROR, "writing responses failed: the client closed its end");
        else
            log_message(LOG_ERROR, "writing responses failed: %s", strerror(error));
        result = SRV_OUTPUT_FAILED;
    }
    if (srv->grace_watched)
        grace_unwatch();
    srv->grace_watched = false;
    return result;
}

void srv_refresh(server *srv)
{
    gen_reader_refresh(&srv->generations);
}

int srv_list_changed(server *srv, mcp_list_kind kind)
{
    static const char *const lines[] = {
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/prompts/list_changed\"}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/list_changed\"}",
    };
    int told = 0;
    /* The handshake era: a session that initialized hears of it on its own output. */
    if (atomic_load(&srv->session.initialized)) {
        struct iovec part = {(void *)lines[kind], strlen(lines[kind])};
        if (out_write_line(srv->out, &part, 1) != 0)
            return -1;
        told = 1;
    }
    /* The 2026-07-28 revision: each subscriptions/listen stream that asked for it. */
    int streams = mcp_listen_list_changed(srv->listeners, kind);
    return streams < 0 ? -1 : told + streams;
}

int srv_tools_changed(server *srv)
{
    return srv_list_changed(srv, MCP_LIST_OF_TOOLS);
}

bool srv_finished(server *srv)
{
    return call_wait_idle(srv->calls, 0) == 0;
}

int srv_serve(const registry *methods, const srv_options *options, lr_read_fn read, void *source,
              out_write_fn write, void *sink)
{
    server *srv;
    if (srv_new(methods, options, write, sink, &srv) != 0)
        return SRV_NO_MEMORY;
    int result = srv_run(srv, read, source);
    if (srv_finished(srv))
        srv_free(srv); /* else calls still hold it: the process is about to end anyway */
    return result;
}
