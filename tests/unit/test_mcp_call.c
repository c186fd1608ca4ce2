/* SPDX-License-Identifier: MIT */
/*
 * The MCP front end's one entry, mcp_route_message: every MCP method is routed and reserved,
 * tools/call becomes the tool's method with the arguments as params and _meta kept for progress
 * (or is refused with data saying why), and the tool shaper turns results of every JSON kind and
 * failures into tool results, byte for byte.
 */
#include "config/config.h"
#include "wire/envelope.h"
#include "mcp/mcp.h"
#include "methods/mcp_methods.h"
#include "methods/registry.h"
#include "methods/reserved_names.h"
#include "wire/mcp_meta.h"
#include "mcp/mcp_revision.h"
#include "mcp/mcp_tool_params.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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
    rpcd_method method = rpcd_method_new("math.sum", handler);
    assert_int_equal(reg_add(f->methods, &method, NULL, "p", NULL), 0);
    method = rpcd_method_new("echo", handler);
    assert_int_equal(reg_add(f->methods, &method, NULL, "p", NULL), 0);
    char error[256];
    if (cfg_load_string("[mcp]\ntool.math.sum = add\n", "/etc/rpcd.conf", &f->config, error,
                        sizeof error) != 0)
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

#define SPAN(text) ((js_span){(text), strlen(text)})

static void assert_span(js_span span, const char *expected)
{
    if (span.length != strlen(expected) || memcmp(span.start, expected, span.length) != 0)
        fail_msg("got '%.*s', expected '%s'", (int)span.length, span.start, expected);
}

static void assert_bytes(const buffer *out, const char *expected)
{
    assert_span((js_span){out->data, out->length}, expected);
}

/* Routes method with params (NULL: none) and returns what became of it; out keeps the text. */
static mcp_route route_of(const fixture *f, const char *method, const char *params, buffer *out)
{
    mcp_route route;
    js_span span = params ? SPAN(params) : (js_span){NULL, 0};
    buf_clear(out);
    assert_int_equal(mcp_route_message(NULL, f->tools, method, strlen(method), span, out, &route),
                     0);
    return route;
}

static void test_tool_call_with_arguments(void **state)
{
    fixture *f = *state;
    buffer out = BUFFER_INIT;
    static const char params[] = "{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}";
    mcp_route route = route_of(f, "tools/call", params, &out);
    assert_int_equal(route.kind, MCP_CALL);
    /* The tool's method, under its own name: the tool name is the config's. */
    assert_ptr_equal(route.method, reg_find(f->methods, "math.sum", 8));
    assert_span(route.params, "{\"a\":1,\"b\":2}");
    assert_ptr_equal(route.params.start, strstr(params, "{\"a\"")); /* borrowed, not copied */
    assert_non_null(route.shaper);
    assert_int_equal(out.length, 0);
    buf_free(&out);
}

static void test_tool_call_without_arguments(void **state)
{
    fixture *f = *state;
    buffer out = BUFFER_INIT;
    /* The tool's schema says object: no arguments are an empty object, not no params. */
    mcp_route route = route_of(f, "tools/call", "{\"name\":\"echo\"}", &out);
    assert_int_equal(route.kind, MCP_CALL);
    assert_ptr_equal(route.method, reg_find(f->methods, "echo", 4));
    assert_span(route.params, "{}");
    /* A name with escapes is the name it decodes to. */
    route = route_of(f, "tools/call", "{\"name\":\"\\u0061dd\"}", &out);
    assert_int_equal(route.kind, MCP_CALL);
    assert_ptr_equal(route.method, reg_find(f->methods, "math.sum", 8));
    buf_free(&out);
}

