/* SPDX-License-Identifier: MIT */
/*
 * The session every concurrency test runs in: rpcd started on the bundled plugins and the
 * concurrency fixture, its lines read with a bound, its exit and stderr checked.
 */
#include "concurrency_session.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

long long now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/*
 * A sanitizer report in rpcd's stderr is a daemon bug even when the exit status looks fine
 * (a report in a process that leaves through _exit changes nothing else), so it fails the test
 * and is shown whole.
 */
void check_sanitizers(const session *s)
{
    static const char *const markers[] = {
        "WARNING: ThreadSanitizer",
        "ERROR: AddressSanitizer",
        "ERROR: LeakSanitizer",
        "runtime error:",
    };
    const char *err = harness_stderr(s->rpcd);
    for (size_t i = 0; i < sizeof markers / sizeof markers[0]; i++) {
        if (strstr(err, markers[i]))
            print_error("rpcd's stderr has a sanitizer report:\n%s\n", err);
        assert_null(strstr(err, markers[i]));
    }
}

/* Starts rpcd on the bundled plugins and the concurrency fixture, with [rpcd] settings. */
void session_start(session *s, const char *settings)
{
    char *plugins = harness_bundled_plugin_sections();
    const char *fixture = harness_env("RPCD_FIXTURE_CONCURRENCY");
    assert_non_null(plugins);
    assert_non_null(fixture);
    char *text;
    assert_true(asprintf(&text, "[rpcd]\n%s\n%s\n[plugin concurrency]\npath = %s\n", settings,
                         plugins, fixture) >= 0);
    s->dir = harness_temp_dir();
    assert_non_null(s->dir);
    s->config = harness_write_file(s->dir, "rpcd.conf", text);
    assert_non_null(s->config);
    free(text);
    free(plugins);
    harness_argv args = harness_rpcd_argv(s->config);
    assert_non_null(args.argv[0]);
    s->rpcd = harness_start(args.argv);
    assert_non_null(s->rpcd);
}

/* Kills rpcd if it still runs and frees everything but the session itself. */
void session_release(session *s)
{
    harness_free(s->rpcd);
    s->rpcd = NULL;
    harness_remove_dir(s->dir);
    free(s->dir);
    free(s->config);
    s->dir = s->config = NULL;
}

/* Checks stderr for sanitizer reports, then releases the session. */
void session_end(session *s)
{
    check_sanitizers(s);
    session_release(s);
}

int session_setup(void **state)
{
    session *s = calloc(1, sizeof *s);
    *state = s;
    return s ? 0 : -1;
}

int session_teardown(void **state)
{
    session *s = *state;
    stop_spinners(s);
    session_release(s);
    free(s);
    return 0;
}

void send_text(session *s, const char *text)
{
    assert_int_equal(harness_write_text(s->rpcd, text, LINE_TIMEOUT_MS), HARNESS_OK);
}

void send_format(session *s, const char *format, ...)
{
    char *text;
    va_list args;
    va_start(args, format);
    int length = vasprintf(&text, format, args);
    va_end(args);
    assert_true(length >= 0);
    send_text(s, text);
    free(text);
}

/* Reads one line and loads it as JSON (new reference), failing the test when none comes. */
json_t *next_line(session *s)
{
    char *line = NULL;
    bool unterminated = false;
    int status = harness_read_line(s->rpcd, LINE_TIMEOUT_MS, &line, NULL, &unterminated);
    if (status != HARNESS_OK)
        print_error("no line from rpcd (status %d); its stderr:\n%s\n", status,
                    harness_stderr(s->rpcd));
    assert_int_equal(status, HARNESS_OK);
    assert_false(unterminated);
    json_error_t error;
    json_t *root = json_loads(line, JSON_DECODE_ANY, &error);
    if (!root)
        print_error("not JSON (%s): %s\n", error.text, line);
    assert_non_null(root);
    free(line);
    return root;
}

