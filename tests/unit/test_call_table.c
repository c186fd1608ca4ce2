/* SPDX-License-Identifier: MIT */
/*
 * The call table: ids in flight are found, refused twice, forgotten when their call ends, and
 * the table grows past its first size; the reader's waits for room and for bytes block while
 * the limits are reached and wake when a call ends or the waits are interrupted; cancellation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "call_fixture.h"
#include "calls/call_internal.h"
#include "base/lock.h"
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids_found_refused_and_forgotten),
        cmocka_unit_test(test_table_grows),
        cmocka_unit_test(test_wait_for_room_blocks_and_wakes),
        cmocka_unit_test(test_wait_for_bytes_blocks_and_wakes),
        cmocka_unit_test(test_wait_for_bytes_at_the_bound),
        cmocka_unit_test(test_cancel_styles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
