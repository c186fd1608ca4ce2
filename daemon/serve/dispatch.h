/* SPDX-License-Identifier: MIT */
/*
 * One line in, its calls started: validation, batches, envelope rules, the daemon's own
 * cancellation notifications and method lookup, in that order. Everything the client can get
 * wrong is answered here, never fatal.
 */
#ifndef RPCD_DISPATCH_H
#define RPCD_DISPATCH_H

#include "base/serving_limits.h"
#include "calls/call.h"
#include "methods/generation.h"
#include "mcp/mcp.h"
#include "mcp/mcp_listen.h"
#include "base/output.h"
#include "methods/registry.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct dispatcher {
    call_table *calls;       /* borrowed: runs the calls */
    output *out;             /* borrowed: where responses go */
    serving_limits limits;   /* max_depth: deepest nesting in a line; max_batch */
    gen_reader *generations; /* borrowed: the methods and MCP tools, refreshed each line */

    /* borrowed: the subscriptions/listen streams; NULL: none offered */
    mcp_listeners *listeners;
    /* Borrowed, may be NULL: the client's MCP session, which each MCP message is noted in
     * (mcp_session_note). */
    mcp_session *session;
} dispatcher;

/*
 * Handles one line (without its newline): every request it holds gets one response, when its
 * call ends; notifications and blank lines get none. May block while max_in_flight calls are
 * in flight. Returns 0, or -1 when the output failed or waiting was interrupted.
 */
int disp_line(const dispatcher *dispatch, const char *line, size_t length);

/* Answers a line that was longer than the limit and skipped: one -32600 with id null. */
int disp_line_too_long(const dispatcher *dispatch, size_t length, size_t limit);

#endif
