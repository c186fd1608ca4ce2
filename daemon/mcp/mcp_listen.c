/* SPDX-License-Identifier: MIT */
/*
 * subscriptions/listen streams: a short list of the requests that opened them, under one mutex
 * also held while a stream's lines are written, so that its acknowledgement always goes out
 * before anything else tagged with its id.
 */
#include "mcp/mcp_listen.h"

#include "base/buffer.h"
#include "mcp/mcp_revision.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A set of URIs (decoded, NUL-terminated), small enough to search in order. */
typedef struct uri_set {
    char **items;
    size_t count;
} uri_set;

typedef struct stream {
    char *id; /* the request's id as written: JSON text */
    size_t id_length;
    mcp_listen_filter filter; /* its spans are not kept: see uris and tasks */
    uri_set uris;             /* resourceSubscriptions */
    uri_set tasks;            /* taskIds */
} stream;

struct mcp_listeners {
    output *out;
    pthread_mutex_t lock;
    stream *streams;
    size_t count, capacity;
    uri_set subscribed; /* the handshake era's resources/subscribe */
};

/* The most URIs one set holds: a client cannot grow rpcd without bound. */
enum { MOST_URIS = 4096 };

static void uri_set_free(uri_set *set)
{
    for (size_t i = 0; i < set->count; i++)
        free(set->items[i]);
    free(set->items);
    *set = (uri_set){NULL, 0};
}

static long uri_set_find(const uri_set *set, const char *uri, size_t length)
{
    for (size_t i = 0; i < set->count; i++)
        if (strlen(set->items[i]) == length && memcmp(set->items[i], uri, length) == 0)
            return (long)i;
    return -1;
}

/* Adds the decoded JSON string uri to set unless there. Returns 0, -1 (memory), -2 (full). */
static int uri_set_add(uri_set *set, js_span uri)
{
    size_t needed = js_string_decoded_length(uri), length;
    char *text = malloc(needed + 1);
    if (!text || js_string_decode(uri, text, needed + 1, &length) != 0) {
        free(text);
        return -1;
    }
    text[length] = '\0';
    if (uri_set_find(set, text, length) >= 0) {
        free(text);
        return 0;
    }
    char **grown =
        set->count < MOST_URIS ? realloc(set->items, (set->count + 1) * sizeof *set->items) : NULL;
    if (!grown) {
        free(text);
        return set->count < MOST_URIS ? -1 : -2;
    }
    set->items = grown;
    set->items[set->count++] = text;
    return 0;
}

int mcp_listeners_new(output *out, mcp_listeners **result)
{
    mcp_listeners *listeners = calloc(1, sizeof *listeners);
    if (!listeners)
        return -1;
    listeners->out = out;
    pthread_mutex_init(&listeners->lock, NULL);
    *result = listeners;
    return 0;
}

void mcp_listeners_free(mcp_listeners *listeners)
{
    if (!listeners)
        return;
    for (size_t i = 0; i < listeners->count; i++) {
        free(listeners->streams[i].id);
        uri_set_free(&listeners->streams[i].uris);
        uri_set_free(&listeners->streams[i].tasks);
    }
    free(listeners->streams);
    uri_set_free(&listeners->subscribed);
    pthread_mutex_destroy(&listeners->lock);
    free(listeners);
}

/* The index of the stream whose id is id's text, or -1. Under the lock. */
static long find(const mcp_listeners *listeners, js_span id)
{
    for (size_t i = 0; i < listeners->count; i++) {
        const stream *item = &listeners->streams[i];
        if (item->id_length == id.length && memcmp(item->id, id.start, id.length) == 0)
            return (long)i;
    }
    return -1;
}

/* Writes text (one JSON message, no newline) as a line. Returns 0 or -1. */
static int write_line(mcp_listeners *listeners, const buffer *text)
{
    struct iovec part = {text->data, text->length};
    return out_write_line(listeners->out, &part, 1);
}

