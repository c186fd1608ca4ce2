/* SPDX-License-Identifier: MIT */
/*
 * Worker pool: one mutex, one intrusive FIFO, and a stack of sleeping workers, each waiting on
 * its own semaphore. Submitting wakes exactly the workers it needs, after unlocking. (Idle
 * workers do not spin: on two cores, a spinning worker takes the core the reader and the client
 * need; bench/README.md, "Figures behind design choices".)
 */
#include "base/executor.h"

#include "base/clock.h"
#include "base/crash_report.h"
#include "base/log.h"
#include "base/signals.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * A worker waiting for work. A semaphore rather than a condition variable: a thread woken from
 * pthread_cond_wait takes the mutex back marked contended, so every call paid more futex system
 * calls on its way to the handler (bench/README.md, "Figures behind design choices").
 */
typedef struct sleeper {
    sem_t wake;
    struct sleeper *next;
} sleeper;

struct executor {
    pthread_mutex_t lock;
    sleeper *sleeping;      /* workers waiting for work; whoever pops one posts its semaphore */
    pthread_cond_t started; /* a thread being started is in threads[], or failed */
    exec_job *head;
    exec_job *tail;
    bool stopping;
    size_t queued;   /* jobs in the queue */
    size_t busy;     /* workers running a job */
    size_t sleepers; /* the length of sleeping */
    size_t starting; /* workers a submitter is starting right now */
    size_t count;    /* workers started: threads[0..count) */
    size_t wanted;   /* the most workers */
    size_t done;     /* jobs run to their end so far */
    /* Jobs waiting while every worker is held: told once, after stall_after_ms without a job
     * ending (see exec_set_stall_hook). */
    exec_stall_fn stall_hook;
    void *stall_context;
    long long stall_after_ms;
    long long stall_since_ms; /* 0: not stalled */
    size_t stall_done;        /* done when the stall began */
    bool stall_told;
    pthread_t threads[];
};

static void *worker_main(void *argument)
{
    executor *pool = argument;
    crash_report_thread_start();
    sleeper self;
    sem_init(&self.wake, 0, 0);
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->head && !pool->stopping) {
            self.next = pool->sleeping;
            pool->sleeping = &self;
            pool->sleepers++;
            pthread_mutex_unlock(&pool->lock);
            while (sem_wait(&self.wake) != 0 && errno == EINTR)
                ;
            pthread_mutex_lock(&pool->lock); /* popped by whoever posted */
        }
        exec_job *job = pool->head;
        if (!job)
            break; /* stopping, and nothing left to run */
        pool->head = job->next;
        if (!pool->head)
            pool->tail = NULL;
        pool->queued--;
        pool->busy++;
        pthread_mutex_unlock(&pool->lock);
        job->run(job);
        pthread_mutex_lock(&pool->lock);
        pool->busy--;
        pool->done++;
    }
    pthread_mutex_unlock(&pool->lock);
    sem_destroy(&self.wake);
    return NULL;
}

/* Takes up to count sleeping workers off the stack, to be woken after unlocking. Lock held. */
static sleeper *pop_sleepers(executor *pool, size_t count)
{
    sleeper *popped = NULL;
    while (count-- > 0 && pool->sleeping) {
        sleeper *s = pool->sleeping;
        pool->sleeping = s->next;
        pool->sleepers--;
        s->next = popped;
        popped = s;
    }
    return popped;
}

/* Wakes workers popped by pop_sleepers; each may run, take the lock and exit at once. */
static void wake_all(sleeper *popped)
{
    while (popped) {
        sleeper *s = popped;
        popped = s->next; /* read before the post: s lives on its worker's stack */
        sem_post(&s->wake);
    }
}

/*
 * How many workers to start so that no job waits for a worker while fewer than wanted run: the
 * caller starts them (starting counts them meanwhile). Lock held.
 */
static size_t workers_to_start(executor *pool)
{
    size_t running = pool->count + pool->starting;
    size_t free_workers = running - pool->busy;
    if (pool->stopping || pool->queued <= free_workers || running >= pool->wanted)
        return 0;
    size_t missing = pool->queued - free_workers;
    size_t room = pool->wanted - running;
    size_t start = missing < room ? missing : room;
    pool->starting += start;
    return start;
}

/*
 * Starts one worker, outside the lock: creating a thread can take milliseconds on a loaded
 * machine (bench/README.md, "Figures behind design choices"), which workers must not wait for.
 * Returns 0, or -1 when the thread could not start: the pool then keeps the workers it has and
 * never tries again (a limit on threads or memory does not go away by itself, and every call
 * would pay for the attempt).
 */
static int grow(executor *pool)
{
    /* Workers take no signal sent to the process (a thread inherits the mask of the thread that
     * starts it): the stop signals go to the reader or a plugin's own threads, and a handler's
     * system calls on a worker are never interrupted by them. Faults stay deliverable. */
    sigset_t blocked, previous;
    sig_all_but_faults(&blocked);
    pthread_sigmask(SIG_SETMASK, &blocked, &previous);
    pthread_t thread;
    int error = pthread_create(&thread, NULL, worker_main, pool);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    pthread_mutex_lock(&pool->lock);
    if (error == 0) {
        pool->threads[pool->count++] = thread;
    } else {
        log_message(LOG_WARNING, "cannot start worker %zu of %zu: %s%s", pool->count + 1,
                    pool->wanted, strerror(error),
                    pool->count == 0 ? " (handlers run on the threads that queue them)" : "");
        pool->wanted = pool->count + pool->starting - 1;
    }
    pool->starting--;
    pthread_cond_broadcast(&pool->started);
    pthread_mutex_unlock(&pool->lock);
    return error == 0 ? 0 : -1;
}

