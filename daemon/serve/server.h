/* SPDX-License-Identifier: MIT */
/*
 * The serve loop: reads lines until the end of input (or a stop), hands each to the
 * dispatcher, lets the calls in flight finish, and returns once every request read has been
 * answered. In an MCP session (a message was initialize or server/discover) the end of input
 * cancels the calls in flight as a stop does. The same loop serves any stream through its read,
 * write and stop-reading functions (transport_stdio.h for stdin and stdout), and memory.
 */
#ifndef RPCD_SERVER_H
#define RPCD_SERVER_H

#include "base/serving_limits.h"
#include "mcp/mcp_tasks.h"
#include "mcp/mcp_listen.h"
#include "wire/line_reader.h"
#include "base/output.h"
#include "methods/registry.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct srv_options {
    serving_limits limits; /* workers 0: handlers run on the reading thread (the in-memory
                              demo); max_in_flight_bytes 0: no limit */
    int shutdown_grace_ms; /* after a stop or an MCP session's end of input, how long calls in
                              flight may take to finish */
    bool ordered;          /* responses in request order */
    const struct mcp_tools *tools; /* borrowed: the MCP tools; NULL: none */
    /* borrowed: where the current generation is published; NULL: methods and tools are served */
    struct gen_current *generations;
    /*
     * After srv_stop, end the process once shutdown_grace_ms are over should the reading thread
     * be held in a handler meanwhile (see grace.h), with exit_stopped, or exit_output_failed
     * when the output had failed. For the daemon, which one server serves.
     */
    bool keep_grace_period;
    int exit_stopped;
    int exit_output_failed;
    /*
     * For a read function that may wait for input: srv_stop, and a write that fails, call
     * stop_reading(stop_reading_context) so that the read in progress, or the next one, returns
     * -1 with errno ECANCELED (as stdio_stop_reading does). Async-signal-safe. NULL: the loop
     * looks for a stop between reads only.
     */
    void (*stop_reading)(void *context);
    void *stop_reading_context;
    /*
     * Whether nobody reads the output any more (the client closed its end of it), asked while
     * the calls in flight at the end of input are waited for: a call that never ends and never
     * writes would otherwise keep rpcd waiting for a client that has gone. True fails the output
     * as a write would (EPIPE). Must not block. NULL: only a failed write tells.
     */
    bool (*output_closed)(void *context);
    void *output_closed_context;
    /* MCP's tasks: what the session's task store keeps; most_tasks 0: MCP_TASKS_LIMITS. */
    mcp_tasks_limits tasks;
} srv_options;

enum srv_result {
    SRV_DONE = 0,           /* end of input, every request answered */
    SRV_STOPPED = 1,        /* srv_stop, or the end of an MCP session's input: every call
                               finished within the grace period */
    SRV_STOPPED_EARLY = 2,  /* the same, some calls still running after the grace period */
    SRV_OUTPUT_FAILED = -1, /* the client closed our output (EPIPE) */
    SRV_INPUT_FAILED = -2,  /* reading failed */
    SRV_NO_MEMORY = -3,
};

typedef struct server server;

/*
 * Prepares a server for methods (borrowed, read-only while serving) writing to write/sink
 * (borrowed). Returns 0 and *out (new), or -1.
 */
int srv_new(const registry *methods, const srv_options *options, out_write_fn write, void *sink,
            server **out);

/* Serves from read/source until the end of input or srv_stop. Returns an srv_result. */
int srv_run(server *srv, lr_read_fn read, void *source);

/*
 * Asks a running server to stop: srv_run stops reading (see stop_reading), marks every call
 * cancelled and waits up to the grace period. Async-signal-safe, any thread: made to be called
 * from a signal handler.
 */
void srv_stop(server *srv);

/*
 * Takes a generation published since the last line, letting go of the one before: plugins a
 * reload replaced or removed are then shut down once their last call ends, without waiting for
 * the client's next line. Only on the reading thread, between lines (the transport's
 * stdio_set_before_read: no line is half dispatched when the input is read).
 */
void srv_refresh(server *srv);

/*
 * Tells the MCP clients that the tool list changed: notifications/tools/list_changed to a
 * handshake-era client once it has had the answer to its initialize (one that never initialized
 * hears nothing that way), and to the subscriptions/listen streams that asked for it (with
 * toolsListChanged). For the code that replaces the tools while srv_run serves. Any thread; not
 * async-signal-safe. Returns how many were told (the client, then each stream; 0: none), or -1
 * when writing failed.
 */
int srv_tools_changed(server *srv);

/* srv_tools_changed for any list MCP clients read: notifications/prompts/list_changed, or
 * notifications/resources/list_changed (resources and templates). */
int srv_list_changed(server *srv, mcp_list_kind kind);

/* The calls in flight of srv (borrowed, alive until srv_free): for the control socket's view of
 * them (call_list) and its cancel (call_cancel). */
struct call_table *srv_calls(server *srv);

/* True when no call is in flight any more (then srv_free and unloading plugins are safe). */
bool srv_finished(server *srv);

/* Frees the server. Only when srv_finished: running calls must not find their context gone. */
void srv_free(server *srv);

/* srv_new, srv_run, srv_free in one, for sessions nobody needs to stop. */
int srv_serve(const registry *methods, const srv_options *options, lr_read_fn read, void *source,
              out_write_fn write, void *sink);

#endif
