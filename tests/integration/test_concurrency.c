/* SPDX-License-Identifier: MIT */
/*
 * Concurrency through the real binary: cancellation in both conventions, duplicate ids, response
 * order with one worker and with several, serialized and parallel methods, deferred completion,
 * back-pressure, batch limits, and how rpcd ends: end of input, SIGTERM/SIGINT, a closed stdout.
 */
#include "harness.h"

#include <jansson.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define LINE_TIMEOUT_MS test_time_ms(10000)

enum { SPINNERS = 4 };

/*
 * One rpcd with a config of its own, in a temp dir removed at the end. Each test gets one as
 * its state; the teardown cleans up after a test that failed half-way.
 */
typedef struct session {
    char *dir;
    char *config;
    harness_process *rpcd;
    atomic_bool stop_spinning;
    pthread_t spinners[SPINNERS];
    int spinner_count;
} session;

static long long now_ms(void)
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
static void check_sanitizers(const session *s)
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
static void start(session *s, const char *settings)
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
static void release(session *s)
{
    harness_free(s->rpcd);
    s->rpcd = NULL;
    harness_remove_dir(s->dir);
    free(s->dir);
    free(s->config);
    s->dir = s->config = NULL;
}

/* Checks stderr for sanitizer reports, then releases the session. */
static void end(session *s)
{
    check_sanitizers(s);
    release(s);
}

static int session_setup(void **state)
{
    session *s = calloc(1, sizeof *s);
    *state = s;
    return s ? 0 : -1;
}

static void stop_spinners(session *s);

static int session_teardown(void **state)
{
    session *s = *state;
    stop_spinners(s);
    release(s);
    free(s);
    return 0;
}

static void send_text(session *s, const char *text)
{
    assert_int_equal(harness_write_text(s->rpcd, text, LINE_TIMEOUT_MS), HARNESS_OK);
}

__attribute__((format(printf, 2, 3))) static void send_format(session *s, const char *format, ...)
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
static json_t *next_line(session *s)
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

static bool is_progress(const json_t *message)
{
    const char *method = json_string_value(json_object_get(message, "method"));
    return method && strcmp(method, "notifications/progress") == 0;
}

/* The next line that is not a progress notification (new reference). */
static json_t *next_response(session *s)
{
    for (;;) {
        json_t *message = next_line(s);
        if (!is_progress(message))
            return message;
        json_decref(message);
    }
}

/* Reads count responses, skipping progress notifications, into a new array. */
static json_t *collect_responses(session *s, size_t count)
{
    json_t *all = json_array();
    assert_non_null(all);
    for (size_t i = 0; i < count; i++)
        assert_int_equal(json_array_append_new(all, next_response(s)), 0);
    return all;
}

static void print_json(const char *label, const json_t *value)
{
    char *text = json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT);
    print_error("%s: %s\n", label, text ? text : "(cannot print)");
    free(text);
}

/*
 * Asserts that actual is JSON-equal to the text expected; a top-level array (a batch response)
 * may hold its elements in any order.
 */
static void assert_json(const json_t *actual, const char *expected)
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
static void expect_response(session *s, const char *expected)
{
    json_t *response = next_response(s);
    assert_json(response, expected);
    json_decref(response);
}

/* The one response in responses whose id is the string id; fails when there is not exactly one. */
static json_t *response_for(const json_t *responses, const char *id)
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
static json_t *response_for_number(const json_t *responses, json_int_t id)
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
static void assert_error(const json_t *response, json_int_t code, const char *message)
{
    const json_t *error = json_object_get(response, "error");
    if (!json_is_object(error) || json_integer_value(json_object_get(error, "code")) != code)
        print_json("expected an error with that code, got", response);
    assert_true(json_is_object(error));
    assert_int_equal(json_integer_value(json_object_get(error, "code")), code);
    assert_string_equal(json_string_value(json_object_get(error, "message")), message);
    assert_null(json_object_get(response, "result"));
}

static const char *detail_of(const json_t *response)
{
    const json_t *detail =
        json_object_get(json_object_get(json_object_get(response, "error"), "data"), "detail");
    assert_true(json_is_string(detail));
    return json_string_value(detail);
}

/* Reads the next response: the request id (a string) cancelled, -32800 and no result. */
static void expect_cancelled(session *s, const char *id)
{
    json_t *response = next_response(s);
    assert_string_equal(json_string_value(json_object_get(response, "id")), id);
    assert_null(json_object_get(response, "result"));
    assert_error(response, -32800, "Request cancelled");
    json_decref(response);
}

/* Waits for the exit, within timeout_ms, and asserts the exit status. */
static void expect_exit(session *s, int timeout_ms, int code)
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
static void expect_no_more_output(session *s)
{
    char *rest = NULL;
    assert_int_equal(harness_read_all(s->rpcd, LINE_TIMEOUT_MS, &rest, NULL), HARNESS_OK);
    if (rest[0])
        print_error("unexpected output:\n%s\n", rest);
    assert_string_equal(rest, "");
    free(rest);
}

/* End of input: nothing more on stdout, exit 0, no sanitizer report. Frees the session. */
static void finish(session *s)
{
    harness_close_stdin(s->rpcd);
    expect_no_more_output(s);
    expect_exit(s, HARNESS_TIMEOUT_MS, 0);
    end(s);
}

/*
 * Makes sure every call sent before has had its handler run: `workers` calls of parallel.meet
 * only meet when every worker is inside one at the same time, and the pool takes jobs in order,
 * so each worker has returned from whatever it took earlier. The fixture counts arrivals over the
 * life of the process: total is the number of meet calls made so far, these included.
 */
static void barrier(session *s, int workers, int total)
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
static void start_sleep_and_wait_for_progress(session *s, const char *id, int ms)
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

/* ---- Cancellation ---------------------------------------------------------------------- */

/* $/cancelRequest (LSP): the running call ends at once with -32800. */
static void test_lsp_cancel_answers_request_cancelled(void **state)
{
    session *s = *state;
    start(s, "workers = 2");
    start_sleep_and_wait_for_progress(s, "long", 600000);
    long long sent = now_ms();
    send_text(
        s, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"long\"}}\n");
    expect_cancelled(s, "long");
    assert_true(now_ms() - sent < HARNESS_TIMEOUT_MS);
    finish(s);
}

/*
 * notifications/cancelled (MCP): the call ends with no response at all. With one worker the
 * echo behind it only runs once the sleep has ended, and responses keep request order, so the
 * echo's answer being next proves the sleep ended silently; nothing may follow it, not even a
 * late progress report for the cancelled call's token.
 */
static void test_mcp_cancel_sends_no_response(void **state)
{
    session *s = *state;
    start(s, "workers = 1");
    start_sleep_and_wait_for_progress(s, "quiet", 600000);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                 "\"params\":{\"requestId\":\"quiet\",\"reason\":\"user pressed stop\"}}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"after\",\"method\":\"echo\",\"params\":[1]}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"after\",\"result\":[1]}");
    finish(s);
}

/* Cancelling an id nobody uses, or one whose call has ended, does nothing and says nothing. */
static void test_cancel_of_unknown_or_finished_id_is_ignored(void **state)
{
    session *s = *state;
    start(s, "workers = 2");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"done\",\"method\":\"echo\",\"params\":[1]}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"done\",\"result\":[1]}");
    send_text(s,
              "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"done\"}}\n"
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
              "\"params\":{\"requestId\":\"done\",\"reason\":\"too late\"}}\n"
              "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":424242}}\n"
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
              "\"params\":{\"requestId\":\"never-sent\"}}\n"
              "{\"jsonrpc\":\"2.0\",\"id\":\"next\",\"method\":\"echo\",\"params\":[2]}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"next\",\"result\":[2]}");
    finish(s);
}

/*
 * A handler that never looks at cancellation is not cut short: both calls below are still held
 * by the fixture after being cancelled, and end when released, the LSP one answered with -32800
 * (the client asked for that), the MCP one not at all.
 */
static void test_cancel_does_not_cut_a_call_short(void **state)
{
    session *s = *state;
    start(s, "workers = 2");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"lsp\",\"method\":\"deferred.hold\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"mcp\",\"method\":\"deferred.hold\"}\n");
    barrier(s, 2, 2);
    send_text(s,
              "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"lsp\"}}\n"
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
              "\"params\":{\"requestId\":\"mcp\",\"reason\":\"no longer needed\"}}\n"
              "{\"jsonrpc\":\"2.0\",\"id\":\"release\",\"method\":\"deferred.release\"}\n");
    json_t *responses = collect_responses(s, 2);
    assert_json(json_object_get(response_for(responses, "release"), "result"), "{\"held\":2}");
    assert_error(response_for(responses, "lsp"), -32800, "Request cancelled");
    json_decref(responses);
    finish(s);
}

