/* SPDX-License-Identifier: MIT */
/*
 * A fixed pool of worker threads taking jobs from one FIFO queue. Jobs are intrusive (the
 * caller embeds an exec_job in its own structure), so submitting allocates nothing.
 */
#ifndef RPCD_EXECUTOR_H
#define RPCD_EXECUTOR_H

#include <stdbool.h>
#include <stddef.h>

typedef struct exec_job exec_job;
struct exec_job {
    void (*run)(exec_job *job); /* called on a worker thread; may free the job */
    exec_job *next;             /* the queue's link; the executor's while queued */
};

typedef struct executor executor;

/*
 * Makes a pool of at most workers threads (at least 1). None starts now; one starts, on the
 * submitting thread, whenever a submit leaves more jobs waiting than free workers: a server that
 * never has two calls at once never pays for a second thread. When a thread cannot be started,
 * the pool logs a warning, never tries again, and works with those it has; with none at all,
 * every submit runs what is queued on the submitting thread before it returns, so that no job is
 * ever left in the queue. Returns 0 and *out (new), or -1 when memory runs out.
 */
int exec_new(size_t workers, executor **out);

/* Queues job (borrowed until its run starts); may start a worker (see exec_new). Thread-safe. */
void exec_submit(executor *pool, exec_job *job);

/*
 * Queues count jobs linked through their next members, first to last, with one lock and one
 * wake-up round: the items of a batch arrive together. Thread-safe.
 */
void exec_submit_chain(executor *pool, exec_job *first, exec_job *last, size_t count);

/* Runs every job already queued, then stops and joins the workers, and frees the pool. */
void exec_free(executor *pool);

/*
 * Takes every job still queued out of the pool: *out is the first (borrowed back by the caller,
 * linked through next, NULL-terminated; NULL when none waited). No worker will run them. With
 * from_signal, only tries the lock, for a signal handler: returns -1 when it is taken. Returns 0.
 */
int exec_take_queued(executor *pool, bool from_signal, exec_job **out);

/*
 * Called (on a submitting thread, outside the pool's lock) when jobs have waited behind workers
 * that were all held for after_ms without a job ending: held workers, waiting jobs. Once a stall;
 * a job that ends starts the count again.
 */
typedef void (*exec_stall_fn)(void *context, size_t held, size_t waiting);
void exec_set_stall_hook(executor *pool, int after_ms, exec_stall_fn hook, void *context);

/* The number of worker threads started so far. Thread-safe. */
size_t exec_workers(executor *pool);

#endif
