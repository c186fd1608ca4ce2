/* SPDX-License-Identifier: MIT */
/*
 * The entry point of a Go plugin and the calls through the host table; the handlers, init and
 * shutdown are Go functions (rpcd.go) reached through cgo's exports.
 */
#include "glue.h"

#include "_cgo_export.h"

#include <string.h>

static const rpcd_host_api *host;
static rpcd_plugin *self;

static int go_handler(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    return rpcdGoHandle((uintptr_t)user_data, call, (char *)params, params_length);
}

int rpcd_go_register(const char *name, const char *description, const char *params_schema,
                     uint32_t flags, uint32_t role, const char *descriptor, uintptr_t index)
{
    rpcd_method method = rpcd_method_new(name, go_handler);
    method.user_data = (void *)index;
    method.flags = flags;
    method.description = description;
    method.params_schema = params_schema;
    method.mcp_role = role;
    method.mcp_descriptor = descriptor;
    return host->register_method(self, &method);
}

const char *rpcd_go_config(const char *key)
{
    return host->config_get(self, key);
}

void rpcd_go_log(int level, const char *text)
{
    if (host && RPCD_HOST_HAS(host, log_text))
        host->log_text(self, level, text);
}

int rpcd_go_result(rpcd_call *call, const char *json, size_t length)
{
    return host->call_result(call, json, length);
}

int rpcd_go_fail(rpcd_call *call, int status, const char *message)
{
    return host->call_fail(call, status, message, NULL, 0);
}

int rpcd_go_progress(rpcd_call *call, double done, double total, const char *message)
{
    return host->call_progress(call, done, total, message);
}

int rpcd_go_is_cancelled(rpcd_call *call)
{
    return host->call_is_cancelled(call);
}

int rpcd_go_complete(rpcd_call *call, int status)
{
    return host->call_complete(call, status);
}

int rpcd_go_tool_result(rpcd_call *call, const char *json, size_t length)
{
    if (!RPCD_HOST_HAS(host, call_tool_result))
        return RPCD_ERR_UNSUPPORTED;
    return host->call_tool_result(call, json, length);
}

int rpcd_go_meta(rpcd_call *call, const char *name, char *out, size_t out_size, size_t *length)
{
    *length = 0;
    if (!RPCD_HOST_HAS(host, call_meta))
        return RPCD_OK;
    return host->call_meta(call, name, out, out_size, length);
}

int rpcd_go_resource_updated(const char *uri)
{
    if (!host || !RPCD_HOST_HAS(host, resource_updated))
        return RPCD_ERR_UNSUPPORTED;
    return host->resource_updated(self, uri);
}

static int go_init(rpcd_plugin *plugin, const rpcd_host_api *api, void **state, char *error,
                   size_t error_size)
{
    (void)state;
    host = api;
    self = plugin;
    return rpcdGoInit(error, error_size);
}

static void go_shutdown(void *state)
{
    (void)state;
    rpcdGoShutdown();
}

RPCD_EXPORT const rpcd_plugin_info *rpcd_plugin_entry(void);
RPCD_EXPORT const rpcd_plugin_info *rpcd_plugin_entry(void)
{
    /* The name and version come from rpcd.Define, run by the plugin's init() in Go, which the Go
     * runtime has run before the first call into Go returns. */
    static rpcd_plugin_info info;
    if (info.size == 0) {
        info.abi_major = RPCD_ABI_MAJOR;
        info.abi_minor = RPCD_ABI_MINOR;
        info.name = rpcdGoName();
        info.version = rpcdGoVersion();
        info.init = go_init;
        info.shutdown = go_shutdown;
        info.size = sizeof info;
    }
    return &info;
}