/*
 * A call still queued behind a running one never reaches its handler once cancelled: the
 * fixture's deferred.hold would have been counted by deferred.release. One worker keeps the
 * queue and the order of the responses fixed.
 */
static void test_cancel_of_queued_call_skips_handler(void **state)
{
    session *s = *state;
    start(s, "workers = 1");
    start_sleep_and_wait_for_progress(s, "busy", 600000);
    send_text(
        s, "{\"jsonrpc\":\"2.0\",\"id\":\"queued-lsp\",\"method\":\"deferred.hold\"}\n"
           "{\"jsonrpc\":\"2.0\",\"id\":\"queued-mcp\",\"method\":\"deferred.hold\"}\n"
           "{\"jsonrpc\":\"2.0\",\"id\":\"release\",\"method\":\"deferred.release\"}\n"
           "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\","
           "\"params\":{\"id\":\"queued-lsp\"}}\n"
           "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
           "\"params\":{\"requestId\":\"queued-mcp\"}}\n"
           "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"busy\"}}\n");
    expect_cancelled(s, "busy");
    expect_cancelled(s, "queued-lsp");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"release\",\"result\":{\"held\":0}}");
    finish(s);
}

/*
 * One call cancelled both ways, in the given order: the client asked for -32800 once, so the
 * call ends with exactly that one response, whichever convention came first. The call is held
 * by the fixture (its handler has run: the barrier) until released.
 */
static void cancel_both_ways(session *s, bool lsp_first)
{
    static const char lsp[] =
        "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"both\"}}\n";
    static const char mcp[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                              "\"params\":{\"requestId\":\"both\"}}\n";
    start(s, "workers = 2");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"both\",\"method\":\"deferred.hold\"}\n");
    barrier(s, 2, 2);
    send_text(s, lsp_first ? lsp : mcp);
    send_text(s, lsp_first ? mcp : lsp);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"release\",\"method\":\"deferred.release\"}\n");
    json_t *responses = collect_responses(s, 2);
    assert_json(json_object_get(response_for(responses, "release"), "result"), "{\"held\":1}");
    assert_error(response_for(responses, "both"), -32800, "Request cancelled");
    json_decref(responses);
    finish(s);
}

static void test_cancel_lsp_then_mcp_answers_once(void **state)
{
    cancel_both_ways(*state, true);
}

static void test_cancel_mcp_then_lsp_answers_once(void **state)
{
    cancel_both_ways(*state, false);
}

/*
 * $/cancelRequest on a running tools/call: the MCP client gets the JSON-RPC error -32800, not a
 * tool result (isError) saying the call was cancelled.
 */
static void test_lsp_cancel_of_tool_call_is_request_cancelled(void **state)
{
    session *s = *state;
    start(s, "workers = 2\n[mcp]\ntools = all");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"tool\",\"method\":\"tools/call\",\"params\":{"
                 "\"name\":\"sleep\",\"arguments\":{\"ms\":600000},"
                 "\"_meta\":{\"progressToken\":\"tool\"}}}\n");
    json_t *report = next_line(s);
    assert_true(is_progress(report));
    json_decref(report);
    send_text(
        s, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"tool\"}}\n");
    expect_cancelled(s, "tool");
    finish(s);
}

/* ---- Ids ------------------------------------------------------------------------------- */

/*
 * An id already in flight is refused with -32600 naming the reason; the first call is not
 * disturbed, and the id is free again once it has ended. id null is never tracked.
 */
static void test_duplicate_id_in_flight(void **state)
{
    session *s = *state;
    start(s, "workers = 2");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"deferred.hold\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"echo\",\"params\":[\"twin\"]}\n");
    json_t *response = next_response(s);
    assert_int_equal(json_integer_value(json_object_get(response, "id")), 7);
    assert_error(response, -32600, "Invalid Request");
    assert_non_null(strstr(detail_of(response), "in flight"));
    json_decref(response);

    /* The held call may still be queued when the error comes back: release only once it holds. */
    barrier(s, 2, 2);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"release\",\"method\":\"deferred.release\"}\n");
    json_t *responses = collect_responses(s, 2);
    assert_json(json_object_get(response_for(responses, "release"), "result"), "{\"held\":1}");
    size_t index;
    json_t *item;
    bool seen_first = false;
    json_array_foreach(responses, index, item)
    {
        if (json_integer_value(json_object_get(item, "id")) == 7) {
            assert_json(item, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"completed\":true}}");
            seen_first = true;
        }
    }
    assert_true(seen_first);
    json_decref(responses);

    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"echo\",\"params\":[\"again\"]}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":[\"again\"]}");

    /* Two id-null calls in flight together: both run, both are answered. */
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"deferred.hold\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"deferred.hold\"}\n");
    barrier(s, 2, 4);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"release-2\",\"method\":\"deferred.release\"}\n");
    responses = collect_responses(s, 3);
    assert_json(json_object_get(response_for(responses, "release-2"), "result"), "{\"held\":2}");
    size_t nulls = 0;
    json_array_foreach(responses, index, item)
    {
        if (json_is_null(json_object_get(item, "id"))) {
            assert_json(item, "{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{\"completed\":true}}");
            nulls++;
        }
    }
    assert_int_equal(nulls, 2);
    json_decref(responses);
    finish(s);
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

static void start_spinners(session *s)
{
    atomic_store(&s->stop_spinning, false);
    for (; s->spinner_count < SPINNERS; s->spinner_count++)
        assert_int_equal(pthread_create(&s->spinners[s->spinner_count], NULL, spin, s), 0);
}

static void stop_spinners(session *s)
{
    atomic_store(&s->stop_spinning, true);
    for (; s->spinner_count > 0; s->spinner_count--)
        pthread_join(s->spinners[s->spinner_count - 1], NULL);
}

/*
 * Once a client has read a call's response, the call has ended for it, and so has the id: a
 * client may send the same id again at once. Many rounds of that, with every core kept busy so
 * that rpcd's threads get preempted at unlucky moments, must never meet "still in flight".
 */
static void test_id_free_again_as_soon_as_answered(void **state)
{
    session *s = *state;
    /* Under valgrind a round is a hundred times slower: fewer rounds keep the test bounded. */
    const int ROUNDS = harness_wrapped() ? 100 : 3000;
    start(s, "workers = 2");
    /* valgrind runs rpcd's threads one at a time: busy cores would only starve it. */
    if (!harness_wrapped())
        start_spinners(s);
    int refused = 0, first_refused = -1;
    for (int i = 0; i < ROUNDS; i++) {
        send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\n");
        json_t *response = next_line(s);
        if (json_object_get(response, "error")) {
            if (refused++ == 0) {
                first_refused = i;
                print_json("refused", response);
            }
        }
        json_decref(response);
    }
    stop_spinners(s);
    if (refused > 0)
        print_error("id 1 refused as in flight %d times in %d rounds (first in round %d), though "
                    "each round waited for the previous response\n",
                    refused, ROUNDS, first_refused);
    assert_int_equal(refused, 0);
    finish(s);
}

/* ---- Order ----------------------------------------------------------------------------- */

/* With two workers a fast call is not stuck behind a slow one. */
static void test_fast_call_overtakes_slow_one(void **state)
{
    session *s = *state;
    start(s, "workers = 2");
    send_text(
        s, "{\"jsonrpc\":\"2.0\",\"id\":\"slow\",\"method\":\"sleep\",\"params\":{\"ms\":2000}}\n"
           "{\"jsonrpc\":\"2.0\",\"id\":\"fast\",\"method\":\"echo\",\"params\":[\"quick\"]}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"fast\",\"result\":[\"quick\"]}");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"slow\",\"result\":{\"slept_ms\":2000}}");
    finish(s);
}

