/* SPDX-License-Identifier: MIT */
/*
 * Fixture: registers names rpcd refuses, each for its own reason (one of them not UTF-8, with a
 * control character), then one name twice, which stops start-up.
 */
#include <rpcd/plugin.h>

#include <stdio.h>

static int noop(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call;
    (void)params;
    (void)params_length;
    (void)user_data;
    return RPCD_OK;
}

static int bad_names_init(rpcd_plugin *plugin, const rpcd_host_api *host, void **state, char *error,
                          size_t error_size)
{
    static const char *const refused[] = {
        "bad\xff\x01name", "rpc.mine",   "notifications/progress",
        "$/cancelRequest", "initialize", "",
    };
    (void)state;
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        rpcd_method method = rpcd_method_new(refused[i], noop);
        if (host->register_method(plugin, &method) != RPCD_ERR_INVALID_ARGUMENT) {
            snprintf(error, error_size, "name %zu was not refused", i);
            return RPCD_ERR_INTERNAL;
        }
    }
    rpcd_method schema = rpcd_method_new("bad.schema", noop);
    schema.params_schema = "{\"type\":";
    if (host->register_method(plugin, &schema) != RPCD_ERR_INVALID_ARGUMENT) {
        snprintf(error, error_size, "the schema was not refused");
        return RPCD_ERR_INTERNAL;
    }
    rpcd_method twice = rpcd_method_new("twice", noop);
    if (host->register_method(plugin, &twice) != RPCD_OK ||
        host->register_method(plugin, &twice) != RPCD_ERR_EXISTS) {
        snprintf(error, error_size, "the second registration was not refused");
        return RPCD_ERR_INTERNAL;
    }
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("bad_names", "1.0.0", bad_names_init, NULL);
