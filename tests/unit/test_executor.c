/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the worker pool: workers start as jobs wait, up to the number asked for, and no
 * sooner; jobs run in submission order on one worker; freeing runs what is queued; a pool whose
 * threads cannot start still runs every job; workers take no signals. pthread_create is wrapped
 * (-Wl,--wrap, see meson.build) so that a test can make thread starts fail.
 */
#include "base/executor.h"
#include "test_time.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "log_capture.h"

enum { WAIT_SECONDS = 10 };

/* Jobs that wait until `expected` of them are inside run at the same time. */
typedef struct meeting {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    size_t arrived;
    size_t expected;
    size_t met; /* jobs that saw everyone arrive before the deadline */
} meeting;

typedef struct meet_job {
    exec_job job;
    meeting *meeting;
} meet_job;

static void meet(exec_job *job)
{
    meeting *m = ((meet_job *)job)->meeting;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += test_time_ms(WAIT_SECONDS * 1000) / 1000;
    pthread_mutex_lock(&m->lock);
    m->arrived++;
    pthread_cond_broadcast(&m->changed);
    int status = 0;
    while (m->arrived < m->expected && status != ETIMEDOUT)
        status = pthread_cond_timedwait(&m->changed, &m->lock, &deadline);
    if (m->arrived >= m->expected)
        m->met++;
    pthread_mutex_unlock(&m->lock);
}

static void test_every_worker_runs_at_once(void **state)
{
    (void)state;
    enum { WORKERS = 4 };
    meeting m = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, WORKERS, 0};
    meet_job jobs[WORKERS];
    executor *pool = NULL;
    assert_int_equal(exec_new(WORKERS, &pool), 0);
    for (size_t i = 0; i < WORKERS; i++) {
        jobs[i] = (meet_job){{meet, NULL}, &m};
        exec_submit(pool, &jobs[i].job);
    }
    exec_free(pool);
    assert_int_equal(m.met, WORKERS);
}

static void test_chain_meets_too(void **state)
{
    (void)state;
    enum { WORKERS = 3 };
    meeting m = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, WORKERS, 0};
    meet_job jobs[WORKERS];
    for (size_t i = 0; i < WORKERS; i++)
        jobs[i] = (meet_job){{meet, i + 1 < WORKERS ? &jobs[i + 1].job : NULL}, &m};
    executor *pool = NULL;
    assert_int_equal(exec_new(WORKERS, &pool), 0);
    exec_submit_chain(pool, &jobs[0].job, &jobs[WORKERS - 1].job, WORKERS);
    exec_free(pool);
    assert_int_equal(m.met, WORKERS);
}

/* Records the order jobs ran in. */
typedef struct order_job {
    exec_job job;
    size_t number;
    size_t *log;
    size_t *logged;
} order_job;

static void record(exec_job *job)
{
    order_job *o = (order_job *)job;
    o->log[(*o->logged)++] = o->number;
}

static void test_one_worker_runs_in_order_and_free_drains(void **state)
{
    (void)state;
    enum { JOBS = 1000 };
    static order_job jobs[JOBS];
    static size_t log[JOBS];
    size_t logged = 0;
    executor *pool = NULL;
    assert_int_equal(exec_new(1, &pool), 0);
    for (size_t i = 0; i < JOBS; i++) {
        jobs[i] = (order_job){{record, NULL}, i, log, &logged};
        exec_submit(pool, &jobs[i].job);
    }
    exec_free(pool); /* returns once every queued job has run */
    assert_int_equal(logged, JOBS);
    for (size_t i = 0; i < JOBS; i++)
        assert_int_equal(log[i], i);
}

/* A job that says when it is done. */
typedef struct done_job {
    exec_job job;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool done;
} done_job;

static void mark_done(exec_job *job)
{
    done_job *d = (done_job *)job;
    pthread_mutex_lock(&d->lock);
    d->done = true;
    pthread_cond_signal(&d->changed);
    pthread_mutex_unlock(&d->lock);
}

static void wait_done(done_job *d)
{
    pthread_mutex_lock(&d->lock);
    while (!d->done)
        pthread_cond_wait(&d->changed, &d->lock);
    pthread_mutex_unlock(&d->lock);
}

