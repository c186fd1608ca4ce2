/* SPDX-License-Identifier: MIT */
/*
 * The token bucket on a clock the test moves: full at the start, a burst and then nothing, the
 * refill by elapsed time (thousandths kept), the wait until the next token, a clock that goes
 * back, the longest periods without overflow, a token given back, and threads taking at once.
 */
#include "base/token_bucket.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void test_burst_then_refused_with_wait(void **state)
{
    (void)state;
    tb_bucket bucket;
    assert_int_equal(tb_init(&bucket, (tb_rate){10, 1000, 3}, 5000), 0);
    long long retry = -1;
    for (int i = 0; i < 3; i++)
        assert_true(tb_take(&bucket, 5000, &retry));
    assert_int_equal(retry, -1); /* untouched while admitted */
    assert_false(tb_take(&bucket, 5000, &retry));
    assert_int_equal(retry, 100); /* 10 per second: one every 100 ms */
    assert_false(tb_take(&bucket, 5040, &retry));
    assert_int_equal(retry, 60);
    assert_true(tb_take(&bucket, 5100, &retry));
    assert_false(tb_take(&bucket, 5100, &retry));
    tb_destroy(&bucket);
}

static void test_refill_keeps_fractions_and_caps_at_burst(void **state)
{
    (void)state;
    tb_bucket bucket;
    /* 3 per minute: a token every 20 s, built up one millisecond at a time. */
    assert_int_equal(tb_init(&bucket, (tb_rate){3, 60000, 1}, 0), 0);
    long long retry = 0;
    assert_true(tb_take(&bucket, 0, &retry));
    for (long long now = 1; now < 20000; now += 997)
        assert_false(tb_take(&bucket, now, &retry));
    assert_true(tb_take(&bucket, 20000, &retry));
    /* A long idle time fills the bucket to its burst, never past it. */
    assert_true(tb_take(&bucket, 10000000, &retry));
    assert_false(tb_take(&bucket, 10000000, &retry));
    assert_int_equal(retry, 20000);
    tb_destroy(&bucket);
}

static void test_clock_going_back_adds_nothing(void **state)
{
    (void)state;
    tb_bucket bucket;
    assert_int_equal(tb_init(&bucket, (tb_rate){1, 1000, 1}, 1000), 0);
    long long retry = 0;
    assert_true(tb_take(&bucket, 1000, &retry));
    assert_false(tb_take(&bucket, 0, &retry));
    assert_int_equal(retry, 1000);
    assert_false(tb_take(&bucket, 1999, &retry));
    assert_int_equal(retry, 1);
    assert_true(tb_take(&bucket, 2000, &retry));
    tb_destroy(&bucket);
}

static void test_largest_rates_do_not_overflow(void **state)
{
    (void)state;
    tb_bucket bucket;
    assert_int_equal(tb_init(&bucket, (tb_rate){1000000, 3600000, 1000000}, 0), 0);
    long long retry = 0;
    for (int i = 0; i < 1000; i++)
        assert_true(tb_take(&bucket, 0, &retry));
    /* Years later: full, not wrapped round. */
    assert_true(tb_take(&bucket, 100000000000LL, &retry));
    assert_int_equal(bucket.milli_tokens, 999999000);
    tb_destroy(&bucket);
    assert_int_equal(tb_init(&bucket, (tb_rate){1, 3600000, 1}, 0), 0);
    assert_true(tb_take(&bucket, 0, &retry));
    assert_false(tb_take(&bucket, 1, &retry));
    assert_int_equal(retry, 3599999);
    tb_destroy(&bucket);
}

static void test_give_back(void **state)
{
    (void)state;
    tb_bucket bucket;
    assert_int_equal(tb_init(&bucket, (tb_rate){1, 1000, 2}, 0), 0);
    long long retry = 0;
    assert_true(tb_take(&bucket, 0, &retry));
    assert_true(tb_take(&bucket, 0, &retry));
    assert_false(tb_take(&bucket, 0, &retry));
    tb_give_back(&bucket);
    assert_true(tb_take(&bucket, 0, &retry));
    /* Never past the burst. */
    tb_give_back(&bucket);
    tb_give_back(&bucket);
    tb_give_back(&bucket);
    assert_int_equal(bucket.milli_tokens, 2000);
    tb_destroy(&bucket);
}

enum { THREADS = 4, TRIES = 500 };

typedef struct taker {
    tb_bucket *bucket;
    int taken;
} taker;

static void *take_many(void *argument)
{
    taker *self = argument;
    long long retry;
    for (int i = 0; i < TRIES; i++)
        self->taken += tb_take(self->bucket, 0, &retry);
    return NULL;
}

/* Threads at one instant share the burst exactly: no token is taken twice. */
static void test_threads_share_the_burst(void **state)
{
    (void)state;
    tb_bucket bucket;
    assert_int_equal(tb_init(&bucket, (tb_rate){5, 1000, 777}, 0), 0);
    pthread_t threads[THREADS];
    taker takers[THREADS];
    for (int i = 0; i < THREADS; i++) {
        takers[i] = (taker){&bucket, 0};
        assert_int_equal(pthread_create(&threads[i], NULL, take_many, &takers[i]), 0);
    }
    int total = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        total += takers[i].taken;
    }
    assert_int_equal(total, 777);
    tb_destroy(&bucket);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_then_refused_with_wait),
        cmocka_unit_test(test_refill_keeps_fractions_and_caps_at_burst),
        cmocka_unit_test(test_clock_going_back_adds_nothing),
        cmocka_unit_test(test_largest_rates_do_not_overflow),
        cmocka_unit_test(test_give_back),
        cmocka_unit_test(test_threads_share_the_burst),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
