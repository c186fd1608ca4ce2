/* SPDX-License-Identifier: MIT */
/*
 * Fixture: a plugin whose init fails with a reason. It registers a method with user data first,
 * so that a leak checker can tell whether the daemon frees it, as the ABI promises. Its shutdown,
 * which the daemon must not call after a failed init, creates the file its key shutdown_marker
 * names; with succeed = true init succeeds, so that a test can see the marker work; with
 * crash = true init dereferences NULL instead, so that a test can see how that is told.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpcd/plugin.h>

static int init_fail_call(rpcd_call *call, const char *params, size_t params_length,
                          void *user_data)
{
    (void)call;
    (void)params;
    (void)params_length;
    (void)user_data;
    return RPCD_OK;
}

/* A NULL dereference, which the sanitizers must not turn into an exit. */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
#define NO_SANITIZE __attribute__((no_sanitize("address", "undefined")))
#endif
#endif
#ifndef NO_SANITIZE
#define NO_SANITIZE
#endif
static int *volatile nowhere;
NO_SANITIZE static int init_fail_crash(void)
{
    return *nowhere;
}

/* Copied during init: the config's values are borrowed only until init returns. */
static char shutdown_marker[4096];

static void init_fail_shutdown(void *state)
{
    FILE *marker;

    (void)state;
    if (shutdown_marker[0] == '\0')
        return;
    marker = fopen(shutdown_marker, "w");
    if (marker != NULL) {
        fputs("shutdown called\n", marker);
        fclose(marker);
    }
}

static int init_fail_init(rpcd_plugin *plugin, const rpcd_host_api *host, void **state, char *error,
                          size_t error_size)
{
    rpcd_method method = rpcd_method_new("init_fail.never", init_fail_call);
    char *data = (char *)malloc(32);

    const char *marker = host->config_get(plugin, "shutdown_marker");
    const char *succeed = host->config_get(plugin, "succeed");
    const char *crash = host->config_get(plugin, "crash");

    (void)state;
    snprintf(shutdown_marker, sizeof shutdown_marker, "%s", marker ? marker : "");
    if (data != NULL) {
        strcpy(data, "freed by the daemon");
        method.user_data = data;
        method.free_user_data = free;
        if (host->register_method(plugin, &method) != RPCD_OK) {
            free(data);
        }
    }
    if (crash != NULL && strcmp(crash, "true") == 0)
        return init_fail_crash();
    if (succeed != NULL && strcmp(succeed, "true") == 0)
        return RPCD_OK;
    snprintf(error, error_size, "database unreachable");
    return RPCD_ERR_INTERNAL;
}

RPCD_PLUGIN_DEFINE("init_fail", "1.0.0", init_fail_init, init_fail_shutdown);