/* What a job saw of its thread's signal mask. */
typedef struct mask_job {
    done_job done;
    bool term_blocked, int_blocked, urg_blocked, segv_blocked;
} mask_job;

static void note_mask(exec_job *job)
{
    mask_job *m = (mask_job *)job;
    sigset_t mask;
    pthread_sigmask(SIG_SETMASK, NULL, &mask);
    m->term_blocked = sigismember(&mask, SIGTERM) == 1;
    m->int_blocked = sigismember(&mask, SIGINT) == 1;
    m->urg_blocked = sigismember(&mask, SIGURG) == 1;
    m->segv_blocked = sigismember(&mask, SIGSEGV) == 1;
    mark_done(job);
}

/*
 * Workers take no signal sent to the process, whatever the mask of the thread that started
 * them; faults are not blocked. The submitting thread's own mask is left as it was.
 */
static void test_workers_start_with_signals_blocked(void **state)
{
    (void)state;
    sigset_t before;
    pthread_sigmask(SIG_SETMASK, NULL, &before);
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL);

    executor *pool;
    assert_int_equal(exec_new(1, &pool), 0);
    mask_job job = {{{note_mask, NULL}, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false},
                    false,
                    false,
                    false,
                    true};
    exec_submit(pool, &job.done.job);
    wait_done(&job.done);
    exec_free(pool);
    assert_true(job.term_blocked);
    assert_true(job.int_blocked);
    assert_true(job.urg_blocked);
    assert_false(job.segv_blocked);

    sigset_t after;
    pthread_sigmask(SIG_SETMASK, NULL, &after);
    assert_int_equal(sigismember(&after, SIGTERM), 0);
    pthread_sigmask(SIG_SETMASK, &before, NULL);
}

static void test_zero_workers_means_one_and_count_reaches_wanted(void **state)
{
    (void)state;
    executor *pool = NULL;
    assert_int_equal(exec_new(0, &pool), 0);
    assert_int_equal(exec_workers(pool), 0); /* none before the first job */
    done_job first = {
        {mark_done, NULL}, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
    exec_submit(pool, &first.job);
    wait_done(&first);
    assert_int_equal(exec_workers(pool), 1);
    exec_free(pool);

    enum { WORKERS = 5 };
    meeting m = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, WORKERS, 0};
    meet_job jobs[WORKERS];
    assert_int_equal(exec_new(WORKERS, &pool), 0);
    for (size_t i = 0; i < WORKERS; i++) {
        jobs[i] = (meet_job){{meet, NULL}, &m};
        exec_submit(pool, &jobs[i].job);
    }
    /* Once all have met, every worker has started. */
    pthread_mutex_lock(&m.lock);
    while (m.arrived < WORKERS)
        pthread_cond_wait(&m.changed, &m.lock);
    pthread_mutex_unlock(&m.lock);
    assert_int_equal(exec_workers(pool), WORKERS);
    exec_free(pool);
    assert_int_equal(m.met, WORKERS);
}

/* A pool starts no worker until a job comes, and a lone job starts one: not the most allowed. */
static void test_workers_start_only_when_jobs_wait(void **state)
{
    (void)state;
    executor *pool = NULL;
    assert_int_equal(exec_new(4, &pool), 0);
    assert_int_equal(exec_workers(pool), 0);
    done_job d = {{mark_done, NULL}, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
    exec_submit(pool, &d.job);
    wait_done(&d);
    assert_int_equal(exec_workers(pool), 1);
    exec_free(pool);
}

/* Freed at once, and freed while a submit may be starting a worker: nothing hangs or leaks. */
static void test_free_right_after_new(void **state)
{
    (void)state;
    for (int round = 0; round < 50; round++) {
        executor *pool = NULL;
        assert_int_equal(exec_new(4, &pool), 0);
        exec_free(pool);
    }
    exec_free(NULL);
}

/* Thread starts pthread_create still allows; -1: all of them. */
static atomic_int starts_allowed = -1;
/* Every call of pthread_create, allowed or not. */
static atomic_int start_attempts;

int __real_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                          void *argument);
int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                          void *argument);
int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                          void *argument)
{
    atomic_fetch_add(&start_attempts, 1);
    int allowed = atomic_load(&starts_allowed);
    while (allowed > 0 && !atomic_compare_exchange_weak(&starts_allowed, &allowed, allowed - 1))
        ;
    if (allowed == 0)
        return EAGAIN;
    return __real_pthread_create(thread, attr, start, argument);
}

