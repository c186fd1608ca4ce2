/* SPDX-License-Identifier: MIT */
/*
 * Asking a client of MCP's handshake era mid-call (ABI 1.6), through the real rpcd and the asks
 * fixture, in rpcd's process and in a host of its own: the round goes out as requests rpcd
 * numbers, the client's responses bring the handler round two (a tool's, a prompt's, a
 * resource's); an error, a cancellation (both conventions), the end of input, a duplicate id, an
 * answer nobody asked for, a client that did not declare the capability and a call in a batch
 * each end as they should.
 */
#include "harness.h"

#include <jansson.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *const modes[] = {"none", "process"};

typedef struct session {
    char *dir;
    harness_process *rpcd;
} session;

static void send_line(session *s, const char *line)
{
    assert_int_equal(harness_write_text(s->rpcd, line, HARNESS_TIMEOUT_MS), HARNESS_OK);
    assert_int_equal(harness_write_text(s->rpcd, "\n", HARNESS_TIMEOUT_MS), HARNESS_OK);
}

/* The next line rpcd writes, parsed (new). */
static json_t *next(session *s)
{
    char *text = NULL;
    int status = harness_read_line(s->rpcd, HARNESS_TIMEOUT_MS, &text, NULL, NULL);
    if (status != HARNESS_OK) {
        harness_collect_stderr(s->rpcd, HARNESS_TIMEOUT_MS);
        print_error("no line (%d); stderr:\n%s\n", status, harness_stderr(s->rpcd));
    }
    assert_int_equal(status, HARNESS_OK);
    json_t *message = json_loads(text, 0, NULL);
    if (!message)
        print_error("not JSON: %s\n", text);
    assert_non_null(message);
    free(text);
    return message;
}

/* Starts rpcd with the asks fixture (isolation: none or process) and initializes a session
 * whose client declares capabilities (JSON text). */
static void start(session *s, const char *isolation, const char *capabilities)
{
    s->dir = harness_temp_dir();
    assert_non_null(s->dir);
    char *text;
    assert_true(asprintf(&text, "[rpcd]\nisolation = %s\n[plugin asks]\npath = %s\n", isolation,
                         harness_env("RPCD_FIXTURE_ASKS")) > 0);
    char *config = harness_write_file(s->dir, "rpcd.conf", text);
    assert_non_null(config);
    free(text);
    harness_argv args = harness_rpcd_argv(config);
    s->rpcd = harness_start(args.argv);
    assert_non_null(s->rpcd);
    free(config);
    char *line;
    assert_true(asprintf(&line,
                         "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                         "\"protocolVersion\":\"2025-11-25\",\"capabilities\":%s,"
                         "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
                         capabilities) > 0);
    send_line(s, line);
    free(line);
    json_t *answer = next(s);
    assert_non_null(json_object_get(answer, "result"));
    json_decref(answer);
    send_line(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

static void stop(session *s)
{
    harness_close_stdin(s->rpcd);
    harness_exit status;
    assert_int_equal(harness_wait(s->rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    assert_true(status.exited && status.code == 0);
    harness_free(s->rpcd);
    harness_remove_dir(s->dir);
    free(s->dir);
}

/* tools/call of tool under id (JSON text). */
static void call_tool(session *s, const char *id, const char *tool)
{
    char *line;
    assert_true(asprintf(&line,
                         "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\",\"params\":{"
                         "\"name\":\"%s\",\"arguments\":{}}}",
                         id, tool) > 0);
    send_line(s, line);
    free(line);
}

/* Reads rpcd's next line, a request of method; returns its id (a number rpcd chose). */
static json_int_t expect_request(session *s, const char *method)
{
    json_t *message = next(s);
    const char *got = json_string_value(json_object_get(message, "method"));
    if (!got || strcmp(got, method) != 0)
        print_error("expected a request %s: %s\n", method, json_dumps(message, 0));
    assert_string_equal(got, method);
    assert_true(json_is_object(json_object_get(message, "params")));
    const json_t *id = json_object_get(message, "id");
    assert_true(json_is_integer(id));
    json_int_t number = json_integer_value(id);
    json_decref(message);
    return number;
}

/* Answers rpcd's request number with a result (JSON text). */
static void answer(session *s, json_int_t number, const char *result)
{
    char *line;
    assert_true(asprintf(&line, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":%s}",
                         (long long)number, result) > 0);
    send_line(s, line);
    free(line);
}

/* Reads rpcd's next line, notifications/cancelled for request number with reason. */
static void expect_cancelled(session *s, json_int_t number, const char *reason)
{
    json_t *message = next(s);
    assert_string_equal(json_string_value(json_object_get(message, "method")),
                        "notifications/cancelled");
    const json_t *params = json_object_get(message, "params");
    assert_int_equal(json_integer_value(json_object_get(params, "requestId")), number);
    assert_string_equal(json_string_value(json_object_get(params, "reason")), reason);
    json_decref(message);
}

/* Reads rpcd's next line, the response to id (a string); returns it (new). */
static json_t *expect_response(session *s, const char *id)
{
    json_t *message = next(s);
    const char *got = json_string_value(json_object_get(message, "id"));
    if (!got || strcmp(got, id) != 0)
        print_error("expected the response to %s: %s\n", id, json_dumps(message, 0));
    assert_string_equal(got, id);
    return message;
}

static void assert_error_code(const json_t *response, json_int_t code)
{
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(response, "error"), "code")), code);
}

/* The question is asked with a request, the answer and the kept state reach round two. */
static void test_answered(void **state)
{
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        session s;
        start(&s, modes[i], "{\"elicitation\":{}}");
        call_tool(&s, "\"c1\"", "asks_confirm");
        json_int_t number = expect_request(&s, "elicitation/create");
        answer(&s, number, "{\"action\":\"accept\",\"content\":{\"ok\":true}}");
        json_t *response = expect_response(&s, "c1");
        const json_t *result = json_object_get(response, "result");
        assert_true(json_is_false(json_object_get(result, "isError")));
        const json_t *told = json_object_get(result, "structuredContent");
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(told, "answer"), "action")),
            "accept");
        assert_string_equal(json_string_value(json_object_get(told, "state")), "kept-state");
        json_decref(response);
        stop(&s);
    }
}