/* Appends the _meta of a stream's messages: its id, and the server's identity on results. */
static int append_meta(buffer *out, const stream *item, bool identity)
{
    int failed = buf_append_string(out, "\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":");
    failed |= buf_append(out, item->id, item->id_length);
    if (identity) {
        failed |= buf_append_string(out, ",\"io.modelcontextprotocol/serverInfo\":");
        failed |= mcp_append_implementation(out);
    }
    return failed | buf_append_char(out, '}');
}

/* The stream's notifications/subscriptions/acknowledged: what rpcd will send of what was asked
 * (route_listen left out what no plugin offers). Returns 0 or -1. */
static int append_acknowledgement(buffer *ack, const stream *item)
{
    const mcp_listen_filter *filter = &item->filter;
    int failed = buf_append_string(
        ack, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\","
             "\"params\":{");
    failed |= append_meta(ack, item, false);
    failed |= buf_append_string(ack, ",\"notifications\":{");
    const char *separator = "";
    static const char *const flags[] = {"toolsListChanged", "promptsListChanged",
                                        "resourcesListChanged"};
    const bool asked[] = {filter->tools_list_changed, filter->prompts_list_changed,
                          filter->resources_list_changed};
    for (size_t i = 0; i < 3; i++) {
        if (!asked[i])
            continue;
        failed |= buf_printf(ack, "%s\"%s\":true", separator, flags[i]);
        separator = ",";
    }
    const uri_set *const lists[] = {&item->uris, &item->tasks};
    static const char *const names[] = {"resourceSubscriptions", "taskIds"};
    for (size_t list = 0; list < 2; list++) {
        if (lists[list]->count == 0)
            continue;
        failed |= buf_printf(ack, "%s\"%s\":[", separator, names[list]);
        for (size_t i = 0; i < lists[list]->count; i++) {
            const char *text = lists[list]->items[i];
            if (i > 0)
                failed |= buf_append_char(ack, ',');
            failed |= buf_append_json_string(ack, text, strlen(text));
        }
        failed |= buf_append_char(ack, ']');
        separator = ",";
    }
    return failed | buf_append_string(ack, "}}}");
}

/* Adds each string of list (an array, or an empty span) to set. Returns 0 or -1 (memory). */
static int fill_set(uri_set *set, js_span list)
{
    if (list.length == 0)
        return 0;
    js_iter items;
    js_span ignored, item;
    js_iter_init(&items, list);
    while (js_iter_next(&items, &ignored, &item))
        if (uri_set_add(set, item) == -1)
            return -1;
    return 0;
}

int mcp_listen_open(mcp_listeners *listeners, js_span id, const mcp_listen_filter *filter)
{
    pthread_mutex_lock(&listeners->lock);
    int status = MCP_LISTEN_OPENED;
    if (find(listeners, id) >= 0) {
        status = MCP_LISTEN_DUPLICATE_ID;
        goto done;
    }
    if (listeners->count == listeners->capacity) {
        size_t capacity = listeners->capacity ? listeners->capacity * 2 : 4;
        stream *grown = realloc(listeners->streams, capacity * sizeof *grown);
        if (!grown) {
            status = MCP_LISTEN_NO_MEMORY;
            goto done;
        }
        listeners->streams = grown;
        listeners->capacity = capacity;
    }
    stream item = {malloc(id.length ? id.length : 1), id.length, *filter, {NULL, 0}, {NULL, 0}};
    item.filter.resource_uris = item.filter.task_ids = (js_span){NULL, 0};
    if (!item.id) {
        status = MCP_LISTEN_NO_MEMORY;
        goto done;
    }
    memcpy(item.id, id.start, id.length);
    buffer ack = BUFFER_INIT;
    /* Past MOST_URIS of either, the rest is left out of the acknowledgement. */
    int failed = fill_set(&item.uris, filter->resource_uris) |
                 fill_set(&item.tasks, filter->task_ids) | append_acknowledgement(&ack, &item);
    if (failed) {
        buf_free(&ack);
        uri_set_free(&item.uris);
        uri_set_free(&item.tasks);
        free(item.id);
        status = MCP_LISTEN_NO_MEMORY;
        goto done;
    }
    listeners->streams[listeners->count++] = item;
    /* A client that is gone ends its streams with the output: nothing else to undo. */
    write_line(listeners, &ack);
    buf_free(&ack);
done:
    pthread_mutex_unlock(&listeners->lock);
    return status;
}

/* Removes the stream at index, keeping the others in the order they were opened. Under the lock. */
static void remove_at(mcp_listeners *listeners, size_t index)
{
    free(listeners->streams[index].id);
    uri_set_free(&listeners->streams[index].uris);
    uri_set_free(&listeners->streams[index].tasks);
    listeners->count--;
    memmove(&listeners->streams[index], &listeners->streams[index + 1],
            (listeners->count - index) * sizeof *listeners->streams);
}

int mcp_listen_cancel(mcp_listeners *listeners, js_span id, bool respond)
{
    pthread_mutex_lock(&listeners->lock);
    long index = find(listeners, id);
    if (index >= 0) {
        if (respond) {
            buffer line = BUFFER_INIT;
            int failed = buf_append_string(&line, "{\"jsonrpc\":\"2.0\",\"id\":");
            failed |= buf_append(&line, id.start, id.length);
            failed |= buf_append_string(
                &line, ",\"error\":{\"code\":-32800,\"message\":\"Request cancelled\"}}");
            if (!failed)
                write_line(listeners, &line);
            buf_free(&line);
        }
        remove_at(listeners, (size_t)index);
    }
    pthread_mutex_unlock(&listeners->lock);
    return index >= 0;
}

/*
 * Writes notification method to a stream, with its id in _meta and, when uri is not NULL,
 * {"uri":...} (length bytes) in params; line is scratch. Returns 0 or -1. Under the lock.
 */
static int tell_stream(mcp_listeners *listeners, const stream *item, const char *method,
                       const char *uri, size_t length, buffer *line)
{
    buf_clear(line);
    int failed = buf_printf(line, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\",\"params\":{", method);
    if (uri) {
        failed |= buf_append_string(line, "\"uri\":");
        failed |= buf_append_json_string(line, uri, length);
        failed |= buf_append_char(line, ',');
    }
    failed |= append_meta(line, item, false);
    failed |= buf_append_string(line, "}}");
    return failed || write_line(listeners, line) != 0 ? -1 : 0;
}

int mcp_listen_list_changed(mcp_listeners *listeners, mcp_list_kind kind)
{
    static const char *const methods[] = {"notifications/tools/list_changed",
                                          "notifications/prompts/list_changed",
                                          "notifications/resources/list_changed"};
    pthread_mutex_lock(&listeners->lock);
    int told = 0;
    buffer line = BUFFER_INIT;
    for (size_t i = 0; i < listeners->count && told >= 0; i++) {
        const stream *item = &listeners->streams[i];
        bool asked = kind == MCP_LIST_OF_TOOLS     ? item->filter.tools_list_changed
                     : kind == MCP_LIST_OF_PROMPTS ? item->filter.prompts_list_changed
                                                   : item->filter.resources_list_changed;
        if (!asked)
            continue;
        told = tell_stream(listeners, item, methods[kind], NULL, 0, &line) != 0 ? -1 : told + 1;
    }
    buf_free(&line);
    pthread_mutex_unlock(&listeners->lock);
    return told;
}

int mcp_listen_tools_changed(mcp_listeners *listeners)
{
    return mcp_listen_list_changed(listeners, MCP_LIST_OF_TOOLS);
}

int mcp_listen_subscribe(mcp_listeners *listeners, js_span uri, bool subscribe)
{
    pthread_mutex_lock(&listeners->lock);
    int status = 0;
    if (subscribe) {
        status = uri_set_add(&listeners->subscribed, uri);
    } else {
        size_t needed = js_string_decoded_length(uri), length;
        char *text = malloc(needed + 1);
        if (text && js_string_decode(uri, text, needed + 1, &length) == 0) {
            long index = uri_set_find(&listeners->subscribed, text, length);
            if (index >= 0) {
                uri_set *set = &listeners->subscribed;
                free(set->items[index]);
                set->items[index] = set->items[--set->count];
            }
        } else {
            status = -1;
        }
        free(text);
    }
    pthread_mutex_unlock(&listeners->lock);
    return status;
}

int mcp_listen_resource_updated(mcp_listeners *listeners, const char *uri, size_t length)
{
    pthread_mutex_lock(&listeners->lock);
    int told = 0;
    buffer line = BUFFER_INIT;
    if (uri_set_find(&listeners->subscribed, uri, length) >= 0) {
        int failed = buf_append_string(
            &line, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\","
                   "\"params\":{\"uri\":");
        failed |= buf_append_json_string(&line, uri, length);
        failed |= buf_append_string(&line, "}}");
        told = failed || write_line(listeners, &line) != 0 ? -1 : 1;
    }
    for (size_t i = 0; i < listeners->count && told >= 0; i++) {
        const stream *item = &listeners->streams[i];
        if (uri_set_find(&item->uris, uri, length) < 0)
            continue;
        told =
            tell_stream(listeners, item, "notifications/resources/updated", uri, length, &line) != 0
                ? -1
                : told + 1;
    }
    buf_free(&line);
    pthread_mutex_unlock(&listeners->lock);
    return told;
}

int mcp_listen_task_changed(mcp_listeners *listeners, const char *task_id, const char *members,
                            size_t length)
{
    if (!listeners)
        return 0;
    pthread_mutex_lock(&listeners->lock);
    int told = 0;
    buffer line = BUFFER_INIT;
    for (size_t i = 0; i < listeners->count && told >= 0; i++) {
        const stream *item = &listeners->streams[i];
        if (uri_set_find(&item->tasks, task_id, strlen(task_id)) < 0)
            continue;
        buf_clear(&line);
        int failed = buf_append_string(
            &line, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tasks\",\"params\":{");
        failed |= buf_append(&line, members, length);
        failed |= buf_append_char(&line, ',');
        failed |= append_meta(&line, item, false);
        failed |= buf_append_string(&line, "}}");
        told = failed || write_line(listeners, &line) != 0 ? -1 : told + 1;
    }
    buf_free(&line);
    pthread_mutex_unlock(&listeners->lock);
    return told;
}

void mcp_listen_close_all(mcp_listeners *listeners)
{
    pthread_mutex_lock(&listeners->lock);
    buffer line = BUFFER_INIT;
    for (size_t i = 0; i < listeners->count; i++) {
        const stream *item = &listeners->streams[i];
        buf_clear(&line);
        int failed = buf_append_string(&line, "{\"jsonrpc\":\"2.0\",\"id\":");
        failed |= buf_append(&line, item->id, item->id_length);
        failed |= buf_append_string(&line, ",\"result\":{\"resultType\":\"complete\",");
        failed |= append_meta(&line, item, true);
        failed |= buf_append_string(&line, "}}");
        if (!failed)
            write_line(listeners, &line);
    }
    buf_free(&line);
    while (listeners->count > 0)
        remove_at(listeners, listeners->count - 1);
    pthread_mutex_unlock(&listeners->lock);
}

size_t mcp_listen_count(mcp_listeners *listeners)
{
    pthread_mutex_lock(&listeners->lock);
    size_t count = listeners->count;
    pthread_mutex_unlock(&listeners->lock);
    return count;
}
