/* SPDX-License-Identifier: MIT */
/*
 * Where and in which order calls run, through the real binary: response order with one worker
 * and with several, serialized and parallel methods, deferred completion, quick methods on the
 * reader, back-pressure (max_in_flight, max_in_flight_bytes), batch limits, volume; how many
 * calls run at once, and serialized methods, in a plugin host too.
 */
#include "concurrency_session.h"

#include <jansson.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* ---- Order ----------------------------------------------------------------------------- */

/* With two workers a fast call is not stuck behind a slow one. */
static void test_fast_call_overtakes_slow_one(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2");
    send_text(
        s, "{\"jsonrpc\":\"2.0\",\"id\":\"slow\",\"method\":\"sleep\",\"params\":{\"ms\":2000}}\n"
           "{\"jsonrpc\":\"2.0\",\"id\":\"fast\",\"method\":\"echo\",\"params\":[\"quick\"]}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"fast\",\"result\":[\"quick\"]}");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"slow\",\"result\":{\"slept_ms\":2000}}");
    session_finish(s);
}

/* With one worker every answer keeps request order, the reader's own errors included. */
static void test_one_worker_answers_in_request_order(void **state)
{
    session *s = *state;
    session_start(s, "workers = 1");
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
    session_finish(s);
}

/* ---- Serialized and parallel methods --------------------------------------------------- */

/*
 * A method registered RPCD_METHOD_SERIALIZED never has two calls running, whatever the pool, in
 * rpcd's process and in a plugin host alike.
 */
static void serialized_method_never_overlaps(session *s, const char *settings)
{
    enum { CALLS = 8 };
    session_start(s, settings);
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
    session_finish(s);
}

static void test_serialized_method_never_overlaps(void **state)
{
    serialized_method_never_overlaps(*state, "workers = 4");
}

static void test_serialized_method_never_overlaps_isolated(void **state)
{
    serialized_method_never_overlaps(*state, "workers = 4\nisolation = process");
}

/*
 * Ordinary methods run at the same time: three parallel.meet calls only return met:true when
 * all three are inside at once, as separate lines and as the items of one batch, whose single
 * array is written once its last item has ended. In rpcd's process and in a plugin host alike,
 * whose own pool has as many workers.
 */
static void calls_and_batch_items_run_concurrently(session *s, const char *settings)
{
    session_start(s, settings);
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
    session_finish(s);
}

static void test_calls_and_batch_items_run_concurrently(void **state)
{
    calls_and_batch_items_run_concurrently(*state, "workers = 3");
}

static void test_calls_and_batch_items_run_concurrently_isolated(void **state)
{
    calls_and_batch_items_run_concurrently(*state, "workers = 3\nisolation = process");
}

/*
 * workers bounds how many handlers run at once (rpcd.conf(5)), in rpcd's process and in a
 * plugin host alike: of six calls sent together to two workers, none ever found more than two
 * running, the others waited their turn, and every one was answered.
 */
static void at_most_workers_at_once(session *s, const char *settings)
{
    enum { CALLS = 6 };
    session_start(s, settings);
    for (int i = 0; i < CALLS; i++)
        send_format(s,
                    "{\"jsonrpc\":\"2.0\",\"id\":\"peak-%d\",\"method\":\"parallel.peak\","
                    "\"params\":{\"ms\":200}}\n",
                    i);
    json_t *responses = collect_responses(s, CALLS);
    for (int i = 0; i < CALLS; i++) {
        char id[32];
        snprintf(id, sizeof id, "peak-%d", i);
        json_t *result = json_object_get(response_for(responses, id), "result");
        json_int_t peak = json_integer_value(json_object_get(result, "peak"));
        if (peak < 1 || peak > 2)
            print_json("expected at most two calls at once, got", result);
        assert_true(peak >= 1 && peak <= 2);
    }
    json_decref(responses);
    session_finish(s);
}

