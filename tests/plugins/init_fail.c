/* SPDX-License-Identifier: MIT */
/*
 * Fixture: a plugin whose init fails with a reason. It registers a method with user data first,
 * so that a leak checker can tell whether the daemon frees it, as the ABI promises.
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

static int init_fail_init(rpcd_plugin *plugin, const rpcd_host_api *host, void **state, char *error,
                          size_t error_size)
{
    rpcd_method method = rpcd_method_new("init_fail.never", init_fail_call);
    char *data = (char *)malloc(32);

    (void)state;
    if (data != NULL) {
        strcpy(data, "freed by the daemon");
        method.user_data = data;
        method.free_user_data = free;
        if (host->register_method(plugin, &method) != RPCD_OK) {
            free(data);
        }
    }
    snprintf(error, error_size, "database unreachable");
    return RPCD_ERR_INTERNAL;
}

RPCD_PLUGIN_DEFINE("init_fail", "1.0.0", init_fail_init, NULL);
