/* SPDX-License-Identifier: MIT */
/*
 * Deadlines: a call past its method's timeout_ms (or the less its request asks in
 * _meta.timeout_ms) is cancelled and answered once, at the deadline, while its handler keeps its
 * worker; whatever the handler does after writes nothing, and its slot is let go when it returns.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "call_fixture.h"
#include "calls/call_internal.h"
#include "base/clock.h"
#include "log_capture.h"
#include "test_time.h"

#include <errno.h>
#include <jansson.h>
#include <time.h>

/* pthread_create fails while this is set (the test links with --wrap=pthread_create). */
static atomic_bool threads_fail;

int __real_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                          void *argument);
int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                          void *argument);
int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                          void *argument)
{
    if (atomic_load(&threads_fail))
        return EAGAIN;
    return __real_pthread_create(thread, attr, start, argument);
}

static void sleep_ms(int ms)
{
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
}

/* Generous, and scaled: the plain build runs these under valgrind, on a shared machine. */
#define WAIT_MOST_MS test_time_ms(10000)

/* Waits until the output holds at least lines lines. Returns how long it waited, in ms. */
static long long wait_for_lines(fixture *f, size_t lines)
{
    long long start = clock_now_ms();
    for (;;) {
        written(f);
        pthread_mutex_lock(&f->written.lock);
        size_t now = f->written.lines;
        pthread_mutex_unlock(&f->written.lock);
        if (now >= lines)
            return clock_now_ms() - start;
        assert_true(clock_now_ms() - start < WAIT_MOST_MS);
        sleep_ms(2);
    }
}

/* Waits until count handle_keep handlers have run. */
static void wait_kept(size_t count)
{
    long long start = clock_now_ms();
    while (atomic_load(&kept_count) < count) {
        assert_true(clock_now_ms() - start < WAIT_MOST_MS);
        sleep_ms(1);
    }
}

static size_t lines_of(fixture *f)
{
    written(f);
    pthread_mutex_lock(&f->written.lock);
    size_t lines = f->written.lines;
    pthread_mutex_unlock(&f->written.lock);
    return lines;
}

/* Line number (from 0) of the output, parsed (new reference). */
static json_t *line_at(fixture *f, size_t number)
{
    const char *text = written(f);
    for (size_t i = 0; i < number; i++) {
        text = strchr(text, '\n');
        assert_non_null(text);
        text++;
    }
    json_error_t error;
    json_t *line = json_loadb(text, strcspn(text, "\n"), 0, &error);
    assert_non_null(line);
    return line;
}

/* Asserts that line is the timed-out error of a deadline of ms, for id. */
static void assert_timed_out(const json_t *line, json_int_t id, json_int_t ms)
{
    assert_int_equal(json_integer_value(json_object_get(line, "id")), id);
    const json_t *error = json_object_get(line, "error");
    assert_int_equal(json_integer_value(json_object_get(error, "code")), -32603);
    const json_t *data = json_object_get(error, "data");
    assert_string_equal(json_string_value(json_object_get(data, "exception")), "timed out");
    const json_t *inner = json_object_get(data, "data");
    assert_true(json_is_true(json_object_get(inner, "timed_out")));
    assert_int_equal(json_integer_value(json_object_get(inner, "timeout_ms")), ms);
}

static void set_timeout(fixture *f, const char *name, size_t ms)
{
    reg_set_timeout(f->methods, name, ms);
}

/*
 * A deferred call past its deadline: answered once, at the deadline, cancelled; what its plugin
 * does after writes nothing; it stays in flight until call_complete, which still ends it; its id
 * is free as soon as it is answered.
 */
