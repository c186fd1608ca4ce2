/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for isolation/supervisor.c: the first restart at once, the back-off of hosts that
 * die before answering a call, and the limit of restarts per minute.
 */
#include "isolation/supervisor.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void test_first_restart_at_once_then_back_off(void **state)
{
    (void)state;
    sup_state s;
    assert_int_equal(sup_init(&s, 100), 0);
    long long now = 1000;
    assert_int_equal(sup_on_crash(&s, now, false), 0);
    long long expected = SUP_FIRST_DELAY_MS;
    for (int i = 0; i < 10; i++) {
        long long delay = sup_on_crash(&s, now += 10, false);
        assert_int_equal(delay, expected < SUP_MOST_DELAY_MS ? expected : SUP_MOST_DELAY_MS);
        expected *= 2;
    }
    /* A host that answered calls: its death restarts at once again. */
    assert_int_equal(sup_on_crash(&s, now += 10, true), 0);
    assert_int_equal(sup_on_crash(&s, now += 10, false), SUP_FIRST_DELAY_MS);
    sup_fini(&s);
}

static void test_limit_per_minute(void **state)
{
    (void)state;
    sup_state s;
    assert_int_equal(sup_init(&s, 3), 0);
    long long now = 5000;
    for (int i = 0; i < 3; i++)
        assert_true(sup_on_crash(&s, now + i, true) >= 0);
    assert_int_equal(sup_on_crash(&s, now + 10, true), -1);
    /* A minute after the first, one more is allowed; then the limit again. */
    assert_int_equal(sup_on_crash(&s, now + SUP_WINDOW_MS, true), 0);
    assert_int_equal(sup_on_crash(&s, now + SUP_WINDOW_MS + 1, true), 0);
    assert_int_equal(sup_on_crash(&s, now + SUP_WINDOW_MS + 2, true), 0);
    assert_int_equal(sup_on_crash(&s, now + SUP_WINDOW_MS + 3, true), -1);
    sup_fini(&s);
}

static void test_no_restarts(void **state)
{
    (void)state;
    sup_state s;
    assert_int_equal(sup_init(&s, 0), 0);
    assert_int_equal(sup_on_crash(&s, 0, true), -1);
    sup_fini(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_restart_at_once_then_back_off),
        cmocka_unit_test(test_limit_per_minute),
        cmocka_unit_test(test_no_restarts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
