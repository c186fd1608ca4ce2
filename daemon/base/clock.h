/* SPDX-License-Identifier: MIT */
/*
 * The one clock rpcd measures waits with: monotonic milliseconds, which a change of the system
 * time does not move.
 */
#ifndef RPCD_CLOCK_H
#define RPCD_CLOCK_H

#include <time.h>

/* Milliseconds on CLOCK_MONOTONIC. Async-signal-safe (clock_gettime is). */
static inline long long clock_now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/*
 * The time ms (a clock_now_ms value) as a timespec on CLOCK_MONOTONIC: the end of a wait on a
 * condition made with that clock (pthread_cond_timedwait), or of a monotonic timer.
 */
static inline struct timespec clock_timespec_of_ms(long long ms)
{
    return (struct timespec){(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
}

/* Microseconds on CLOCK_MONOTONIC, for durations worth reporting below a millisecond. */
static inline long long clock_now_us(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000;
}

#endif
