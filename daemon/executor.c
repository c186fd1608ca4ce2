/* SPDX-License-Identifier: MIT */
/*
 * Worker pool: one mutex, one condition variable, one intrusive FIFO. Submitting wakes a worker
 * only when one sleeps. (Idle workers do not spin: measured on two cores, a spinning worker
 * takes the core the reader and the client need, and ping-pong latency doubled.)
 */
#include "executor.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct executor {
    pthread_mutex_t lock;
    pthread_cond_t work;
    exec_job *head;
    exec_job *tail;
    bool stopping;
    size_t sleepers; /* workers waiting on work: only then does submit signal */
    size_t count;
    pthread_t threads[];
};

static void *worker_main(void *argument)
{
    executor *pool = argument;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
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
    if (pool->sleepers > 0)
        pthread_cond_signal(&pool->work);
    pthread_mutex_unlock(&pool->lock);
}

void exec_submit_chain(executor *pool, exec_job *first, exec_job *last, size_t count)
{
    if (count == 0)
        return;
    last->next = NULL;
    pthread_mutex_lock(&pool->lock);
    if (pool->tail)
        pool->tail->next = first;
    else
        pool->head = first;
    pool->tail = last;
    if (pool->sleepers >= count)
        for (size_t i = 0; i < count; i++)
            pthread_cond_signal(&pool->work);
    else if (pool->sleepers > 0)
        pthread_cond_broadcast(&pool->work);
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
