/* SPDX-License-Identifier: MIT */
/*
 * Asking the client mid-call (ABI 1.6), through the real rpcd and the asks fixture, with the
 * plugin in rpcd's process and in a host of its own: a client of MCP 2026-07-28 gets the
 * questions as an input_required result with a requestState, and its retry reaches the handler
 * with the answers and the state; every requestState a client could forge, replay or move to
 * other arguments is refused; a client that cannot be asked gets the tool's -32021.
 */
#include "harness.h"

#include <jansson.h>
#include <rpcd/plugin.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct session {
    char *dir;
    harness_process *rpcd;
    int next_id;
} session;

static void start(session *s, const char *isolation)
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
    s->next_id = 1;
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

/* Sends a request of method with params (JSON text) and returns its response (new). */
static json_t *request(session *s, const char *method, const char *params)
{
    int id = s->next_id++;
    char *line;
    assert_true(asprintf(&line, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":%s}\n",
                         id, method, params) > 0);
    assert_int_equal(harness_write_text(s->rpcd, line, HARNESS_TIMEOUT_MS), HARNESS_OK);
    free(line);
    char *text = NULL;
    int status = harness_read_line(s->rpcd, HARNESS_TIMEOUT_MS, &text, NULL, NULL);
    if (status != HARNESS_OK) {
        harness_collect_stderr(s->rpcd, HARNESS_TIMEOUT_MS);
        print_error("no response (%d); stderr:\n%s\n", status, harness_stderr(s->rpcd));
    }
    assert_int_equal(status, HARNESS_OK);
    json_t *response = json_loads(text, 0, NULL);
    if (!response || json_integer_value(json_object_get(response, "id")) != id)
        print_error("not the response to %d: %s\n", id, text);
    assert_non_null(response);
    assert_int_equal(json_integer_value(json_object_get(response, "id")), id);
    free(text);
    return response;
}

#define META(capabilities)                                                                         \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                       \
    "\"io.modelcontextprotocol/clientCapabilities\":" capabilities "}"

/* tools/call of tool in the stateless revision, with more members of params (or ""). */
static json_t *call_tool(session *s, const char *tool, const char *capabilities, const char *more)
{
    char *params;
    assert_true(asprintf(&params,
                         "{\"name\":\"%s\",\"arguments\":{\"file\":\"a\"},"
                         "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                         "\"io.modelcontextprotocol/clientCapabilities\":%s}%s}",
                         tool, capabilities, more) > 0);
    json_t *response = request(s, "tools/call", params);
    free(params);
    return response;
}

/* The requestState of an input_required result, checked for the question it asks. */
static const char *asked(const json_t *response, const char *key, const char *method)
{
    const json_t *result = json_object_get(response, "result");
    if (!result)
        print_error("no result: %s\n", json_dumps(response, 0));
    assert_non_null(result);
    assert_string_equal(json_string_value(json_object_get(result, "resultType")), "input_required");
    const json_t *question = json_object_get(json_object_get(result, "inputRequests"), key);
    assert_string_equal(json_string_value(json_object_get(question, "method")), method);
    assert_true(json_is_object(json_object_get(question, "params")));
    const char *token = json_string_value(json_object_get(result, "requestState"));
    assert_non_null(token);
    assert_int_equal(strlen(token), 22);
    return token;
}

static void assert_error(const json_t *response, json_int_t code, const char *detail)
{
    const json_t *error = json_object_get(response, "error");
    if (!error)
        print_error("not an error: %s\n", json_dumps(response, 0));
    assert_non_null(error);
    assert_int_equal(json_integer_value(json_object_get(error, "code")), code);
    if (detail) {
        const char *given =
            json_string_value(json_object_get(json_object_get(error, "data"), "detail"));
        assert_non_null(given);
        if (!strstr(given, detail))
            print_error("detail \"%s\" does not say \"%s\"\n", given, detail);
        assert_non_null(strstr(given, detail));
    }
}

