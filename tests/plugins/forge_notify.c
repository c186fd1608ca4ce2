/* SPDX-License-Identifier: MIT */
/*
 * Fixture: tries to send the notifications rpcd owns (MCP progress and cancellation, LSP's
 * $/cancelRequest, JSON-RPC's rpc. names) as if it were the daemon. forge.notify ["NAME"]
 * calls call_notify with NAME (no escapes in it) and answers with what it returned.
 */
#include <rpcd/plugin.h>

#include <stdio.h>
#include <string.h>

static const rpcd_host_api *host;

static int forge_notify(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    char name[128];
    const char *start = params ? memchr(params, '"', params_length) : NULL;
    const char *end =
        start ? memchr(start + 1, '"', params_length - (size_t)(start + 1 - params)) : NULL;
    if (!end || (size_t)(end - start - 1) >= sizeof name)
        return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "need [\"name\"]", NULL, 0);
    memcpy(name, start + 1, (size_t)(end - start - 1));
    name[end - start - 1] = '\0';
    static const char forged[] = "{\"progressToken\":\"t\",\"progress\":1,\"requestId\":1}";
    int status = host->call_notify(call, name, forged, sizeof forged - 1);
    char text[16];
    int length = snprintf(text, sizeof text, "%d", status);
    return host->call_result(call, text, (size_t)length);
}

static int forge_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state, char *error,
                      size_t error_size)
{
    (void)state;
    host = host_api;
    rpcd_method method = rpcd_method_new("forge.notify", forge_notify);
    int status = host->register_method(plugin, &method);
    if (status != RPCD_OK)
        snprintf(error, error_size, "cannot register forge.notify (status %d)", status);
    return status;
}

RPCD_PLUGIN_DEFINE("forge", "1.0.0", forge_init, NULL);
