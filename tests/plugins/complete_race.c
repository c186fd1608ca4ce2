/* SPDX-License-Identifier: MIT */
/*
 * Fixture: several threads of the plugin complete the same deferred call at once, while its
 * handler is still returning RPCD_DEFERRED. Exactly one call_complete may win; the plugin counts
 * what each one returned, and reports at shutdown the calls where that did not hold.
 */
#include <rpcd/plugin.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const rpcd_host_api *host;
static rpcd_plugin *self;

enum { MOST_THREADS = 64 };

/* One call and the threads that race to complete it. */
typedef struct race {
    rpcd_call *call;
    int thread_count;
    pthread_t threads[MOST_THREADS];
    pthread_barrier_t start; /* the threads and the handler go together */
    atomic_int wins;         /* call_complete returned RPCD_OK */
    atomic_int other;        /* returned something but RPCD_ERR_UNSUPPORTED or RPCD_ERR_STALE */
    atomic_int arrived;      /* threads past the barrier: each waits a little longer */
    struct race *next;
} race;

/*
 * The reaper joins the threads of each race, then checks it: a thread still runs plugin code
 * after call_complete returns, so only a join tells when it is gone, and shutdown joins the
 * reaper before the daemon unloads the plugin.
 */
static pthread_mutex_t reap_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reap_changed = PTHREAD_COND_INITIALIZER;
static race *reap_head;
static race **reap_tail = &reap_head;
static bool reap_stopping;
static pthread_t reaper;

static int calls_seen; /* under reap_lock */
static int calls_bad;

static void *reap(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&reap_lock);
    for (;;) {
        while (!reap_head && !reap_stopping)
            pthread_cond_wait(&reap_changed, &reap_lock);
        race *r = reap_head;
        if (!r)
            break;
        reap_head = r->next;
        if (!reap_head)
            reap_tail = &reap_head;
        pthread_mutex_unlock(&reap_lock);
        for (int i = 0; i < r->thread_count; i++)
            pthread_join(r->threads[i], NULL);
        bool bad = atomic_load(&r->wins) != 1 || atomic_load(&r->other) != 0;
        pthread_barrier_destroy(&r->start);
        free(r);
        pthread_mutex_lock(&reap_lock);
        calls_seen++;
        calls_bad += bad;
    }
    pthread_mutex_unlock(&reap_lock);
    return NULL;
}

static void *complete_one(void *argument)
{
    race *r = argument;
    pthread_barrier_wait(&r->start);
    /* Staggered, so that some land before the handler's return, some during, some after. */
    int order = atomic_fetch_add(&r->arrived, 1);
    for (int i = 0; i < order * 300; i++)
        atomic_fetch_add(&r->other, 0);
    static const char result[] = "{\"completed\":true}";
    host->call_result(r->call, result, sizeof result - 1);
    int status = host->call_complete(r->call, RPCD_OK);
    if (status == RPCD_OK)
        atomic_fetch_add(&r->wins, 1);
    else if (status != RPCD_ERR_UNSUPPORTED && status != RPCD_ERR_STALE)
        atomic_fetch_add(&r->other, 1);
    return NULL;
}

/* params: [threads], 1 to MOST_THREADS. */
static int race_complete(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    int threads = 0;
    char text[16] = ""; /* params are not NUL-terminated */
    if (params && params_length < sizeof text)
        memcpy(text, params, params_length);
    if (sscanf(text, "[%d]", &threads) != 1 || threads < 1 || threads > MOST_THREADS)
        return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "need [threads], 1 to 64", NULL, 0);
    race *r = calloc(1, sizeof *r);
    if (!r || pthread_barrier_init(&r->start, NULL, (unsigned)threads + 1) != 0) {
        free(r);
        return RPCD_ERR_NO_MEMORY;
    }
    r->call = call;
    r->thread_count = threads;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 256 * 1024);
    for (int i = 0; i < threads; i++)
        if (pthread_create(&r->threads[i], &attributes, complete_one, r) != 0)
            abort(); /* the barrier would never open: a fixture cannot go on */
    pthread_attr_destroy(&attributes);
    /* The handler's own return races with the completions too. */
    pthread_barrier_wait(&r->start);
    /* Past the barrier: the reaper may destroy it once the threads are joined. */
    pthread_mutex_lock(&reap_lock);
    *reap_tail = r;
    reap_tail = &r->next;
    pthread_cond_broadcast(&reap_changed);
    pthread_mutex_unlock(&reap_lock);
    return RPCD_DEFERRED;
}

static int race_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state, char *error,
                     size_t error_size)
{
    (void)state;
    host = host_api;
    self = plugin;
    rpcd_method complete = rpcd_method_new("race.complete", race_complete);
    if (host->register_method(plugin, &complete) != RPCD_OK) {
        snprintf(error, error_size, "cannot register race.complete");
        return RPCD_ERR_INTERNAL;
    }
    if (pthread_create(&reaper, NULL, reap, NULL) != 0) {
        snprintf(error, error_size, "cannot start the reaper thread");
        return RPCD_ERR_INTERNAL;
    }
    return RPCD_OK;
}

/* Joins the reaper, which checks every race left, and reports them all. */
static void race_shutdown(void *state)
{
    (void)state;
    pthread_mutex_lock(&reap_lock);
    reap_stopping = true;
    pthread_cond_broadcast(&reap_changed);
    pthread_mutex_unlock(&reap_lock);
    pthread_join(reaper, NULL);
    host->log(self, RPCD_LOG_WARNING, "%d calls, %d of them not completed exactly once", calls_seen,
              calls_bad);
}

RPCD_PLUGIN_DEFINE("complete_race", "1.0.0", race_init, race_shutdown);