bool is_progress(const json_t *message)
{
    const char *method = json_string_value(json_object_get(message, "method"));
    return method && strcmp(method, "notifications/progress") == 0;
}

/* The next line that is not a progress notification (new reference). */
json_t *next_response(session *s)
{
    for (;;) {
        json_t *message = next_line(s);
        if (!is_progress(message))
            return message;
        json_decref(message);
    }
}

/* Reads count responses, skipping progress notifications, into a new array. */
json_t *collect_responses(session *s, size_t count)
{
    json_t *all = json_array();
    assert_non_null(all);
    for (size_t i = 0; i < count; i++)
        assert_int_equal(json_array_append_new(all, next_response(s)), 0);
    return all;
}

void print_json(const char *label, const json_t *value)
{
    char *text = json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT);
    print_error("%s: %s\n", label, text ? text : "(cannot print)");
    free(text);
}

/*
 * Asserts that actual is JSON-equal to the text expected; a top-level array (a batch response)
 * may hold its elements in any order.
 */
void assert_json(const json_t *actual, const char *expected)
{
    char *text = json_dumps(actual, JSON_ENCODE_ANY | JSON_COMPACT);
    assert_non_null(text);
    bool equal = harness_json_equal(expected, text);
    if (!equal)
        print_error("expected: %s\nactual:   %s\n", expected, text);
    free(text);
    assert_true(equal);
}

/* Reads the next response (progress skipped) and checks it is JSON-equal to expected. */
void expect_response(session *s, const char *expected)
{
    json_t *response = next_response(s);
    assert_json(response, expected);
    json_decref(response);
}

/* The one response in responses whose id is the string id; fails when there is not exactly one. */
json_t *response_for(const json_t *responses, const char *id)
{
    json_t *found = NULL;
    size_t count = 0, index;
    json_t *response;
    json_array_foreach(responses, index, response)
    {
        const char *text = json_string_value(json_object_get(response, "id"));
        if (text && strcmp(text, id) == 0) {
            found = response;
            count++;
        }
    }
    if (count != 1) {
        print_error("%zu responses for id \"%s\"\n", count, id);
        print_json("responses", responses);
    }
    assert_int_equal(count, 1);
    return found;
}

/* The one response in responses whose id is the number id. */
json_t *response_for_number(const json_t *responses, json_int_t id)
{
    json_t *found = NULL;
    size_t index;
    json_t *response;
    json_array_foreach(responses, index, response)
    {
        const json_t *value = json_object_get(response, "id");
        if (json_is_integer(value) && json_integer_value(value) == id) {
            assert_null(found);
            found = response;
        }
    }
    if (!found)
        print_json("no response with that id in", responses);
    assert_non_null(found);
    return found;
}

/* Asserts an error response with code and the specification's message for it. */
void assert_error(const json_t *response, json_int_t code, const char *message)
{
    const json_t *error = json_object_get(response, "error");
    if (!json_is_object(error) || json_integer_value(json_object_get(error, "code")) != code)
        print_json("expected an error with that code, got", response);
    assert_true(json_is_object(error));
    assert_int_equal(json_integer_value(json_object_get(error, "code")), code);
    assert_string_equal(json_string_value(json_object_get(error, "message")), message);
    assert_null(json_object_get(response, "result"));
}

const char *detail_of(const json_t *response)
{
    const json_t *detail =
        json_object_get(json_object_get(json_object_get(response, "error"), "data"), "detail");
    assert_true(json_is_string(detail));
    return json_string_value(detail);
}

/* Reads the next response: the request id (a string) cancelled, -32800 and no result. */
void expect_cancelled(session *s, const char *id)
{
    json_t *response = next_response(s);
    assert_string_equal(json_string_value(json_object_get(response, "id")), id);
    assert_null(json_object_get(response, "result"));
    assert_error(response, -32800, "Request cancelled");
    json_decref(response);
}

