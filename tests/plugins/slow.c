/* SPDX-License-Identifier: MIT */
/*
 * Fixture for deadlines: handlers that go on past their call's deadline, one on its worker, one
 * deferred to a thread of its own and one quick, each trying to answer, notify and report
 * progress once it is over; a count of what the host functions said then, for the test to read.
 */
#include <rpcd/plugin.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const rpcd_host_api *host;
static atomic_int finished;       /* handlers (or deferred threads) that got to their end */
static atomic_int saw_cancelled;  /* ... and found their call cancelled there */
static atomic_int refused_late;   /* ... whose late result, notify and progress were all stale */
static atomic_int completed_late; /* deferred calls that call_complete still ended (RPCD_OK) */

/* The "ms" member of params, 0 without. */
static long ms_of(const char *params, size_t length)
{
    char copy[128];
    if (!params || length >= sizeof copy)
        return 0;
    memcpy(copy, params, length);
    copy[length] = '\0';
    const char *at = strstr(copy, "\"ms\":");
    return at ? strtol(at + 5, NULL, 10) : 0;
}

static void sleep_ms(long ms)
{
    struct timespec delay = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&delay, &delay) != 0 && errno == EINTR)
        continue;
}

/* Sleeps ms, then tries everything that would reach the client, and counts what it was told. */
static void go_on(rpcd_call *call, long ms)
{
    sleep_ms(ms);
    int cancelled = host->call_is_cancelled(call);
    int result = host->call_result(call, "{\"late\":true}", 13);
    int notify = host->call_notify(call, "slow/late", "{}", 2);
    int progress = host->call_progress(call, 1, 1, "late");
    atomic_fetch_add(&saw_cancelled, cancelled == 1);
    atomic_fetch_add(&refused_late, result == RPCD_ERR_STALE && notify == RPCD_ERR_STALE &&
                                        progress == RPCD_ERR_STALE);
}

/* slow.sleep {"ms": N}: holds its worker N ms, then answers (too late when past its deadline). */
static int slow_sleep(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    go_on(call, ms_of(params, params_length));
    atomic_fetch_add(&finished, 1);
    return RPCD_OK;
}

typedef struct deferred {
    rpcd_call *call;
    long ms;
} deferred;

static void *defer_main(void *context)
{
    deferred *job = context;
    go_on(job->call, job->ms);
    atomic_fetch_add(&completed_late, host->call_complete(job->call, RPCD_OK) == RPCD_OK);
    atomic_fetch_add(&finished, 1);
    free(job);
    return NULL;
}

/* slow.defer {"ms": N}: deferred to a thread that answers and completes N ms later. */
static int slow_defer(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    deferred *job = malloc(sizeof *job);
    if (!job)
        return RPCD_ERR_NO_MEMORY;
    *job = (deferred){call, ms_of(params, params_length)};
    pthread_t thread;
    if (pthread_create(&thread, NULL, defer_main, job) != 0) {
        free(job);
        return RPCD_ERR_NO_MEMORY;
    }
    pthread_detach(thread);
    return RPCD_DEFERRED;
}

/* slow.ready: answers at once, on a worker (so that one has started). */
static int slow_ready(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    return host->call_result(call, "{\"ready\":true}", 14);
}

/* slow.count (quick): {"finished":N,"cancelled":N,"refused":N,"completed":N}. */
static int slow_count(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    char result[128];
    int length = snprintf(result, sizeof result,
                          "{\"finished\":%d,\"cancelled\":%d,\"refused\":%d,\"completed\":%d}",
                          atomic_load(&finished), atomic_load(&saw_cancelled),
                          atomic_load(&refused_late), atomic_load(&completed_late));
    return host->call_result(call, result, (size_t)length);
}

static int slow_init(rpcd_plugin *plugin, const rpcd_host_api *api, void **state, char *error,
                     size_t error_size)
{
    (void)state, (void)error, (void)error_size;
    host = api;
    rpcd_method methods[] = {
        rpcd_method_new("slow.sleep", slow_sleep), rpcd_method_new("slow.defer", slow_defer),
        rpcd_method_new("slow.quick", slow_sleep), rpcd_method_new("slow.count", slow_count),
        rpcd_method_new("slow.ready", slow_ready),
    };
    methods[2].flags = RPCD_METHOD_QUICK;
    methods[3].flags = RPCD_METHOD_QUICK;
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        int status = host->register_method(plugin, &methods[i]);
        if (status != RPCD_OK)
            return status;
    }
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("slow", "1.0.0", slow_init, NULL);