/* The response is a complete tool result whose structuredContent is expected (JSON text). */
static void run_structured_is(const json_t *response, const char *expected)
{
    const json_t *result = json_object_get(response, "result");
    assert_string_equal(json_string_value(json_object_get(result, "resultType")), "complete");
    char *got =
        json_dumps(json_object_get(result, "structuredContent"), JSON_COMPACT | JSON_SORT_KEYS);
    json_t *want = json_loads(expected, 0, NULL);
    char *wanted = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
    assert_non_null(got);
    assert_non_null(wanted);
    assert_string_equal(got, wanted);
    free(got);
    free(wanted);
    json_decref(want);
}

static const char answer[] = "{\"action\":\"accept\",\"content\":{\"ok\":true}}";

/* A round, its retry with the answer and the state, and every misuse of a requestState. */
static void rounds(const char *isolation)
{
    session s;
    start(&s, isolation);
    json_t *first = call_tool(&s, "asks_confirm", "{\"elicitation\":{}}", "");
    char *token = strdup(asked(first, "confirm", "elicitation/create"));
    /* The state stays in rpcd: the client sees only the reference. */
    char *shown = json_dumps(first, 0);
    assert_null(strstr(shown, "kept-state"));
    free(shown);
    char *more;
    assert_true(asprintf(&more,
                         ",\"requestState\":\"%s\",\"inputResponses\":{\"confirm\":%s,"
                         "\"unasked\":{\"action\":\"decline\"}}",
                         token, answer) > 0);
    json_t *second = call_tool(&s, "asks_confirm", "{\"elicitation\":{}}", more);
    char *expected;
    assert_true(asprintf(&expected, "{\"answer\":%s,\"state\":\"kept-state\"}", answer) > 0);
    run_structured_is(second, expected);
    free(expected);
    /* Used once: the same requestState again is refused. */
    json_t *replay = call_tool(&s, "asks_confirm", "{\"elicitation\":{}}", more);
    assert_error(replay, -32602, "used already");
    free(more);
    json_decref(first);
    json_decref(second);
    json_decref(replay);
    free(token);

    /* A requestState changed by one character, or made up: refused. */
    first = call_tool(&s, "asks_confirm", "{\"elicitation\":{}}", "");
    token = strdup(asked(first, "confirm", "elicitation/create"));
    token[0] = token[0] == 'A' ? 'B' : 'A';
    assert_true(asprintf(&more, ",\"requestState\":\"%s\",\"inputResponses\":{\"confirm\":%s}",
                         token, answer) > 0);
    json_t *tampered = call_tool(&s, "asks_confirm", "{\"elicitation\":{}}", more);
    assert_error(tampered, -32602, "not one rpcd gave");
    free(more);
    json_decref(tampered);
    /* The true one is still good, but not for other arguments. */
    token[0] =
        json_string_value(json_object_get(json_object_get(first, "result"), "requestState"))[0];
    char *params;
    assert_true(asprintf(&params,
                         "{\"name\":\"asks_confirm\",\"arguments\":{\"file\":\"b\"}," META(
                             "{\"elicitation\":{}}") ",\"requestState\":\"%s\","
                                                     "\"inputResponses\":{\"confirm\":%s}}",
                         token, answer) > 0);
    json_t *moved = request(&s, "tools/call", params);
    assert_error(moved, -32602, "these arguments");
    free(params);
    json_decref(moved);
    json_decref(first);
    free(token);

    /* Answers without a requestState (an ephemeral retry) reach the handler, with no state. */
    json_t *loose = call_tool(&s, "asks_confirm", "{\"elicitation\":{}}",
                              ",\"inputResponses\":{\"confirm\":{\"action\":\"accept\"}}");
    run_structured_is(loose, "{\"answer\":{\"action\":\"accept\"},\"state\":\"\"}");
    json_decref(loose);
    /* An answer that is not an object; not an object at all. */
    static const char *const bad[] = {"{\"confirm\":\"yes\"}", "[1]", "\"yes\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        first = call_tool(&s, "asks_confirm", "{\"elicitation\":{}}", "");
        assert_true(asprintf(&more, ",\"requestState\":\"%s\",\"inputResponses\":%s",
                             asked(first, "confirm", "elicitation/create"), bad[i]) > 0);
        json_t *refused = call_tool(&s, "asks_confirm", "{\"elicitation\":{}}", more);
        assert_error(refused, -32602, "inputResponses");
        free(more);
        json_decref(refused);
        json_decref(first);
    }
    /* A retry that answers nothing asked is asked again. */
    first = call_tool(&s, "asks_confirm", "{\"elicitation\":{}}", "");
    assert_true(asprintf(&more, ",\"requestState\":\"%s\",\"inputResponses\":{\"other\":%s}",
                         asked(first, "confirm", "elicitation/create"), answer) > 0);
    json_t *again = call_tool(&s, "asks_confirm", "{\"elicitation\":{}}", more);
    asked(again, "confirm", "elicitation/create");
    free(more);
    json_decref(again);
    json_decref(first);
    stop(&s);
}

