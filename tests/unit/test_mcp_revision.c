/* SPDX-License-Identifier: MIT */
/*
 * MCP's stateless revision, byte for byte: which era a request's _meta selects, the -32022 and
 * -32602 refusals and their data, the members its results carry (discovery, tools/list, ping,
 * tool results), subscriptions/listen routes, and the handshake era left as it was.
 */
#include "config/config.h"
#include "mcp/mcp.h"
#include "methods/mcp_methods.h"
#include "mcp/mcp_revision.h"
#include "methods/registry.h"
#include "wire/rpc_error.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define SPAN(text) ((js_span){(text), strlen(text)})
#define META                                                                                       \
    "\"_meta\":{\"io.modelcontextprotocol/"                                                        \
    "protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}"
#define VERSIONS "[\"2026-07-28\",\"2025-11-25\",\"2025-06-18\",\"2025-03-26\",\"2024-11-05\"]"
#define SERVER_INFO "{\"name\":\"rpcd\",\"version\":\"" RPCD_VERSION "\"}"
#define RESULT_META "\"_meta\":{\"io.modelcontextprotocol/serverInfo\":" SERVER_INFO "}"

typedef struct fixture {
    registry *methods;
    rpcd_config *config;
    mcp_tools *tools;
} fixture;

static int handler(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)call, (void)params, (void)length, (void)data;
    return RPCD_OK;
}

static int set_up(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(reg_new(&f->methods), 0);
    rpcd_method method = rpcd_method_new("echo", handler);
    method.description = "Echoes.";
    assert_int_equal(reg_add(f->methods, &method, NULL, "p", NULL), 0);
    char error[256];
    if (cfg_load_string("", "/etc/rpcd.conf", &f->config, error, sizeof error) != 0)
        fail_msg("%s", error);
    if (mcp_tools_new(f->methods, f->config, &f->tools, error, sizeof error) != 0)
        fail_msg("%s", error);
    *state = f;
    return 0;
}

static int tear_down(void **state)
{
    fixture *f = *state;
    mcp_tools_free(f->tools);
    cfg_free(f->config);
    reg_free(f->methods);
    free(f);
    return 0;
}

static void assert_bytes(const buffer *out, const char *expected)
{
    if (out->length != strlen(expected) || memcmp(out->data, expected, out->length) != 0)
        fail_msg("got '%.*s', expected '%s'", (int)out->length, out->data, expected);
}

/* The era params select, and the data of a refusal (empty otherwise). */
static int era_of(const char *params, buffer *data)
{
    buf_clear(data);
    return mcp_revision_read(params ? SPAN(params) : (js_span){NULL, 0}, data);
}

static void test_era_of_a_request(void **state)
{
    (void)state;
    buffer data = BUFFER_INIT;
    /* No _meta, no version, a version of the handshake era: served as today. */
    assert_int_equal(era_of(NULL, &data), MCP_ERA_HANDSHAKE);
    assert_int_equal(era_of("[1]", &data), MCP_ERA_HANDSHAKE);
    assert_int_equal(era_of("{\"_meta\":{\"progressToken\":1}}", &data), MCP_ERA_HANDSHAKE);
    assert_int_equal(era_of("{\"_meta\":5}", &data), MCP_ERA_HANDSHAKE);
    assert_int_equal(
        era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2025-06-18\"}}", &data),
        MCP_ERA_HANDSHAKE);
    assert_int_equal(
        era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2024-11-0\\u0035\"}}",
               &data),
        MCP_ERA_HANDSHAKE);
    assert_int_equal(data.length, 0);
    assert_int_equal(era_of("{" META "}", &data), MCP_ERA_STATELESS);
    /* Escapes decode to the same version. */
    assert_int_equal(
        era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-2\\u0038\","
               "\"io.modelcontextprotocol/clientCapabilities\":{}}}",
               &data),
        MCP_ERA_STATELESS);
    assert_int_equal(data.length, 0);
    /* The revision's requests say what the client can do: without it, -32602. */
    static const char no_capabilities[] =
        "{\"detail\":\"\\\"io.modelcontextprotocol/clientCapabilities\\\" in \\\"_meta\\\" must "
        "be one object in 2026-07-28\"}";
    assert_int_equal(
        era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}", &data),
        MCP_REVISION_INVALID);
    assert_bytes(&data, no_capabilities);
    assert_int_equal(
        era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
               "\"io.modelcontextprotocol/clientCapabilities\":[]}}",
               &data),
        MCP_REVISION_INVALID);
    assert_bytes(&data, no_capabilities);
    assert_int_equal(
        era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
               "\"io.modelcontextprotocol/clientCapabilities\":{},"
               "\"io.modelcontextprotocol/clientCapabilities\":{}}}",
               &data),
        MCP_REVISION_INVALID);
    assert_bytes(&data, no_capabilities);
    /* A version of the handshake era needs none. */
    assert_int_equal(
        era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2025-11-25\"}}", &data),
        MCP_ERA_HANDSHAKE);
    assert_int_equal(data.length, 0);
    /* Anything else: -32022, the versions rpcd speaks and the one asked for, as written. */
    assert_int_equal(
        era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"1900-01-01\"}}", &data),
        MCP_REVISION_UNSUPPORTED);
    assert_bytes(&data, "{\"supported\":" VERSIONS ",\"requested\":\"1900-01-01\"}");
    assert_int_equal(
        era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"\\u00e9\"}}", &data),
        MCP_REVISION_UNSUPPORTED);
    assert_bytes(&data, "{\"supported\":" VERSIONS ",\"requested\":\"\\u00e9\"}");
    /* Not one string: -32602, saying so. */
    static const char not_one[] =
        "{\"detail\":\"\\\"io.modelcontextprotocol/protocolVersion\\\" in \\\"_meta\\\" must be "
        "one string\"}";
    assert_int_equal(
        era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":20260728}}", &data),
        MCP_REVISION_INVALID);
    assert_bytes(&data, not_one);
    assert_int_equal(
        era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
               "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}",
               &data),
        MCP_REVISION_INVALID);
    assert_bytes(&data, not_one);
    assert_int_equal(era_of("{" META "," META "}", &data), MCP_REVISION_INVALID);
    assert_bytes(&data, "{\"detail\":\"\\\"_meta\\\" appears twice\"}");
    buf_free(&data);
}