static void test_tool_call_keeps_meta(void **state)
{
    fixture *f = *state;
    buffer out = BUFFER_INIT;
    static const char params[] =
        "{\"_meta\":{\"progressToken\":\"t-1\"},\"name\":\"echo\",\"arguments\":{\"x\":true}}";
    mcp_route route = route_of(f, "tools/call", params, &out);
    assert_int_equal(route.kind, MCP_CALL);
    assert_span(route.params, "{\"x\":true}");
    /* The handler's params hold no _meta; progress reads the token from the message's. */
    js_span token;
    assert_false(env_find_progress_token(route.params, &token));
    assert_span(route.progress_params, params);
    assert_true(env_find_progress_token(route.progress_params, &token));
    assert_span(token, "\"t-1\"");
    buf_free(&out);
}

/* Checks that tools/call with params is refused with -32602 and exactly data. */
static void assert_refused(const fixture *f, const char *params, const char *data)
{
    buffer out = BUFFER_INIT;
    mcp_route route = route_of(f, "tools/call", params, &out);
    assert_int_equal(route.kind, MCP_REFUSED);
    assert_int_equal(route.status, RPCD_ERR_INVALID_PARAMS);
    assert_true(route.has_data);
    assert_bytes(&out, data);
    buf_free(&out);
}

static void test_tool_call_refused(void **state)
{
    fixture *f = *state;
    assert_refused(f, NULL, "{\"detail\":\"\\\"name\\\" must be a tool name\"}");
    assert_refused(f, "[\"add\"]", "{\"detail\":\"\\\"name\\\" must be a tool name\"}");
    assert_refused(f, "{\"name\":7}", "{\"detail\":\"\\\"name\\\" must be a tool name\"}");
    assert_refused(f, "{\"name\":\"nope\"}", "{\"detail\":\"unknown tool\",\"tool\":\"nope\"}");
    /* Tools are looked up by tool name: a method renamed as a tool is not one by its own. */
    assert_refused(f, "{\"name\":\"math.sum\"}",
                   "{\"detail\":\"unknown tool\",\"tool\":\"math.sum\"}");
    assert_refused(f, "{\"name\":\"add\",\"arguments\":[1,2]}",
                   "{\"detail\":\"\\\"arguments\\\" must be an object\",\"tool\":\"add\"}");
    assert_refused(f, "{\"name\":\"add\",\"name\":\"echo\"}",
                   "{\"detail\":\"\\\"name\\\" appears twice\"}");
    assert_refused(f, "{\"name\":\"add\",\"arguments\":{},\"arguments\":{}}",
                   "{\"detail\":\"\\\"arguments\\\" appears twice\"}");
    assert_refused(f, "{\"name\":\"add\",\"_meta\":{},\"_meta\":{}}",
                   "{\"detail\":\"\\\"_meta\\\" appears twice\"}");
    assert_refused(f, "{\"name\":\"add\",\"_meta\":{\"progressToken\":1,\"progressToken\":2}}",
                   "{\"detail\":\"\\\"progressToken\\\" appears twice in \\\"_meta\\\"\"}");
    char params[256];
    snprintf(params, sizeof params, "{\"name\":\"%0129d\"}", 0);
    assert_refused(f, params,
                   "{\"detail\":\"\\\"name\\\" is longer than 128 bytes, the longest tool name\"}");
}

static void test_answered_methods(void **state)
{
    fixture *f = *state;
    buffer out = BUFFER_INIT;
    mcp_route route = route_of(f, "ping", NULL, &out);
    assert_int_equal(route.kind, MCP_ANSWERED);
    assert_bytes(&out, "{}");
    route = route_of(f, "tools/list", "{\"cursor\":\"x\"}", &out);
    assert_int_equal(route.kind, MCP_REFUSED);
    assert_int_equal(route.status, RPCD_ERR_INVALID_PARAMS);
    assert_false(route.has_data);
    route = route_of(f, "tools/list", NULL, &out);
    assert_int_equal(route.kind, MCP_ANSWERED);
    assert_non_null(strstr(out.data, "\"name\":\"add\""));
    buf_free(&out);
}