static void test_deferred_call_answered_at_its_deadline(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f);
    fixture_add(&f, "keep", handle_keep, 0, NULL);
    fixture_add(&f, "echo", handle_echo, 0, NULL);
    set_timeout(&f, "keep", 300);
    fixture_start(&f, (call_settings){.limits.workers = 2, .limits.max_in_flight = 16});

    long long start = clock_now_ms();
    assert_int_equal(start_call(&f, "keep", "1", "{\"_meta\":{\"progressToken\":1}}", NULL),
                     CALL_STARTED);
    wait_kept(1);
    wait_for_lines(&f, 1);
    long long took = clock_now_ms() - start;
    assert_true(took >= 300);
    assert_true(took < 300 + WAIT_MOST_MS);
    json_t *line = line_at(&f, 0);
    assert_timed_out(line, 1, 300);
    json_decref(line);

    rpcd_call *call = kept[0];
    assert_int_equal(host.call_is_cancelled(call), 1);
    assert_int_equal(host.call_result(call, "[1]", 3), RPCD_ERR_STALE);
    assert_int_equal(host.call_notify(call, "note", "[]", 2), RPCD_ERR_STALE);
    assert_int_equal(host.call_progress(call, 1, 2, NULL), RPCD_ERR_STALE);
    assert_int_equal(host.call_fail(call, RPCD_ERR_INTERNAL, "late", NULL, 0), RPCD_ERR_STALE);
    /* Still in flight (it holds what it holds), but answered. */
    assert_int_equal(call_wait_idle(f.calls, 0), -1);
    assert_int_equal(call_wait_answered(f.calls, 0), 0);
    /* The id is free again: the client has its answer. */
    assert_int_equal(start_call(&f, "echo", "1", "[2]", NULL), CALL_STARTED);
    wait_for_lines(&f, 2);

    assert_int_equal(host.call_complete(call, RPCD_OK), RPCD_OK);
    assert_int_equal(call_wait_idle(f.calls, WAIT_MOST_MS), 0);
    assert_int_equal(host.call_complete(call, RPCD_OK), RPCD_ERR_STALE);
    sleep_ms(100);
    assert_int_equal(lines_of(&f), 2);
    assert_non_null(strstr(written(&f), "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[2]}"));
    fixture_close(&f);
}

static atomic_bool let_go;
static atomic_int saw_cancelled, late_result_status;

/* Holds its worker until let_go, then answers: what a handler past its deadline does. */
static int handle_hold(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    while (!atomic_load(&let_go))
        sleep_ms(2);
    atomic_store(&saw_cancelled, host.call_is_cancelled(call));
    atomic_store(&late_result_status, host.call_result(call, "\"late\"", 6));
    return RPCD_OK;
}

/*
 * A synchronous handler past its deadline: answered at the deadline while it runs, other calls
 * served meanwhile on the other worker, its late result dropped; rpcd's stop counts it in flight
 * until it returns.
 */
static void test_running_handler_keeps_its_worker(void **state)
{
    (void)state;
    atomic_store(&let_go, false);
    fixture f;
    fixture_open(&f);
    fixture_add(&f, "hold", handle_hold, 0, NULL);
    fixture_add(&f, "echo", handle_echo, 0, NULL);
    set_timeout(&f, "hold", 300);
    fixture_start(&f, (call_settings){.limits.workers = 2, .limits.max_in_flight = 16});

    assert_int_equal(start_call(&f, "hold", "7", NULL, NULL), CALL_STARTED);
    wait_for_lines(&f, 1);
    json_t *line = line_at(&f, 0);
    assert_timed_out(line, 7, 300);
    json_decref(line);
    assert_int_equal(start_call(&f, "echo", "8", "[8]", NULL), CALL_STARTED);
    wait_for_lines(&f, 2);
    assert_int_equal(call_wait_idle(f.calls, 0), -1);

    atomic_store(&let_go, true);
    assert_int_equal(call_wait_idle(f.calls, WAIT_MOST_MS), 0);
    assert_int_equal(atomic_load(&saw_cancelled), 1);
    assert_int_equal(atomic_load(&late_result_status), RPCD_ERR_STALE);
    assert_int_equal(lines_of(&f), 2);
    fixture_close(&f);
}

