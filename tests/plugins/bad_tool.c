/* SPDX-License-Identifier: MIT */
/*
 * Fixture: descriptors whose 1.4 members are not what MCP allows, each refused by
 * register_method with RPCD_ERR_INVALID_ARGUMENT; init succeeds only when all of them are.
 */
#include <rpcd/plugin.h>

#include <stdio.h>

static int nothing(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call;
    (void)params;
    (void)params_length;
    (void)user_data;
    return RPCD_OK;
}

static int bad_init(rpcd_plugin *plugin, const rpcd_host_api *host, void **state, char *error,
                    size_t error_size)
{
    (void)state;
    rpcd_method methods[6];
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        methods[i] = rpcd_method_new("bad_tool", nothing);
    methods[0].annotations = "{\"readOnlyHint\":\"yes\"}";
    methods[1].annotations = "[true]";
    methods[2].output_schema = "{\"type\":\"array\"}";
    methods[3].icons = "[{\"mimeType\":\"image/png\"}]";
    methods[4].icons = "[{\"src\":\"a.png\",\"theme\":\"blue\"}]";
    methods[5].title = "\xff";
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        int status = host->register_method(plugin, &methods[i]);
        if (status != RPCD_ERR_INVALID_ARGUMENT) {
            snprintf(error, error_size, "descriptor %zu: status %d", i, status);
            return RPCD_ERR_INTERNAL;
        }
    }
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("bad_tool", "1.0.0", bad_init, NULL);
