/* SPDX-License-Identifier: MIT */
/*
 * Fixture for reloading: one source built twice (-DBUILD_NAME="a" and "b"), whose results name
 * the build that answered, so that a test sees which loaded instance ran each call. Its init and
 * shutdown log their build and the instance's number; build.slow sleeps before answering.
 */
#include <rpcd/plugin.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef BUILD_NAME
#error "BUILD_NAME names the build"
#endif

static const rpcd_host_api *host;

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

/* build.slow, params [MS]: sleeps MS milliseconds, then answers as build.name. */
static int slow(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params_length;
    long ms = params && params[0] == '[' ? strtol(params + 1, NULL, 10) : 0;
    struct timespec wait = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&wait, NULL);
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
    *state = plugin;
    const char *fail = host->config_get(plugin, "fail_init");
    if (fail && strcmp(fail, "true") == 0) {
        snprintf(error, error_size, "asked to fail (fail_init = true)");
        return RPCD_ERR_APPLICATION;
    }
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
    host->log(state, RPCD_LOG_INFO, "shutdown build %s after %d calls", BUILD_NAME,
              atomic_load(&calls));
}

RPCD_PLUGIN_DEFINE("build_named", "1.0.0", build_init, build_shutdown);
