/* SPDX-License-Identifier: MIT */
/*
 * Fixture: a plugin as built against ABI 1.0 with a method descriptor that ended before
 * description. The descriptor really is that short and lives on the stack, so that a daemon
 * reading beyond its size trips AddressSanitizer instead of reading stale values silently.
 */
#include <stdio.h>

#include <rpcd/plugin.h>

/* rpcd_method as it was before description and params_schema were appended. */
typedef struct old_method {
    size_t size;
    const char *name;
    rpcd_handler_fn handler;
    void *user_data;
    void (*free_user_data)(void *data);
    uint32_t flags;
} old_method;

_Static_assert(offsetof(old_method, flags) == offsetof(rpcd_method, flags),
               "old_method must match the start of rpcd_method");
_Static_assert(sizeof(old_method) >= offsetof(rpcd_method, description),
               "the size given to the daemon must not exceed the struct");

static const rpcd_host_api *host;

static int old_ping(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    static const char pong[] = "\"pong\"";

    (void)params;
    (void)params_length;
    (void)user_data;
    return host->call_result(call, pong, sizeof(pong) - 1);
}

static int old_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state, char *error,
                    size_t error_size)
{
    old_method method;
    int status;

    (void)state;
    host = host_api;
    method.size = offsetof(rpcd_method, description);
    method.name = "old.ping";
    method.handler = old_ping;
    method.user_data = NULL;
    method.free_user_data = NULL;
    method.flags = 0;
    /* What an old binary does: hand over its shorter struct as the descriptor. */
    status = host->register_method(plugin, (const rpcd_method *)(const void *)&method);
    if (status != RPCD_OK) {
        snprintf(error, error_size, "cannot register old.ping (status %d)", status);
    }
    return status;
}

RPCD_EXPORT const rpcd_plugin_info *rpcd_plugin_entry(void);

RPCD_EXPORT const rpcd_plugin_info *rpcd_plugin_entry(void)
{
    static const rpcd_plugin_info info = {
        sizeof(rpcd_plugin_info), RPCD_ABI_MAJOR, 0, "old_plugin", "0.9.0", old_init, NULL,
    };
    return &info;
}