/* With one worker every answer keeps request order, the reader's own errors included. */
static void test_one_worker_answers_in_request_order(void **state)
{
    session *s = *state;
    start(s, "workers = 1");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sleep\",\"params\":{\"ms\":300}}\n"
                 "this is not json\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\",\"params\":[2]}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"no.such.method\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":4}\n"
                 "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[\"a notification\"]}\n"
                 "[{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"echo\",\"params\":[5]}]\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"deferred.hold\","
                 "\"params\":{\"after_ms\":100}}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"sum\",\"params\":[3,4]}\n");
    static const char *const expected[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"slept_ms\":300}}",
        "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":[2]}",
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601,"
        "\"message\":\"Method not found\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32600,\"message\":\"Invalid "
        "Request\"}}",
        "[{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":[5]}]",
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"completed\":true}}",
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":7}",
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        json_t *response = next_response(s);
        assert_json(response, expected[i]);
        json_decref(response);
    }
    finish(s);
}

/* ---- Serialized and parallel methods --------------------------------------------------- */

/* A method registered RPCD_METHOD_SERIALIZED never has two calls running, whatever the pool. */
static void test_serialized_method_never_overlaps(void **state)
{
    session *s = *state;
    enum { CALLS = 8 };
    start(s, "workers = 4");
    for (int i = 0; i < CALLS; i++)
        send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"probe-%d\",\"method\":\"serial.probe\"}\n",
                    i);
    json_t *responses = collect_responses(s, CALLS);
    for (int i = 0; i < CALLS; i++) {
        char id[32];
        snprintf(id, sizeof id, "probe-%d", i);
        assert_json(json_object_get(response_for(responses, id), "result"), "{\"overlaps\":0}");
    }
    json_decref(responses);
    finish(s);
}

/*
 * Ordinary methods run at the same time: three parallel.meet calls only return met:true when
 * all three are inside at once, as separate lines and as the items of one batch, whose single
 * array is written once its last item has ended.
 */
static void test_calls_and_batch_items_run_concurrently(void **state)
{
    session *s = *state;
    start(s, "workers = 3");
    for (int i = 0; i < 3; i++)
        send_format(s,
                    "{\"jsonrpc\":\"2.0\",\"id\":\"line-%d\",\"method\":\"parallel.meet\","
                    "\"params\":{\"count\":3}}\n",
                    i);
    json_t *responses = collect_responses(s, 3);
    for (int i = 0; i < 3; i++) {
        char id[32];
        snprintf(id, sizeof id, "line-%d", i);
        assert_json(json_object_get(response_for(responses, id), "result"), "{\"met\":true}");
    }
    json_decref(responses);

    /* The fixture counts arrivals for the life of the process: three more make six. */
    send_text(s, "[{\"jsonrpc\":\"2.0\",\"id\":\"b0\",\"method\":\"parallel.meet\","
                 "\"params\":{\"count\":6}},"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"b1\",\"method\":\"parallel.meet\","
                 "\"params\":{\"count\":6}},"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"b2\",\"method\":\"parallel.meet\","
                 "\"params\":{\"count\":6}}]\n");
    json_t *batch = next_line(s);
    assert_json(batch, "[{\"jsonrpc\":\"2.0\",\"id\":\"b0\",\"result\":{\"met\":true}},"
                       "{\"jsonrpc\":\"2.0\",\"id\":\"b1\",\"result\":{\"met\":true}},"
                       "{\"jsonrpc\":\"2.0\",\"id\":\"b2\",\"result\":{\"met\":true}}]");
    json_decref(batch);
    finish(s);
}

/* ---- Deferred completion --------------------------------------------------------------- */

/* The Threads: line of /proc/<pid>/status, or -1. */
static int thread_count(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    char *status = harness_read_file(path, NULL);
    if (!status)
        return -1;
    const char *line = strstr(status, "\nThreads:");
    int count = line ? atoi(line + strlen("\nThreads:")) : -1;
    free(status);
    return count;
}

/*
 * 10,000 deferred calls in flight at once, held by one plugin thread: rpcd keeps a few threads,
 * not one per call; a release completes them all and each id is answered exactly once.
 */
static void test_ten_thousand_deferred_calls(void **state)
{
    session *s = *state;
    enum { COUNT = 10000 };
    start(s, "workers = 2\nmax_in_flight = 20000");
    size_t capacity = COUNT * 80, used = 0;
    char *input = malloc(capacity);
    assert_non_null(input);
    for (int i = 0; i < COUNT; i++)
        used +=
            (size_t)snprintf(input + used, capacity - used,
                             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"deferred.hold\"}\n", i);
    assert_int_equal(harness_write(s->rpcd, input, used, test_time_ms(60000)), HARNESS_OK);
    free(input);
    barrier(s, 2, 2);

    int threads = thread_count(harness_pid(s->rpcd));
    if (threads < 0 || threads >= 16)
        print_error("rpcd runs %d threads while %d calls are held\n", threads, COUNT);
    assert_true(threads > 0 && threads < 16);

    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"release\",\"method\":\"deferred.release\"}\n");
    bool *seen = calloc(COUNT, sizeof *seen);
    assert_non_null(seen);
    bool released = false;
    for (int i = 0; i < COUNT + 1; i++) {
        json_t *response = next_response(s);
        const json_t *id = json_object_get(response, "id");
        if (json_is_string(id)) {
            assert_string_equal(json_string_value(id), "release");
            assert_false(released);
            assert_json(json_object_get(response, "result"), "{\"held\":10000}");
            released = true;
        } else {
            assert_true(json_is_integer(id));
            json_int_t n = json_integer_value(id);
            assert_true(n >= 0 && n < COUNT);
            if (seen[n])
                print_error("id %d answered twice\n", (int)n);
            assert_false(seen[n]);
            seen[n] = true;
            assert_json(json_object_get(response, "result"), "{\"completed\":true}");
        }
        json_decref(response);
    }
    assert_true(released);
    free(seen);
    finish(s);
}

/* call_complete before the handler returned RPCD_DEFERRED counts; a second one is refused. */
static void test_deferred_complete_twice(void **state)
{
    session *s = *state;
    start(s, "workers = 2");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"deferred.twice\"}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":1,"
                       "\"result\":{\"first\":0,\"second\":-10,\"deferred\":-10}}");
    finish(s);
}

/* ---- Quick methods ------------------------------------------------------------------- */

/* Whether a call of method, with params, ran on rpcd's main thread (the reader). */
static bool ran_on_reader(session *s, const char *method, const char *params)
{
    send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":%s}\n", method,
                params);
    json_t *response = next_response(s);
    json_t *on_main = json_object_get(json_object_get(response, "result"), "on_main_thread");
    assert_true(json_is_boolean(on_main));
    bool result = json_is_true(on_main);
    json_decref(response);
    return result;
}

/*
 * RPCD_METHOD_QUICK calls run on the reading thread, sparing the hand-off; other calls, quick
 * calls with large params, and every call with workers = 1 (one at a time) run on a worker.
 */
static void test_quick_methods_run_on_the_reader(void **state)
{
    session *s = *state;
    size_t pad_bytes = 70 * 1024;
    char *large = malloc(pad_bytes + 16);
    assert_non_null(large);
    large[0] = '[';
    large[1] = '"';
    memset(large + 2, 'q', pad_bytes);
    strcpy(large + 2 + pad_bytes, "\"]");

    start(s, "workers = 2");
    assert_true(ran_on_reader(s, "thread.quick", "[]"));
    assert_false(ran_on_reader(s, "thread.worker", "[]"));
    assert_false(ran_on_reader(s, "thread.quick", large));
    finish(s);

    start(s, "workers = 1");
    assert_false(ran_on_reader(s, "thread.quick", "[]"));
    finish(s);
    free(large);
}

/* ---- Limits ---------------------------------------------------------------------------- */

static const char two_holds_then_echo[] =
    "{\"jsonrpc\":\"2.0\",\"id\":\"hold-1\",\"method\":\"deferred.hold\","
    "\"params\":{\"after_ms\":300}}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":\"hold-2\",\"method\":\"deferred.hold\","
    "\"params\":{\"after_ms\":300}}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":\"echo\",\"method\":\"echo\",\"params\":[1]}\n";

/* The ids of the three responses to two_holds_then_echo, in arrival order. */
static void three_response_ids(session *s, const char *ids[3], json_t *keep[3])
{
    for (int i = 0; i < 3; i++) {
        keep[i] = next_response(s);
        ids[i] = json_string_value(json_object_get(keep[i], "id"));
        assert_non_null(ids[i]);
    }
    assert_true(strcmp(ids[0], ids[1]) != 0 && strcmp(ids[1], ids[2]) != 0 &&
                strcmp(ids[0], ids[2]) != 0);
}

