/* SPDX-License-Identifier: MIT */
/*
 * Fixture for the tests of how rpcd ends when handlers never return: a method that blocks its
 * worker for good, a quick method (run on the reading thread) that does the same, and a count of
 * the blocked calls, so that a test knows they are all inside before it goes on.
 */
#include <rpcd/plugin.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static const rpcd_host_api *host;
static atomic_int blocked;
static pthread_mutex_t never_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

/* stuck.block, stuck.quick: never return, whatever happens (cancellation, signals). */
static int block(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call, (void)params, (void)params_length, (void)user_data;
    atomic_fetch_add(&blocked, 1);
    pthread_mutex_lock(&never_lock);
    for (;;)
        pthread_cond_wait(&never, &never_lock);
    return RPCD_OK;
}

/* stuck.count (quick): {"blocked": N}, the calls inside stuck.block or stuck.quick so far. */
static int count(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    char result[64];
    int length = snprintf(result, sizeof result, "{\"blocked\":%d}", atomic_load(&blocked));
    return host->call_result(call, result, (size_t)length);
}

static int stuck_init(rpcd_plugin *plugin, const rpcd_host_api *api, void **state, char *error,
                      size_t error_size)
{
    (void)state, (void)error, (void)error_size;
    host = api;
    rpcd_method methods[] = {
        rpcd_method_new("stuck.block", block),
        rpcd_method_new("stuck.quick", block),
        rpcd_method_new("stuck.count", count),
    };
    methods[1].flags = RPCD_METHOD_QUICK;
    methods[2].flags = RPCD_METHOD_QUICK; /* answers while every worker is held */
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        int status = host->register_method(plugin, &methods[i]);
        if (status != RPCD_OK)
            return status;
    }
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("stuck", "1.0.0", stuck_init, NULL);