/* Gives back starts a submitter had counted and will not make. */
static void forgo_starts(executor *pool, size_t count)
{
    if (count == 0)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->starting -= count;
    pool->wanted -= count;
    pthread_cond_broadcast(&pool->started);
    pthread_mutex_unlock(&pool->lock);
}

/*
 * No worker runs and none is being started, so none ever will: the submitting thread runs what
 * waits, so that no job is stranded in a queue nobody takes from. Any submitter that finds the
 * pool so runs the queue, however many starts failed and whoever failed them.
 */
static void run_here(executor *pool)
{
    pthread_mutex_lock(&pool->lock);
    while (pool->count == 0 && pool->starting == 0 && pool->head) {
        exec_job *job = pool->head;
        pool->head = job->next;
        if (!pool->head)
            pool->tail = NULL;
        pool->queued--;
        pthread_mutex_unlock(&pool->lock);
        job->run(job);
        pthread_mutex_lock(&pool->lock);
    }
    pthread_mutex_unlock(&pool->lock);
}

int exec_new(size_t workers, executor **out)
{
    if (workers == 0)
        workers = 1;
    executor *pool = calloc(1, sizeof *pool + workers * sizeof(pthread_t));
    if (!pool)
        return -1;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->started, NULL);
    /* None yet: the first job starts the first worker, so that a server whose calls all run on
     * the reader (quick methods) never starts one, and start-up does not wait for a thread. */
    pool->wanted = workers;
    *out = pool;
    return 0;
}

/*
 * Whether a submit finds jobs waiting behind workers that are all held, no job having ended for
 * stall_after_ms: then the hook is to be called, once a stall. The clock is read only while the
 * pool is full. Lock held.
 */
static bool stall_to_tell(executor *pool)
{
    bool full = pool->count > 0 && pool->starting == 0 && pool->count >= pool->wanted &&
                pool->busy >= pool->count && pool->queued > 0;
    if (!pool->stall_hook || !full) {
        pool->stall_since_ms = 0;
        return false;
    }
    long long now = clock_now_ms();
    if (pool->stall_since_ms == 0 || pool->stall_done != pool->done) {
        pool->stall_since_ms = now;
        pool->stall_done = pool->done;
        pool->stall_told = false;
        return false;
    }
    if (pool->stall_told || now - pool->stall_since_ms < pool->stall_after_ms)
        return false;
    pool->stall_told = true;
    return true;
}

void exec_set_stall_hook(executor *pool, int after_ms, exec_stall_fn hook, void *context)
{
    pthread_mutex_lock(&pool->lock);
    pool->stall_hook = hook;
    pool->stall_context = context;
    pool->stall_after_ms = after_ms;
    pthread_mutex_unlock(&pool->lock);
}

void exec_submit(executor *pool, exec_job *job)
{
    exec_submit_chain(pool, job, job, 1);
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
    pool->queued += count;
    sleeper *woken = pop_sleepers(pool, count);
    size_t start = workers_to_start(pool);
    bool stranded = pool->count + pool->starting == 0; /* every start has failed */
    bool stalled = stall_to_tell(pool);
    size_t held = pool->busy, waiting = pool->queued;
    pthread_mutex_unlock(&pool->lock);
    if (stalled)
        pool->stall_hook(pool->stall_context, held, waiting);
    /* Woken after the unlock: a worker woken under the lock would at once block on it. */
    wake_all(woken);
    for (size_t i = 0; i < start; i++) {
        if (grow(pool) != 0) {
            forgo_starts(pool, start - i - 1); /* the next would fail the same way */
            stranded = true;                   /* perhaps: run_here looks */
            break;
        }
    }
    if (stranded)
        run_here(pool);
}

void exec_free(executor *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = true;
    sleeper *woken = pop_sleepers(pool, SIZE_MAX);
    while (pool->starting > 0)
        pthread_cond_wait(&pool->started, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
    wake_all(woken);
    for (size_t i = 0; i < pool->count; i++)
        pthread_join(pool->threads[i], NULL);
    pthread_cond_destroy(&pool->started);
    pthread_mutex_destroy(&pool->lock);
    free(pool);
}

int exec_take_queued(executor *pool, bool from_signal, exec_job **out)
{
    /* A signal handler may have interrupted a holder of the lock on its own thread: it tries. */
    if (from_signal ? pthread_mutex_trylock(&pool->lock) != 0
                    : pthread_mutex_lock(&pool->lock) != 0)
        return -1;
    *out = pool->head;
    pool->head = pool->tail = NULL;
    pool->queued = 0;
    pthread_mutex_unlock(&pool->lock);
    return 0;
}

size_t exec_workers(executor *pool)
{
    pthread_mutex_lock(&pool->lock);
    size_t started = pool->count;
    pthread_mutex_unlock(&pool->lock);
    return started;
}