/*
 * max_in_flight = 2: with two calls in flight the reader stops reading, so the echo behind them
 * is not even read before a hold has ended; max_in_flight = 3 lets it through at once. Nothing is
 * dropped either way.
 */
static void test_max_in_flight_stops_the_reader(void **state)
{
    session *s = *state;
    const char *ids[3];
    json_t *keep[3];

    start(s, "workers = 2\nmax_in_flight = 2");
    send_text(s, two_holds_then_echo);
    three_response_ids(s, ids, keep);
    if (strncmp(ids[0], "hold-", 5) != 0)
        print_error("with max_in_flight = 2 the echo came first: %s, %s, %s\n", ids[0], ids[1],
                    ids[2]);
    assert_true(strncmp(ids[0], "hold-", 5) == 0);
    for (int i = 0; i < 3; i++)
        json_decref(keep[i]);
    finish(s);

    start(s, "workers = 2\nmax_in_flight = 3");
    send_text(s, two_holds_then_echo);
    three_response_ids(s, ids, keep);
    assert_string_equal(ids[0], "echo");
    for (int i = 0; i < 3; i++)
        json_decref(keep[i]);
    finish(s);
}

/* A hold of 300 ms whose params carry pad_bytes of padding, then an echo with echo_pad_bytes. */
static void send_padded_hold_then_echo(session *s, size_t pad_bytes, size_t echo_pad_bytes)
{
    size_t size = pad_bytes + echo_pad_bytes + 256;
    char *text = malloc(size);
    assert_non_null(text);
    int used = snprintf(text, size,
                        "{\"jsonrpc\":\"2.0\",\"id\":\"hold\",\"method\":\"deferred.hold\","
                        "\"params\":{\"after_ms\":300,\"pad\":\"");
    memset(text + used, 'h', pad_bytes);
    used += (int)pad_bytes;
    used +=
        snprintf(text + used, size - (size_t)used,
                 "\"}}\n{\"jsonrpc\":\"2.0\",\"id\":\"echo\",\"method\":\"echo\",\"params\":[\"");
    memset(text + used, 'e', echo_pad_bytes);
    used += (int)echo_pad_bytes;
    snprintf(text + used, size - (size_t)used, "\"]}\n");
    send_text(s, text);
    free(text);
}

/* The id of the first of two responses; both must come. */
static char *first_of_two_ids(session *s)
{
    json_t *first = next_response(s);
    json_t *second = next_response(s);
    char *id = strdup(json_string_value(json_object_get(first, "id")));
    assert_non_null(json_string_value(json_object_get(second, "id")));
    json_decref(first);
    json_decref(second);
    return id;
}

/*
 * max_in_flight_bytes: while calls hold that much, reading waits inside the next long line, so
 * a long echo behind a big held call is answered after it; a short echo is not held back, and
 * with room enough the long one is not either.
 */
static void test_max_in_flight_bytes_holds_long_lines(void **state)
{
    session *s = *state;
    start(s, "workers = 2\nmax_in_flight_bytes = 100000");
    send_padded_hold_then_echo(s, 200000, 200000);
    char *first = first_of_two_ids(s);
    assert_string_equal(first, "hold");
    free(first);
    finish(s);

    start(s, "workers = 2\nmax_in_flight_bytes = 100000");
    send_padded_hold_then_echo(s, 200000, 10);
    first = first_of_two_ids(s);
    assert_string_equal(first, "echo");
    free(first);
    finish(s);

    start(s, "workers = 2\nmax_in_flight_bytes = 1000000");
    send_padded_hold_then_echo(s, 200000, 200000);
    first = first_of_two_ids(s);
    assert_string_equal(first, "echo");
    free(first);
    finish(s);
}

/*
 * A batch far longer than max_in_flight: its items start in groups, and a group's held items
 * count in flight, so the reader must let them run before it waits for room. All are answered.
 */
static void test_batch_longer_than_max_in_flight(void **state)
{
    session *s = *state;
    start(s, "workers = 2\nmax_in_flight = 2");
    char line[40 * 64 + 8] = "[";
    size_t used = 1;
    for (int i = 0; i < 40; i++)
        used += (size_t)snprintf(line + used, sizeof line - used,
                                 "%s{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"echo\"}",
                                 i ? "," : "", i);
    snprintf(line + used, sizeof line - used, "]\n");
    send_text(s, line);
    json_t *responses = next_line(s);
    assert_true(json_is_array(responses));
    assert_int_equal(json_array_size(responses), 40);
    json_decref(responses);
    finish(s);
}

/* A batch longer than max_batch is one -32600, not an array; the next lines are served. */
static void test_max_batch(void **state)
{
    session *s = *state;
    start(s, "workers = 2\nmax_batch = 5");
    char six[1024] = "[", five[1024] = "[";
    for (int i = 0; i < 6; i++) {
        char one[128];
        snprintf(one, sizeof one,
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"echo\",\"params\":[%d]}", i, i);
        if (i > 0)
            strcat(six, ",");
        strcat(six, one);
        if (i < 5) {
            if (i > 0)
                strcat(five, ",");
            strcat(five, one);
        }
    }
    strcat(six, "]\n");
    strcat(five, "]\n");

    send_text(s, six);
    json_t *response = next_line(s);
    assert_true(json_is_object(response));
    assert_true(json_is_null(json_object_get(response, "id")));
    assert_error(response, -32600, "Invalid Request");
    assert_non_null(strstr(detail_of(response), "max_batch"));
    json_decref(response);

    send_text(s, five);
    response = next_line(s);
    assert_json(response, "[{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":[0]},"
                          "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1]},"
                          "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":[2]},"
                          "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":[3]},"
                          "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":[4]}]");
    json_decref(response);

    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"after\",\"method\":\"echo\",\"params\":[9]}\n");
    response = next_line(s);
    assert_json(response, "{\"jsonrpc\":\"2.0\",\"id\":\"after\",\"result\":[9]}");
    json_decref(response);
    finish(s);
}

/* ---- Volume ---------------------------------------------------------------------------- */

/* 10,000 pipelined requests over eight workers: every id answered exactly once. */
static void test_ten_thousand_pipelined_requests(void **state)
{
    session *s = *state;
    enum { COUNT = 10000 };
    start(s, "workers = 8");
    size_t capacity = COUNT * 80, used = 0;
    char *input = malloc(capacity);
    assert_non_null(input);
    for (int i = 0; i < COUNT; i++)
        used += (size_t)snprintf(input + used, capacity - used,
                                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"echo\","
                                 "\"params\":[%d]}\n",
                                 i, i * 3);
    assert_int_equal(harness_write(s->rpcd, input, used, test_time_ms(60000)), HARNESS_OK);
    free(input);
    bool *seen = calloc(COUNT, sizeof *seen);
    assert_non_null(seen);
    for (int i = 0; i < COUNT; i++) {
        json_t *response = next_line(s);
        const json_t *id = json_object_get(response, "id");
        assert_true(json_is_integer(id));
        json_int_t n = json_integer_value(id);
        assert_true(n >= 0 && n < COUNT);
        if (seen[n])
            print_error("id %d answered twice\n", (int)n);
        assert_false(seen[n]);
        seen[n] = true;
        assert_int_equal(json_integer_value(json_array_get(json_object_get(response, "result"), 0)),
                         n * 3);
        json_decref(response);
    }
    free(seen);
    finish(s);
}

/* A batch of slow and fast items is one array holding every response, written once. */
static void test_batch_of_slow_and_fast_items(void **state)
{
    session *s = *state;
    start(s, "workers = 2");
    send_text(s, "[{\"jsonrpc\":\"2.0\",\"id\":\"slow\",\"method\":\"sleep\","
                 "\"params\":{\"ms\":300}},"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"fast\",\"method\":\"echo\",\"params\":[1]},"
                 "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[\"notification\"]},"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"sum\",\"method\":\"sum\",\"params\":[1,2]},"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"missing\",\"method\":\"no.such.method\"}]\n");
    json_t *batch = next_line(s);
    assert_json(batch, "[{\"jsonrpc\":\"2.0\",\"id\":\"slow\",\"result\":{\"slept_ms\":300}},"
                       "{\"jsonrpc\":\"2.0\",\"id\":\"fast\",\"result\":[1]},"
                       "{\"jsonrpc\":\"2.0\",\"id\":\"sum\",\"result\":3},"
                       "{\"jsonrpc\":\"2.0\",\"id\":\"missing\",\"error\":"
                       "{\"code\":-32601,\"message\":\"Method not found\"}}]");
    json_decref(batch);
    finish(s);
}

