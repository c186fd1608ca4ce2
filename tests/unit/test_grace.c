/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for grace.c: where the timer's signal goes.
 */
#include "calls/grace.h"

#include "base/signals.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* The hexadecimal signal mask after label (e.g. "ShdPnd:") in a /proc status file. */
static unsigned long long pending_in(const char *path, const char *label)
{
    FILE *status = fopen(path, "r");
    assert_non_null(status);
    char line[256];
    unsigned long long mask = 0;
    size_t length = strlen(label);
    while (fgets(line, sizeof line, status))
        if (strncmp(line, label, length) == 0)
            mask = strtoull(line + length, NULL, 16);
    fclose(status);
    return mask;
}

/*
 * The timer signals the thread that watches (the reading one) and no other: with the signal
 * blocked everywhere, it waits as pending for that thread, not for the process, where any
 * thread that lets it through (a language runtime's, on a small stack) could take it.
 */
static void test_timer_signals_the_watching_thread_alone(void **state)
{
    (void)state;
    assert_int_equal(grace_install(), 0);
    int number = sig_grace_number();
    assert_true(number > 0);
    sigset_t grace_only;
    sigemptyset(&grace_only);
    sigaddset(&grace_only, number);
    grace_target target = {.grace_ms = 1};
    assert_int_equal(grace_watch(&target), 0);
    /* grace_watch lets the signal through on this thread: held back here from now on. */
    assert_int_equal(pthread_sigmask(SIG_BLOCK, &grace_only, NULL), 0);
    grace_start();
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)gettid());
    unsigned long long bit = 1ULL << (number - 1);
    assert_true(pending_in(path, "SigPnd:") & bit);
    assert_false(pending_in("/proc/self/status", "ShdPnd:") & bit);
    /* The period is over: what is left of it is nothing, never a negative wait (an endless
     * one for poll). */
    assert_int_equal(grace_left_ms(), 0);
    /* Should the signal still be delivered once let through, it finds nothing watched. */
    grace_unwatch();
    assert_int_equal(pthread_sigmask(SIG_UNBLOCK, &grace_only, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timer_signals_the_watching_thread_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