/* Jobs that note the thread they ran on; the first of them may wait for a gate to open. */
typedef struct gate {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool open;
    size_t finished;
} gate;

/* Opens the gate, then waits until at least finished jobs have gone through it. */
static void open_gate(gate *g, size_t finished)
{
    pthread_mutex_lock(&g->lock);
    g->open = true;
    pthread_cond_broadcast(&g->changed);
    while (g->finished < finished)
        pthread_cond_wait(&g->changed, &g->lock);
    pthread_mutex_unlock(&g->lock);
}

typedef struct thread_job {
    exec_job job;
    gate *gate;
    bool wait_for_gate;
    pthread_t ran_on;
} thread_job;

static void note_thread(exec_job *job)
{
    thread_job *t = (thread_job *)job;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += test_time_ms(WAIT_SECONDS * 1000) / 1000;
    pthread_mutex_lock(&t->gate->lock);
    t->ran_on = pthread_self();
    while (t->wait_for_gate && !t->gate->open &&
           pthread_cond_timedwait(&t->gate->changed, &t->gate->lock, &deadline) != ETIMEDOUT)
        ;
    t->gate->finished++;
    pthread_cond_broadcast(&t->gate->changed);
    pthread_mutex_unlock(&t->gate->lock);
}

/* No thread can start at all: each submit runs its job on the submitting thread. */
static void test_no_thread_can_start_so_the_submitter_runs_jobs(void **state)
{
    (void)state;
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, true, 0};
    thread_job jobs[3];
    executor *pool = NULL;
    assert_int_equal(exec_new(2, &pool), 0);
    atomic_store(&starts_allowed, 0);
    for (size_t i = 0; i < 3; i++) {
        jobs[i] = (thread_job){{note_thread, NULL}, &g, false, pthread_self()};
        exec_submit(pool, &jobs[i].job);
        assert_int_equal(g.finished, i + 1); /* done before exec_submit returned */
        assert_true(pthread_equal(jobs[i].ran_on, pthread_self()));
    }
    assert_int_equal(exec_workers(pool), 0);
    exec_free(pool);
    atomic_store(&starts_allowed, -1);
}

/*
 * One thread starts and the next cannot: the pool goes on with the one, which runs every job, of
 * this round and of a later one, and the failed start is tried once, not at each later submit.
 */
static void test_pool_keeps_the_workers_it_could_start(void **state)
{
    (void)state;
    enum { JOBS = 4 };
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0};
    thread_job jobs[JOBS];
    executor *pool = NULL;
    assert_int_equal(exec_new(JOBS, &pool), 0);
    atomic_store(&starts_allowed, 1);
    atomic_store(&start_attempts, 0);
    log_capture capture;
    log_capture_start(&capture, LOG_WARNING);
    for (size_t i = 0; i < JOBS; i++) {
        /* The first holds the worker: each later submit wants another, which cannot start. */
        jobs[i] = (thread_job){{note_thread, NULL}, &g, i == 0, pthread_self()};
        exec_submit(pool, &jobs[i].job);
    }
    open_gate(&g, JOBS);
    /* The log names the worker that could not start, of how many, and why. */
    const char *logged = log_capture_end(&capture);
    assert_non_null(strstr(logged, "cannot start worker 2 of 4: "));
    assert_null(strstr(logged, "handlers run on the threads that queue them"));
    assert_int_equal(exec_workers(pool), 1);
    for (size_t i = 0; i < JOBS; i++) {
        assert_false(pthread_equal(jobs[i].ran_on, pthread_self()));
        assert_true(pthread_equal(jobs[i].ran_on, jobs[0].ran_on));
    }
    /* The one that started and the one that failed. */
    assert_int_equal(atomic_load(&start_attempts), 2);

    /* A later round, threads allowed again: still the one worker, and no new attempt. */
    atomic_store(&starts_allowed, -1);
    pthread_t worker = jobs[0].ran_on;
    pthread_mutex_lock(&g.lock);
    g.finished = 0;
    pthread_mutex_unlock(&g.lock);
    for (size_t i = 0; i < JOBS; i++) {
        jobs[i] = (thread_job){{note_thread, NULL}, &g, false, pthread_self()};
        exec_submit(pool, &jobs[i].job);
    }
    pthread_mutex_lock(&g.lock);
    while (g.finished < JOBS)
        pthread_cond_wait(&g.changed, &g.lock);
    pthread_mutex_unlock(&g.lock);
    for (size_t i = 0; i < JOBS; i++)
        assert_true(pthread_equal(jobs[i].ran_on, worker));
    assert_int_equal(exec_workers(pool), 1);
    assert_int_equal(atomic_load(&start_attempts), 2);
    exec_free(pool);
}