static void test_at_most_workers_at_once(void **state)
{
    at_most_workers_at_once(*state, "workers = 2");
}

static void test_at_most_workers_at_once_isolated(void **state)
{
    at_most_workers_at_once(*state, "workers = 2\nisolation = process");
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
    session_start(s, "workers = 2\nmax_in_flight = 20000");
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
    session_finish(s);
}

/* call_complete before the handler returned RPCD_DEFERRED counts; a second one is refused. */
static void test_deferred_complete_twice(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"deferred.twice\"}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":1,"
                       "\"result\":{\"first\":0,\"second\":-10,\"deferred\":-10}}");
    session_finish(s);
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

    session_start(s, "workers = 2");
    assert_true(ran_on_reader(s, "thread.quick", "[]"));
    assert_false(ran_on_reader(s, "thread.worker", "[]"));
    assert_false(ran_on_reader(s, "thread.quick", large));
    session_finish(s);

    session_start(s, "workers = 1");
    assert_false(ran_on_reader(s, "thread.quick", "[]"));
    session_finish(s);
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

    session_start(s, "workers = 2\nmax_in_flight = 2");
    send_text(s, two_holds_then_echo);
    three_response_ids(s, ids, keep);
    if (strncmp(ids[0], "hold-", 5) != 0)
        print_error("with max_in_flight = 2 the echo came first: %s, %s, %s\n", ids[0], ids[1],
                    ids[2]);
    assert_true(strncmp(ids[0], "hold-", 5) == 0);
    for (int i = 0; i < 3; i++)
        json_decref(keep[i]);
    session_finish(s);

    session_start(s, "workers = 2\nmax_in_flight = 3");
    send_text(s, two_holds_then_echo);
    three_response_ids(s, ids, keep);
    assert_string_equal(ids[0], "echo");
    for (int i = 0; i < 3; i++)
        json_decref(keep[i]);
    session_finish(s);
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
    session_start(s, "workers = 2\nmax_in_flight_bytes = 100000");
    send_padded_hold_then_echo(s, 200000, 200000);
    char *first = first_of_two_ids(s);
    assert_string_equal(first, "hold");
    free(first);
    session_finish(s);

    session_start(s, "workers = 2\nmax_in_flight_bytes = 100000");
    send_padded_hold_then_echo(s, 200000, 10);
    first = first_of_two_ids(s);
    assert_string_equal(first, "echo");
    free(first);
    session_finish(s);

    session_start(s, "workers = 2\nmax_in_flight_bytes = 1000000");
    send_padded_hold_then_echo(s, 200000, 200000);
    first = first_of_two_ids(s);
    assert_string_equal(first, "echo");
    free(first);
    session_finish(s);
}

/*
 * A batch far longer than max_in_flight: its items start in groups, and a group's held items
 * count in flight, so the reader must let them run before it waits for room. All are answered.
 */
static void test_batch_longer_than_max_in_flight(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2\nmax_in_flight = 2");
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
    session_finish(s);
}

/* A batch longer than max_batch is one -32600, not an array; the next lines are served. */
static void test_max_batch(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2\nmax_batch = 5");
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
    session_finish(s);
}

/* ---- Volume ---------------------------------------------------------------------------- */

/* 10,000 pipelined requests over eight workers: every id answered exactly once. */
static void test_ten_thousand_pipelined_requests(void **state)
{
    session *s = *state;
    enum { COUNT = 10000 };
    session_start(s, "workers = 8");
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
    session_finish(s);
}

/* A batch of slow and fast items is one array holding every response, written once. */
static void test_batch_of_slow_and_fast_items(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2");
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
    session_finish(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fast_call_overtakes_slow_one, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_one_worker_answers_in_request_order, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_serialized_method_never_overlaps, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_calls_and_batch_items_run_concurrently, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_calls_and_batch_items_run_concurrently_isolated,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_serialized_method_never_overlaps_isolated,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_at_most_workers_at_once, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_at_most_workers_at_once_isolated, session_setup,
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