/* Waits for the exit, within timeout_ms, and asserts the exit status. */
void expect_exit(session *s, int timeout_ms, int code)
{
    harness_exit status;
    assert_int_equal(harness_wait(s->rpcd, timeout_ms, &status), HARNESS_OK);
    if (!status.exited || status.code != code)
        print_error("rpcd ended with %s, expected exit %d; stderr:\n%s\n",
                    harness_exit_describe(&status), code, harness_stderr(s->rpcd));
    check_sanitizers(s);
    assert_true(status.exited);
    assert_int_equal(status.code, code);
}

/* Asserts that nothing is left on stdout (call after rpcd ended or stdin is closed). */
void expect_no_more_output(session *s)
{
    char *rest = NULL;
    assert_int_equal(harness_read_all(s->rpcd, LINE_TIMEOUT_MS, &rest, NULL), HARNESS_OK);
    if (rest[0])
        print_error("unexpected output:\n%s\n", rest);
    assert_string_equal(rest, "");
    free(rest);
}

/* End of input: nothing more on stdout, exit 0, no sanitizer report. Frees the session. */
void session_finish(session *s)
{
    harness_close_stdin(s->rpcd);
    expect_no_more_output(s);
    expect_exit(s, HARNESS_TIMEOUT_MS, 0);
    session_end(s);
}

/*
 * Makes sure every call sent before has had its handler run: `workers` calls of parallel.meet
 * only meet when every worker is inside one at the same time, and the pool takes jobs in order,
 * so each worker has returned from whatever it took earlier. The fixture counts arrivals over the
 * life of the process: total is the number of meet calls made so far, these included.
 */
void barrier(session *s, int workers, int total)
{
    for (int i = 0; i < workers; i++)
        send_format(s,
                    "{\"jsonrpc\":\"2.0\",\"id\":\"meet-%d-%d\",\"method\":\"parallel.meet\","
                    "\"params\":{\"count\":%d}}\n",
                    total, i, total);
    json_t *responses = collect_responses(s, (size_t)workers);
    size_t index;
    json_t *response;
    json_array_foreach(responses, index, response)
    {
        assert_json(json_object_get(response, "result"), "{\"met\":true}");
    }
    json_decref(responses);
}

/* Sends sleep {"ms": ms} with progress token id, and waits for its first report. */
void start_sleep_and_wait_for_progress(session *s, const char *id, int ms)
{
    send_format(s,
                "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"sleep\","
                "\"params\":{\"ms\":%d,\"_meta\":{\"progressToken\":\"%s\"}}}\n",
                id, ms, id);
    json_t *report = next_line(s);
    if (!is_progress(report))
        print_json("expected a progress notification, got", report);
    assert_true(is_progress(report));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(report, "params"), "progressToken")), id);
    json_decref(report);
}

/* Keeps a core busy until the session says stop: see test_id_free_again_as_soon_as_answered. */
static void *spin(void *argument)
{
    session *s = argument;
    volatile unsigned long counter = 0;
    while (!atomic_load(&s->stop_spinning))
        counter++;
    return NULL;
}

void start_spinners(session *s)
{
    atomic_store(&s->stop_spinning, false);
    for (; s->spinner_count < SPINNERS; s->spinner_count++)
        assert_int_equal(pthread_create(&s->spinners[s->spinner_count], NULL, spin, s), 0);
}

void stop_spinners(session *s)
{
    atomic_store(&s->stop_spinning, true);
    for (; s->spinner_count > 0; s->spinner_count--)
        pthread_join(s->spinners[s->spinner_count - 1], NULL);
}

/* Expects rpcd to exit with status within a bound on a wait of since (now_ms()): no waiting out
 * a call. */
void expect_exit_soon(session *s, long long since, int status)
{
    expect_exit(s, HARNESS_TIMEOUT_MS, status);
    long long elapsed = now_ms() - since;
    if (elapsed >= HARNESS_TIMEOUT_MS)
        print_error("rpcd took %lld ms to exit\n", elapsed);
    assert_true(elapsed < HARNESS_TIMEOUT_MS);
}
