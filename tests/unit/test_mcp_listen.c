/* SPDX-License-Identifier: MIT */
/*
 * subscriptions/listen streams, byte for byte: the acknowledgement, notifications/tools/
 * list_changed to the streams that asked for it (the function a reload calls, also through a
 * serving server), the client's two ways to end a stream, and the results when rpcd goes.
 */
#include "base/buffer.h"
#include "mcp/mcp_listen.h"
#include "base/output.h"
#include "methods/registry.h"
#include "serve/server.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define SPAN(text) ((js_span){(text), strlen(text)})
#define SERVER_INFO "{\"name\":\"rpcd\",\"version\":\"" RPCD_VERSION "\"}"
#define ACK                                                                                        \
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":"
#define CHANGED "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\",\"params\":"
#define STREAM_ID(id) "{\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":" id "}"

/* Everything written, as one text. */
static int collect(void *sink, const struct iovec *parts, int part_count)
{
    buffer *text = sink;
    for (int i = 0; i < part_count; i++)
        if (buf_append(text, parts[i].iov_base, parts[i].iov_len) != 0)
            return -1;
    return 0;
}

/* What was written since the last call, as lines. */
static void assert_written(output *out, buffer *text, const char *expected)
{
    assert_int_equal(out_flush(out), 0);
    if (text->length != strlen(expected) ||
        (text->length > 0 && memcmp(text->data, expected, text->length) != 0))
        fail_msg("wrote '%.*s', expected '%s'", (int)text->length, text->data, expected);
    buf_clear(text);
}

static void test_streams(void **state)
{
    (void)state;
    buffer text = BUFFER_INIT;
    output *out;
    assert_int_equal(out_new(collect, &text, &out), 0);
    mcp_listeners *listeners;
    assert_int_equal(mcp_listeners_new(out, &listeners), 0);
    /* Nobody listens: nobody is told. */
    assert_int_equal(mcp_listen_tools_changed(listeners), 0);
    assert_written(out, &text, "");

    mcp_listen_filter tools = {.tools_list_changed = true}, nothing = {0};
    assert_int_equal(mcp_listen_open(listeners, SPAN("\"a\""), &tools), MCP_LISTEN_OPENED);
    assert_written(out, &text,
                   ACK STREAM_ID("\"a\"") ",\"notifications\":{\"toolsListChanged\":true}}}\n");
    assert_int_equal(mcp_listen_open(listeners, SPAN("7"), &nothing), MCP_LISTEN_OPENED);
    assert_written(out, &text, ACK STREAM_ID("7") ",\"notifications\":{}}}\n");
    assert_int_equal(mcp_listen_open(listeners, SPAN("-1.5e3"), &tools), MCP_LISTEN_OPENED);
    assert_written(out, &text,
                   ACK STREAM_ID("-1.5e3") ",\"notifications\":{\"toolsListChanged\":true}}}\n");
    /* Ids are told apart by their text, as a cancellation finds a call. */
    assert_int_equal(mcp_listen_open(listeners, SPAN("\"a\""), &nothing), MCP_LISTEN_DUPLICATE_ID);
    assert_written(out, &text, "");
    assert_int_equal(mcp_listen_count(listeners), 3);

    /* The tool list changed: the two streams that asked are told, each under its id. */
    assert_int_equal(mcp_listen_tools_changed(listeners), 2);
    assert_written(out, &text,
                   CHANGED STREAM_ID("\"a\"") "}}\n" CHANGED STREAM_ID("-1.5e3") "}}\n");

    /* notifications/cancelled ends a stream without a word; $/cancelRequest with -32800. */
    assert_int_equal(mcp_listen_cancel(listeners, SPAN("\"a\""), false), 1);
    assert_written(out, &text, "");
    assert_int_equal(mcp_listen_cancel(listeners, SPAN("\"a\""), false), 0);
    assert_int_equal(mcp_listen_cancel(listeners, SPAN("-1.5e3"), true), 1);
    assert_written(out, &text,
                   "{\"jsonrpc\":\"2.0\",\"id\":-1.5e3,\"error\":{\"code\":-32800,\"message\":"
                   "\"Request cancelled\"}}\n");
    assert_int_equal(mcp_listen_tools_changed(listeners), 0);
    assert_written(out, &text, "");

    /* rpcd goes: the streams still open get their results, in the order opened. */
    assert_int_equal(mcp_listen_open(listeners, SPAN("\"b\""), &nothing), MCP_LISTEN_OPENED);
    assert_written(out, &text, ACK STREAM_ID("\"b\"") ",\"notifications\":{}}}\n");
    mcp_listen_close_all(listeners);
    assert_written(out, &text,
                   "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"resultType\":\"complete\","
                   "\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":7,"
                   "\"io.modelcontextprotocol/serverInfo\":" SERVER_INFO "}}}\n"
                   "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"result\":{\"resultType\":\"complete\","
                   "\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":\"b\","
                   "\"io.modelcontextprotocol/serverInfo\":" SERVER_INFO "}}}\n");
    assert_int_equal(mcp_listen_count(listeners), 0);
    mcp_listen_close_all(listeners);
    assert_written(out, &text, "");
    mcp_listeners_free(listeners);
    out_free(out);
    buf_free(&text);
}

#define UPDATED "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\",\"params\":"

/* A stream's _meta in the params of a notification it is sent. */
#define META_9 "\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":9}"

/* notifications/resources/updated: once for the session's resources/subscribe, once for each
 * stream that lists the URI; the count told is returned. */
