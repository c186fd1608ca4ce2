/* SPDX-License-Identifier: MIT */
/*
 * The open subscriptions/listen streams of one server (MCP's stateless revision): each is the
 * request that opened it, answered only when the stream ends, and the notifications it asked
 * for, tagged with that request's id.
 */
#ifndef RPCD_MCP_LISTEN_H
#define RPCD_MCP_LISTEN_H

#include "json_scan.h"
#include "mcp.h"
#include "output.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct mcp_listeners mcp_listeners;

/* An empty set writing to out (borrowed). Returns 0 and *result (new), or -1 (memory). */
int mcp_listeners_new(output *out, mcp_listeners **result);
/* Frees the set; streams still open are dropped unanswered (mcp_listen_close_all first). */
void mcp_listeners_free(mcp_listeners *listeners);

enum mcp_listen_open_result {
    MCP_LISTEN_OPENED = 0,
    MCP_LISTEN_NO_MEMORY = -1,
    MCP_LISTEN_DUPLICATE_ID = -2, /* a stream with this id is open: nothing done */
};

/*
 * Opens the stream of the subscriptions/listen request id (a JSON string or number, copied) for
 * filter, and writes its notifications/subscriptions/acknowledged, which lists what rpcd will
 * send. Returns an mcp_listen_open_result. Thread-safe.
 */
int mcp_listen_open(mcp_listeners *listeners, js_span id, const mcp_listen_filter *filter);

/*
 * Ends the stream whose id is exactly id's text, as the client asked: with no response
 * (notifications/cancelled), or with -32800 when respond ($/cancelRequest). Returns 1 when one
 * was open, 0 otherwise. Thread-safe.
 */
int mcp_listen_cancel(mcp_listeners *listeners, js_span id, bool respond);

/*
 * Tells every stream that asked for toolsListChanged that the tool list changed
 * (notifications/tools/list_changed). For the code that replaces the tools. Returns how many
 * were told, or -1 when a write failed. Thread-safe; not async-signal-safe.
 */
int mcp_listen_tools_changed(mcp_listeners *listeners);

/*
 * Ends every stream gracefully, as a server going away does: each request gets its result, with
 * the stream's id in _meta. Thread-safe.
 */
void mcp_listen_close_all(mcp_listeners *listeners);

/* The number of streams open. Thread-safe. */
size_t mcp_listen_count(mcp_listeners *listeners);

#endif
