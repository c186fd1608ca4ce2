/* SPDX-License-Identifier: MIT */
/*
 * The open subscriptions/listen streams of one server (MCP's stateless revision): each is the
 * request that opened it, answered only when the stream ends, and the notifications it asked
 * for, tagged with that request's id.
 */
#ifndef RPCD_MCP_LISTEN_H
#define RPCD_MCP_LISTEN_H

#include "json/json_scan.h"
#include "mcp/mcp.h"
#include "base/output.h"

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

typedef enum mcp_list_kind {
    MCP_LIST_OF_TOOLS = 0,
    MCP_LIST_OF_PROMPTS = 1,
    MCP_LIST_OF_RESOURCES = 2, /* resources and templates */
} mcp_list_kind;

/* mcp_listen_tools_changed for any list: the streams that asked for its ...ListChanged. */
int mcp_listen_list_changed(mcp_listeners *listeners, mcp_list_kind kind);

/*
 * The handshake era's resources/subscribe (subscribe true) or unsubscribe of uri (a validated
 * JSON string). Returns 0; -1 (memory); -2 when 4096 URIs are subscribed already. Thread-safe.
 */
int mcp_listen_subscribe(mcp_listeners *listeners, js_span uri, bool subscribe);

/*
 * Writes notifications/resources/updated for uri (length bytes of UTF-8): once for the session
 * when it subscribed to it, and once for each stream whose resourceSubscriptions list it.
 * Returns how many were told, or -1 when a write failed. Thread-safe.
 */
int mcp_listen_resource_updated(mcp_listeners *listeners, const char *uri, size_t length);

/*
 * Writes notifications/tasks for the task task_id (NUL-terminated) to each stream whose taskIds
 * list it: params are members (length bytes, a DetailedTask's members without braces) and the
 * stream's _meta. Returns how many were told, or -1 when a write failed. Thread-safe; NULL
 * listeners tell nobody.
 */
int mcp_listen_task_changed(mcp_listeners *listeners, const char *task_id, const char *members,
                            size_t length);

/*
 * Ends every stream gracefully, as a server going away does: each request gets its result, with
 * the stream's id in _meta. Thread-safe.
 */
void mcp_listen_close_all(mcp_listeners *listeners);

/* The number of streams open. Thread-safe. */
size_t mcp_listen_count(mcp_listeners *listeners);

#endif
