/* SPDX-License-Identifier: MIT */
/*
 * The host functions a plugin calls on its call: a result (checked, put on one line), failures
 * with a status or the plugin's own code, notifications and progress before the response,
 * cancellation, the method's name, deferred completion; and every one of them refusing a handle
 * whose call has ended (RPCD_ERR_STALE), even once its slot serves another call.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "call_fixture.h"
#include "calls/call_internal.h"
#include "log_capture.h"

#include <math.h>

/* What the host functions returned inside the last handler, in the order it called them. */
static int seen[8];

static int handle_multiline_result(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    static const char text[] = "{\n  \"a\": [1,\r\n 2]\n}";
    seen[0] = host.call_result(call, text, sizeof text - 1);
    return RPCD_OK;
}

/* A result that is not JSON, then a good one: the good one stands. */
static int handle_bad_then_good(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    seen[0] = host.call_result(call, "[1,", 3);
    seen[1] = host.call_result(call, NULL, 0);
    seen[2] = host.call_result(call, "true", 4);
    return RPCD_OK;
}

static int handle_fail(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    seen[0] = host.call_fail(call, RPCD_OK, "no", NULL, 0);
    seen[1] = host.call_fail(call, RPCD_ERR_APPLICATION, "no", NULL, 0);
    seen[2] = host.call_fail(call, RPCD_ERR_INVALID_PARAMS, "bad", "{", 1);
    seen[3] = host.call_fail(call, RPCD_ERR_INVALID_PARAMS, "need a number", "{\n\"at\": 0}", 10);
    return seen[3];
}

static int handle_fail_code(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    seen[0] = host.call_fail_code(call, 7, NULL, NULL, 0);
    seen[1] = host.call_fail_code(call, 7, "seven", "[\"x\"]", 5);
    seen[2] = host.call_fail_code(call, -7, "minus seven", NULL, 0);
    return RPCD_ERR_APPLICATION;
}

static int handle_notify(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    seen[0] = host.call_notify(call, "log/line", "{\"n\":1}", 7);
    seen[1] = host.call_notify(call, "log/bare", NULL, 0);
    seen[2] = host.call_notify(call, "log/number", "42", 2);
    seen[3] = host.call_notify(call, "notifications/progress", "{}", 2);
    seen[4] = host.call_notify(call, NULL, "{}", 2);
    seen[5] = host.call_notify(call, "bad\xff", "{}", 2);
    return host.call_result(call, "\"done\"", 6);
}

static int handle_progress(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    seen[0] = host.call_progress(call, 1, 4, "one");
    seen[1] = host.call_progress(call, NAN, 4, NULL);
    seen[2] = host.call_progress(call, INFINITY, 4, NULL);
    seen[3] = host.call_progress(call, 1, NAN, NULL);
    seen[4] = host.call_progress(call, 2, 4, "bad\xc3");
    seen[5] = host.call_progress(call, 3, -1, NULL); /* total unknown */
    return RPCD_OK;
}

static const char *method_seen;

static int handle_method_name(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    method_seen = host.call_method(call);
    seen[0] = host.call_is_cancelled(call);
    return RPCD_OK;
}

/* Completes its own call before it returns RPCD_DEFERRED: the call ends when it returns. */
static int handle_complete_early(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    seen[0] = host.call_result(call, "\"early\"", 7);
    seen[1] = host.call_complete(call, RPCD_OK);
    seen[2] = host.call_complete(call, RPCD_OK);
    seen[3] = host.call_complete(call, RPCD_DEFERRED);
    return RPCD_DEFERRED;
}

static void open_all(fixture *f)
{
    memset(seen, 0x55, sizeof seen);
    fixture_open(f);
    fixture_add(f, "multiline", handle_multiline_result, 0, NULL);
    fixture_add(f, "bad_then_good", handle_bad_then_good, 0, NULL);
    fixture_add(f, "fail", handle_fail, 0, NULL);
    fixture_add(f, "fail_code", handle_fail_code, 0, NULL);
    fixture_add(f, "notify", handle_notify, 0, NULL);
    fixture_add(f, "progress", handle_progress, 0, NULL);
    fixture_add(f, "name", handle_method_name, 0, NULL);
    fixture_add(f, "early", handle_complete_early, 0, NULL);
    fixture_add(f, "keep", handle_keep, 0, NULL);
    fixture_add(f, "echo", handle_echo, 0, NULL);
    /* No workers: each handler has run when start_call returns. */
    fixture_start(f, (call_settings){.limits.max_in_flight = 16});
}