/* A call that ends before its deadline is answered as usual, and nothing comes at the deadline. */
static void test_call_within_its_deadline(void **state)
{
    (void)state;
    fixture f;
    fixture_with(&f, "echo", handle_echo, 0,
                 (call_settings){.limits.workers = 2, .limits.max_in_flight = 16});
    set_timeout(&f, "echo", 500);
    assert_int_equal(start_call(&f, "echo", "1", "[1]", NULL), CALL_STARTED);
    assert_int_equal(call_wait_idle(f.calls, WAIT_MOST_MS), 0);
    sleep_ms(700);
    assert_int_equal(lines_of(&f), 1);
    assert_non_null(strstr(written(&f), "\"result\":[1]"));
    assert_int_equal(f.calls->heap_count, 0);
    fixture_close(&f);
}

/*
 * A request may ask for less than its method's deadline in _meta.timeout_ms, never more; a
 * method without one takes what is asked; a value that is not a whole number of milliseconds
 * from 1 to a day is refused before anything runs. Deadlines come due in their order, whatever
 * the order of the calls.
 */
static void test_request_asks_for_less(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f);
    fixture_add(&f, "keep", handle_keep, 0, NULL);
    fixture_add(&f, "free", handle_keep, 0, NULL);
    set_timeout(&f, "keep", 900);
    fixture_start(&f, (call_settings){.limits.workers = 2, .limits.max_in_flight = 16});

    static const char *const bad[] = {"0", "-5", "1.5", "\"20\"", "86400001", "1e3", "null"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char params[64];
        snprintf(params, sizeof params, "{\"_meta\":{\"timeout_ms\":%s}}", bad[i]);
        assert_int_equal(start_call(&f, "keep", "9", params, NULL), CALL_BAD_DEADLINE);
    }
    assert_int_equal(atomic_load(&kept_count), 0);

    assert_int_equal(start_call(&f, "keep", "1", "{\"_meta\":{\"timeout_ms\":100000}}", NULL),
                     CALL_STARTED);
    assert_int_equal(start_call(&f, "free", "2", "{\"_meta\":{\"timeout_ms\":600}}", NULL),
                     CALL_STARTED);
    assert_int_equal(start_call(&f, "keep", "3", "{\"_meta\":{\"timeout_ms\":300}}", NULL),
                     CALL_STARTED);
    /* Given twice, it asks nothing: the method's own stands. */
    assert_int_equal(
        start_call(&f, "keep", "4", "{\"_meta\":{\"timeout_ms\":1,\"timeout_ms\":2}}", NULL),
        CALL_STARTED);
    wait_kept(4);
    wait_for_lines(&f, 4);
    json_t *line = line_at(&f, 0);
    assert_timed_out(line, 3, 300);
    json_decref(line);
    line = line_at(&f, 1);
    assert_timed_out(line, 2, 600);
    json_decref(line);
    for (size_t i = 2; i < 4; i++) {
        line = line_at(&f, i);
        assert_int_equal(
            json_integer_value(json_object_get(
                json_object_get(json_object_get(json_object_get(line, "error"), "data"), "data"),
                "timeout_ms")),
            900);
        json_decref(line);
    }
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(host.call_complete(kept[i], RPCD_OK), RPCD_OK);
    assert_int_equal(call_wait_idle(f.calls, WAIT_MOST_MS), 0);
    assert_int_equal(lines_of(&f), 4);
    fixture_close(&f);
}

static atomic_int hooked;

static void count_hook(rpcd_call *call, void *user_data)
{
    (void)call, (void)user_data;
    atomic_fetch_add(&hooked, 1);
}

/* A method with a cancel hook (an isolated plugin's proxy) is told at the deadline. */
static void test_cancel_hook_told_at_the_deadline(void **state)
{
    (void)state;
    atomic_store(&hooked, 0);
    fixture f;
    fixture_with(&f, "keep", handle_keep, 0,
                 (call_settings){.limits.workers = 2, .limits.max_in_flight = 16});
    reg_set_cancel_hook(f.methods, "keep", count_hook);
    set_timeout(&f, "keep", 300);
    assert_int_equal(start_call(&f, "keep", "1", NULL, NULL), CALL_STARTED);
    wait_kept(1);
    wait_for_lines(&f, 1);
    for (int i = 0; i < WAIT_MOST_MS / 2 && atomic_load(&hooked) == 0; i++)
        sleep_ms(2);
    assert_int_equal(atomic_load(&hooked), 1);
    assert_int_equal(host.call_complete(kept[0], RPCD_OK), RPCD_OK);
    assert_int_equal(call_wait_idle(f.calls, WAIT_MOST_MS), 0);
    fixture_close(&f);
}