/* One list: every MCP method is routed by mcp_route_message and reserved to the daemon. */
static void test_one_list(void **state)
{
    fixture *f = *state;
    buffer out = BUFFER_INIT;
    for (int id = 0; id < MCP_METHOD_COUNT; id++) {
        const char *name = mcp_method_name(id);
        assert_int_equal(mcp_method_find(name, strlen(name)), id);
        mcp_route route;
        buf_clear(&out);
        /* The Tasks extension's methods are the 2026-07-28 revision's, for a client that
         * declares it: elsewhere they are not found. */
        bool task = id >= MCP_TASKS_GET;
        js_span params = task ? SPAN("{\"taskId\":\"x\",\"_meta\":{\"" MCP_META_PROTOCOL_VERSION
                                     "\":\"2026-07-28\",\"" MCP_META_CLIENT_CAPABILITIES
                                     "\":{\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}}}")
                              : SPAN("{\"name\":\"echo\"}");
        if (mcp_route_message(NULL, f->tools, name, strlen(name), params, &out, &route) != 0)
            fail_msg("%s is not routed", name);
        if (route.kind == MCP_REFUSED && route.status != RPCD_ERR_INVALID_PARAMS)
            fail_msg("%s is not answered", name);
        if (task) {
            assert_int_equal(route.kind, MCP_TASK);
            assert_int_equal(route.task_method, id);
            buf_clear(&out);
            assert_int_equal(mcp_route_message(NULL, f->tools, name, strlen(name),
                                               SPAN("{\"taskId\":\"x\"}"), &out, &route),
                             0);
            assert_int_equal(route.kind, MCP_REFUSED);
            assert_int_equal(route.status, RPCD_ERR_METHOD_NOT_FOUND);
        }
        assert_non_null(reserved_name_reason(name, strlen(name)));
        rpcd_method method = rpcd_method_new(name, handler);
        assert_int_equal(reg_add(f->methods, &method, NULL, "p", NULL), REG_ERR_INVALID);
    }
    assert_null(mcp_method_name(-1));
    assert_null(mcp_method_name(MCP_METHOD_COUNT));
    /* Anything else is not MCP's, and out is left alone. */
    static const char *const others[] = {"echo", "tools/", "tools/call2", "Ping", ""};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        mcp_route route;
        buf_clear(&out);
        assert_int_equal(mcp_method_find(others[i], strlen(others[i])), -1);
        assert_int_equal(mcp_route_message(NULL, f->tools, others[i], strlen(others[i]),
                                           (js_span){NULL, 0}, &out, &route),
                         -1);
        assert_int_equal(out.length, 0);
    }
    buf_free(&out);
}

/* Shapes a handler's result with the tool shaper. */
static void assert_shaped(const fixture *f, const char *result, const char *expected)
{
    buffer out = BUFFER_INIT;
    mcp_route route = route_of(f, "tools/call", "{\"name\":\"echo\"}", &out);
    assert_int_equal(route.shaper->result(&out, result, strlen(result)), 0);
    assert_bytes(&out, expected);
    buf_free(&out);
}

