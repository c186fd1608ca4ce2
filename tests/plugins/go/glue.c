/* SPDX-License-Identifier: MIT */
/*
 * The entry point and init of the Go fixture plugin; the handlers are Go functions.
 */
#include "glue.h"

#include "_cgo_export.h"

static const rpcd_host_api *host;

int glue_result(rpcd_call *call, const char *json, size_t json_length)
{
    return host->call_result(call, json, json_length);
}

static int churn_handler(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    return goChurn(call, (char *)params, params_length);
}

static int fixture_init(rpcd_plugin *plugin, const rpcd_host_api *api, void **state, char *error,
                        size_t error_size)
{
    (void)state;
    (void)error;
    (void)error_size;
    host = api;
    goInit();
    rpcd_method churn = rpcd_method_new("go.churn", churn_handler);
    return host->register_method(plugin, &churn);
}

RPCD_PLUGIN_DEFINE("gofixture", "1.0.0", fixture_init, NULL);
