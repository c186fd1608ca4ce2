/* SPDX-License-Identifier: MIT */
/*
 * A token bucket: a rate of calls with a burst, on a clock the caller passes in (monotonic
 * milliseconds in rpcd, any numbers in tests), safe to take from any thread.
 */
#ifndef RPCD_TOKEN_BUCKET_H
#define RPCD_TOKEN_BUCKET_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* count calls per period_ms, and at most burst at once. */
typedef struct tb_rate {
    uint32_t count;     /* 1.. */
    uint32_t period_ms; /* 1.. */
    uint32_t burst;     /* 1..: the bucket's size */
} tb_rate;

/*
 * Tokens are kept in thousandths, so that a refill of less than one token per millisecond is not
 * lost to rounding. Guarded by lock.
 */
typedef struct tb_bucket {
    pthread_mutex_t lock;
    tb_rate rate;
    uint64_t milli_tokens; /* at most burst * 1000 */
    long long refilled_ms; /* the clock when milli_tokens was last brought up to date */
} tb_bucket;

/* A full bucket at now_ms. Returns 0, or -1 when its lock cannot be made. */
int tb_init(tb_bucket *bucket, tb_rate rate, long long now_ms);
void tb_destroy(tb_bucket *bucket);

/*
 * Takes one token at now_ms: returns true, or false with *retry_ms (at least 1) the wait until
 * one is there. A clock that goes back is read as no time passing. Thread-safe.
 */
bool tb_take(tb_bucket *bucket, long long now_ms, long long *retry_ms);

/* Gives back a token tb_take gave (the call it admitted was refused after all). Thread-safe. */
void tb_give_back(tb_bucket *bucket);

#endif
