/* SPDX-License-Identifier: MIT */
/*
 * The response a call ends with: its result; the error its status makes, with the plugin's
 * name, method and detail in error.data; a plugin's own error code, message and data unchanged;
 * a result that is not JSON; an MCP tool result or tool error; nothing for a notification; what
 * a round that asks the client ends with, for each answer of its asker.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "call_fixture.h"
#include "mcp/mcp.h"
#include "methods/plugin_contract.h"

static int handle_invalid(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    return host.call_fail(call, RPCD_ERR_INVALID_PARAMS, "need two numbers", NULL, 0);
}

static int handle_own_error(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    host.call_fail_code(call, 42, "out of coffee", "{\"cups\":0}", 10);
    return RPCD_ERR_APPLICATION;
}

static int handle_not_json(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    host.call_result(call, "{", 1);
    return RPCD_OK;
}

/* What the fake asker's ask returns (a result appended when 0), and how many it was asked. */
static int asked_status;
static size_t asked_questions;

static int fake_ask(void *context, buffer *out, const call_round_end *ended)
{
    (void)context;
    asked_questions = ended->question_count;
    if (asked_status == 0)
        assert_int_equal(buf_append_string(out, "{\"asked\":true}"), 0);
    return asked_status;
}

static const call_asker fake_asker = {fake_ask};

/* Asks the client for its roots, and ends the round. */
static int handle_ask(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    if (host.call_ask(call, "roots", "roots/list", NULL, 0) != RPCD_OK)
        return host.call_fail(call, RPCD_ERR_INTERNAL, "cannot ask", NULL, 0);
    return RPCD_INPUT_REQUIRED;
}

static void open_all(fixture *f)
{
    fixture_open(f);
    fixture_add(f, "echo", handle_echo, 0, NULL);
    fixture_add(f, "invalid", handle_invalid, 0, NULL);
    fixture_add(f, "own", handle_own_error, 0, NULL);
    fixture_add(f, "not_json", handle_not_json, 0, NULL);
    fixture_start(f, (call_settings){.limits.max_in_flight = 16});
}

static void test_result(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    assert_int_equal(start_call(&f, "echo", "\"x\"", "{\"a\":[1,2]}", NULL), CALL_STARTED);
    assert_string_equal(written(&f),
                        "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"a\":[1,2]}}\n");
    fixture_close(&f);
}

static void test_error_from_a_status(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    assert_int_equal(start_call(&f, "invalid", "1", NULL, NULL), CALL_STARTED);
    assert_string_equal(written(&f),
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":"
                        "\"Invalid params\",\"data\":{\"exception\":\"RPCD_ERR_INVALID_PARAMS\","
                        "\"plugin\":\"testplugin\",\"method\":\"invalid\",\"detail\":\"need two "
                        "numbers\"}}}\n");
    fixture_close(&f);
}

static void test_plugin_error_unchanged(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    assert_int_equal(start_call(&f, "own", "1", NULL, NULL), CALL_STARTED);
    assert_string_equal(written(&f), "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":42,"
                                     "\"message\":\"out of coffee\",\"data\":{\"cups\":0}}}\n");
    fixture_close(&f);
}

static void test_result_not_json(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    assert_int_equal(start_call(&f, "not_json", "1", NULL, NULL), CALL_STARTED);
    const char *text = written(&f);
    assert_non_null(strstr(text, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,"));
    assert_non_null(strstr(text, "\"detail\":\"the handler's result is not valid JSON\""));
    fixture_close(&f);
}

static void test_notification_gets_nothing(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    assert_int_equal(start_call(&f, "echo", NULL, "[1]", NULL), CALL_STARTED);
    assert_int_equal(start_call(&f, "invalid", NULL, NULL, NULL), CALL_STARTED);
    assert_int_equal(call_wait_idle(f.calls, 0), 0);
    assert_string_equal(written(&f), "");
    fixture_close(&f);
}

/* MCP's tool shaper, as tools/call gives it to the call path. */
static const call_shaper tool_shaper = {mcp_append_tool_result, mcp_append_tool_error, NULL, NULL};

static void start_tool(fixture *f, const char *name, const char *id)
{
    js_span id_span = {id, strlen(id)};
    js_span params = {"{}", 2};
    call_request request = {
        .gen = f->gen,
        .method = reg_find(f->methods, name, strlen(name)),
        .id = &id_span,
        .params = &params,
        .shaper = &tool_shaper,
    };
    assert_int_equal(call_start(f->calls, &request), CALL_STARTED);
}

/* For tools/call, a handler's result and its failure are both tool results. */
static void test_tool_result_and_tool_error(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    start_tool(&f, "echo", "1");
    const char *text = written(&f);
    assert_non_null(strstr(text, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":"));
    assert_null(strstr(text, "\"isError\":true"));
    start_tool(&f, "invalid", "2");
    text = written(&f);
    assert_non_null(strstr(text, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{"));
    assert_non_null(strstr(text, "\"isError\":true"));
    assert_non_null(strstr(text, "Invalid params: need two numbers"));
    assert_null(strstr(text, "\"error\""));
    fixture_close(&f);
}

/* A round that asks ends as its asker says: its result; nothing now (the asker answers later:
 * rpcd's own requests to the client); -32800 (the client can no longer be asked); or -32603. */
static void test_what_an_asker_makes(void **state)
{
    (void)state;
    static const struct {
        int status;
        const char *line;
    } cases[] = {
        {0, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"asked\":true}}\n"},
        {CALL_ASK_DEFERRED, ""},
        {CALL_ASK_CANCELLED, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32800,"
                             "\"message\":\"Request cancelled\"}}\n"},
        {-1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":"
             "\"Internal error\"}}\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fixture f;
        fixture_with(&f, "ask", handle_ask, 0, (call_settings){.limits.max_in_flight = 16});
        asked_status = cases[i].status;
        asked_questions = 0;
        js_span id = {"1", 1};
        call_request request = {
            .gen = f.gen,
            .method = reg_find(f.methods, "ask", 3),
            .id = &id,
            .ask_capabilities = CONTRACT_ASK_ROOTS,
            .asker = &fake_asker,
        };
        assert_int_equal(call_start(f.calls, &request), CALL_STARTED);
        assert_int_equal(call_wait_idle(f.calls, -1), 0);
        assert_int_equal(asked_questions, 1);
        assert_string_equal(written(&f) ? written(&f) : "", cases[i].line);
        fixture_close(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_result),
        cmocka_unit_test(test_error_from_a_status),
        cmocka_unit_test(test_plugin_error_unchanged),
        cmocka_unit_test(test_result_not_json),
        cmocka_unit_test(test_notification_gets_nothing),
        cmocka_unit_test(test_tool_result_and_tool_error),
        cmocka_unit_test(test_what_an_asker_makes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