/* ---- How rpcd ends --------------------------------------------------------------------- */

/* End of input with calls still running: they finish, are answered, and rpcd exits 0. */
static void test_eof_waits_for_calls_in_flight(void **state)
{
    session *s = *state;
    start(s, "workers = 2");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sleep\",\"params\":{\"ms\":500}}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"sleep\",\"params\":{\"ms\":500}}\n");
    harness_close_stdin(s->rpcd);
    harness_lines lines;
    assert_int_equal(harness_read_all_lines(s->rpcd, LINE_TIMEOUT_MS, &lines), HARNESS_OK);
    assert_int_equal(lines.count, 2);
    assert_false(lines.unterminated);
    bool seen[3] = {false};
    for (size_t i = 0; i < lines.count; i++) {
        json_t *response = json_loads(lines.items[i], 0, NULL);
        assert_non_null(response);
        json_int_t id = json_integer_value(json_object_get(response, "id"));
        assert_true(id == 1 || id == 2);
        assert_false(seen[id]);
        seen[id] = true;
        assert_json(json_object_get(response, "result"), "{\"slept_ms\":500}");
        json_decref(response);
    }
    harness_lines_free(&lines);
    expect_exit(s, HARNESS_TIMEOUT_MS, 0);
    end(s);
}

/* Expects rpcd to exit with status within a bound on a wait of since (now_ms()): no waiting out
 * a call. */
static void expect_exit_soon(session *s, long long since, int status)
{
    expect_exit(s, HARNESS_TIMEOUT_MS, status);
    long long elapsed = now_ms() - since;
    if (elapsed >= HARNESS_TIMEOUT_MS)
        print_error("rpcd took %lld ms to exit\n", elapsed);
    assert_true(elapsed < HARNESS_TIMEOUT_MS);
}

/* A 60 s call under way, the end of input sent, and rpcd waiting for that call. */
static void long_call_after_end_of_input(session *s)
{
    start_sleep_and_wait_for_progress(s, "long", 600000);
    harness_close_stdin(s->rpcd);
    assert_int_equal(harness_wait_for_stderr(s->rpcd, "end of input: waiting", LINE_TIMEOUT_MS),
                     HARNESS_OK);
}

/*
 * A stop signal cancels a call that checks: sleep returns RPCD_ERR_CANCELLED, answered with
 * -32800, and rpcd exits 0 long before the 60 s the call asked for.
 */
static void stop_signal_cancels_cooperative_call(session *s, int signal_number)
{
    start(s, "workers = 2\nlog_level = info");
    start_sleep_and_wait_for_progress(s, "long", 600000);
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, signal_number), 0);
    expect_cancelled(s, "long");
    expect_exit_soon(s, sent, 0);
    expect_no_more_output(s);
    char expected[32];
    snprintf(expected, sizeof expected, "signal %d: stopping", signal_number);
    assert_non_null(strstr(harness_stderr(s->rpcd), expected));
    end(s);
}

/*
 * A call cancelled with notifications/cancelled stays unanswered when a stop signal comes before
 * it ran: the stop answers the calls that never ran with -32800, but not one the client asked to
 * hear nothing of. One worker, held by a cooperative sleep, keeps the call queued.
 */
static void test_silent_cancel_stays_silent_at_sigterm(void **state)
{
    session *s = *state;
    start(s, "workers = 1\nlog_level = debug");
    start_sleep_and_wait_for_progress(s, "busy", 600000);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"quiet\",\"method\":\"deferred.hold\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                 "\"params\":{\"requestId\":\"quiet\"}}\n");
    assert_int_equal(
        harness_wait_for_stderr(s->rpcd, "for id \"quiet\": cancelled", LINE_TIMEOUT_MS),
        HARNESS_OK);
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    /* With one worker responses keep request order: a response for "quiet" would follow. */
    expect_cancelled(s, "busy");
    expect_exit_soon(s, sent, 0);
    expect_no_more_output(s);
    end(s);
}

/*
 * The same for a call that runs: held by the fixture, cancelled with notifications/cancelled,
 * then a stop signal; it completes on its own within the grace period, and still nothing is
 * written for it (a stop leaves the handler's own outcome standing only for calls the client did
 * not cancel itself).
 */
static void test_silent_cancel_of_running_call_stays_silent_at_sigterm(void **state)
{
    session *s = *state;
    start(s, "workers = 2\nlog_level = debug");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"quiet\",\"method\":\"deferred.hold\","
                 "\"params\":{\"after_ms\":500}}\n");
    barrier(s, 2, 2);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                 "\"params\":{\"requestId\":\"quiet\"}}\n");
    assert_int_equal(
        harness_wait_for_stderr(s->rpcd, "for id \"quiet\": cancelled", LINE_TIMEOUT_MS),
        HARNESS_OK);
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_exit_soon(s, sent, 0);
    expect_no_more_output(s);
    assert_null(strstr(harness_stderr(s->rpcd), "left unanswered"));
    end(s);
}

static void test_sigterm_cancels_cooperative_call(void **state)
{
    stop_signal_cancels_cooperative_call(*state, SIGTERM);
}

static void test_sigint_behaves_like_sigterm(void **state)
{
    stop_signal_cancels_cooperative_call(*state, SIGINT);
}

/*
 * A stop after the end of input, while rpcd waits for the calls still in flight, cancels them
 * all the same: the 60 s call ends with -32800 and rpcd exits 0 at once, not a minute later.
 */
static void test_sigterm_after_end_of_input(void **state)
{
    session *s = *state;
    start(s, "workers = 2\nlog_level = debug");
    long_call_after_end_of_input(s);
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_cancelled(s, "long");
    expect_exit_soon(s, sent, 0);
    expect_no_more_output(s);
    end(s);
}

/*
 * A stop signal taken on a plugin's own thread instead of the one that reads (the kernel may
 * pick any thread that does not block it): the handler there wakes the reader out of read(), and
 * rpcd stops as it does otherwise.
 */
static void test_sigterm_on_a_plugin_thread(void **state)
{
    session *s = *state;
    start(s, "workers = 2\nlog_level = info");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"thread.completer\"}\n");
    json_t *response = next_response(s);
    json_int_t tid =
        json_integer_value(json_object_get(json_object_get(response, "result"), "tid"));
    json_decref(response);
    assert_true(tid > 0);
    long long sent = now_ms();
    assert_int_equal(syscall(SYS_tgkill, harness_pid(s->rpcd), (pid_t)tid, SIGTERM), 0);
    expect_exit_soon(s, sent, 0);
    assert_non_null(strstr(harness_stderr(s->rpcd), "signal 15: stopping"));
    expect_no_more_output(s);
    end(s);
}

/*
 * A call that ignores the stop is given shutdown_grace_ms, then left unanswered: rpcd exits 0
 * after about the grace period. A call that ended before the signal has its answer.
 */
static void test_sigterm_grace_period_for_stuck_call(void **state)
{
    session *s = *state;
    start(s, "workers = 2\nshutdown_grace_ms = 300");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"early\",\"method\":\"echo\",\"params\":[1]}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"early\",\"result\":[1]}");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"stuck\",\"method\":\"deferred.hold\"}\n");
    barrier(s, 2, 2);

    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_exit(s, HARNESS_TIMEOUT_MS, 0);
    long long elapsed = now_ms() - sent;
    if (elapsed < 250 || elapsed >= HARNESS_TIMEOUT_MS)
        print_error("rpcd exited %lld ms after SIGTERM, grace period 300 ms\n", elapsed);
    assert_true(elapsed >= 250);
    assert_true(elapsed < HARNESS_TIMEOUT_MS);
    expect_no_more_output(s);
    end(s);
}

/* shutdown_grace_ms = 0: a stop does not wait for a call that ignores it, rpcd exits 0 at once. */
static void test_sigterm_without_grace_period(void **state)
{
    session *s = *state;
    start(s, "workers = 2\nshutdown_grace_ms = 0");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"stuck\",\"method\":\"deferred.hold\"}\n");
    barrier(s, 2, 2);
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_exit(s, HARNESS_TIMEOUT_MS, 0);
    long long elapsed = now_ms() - sent;
    if (elapsed >= HARNESS_TIMEOUT_MS)
        print_error("rpcd exited %lld ms after SIGTERM, grace period 0 ms\n", elapsed);
    assert_true(elapsed < HARNESS_TIMEOUT_MS);
    end(s);
}