/* A deferred handler's round, answered, runs again (it asks again, with a request of a new
 * number); the client's notifications/cancelled then ends the call without a response. */
static void test_deferred_then_cancelled(void **state)
{
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        session s;
        start(&s, modes[i], "{\"roots\":{}}");
        call_tool(&s, "\"c2\"", "asks_deferred");
        json_int_t first = expect_request(&s, "roots/list");
        answer(&s, first, "{\"roots\":[]}");
        json_int_t second = expect_request(&s, "roots/list");
        assert_true(second > first);
        send_line(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                      "\"params\":{\"requestId\":\"c2\"}}");
        expect_cancelled(&s, second, "the client cancelled the call");
        /* Its answer now is nobody's; the id is free again. */
        answer(&s, second, "{\"roots\":[]}");
        send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"c2\",\"method\":\"ping\"}");
        json_t *pong = expect_response(&s, "c2");
        assert_true(json_is_object(json_object_get(pong, "result")));
        json_decref(pong);
        stop(&s);
    }
}

/* An error for an answer: the call ends with a tool error that says so. */
static void test_error_answer(void **state)
{
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        session s;
        start(&s, modes[i], "{\"elicitation\":{\"form\":{}}}");
        call_tool(&s, "\"c3\"", "asks_confirm");
        json_int_t number = expect_request(&s, "elicitation/create");
        char *line;
        assert_true(asprintf(&line,
                             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32603,"
                             "\"message\":\"the dialog crashed\"}}",
                             (long long)number) > 0);
        send_line(&s, line);
        free(line);
        json_t *response = expect_response(&s, "c3");
        const json_t *result = json_object_get(response, "result");
        assert_true(json_is_true(json_object_get(result, "isError")));
        const json_t *text =
            json_object_get(json_array_get(json_object_get(result, "content"), 0), "text");
        assert_string_equal(json_string_value(text),
                            "the client answered elicitation/create with an error: the dialog "
                            "crashed");
        json_decref(response);
        stop(&s);
    }
}

/* The text of the first message of a prompt's result. */
static const char *first_message(const json_t *response)
{
    const json_t *message =
        json_array_get(json_object_get(json_object_get(response, "result"), "messages"), 0);
    return json_string_value(json_object_get(json_object_get(message, "content"), "text"));
}

/* A prompt and a resource ask as a tool does, and run again as their request came; a prompt
 * whose answer is an error gets -32603 saying so (it has no tool error). */
static void test_prompt_and_resource(void **state)
{
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        session s;
        start(&s, modes[i], "{\"elicitation\":{}}");
        send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"method\":\"prompts/get\","
                      "\"params\":{\"name\":\"asks_prompt\"}}");
        answer(&s, expect_request(&s, "elicitation/create"), "{\"action\":\"accept\"}");
        json_t *response = expect_response(&s, "p1");
        assert_string_equal(first_message(response), "state prompt-state");
        json_decref(response);

        send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":\"resources/read\","
                      "\"params\":{\"uri\":\"asks://topic\"}}");
        answer(&s, expect_request(&s, "elicitation/create"), "{\"action\":\"accept\"}");
        response = expect_response(&s, "r1");
        const json_t *contents = json_object_get(json_object_get(response, "result"), "contents");
        assert_string_equal(json_string_value(json_object_get(json_array_get(contents, 0), "text")),
                            "told");
        json_decref(response);

        send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"p2\",\"method\":\"prompts/get\","
                      "\"params\":{\"name\":\"asks_prompt\"}}");
        json_int_t number = expect_request(&s, "elicitation/create");
        char *line;
        assert_true(asprintf(&line,
                             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":1,"
                             "\"message\":\"no\"}}",
                             (long long)number) > 0);
        send_line(&s, line);
        free(line);
        response = expect_response(&s, "p2");
        assert_error_code(response, -32603);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(response, "error"), "message")),
            "the client answered elicitation/create with an error: no");
        json_decref(response);
        stop(&s);
    }
}