static void test_finish_stateless_result(void **state)
{
    (void)state;
    buffer out = BUFFER_INIT;
    assert_int_equal(buf_append_string(&out, "xx{}"), 0);
    assert_int_equal(mcp_finish_stateless_result(&out, 2, false, false), 0);
    assert_bytes(&out, "xx{\"resultType\":\"complete\"}");
    buf_clear(&out);
    assert_int_equal(buf_append_string(&out, "{\"a\":1}"), 0);
    assert_int_equal(mcp_finish_stateless_result(&out, 0, true, true), 0);
    assert_bytes(&out, "{\"a\":1,\"resultType\":\"complete\",\"ttlMs\":60000,\"cacheScope\":"
                       "\"private\"," RESULT_META "}");
    /* Not an object where it should be: refused, out as it was. */
    buf_clear(&out);
    assert_int_equal(buf_append_string(&out, "[1]"), 0);
    assert_int_equal(mcp_finish_stateless_result(&out, 0, true, false), -1);
    assert_bytes(&out, "[1]");
    buf_free(&out);
}

/* Answers method with params, and checks the bytes of the result. */
static void assert_answer(const fixture *f, const char *method, const char *params,
                          const char *expected)
{
    buffer out = BUFFER_INIT;
    js_span span = params ? SPAN(params) : (js_span){NULL, 0};
    int status = mcp_answer(f->tools, method, strlen(method), span, &out);
    if (status != 0)
        fail_msg("%s %s: status %d", method, params ? params : "", status);
    assert_bytes(&out, expected);
    buf_free(&out);
}

#define DISCOVERY                                                                                  \
    "{\"supportedVersions\":" VERSIONS                                                             \
    ",\"capabilities\":{\"tools\":{\"listChanged\":true},\"logging\":{}},"                         \
    "\"serverInfo\":" SERVER_INFO ",\"resultType\":\"complete\",\"ttlMs\":60000,"                  \
    "\"cacheScope\":\"private\"," RESULT_META "}"
#define TOOL "{\"name\":\"echo\",\"description\":\"Echoes.\",\"inputSchema\":{\"type\":\"object\"}}"