static void test_shaping(void **state)
{
    fixture *f = *state;
    /* An object is structured content too; anything else is text only. */
    assert_shaped(f, "{\"sum\":3}",
                  "{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"sum\\\":3}\"}],"
                  "\"structuredContent\":{\"sum\":3},\"isError\":false}");
    assert_shaped(f, "[1,\"\xc3\xa9\"]",
                  "{\"content\":[{\"type\":\"text\",\"text\":\"[1,\\\"\xc3\xa9\\\"]\"}],"
                  "\"isError\":false}");
    /* A string is the text itself: its JSON text, unquoted once, not quoted again. The model
     * reads two lines, not a JSON string literal. */
    assert_shaped(f, "\"two\\nlines\"",
                  "{\"content\":[{\"type\":\"text\",\"text\":\"two\\nlines\"}],"
                  "\"isError\":false}");
    assert_shaped(f, "\"say \\\"\\u00e9\\\"\\t\xc3\xa9\"",
                  "{\"content\":[{\"type\":\"text\",\"text\":\"say \\\"\\u00e9\\\"\\t\xc3\xa9\"}],"
                  "\"isError\":false}");
    assert_shaped(f, " \"\" ",
                  "{\"content\":[{\"type\":\"text\",\"text\":\"\"}],\"isError\":false}");
    assert_shaped(f, "true",
                  "{\"content\":[{\"type\":\"text\",\"text\":\"true\"}],\"isError\":false}");
    assert_shaped(f, "-1.5e3",
                  "{\"content\":[{\"type\":\"text\",\"text\":\"-1.5e3\"}],\"isError\":false}");
    assert_shaped(f, "null",
                  "{\"content\":[{\"type\":\"text\",\"text\":\"null\"}],\"isError\":false}");
    /* A failure is a result the model reads, not an error. */
    buffer out = BUFFER_INIT;
    mcp_route route = route_of(f, "tools/call", "{\"name\":\"echo\"}", &out);
    static const char text[] = "Invalid params: need \"two\" numbers";
    assert_int_equal(route.shaper->failure(&out, text, sizeof text - 1), 0);
    assert_bytes(&out, "{\"content\":[{\"type\":\"text\",\"text\":\"Invalid params: need "
                       "\\\"two\\\" numbers\"}],\"isError\":true}");
    buf_free(&out);
}

/* Whether a tools/call may run as a task: the method's flags, the revision, the declaration. */
static void test_task_mode(void **state)
{
    (void)state;
    static const char declared[] = "{\"" MCP_META_CLIENT_CAPABILITIES
                                   "\":{\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}}";
    static const char undeclared[] = "{\"" MCP_META_CLIENT_CAPABILITIES "\":{\"elicitation\":{}}}";
    static const struct {
        uint32_t flags;
        int era;
        const char *meta;
        int status;
        bool may_be_task, required;
    } cases[] = {
        {RPCD_METHOD_TASK, MCP_ERA_STATELESS, declared, 0, true, false},
        {RPCD_METHOD_TASK, MCP_ERA_STATELESS, undeclared, 0, false, false},
        {RPCD_METHOD_TASK, MCP_ERA_HANDSHAKE, declared, 0, false, false},
        {RPCD_METHOD_TASK_REQUIRED, MCP_ERA_STATELESS, declared, 0, true, true},
        {RPCD_METHOD_TASK_REQUIRED, MCP_ERA_STATELESS, undeclared, -1, false, false},
        {RPCD_METHOD_TASK_REQUIRED, MCP_ERA_HANDSHAKE, undeclared, 0, false, false},
        {0, MCP_ERA_STATELESS, declared, 0, false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        reg_method method = {.flags = cases[i].flags};
        bool may_be_task = !cases[i].may_be_task, required = !cases[i].required;
        assert_int_equal(
            mcp_tool_task_mode(cases[i].era, SPAN(cases[i].meta), &method, &may_be_task, &required),
            cases[i].status);
        if (cases[i].status == 0) {
            assert_int_equal(may_be_task, cases[i].may_be_task);
            assert_int_equal(required, cases[i].required);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tool_call_with_arguments, set_up, tear_down),
        cmocka_unit_test_setup_teardown(test_tool_call_without_arguments, set_up, tear_down),
        cmocka_unit_test_setup_teardown(test_tool_call_keeps_meta, set_up, tear_down),
        cmocka_unit_test_setup_teardown(test_tool_call_refused, set_up, tear_down),
        cmocka_unit_test_setup_teardown(test_answered_methods, set_up, tear_down),
        cmocka_unit_test_setup_teardown(test_one_list, set_up, tear_down),
        cmocka_unit_test(test_task_mode),
        cmocka_unit_test_setup_teardown(test_shaping, set_up, tear_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
