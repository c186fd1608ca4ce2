/* SPDX-License-Identifier: MIT */
/*
 * The end of serving: calls that never ran (queued for a worker, or behind a serialized call)
 * answered -32800 with the reason, as a client that cancelled one asked; running calls named in
 * the log by plugin, method and id, and while serving when they have held every worker for a
 * while; in ordered output the places of running calls given up, so that the lines after theirs
 * go out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "call_fixture.h"
#include "log_capture.h"
#include "test_time.h"

#include <time.h>

static void pause_ms(long ms)
{
    struct timespec pause = {0, ms * 1000000L};
    nanosleep(&pause, NULL);
}

/* A handler that holds its worker until the gate opens. */
static atomic_bool gate_open;
static atomic_int holding;

static int handle_hold(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    atomic_fetch_add(&holding, 1);
    while (!atomic_load(&gate_open))
        pause_ms(1);
    return host.call_result(call, "\"held\"", 6);
}

static void wait_for_holders(int count)
{
    while (atomic_load(&holding) < count)
        pause_ms(1);
}

static void open_with(fixture *f, size_t workers)
{
    atomic_store(&gate_open, false);
    atomic_store(&holding, 0);
    fixture_open(f);
    fixture_add(f, "hold", handle_hold, 0, NULL);
    fixture_add(f, "echo", handle_echo, 0, NULL);
    fixture_add(f, "keep", handle_keep, 0, NULL);
    fixture_add(f, "serial", handle_keep, RPCD_METHOD_SERIALIZED, NULL);
    fixture_start(f, (call_settings){.limits.workers = workers, .limits.max_in_flight = 64});
}

#define NEVER_RAN(id)                                                                              \
    "{\"jsonrpc\":\"2.0\",\"id\":" id ",\"error\":{\"code\":-32800,\"message\":\"Request "         \
    "cancelled\",\"data\":{\"exception\":\"RPCD_ERR_CANCELLED\",\"plugin\":\"testplugin\","        \
    "\"method\":\"echo\",\"detail\":\"rpcd stopped before the call ran\"}}}\n"

static void test_queued_calls_answered_never_ran(void **state)
{
    (void)state;
    fixture f;
    open_with(&f, 1);
    assert_int_equal(start_call(&f, "hold", "1", NULL, NULL), CALL_STARTED);
    wait_for_holders(1);
    assert_int_equal(start_call(&f, "echo", "2", "[2]", NULL), CALL_STARTED);
    assert_int_equal(start_call(&f, "echo", NULL, "[0]", NULL), CALL_STARTED);
    assert_int_equal(start_call(&f, "echo", "\"c\"", "[3]", NULL), CALL_STARTED);
    call_end_unstarted(f.calls);
    /* The queued requests are answered now; the notification gets nothing; the running call
     * is not touched. */
    assert_string_equal(written(&f), NEVER_RAN("2") NEVER_RAN("\"c\""));
    atomic_store(&gate_open, true);
    assert_int_equal(call_wait_idle(f.calls, test_time_ms(5000)), 0);
    assert_string_equal(written(&f), NEVER_RAN("2") NEVER_RAN("\"c\"") "{\"jsonrpc\":\"2.0\","
                                                                       "\"id\":1,\"result\":"
                                                                       "\"held\"}\n");
    fixture_close(&f);
}

static void test_client_cancelled_calls_answered_as_asked(void **state)
{
    (void)state;
    fixture f;
    open_with(&f, 1);
    assert_int_equal(start_call(&f, "hold", "1", NULL, NULL), CALL_STARTED);
    wait_for_holders(1);
    assert_int_equal(start_call(&f, "echo", "2", "[2]", NULL), CALL_STARTED);
    assert_int_equal(start_call(&f, "echo", "3", "[3]", NULL), CALL_STARTED);
    assert_int_equal(call_cancel(f.calls, (js_span){"2", 1}, CALL_CANCEL_RESPOND), 1);
    assert_int_equal(call_cancel(f.calls, (js_span){"3", 1}, CALL_CANCEL_SILENT), 1);
    call_end_unstarted(f.calls);
    /* $/cancelRequest: the -32800 of a cancel, without the reason a stop gives; a silent
     * cancel: no response. */
    const char *text = written(&f);
    assert_non_null(strstr(text, "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32800,"));
    assert_null(strstr(text, "rpcd stopped before the call ran"));
    assert_null(strstr(text, "\"id\":3"));
    assert_int_equal(f.written.lines, 1);
    atomic_store(&gate_open, true);
    assert_int_equal(call_wait_idle(f.calls, test_time_ms(5000)), 0);
    fixture_close(&f);
}

static void test_calls_behind_a_serialized_call_answered_never_ran(void **state)
{
    (void)state;
    fixture f;
    open_with(&f, 2);
    /* The first deferred call keeps its method's turn until it is completed. */
    assert_int_equal(start_call(&f, "serial", "1", NULL, NULL), CALL_STARTED);
    while (atomic_load(&kept_count) < 1)
        pause_ms(1);
    assert_int_equal(start_call(&f, "serial", "2", NULL, NULL), CALL_STARTED);
    pause_ms(20);
    assert_int_equal(atomic_load(&kept_count), 1);
    call_end_unstarted(f.calls);
    assert_string_equal(written(&f),
                        "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32800,\"message\":"
                        "\"Request cancelled\",\"data\":{\"exception\":\"RPCD_ERR_CANCELLED\","
                        "\"plugin\":\"testplugin\",\"method\":\"serial\",\"detail\":\"rpcd stopped "
                        "before the call ran\"}}}\n");
    assert_int_equal(host.call_complete(atomic_load(&kept[0]), RPCD_OK), RPCD_OK);
    assert_int_equal(call_wait_idle(f.calls, test_time_ms(5000)), 0);
    /* The second call never ran, even once the turn was free. */
    assert_int_equal(atomic_load(&kept_count), 1);
    fixture_close(&f);
}

