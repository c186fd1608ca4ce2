/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for running_call.h: a thread runs no call until one is entered, records nest and
 * unwind as handlers do, and each thread has its own.
 */
#include "base/running_call.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void test_none_until_one_is_entered(void **state)
{
    (void)state;
    assert_null(running_call_current());
    running_call call = {"plugin", "method", "1", 1, &call, NULL};
    running_call_enter(&call);
    assert_ptr_equal(running_call_current(), &call);
    assert_ptr_equal(running_call_current()->handle, &call);
    running_call_leave(&call);
    assert_null(running_call_current());
}

static void test_records_nest_and_unwind(void **state)
{
    (void)state;
    running_call outer = {"outer", "first", "1", 1, NULL, NULL};
    running_call inner = {"inner", "second", NULL, 0, NULL, NULL};
    running_call_enter(&outer);
    running_call_enter(&inner);
    assert_ptr_equal(running_call_current(), &inner);
    assert_ptr_equal(inner.outer, &outer);
    running_call_leave(&inner);
    assert_ptr_equal(running_call_current(), &outer);
    running_call_leave(&outer);
    assert_null(running_call_current());
}

static void *current_elsewhere(void *argument)
{
    (void)argument;
    return (void *)running_call_current();
}

static void test_each_thread_has_its_own(void **state)
{
    (void)state;
    running_call call = {"plugin", "method", "7", 1, NULL, NULL};
    running_call_enter(&call);
    pthread_t thread;
    void *seen = &call;
    assert_int_equal(pthread_create(&thread, NULL, current_elsewhere, NULL), 0);
    assert_int_equal(pthread_join(thread, &seen), 0);
    assert_null(seen);
    assert_ptr_equal(running_call_current(), &call);
    running_call_leave(&call);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_none_until_one_is_entered),
        cmocka_unit_test(test_records_nest_and_unwind),
        cmocka_unit_test(test_each_thread_has_its_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