static void test_resource_updates(void **state)
{
    (void)state;
    buffer text = BUFFER_INIT;
    output *out;
    assert_int_equal(out_new(collect, &text, &out), 0);
    mcp_listeners *listeners;
    assert_int_equal(mcp_listeners_new(out, &listeners), 0);
    /* Nobody subscribed: nobody is told. */
    assert_int_equal(mcp_listen_resource_updated(listeners, "a://x", 5), 0);
    assert_written(out, &text, "");

    /* The session subscribed (twice is once). */
    assert_int_equal(mcp_listen_subscribe(listeners, SPAN("\"a://x\""), true), 0);
    assert_int_equal(mcp_listen_subscribe(listeners, SPAN("\"a://x\""), true), 0);
    assert_int_equal(mcp_listen_resource_updated(listeners, "a://x", 5), 1);
    assert_written(out, &text, UPDATED "{\"uri\":\"a://x\"}}\n");

    /* A stream that lists it, and another URI: each listener is told under its own id. */
    mcp_listen_filter uris = {.resource_uris = SPAN("[\"a://x\",\"a://y\"]")};
    assert_int_equal(mcp_listen_open(listeners, SPAN("9"), &uris), MCP_LISTEN_OPENED);
    assert_written(out, &text,
                   ACK STREAM_ID("9") ",\"notifications\":{\"resourceSubscriptions\":[\"a://x\","
                                      "\"a://y\"]}}}\n");
    assert_int_equal(mcp_listen_resource_updated(listeners, "a://x", 5), 2);
    assert_written(out, &text,
                   UPDATED "{\"uri\":\"a://x\"}}\n" UPDATED "{\"uri\":\"a://x\"," META_9 "}}\n");
    assert_int_equal(mcp_listen_resource_updated(listeners, "a://y", 5), 1);
    assert_written(out, &text, UPDATED "{\"uri\":\"a://y\"," META_9 "}}\n");
    assert_int_equal(mcp_listen_resource_updated(listeners, "a://z", 5), 0);
    assert_written(out, &text, "");

    /* The session unsubscribed; the stream still listens. */
    assert_int_equal(mcp_listen_subscribe(listeners, SPAN("\"a://x\""), false), 0);
    assert_int_equal(mcp_listen_resource_updated(listeners, "a://x", 5), 1);
    assert_written(out, &text, UPDATED "{\"uri\":\"a://x\"," META_9 "}}\n");

    /* At most 4096 URIs for the session: the next one is refused with -2, one already in is
     * still accepted. */
    char uri[32];
    for (int i = 0; i < 4096; i++) {
        int length = snprintf(uri, sizeof uri, "\"u://%d\"", i);
        assert_int_equal(mcp_listen_subscribe(listeners, (js_span){uri, (size_t)length}, true), 0);
    }
    assert_int_equal(mcp_listen_subscribe(listeners, SPAN("\"u://more\""), true), -2);
    assert_int_equal(mcp_listen_subscribe(listeners, SPAN("\"u://7\""), true), 0);
    assert_int_equal(mcp_listen_resource_updated(listeners, "u://4095", 8), 1);
    assert_written(out, &text, UPDATED "{\"uri\":\"u://4095\"}}\n");

    mcp_listen_close_all(listeners);
    buf_clear(&text);
    mcp_listeners_free(listeners);
    out_free(out);
    buf_free(&text);
}

/* A client of a serving server: opens a stream, then, while rpcd reads on, the tools change. */
typedef struct session {
    server *srv;
    int reads;
    int told;
} session;

static ssize_t session_read(void *source, char *room, size_t capacity)
{
    session *s = source;
    static const char listen[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscriptions/listen\",\"params\":{\"_meta\":"
        "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/"
        "clientCapabilities\":{}},\"notifications\":"
        "{\"toolsListChanged\":true}}}\n";
    switch (s->reads++) {
    case 0:
        assert_true(capacity >= sizeof listen - 1);
        memcpy(room, listen, sizeof listen - 1);
        return (ssize_t)(sizeof listen - 1);
    case 1:
        /* What a reload does once the new tools are in place. */
        s->told = srv_tools_changed(s->srv);
        return 0;
    default: return 0;
    }
}

static void test_through_a_server(void **state)
{
    (void)state;
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    buffer text = BUFFER_INIT;
    srv_options options = {
        .limits.max_line_bytes = 4096,
        .limits.max_depth = 64,
        .limits.max_batch = 16,
        .limits.workers = 0,
        .limits.max_in_flight = 16,
        .shutdown_grace_ms = 100,
    };
    session s = {0};
    assert_int_equal(srv_new(methods, &options, collect, &text, &s.srv), 0);
    assert_int_equal(srv_run(s.srv, session_read, &s), SRV_DONE);
    assert_int_equal(s.told, 1);
    static const char expected[] =
        ACK STREAM_ID("1") ",\"notifications\":{\"toolsListChanged\":true}}}\n" CHANGED STREAM_ID(
            "1") "}}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"complete\",\"_meta\":"
                 "{\"io.modelcontextprotocol/subscriptionId\":1,"
                 "\"io.modelcontextprotocol/serverInfo\":" SERVER_INFO "}}}\n";
    if (text.length != strlen(expected) || memcmp(text.data, expected, text.length) != 0)
        fail_msg("wrote '%.*s', expected '%s'", (int)text.length, text.data, expected);
    srv_free(s.srv);
    reg_free(methods);
    buf_free(&text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streams),
        cmocka_unit_test(test_resource_updates),
        cmocka_unit_test(test_through_a_server),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