/* A batch's array goes out when its items are answered: at an item's deadline, not its end. */
static void test_batch_answered_at_the_deadline(void **state)
{
    (void)state;
    fixture f;
    fixture_open(&f);
    fixture_add(&f, "keep", handle_keep, 0, NULL);
    fixture_add(&f, "echo", handle_echo, 0, NULL);
    set_timeout(&f, "keep", 300);
    fixture_start(&f, (call_settings){.limits.workers = 2, .limits.max_in_flight = 16});
    call_batch *batch;
    assert_int_equal(call_batch_new(f.calls, 0, &batch), 0);
    assert_int_equal(start_call(&f, "keep", "1", NULL, batch), CALL_STARTED);
    assert_int_equal(start_call(&f, "echo", "2", "[2]", batch), CALL_STARTED);
    call_batch_release(batch);
    wait_kept(1);
    wait_for_lines(&f, 1);
    json_error_t error;
    json_t *array = json_loads(written(&f), 0, &error);
    assert_true(json_is_array(array));
    assert_int_equal(json_array_size(array), 2);
    json_decref(array);
    assert_int_equal(host.call_complete(kept[0], RPCD_OK), RPCD_OK);
    assert_int_equal(call_wait_idle(f.calls, WAIT_MOST_MS), 0);
    assert_int_equal(lines_of(&f), 1);
    fixture_close(&f);
}

static atomic_int held_ran;

static int handle_count(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)call, (void)params, (void)length, (void)data;
    atomic_fetch_add(&held_ran, 1);
    return RPCD_OK;
}

/* A call still waiting for a worker at its deadline is answered then, and never runs. */
static void test_queued_call_answered_and_never_run(void **state)
{
    (void)state;
    atomic_store(&let_go, false);
    atomic_store(&held_ran, 0);
    fixture f;
    fixture_open(&f);
    fixture_add(&f, "hold", handle_hold, 0, NULL);
    fixture_add(&f, "count", handle_count, 0, NULL);
    set_timeout(&f, "count", 30);
    fixture_start(&f, (call_settings){.limits.workers = 1, .limits.max_in_flight = 16});
    assert_int_equal(start_call(&f, "hold", "1", NULL, NULL), CALL_STARTED);
    assert_int_equal(start_call(&f, "count", "2", NULL, NULL), CALL_STARTED);
    wait_for_lines(&f, 1);
    json_t *line = line_at(&f, 0);
    assert_timed_out(line, 2, 30);
    json_decref(line);
    atomic_store(&let_go, true);
    assert_int_equal(call_wait_idle(f.calls, WAIT_MOST_MS), 0);
    assert_int_equal(atomic_load(&held_ran), 0);
    assert_int_equal(lines_of(&f), 2);
    fixture_close(&f);
}

/* A client that cancelled gets the answer it asked for at the deadline: -32800, or nothing. */
static void test_cancelled_call_at_the_deadline(void **state)
{
    (void)state;
    fixture f;
    fixture_with(&f, "keep", handle_keep, 0,
                 (call_settings){.limits.workers = 2, .limits.max_in_flight = 16});
    set_timeout(&f, "keep", 400);
    assert_int_equal(start_call(&f, "keep", "1", NULL, NULL), CALL_STARTED);
    assert_int_equal(start_call(&f, "keep", "2", NULL, NULL), CALL_STARTED);
    /* Cancelled once running: a call cancelled before it runs ends at once. */
    wait_kept(2);
    assert_int_equal(call_cancel(f.calls, (js_span){"1", 1}, CALL_CANCEL_RESPOND), 1);
    assert_int_equal(call_cancel(f.calls, (js_span){"2", 1}, CALL_CANCEL_SILENT), 1);
    wait_for_lines(&f, 1);
    sleep_ms(200);
    assert_int_equal(lines_of(&f), 1);
    assert_non_null(strstr(written(&f), "\"id\":1,\"error\":{\"code\":-32800"));
    assert_int_equal(call_wait_answered(f.calls, WAIT_MOST_MS), 0);
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(host.call_complete(kept[i], RPCD_OK), RPCD_OK);
    assert_int_equal(call_wait_idle(f.calls, WAIT_MOST_MS), 0);
    assert_int_equal(lines_of(&f), 1);
    fixture_close(&f);
}

