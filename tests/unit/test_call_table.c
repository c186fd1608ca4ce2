/* SPDX-License-Identifier: MIT */
/*
 * The call table: ids in flight are found, refused twice, forgotten when their call ends, and
 * the table grows past its first size; the reader's waits for room and for bytes block while
 * the limits are reached and wake when a call ends or the waits are interrupted; cancellation;
 * the counting of calls that end on the reading thread, deferred until it waits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "call_fixture.h"
#include "calls/call_internal.h"
#include "base/lock.h"
#include "base/metrics.h"
#include "test_time.h"

#include <time.h>

static void sleep_ms(int ms)
{
    struct timespec pause = {0, ms * 1000000L};
    nanosleep(&pause, NULL);
}

/* An id in flight is found (a cancel reaches it), refused twice, and forgotten at its end. */
static void test_ids_found_refused_and_forgotten(void **state)
{
    (void)state;
    fixture f;
    fixture_with(&f, "keep", handle_keep, 0, (call_settings){.limits.max_in_flight = 16});

    assert_int_equal(start_call(&f, "keep", "\"a\"", NULL, NULL), CALL_STARTED);
    assert_int_equal(call_cancel(f.calls, (js_span){"\"a\"", 3}, CALL_CANCEL_FLAG), 1);
    assert_int_equal(call_cancel(f.calls, (js_span){"\"b\"", 3}, CALL_CANCEL_FLAG), 0);
    assert_int_equal(start_call(&f, "keep", "\"a\"", NULL, NULL), CALL_DUPLICATE_ID);
    /* An id null is never tracked: two may be in flight. */
    assert_int_equal(start_call(&f, "keep", "null", NULL, NULL), CALL_STARTED);
    assert_int_equal(start_call(&f, "keep", "null", NULL, NULL), CALL_STARTED);
    assert_int_equal(atomic_load(&kept_count), 3);

    assert_int_equal(host.call_complete(kept[0], RPCD_OK), RPCD_OK);
    assert_int_equal(call_cancel(f.calls, (js_span){"\"a\"", 3}, CALL_CANCEL_FLAG), 0);
    assert_int_equal(start_call(&f, "keep", "\"a\"", NULL, NULL), CALL_STARTED);
    for (size_t i = 1; i < 4; i++)
        assert_int_equal(host.call_complete(kept[i], RPCD_OK), RPCD_OK);
    assert_int_equal(call_wait_idle(f.calls, 0), 0);
    fixture_close(&f);
}

enum { MANY = 300 };

/* Past its first 64 buckets the table grows, and every id stays findable. */
static void test_table_grows(void **state)
{
    (void)state;
    fixture f;
    fixture_with(&f, "keep", handle_keep, 0, (call_settings){.limits.max_in_flight = MANY});
    size_t first_size = f.calls->id_bucket_count;
    char ids[MANY][16];
    for (int i = 0; i < MANY; i++) {
        snprintf(ids[i], sizeof ids[i], "%d", i);
        assert_int_equal(start_call(&f, "keep", ids[i], NULL, NULL), CALL_STARTED);
    }
    assert_true(f.calls->id_bucket_count > first_size);
    assert_true(f.calls->id_bucket_count >= MANY);
    for (int i = 0; i < MANY; i++) {
        lock_take(&f.calls->lock);
        uint32_t index = table_find_id(f.calls, ids[i], strlen(ids[i]));
        lock_release(&f.calls->lock);
        assert_int_not_equal(index, NO_SLOT);
        assert_memory_equal(slot_at(index)->id.data, ids[i], strlen(ids[i]));
    }
    for (int i = 0; i < MANY; i++)
        host.call_complete(kept[i], RPCD_OK);
    assert_int_equal(f.calls->tracked_count, 0);
    assert_int_equal(call_wait_idle(f.calls, 0), 0);
    fixture_close(&f);
}

typedef struct waiter {
    pthread_t thread;
    fixture *f;
    bool bytes; /* call_wait_for_bytes, else call_wait_for_room */
    atomic_bool returned;
    int status;
} waiter;