/*
 * A request that was read while rpcd waited for room (max_in_flight) when the stop came still
 * gets its one answer: -32800, never silence.
 */
static void test_sigterm_while_reading_is_paused(void **state)
{
    session *s = *state;
    start(s, "workers = 2\nmax_in_flight = 1\nshutdown_grace_ms = 300\nlog_level = debug");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"stuck\",\"method\":\"deferred.hold\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"waiting\",\"method\":\"echo\",\"params\":[1]}\n");
    assert_int_equal(harness_wait_for_stderr(s->rpcd, "reading paused", LINE_TIMEOUT_MS),
                     HARNESS_OK);
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_cancelled(s, "waiting");
    expect_exit(s, HARNESS_TIMEOUT_MS, 0);
    /* The held call either runs (and, stuck past the grace period, gets no answer) or was still
     * queued when the stop came (and never starts: -32800). Nothing else may come. */
    char *rest = NULL;
    assert_int_equal(harness_read_all(s->rpcd, LINE_TIMEOUT_MS, &rest, NULL), HARNESS_OK);
    if (rest[0]) {
        json_t *stuck = json_loads(rest, 0, NULL);
        assert_non_null(stuck);
        assert_string_equal(json_string_value(json_object_get(stuck, "id")), "stuck");
        assert_error(stuck, -32800, "Request cancelled");
        json_decref(stuck);
    }
    free(rest);
    end(s);
}

/* A second SIGTERM while the first waits for a stuck call ends rpcd at once, status 143. */
static void test_second_sigterm_exits_at_once(void **state)
{
    session *s = *state;
    start(s, "workers = 2\nshutdown_grace_ms = 600000\nlog_level = info");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"stuck\",\"method\":\"deferred.hold\"}\n");
    barrier(s, 2, 2);
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    /* Standard signals do not queue: the second must come after the first has been taken. */
    int seen = harness_wait_for_stderr(s->rpcd, "signal 15: stopping", LINE_TIMEOUT_MS);
    if (seen != HARNESS_OK)
        print_error("no log line about the first SIGTERM; stderr:\n%s\n", harness_stderr(s->rpcd));
    assert_int_equal(seen, HARNESS_OK);
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_exit(s, HARNESS_TIMEOUT_MS, 128 + SIGTERM);
    assert_true(now_ms() - sent < HARNESS_TIMEOUT_MS);
    end(s);
}

/*
 * The client closes rpcd's stdout and keeps writing: rpcd must not die of SIGPIPE, but notice
 * EPIPE, say so on stderr, and exit 74.
 */
static void test_closed_stdout_exits_74(void **state)
{
    session *s = *state;
    start(s, "workers = 2");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"echo\",\"params\":[0]}\n");
    json_t *response = next_response(s);
    json_decref(response);
    harness_close_stdout(s->rpcd);
    /* Once rpcd has gone its stdin is closed too, and a write fails: that ends the sending. */
    for (int i = 1; i <= 200; i++) {
        char line[128];
        snprintf(line, sizeof line,
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"echo\",\"params\":[%d]}\n", i, i);
        if (harness_write_text(s->rpcd, line, LINE_TIMEOUT_MS) != HARNESS_OK)
            break;
    }
    harness_exit status;
    assert_int_equal(harness_wait(s->rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    check_sanitizers(s);
    if (!status.exited || status.code != 74)
        print_error("rpcd ended with %s, expected exit 74; stderr:\n%s\n",
                    harness_exit_describe(&status), harness_stderr(s->rpcd));
    assert_false(status.signal == SIGPIPE);
    assert_true(status.exited);
    assert_int_equal(status.code, 74);
    assert_non_null(strstr(harness_stderr(s->rpcd), "the client closed its end"));
    end(s);
}

/*
 * The client closes rpcd's stdout while a worker's call runs, and then sends nothing, keeping
 * stdin open: the worker's failed write must get the reader out of its wait for input, and rpcd
 * must exit 74 instead of waiting for a line that never comes.
 */
static void test_closed_stdout_while_the_reader_waits(void **state)
{
    session *s = *state;
    start(s, "workers = 2");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sleep\",\"params\":{\"ms\":300}}\n");
    harness_close_stdout(s->rpcd);
    long long closed = now_ms();
    expect_exit(s, HARNESS_TIMEOUT_MS, 74);
    assert_true(now_ms() - closed < HARNESS_TIMEOUT_MS);
    assert_non_null(strstr(harness_stderr(s->rpcd), "the client closed its end"));
    end(s);
}

/*
 * The client closes rpcd's stdout after the end of input, while rpcd waits for a long call: the
 * next progress notification fails to go out, and rpcd cancels the call and exits 74 at once
 * instead of waiting the minute the call asked for.
 */
static void test_closed_stdout_after_end_of_input(void **state)
{
    session *s = *state;
    start(s, "workers = 2\nlog_level = debug");
    long_call_after_end_of_input(s);
    harness_close_stdout(s->rpcd);
    long long closed = now_ms();
    expect_exit_soon(s, closed, 74);
    assert_non_null(strstr(harness_stderr(s->rpcd), "the client closed its end"));
    end(s);
}

/* ---- Handlers that never return ------------------------------------------------------ */

/* Starts rpcd as start() does, with the stuck fixture loaded too. */
static void start_with_stuck(session *s, const char *settings)
{
    const char *fixture = harness_env("RPCD_FIXTURE_STUCK");
    assert_non_null(fixture);
    char *text;
    assert_true(asprintf(&text, "%s\n[plugin stuck]\npath = %s\n", settings, fixture) >= 0);
    start(s, text);
    free(text);
}

/* Waits until count calls are blocked inside the stuck fixture (asked on the reading thread). */
static void wait_for_blocked(session *s, int count)
{
    for (int round = 0; round < 1000; round++) {
        send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"count-%d\",\"method\":\"stuck.count\"}\n",
                    round);
        json_t *response = next_response(s);
        json_int_t blocked =
            json_integer_value(json_object_get(json_object_get(response, "result"), "blocked"));
        json_decref(response);
        if (blocked >= count)
            return;
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    fail_msg("the stuck calls never started");
}

/*
 * Gives rpcd time to take what was just sent, where nothing can be asked to prove it did (its
 * reading thread or its one worker is held): 300 ms, scaled (valgrind and sanitizers are slower).
 */
static void pause_for_the_reader(void)
{
    int ms = test_time_ms(300);
    struct timespec pause = {ms / 1000, ms % 1000 * 1000000L};
    nanosleep(&pause, NULL);
}

/* Asserts that response is -32800 "Request cancelled" with a data.detail saying why. */
static void assert_cancelled_at_stop(const json_t *response)
{
    assert_error(response, -32800, "Request cancelled");
    const char *detail = detail_of(response);
    if (!strstr(detail, "stopped before the call ran"))
        print_json("unexpected detail in", response);
    assert_non_null(strstr(detail, "stopped before the call ran"));
}

/* Asserts that stderr names a call still running: its plugin, method and id. */
static void assert_named_as_stuck(session *s, const char *method, const char *id)
{
    char expected[256];
    snprintf(expected, sizeof expected, "plugin stuck, method %s, id \"%s\"", method, id);
    const char *err = harness_stderr(s->rpcd);
    if (!strstr(err, expected))
        print_error("no line naming %s in stderr:\n%s\n", expected, err);
    assert_non_null(strstr(err, expected));
}

/*
 * Both workers held by handlers that never return, and more calls waiting for them (alone and in
 * a batch): at SIGTERM, every call that never ran is answered at once (-32800 with a detail), the
 * batch as one array, and after the grace period rpcd exits 0, naming the calls that held the
 * pool (plugin, method, id) on stderr.
 */