static void test_rounds(void **state)
{
    (void)state;
    rounds("none");
}

static void test_rounds_isolated(void **state)
{
    (void)state;
    rounds("process");
}

/* Who cannot be asked: the tool's -32021, from a client without the capability, a client of
 * the handshake era and a plain JSON-RPC call alike. */
static void cannot_ask(const char *isolation)
{
    session s;
    start(&s, isolation);
    static const char missing[] = "{\"elicitation\":{}}";
    json_t *responses[] = {
        call_tool(&s, "asks_confirm", "{\"sampling\":{}}", ""),
        call_tool(&s, "asks_confirm", "{\"elicitation\":[]}", ""),
        request(&s, "tools/call", "{\"name\":\"asks_confirm\",\"arguments\":{}}"),
        request(&s, "asks.confirm", "{}"),
    };
    for (size_t i = 0; i < sizeof responses / sizeof responses[0]; i++) {
        assert_error(responses[i], -32021, NULL);
        json_t *required =
            json_object_get(json_object_get(json_object_get(responses[i], "error"), "data"),
                            "requiredCapabilities");
        char *text = json_dumps(required, JSON_COMPACT);
        assert_string_equal(text, missing);
        free(text);
        json_decref(responses[i]);
    }
    stop(&s);
}

static void test_cannot_ask(void **state)
{
    (void)state;
    cannot_ask("none");
}

static void test_cannot_ask_isolated(void **state)
{
    (void)state;
    cannot_ask("process");
}

/* The text of the first message of a prompt's result. */
static const char *first_message(const json_t *response)
{
    const json_t *result = json_object_get(response, "result");
    assert_string_equal(json_string_value(json_object_get(result, "resultType")), "complete");
    const json_t *message = json_array_get(json_object_get(result, "messages"), 0);
    return json_string_value(json_object_get(json_object_get(message, "content"), "text"));
}

/* prompts/get and resources/read ask as tools/call does: the round, and its retry with the
 * answer and the state. A prompt's retry repeats its name and arguments; its _meta may change
 * (a progressToken of its own). */
static void other_requests(const char *isolation)
{
    session s;
    start(&s, isolation);
    static const char ask_prompt[] =
        "{\"name\":\"asks_prompt\",\"arguments\":{\"a\":\"1\"}," META("{\"elicitation\":{}}") "}";
    json_t *first = request(&s, "prompts/get", ask_prompt);
    char *params;
    assert_true(asprintf(&params,
                         "{\"name\":\"asks_prompt\",\"arguments\":{\"a\":\"1\"},\"_meta\":{"
                         "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                         "\"io.modelcontextprotocol/clientCapabilities\":{\"elicitation\":{}},"
                         "\"progressToken\":\"p\"},\"requestState\":\"%s\","
                         "\"inputResponses\":{\"topic\":%s}}",
                         asked(first, "topic", "elicitation/create"), answer) > 0);
    json_t *second = request(&s, "prompts/get", params);
    assert_string_equal(first_message(second), "state prompt-state");
    free(params);
    json_decref(first);
    json_decref(second);

    first = request(&s, "prompts/get", ask_prompt);
    assert_true(asprintf(&params,
                         "{\"name\":\"asks_prompt\",\"arguments\":{\"a\":\"2\"}," META(
                             "{\"elicitation\":{}}") ",\"requestState\":\"%s\","
                                                     "\"inputResponses\":{\"topic\":%s}}",
                         asked(first, "topic", "elicitation/create"), answer) > 0);
    json_t *moved = request(&s, "prompts/get", params);
    assert_error(moved, -32602, "these arguments");
    free(params);
    json_decref(first);
    json_decref(moved);
    json_t *twice = request(&s, "prompts/get",
                            "{\"name\":\"asks_prompt\"," META("{}") ",\"requestState\":\"a\","
                                                                    "\"requestState\":\"b\"}");
    assert_error(twice, -32602, "appears twice");
    json_decref(twice);

    static const char read_topic[] = "{\"uri\":\"asks://topic\"," META("{\"elicitation\":{}}") "}";
    first = request(&s, "resources/read", read_topic);
    assert_true(asprintf(&params,
                         "{\"uri\":\"asks://topic\"," META(
                             "{\"elicitation\":{}}") ",\"requestState\":\"%s\","
                                                     "\"inputResponses\":{\"topic\":%s}}",
                         asked(first, "topic", "elicitation/create"), answer) > 0);
    second = request(&s, "resources/read", params);
    const json_t *contents = json_object_get(json_object_get(second, "result"), "contents");
    assert_string_equal(json_string_value(json_object_get(json_array_get(contents, 0), "text")),
                        "told");
    free(params);
    json_decref(first);
    json_decref(second);

    /* A request of the handshake era from a client that declared nothing (no initialize): the
     * prompt learns it cannot ask. */
    json_t *old = request(&s, "prompts/get", "{\"name\":\"asks_prompt\"}");
    assert_error(old, -32021, NULL);
    json_decref(old);
    stop(&s);
}