static void *wait_thread(void *data)
{
    waiter *w = data;
    if (w->bytes)
        call_wait_for_bytes(w->f->calls);
    else
        w->status = call_wait_for_room(w->f->calls);
    atomic_store(&w->returned, true);
    return NULL;
}

static void wait_returned(waiter *w)
{
    for (int i = 0; i < test_time_ms(1000) / 2 && !atomic_load(&w->returned); i++)
        sleep_ms(2);
    assert_true(atomic_load(&w->returned));
    pthread_join(w->thread, NULL);
}

/* With max_in_flight calls in flight the wait for room blocks, and a call's end wakes it. */
static void test_wait_for_room_blocks_and_wakes(void **state)
{
    (void)state;
    fixture f;
    fixture_with(&f, "keep", handle_keep, 0, (call_settings){.limits.max_in_flight = 2});
    assert_int_equal(start_call(&f, "keep", "1", NULL, NULL), CALL_STARTED);
    assert_int_equal(call_wait_for_room(f.calls), 0); /* one left */
    assert_int_equal(start_call(&f, "keep", "2", NULL, NULL), CALL_STARTED);

    waiter w = {.f = &f};
    assert_int_equal(pthread_create(&w.thread, NULL, wait_thread, &w), 0);
    sleep_ms(50);
    assert_false(atomic_load(&w.returned));
    assert_int_equal(host.call_complete(kept[0], RPCD_OK), RPCD_OK);
    wait_returned(&w);
    assert_int_equal(w.status, 0);

    /* Interrupted, it returns -1 at once, and from then on. */
    assert_int_equal(start_call(&f, "keep", "3", NULL, NULL), CALL_STARTED);
    waiter v = {.f = &f};
    assert_int_equal(pthread_create(&v.thread, NULL, wait_thread, &v), 0);
    sleep_ms(20);
    assert_false(atomic_load(&v.returned));
    call_interrupt_waits(f.calls);
    wait_returned(&v);
    assert_int_equal(v.status, -1);
    assert_int_equal(call_wait_for_room(f.calls), -1);

    host.call_complete(kept[1], RPCD_OK);
    host.call_complete(kept[2], RPCD_OK);
    assert_int_equal(call_wait_idle(f.calls, test_time_ms(1000)), 0);
    fixture_close(&f);
}

/* The params held by the calls in flight count against max_in_flight_bytes. */
static void test_wait_for_bytes_blocks_and_wakes(void **state)
{
    (void)state;
    fixture f;
    fixture_with(&f, "keep", handle_keep, 0,
                 (call_settings){.limits.max_in_flight = 16, .limits.max_in_flight_bytes = 16});
    call_wait_for_bytes(f.calls); /* nothing held: returns */
    assert_int_equal(start_call(&f, "keep", "1", "[\"0123456789abcdef\"]", NULL), CALL_STARTED);
    waiter w = {.f = &f, .bytes = true};
    assert_int_equal(pthread_create(&w.thread, NULL, wait_thread, &w), 0);
    sleep_ms(50);
    assert_false(atomic_load(&w.returned));
    assert_int_equal(host.call_complete(kept[0], RPCD_OK), RPCD_OK);
    wait_returned(&w);
    assert_int_equal(atomic_load(&f.calls->in_flight_bytes), 0);
    fixture_close(&f);
}

/* Held bytes exactly at max_in_flight_bytes already pause reading: the bound is what may be
 * held. */
static void test_wait_for_bytes_at_the_bound(void **state)
{
    (void)state;
    static const char params[] = "[\"0123456789abcdef\"]";
    fixture f;
    fixture_with(&f, "keep", handle_keep, 0,
                 (call_settings){.limits.max_in_flight = 16,
                                 .limits.max_in_flight_bytes = sizeof params - 1});
    assert_int_equal(start_call(&f, "keep", "1", params, NULL), CALL_STARTED);
    assert_int_equal(atomic_load(&f.calls->in_flight_bytes), sizeof params - 1);
    waiter w = {.f = &f, .bytes = true};
    assert_int_equal(pthread_create(&w.thread, NULL, wait_thread, &w), 0);
    sleep_ms(50);
    assert_false(atomic_load(&w.returned));
    assert_int_equal(host.call_complete(kept[0], RPCD_OK), RPCD_OK);
    wait_returned(&w);
    fixture_close(&f);
}

