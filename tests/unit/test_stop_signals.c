/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for stop_signals: while held, a stop signal waits; deliver_pending runs its handler
 * then and there, and only when one came; release lets through what is still held.
 */
#include "base/stop_signals.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static volatile sig_atomic_t handled_term, handled_int;

static void count(int number)
{
    if (number == SIGTERM)
        handled_term++;
    else if (number == SIGINT)
        handled_int++;
}

static int install(void **state)
{
    (void)state;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = count;
    sigemptyset(&action.sa_mask);
    handled_term = handled_int = 0;
    return sigaction(SIGTERM, &action, NULL) == 0 && sigaction(SIGINT, &action, NULL) == 0 ? 0 : -1;
}

static bool blocked(int number)
{
    sigset_t mask;
    pthread_sigmask(SIG_SETMASK, NULL, &mask);
    return sigismember(&mask, number) == 1;
}

static void test_fill_names_term_and_int(void **state)
{
    (void)state;
    sigset_t set;
    stop_signals_fill(&set);
    assert_int_equal(sigismember(&set, SIGTERM), 1);
    assert_int_equal(sigismember(&set, SIGINT), 1);
    assert_int_equal(sigismember(&set, SIGURG), 0);
    assert_int_equal(sigismember(&set, SIGPIPE), 0);
}

static void test_held_signal_waits_for_deliver_pending(void **state)
{
    (void)state;
    stop_signals_hold();
    assert_true(blocked(SIGTERM));
    assert_true(blocked(SIGINT));
    stop_signals_deliver_pending(); /* nothing came: nothing runs, still held */
    assert_int_equal(handled_term, 0);
    assert_true(blocked(SIGTERM));

    pthread_kill(pthread_self(), SIGTERM);
    assert_int_equal(handled_term, 0);
    stop_signals_deliver_pending();
    assert_int_equal(handled_term, 1);
    assert_true(blocked(SIGTERM)); /* held again for the rest of the wait */

    stop_signals_release();
    assert_false(blocked(SIGTERM));
    assert_false(blocked(SIGINT));
    assert_int_equal(handled_term, 1);
}

static void test_release_lets_a_held_signal_through(void **state)
{
    (void)state;
    stop_signals_hold();
    pthread_kill(pthread_self(), SIGINT);
    assert_int_equal(handled_int, 0);
    stop_signals_release();
    assert_int_equal(handled_int, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_names_term_and_int),
        cmocka_unit_test_setup(test_held_signal_waits_for_deliver_pending, install),
        cmocka_unit_test_setup(test_release_lets_a_held_signal_through, install),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