static void test_other_requests(void **state)
{
    (void)state;
    other_requests("none");
}

static void test_other_requests_isolated(void **state)
{
    (void)state;
    other_requests("process");
}

/* The end of input cancels the calls of an MCP client: one that asks only once it is cancelled
 * (asks.late) is answered -32800, not with the questions nobody will answer. */
static void asked_after_the_end(const char *isolation)
{
    session s;
    start(&s, isolation);
    static const char line[] =
        "{\"jsonrpc\":\"2.0\",\"id\":\"late\",\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"asks_late\",\"arguments\":{}," META("{\"elicitation\":{}}") "}}\n";
    assert_int_equal(harness_write_text(s.rpcd, line, HARNESS_TIMEOUT_MS), HARNESS_OK);
    harness_close_stdin(s.rpcd);
    char *text = NULL;
    assert_int_equal(harness_read_line(s.rpcd, HARNESS_TIMEOUT_MS, &text, NULL, NULL), HARNESS_OK);
    json_t *response = json_loads(text, 0, NULL);
    if (!json_object_get(response, "error"))
        print_error("not an error: %s\n", text);
    free(text);
    assert_string_equal(json_string_value(json_object_get(response, "id")), "late");
    assert_error(response, -32800, NULL);
    json_decref(response);
    stop(&s); /* its input is closed already: it waits for the exit */
}

static void test_asked_after_the_end(void **state)
{
    (void)state;
    asked_after_the_end("none");
}

static void test_asked_after_the_end_isolated(void **state)
{
    (void)state;
    asked_after_the_end("process");
}

/* A deferred round; a handler that claims to ask and asked nothing (a failure). */
static void deferred_and_nothing(const char *isolation)
{
    session s;
    start(&s, isolation);
    json_t *deferred = call_tool(&s, "asks_deferred", "{\"roots\":{}}", "");
    asked(deferred, "roots", "roots/list");
    json_decref(deferred);
    /* As any failure of a handler: a tool error in tools/call, -32603 in a plain call. */
    json_t *nothing = call_tool(&s, "asks_nothing", "{\"roots\":{}}", "");
    const json_t *result = json_object_get(nothing, "result");
    assert_true(json_is_true(json_object_get(result, "isError")));
    assert_non_null(strstr(json_string_value(json_object_get(
                               json_array_get(json_object_get(result, "content"), 0), "text")),
                           "RPCD_INPUT_REQUIRED"));
    json_decref(nothing);
    nothing = request(&s, "asks.nothing", "{}");
    assert_error(nothing, -32603, NULL);
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(nothing, "error"), "data"), "exception")),
        "RPCD_INPUT_REQUIRED");
    json_decref(nothing);
    stop(&s);
}

static void test_deferred_and_nothing(void **state)
{
    (void)state;
    deferred_and_nothing("none");
}

static void test_deferred_and_nothing_isolated(void **state)
{
    (void)state;
    deferred_and_nothing("process");
}

