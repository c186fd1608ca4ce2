/* SPDX-License-Identifier: MIT */
/*
 * A fixed pool of worker threads taking jobs from one FIFO queue. Jobs are intrusive (the
 * caller embeds an exec_job in its own structure), so submitting allocates nothing.
 */
#ifndef RPCD_EXECUTOR_H
#define RPCD_EXECUTOR_H

#include <stddef.h>

typedef struct exec_job exec_job;
struct exec_job {
    void (*run)(exec_job *job); /* called on a worker thread; may free the job */
    exec_job *next;             /* the queue's link; the executor's while queued */
};

typedef struct executor executor;

/* Starts workers threads (at least 1). Returns 0 and *out (new), or -1. */
int exec_new(size_t workers, executor **out);

/* Queues job (borrowed until its run starts). Thread-safe. */
void exec_submit(executor *pool, exec_job *job);

/*
 * Queues count jobs linked through their next members, first to last, with one lock and one
 * wake-up round: the items of a batch arrive together. Thread-safe.
 */
void exec_submit_chain(executor *pool, exec_job *first, exec_job *last, size_t count);

/* Runs every job already queued, then stops and joins the workers, and frees the pool. */
void exec_free(executor *pool);

/* The number of worker threads. */
size_t exec_workers(const executor *pool);

#endif