/*
 * No thread can start, and jobs come several at once (a batch): each start fails, and the jobs
 * must still run, on the submitting thread, before the submit returns. Only one start is tried:
 * after a failure the pool does not try the others of the round.
 */
static void test_no_thread_can_start_for_a_chain(void **state)
{
    (void)state;
    enum { JOBS = 3 };
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, true, 0};
    thread_job jobs[JOBS];
    for (size_t i = 0; i < JOBS; i++)
        jobs[i] = (thread_job){{note_thread, i + 1 < JOBS ? &jobs[i + 1].job : NULL}, &g, false, 0};
    executor *pool = NULL;
    assert_int_equal(exec_new(4, &pool), 0);
    atomic_store(&starts_allowed, 0);
    atomic_store(&start_attempts, 0);
    exec_submit_chain(pool, &jobs[0].job, &jobs[JOBS - 1].job, JOBS);
    assert_int_equal(g.finished, JOBS); /* done before exec_submit_chain returned */
    for (size_t i = 0; i < JOBS; i++)
        assert_true(pthread_equal(jobs[i].ran_on, pthread_self()));
    assert_int_equal(atomic_load(&start_attempts), 1);
    assert_int_equal(exec_workers(pool), 0);
    exec_free(pool);
    atomic_store(&starts_allowed, -1);
}

/*
 * Once a thread could not start, later submits do not try again: with a pool of four and no
 * thread allowed, twenty jobs one by one cost one attempt, and every job runs.
 */
static void test_failed_start_is_not_retried(void **state)
{
    (void)state;
    enum { JOBS = 20 };
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, true, 0};
    thread_job jobs[JOBS];
    executor *pool = NULL;
    assert_int_equal(exec_new(4, &pool), 0);
    atomic_store(&starts_allowed, 0);
    atomic_store(&start_attempts, 0);
    for (size_t i = 0; i < JOBS; i++) {
        jobs[i] = (thread_job){{note_thread, NULL}, &g, false, 0};
        exec_submit(pool, &jobs[i].job);
    }
    assert_int_equal(g.finished, JOBS);
    assert_int_equal(atomic_load(&start_attempts), 1);
    exec_free(pool);

    /* The same with one thread that starts: the second start fails once, and is not retried. */
    g.finished = 0;
    g.open = false;
    assert_int_equal(exec_new(4, &pool), 0);
    atomic_store(&starts_allowed, 1);
    atomic_store(&start_attempts, 0);
    for (size_t i = 0; i < JOBS; i++) {
        /* The first holds the one worker, so that each later job would want another. */
        jobs[i] = (thread_job){{note_thread, NULL}, &g, i == 0, 0};
        exec_submit(pool, &jobs[i].job);
    }
    open_gate(&g, JOBS);
    assert_int_equal(atomic_load(&start_attempts), 2);
    assert_int_equal(exec_workers(pool), 1);
    exec_free(pool);
    atomic_store(&starts_allowed, -1);
}

/*
 * Jobs taken out of the queue (a stop answers them itself) are handed back in order and never
 * run on a worker; a job already running is not among them.
 */
