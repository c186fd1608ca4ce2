/* SPDX-License-Identifier: MIT */
/* A minimal rpcd plugin: one method, "hello", that greets whoever its config names. */
#include <rpcd/plugin.h>

#include <stdio.h>
#include <string.h>

static const rpcd_host_api *host;
static char greeting[128] = "\"hello, world\"";

static int hello(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    return host->call_result(call, greeting, strlen(greeting));
}

static int hello_init(rpcd_plugin *plugin, const rpcd_host_api *api, void **state, char *error,
                      size_t error_size)
{
    (void)state, (void)error, (void)error_size;
    host = api;
    const char *name = host->config_get(plugin, "name"); /* [plugin hello] name = ... */
    if (name)
        snprintf(greeting, sizeof greeting, "\"hello, %s\"", name); /* keep names plain */
    rpcd_method method = rpcd_method_new("hello", hello);
    method.description = "Returns a greeting.";
    return host->register_method(plugin, &method);
}

RPCD_PLUGIN_DEFINE("hello", "1.0.0", hello_init, NULL);