/* Many calls with deadlines: each answered exactly once, the heap empty at the end. */
static void test_many_deadlines_each_answered_once(void **state)
{
    (void)state;
    enum { COUNT = 200 };
    fixture f;
    fixture_with(&f, "keep", handle_keep, 0,
                 (call_settings){.limits.workers = 2, .limits.max_in_flight = COUNT});
    for (int i = 0; i < COUNT; i++) {
        char id[16], params[64];
        snprintf(id, sizeof id, "%d", i);
        snprintf(params, sizeof params, "{\"_meta\":{\"timeout_ms\":%d}}", 1 + (i * 37) % 60);
        assert_int_equal(start_call(&f, "keep", id, params, NULL), CALL_STARTED);
    }
    /* Some end before their deadline, some after it; some were answered before they ran. */
    for (size_t i = 0; i < atomic_load(&kept_count); i += 2)
        host.call_complete(kept[i], RPCD_OK);
    assert_int_equal(call_wait_answered(f.calls, WAIT_MOST_MS), 0);
    long long start = clock_now_ms();
    do {
        assert_true(clock_now_ms() - start < WAIT_MOST_MS);
        for (size_t i = 0; i < atomic_load(&kept_count); i++)
            host.call_complete(kept[i], RPCD_OK);
    } while (call_wait_idle(f.calls, 10) != 0);
    assert_int_equal(lines_of(&f), COUNT);
    int seen[COUNT] = {0};
    for (size_t i = 0; i < COUNT; i++) {
        json_t *line = line_at(&f, i);
        seen[json_integer_value(json_object_get(line, "id"))]++;
        json_decref(line);
    }
    for (int i = 0; i < COUNT; i++)
        assert_int_equal(seen[i], 1);
    assert_int_equal(f.calls->heap_count, 0);
    fixture_close(&f);
}

/* Without a thread to keep deadlines, a call goes without one, and the log says why. */
static void test_no_watcher_no_deadline(void **state)
{
    (void)state;
    fixture f;
    /* No workers: the only thread a call could start is the watcher. */
    fixture_with(&f, "keep", handle_keep, 0,
                 (call_settings){.limits.workers = 0, .limits.max_in_flight = 16});
    set_timeout(&f, "keep", 20);
    log_capture capture;
    log_capture_start(&capture, LOG_WARNING);
    atomic_store(&threads_fail, true);
    assert_int_equal(start_call(&f, "keep", "1", NULL, NULL), CALL_STARTED);
    atomic_store(&threads_fail, false);
    const char *logged = log_capture_end(&capture);
    assert_logged(logged, "cannot start the thread that keeps deadlines");
    sleep_ms(100);
    assert_int_equal(lines_of(&f), 0);
    assert_int_equal(host.call_is_cancelled(kept[0]), 0);
    assert_int_equal(host.call_complete(kept[0], RPCD_OK), RPCD_OK);
    assert_int_equal(lines_of(&f), 1);
    assert_non_null(strstr(written(&f), "\"result\":null"));
    fixture_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deferred_call_answered_at_its_deadline),
        cmocka_unit_test(test_running_handler_keeps_its_worker),
        cmocka_unit_test(test_call_within_its_deadline),
        cmocka_unit_test(test_request_asks_for_less),
        cmocka_unit_test(test_cancel_hook_told_at_the_deadline),
        cmocka_unit_test(test_batch_answered_at_the_deadline),
        cmocka_unit_test(test_queued_call_answered_and_never_run),
        cmocka_unit_test(test_cancelled_call_at_the_deadline),
        cmocka_unit_test(test_many_deadlines_each_answered_once),
        cmocka_unit_test(test_no_watcher_no_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
