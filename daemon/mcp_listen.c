/* SPDX-License-Identifier: MIT */
/*
 * subscriptions/listen streams: a short list of the requests that opened them, under one mutex
 * also held while a stream's lines are written, so that its acknowledgement always goes out
 * before anything else tagged with its id.
 */
#include "mcp_listen.h"

#include "buffer.h"
#include "mcp_revision.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct stream {
    char *id; /* the request's id as written: JSON text */
    size_t id_length;
    mcp_listen_filter filter;
} stream;

struct mcp_listeners {
    output *out;
    pthread_mutex_t lock;
    stream *streams;
    size_t count, capacity;
};

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
    for (size_t i = 0; i < listeners->count; i++)
        free(listeners->streams[i].id);
    free(listeners->streams);
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
    stream item = {malloc(id.length ? id.length : 1), id.length, *filter};
    if (!item.id) {
        status = MCP_LISTEN_NO_MEMORY;
        goto done;
    }
    memcpy(item.id, id.start, id.length);
    /* What rpcd will send of what was asked: it has no prompts or resources to tell about. */
    buffer ack = BUFFER_INIT;
    int failed = buf_append_string(
        &ack, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\","
              "\"params\":{");
    failed |= append_meta(&ack, &item, false);
    failed |= buf_append_string(&ack, filter->tools_list_changed
                                          ? ",\"notifications\":{\"toolsListChanged\":true}}}"
                                          : ",\"notifications\":{}}}");
    if (failed) {
        buf_free(&ack);
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

int mcp_listen_tools_changed(mcp_listeners *listeners)
{
    pthread_mutex_lock(&listeners->lock);
    int told = 0;
    buffer line = BUFFER_INIT;
    for (size_t i = 0; i < listeners->count && told >= 0; i++) {
        const stream *item = &listeners->streams[i];
        if (!item->filter.tools_list_changed)
            continue;
        buf_clear(&line);
        int failed = buf_append_string(
            &line, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\","
                   "\"params\":{");
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