/* What each host function of 1.6 answers to each class of argument, for a client that declared
 * the given capabilities: as text, the same in process and isolated. */
static char *probe(const char *isolation, const char *capabilities)
{
    session s;
    start(&s, isolation);
    json_t *response = call_tool(&s, "asks_probe", capabilities, "");
    char *text =
        json_dumps(json_object_get(json_object_get(response, "result"), "structuredContent"),
                   JSON_COMPACT | JSON_SORT_KEYS);
    assert_non_null(text);
    json_decref(response);
    stop(&s);
    return text;
}

static void test_arguments_answered_alike(void **state)
{
    (void)state;
    /* Everything declared: only the bad arguments are refused. */
    char *all = probe("none", "{\"elicitation\":{\"form\":{},\"url\":{}},\"sampling\":{},"
                              "\"roots\":{}}");
    json_t *got = json_loads(all, 0, NULL);
    static const struct {
        const char *name;
        int status;
    } expected[] = {
        {"form", RPCD_OK},
        {"url", RPCD_OK},
        {"sampling", RPCD_OK},
        {"roots", RPCD_OK},
        {"empty_key", RPCD_ERR_INVALID_ARGUMENT},
        {"long_key", RPCD_ERR_INVALID_ARGUMENT},
        {"bad_utf8_key", RPCD_ERR_INVALID_ARGUMENT},
        {"null_method", RPCD_ERR_INVALID_ARGUMENT},
        {"other_method", RPCD_ERR_INVALID_ARGUMENT},
        {"array_params", RPCD_ERR_INVALID_ARGUMENT},
        {"bad_json", RPCD_ERR_INVALID_ARGUMENT},
        {"sixteen", RPCD_ERR_INVALID_ARGUMENT}, /* a..d took four of the sixteen places */
        {"refused_at", 12},                     /* q12, the seventeenth question */
        {"seventeenth", RPCD_ERR_INVALID_ARGUMENT},
        {"again", RPCD_OK},
        {"state_big", RPCD_ERR_INVALID_ARGUMENT},
        {"state_null", RPCD_ERR_INVALID_ARGUMENT},
        {"state", RPCD_OK},
        {"input_none", RPCD_OK},
        {"input_null_key", RPCD_ERR_INVALID_ARGUMENT},
        {"state_none", RPCD_OK},
        {"state_length", 0},
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        const json_t *value = json_object_get(got, expected[i].name);
        if (!value || json_integer_value(value) != expected[i].status)
            fail_msg("%s: %s, expected %d", expected[i].name, all, expected[i].status);
    }
    json_decref(got);
    /* A form only: a URL, sampling and roots are what it cannot be asked. */
    char *form = probe("none", "{\"elicitation\":{}}");
    got = json_loads(form, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(got, "form")), RPCD_OK);
    assert_int_equal(json_integer_value(json_object_get(got, "url")), RPCD_ERR_UNSUPPORTED);
    assert_int_equal(json_integer_value(json_object_get(got, "sampling")), RPCD_ERR_UNSUPPORTED);
    assert_int_equal(json_integer_value(json_object_get(got, "roots")), RPCD_ERR_UNSUPPORTED);
    json_decref(got);
    /* The same answers from a plugin host. */
    char *all_isolated = probe("process", "{\"elicitation\":{\"form\":{},\"url\":{}},"
                                          "\"sampling\":{},\"roots\":{}}");
    char *form_isolated = probe("process", "{\"elicitation\":{}}");
    assert_string_equal(all_isolated, all);
    assert_string_equal(form_isolated, form);
    free(all);
    free(form);
    free(all_isolated);
    free(form_isolated);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rounds),
        cmocka_unit_test(test_rounds_isolated),
        cmocka_unit_test(test_cannot_ask),
        cmocka_unit_test(test_cannot_ask_isolated),
        cmocka_unit_test(test_other_requests),
        cmocka_unit_test(test_other_requests_isolated),
        cmocka_unit_test(test_asked_after_the_end),
        cmocka_unit_test(test_asked_after_the_end_isolated),
        cmocka_unit_test(test_deferred_and_nothing),
        cmocka_unit_test(test_deferred_and_nothing_isolated),
        cmocka_unit_test(test_arguments_answered_alike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