static void test_sigterm_answers_calls_a_stuck_pool_never_ran(void **state)
{
    session *s = *state;
    start_with_stuck(s, "workers = 2\nshutdown_grace_ms = 300\nlog_level = info");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"hold-1\",\"method\":\"stuck.block\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"hold-2\",\"method\":\"stuck.block\"}\n");
    wait_for_blocked(s, 2);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"queued-1\",\"method\":\"thread.worker\"}\n"
                 "[{\"jsonrpc\":\"2.0\",\"id\":\"item-1\",\"method\":\"thread.worker\"},"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"item-2\",\"method\":\"thread.worker\"}]\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"queued-2\",\"method\":\"thread.worker\"}\n");
    /* They wait for a worker (nothing comes back); a quick call after them proves they were
     * read, since the reader takes lines in order. Then the stop. */
    wait_for_blocked(s, 2);
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    json_t *responses = collect_responses(s, 3);
    assert_cancelled_at_stop(response_for(responses, "queued-1"));
    assert_cancelled_at_stop(response_for(responses, "queued-2"));
    json_t *batch = NULL;
    size_t index;
    json_t *response;
    json_array_foreach(responses, index, response)
    {
        if (json_is_array(response))
            batch = response;
    }
    assert_non_null(batch);
    assert_int_equal(json_array_size(batch), 2);
    assert_cancelled_at_stop(response_for(batch, "item-1"));
    assert_cancelled_at_stop(response_for(batch, "item-2"));
    json_decref(responses);
    expect_exit_soon(s, sent, 0);
    expect_no_more_output(s);
    assert_named_as_stuck(s, "stuck.block", "hold-1");
    assert_named_as_stuck(s, "stuck.block", "hold-2");
    end(s);
}

/*
 * A quick handler that never returns holds the reading thread: SIGTERM's grace period ends all
 * the same. What was answered before stays answered, a call waiting for a (stuck) worker is
 * answered -32800, the blocked calls are named, and rpcd exits 0 at about the grace period,
 * without a second signal.
 */
static void test_grace_period_ends_while_a_quick_handler_blocks(void **state)
{
    session *s = *state;
    start_with_stuck(s, "workers = 2\nshutdown_grace_ms = 300\nlog_level = info");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"hold-1\",\"method\":\"stuck.block\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"hold-2\",\"method\":\"stuck.block\"}\n");
    wait_for_blocked(s, 2);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"early\",\"method\":\"echo\",\"params\":[1]}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"early\",\"result\":[1]}");
    /* One write: the worker call is queued (both workers are held), then the reader blocks. */
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"queued\",\"method\":\"thread.worker\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"quick\",\"method\":\"stuck.quick\"}\n");
    /* The count cannot be asked any more (the reader is held): give the reader a moment. */
    pause_for_the_reader();
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    json_t *response = next_response(s);
    assert_string_equal(json_string_value(json_object_get(response, "id")), "queued");
    assert_cancelled_at_stop(response);
    json_decref(response);
    expect_exit_soon(s, sent, 0);
    long long elapsed = now_ms() - sent;
    if (elapsed < 250)
        print_error("rpcd exited %lld ms after SIGTERM, grace period 300 ms\n", elapsed);
    assert_true(elapsed >= 250);
    expect_no_more_output(s);
    assert_named_as_stuck(s, "stuck.quick", "quick");
    assert_named_as_stuck(s, "stuck.block", "hold-1");
    end(s);
}

/*
 * End of input while both workers are held and a call waits: rpcd goes on waiting (a call may
 * just be slow), but after the grace period it names the calls that hold the pool; a SIGTERM
 * then answers the waiting call and ends rpcd.
 */
static void test_end_of_input_names_a_stuck_pool(void **state)
{
    session *s = *state;
    start_with_stuck(s, "workers = 2\nshutdown_grace_ms = 300\nlog_level = info");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"hold-1\",\"method\":\"stuck.block\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"hold-2\",\"method\":\"stuck.block\"}\n");
    wait_for_blocked(s, 2);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"queued\",\"method\":\"thread.worker\"}\n");
    harness_close_stdin(s->rpcd);
    assert_int_equal(harness_wait_for_stderr(s->rpcd,
                                             "end of input: still waiting for: plugin stuck, "
                                             "method stuck.block, id \"hold-2\"",
                                             LINE_TIMEOUT_MS),
                     HARNESS_OK);
    assert_named_as_stuck(s, "stuck.block", "hold-1");
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    json_t *response = next_response(s);
    assert_string_equal(json_string_value(json_object_get(response, "id")), "queued");
    assert_cancelled_at_stop(response);
    json_decref(response);
    expect_exit_soon(s, sent, 0);
    expect_no_more_output(s);
    end(s);
}

/*
 * The client goes (closes rpcd's stdin, then its stdout) while a call that never returns and
 * never writes holds a worker, in the process or isolated: no write fails to tell rpcd, so it
 * must see the closed output itself, give the call its grace period, name it, and exit 74
 * instead of waiting for good.
 */
static void client_gone_while_a_call_never_ends(session *s, const char *settings)
{
    start_with_stuck(s, settings);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"hold\",\"method\":\"stuck.block\"}\n");
    wait_for_blocked(s, 1);
    harness_close_stdin(s->rpcd);
    assert_int_equal(harness_wait_for_stderr(s->rpcd, "end of input: waiting", LINE_TIMEOUT_MS),
                     HARNESS_OK);
    harness_close_stdout(s->rpcd);
    long long closed = now_ms();
    expect_exit_soon(s, closed, 74);
    const char *err = harness_stderr(s->rpcd);
    assert_non_null(strstr(err, "the client closed its end of the output, nobody to answer"));
    assert_non_null(strstr(err, "left unanswered: plugin stuck, method stuck.block, id \"hold\""));
    end(s);
}

static void test_client_gone_while_a_call_never_ends(void **state)
{
    client_gone_while_a_call_never_ends(*state,
                                        "workers = 2\nshutdown_grace_ms = 300\nlog_level = debug");
}

static void test_client_gone_while_an_isolated_call_never_ends(void **state)
{
    client_gone_while_a_call_never_ends(
        *state, "workers = 2\nshutdown_grace_ms = 300\nlog_level = debug\nisolation = process");
}

/*
 * While serving: both workers held and calls waiting behind them for longer than the grace
 * period, no call ending: the next call that must wait makes rpcd name the calls that hold the
 * pool.
 */
static void test_a_held_pool_is_named_while_serving(void **state)
{
    session *s = *state;
    start_with_stuck(s, "workers = 2\nshutdown_grace_ms = 300\nlog_level = info");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"hold-1\",\"method\":\"stuck.block\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"hold-2\",\"method\":\"stuck.block\"}\n");
    wait_for_blocked(s, 2);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"queued-1\",\"method\":\"thread.worker\"}\n");
    wait_for_blocked(s, 2); /* read */
    struct timespec pause = {0, 500 * 1000 * 1000};
    nanosleep(&pause, NULL);
    assert_null(strstr(harness_stderr(s->rpcd), "the pool is held by"));
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"queued-2\",\"method\":\"thread.worker\"}\n");
    assert_int_equal(harness_wait_for_stderr(s->rpcd,
                                             "the pool is held by: plugin stuck, method "
                                             "stuck.block, id \"hold-2\"",
                                             LINE_TIMEOUT_MS),
                     HARNESS_OK);
    assert_named_as_stuck(s, "stuck.block", "hold-1");
    assert_non_null(strstr(harness_stderr(s->rpcd), "every worker (2) held with no call ending"));
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    json_t *responses = collect_responses(s, 2);
    assert_cancelled_at_stop(response_for(responses, "queued-1"));
    assert_cancelled_at_stop(response_for(responses, "queued-2"));
    json_decref(responses);
    expect_exit(s, HARNESS_TIMEOUT_MS, 0);
    end(s);
}

/*
 * With workers = 1 responses keep request order, and the one worker is held for good: at
 * SIGTERM the calls behind it are answered, in order, once the grace period has given up on it.
 */
static void test_sigterm_answers_calls_behind_a_stuck_call_in_order(void **state)
{
    session *s = *state;
    start_with_stuck(s, "workers = 1\nshutdown_grace_ms = 300\nlog_level = info");
    /* Serving, and the one worker free. */
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"ready\",\"method\":\"echo\",\"params\":[0]}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"ready\",\"result\":[0]}");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"hold\",\"method\":\"stuck.block\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"first\",\"method\":\"thread.worker\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"second\",\"method\":\"echo\",\"params\":[2]}\n");
    /* Nothing can be asked (the one worker is held, and takes every call): give it a moment. */
    pause_for_the_reader();
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    json_t *response = next_response(s);
    assert_string_equal(json_string_value(json_object_get(response, "id")), "first");
    assert_cancelled_at_stop(response);
    json_decref(response);
    response = next_response(s);
    assert_string_equal(json_string_value(json_object_get(response, "id")), "second");
    assert_cancelled_at_stop(response);
    json_decref(response);
    expect_exit_soon(s, sent, 0);
    expect_no_more_output(s);
    assert_named_as_stuck(s, "stuck.block", "hold");
    end(s);
}

