/* SPDX-License-Identifier: MIT */
/*
 * Batches: the responses of a batch's calls go out as one array, once, when the last of them
 * has ended (whatever order they end in); a batch of notifications writes nothing; errors the
 * daemon answers for an item join the same array.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "call_fixture.h"

/* Nothing is written until the last member ends; then one line, the whole array. */
static void test_array_written_once_the_last_member_ends(void **state)
{
    (void)state;
    fixture f;
    fixture_with(&f, "keep", handle_keep, 0, (call_settings){.limits.max_in_flight = 16});
    call_batch *batch;
    assert_int_equal(call_batch_new(f.calls, 0, &batch), 0);
    assert_int_equal(start_call(&f, "keep", "1", NULL, batch), CALL_STARTED);
    assert_int_equal(start_call(&f, "keep", "2", NULL, batch), CALL_STARTED);
    assert_int_equal(start_call(&f, "keep", NULL, NULL, batch), CALL_STARTED);
    js_span id = {"3", 1};
    assert_int_equal(call_respond_error(f.calls, batch, 0, &id, -32601, NULL, NULL, 0), 0);
    call_batch_release(batch); /* every item started */
    assert_string_equal(written(&f), "");

    assert_int_equal(host.call_complete(kept[1], RPCD_OK), RPCD_OK);
    assert_int_equal(host.call_complete(kept[2], RPCD_OK), RPCD_OK);
    assert_string_equal(written(&f), "");
    assert_int_equal(host.call_complete(kept[0], RPCD_OK), RPCD_OK);
    assert_string_equal(written(&f),
                        "[{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601,\"message\":"
                        "\"Method not found\"}},"
                        "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":null},"
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}]\n");
    fixture_close(&f);
}

/* Only notifications: no response at all, not even an empty array. */
static void test_batch_of_notifications_writes_nothing(void **state)
{
    (void)state;
    fixture f;
    fixture_with(&f, "echo", handle_echo, 0, (call_settings){.limits.max_in_flight = 16});
    call_batch *batch;
    assert_int_equal(call_batch_new(f.calls, 0, &batch), 0);
    assert_int_equal(start_call(&f, "echo", NULL, "[1]", batch), CALL_STARTED);
    assert_int_equal(start_call(&f, "echo", NULL, "[2]", batch), CALL_STARTED);
    call_batch_release(batch);
    assert_int_equal(call_wait_idle(f.calls, 0), 0);
    assert_string_equal(written(&f), "");
    assert_int_equal(f.written.lines, 0);
    fixture_close(&f);
}

/* Members that end before the creator lets go still wait for it. */
static void test_creator_reference_holds_the_array(void **state)
{
    (void)state;
    fixture f;
    fixture_with(&f, "echo", handle_echo, 0, (call_settings){.limits.max_in_flight = 16});
    call_batch *batch;
    assert_int_equal(call_batch_new(f.calls, 0, &batch), 0);
    assert_int_equal(start_call(&f, "echo", "1", "[1]", batch), CALL_STARTED);
    assert_int_equal(call_wait_idle(f.calls, 0), 0); /* ended: no workers */
    assert_string_equal(written(&f), "");
    call_batch_release(batch);
    assert_string_equal(written(&f), "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1]}]\n");
    fixture_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_array_written_once_the_last_member_ends),
        cmocka_unit_test(test_batch_of_notifications_writes_nothing),
        cmocka_unit_test(test_creator_reference_holds_the_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
