/* SPDX-License-Identifier: MIT */
/*
 * Fixture, built twice (duplicate_a, duplicate_b): both copies register "dup.method", plus one
 * method of their own, "dup.a" or "dup.b". DUPLICATE_SIDE ("a" or "b") comes from the build.
 * The status of the clashing registration is ignored on purpose: the daemon's own rule must make
 * it refuse to start, not the plugin's good manners.
 */
#include <stdio.h>

#include <rpcd/plugin.h>

#ifndef DUPLICATE_SIDE
#error "DUPLICATE_SIDE must be defined as \"a\" or \"b\""
#endif

static const rpcd_host_api *host;

/* Returns the side's letter, so that a test can tell which copy answered. */
static int duplicate_call(rpcd_call *call, const char *params, size_t params_length,
                          void *user_data)
{
    static const char side[] = "\"" DUPLICATE_SIDE "\"";

    (void)params;
    (void)params_length;
    (void)user_data;
    return host->call_result(call, side, sizeof(side) - 1);
}

static int duplicate_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state,
                          char *error, size_t error_size)
{
    rpcd_method own = rpcd_method_new("dup." DUPLICATE_SIDE, duplicate_call);
    rpcd_method shared = rpcd_method_new("dup.method", duplicate_call);
    int status;

    (void)state;
    host = host_api;
    status = host->register_method(plugin, &own);
    if (status != RPCD_OK) {
        snprintf(error, error_size, "cannot register dup.%s (status %d)", DUPLICATE_SIDE, status);
        return status;
    }
    status = host->register_method(plugin, &shared);
    host->log(plugin, RPCD_LOG_DEBUG, "registering dup.method gave status %d", status);
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("duplicate_" DUPLICATE_SIDE, "1.0.0", duplicate_init, NULL);
