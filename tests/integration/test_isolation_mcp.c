/* SPDX-License-Identifier: MIT */
/*
 * What an isolated plugin tells an MCP client outside its results (ABI 1.5), over the real
 * binary: resource updates and log lines cross the channel as frames about no call; a host that
 * sends one malformed (not UTF-8, a NUL, too long) is a broken host: its call fails with -32603
 * naming the message, the host is restarted and other plugins never notice.
 */
#include "harness.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A running rpcd over a config written from text. */
typedef struct session {
    char *dir;
    char *config;
    harness_process *process;
} session;

static void start(session *s, const char *text)
{
    char *expanded = harness_expand_env(text);
    assert_non_null(expanded);
    s->dir = harness_temp_dir();
    assert_non_null(s->dir);
    s->config = harness_write_file(s->dir, "rpcd.conf", expanded);
    assert_non_null(s->config);
    free(expanded);
    harness_argv args = harness_rpcd_argv(s->config);
    assert_non_null(args.argv[0]);
    s->process = harness_start(args.argv);
    assert_non_null(s->process);
}

/* Ends rpcd (end of input), which must exit 0. Returns all of its stderr (new). */
static char *stop(session *s)
{
    harness_close_stdin(s->process);
    harness_exit status;
    assert_int_equal(harness_wait(s->process, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    if (!status.exited || status.code != 0)
        fprintf(stderr, "rpcd ended with %s; stderr:\n%s\n", harness_exit_describe(&status),
                harness_stderr(s->process));
    assert_true(status.exited);
    assert_int_equal(status.code, 0);
    char *text = strdup(harness_stderr(s->process));
    assert_non_null(text);
    harness_free(s->process);
    harness_remove_dir(s->dir);
    free(s->dir);
    free(s->config);
    return text;
}

/* Sends a request and returns the response to it, which must be the next line. */
static json_t *call(session *s, const char *id, const char *method, const char *params)
{
    char *line;
    assert_true(asprintf(&line,
                         "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"%s\",\"params\":%s}\n",
                         id, method, params) >= 0);
    assert_int_equal(harness_write_text(s->process, line, HARNESS_TIMEOUT_MS), HARNESS_OK);
    free(line);
    char *text = NULL;
    int status = harness_read_line(s->process, HARNESS_TIMEOUT_MS, &text, NULL, NULL);
    if (status != HARNESS_OK)
        fprintf(stderr, "no line from rpcd (%d); stderr:\n%s\n", status,
                harness_stderr(s->process));
    assert_int_equal(status, HARNESS_OK);
    json_t *response = json_loads(text, 0, NULL);
    const char *got = json_string_value(json_object_get(response, "id"));
    if (!got || strcmp(got, id) != 0)
        fprintf(stderr, "expected the response to %s, got %s\n", id, text);
    assert_non_null(got);
    assert_string_equal(got, id);
    free(text);
    return response;
}

static void expect_result(json_t *response, const char *expected)
{
    json_t *want = json_loads(expected, JSON_DECODE_ANY, NULL);
    assert_non_null(want);
    json_t *result = json_object_get(response, "result");
    if (!json_equal(result, want))
        fprintf(stderr, "expected result %s in %s\n", expected, json_dumps(response, JSON_COMPACT));
    assert_true(json_equal(result, want));
    json_decref(want);
    json_decref(response);
}

static void expect_error(json_t *response, json_int_t code, const char *exception)
{
    json_t *error = json_object_get(response, "error");
    const char *got =
        json_string_value(json_object_get(json_object_get(error, "data"), "exception"));
    if (json_integer_value(json_object_get(error, "code")) != code || !got ||
        !strstr(got, exception))
        fprintf(stderr, "expected error %lld '%s' in %s\n", (long long)code, exception,
                json_dumps(response, JSON_COMPACT));
    assert_int_equal(json_integer_value(json_object_get(error, "code")), code);
    assert_non_null(got);
    assert_non_null(strstr(got, exception));
    json_decref(response);
}

static const char config[] = "[plugin events]\n"
                             "path = ${RPCD_FIXTURE_EVENTS}\n"
                             "isolation = process\n"
                             "[plugin b]\n"
                             "path = ${RPCD_FIXTURE_ISOLATED_B}\n";

/*
 * Well-formed events, from the host functions or written by hand, leave the host running; a URI
 * longer than 64 KiB is refused to the plugin (RPCD_ERR_INVALID_ARGUMENT, as in process) and
 * never sent.
 */
static void test_events_keep_the_host(void **state)
{
    (void)state;
    session s;
    start(&s, config);
    expect_result(call(&s, "1", "ev.updated", "[\"notes://today\"]"), "{\"status\":0}");
    expect_result(call(&s, "2", "ev.updated_bad", "[]"), "{\"status\":-7}");
    expect_result(call(&s, "3", "ev.log", "[]"), "true");
    expect_result(call(&s, "4", "ev.forge", "[\"updated\"]"), "true");
    expect_result(call(&s, "5", "ev.forge", "[\"log\"]"), "true");
    expect_result(call(&s, "6", "ev.updated", "[\"notes://again\"]"), "{\"status\":0}");
    /* Longer than rpcd takes from a host: refused there, the host kept. */
    expect_result(call(&s, "7", "ev.updated_long", "[]"), "{\"status\":-7}");
    expect_result(call(&s, "8", "ev.updated", "[\"notes://last\"]"), "{\"status\":0}");
    char *text = stop(&s);
    assert_null(strstr(text, "its host (pid"));
    free(text);
}

/*
 * Each malformed event is a broken host: its call fails naming the message, one line says so
 * with the method, a call of another plugin is answered, and the restarted host serves.
 */
static void test_malformed_events_are_a_broken_host(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        const char *exception;
    } cases[] = {
        {"[\"updated_utf8\"]", "sent a malformed message of kind 13"},
        {"[\"updated_nul\"]", "sent a malformed message of kind 13"},
        {"[\"updated_long\"]", "sent a malformed message of kind 13"},
        {"[\"log_utf8\"]", "sent a malformed message of kind 14"},
    };
    session s;
    start(&s, config);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char id[16];
        snprintf(id, sizeof id, "bad%zu", i);
        expect_result(call(&s, "before", "ev.updated", "[\"notes://x\"]"), "{\"status\":0}");
        expect_error(call(&s, id, "ev.forge", cases[i].what), -32603, cases[i].exception);
        assert_int_equal(
            harness_wait_for_stderr(s.process, "running: ev.forge", HARNESS_TIMEOUT_MS),
            HARNESS_OK);
        expect_result(call(&s, "other", "b.echo", "[1]"), "[1]");
        expect_result(call(&s, "after", "ev.updated", "[\"notes://y\"]"), "{\"status\":0}");
    }
    /* One death per case, each logged once. */
    char *text = stop(&s);
    size_t deaths = 0;
    for (const char *at = text; (at = strstr(at, "plugin events: its host (pid")); at++)
        deaths++;
    assert_int_equal(deaths, sizeof cases / sizeof cases[0]);
    free(text);
}

