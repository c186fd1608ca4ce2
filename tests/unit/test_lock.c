/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for lock.h: while the process has one thread, taking a lock costs nothing (the mutex
 * is left as it is); once a second thread has started, locks are real, and stay real after it
 * has ended. The tests run in order: the first needs a process that never had a thread.
 */
#include "base/lock.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;

static void test_single_thread_leaves_the_mutex_alone(void **state)
{
    (void)state;
    assert_true(lock_single_threaded());
    lock_take(&mutex);
    /* Not really taken: a real try from here succeeds. */
    assert_int_equal(pthread_mutex_trylock(&mutex), 0);
    pthread_mutex_unlock(&mutex);
    lock_release(&mutex);
    assert_int_equal(lock_try(&mutex), 0);
    lock_release(&mutex);
}

static void *do_nothing(void *argument)
{
    return argument;
}

static void test_locks_are_real_once_a_thread_has_started(void **state)
{
    (void)state;
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, do_nothing, NULL), 0);
    assert_false(lock_single_threaded());
    lock_take(&mutex);
    assert_int_equal(pthread_mutex_trylock(&mutex), EBUSY);
    lock_release(&mutex);
    assert_int_equal(pthread_mutex_trylock(&mutex), 0);
    pthread_mutex_unlock(&mutex);
    assert_int_equal(pthread_join(thread, NULL), 0);

    /* The thread has ended: still real, so that no lock taken for real is left behind. */
    assert_false(lock_single_threaded());
    lock_take(&mutex);
    assert_int_equal(lock_try(&mutex), EBUSY);
    lock_release(&mutex);
}

/* A held lock is tried until the budget runs out, which the next lock then starts from. */
static void test_try_for_spends_one_budget(void **state)
{
    (void)state;
    assert_false(lock_single_threaded());
    lock_take(&mutex);
    int left_ms = 3;
    assert_int_equal(lock_try_for(&mutex, &left_ms), -1);
    assert_int_equal(left_ms, 0);
    lock_release(&mutex);
    assert_int_equal(lock_try_for(&mutex, &left_ms), 0);
    lock_release(&mutex);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_thread_leaves_the_mutex_alone),
        cmocka_unit_test(test_locks_are_real_once_a_thread_has_started),
        cmocka_unit_test(test_try_for_spends_one_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