static void test_take_queued(void **state)
{
    (void)state;
    enum { JOBS = 4 };
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0};
    thread_job jobs[JOBS];
    executor *pool = NULL;
    assert_int_equal(exec_new(1, &pool), 0);
    for (size_t i = 0; i < JOBS; i++) {
        jobs[i] = (thread_job){{note_thread, NULL}, &g, i == 0, 0};
        exec_submit(pool, &jobs[i].job);
    }
    /* The first is running (it waits for the gate) once the worker has noted its thread. */
    for (int tries = 0; tries < test_time_ms(10000); tries++) {
        pthread_mutex_lock(&g.lock);
        bool running = !pthread_equal(jobs[0].ran_on, (pthread_t)0);
        pthread_mutex_unlock(&g.lock);
        if (running)
            break;
        struct timespec pause = {0, 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    exec_job *taken = NULL;
    assert_int_equal(exec_take_queued(pool, false, &taken), 0);
    for (size_t i = 1; i < JOBS; i++) {
        assert_ptr_equal(taken, &jobs[i].job);
        taken = taken->next;
    }
    assert_null(taken);
    assert_int_equal(exec_take_queued(pool, true, &taken), 0); /* nothing left */
    assert_null(taken);
    open_gate(&g, 0);
    exec_free(pool);
    assert_int_equal(g.finished, 1); /* only the one that was running */
}

/* Counts the stall hook's calls and what it was told. */
typedef struct stall_report {
    atomic_int calls;
    size_t held, waiting;
} stall_report;

static void note_stall(void *context, size_t held, size_t waiting)
{
    stall_report *report = context;
    report->held = held;
    report->waiting = waiting;
    atomic_fetch_add(&report->calls, 1);
}

/*
 * The stall hook: jobs waiting behind a held worker are told once, and only after the time
 * given has passed with no job ending; a job that ends starts the count again.
 */
static void test_stall_hook(void **state)
{
    (void)state;
    enum { JOBS = 6 };
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0};
    thread_job jobs[JOBS];
    stall_report report = {0, 0, 0};
    executor *pool = NULL;
    assert_int_equal(exec_new(1, &pool), 0);
    exec_set_stall_hook(pool, 50, note_stall, &report);
    jobs[0] = (thread_job){{note_thread, NULL}, &g, true, 0};
    exec_submit(pool, &jobs[0].job); /* holds the one worker */
    for (int tries = 0; tries < test_time_ms(10000); tries++) {
        pthread_mutex_lock(&g.lock);
        bool running = !pthread_equal(jobs[0].ran_on, (pthread_t)0);
        pthread_mutex_unlock(&g.lock);
        if (running)
            break;
        struct timespec pause = {0, 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    for (size_t i = 1; i < JOBS; i++)
        jobs[i] = (thread_job){{note_thread, NULL}, &g, false, 0};
    exec_submit(pool, &jobs[1].job); /* the stall begins */
    exec_submit(pool, &jobs[2].job);
    assert_int_equal(atomic_load(&report.calls), 0); /* too soon */
    struct timespec pause = {0, 80 * 1000 * 1000};
    nanosleep(&pause, NULL);
    exec_submit(pool, &jobs[3].job);
    assert_int_equal(atomic_load(&report.calls), 1);
    assert_int_equal(report.held, 1);
    assert_int_equal(report.waiting, 3);
    exec_submit(pool, &jobs[4].job);
    assert_int_equal(atomic_load(&report.calls), 1); /* once a stall */
    open_gate(&g, JOBS - 1);
    exec_submit(pool, &jobs[5].job); /* jobs ended: no stall */
    exec_free(pool);
    assert_int_equal(atomic_load(&report.calls), 1);
    assert_int_equal(g.finished, JOBS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_worker_runs_at_once),
        cmocka_unit_test(test_chain_meets_too),
        cmocka_unit_test(test_one_worker_runs_in_order_and_free_drains),
        cmocka_unit_test(test_zero_workers_means_one_and_count_reaches_wanted),
        cmocka_unit_test(test_workers_start_only_when_jobs_wait),
        cmocka_unit_test(test_free_right_after_new),
        cmocka_unit_test(test_workers_start_with_signals_blocked),
        cmocka_unit_test(test_no_thread_can_start_so_the_submitter_runs_jobs),
        cmocka_unit_test(test_pool_keeps_the_workers_it_could_start),
        cmocka_unit_test(test_no_thread_can_start_for_a_chain),
        cmocka_unit_test(test_failed_start_is_not_retried),
        cmocka_unit_test(test_take_queued),
        cmocka_unit_test(test_stall_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
