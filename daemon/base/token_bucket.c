/* SPDX-License-Identifier: MIT */
/*
 * The token bucket of rate limits: refilled by the time that passed since it was last looked
 * at, so that no thread ticks it; one lock per bucket.
 */
#include "base/token_bucket.h"

#include "base/lock.h"

int tb_init(tb_bucket *bucket, tb_rate rate, long long now_ms)
{
    if (pthread_mutex_init(&bucket->lock, NULL) != 0)
        return -1;
    bucket->rate = rate;
    bucket->milli_tokens = (uint64_t)rate.burst * 1000;
    bucket->refilled_ms = now_ms;
    return 0;
}

void tb_destroy(tb_bucket *bucket)
{
    pthread_mutex_destroy(&bucket->lock);
}

/* Brings the bucket up to now_ms. Lock held. */
static void refill(tb_bucket *bucket, long long now_ms)
{
    uint64_t full = (uint64_t)bucket->rate.burst * 1000;
    if (now_ms <= bucket->refilled_ms)
        return; /* no time passed, or the clock went back: nothing added */
    uint64_t elapsed = (uint64_t)(now_ms - bucket->refilled_ms);
    uint64_t per_period = (uint64_t)bucket->rate.count * 1000;
    /* The time that fills what is missing: past it the bucket is full, and below it the product
     * below is at most what is missing times the period, which no bound makes overflow. */
    uint64_t missing = full - bucket->milli_tokens;
    uint64_t to_fill = (missing * bucket->rate.period_ms + per_period - 1) / per_period;
    if (elapsed >= to_fill) {
        bucket->milli_tokens = full;
        bucket->refilled_ms = now_ms;
        return;
    }
    /* Only the time the thousandths added stand for is spent: the rest counts next time, so
     * that looking often loses nothing to rounding. */
    uint64_t added = elapsed * per_period / bucket->rate.period_ms;
    bucket->milli_tokens += added;
    bucket->refilled_ms +=
        (long long)((added * bucket->rate.period_ms + per_period - 1) / per_period);
}

bool tb_take(tb_bucket *bucket, long long now_ms, long long *retry_ms)
{
    lock_take(&bucket->lock);
    refill(bucket, now_ms);
    bool taken = bucket->milli_tokens >= 1000;
    if (taken) {
        bucket->milli_tokens -= 1000;
    } else {
        /* The time the missing thousandths take to come, rounded up. */
        uint64_t missing = 1000 - bucket->milli_tokens;
        uint64_t per = (uint64_t)bucket->rate.count * 1000;
        /* From refilled_ms, which the time not yet turned into tokens lies after. */
        long long wait = (long long)((missing * bucket->rate.period_ms + per - 1) / per) -
                         (now_ms > bucket->refilled_ms ? now_ms - bucket->refilled_ms : 0);
        *retry_ms = wait > 0 ? wait : 1;
    }
    lock_release(&bucket->lock);
    return taken;
}

void tb_give_back(tb_bucket *bucket)
{
    lock_take(&bucket->lock);
    uint64_t full = (uint64_t)bucket->rate.burst * 1000;
    bucket->milli_tokens = bucket->milli_tokens + 1000 >= full ? full : bucket->milli_tokens + 1000;
    lock_release(&bucket->lock);
}
