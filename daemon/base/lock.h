/* SPDX-License-Identifier: MIT */
/*
 * Mutexes that cost nothing while the process has a single thread: a server whose methods are
 * all quick never starts one, and a call then takes a dozen locks for no one else's sake.
 */
#ifndef RPCD_LOCK_H
#define RPCD_LOCK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define LOCK_KNOWS_SINGLE_THREAD 1
#endif
#endif

/* Set for good once the process has been seen with a second thread. */
extern atomic_bool lock_threads_seen;

/*
 * True while the process has never had a second thread. The C library clears the flag it reads
 * when a thread is created, as it does for its own locks (malloc, stdio); only this thread can
 * create one then, and it never does so between a lock and its unlock, so both see the same
 * answer. Once false it stays false, even should the C library set its flag again when threads
 * end: a lock taken for real is always released for real.
 */
static inline bool lock_single_threaded(void)
{
#ifdef LOCK_KNOWS_SINGLE_THREAD
    if (atomic_load_explicit(&lock_threads_seen, memory_order_relaxed))
        return false;
    if (__libc_single_threaded)
        return true;
    atomic_store_explicit(&lock_threads_seen, true, memory_order_relaxed);
#endif
    return false;
}

/*
 * pthread_mutex_lock, trylock and unlock, skipped while single-threaded. Never wait on a
 * condition variable with a mutex taken this way (take it with pthread_mutex_lock for that),
 * and never start a thread while holding one.
 */
static inline void lock_take(pthread_mutex_t *mutex)
{
    if (!lock_single_threaded())
        pthread_mutex_lock(mutex);
}

static inline int lock_try(pthread_mutex_t *mutex)
{
    return lock_single_threaded() ? 0 : pthread_mutex_trylock(mutex);
}

static inline void lock_release(pthread_mutex_t *mutex)
{
    if (!lock_single_threaded())
        pthread_mutex_unlock(mutex);
}

/*
 * lock_try, again every millisecond until *left_ms runs out (what is left stays there for the
 * next lock). For a signal handler: a lock whose holder may be stuck is never waited on.
 * Returns 0 with the lock taken, or -1.
 */
static inline int lock_try_for(pthread_mutex_t *mutex, int *left_ms)
{
    for (;;) {
        if (lock_try(mutex) == 0)
            return 0;
        if (*left_ms <= 0)
            return -1;
        struct timespec pause = {0, 1000 * 1000};
        nanosleep(&pause, NULL);
        --*left_ms;
    }
}

#endif