static void test_stateless_answers(void **state)
{
    fixture *f = *state;
    /* Discovery is the stateless revision's, with or without a version. */
    assert_answer(f, "server/discover", "{" META "}", DISCOVERY);
    assert_answer(f, "server/discover", NULL, DISCOVERY);
    assert_answer(f, "tools/list", "{" META "}",
                  "{\"tools\":[" TOOL "],\"resultType\":\"complete\",\"ttlMs\":60000,"
                  "\"cacheScope\":\"private\"," RESULT_META "}");
    assert_answer(f, "tools/list", "{\"cursor\":\"1\"," META "}",
                  "{\"tools\":[],\"resultType\":\"complete\",\"ttlMs\":60000,"
                  "\"cacheScope\":\"private\"," RESULT_META "}");
    assert_answer(f, "ping", "{" META "}", "{\"resultType\":\"complete\"," RESULT_META "}");
    /* The handshake era, exactly as before. */
    assert_answer(f, "tools/list", NULL, "{\"tools\":[" TOOL "]}");
    assert_answer(f, "ping", NULL, "{}");
    assert_answer(f, "initialize", "{\"protocolVersion\":\"2026-07-28\"," META "}",
                  "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":"
                  "{\"listChanged\":true},\"logging\":{}},\"serverInfo\":" SERVER_INFO "}");
    /* Refusals: the status, and the data in out. */
    buffer out = BUFFER_INIT;
    static const char old[] = "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"1\"}}";
    assert_int_equal(mcp_answer(f->tools, "tools/list", 10, SPAN(old), &out), -4);
    assert_bytes(&out, "{\"supported\":" VERSIONS ",\"requested\":\"1\"}");
    buf_free(&out);
}

static void test_stateless_tool_results(void **state)
{
    (void)state;
    const call_shaper *shaper = mcp_stateless_tool_shaper();
    buffer out = BUFFER_INIT;
    assert_int_equal(shaper->result(&out, "{\"a\":1}", 7), 0);
    assert_bytes(&out, "{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"a\\\":1}\"}],"
                       "\"structuredContent\":{\"a\":1},\"isError\":false,"
                       "\"resultType\":\"complete\"}");
    buf_clear(&out);
    assert_int_equal(shaper->failure(&out, "no", 2), 0);
    assert_bytes(&out, "{\"content\":[{\"type\":\"text\",\"text\":\"no\"}],\"isError\":true,"
                       "\"resultType\":\"complete\"}");
    /* A complete result gets the revision's resultType, unless it names one: then it goes as
     * given, never with the member twice. */
    static const char plain[] = "{\"content\":[]}";
    buf_clear(&out);
    assert_int_equal(shaper->complete(&out, plain, strlen(plain)), 0);
    assert_bytes(&out, "{\"content\":[],\"resultType\":\"complete\"}");
    static const char *const named[] = {
        "{\"content\":[],\"resultType\":\"complete\"}",
        "{ \"resultType\" : \"input_required\", "
        "\"inputRequests\":{\"a\":{\"method\":\"roots/list\"}}}",
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        buf_clear(&out);
        assert_int_equal(shaper->complete(&out, named[i], strlen(named[i])), 0);
        assert_bytes(&out, named[i]);
    }
    assert_true(mcp_result_type_is(named[1], strlen(named[1]), "input_required"));
    assert_false(mcp_result_type_is(named[1], strlen(named[1]), "complete"));
    assert_false(mcp_result_type_is("[\"resultType\"]", 14, "complete"));
    assert_false(mcp_result_type_is("{\"a\":{\"resultType\":\"complete\"}}", 30, "complete"));
    buf_free(&out);
}

/* The handshake era's tool shaper: a result asking for input is one its clients cannot read. */
static void test_handshake_complete(void **state)
{
    fixture *f = *state;
    buffer out = BUFFER_INIT;
    mcp_route route;
    assert_int_equal(mcp_route_message(NULL, f->tools, "tools/call", 10,
                                       SPAN("{\"name\":\"echo\"}"), &out, &route),
                     0);
    const call_shaper *shaper = route.shaper;
    static const char complete[] = "{\"content\":[],\"resultType\":\"complete\"}";
    buf_clear(&out);
    assert_int_equal(shaper->complete(&out, complete, strlen(complete)), 0);
    assert_bytes(&out, complete);
    static const char asks[] =
        "{\"resultType\":\"input_required\",\"inputRequests\":{\"a\":{\"method\":\"roots/list\"}}}";
    buf_clear(&out);
    assert_int_equal(shaper->complete(&out, asks, strlen(asks)), -1);
    buf_free(&out);
}

/* Routes method with params; out keeps the text. */
static mcp_route route_of(const fixture *f, const char *method, const char *params, buffer *out)
{
    mcp_route route;
    buf_clear(out);
    assert_int_equal(
        mcp_route_message(NULL, f->tools, method, strlen(method), SPAN(params), out, &route), 0);
    return route;
}

