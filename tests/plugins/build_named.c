/* SPDX-License-Identifier: MIT */
/*
 * Fixture for reloading: one source built twice (-DBUILD_NAME="a" and "b"), whose results name
 * the build that answered, so that a test sees which loaded instance ran each call. Its init and
 * shutdown log their build and the instance's number; build.slow logs that it began, then sleeps
 * before answering, on a thread of the plugin's own when asked to, and shutdown says if it runs on
 * that thread. With abort_init_if = PATH, its init aborts while PATH exists.
 */
#include <rpcd/plugin.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef BUILD_NAME
#error "BUILD_NAME names the build"
#endif

static const rpcd_host_api *host;
static rpcd_plugin *self;

/* The instance: a copy of the code loaded anew has its own statics. */
static atomic_int calls;

/* build.name: {"build": BUILD_NAME}. */
static int name(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    atomic_fetch_add(&calls, 1);
    static const char result[] = "{\"build\":\"" BUILD_NAME "\"}";
    return host->call_result(call, result, sizeof result - 1);
}

/* The params are not NUL-terminated: read from a copy. Sets *on_thread for [MS, "thread"]. */
static long milliseconds(const char *params, size_t params_length, bool *on_thread)
{
    char text[64] = "";
    if (params && params_length < sizeof text)
        memcpy(text, params, params_length);
    *on_thread = strstr(text, "\"thread\"") != NULL;
    return text[0] == '[' ? strtol(text + 1, NULL, 10) : 0;
}

static void sleep_ms(long ms)
{
    struct timespec wait = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&wait, NULL);
}

/* The plugin's own thread of build.slow [MS, "thread"]: one at a time, joined at shutdown. */
static pthread_t later_thread;
static bool later_started;
static _Thread_local bool on_later_thread;

typedef struct later_call {
    rpcd_call *call;
    long ms;
} later_call;

static void *answer_later(void *context)
{
    later_call later = *(later_call *)context;
    free(context);
    on_later_thread = true;
    sleep_ms(later.ms);
    atomic_fetch_add(&calls, 1);
    static const char result[] = "{\"build\":\"" BUILD_NAME "\"}";
    host->call_result(later.call, result, sizeof result - 1);
    host->call_complete(later.call, RPCD_OK); /* the call's last touch of rpcd */
    return NULL;
}

/* build.slow, params [MS] or [MS, "thread"]: sleeps MS milliseconds, then answers as build.name;
 * with "thread", on a thread of the plugin's that completes the deferred call. Its first log line
 * tells a test that the call is running, so a reload it then asks for cannot come first. */
static int slow(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    host->log(self, RPCD_LOG_INFO, "build %s: build.slow began", BUILD_NAME);
    bool on_thread;
    long ms = milliseconds(params, params_length, &on_thread);
    if (on_thread) {
        later_call *later = later_started ? NULL : malloc(sizeof *later);
        if (later) {
            *later = (later_call){call, ms};
            later_started = pthread_create(&later_thread, NULL, answer_later, later) == 0;
        }
        if (!later_started) {
            free(later);
            return RPCD_ERR_APPLICATION;
        }
        return RPCD_DEFERRED;
    }
    sleep_ms(ms);
    return name(call, params, params_length, user_data);
}

/* The method's user data, freed by rpcd once the instance is shut down. */
static void free_data(void *data)
{
    free(data);
}

static int build_init(rpcd_plugin *plugin, const rpcd_host_api *api, void **state, char *error,
                      size_t error_size)
{
    host = api;
    self = plugin;
    *state = plugin;
    const char *fail = host->config_get(plugin, "fail_init");
    if (fail && strcmp(fail, "true") == 0) {
        snprintf(error, error_size, "asked to fail (fail_init = true)");
        return RPCD_ERR_APPLICATION;
    }
    /* A plugin whose init crashes once something around it changed: its host's restarts fail. */
    const char *abort_if = host->config_get(plugin, "abort_init_if");
    if (abort_if && access(abort_if, F_OK) == 0)
        abort();
    const char *prefix = host->config_get(plugin, "prefix");
    char method_name[64], slow_name[64];
    snprintf(method_name, sizeof method_name, "%sbuild.name", prefix ? prefix : "");
    snprintf(slow_name, sizeof slow_name, "%sbuild.slow", prefix ? prefix : "");
    rpcd_method methods[] = {
        rpcd_method_new(method_name, name),
        rpcd_method_new(slow_name, slow),
    };
    methods[0].user_data = malloc(16);
    methods[0].free_user_data = free_data;
    methods[0].description = "Names the build that answers.";
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        int status = host->register_method(plugin, &methods[i]);
        if (status != RPCD_OK) {
            if (i == 0)
                free(methods[0].user_data); /* still ours: it was refused */
            return status;
        }
    }
    host->log(plugin, RPCD_LOG_INFO, "init build %s", BUILD_NAME);
    return RPCD_OK;
}

static void build_shutdown(void *state)
{
    /* Shut down under a thread of its own, a plugin could not join that thread, and the code
     * it returns into could be unmapped. */
    if (on_later_thread)
        host->log(state, RPCD_LOG_ERROR, "shutdown runs on the plugin's own thread");
    else if (later_started)
        pthread_join(later_thread, NULL);
    host->log(state, RPCD_LOG_INFO, "shutdown build %s after %d calls", BUILD_NAME,
              atomic_load(&calls));
}

RPCD_PLUGIN_DEFINE("build_named", "1.0.0", build_init, build_shutdown);
