/* SPDX-License-Identifier: MIT */
/*
 * Worker pool: one mutex, one condition variable, one intrusive FIFO. A worker that runs out
 * of jobs spins briefly before it sleeps, so that the next request of a client waiting for each
 * answer finds it awake: waking a sleeping thread costs more than the call itself.
 */
#include "executor.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

/* How long one idle worker keeps looking for the next job before it sleeps. */
enum { SPIN_NANOSECONDS = 50 * 1000 };

struct executor {
    pthread_mutex_t lock;
    pthread_cond_t work;
    exec_job *head;
    exec_job *tail;
    bool stopping;
    size_t sleepers;      /* workers waiting on work: only then does submit signal */
    atomic_size_t queued; /* jobs in the queue, read without the lock while spinning */
    atomic_bool spinning; /* one spinner at most: the others would take cores from the reader */
    size_t count;
    pthread_t threads[];
};

static long long elapsed_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1000000000LL + (now.tv_nsec - start->tv_nsec);
}

/* Waits, without the lock, for a job to be queued: true when one was, false after the spin. */
static bool spin_for_job(executor *pool)
{
    bool expected = false;
    if (!atomic_compare_exchange_strong(&pool->spinning, &expected, true))
        return false;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    bool found = false;
    for (unsigned round = 0; !found; round++) {
        found = atomic_load_explicit(&pool->queued, memory_order_relaxed) > 0;
        if (!found && round % 64 == 63 && elapsed_since(&start) > SPIN_NANOSECONDS)
            break;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    atomic_store(&pool->spinning, false);
    return found;
}

static void *worker_main(void *argument)
{
    executor *pool = argument;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        if (!pool->head && !pool->stopping) {
            pthread_mutex_unlock(&pool->lock);
            spin_for_job(pool);
            pthread_mutex_lock(&pool->lock);
        }
        while (!pool->head && !pool->stopping) {
            pool->sleepers++;
            pthread_cond_wait(&pool->work, &pool->lock);
            pool->sleepers--;
        }
        exec_job *job = pool->head;
        if (!job)
            break; /* stopping, and nothing left to run */
        pool->head = job->next;
        if (!pool->head)
            pool->tail = NULL;
        atomic_fetch_sub_explicit(&pool->queued, 1, memory_order_relaxed);
        pthread_mutex_unlock(&pool->lock);
        job->run(job);
        pthread_mutex_lock(&pool->lock);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

int exec_new(size_t workers, executor **out)
{
    if (workers == 0)
        workers = 1;
    executor *pool = calloc(1, sizeof *pool + workers * sizeof(pthread_t));
    if (!pool)
        return -1;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->work, NULL);
    for (; pool->count < workers; pool->count++) {
        if (pthread_create(&pool->threads[pool->count], NULL, worker_main, pool) != 0) {
            exec_free(pool);
            return -1;
        }
    }
    *out = pool;
    return 0;
}

void exec_submit(executor *pool, exec_job *job)
{
    job->next = NULL;
    pthread_mutex_lock(&pool->lock);
    if (pool->tail)
        pool->tail->next = job;
    else
        pool->head = job;
    pool->tail = job;
    atomic_fetch_add_explicit(&pool->queued, 1, memory_order_relaxed);
    if (pool->sleepers > 0)
        pthread_cond_signal(&pool->work);
    pthread_mutex_unlock(&pool->lock);
}

void exec_free(executor *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = true;
    pthread_cond_broadcast(&pool->work);
    pthread_mutex_unlock(&pool->lock);
    for (size_t i = 0; i < pool->count; i++)
        pthread_join(pool->threads[i], NULL);
    pthread_cond_destroy(&pool->work);
    pthread_mutex_destroy(&pool->lock);
    free(pool);
}

size_t exec_workers(const executor *pool)
{
    return pool->count;
}