static void test_routes(void **state)
{
    fixture *f = *state;
    buffer out = BUFFER_INIT;
    /* tools/call takes the shaper of the request's era. */
    mcp_route route = route_of(f, "tools/call", "{\"name\":\"echo\"," META "}", &out);
    assert_int_equal(route.kind, MCP_CALL);
    assert_ptr_equal(route.shaper, mcp_stateless_tool_shaper());
    route = route_of(f, "tools/call", "{\"name\":\"echo\"}", &out);
    assert_int_equal(route.kind, MCP_CALL);
    assert_ptr_not_equal(route.shaper, mcp_stateless_tool_shaper());
    /* A version rpcd does not speak: -32022 with data, before anything else is read. */
    route = route_of(f, "tools/call",
                     "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"x\"}}", &out);
    assert_int_equal(route.kind, MCP_REFUSED);
    assert_int_equal(route.code, RPC_UNSUPPORTED_PROTOCOL_VERSION);
    assert_true(route.has_data);
    assert_bytes(&out, "{\"supported\":" VERSIONS ",\"requested\":\"x\"}");
    assert_string_equal(rpcerr_message(route.code), "Unsupported protocol version");
    route =
        route_of(f, "ping", "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":1}}", &out);
    assert_int_equal(route.kind, MCP_REFUSED);
    assert_int_equal(route.code, 0);
    assert_int_equal(route.status, RPCD_ERR_INVALID_PARAMS);
    assert_true(route.has_data);
    /* The methods the revision removed are not found in it, and found in the handshake era. */
    static const char *const removed[] = {"initialize", "ping", "logging/setLevel",
                                          "resources/subscribe", "resources/unsubscribe"};
    for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++) {
        route = route_of(f, removed[i], "{\"level\":\"info\",\"uri\":\"a:b\"," META "}", &out);
        if (route.kind != MCP_REFUSED || route.status != RPCD_ERR_METHOD_NOT_FOUND)
            fail_msg("%s in the stateless revision was not refused with -32601", removed[i]);
        route = route_of(f, removed[i], "{\"level\":\"info\",\"uri\":\"a:b\"}", &out);
        if (route.kind == MCP_REFUSED)
            fail_msg("%s in the handshake era was refused", removed[i]);
    }
    /* Discovery names its revision, as every request of it does. */
    route = route_of(f, "server/discover", "{}", &out);
    assert_int_equal(route.kind, MCP_REFUSED);
    assert_int_equal(route.status, RPCD_ERR_INVALID_PARAMS);
    assert_true(route.has_data);
    route = route_of(f, "server/discover", "{" META "}", &out);
    assert_int_equal(route.kind, MCP_ANSWERED);
    route =
        route_of(f, "server/discover",
                 "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2025-11-25\"}}", &out);
    assert_int_equal(route.kind, MCP_ANSWERED);
    /* subscriptions/listen: what its filter asks for. */
    route = route_of(f, "subscriptions/listen",
                     "{" META ",\"notifications\":{\"toolsListChanged\":true}}", &out);
    assert_int_equal(route.kind, MCP_LISTEN);
    assert_true(route.listen.tools_list_changed);
    route = route_of(f, "subscriptions/listen",
                     "{\"notifications\":{\"toolsListChanged\":false,\"promptsListChanged\":true,"
                     "\"resourceSubscriptions\":[]}}",
                     &out);
    assert_int_equal(route.kind, MCP_LISTEN);
    assert_false(route.listen.tools_list_changed);
    static const char *const refused[] = {
        "{}",
        "{\"notifications\":[]}",
        "{\"notifications\":{},\"notifications\":{}}",
        "{\"notifications\":{\"toolsListChanged\":1}}",
        "{\"notifications\":{\"toolsListChanged\":true,\"toolsListChanged\":true}}",
        "{\"notifications\":{\"resourcesListChanged\":null}}",
        "{\"notifications\":{\"resourceSubscriptions\":{}}}",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        route = route_of(f, "subscriptions/listen", refused[i], &out);
        if (route.kind != MCP_REFUSED || route.status != RPCD_ERR_INVALID_PARAMS || !route.has_data)
            fail_msg("subscriptions/listen %s was not refused", refused[i]);
    }
    /* The stateless revision's method is rpcd's own, never a plugin's. */
    assert_int_equal(mcp_method_find("subscriptions/listen", 20), MCP_SUBSCRIPTIONS_LISTEN);
    assert_int_equal(mcp_answer(f->tools, "subscriptions/listen", 20, SPAN("{}"), &out), -1);
    buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_era_of_a_request),
        cmocka_unit_test(test_finish_stateless_result),
        cmocka_unit_test_setup_teardown(test_stateless_answers, set_up, tear_down),
        cmocka_unit_test(test_stateless_tool_results),
        cmocka_unit_test_setup_teardown(test_handshake_complete, set_up, tear_down),
        cmocka_unit_test_setup_teardown(test_routes, set_up, tear_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
