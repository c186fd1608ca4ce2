/* SPDX-License-Identifier: MIT */
/*
 * echo plugin: the method "echo" answers with its params, byte for byte.
 * It never parses them, so that echoing a large payload costs one copy and nothing more; the
 * smallest complete example of a plugin.
 */
#include <stdio.h>

#include <rpcd/plugin.h>

/*
 * Set once by init, on the main thread before any call, and only read afterwards, so handlers
 * running at the same time on several threads need no lock.
 */
static const rpcd_host_api *host;

static int echo_call(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    /* Without params there is nothing to echo, and no result is a JSON null. */
    if (params == NULL) {
        return RPCD_OK;
    }
    return host->call_result(call, params, params_length);
}

static int echo_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state, char *error,
                     size_t error_size)
{
    rpcd_method method = rpcd_method_new("echo", echo_call);
    int status;

    (void)state;
    host = host_api;
    method.description = "Returns its params unchanged (null when there are none).";
    method.flags = RPCD_METHOD_QUICK; /* it only hands its params back */
    method.params_schema = "{\"type\":[\"array\",\"object\"]}";
    status = host->register_method(plugin, &method);
    if (status != RPCD_OK) {
        snprintf(error, error_size, "cannot register method echo (status %d)", status);
    }
    return status;
}

RPCD_PLUGIN_DEFINE("echo", "1.0.0", echo_init, NULL);
