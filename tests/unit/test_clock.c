/* SPDX-License-Identifier: MIT */
/*
 * The clock every wait is measured with: a time in milliseconds made a timespec whole seconds
 * and the rest in nanoseconds, so that a wait on a monotonic condition ends when it was asked
 * to, never before it.
 */
#include "base/clock.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void test_timespec_of_ms(void **state)
{
    (void)state;
    static const struct {
        long long ms;
        time_t seconds;
        long nanoseconds;
    } cases[] = {
        {0, 0, 0},
        {1, 0, 1000000L},
        {999, 0, 999000000L},
        {1000, 1, 0},
        {1001, 1, 1000000L},
        {1234567, 1234, 567000000L},
        {86400000LL * 365 * 30 + 999, 86400L * 365 * 30, 999000000L},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct timespec at = clock_timespec_of_ms(cases[i].ms);
        assert_int_equal(at.tv_sec, cases[i].seconds);
        assert_int_equal(at.tv_nsec, cases[i].nanoseconds);
    }
}

/* A wait until a time on a monotonic condition does not end before that time. */
static void test_wait_ends_at_its_time(void **state)
{
    (void)state;
    pthread_condattr_t attributes;
    pthread_cond_t condition;
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    assert_int_equal(pthread_condattr_init(&attributes), 0);
    assert_int_equal(pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC), 0);
    assert_int_equal(pthread_cond_init(&condition, &attributes), 0);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < 20; i++) {
        long long until = clock_now_ms() + 7 + i;
        struct timespec at = clock_timespec_of_ms(until);
        while (pthread_cond_timedwait(&condition, &lock, &at) == 0)
            ; /* nothing signals it: a wake-up is spurious */
        assert_true(clock_now_ms() >= until);
    }
    pthread_mutex_unlock(&lock);
    pthread_cond_destroy(&condition);
    pthread_condattr_destroy(&attributes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timespec_of_ms),
        cmocka_unit_test(test_wait_ends_at_its_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