static void test_running_calls_named_and_queued_ones_not(void **state)
{
    (void)state;
    fixture f;
    open_with(&f, 2);
    assert_int_equal(start_call(&f, "keep", "\"d\"", NULL, NULL), CALL_STARTED);
    assert_int_equal(start_call(&f, "hold", "1", NULL, NULL), CALL_STARTED);
    assert_int_equal(start_call(&f, "hold", NULL, NULL, NULL), CALL_STARTED);
    wait_for_holders(2);
    assert_int_equal(start_call(&f, "echo", "9", "[9]", NULL), CALL_STARTED);
    log_capture log;
    log_capture_start(&log, LOG_WARNING);
    size_t named = call_log_running(f.calls, LOG_WARNING, "still running");
    log_capture_end(&log);
    assert_int_equal(named, 3);
    assert_logged(log.text, "still running: plugin testplugin, method keep, id \"d\" (deferred, "
                            "not completed)\n");
    assert_logged(log.text, "still running: plugin testplugin, method hold, id 1\n");
    assert_logged(log.text, "still running: plugin testplugin, method hold, a notification\n");
    assert_null(strstr(log.text, "method echo"));
    atomic_store(&gate_open, true);
    assert_int_equal(host.call_complete(atomic_load(&kept[0]), RPCD_OK), RPCD_OK);
    assert_int_equal(call_wait_idle(f.calls, test_time_ms(5000)), 0);
    /* Nothing left to name. */
    log_capture_start(&log, LOG_WARNING);
    named = call_log_running(f.calls, LOG_WARNING, "still running");
    log_capture_end(&log);
    assert_int_equal(named, 0);
    assert_string_equal(log.text, "");
    fixture_close(&f);
}

static void test_held_pool_named_once_after_the_stall_time(void **state)
{
    (void)state;
    fixture f;
    open_with(&f, 1);
    call_name_stalls_after(f.calls, 30);
    assert_int_equal(start_call(&f, "hold", "1", NULL, NULL), CALL_STARTED);
    wait_for_holders(1);
    log_capture log;
    log_capture_start(&log, LOG_WARNING);
    /* The stall begins with the first call left waiting; it is told at a start after 30 ms. */
    assert_int_equal(start_call(&f, "echo", "2", "[2]", NULL), CALL_STARTED);
    pause_ms(60);
    assert_int_equal(start_call(&f, "echo", "3", "[3]", NULL), CALL_STARTED);
    assert_int_equal(start_call(&f, "echo", "4", "[4]", NULL), CALL_STARTED);
    log_capture_end(&log);
    assert_string_equal(log.text, "rpcd: warning: every worker (1) held with no call ending, 2 "
                                  "calls waiting\n"
                                  "rpcd: warning: the pool is held by: plugin testplugin, method "
                                  "hold, id 1\n");
    atomic_store(&gate_open, true);
    assert_int_equal(call_wait_idle(f.calls, test_time_ms(5000)), 0);
    fixture_close(&f);
}

/* Starts a call with an ordered response's ticket. */
static void start_ticketed(fixture *f, const char *name, const char *id)
{
    js_span id_span = {id, strlen(id)};
    call_request request = {
        .gen = f->gen,
        .method = reg_find(f->methods, name, strlen(name)),
        .id = &id_span,
        .ticket = out_ticket_take(f->out),
    };
    assert_true(request.ticket != 0);
    assert_int_equal(call_start(f->calls, &request), CALL_STARTED);
}

static void test_running_calls_tickets_dropped_in_ordered_output(void **state)
{
    (void)state;
    fixture f;
    open_with(&f, 1);
    out_set_ordered(f.out, true);
    start_ticketed(&f, "keep", "1");
    while (atomic_load(&kept_count) < 1)
        pause_ms(1);
    start_ticketed(&f, "echo", "2");
    assert_int_equal(call_wait_idle(f.calls, 0), -1);
    pause_ms(20);
    /* The second response waits for the first, which never comes. */
    assert_string_equal(written(&f), "");
    call_drop_running_tickets(f.calls);
    /* The second call may still be on its way through the worker. */
    for (int waited = 0; waited < test_time_ms(5000) && strlen(written(&f)) == 0; waited++)
        pause_ms(1);
    assert_string_equal(written(&f), "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":null}\n");
    /* Should the running call end after all, its line does not jump the queue. */
    assert_int_equal(host.call_complete(atomic_load(&kept[0]), RPCD_OK), RPCD_OK);
    assert_int_equal(call_wait_idle(f.calls, test_time_ms(5000)), 0);
    assert_string_equal(written(&f), "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":null}\n");
    fixture_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queued_calls_answered_never_ran),
        cmocka_unit_test(test_client_cancelled_calls_answered_as_asked),
        cmocka_unit_test(test_calls_behind_a_serialized_call_answered_never_ran),
        cmocka_unit_test(test_running_calls_named_and_queued_ones_not),
        cmocka_unit_test(test_running_calls_tickets_dropped_in_ordered_output),
        cmocka_unit_test(test_held_pool_named_once_after_the_stall_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
