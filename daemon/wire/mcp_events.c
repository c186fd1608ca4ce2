/* SPDX-License-Identifier: MIT */
/*
 * The one place plugins' MCP events meet the server: a sink behind a lock (attached and
 * detached rarely, used from any thread), and the client's log level as an atomic.
 */
#include "wire/mcp_events.h"

#include "json/json_scan.h"

#include <rpcd/plugin.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static mcp_event_sink current_sink;
static bool sink_attached;
static atomic_int client_level = -1;
static void (*level_watcher)(void *context, int level);
static void *level_watcher_context;

void mcp_events_attach(const mcp_event_sink *sink)
{
    pthread_mutex_lock(&sink_lock);
    sink_attached = sink != NULL;
    if (sink)
        current_sink = *sink;
    else
        memset(&current_sink, 0, sizeof current_sink);
    pthread_mutex_unlock(&sink_lock);
}

int mcp_events_resource_updated(const char *uri)
{
    if (!uri)
        return -1;
    size_t length = strnlen(uri, MCP_EVENTS_MAX_URI + 1);
    if (length > MCP_EVENTS_MAX_URI || !js_utf8_valid(uri, length))
        return -1;
    /* Held while the sink writes: a detach waits for it, so the context is never freed under
     * a write. Writes of notifications are short and never call back into here. */
    pthread_mutex_lock(&sink_lock);
    if (sink_attached && current_sink.resource_updated)
        current_sink.resource_updated(current_sink.context, uri, length);
    pthread_mutex_unlock(&sink_lock);
    return 0;
}

int mcp_events_client_log_level(void)
{
    return atomic_load_explicit(&client_level, memory_order_relaxed);
}

void mcp_events_set_client_log_level(int level)
{
    pthread_mutex_lock(&sink_lock);
    atomic_store(&client_level, level);
    if (level_watcher)
        level_watcher(level_watcher_context, level);
    pthread_mutex_unlock(&sink_lock);
}

void mcp_events_watch_log_level(void (*changed)(void *context, int level), void *context)
{
    pthread_mutex_lock(&sink_lock);
    level_watcher = changed;
    level_watcher_context = context;
    pthread_mutex_unlock(&sink_lock);
}

void mcp_events_log(const char *logger, int level, const char *text, size_t length)
{
    int wanted = mcp_events_client_log_level();
    if (wanted < 0 || level > wanted || !text)
        return;
    length = strnlen(text, length);
    pthread_mutex_lock(&sink_lock);
    if (sink_attached && current_sink.log_line)
        current_sink.log_line(current_sink.context, logger ? logger : "plugin", level, text,
                              length);
    pthread_mutex_unlock(&sink_lock);
}

int mcp_events_level_of(js_span name)
{
    static const struct {
        const char *name;
        int level;
    } levels[] = {{"debug", RPCD_LOG_DEBUG}, {"info", RPCD_LOG_INFO},
                  {"notice", RPCD_LOG_INFO}, {"warning", RPCD_LOG_WARNING},
                  {"error", RPCD_LOG_ERROR}, {"critical", RPCD_LOG_ERROR},
                  {"alert", RPCD_LOG_ERROR}, {"emergency", RPCD_LOG_ERROR}};
    if (name.length == 0 || js_kind_of(name) != JS_STRING)
        return -1;
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        if (js_string_equals(name, levels[i].name, strlen(levels[i].name)))
            return levels[i].level;
    return -1;
}

int mcp_events_append_message(buffer *out, const char *logger, int level, const char *text,
                              size_t length)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    int failed = buf_printf(out,
                            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
                            "\"params\":{\"level\":\"%s\",\"logger\":",
                            names[level < 0   ? 0
                                  : level > 3 ? 3
                                              : level]);
    failed |= buf_append_json_string(out, logger, strlen(logger));
    failed |= buf_append_string(out, ",\"data\":");
    /* A plugin's text need not be UTF-8: the protocol's line must be. */
    if (js_utf8_valid(text, length)) {
        failed |= buf_append_json_string(out, text, length);
    } else {
        buffer ascii = BUFFER_INIT;
        for (size_t i = 0; i < length; i++)
            failed |= buf_append_char(&ascii, (unsigned char)text[i] < 0x80 ? text[i] : '?');
        failed |= buf_append_json_string(out, ascii.data, ascii.length);
        buf_free(&ascii);
    }
    return failed | buf_append_string(out, "}}");
}
