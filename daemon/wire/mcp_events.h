/* SPDX-License-Identifier: MIT */
/*
 * What plugins tell the MCP client outside their calls' results: a resource changed
 * (host->resource_updated), and their log lines once the client asked for them
 * (logging/setLevel). Plugins' host functions call in from any thread, in process or from an
 * isolated plugin's proxy; the server speaking to the client attaches itself as the sink.
 */
#ifndef RPCD_MCP_EVENTS_H
#define RPCD_MCP_EVENTS_H

#include "base/buffer.h"
#include "json/json_scan.h"

#include <stddef.h>

/* Where events go; every function may be called from any thread. */
typedef struct mcp_event_sink {
    void *context; /* handed back to each function */
    /* uri: length bytes of UTF-8, not NUL-terminated. Tells a client subscribed to it. */
    void (*resource_updated)(void *context, const char *uri, size_t length);
    /* A plugin's log line the client asked to hear: logger is the plugin's name,
     * level an RPCD_LOG_* value at or above the client's, text length bytes of UTF-8. */
    void (*log_line)(void *context, const char *logger, int level, const char *text, size_t length);
} mcp_event_sink;

/*
 * Makes sink (copied; NULL: none) the place events go, replacing the one before. Returns once no
 * event is being handed to the one before, so its context may then be freed. Thread-safe.
 */
void mcp_events_attach(const mcp_event_sink *sink);

/* The longest URI resource_updated takes, in process and from an isolated plugin alike. */
#define MCP_EVENTS_MAX_URI ((size_t)64 * 1024)

/*
 * host->resource_updated: hands uri (NUL-terminated) to the sink. Returns 0 (also without a
 * sink), or -1 when uri is NULL, longer than MCP_EVENTS_MAX_URI or not UTF-8. Thread-safe.
 */
int mcp_events_resource_updated(const char *uri);

/*
 * The finest rpcd log level (RPCD_LOG_*) the client asked to hear as notifications/message, or
 * -1 when it asked for none. One atomic load: read on every plugin log line. Thread-safe.
 */
int mcp_events_client_log_level(void);

/*
 * Sets what mcp_events_client_log_level returns (-1: none) and tells the watcher, if any.
 * Thread-safe.
 */
void mcp_events_set_client_log_level(int level);

/*
 * changed(context, level) is called after each mcp_events_set_client_log_level, on its thread
 * (an isolated plugin's host is told this way); NULL stops it. Thread-safe.
 */
void mcp_events_watch_log_level(void (*changed)(void *context, int level), void *context);

/*
 * A plugin's log line (text NUL-terminated or length bytes, whichever ends first): handed to the
 * sink when level is at or above the client's level, dropped otherwise. Thread-safe.
 */
void mcp_events_log(const char *logger, int level, const char *text, size_t length);

/* MCP's level name (a JSON value) as an RPCD_LOG_* level, its eight onto rpcd's four (notice is
 * info; critical, alert and emergency are error); -1 for anything else. */
int mcp_events_level_of(js_span name);

/*
 * Appends the notifications/message line (without its line feed) of a plugin's log line: level
 * an RPCD_LOG_* value, logger NUL-terminated, text length bytes (its bytes that are not UTF-8
 * written as '?'). Returns 0, or -1 when memory ran out.
 */
int mcp_events_append_message(buffer *out, const char *logger, int level, const char *text,
                              size_t length);

#endif