/* $/cancelRequest: the request is cancelled, the call answered -32800. */
static void test_cancel_request(void **state)
{
    (void)state;
    session s;
    start(&s, "none", "{\"elicitation\":{}}");
    call_tool(&s, "\"c4\"", "asks_confirm");
    json_int_t number = expect_request(&s, "elicitation/create");
    send_line(&s,
              "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"c4\"}}");
    expect_cancelled(&s, number, "the client cancelled the call");
    json_t *response = expect_response(&s, "c4");
    assert_error_code(response, -32800);
    json_decref(response);
    stop(&s);
}

/* A call cancelled while its handler runs asks nothing when the round ends: -32800, and no
 * request goes to the client. */
static void test_cancelled_before_asking(void **state)
{
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        session s;
        start(&s, modes[i], "{\"elicitation\":{}}");
        call_tool(&s, "\"c9\"", "asks_late");
        send_line(
            &s, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"c9\"}}");
        json_t *response = expect_response(&s, "c9");
        assert_error_code(response, -32800);
        json_decref(response);
        stop(&s);
    }
}

/* While a call waits, its id is in flight: a request reusing it gets -32600; answers that are
 * no answer to a request of rpcd's (a string id, an unknown number) are ignored. */
static void test_in_flight_while_waiting(void **state)
{
    (void)state;
    session s;
    start(&s, "none", "{\"elicitation\":{}}");
    call_tool(&s, "\"c5\"", "asks_confirm");
    json_int_t number = expect_request(&s, "elicitation/create");
    call_tool(&s, "\"c5\"", "asks_confirm");
    json_t *duplicate = expect_response(&s, "c5");
    assert_error_code(duplicate, -32600);
    json_decref(duplicate);
    char *line;
    assert_true(asprintf(&line, "{\"jsonrpc\":\"2.0\",\"id\":\"%lld\",\"result\":{}}",
                         (long long)number) > 0);
    send_line(&s, line);
    free(line);
    answer(&s, number + 1000, "{\"action\":\"accept\"}");
    send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}");
    json_t *pong = expect_response(&s, "p");
    json_decref(pong);
    answer(&s, number, "{\"action\":\"decline\"}");
    json_t *response = expect_response(&s, "c5");
    const json_t *told = json_object_get(json_object_get(response, "result"), "structuredContent");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(told, "answer"), "action")), "decline");
    json_decref(response);
    stop(&s);
}

/* The end of input while a call waits: its request cancelled, the call answered -32800. */
static void test_end_of_input(void **state)
{
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        session s;
        start(&s, modes[i], "{\"elicitation\":{}}");
        call_tool(&s, "\"c6\"", "asks_confirm");
        json_int_t number = expect_request(&s, "elicitation/create");
        harness_close_stdin(s.rpcd);
        expect_cancelled(&s, number, "the session ends");
        json_t *response = expect_response(&s, "c6");
        assert_error_code(response, -32800);
        json_decref(response);
        stop(&s);
    }
}

/* A stop (SIGTERM) while a call waits: its request cancelled, the call answered -32800, and
 * rpcd ends as a stop ends it. */
static void test_stopped_while_waiting(void **state)
{
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        session s;
        start(&s, modes[i], "{\"elicitation\":{}}");
        call_tool(&s, "\"c10\"", "asks_confirm");
        json_int_t number = expect_request(&s, "elicitation/create");
        assert_int_equal(harness_signal(s.rpcd, SIGTERM), 0);
        expect_cancelled(&s, number, "the session ends");
        json_t *response = expect_response(&s, "c10");
        assert_error_code(response, -32800);
        json_decref(response);
        stop(&s); /* its input is closed already: it waits for the exit */
    }
}

/* No capability declared, or a call in a batch (whose array cannot wait): call_ask refuses,
 * and the tool fails with -32021 as it chooses to. */
static void test_cannot_ask(void **state)
{
    (void)state;
    session s;
    start(&s, "none", "{}");
    call_tool(&s, "\"c7\"", "asks_confirm");
    json_t *response = expect_response(&s, "c7");
    assert_error_code(response, -32021);
    json_decref(response);
    stop(&s);

    start(&s, "none", "{\"elicitation\":{}}");
    send_line(&s, "[{\"jsonrpc\":\"2.0\",\"id\":\"c8\",\"method\":\"tools/call\",\"params\":{"
                  "\"name\":\"asks_confirm\",\"arguments\":{}}}]");
    json_t *batch = next(&s);
    assert_true(json_is_array(batch));
    assert_int_equal(json_array_size(batch), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(batch, 0), "id")), "c8");
    assert_error_code(json_array_get(batch, 0), -32021);
    json_decref(batch);
    stop(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_answered),
        cmocka_unit_test(test_deferred_then_cancelled),
        cmocka_unit_test(test_error_answer),
        cmocka_unit_test(test_prompt_and_resource),
        cmocka_unit_test(test_cancel_request),
        cmocka_unit_test(test_cancelled_before_asking),
        cmocka_unit_test(test_in_flight_while_waiting),
        cmocka_unit_test(test_end_of_input),
        cmocka_unit_test(test_stopped_while_waiting),
        cmocka_unit_test(test_cannot_ask),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
