/* SPDX-License-Identifier: MIT */
/*
 * The scheduler: a serialized method's calls run one at a time in the order they started, with
 * workers to spare; a quick call runs on the thread that starts it; a group holds calls back
 * until it ends; and a stop answers the calls still waiting for their serialized method.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "call_fixture.h"
#include "test_time.h"

#include <time.h>

static void sleep_ms(int ms)
{
    struct timespec pause = {0, ms * 1000000L};
    nanosleep(&pause, NULL);
}

enum { SERIAL_CALLS = 20 };

static struct {
    pthread_mutex_t lock;
    int order[SERIAL_CALLS];
    size_t count;
    atomic_int running;
    atomic_int most_running;
} runs = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Notes its params (the call's number) and how many calls of it run at once. */
static int handle_serial(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)call, (void)length, (void)data;
    int now = atomic_fetch_add(&runs.running, 1) + 1;
    int most = atomic_load(&runs.most_running);
    while (now > most && !atomic_compare_exchange_weak(&runs.most_running, &most, now))
        ;
    sleep_ms(1); /* long enough for another worker to come in, were it let */
    pthread_mutex_lock(&runs.lock);
    runs.order[runs.count++] = atoi(params + 1);
    pthread_mutex_unlock(&runs.lock);
    atomic_fetch_sub(&runs.running, 1);
    return RPCD_OK;
}

/* Four workers, twenty calls of a serialized method: one at a time, in the order started. */
static void test_serialized_calls_run_one_at_a_time_in_order(void **state)
{
    (void)state;
    fixture f;
    fixture_with(&f, "serial", handle_serial, RPCD_METHOD_SERIALIZED,
                 (call_settings){.limits.workers = 4, .limits.max_in_flight = 64});
    for (int i = 0; i < SERIAL_CALLS; i++) {
        char id[16], params[16];
        snprintf(id, sizeof id, "%d", i);
        snprintf(params, sizeof params, "[%d]", i);
        assert_int_equal(start_call(&f, "serial", id, params, NULL), CALL_STARTED);
    }
    assert_int_equal(call_wait_idle(f.calls, test_time_ms(10000)), 0);
    assert_int_equal(runs.count, SERIAL_CALLS);
    for (int i = 0; i < SERIAL_CALLS; i++)
        assert_int_equal(runs.order[i], i);
    assert_int_equal(atomic_load(&runs.most_running), 1);
    written(&f);
    assert_int_equal(f.written.lines, SERIAL_CALLS);
    fixture_close(&f);
}

static _Atomic pthread_t ran_on;

static int handle_where(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)call, (void)params, (void)length, (void)data;
    atomic_store(&ran_on, pthread_self());
    return RPCD_OK;
}

/* A quick call runs on the starting thread; one with long params, or not quick, on a worker. */
static void test_quick_calls_run_on_the_starting_thread(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f);
    fixture_add(&f, "quick", handle_where, RPCD_METHOD_QUICK, NULL);
    fixture_add(&f, "slow", handle_where, 0, NULL);
    fixture_start(&f, (call_settings){.limits.workers = 2, .limits.max_in_flight = 16});

    assert_int_equal(start_call(&f, "quick", "1", NULL, NULL), CALL_STARTED);
    assert_true(pthread_equal(atomic_load(&ran_on), pthread_self()));
    assert_int_equal(call_wait_idle(f.calls, test_time_ms(10000)), 0);

    assert_int_equal(start_call(&f, "slow", "2", NULL, NULL), CALL_STARTED);
    assert_int_equal(call_wait_idle(f.calls, test_time_ms(10000)), 0);
    assert_false(pthread_equal(atomic_load(&ran_on), pthread_self()));

    size_t length = 64 * 1024 + 8;
    char *params = malloc(length + 1);
    assert_non_null(params);
    params[0] = '[';
    params[1] = '"';
    memset(params + 2, 'x', length - 4);
    params[length - 2] = '"';
    params[length - 1] = ']';
    params[length] = '\0';
    atomic_store(&ran_on, pthread_self());
    assert_int_equal(start_call(&f, "quick", "3", params, NULL), CALL_STARTED);
    assert_int_equal(call_wait_idle(f.calls, test_time_ms(10000)), 0);
    assert_false(pthread_equal(atomic_load(&ran_on), pthread_self()));
    free(params);
    fixture_close(&f);
}

static atomic_int ran;

static int handle_count(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)call, (void)params, (void)length, (void)data;
    atomic_fetch_add(&ran, 1);
    return RPCD_OK;
}

/* Calls started inside a group wait for its end; nested groups hand over at the outermost. */
static void test_group_holds_calls_until_its_end(void **state)
{
    (void)state;
    fixture f;
    fixture_with(&f, "count", handle_count, 0,
                 (call_settings){.limits.workers = 2, .limits.max_in_flight = 16});
    atomic_store(&ran, 0);
    call_begin_group(f.calls);
    call_begin_group(f.calls);
    for (int i = 0; i < 3; i++) {
        char id[16];
        snprintf(id, sizeof id, "%d", i);
        assert_int_equal(start_call(&f, "count", id, NULL, NULL), CALL_STARTED);
    }
    call_end_group(f.calls);
    sleep_ms(50);
    assert_int_equal(atomic_load(&ran), 0);
    call_end_group(f.calls);
    assert_int_equal(call_wait_idle(f.calls, test_time_ms(10000)), 0);
    assert_int_equal(atomic_load(&ran), 3);
    fixture_close(&f);
}

/* A stop answers the calls waiting behind a running serialized call; that call runs on. */
static void test_stop_answers_calls_waiting_for_their_turn(void **state)
{
    (void)state;
    fixture f;
    fixture_with(&f, "held", handle_keep, RPCD_METHOD_SERIALIZED,
                 (call_settings){.limits.workers = 0, .limits.max_in_flight = 16});
    assert_int_equal(start_call(&f, "held", "1", NULL, NULL), CALL_STARTED);
    assert_int_equal(start_call(&f, "held", "2", NULL, NULL), CALL_STARTED);
    assert_int_equal(start_call(&f, "held", "3", NULL, NULL), CALL_STARTED);
    assert_int_equal(atomic_load(&kept_count), 1); /* 2 and 3 wait for the first */
    call_end_unstarted(f.calls);
    const char *text = written(&f);
    assert_int_equal(f.written.lines, 2);
    assert_non_null(strstr(text, "\"id\":2,\"error\":{\"code\":-32800,"));
    assert_non_null(strstr(text, "\"id\":3,\"error\":{\"code\":-32800,"));
    assert_non_null(strstr(text, "rpcd stopped before the call ran"));
    assert_int_equal(atomic_load(&kept_count), 1); /* neither ran */
    assert_int_equal(host.call_complete(kept[0], RPCD_OK), RPCD_OK);
    assert_int_equal(call_wait_idle(f.calls, 0), 0);
    assert_non_null(strstr(written(&f), "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}\n"));
    /* The turn is free again: a new call runs at once. */
    assert_int_equal(start_call(&f, "held", "4", NULL, NULL), CALL_STARTED);
    assert_int_equal(atomic_load(&kept_count), 2);
    assert_int_equal(host.call_complete(kept[1], RPCD_OK), RPCD_OK);
    fixture_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serialized_calls_run_one_at_a_time_in_order),
        cmocka_unit_test(test_quick_calls_run_on_the_starting_thread),
        cmocka_unit_test(test_group_holds_calls_until_its_end),
        cmocka_unit_test(test_stop_answers_calls_waiting_for_their_turn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