/* A cancel the client asked for ends the call with -32800; a silent one with nothing. */
static void test_cancel_styles(void **state)
{
    (void)state;
    fixture f;
    fixture_with(&f, "keep", handle_keep, 0, (call_settings){.limits.max_in_flight = 16});
    assert_int_equal(start_call(&f, "keep", "1", NULL, NULL), CALL_STARTED);
    assert_int_equal(start_call(&f, "keep", "2", NULL, NULL), CALL_STARTED);
    assert_int_equal(start_call(&f, "keep", "3", NULL, NULL), CALL_STARTED);
    assert_int_equal(call_cancel(f.calls, (js_span){"1", 1}, CALL_CANCEL_RESPOND), 1);
    assert_int_equal(call_cancel(f.calls, (js_span){"2", 1}, CALL_CANCEL_SILENT), 1);
    assert_int_equal(host.call_is_cancelled(kept[2]), 0);
    call_cancel_all(f.calls);
    assert_int_equal(host.call_is_cancelled(kept[0]), 1);
    assert_int_equal(host.call_is_cancelled(kept[2]), 1);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(host.call_complete(kept[i], RPCD_OK), RPCD_OK);
    const char *text = written(&f);
    assert_int_equal(f.written.lines, 2);
    assert_non_null(strstr(text, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32800,"));
    assert_null(strstr(text, "\"id\":2"));
    /* Cancelled by a stop, the handler's own outcome stands. */
    assert_non_null(strstr(text, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":null}\n"));
    fixture_close(&f);
}

/* The value of a metric's sample line (its name and labels, up to the value), or -1. */
static double metric_value(const char *sample)
{
    buffer text = BUFFER_INIT;
    assert_int_equal(mx_write_openmetrics(&text), 0);
    assert_int_equal(buf_append_char(&text, '\0'), 0);
    double value = -1;
    size_t length = strlen(sample);
    for (const char *at = text.data; at; at = strchr(at, '\n'), at = at ? at + 1 : NULL)
        if (strncmp(at, sample, length) == 0 && at[length] == ' ')
            value = strtod(at + length + 1, NULL);
    buf_free(&text);
    return value;
}

static long long metric(const char *sample)
{
    return (long long)metric_value(sample);
}

static int handle_refuse(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)call, (void)params, (void)length, (void)data;
    return RPCD_ERR_INVALID_PARAMS;
}

enum { ROUNDS = 100 }; /* two methods alternating: 200 groups, past the 64 kept */

/* Starts ROUNDS calls of "echo" with params [1] and of "refuse", alternating. */
static void alternate_calls(fixture *f)
{
    for (int i = 0; i < ROUNDS; i++) {
        char id[16];
        snprintf(id, sizeof id, "%d", 2 * i);
        assert_int_equal(start_call(f, "echo", id, "[1]", NULL), CALL_STARTED);
        snprintf(id, sizeof id, "%d", 2 * i + 1);
        assert_int_equal(start_call(f, "refuse", id, "{}", NULL), CALL_STARTED);
    }
}

static const char echo_calls[] = "rpcd_calls_total{method=\"echo\",plugin=\"testplugin\"}";
static const char refuse_calls[] = "rpcd_calls_total{method=\"refuse\",plugin=\"testplugin\"}";

/* Calls that end on a thread that does not read are counted as they end. */
static void *count_elsewhere(void *context)
{
    alternate_calls(context);
    assert_int_equal(metric(echo_calls), ROUNDS);
    assert_int_equal(metric(refuse_calls), ROUNDS);
    return NULL;
}

/*
 * On the reading thread, a burst of calls is counted when the reader next waits (the responses
 * leave then), every call exactly once, with its bytes and its error; calls of one method that
 * ended alike share a group, and when the groups run out they are counted at once rather than
 * lost. On any other thread a call is counted as it ends.
 */
static void test_counted_when_the_reader_waits(void **state)
{
    (void)state;
    mx_enable(true);
    fixture f;
    fixture_open(&f);
    fixture_add(&f, "echo", handle_echo, 0, NULL);
    fixture_add(&f, "refuse", handle_refuse, 0, NULL);
    fixture_add(&f, "echo2", handle_echo, 0, NULL);
    fixture_start(&f, (call_settings){.limits.max_in_flight = 16});

    pthread_t other;
    assert_int_equal(pthread_create(&other, NULL, count_elsewhere, &f), 0);
    assert_int_equal(pthread_join(other, NULL), 0);

    call_note_read(f.calls);
    for (int i = 0; i < ROUNDS; i++) /* one group, however long: none counted yet */
        assert_int_equal(start_call(&f, "echo", "\"g\"", "[1]", NULL), CALL_STARTED);
    assert_int_equal(metric(echo_calls), ROUNDS);
    /* Each call of the group took at least the pause: the sum of latencies counts each. */
    static const char echo_seconds[] =
        "rpcd_call_duration_seconds_sum{method=\"echo\",plugin=\"testplugin\"}";
    double seconds_before = metric_value(echo_seconds);
    sleep_ms(2);
    call_count_deferred(f.calls);
    assert_int_equal(metric(echo_calls), 2 * ROUNDS);
    assert_true(metric_value(echo_seconds) - seconds_before >= ROUNDS * 0.002);
    assert_int_equal(metric("rpcd_call_bytes_in_total{method=\"echo\",plugin=\"testplugin\"}"),
                     3 * 2 * ROUNDS);

    /* Two methods that end alike, alternating: each counted as itself. */
    call_note_read(f.calls);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(start_call(&f, "echo2", "1", "[1]", NULL), CALL_STARTED);
        assert_int_equal(start_call(&f, "echo", "2", "[1]", NULL), CALL_STARTED);
    }
    call_count_deferred(f.calls);
    assert_int_equal(metric("rpcd_calls_total{method=\"echo2\",plugin=\"testplugin\"}"), 5);
    assert_int_equal(metric(echo_calls), 2 * ROUNDS + 5);

    call_note_read(f.calls);
    alternate_calls(&f);
    /* 200 groups: three times the 64 kept were counted when the groups ran out. */
    long long counted = metric(echo_calls) + metric(refuse_calls) - 3 * ROUNDS - 5;
    assert_int_equal(counted, 3 * 64);
    call_count_deferred(f.calls);
    assert_int_equal(metric(echo_calls), 3 * ROUNDS + 5);
    assert_int_equal(metric(refuse_calls), 2 * ROUNDS);
    assert_int_equal(
        metric("rpcd_call_errors_total{method=\"refuse\",plugin=\"testplugin\",code=\"-32602\"}"),
        2 * ROUNDS);
    assert_int_equal(metric("rpcd_call_bytes_in_total{method=\"refuse\",plugin=\"testplugin\"}"),
                     2 * 2 * ROUNDS);
    call_count_deferred(f.calls); /* nothing twice */
    assert_int_equal(metric(echo_calls), 3 * ROUNDS + 5);
    assert_int_equal(
        metric("rpcd_call_duration_seconds_count{method=\"echo\",plugin=\"testplugin\"}"),
        3 * ROUNDS + 5);

    fixture_close(&f);
    mx_enable(false);
    mx_release();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids_found_refused_and_forgotten),
        cmocka_unit_test(test_table_grows),
        cmocka_unit_test(test_wait_for_room_blocks_and_wakes),
        cmocka_unit_test(test_wait_for_bytes_blocks_and_wakes),
        cmocka_unit_test(test_wait_for_bytes_at_the_bound),
        cmocka_unit_test(test_cancel_styles),
        cmocka_unit_test(test_counted_when_the_reader_waits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