static void test_result_put_on_one_line(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    assert_int_equal(start_call(&f, "multiline", "1", NULL, NULL), CALL_STARTED);
    assert_int_equal(seen[0], RPCD_OK);
    assert_string_equal(written(&f),
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{  \"a\": [1, 2]}}\n");
    fixture_close(&f);
}

static void test_result_not_json_refused_and_a_later_one_stands(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    assert_int_equal(start_call(&f, "bad_then_good", "1", NULL, NULL), CALL_STARTED);
    assert_int_equal(seen[0], RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(seen[1], RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(seen[2], RPCD_OK);
    assert_string_equal(written(&f), "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":true}\n");
    fixture_close(&f);
}

static void test_fail_refuses_ok_application_and_bad_data(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    assert_int_equal(start_call(&f, "fail", "1", NULL, NULL), CALL_STARTED);
    assert_int_equal(seen[0], RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(seen[1], RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(seen[2], RPCD_ERR_INVALID_ARGUMENT);
    /* call_fail returns the status it recorded, so that a handler can return it. */
    assert_int_equal(seen[3], RPCD_ERR_INVALID_PARAMS);
    assert_string_equal(written(&f), "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,"
                                     "\"message\":\"Invalid params\",\"data\":{\"exception\":"
                                     "\"RPCD_ERR_INVALID_PARAMS\",\"plugin\":\"testplugin\","
                                     "\"method\":\"fail\",\"detail\":\"need a number\","
                                     "\"data\":{\"at\": 0}}}}\n");
    fixture_close(&f);
}

static void test_fail_code_needs_a_message_and_the_last_stands(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    assert_int_equal(start_call(&f, "fail_code", "1", NULL, NULL), CALL_STARTED);
    assert_int_equal(seen[0], RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(seen[1], RPCD_ERR_APPLICATION);
    assert_int_equal(seen[2], RPCD_ERR_APPLICATION);
    /* The second failure replaced the first, data included. */
    assert_string_equal(written(&f), "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-7,"
                                     "\"message\":\"minus seven\"}}\n");
    fixture_close(&f);
}

static void test_notify_before_the_response_and_refusals(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    log_capture log;
    log_capture_start(&log, LOG_WARNING);
    assert_int_equal(start_call(&f, "notify", "1", NULL, NULL), CALL_STARTED);
    log_capture_end(&log);
    assert_int_equal(seen[0], RPCD_OK);
    assert_int_equal(seen[1], RPCD_OK);
    assert_int_equal(seen[2], RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(seen[3], RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(seen[4], RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(seen[5], RPCD_ERR_INVALID_ARGUMENT);
    assert_string_equal(written(&f),
                        "{\"jsonrpc\":\"2.0\",\"method\":\"log/line\",\"params\":{\"n\":1}}\n"
                        "{\"jsonrpc\":\"2.0\",\"method\":\"log/bare\"}\n"
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"done\"}\n");
    assert_logged(log.text, "testplugin: notify sent a notification \"log/number\" with params "
                            "that are not a JSON array or object; dropped");
    assert_logged(log.text, "testplugin: notify tried to send a notification "
                            "\"notifications/progress\", a name rpcd reserves for itself; refused");
    fixture_close(&f);
}

static void test_progress_with_the_clients_token(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    assert_int_equal(
        start_call(&f, "progress", "1", "{\"_meta\":{\"progressToken\":\"tok\"}}", NULL),
        CALL_STARTED);
    assert_int_equal(seen[0], RPCD_OK);
    assert_int_equal(seen[1], RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(seen[2], RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(seen[3], RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(seen[4], RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(seen[5], RPCD_OK);
    assert_string_equal(
        written(&f), "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{"
                     "\"progressToken\":\"tok\",\"progress\":1,\"total\":4,\"message\":\"one\"}}\n"
                     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{"
                     "\"progressToken\":\"tok\",\"progress\":3}}\n"
                     "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}\n");
    fixture_close(&f);
}

static void test_progress_without_a_token_sends_nothing(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    assert_int_equal(start_call(&f, "progress", "1", "{\"a\":1}", NULL), CALL_STARTED);
    assert_int_equal(seen[0], RPCD_OK);
    assert_int_equal(seen[5], RPCD_OK);
    assert_string_equal(written(&f), "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}\n");
    fixture_close(&f);
}

static void test_method_name_and_cancellation(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    method_seen = NULL;
    assert_int_equal(start_call(&f, "name", "1", NULL, NULL), CALL_STARTED);
    assert_non_null(method_seen);
    assert_string_equal(method_seen, "name");
    assert_int_equal(seen[0], 0);

    assert_int_equal(start_call(&f, "keep", "\"k\"", NULL, NULL), CALL_STARTED);
    rpcd_call *call = atomic_load(&kept[0]);
    assert_int_equal(host.call_is_cancelled(call), 0);
    assert_int_equal(call_cancel(f.calls, (js_span){"\"k\"", 3}, CALL_CANCEL_FLAG), 1);
    assert_int_equal(host.call_is_cancelled(call), 1);
    /* A flag only: the plugin's own outcome stands. */
    assert_int_equal(host.call_result(call, "7", 1), RPCD_OK);
    assert_int_equal(host.call_complete(call, RPCD_OK), RPCD_OK);
    assert_string_equal(written(&f), "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}\n"
                                     "{\"jsonrpc\":\"2.0\",\"id\":\"k\",\"result\":7}\n");
    fixture_close(&f);
}

static void test_complete_a_deferred_call_once(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    assert_int_equal(start_call(&f, "keep", "1", NULL, NULL), CALL_STARTED);
    rpcd_call *call = atomic_load(&kept[0]);
    assert_string_equal(written(&f), "");
    assert_int_equal(host.call_complete(call, RPCD_DEFERRED), RPCD_ERR_UNSUPPORTED);
    assert_int_equal(host.call_fail(call, RPCD_ERR_INTERNAL, "gave up", NULL, 0),
                     RPCD_ERR_INTERNAL);
    assert_int_equal(host.call_complete(call, RPCD_ERR_INTERNAL), RPCD_OK);
    assert_int_equal(host.call_complete(call, RPCD_OK), RPCD_ERR_STALE);
    assert_string_equal(
        written(&f), "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":"
                     "\"Internal error\",\"data\":{\"exception\":\"RPCD_ERR_INTERNAL\","
                     "\"plugin\":\"testplugin\",\"method\":\"keep\",\"detail\":\"gave up\"}}}\n");
    fixture_close(&f);
}

static void test_complete_before_the_handler_returns(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    assert_int_equal(start_call(&f, "early", "1", NULL, NULL), CALL_STARTED);
    assert_int_equal(seen[0], RPCD_OK);
    assert_int_equal(seen[1], RPCD_OK);
    assert_int_equal(seen[2], RPCD_ERR_UNSUPPORTED);
    assert_int_equal(seen[3], RPCD_ERR_UNSUPPORTED);
    assert_int_equal(call_wait_idle(f.calls, 0), 0);
    assert_string_equal(written(&f), "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"early\"}\n");
    fixture_close(&f);
}

/* Every host function on a handle: what a stale one must get. */
static void expect_stale(rpcd_call *call)
{
    assert_int_equal(host.call_result(call, "1", 1), RPCD_ERR_STALE);
    assert_int_equal(host.call_fail(call, RPCD_ERR_INTERNAL, "x", NULL, 0), RPCD_ERR_STALE);
    assert_int_equal(host.call_fail_code(call, 3, "x", NULL, 0), RPCD_ERR_STALE);
    assert_int_equal(host.call_notify(call, "log/x", "{}", 2), RPCD_ERR_STALE);
    assert_int_equal(host.call_progress(call, 1, 2, NULL), RPCD_ERR_STALE);
    assert_int_equal(host.call_complete(call, RPCD_OK), RPCD_ERR_STALE);
    /* An ended call counts as cancelled: a plugin's loop stops. */
    assert_int_equal(host.call_is_cancelled(call), 1);
    assert_null(host.call_method(call));
}

static void test_ended_calls_handle_is_stale_even_when_its_slot_is_reused(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    assert_int_equal(start_call(&f, "keep", "1", NULL, NULL), CALL_STARTED);
    rpcd_call *first = atomic_load(&kept[0]);
    assert_int_equal(host.call_complete(first, RPCD_OK), RPCD_OK);
    expect_stale(first);
    /* The next call takes the slot the first gave back: the old handle still misses. */
    assert_int_equal(start_call(&f, "keep", "2", NULL, NULL), CALL_STARTED);
    rpcd_call *second = atomic_load(&kept[1]);
    assert_true(((uintptr_t)first & INDEX_MASK) == ((uintptr_t)second & INDEX_MASK));
    assert_ptr_not_equal(first, second);
    expect_stale(first);
    assert_string_equal(host.call_method(second), "keep");
    assert_int_equal(host.call_result(second, "2", 1), RPCD_OK);
    assert_int_equal(host.call_complete(second, RPCD_OK), RPCD_OK);
    assert_string_equal(written(&f), "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}\n"
                                     "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":2}\n");
    fixture_close(&f);
}

static void test_handles_that_name_no_slot_are_stale(void **state)
{
    (void)state;
    fixture f;
    open_all(&f);
    expect_stale(NULL);
    /* An index the store never made. */
    expect_stale(slot_handle(slot_count() + 5, 0));
    fixture_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_result_put_on_one_line),
        cmocka_unit_test(test_result_not_json_refused_and_a_later_one_stands),
        cmocka_unit_test(test_fail_refuses_ok_application_and_bad_data),
        cmocka_unit_test(test_fail_code_needs_a_message_and_the_last_stands),
        cmocka_unit_test(test_notify_before_the_response_and_refusals),
        cmocka_unit_test(test_progress_with_the_clients_token),
        cmocka_unit_test(test_progress_without_a_token_sends_nothing),
        cmocka_unit_test(test_method_name_and_cancellation),
        cmocka_unit_test(test_complete_a_deferred_call_once),
        cmocka_unit_test(test_complete_before_the_handler_returns),
        cmocka_unit_test(test_ended_calls_handle_is_stale_even_when_its_slot_is_reused),
        cmocka_unit_test(test_handles_that_name_no_slot_are_stale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