/* The same with nothing else in flight: only the quick handler holds rpcd. */
static void test_grace_period_ends_while_the_only_call_blocks_the_reader(void **state)
{
    session *s = *state;
    start_with_stuck(s, "workers = 2\nshutdown_grace_ms = 300\nlog_level = info");
    wait_for_blocked(s, 0); /* serving */
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"quick\",\"method\":\"stuck.quick\"}\n");
    pause_for_the_reader();
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_exit_soon(s, sent, 0);
    assert_true(now_ms() - sent >= 250);
    expect_no_more_output(s);
    assert_named_as_stuck(s, "stuck.quick", "quick");
    end(s);
}

/*
 * shutdown_grace_ms = 0 with a quick handler holding the reading thread: the stop still ends
 * rpcd (its timer is armed for the shortest time, never for none, which would disarm it).
 */
static void test_no_grace_period_while_the_only_call_blocks_the_reader(void **state)
{
    session *s = *state;
    start_with_stuck(s, "workers = 2\nshutdown_grace_ms = 0\nlog_level = info");
    wait_for_blocked(s, 0); /* serving */
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"quick\",\"method\":\"stuck.quick\"}\n");
    pause_for_the_reader();
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_exit_soon(s, sent, 0);
    expect_no_more_output(s);
    end(s);
}

/*
 * A plugin whose init takes the grace period's signal is named, and the period moves to another
 * signal: a quick handler that holds the reading thread still cannot keep the stop from ending.
 */
static void test_grace_signal_taken_by_a_plugin_is_moved_from(void **state)
{
    session *s = *state;
    const char *taker = harness_env("RPCD_FIXTURE_SIGNAL_TAKER");
    assert_non_null(taker);
    char *settings;
    assert_true(asprintf(&settings,
                         "workers = 2\nshutdown_grace_ms = 300\nlog_level = info\n"
                         "[plugin signal_taker]\npath = %s\ntake = grace\n",
                         taker) >= 0);
    start_with_stuck(s, settings);
    free(settings);
    wait_for_blocked(s, 0); /* serving */
    const char *err = harness_stderr(s->rpcd);
    if (!strstr(err, "which rpcd used to end a stop's grace period; rpcd uses signal"))
        print_error("no warning about the grace period's signal in stderr:\n%s\n", err);
    assert_non_null(strstr(err, "which rpcd used to end a stop's grace period; rpcd uses signal"));
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"quick\",\"method\":\"stuck.quick\"}\n");
    pause_for_the_reader();
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_exit_soon(s, sent, 0);
    assert_true(now_ms() - sent >= 250);
    assert_named_as_stuck(s, "stuck.quick", "quick");
    end(s);
}

/* ---- No worker can start ------------------------------------------------------------- */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

/*
 * rpcd where no thread can start: a default thread stack of 1 GiB (from RLIMIT_STACK) in an
 * address space of 700 MB, as a tight RLIMIT_AS or a pids cgroup leaves it. Not under valgrind or
 * a sanitizer, whose own mappings do not fit such a limit.
 */
static bool start_without_threads(session *s, const char *settings)
{
#ifdef UNDER_SANITIZER
    (void)s, (void)settings;
    return false;
#else
    static const char prlimit[] = "/usr/bin/prlimit"; /* util-linux, in every Debian */
    if (harness_wrapped() || access(prlimit, X_OK) != 0)
        return false;
    char *plugins = harness_bundled_plugin_sections();
    assert_non_null(plugins);
    char *text;
    assert_true(asprintf(&text, "[rpcd]\n%s\n%s\n", settings, plugins) >= 0);
    s->dir = harness_temp_dir();
    assert_non_null(s->dir);
    s->config = harness_write_file(s->dir, "rpcd.conf", text);
    assert_non_null(s->config);
    free(text);
    free(plugins);
    harness_argv args;
    memset(&args, 0, sizeof args);
    harness_argv_push(&args, prlimit);
    harness_argv_push(&args, "--stack=1073741824");
    harness_argv_push(&args, "--as=700000000");
    harness_argv_push(&args, harness_env("RPCD_BINARY"));
    harness_argv_push(&args, "-c");
    harness_argv_push(&args, s->config);
    s->rpcd = harness_start(args.argv);
    assert_non_null(s->rpcd);
    return true;
#endif
}

/*
 * No worker can start, and calls come several at once (a batch, then pipelined lines): every
 * start fails, and every call still runs, on the reading thread, and is answered; the end of
 * input then ends rpcd. The warning says so, once: a failed start is not tried again.
 */
static void test_no_worker_can_start(void **state)
{
    session *s = *state;
    if (!start_without_threads(s, "workers = 4"))
        skip();
    send_text(s, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sleep\",\"params\":{\"ms\":1}},"
                 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"sleep\",\"params\":{\"ms\":1}},"
                 "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"sleep\",\"params\":{\"ms\":1}}]\n");
    expect_response(s, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"slept_ms\":1}},"
                       "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"slept_ms\":1}},"
                       "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"slept_ms\":1}}]");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"sleep\",\"params\":{\"ms\":1}}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"sleep\",\"params\":{\"ms\":1}}\n");
    json_t *responses = collect_responses(s, 2);
    assert_json(json_object_get(response_for_number(responses, 4), "result"), "{\"slept_ms\":1}");
    assert_json(json_object_get(response_for_number(responses, 5), "result"), "{\"slept_ms\":1}");
    json_decref(responses);
    harness_close_stdin(s->rpcd);
    expect_no_more_output(s);
    expect_exit(s, HARNESS_TIMEOUT_MS, 0);
    const char *err = harness_stderr(s->rpcd);
    const char *first = strstr(err, "cannot start worker");
    assert_non_null(first);
    assert_null(strstr(first + 1, "cannot start worker"));
    end(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lsp_cancel_answers_request_cancelled, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_mcp_cancel_sends_no_response, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_cancel_of_unknown_or_finished_id_is_ignored,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_cancel_does_not_cut_a_call_short, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_cancel_of_queued_call_skips_handler, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_cancel_lsp_then_mcp_answers_once, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_cancel_mcp_then_lsp_answers_once, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_silent_cancel_stays_silent_at_sigterm, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_silent_cancel_of_running_call_stays_silent_at_sigterm,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_lsp_cancel_of_tool_call_is_request_cancelled,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_id_in_flight, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_id_free_again_as_soon_as_answered, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_fast_call_overtakes_slow_one, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_one_worker_answers_in_request_order, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_serialized_method_never_overlaps, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_calls_and_batch_items_run_concurrently, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_ten_thousand_deferred_calls, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_deferred_complete_twice, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_max_in_flight_stops_the_reader, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_quick_methods_run_on_the_reader, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_max_in_flight_bytes_holds_long_lines, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_batch_longer_than_max_in_flight, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_max_batch, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_ten_thousand_pipelined_requests, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_batch_of_slow_and_fast_items, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_eof_waits_for_calls_in_flight, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_cancels_cooperative_call, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_sigint_behaves_like_sigterm, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_while_reading_is_paused, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_after_end_of_input, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_on_a_plugin_thread, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_grace_period_for_stuck_call, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_without_grace_period, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_second_sigterm_exits_at_once, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_closed_stdout_exits_74, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_closed_stdout_while_the_reader_waits, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_no_worker_can_start, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_answers_calls_a_stuck_pool_never_ran,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_no_grace_period_while_the_only_call_blocks_the_reader,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_grace_period_ends_while_a_quick_handler_blocks,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_end_of_input_names_a_stuck_pool, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_client_gone_while_a_call_never_ends, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_client_gone_while_an_isolated_call_never_ends,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_a_held_pool_is_named_while_serving, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_answers_calls_behind_a_stuck_call_in_order,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(
            test_grace_period_ends_while_the_only_call_blocks_the_reader, session_setup,
            session_teardown),
        cmocka_unit_test_setup_teardown(test_grace_signal_taken_by_a_plugin_is_moved_from,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_closed_stdout_after_end_of_input, session_setup,
                                        session_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
