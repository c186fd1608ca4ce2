/* SPDX-License-Identifier: MIT */
/*
 * The host functions that are not about a call: registering methods and reading config keys
 * during init, and logging; and the one host table a plugin gets, with the call_* half of
 * call_host.c (or of a plugin host's, isolation/host_calls.c).
 */
#include "loader/loader.h"
#include "loader/loader_internal.h"

#include "calls/call.h"
#include "base/log.h"
#include "wire/mcp_events.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fills the call_* members of the host table: rpcd's own, or a plugin host's (ld_set_call_api). */
static void (*fill_call_api)(rpcd_host_api *api) = call_fill_host_api;

static int host_register_method(rpcd_plugin *plugin, const rpcd_method *method)
{
    if (!plugin || !plugin->initialising)
        return RPCD_ERR_UNSUPPORTED;
    const reg_method *existing = NULL;
    char reason[256] = "unknown";
    const reg_owner owner = {plugin, ld_section_of(plugin), plugin->info->abi_minor,
                             plugin->config->validate_arguments, plugin->config->assert_format};
    /* The plugin frees the user data, once no generation holds it: a registry never does. */
    rpcd_method copy = {0};
    owned_data owned = {NULL, NULL};
    if (method) {
        memcpy(&copy, method, method->size < sizeof copy ? method->size : sizeof copy);
        if (method->size >= offsetof(rpcd_method, free_user_data) + sizeof method->free_user_data)
            owned = (owned_data){method->free_user_data, method->user_data};
        copy.free_user_data = NULL;
    }
    owned_data *data = realloc(plugin->data, (plugin->data_count + 1) * sizeof *data);
    if (!data)
        return RPCD_ERR_NO_MEMORY;
    plugin->data = data;
    int status = reg_add_owned(plugin->methods, method ? &copy : NULL, &owner, &existing, reason,
                               sizeof reason);
    if (status == 0 && owned.free_data)
        plugin->data[plugin->data_count++] = owned;
    char name[256] = "(none)";
    if (status != 0 && method &&
        method->size >= offsetof(rpcd_method, name) + sizeof method->name && method->name)
        reg_printable_name(method->name, strlen(method->name), name, sizeof name);
    switch (status) {
    case 0: return RPCD_OK;
    case REG_ERR_EXISTS:
        if (plugin->conflict)
            return RPCD_ERR_EXISTS;
        if (existing->owner == plugin)
            status = asprintf(&plugin->conflict, "[plugin %s] registers method '%s' twice",
                              ld_section_of(plugin), name);
        else
            status = asprintf(&plugin->conflict,
                              "method '%s' is registered by both [plugin %s] and [plugin %s]", name,
                              existing->owner_name, ld_section_of(plugin));
        if (status < 0)
            plugin->conflict = NULL;
        return RPCD_ERR_EXISTS;
    case REG_ERR_NO_MEMORY: return RPCD_ERR_NO_MEMORY;
    default:
        log_message(LOG_WARNING, "%s: refused to register method '%s': %s", ld_section_of(plugin),
                    name, reason);
        return RPCD_ERR_INVALID_ARGUMENT;
    }
}

static const char *host_config_get(rpcd_plugin *plugin, const char *key)
{
    if (!plugin || !plugin->initialising || !key)
        return NULL;
    return cfg_plugin_get(plugin->config, key);
}

const char *ld_section_of(const struct rpcd_plugin *plugin)
{
    if (plugin && plugin->identity.name)
        return plugin->identity.name;
    if (plugin && plugin->config)
        return plugin->config->name;
    return plugin && plugin->info ? plugin->info->name : "plugin";
}

static const char *logger_name(const rpcd_plugin *plugin)
{
    return ld_section_of(plugin);
}

/*
 * A log line to the MCP client, once: to the request whose handler logs it when that request
 * asked for the level (before its response), else to the session when it asked.
 */
static void tell_client(const rpcd_plugin *plugin, int level, const char *text, size_t length)
{
    if (!call_running_log(logger_name(plugin), level, text, length))
        mcp_events_log(logger_name(plugin), level, text, length);
}

/* The line also goes to the MCP client when it asked for this level: formatted only then. */
static void host_log_v(rpcd_plugin *plugin, int level, const char *format, va_list args)
{
    if ((mcp_events_client_log_level() >= level || call_running_log_level() >= level) && format) {
        char text[2048];
        va_list copy;
        va_copy(copy, args);
        int length = vsnprintf(text, sizeof text, format, copy);
        va_end(copy);
        if (length >= 0)
            tell_client(plugin, level, text,
                        (size_t)length < sizeof text ? (size_t)length : sizeof text - 1);
    }
    log_message_prefixed(level, logger_name(plugin), format, args);
}

static void host_log(rpcd_plugin *plugin, int level, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    host_log_v(plugin, level, format, args);
    va_end(args);
}

static void host_log_text(rpcd_plugin *plugin, int level, const char *text)
{
    if (text)
        tell_client(plugin, level, text, strnlen(text, 2048));
    log_text_prefixed(level, logger_name(plugin), text);
}

static int host_resource_updated(rpcd_plugin *plugin, const char *uri)
{
    if (!plugin || plugin->initialising)
        return RPCD_ERR_UNSUPPORTED;
    return mcp_events_resource_updated(uri) == 0 ? RPCD_OK : RPCD_ERR_INVALID_ARGUMENT;
}

const rpcd_host_api *ld_host_api(void)
{
    static rpcd_host_api api;
    static bool filled;
    if (!filled) {
        api.size = sizeof api;
        api.abi_major = RPCD_ABI_MAJOR;
        api.abi_minor = RPCD_ABI_MINOR;
        api.register_method = host_register_method;
        api.config_get = host_config_get;
        api.log = host_log;
        api.log_v = host_log_v;
        fill_call_api(&api);
        api.log_text = host_log_text;
        api.resource_updated = host_resource_updated;
        filled = true;
    }
    return &api;
}

void ld_set_call_api(void (*fill)(rpcd_host_api *api))
{
    fill_call_api = fill;
}