/*
 * A plugin built against the released 1.4 header keeps, isolated as in process, prompts/list as
 * the method it registered under that name (rpcd answers it itself only from 1.5).
 */
/*
 * A line a quick handler logs before its result reaches the client before the response, though
 * the response is read on the fast lane by rpcd's reading thread: what the handler tells the
 * client from its thread goes on its call's lane.
 */
static void test_quick_handler_lines_before_its_response(void **state)
{
    (void)state;
    session s;
    start(&s, config);
    expect_result(call(&s, "level", "logging/setLevel", "{\"level\":\"warning\"}"), "{}");
    for (int i = 0; i < 40; i++) {
        char line[128];
        snprintf(line, sizeof line,
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ev.log_quick\",\"params\":[]}\n", i);
        assert_int_equal(harness_write_text(s.process, line, HARNESS_TIMEOUT_MS), HARNESS_OK);
        char *first = NULL, *second = NULL;
        assert_int_equal(harness_read_line(s.process, HARNESS_TIMEOUT_MS, &first, NULL, NULL),
                         HARNESS_OK);
        assert_int_equal(harness_read_line(s.process, HARNESS_TIMEOUT_MS, &second, NULL, NULL),
                         HARNESS_OK);
        if (!strstr(first, "notifications/message") || !strstr(second, "\"result\""))
            fprintf(stderr, "round %d: %s then %s\n", i, first, second);
        assert_non_null(strstr(first, "events quick 1"));
        assert_non_null(strstr(second, "\"result\":true"));
        free(first);
        free(second);
    }
    free(stop(&s));
}

static void test_abi_1_4_keeps_its_names(void **state)
{
    (void)state;
    session s;
    start(&s, "[plugin abi14]\npath = ${RPCD_FIXTURE_ABI_1_4}\nisolation = process\n");
    expect_result(call(&s, "1", "prompts/list", "{}"), "\"mine\"");
    expect_result(call(&s, "2", "abi14.one", "[]"), "\"completed\"");
    char *text = stop(&s);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_keep_the_host),
        cmocka_unit_test(test_malformed_events_are_a_broken_host),
        cmocka_unit_test(test_quick_handler_lines_before_its_response),
        cmocka_unit_test(test_abi_1_4_keeps_its_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
