/* SPDX-License-Identifier: MIT */
/*
 * dlopen-based plugin loader and the non-call half of the host function table.
 */
#include "loader.h"

#include "call.h"
#include "file_safety.h"
#include "isolation/proxy.h"
#include "log.h"
#include "signals.h"

#include <rpcd/plugin.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rpcd_plugin {
    void *handle;                 /* from dlopen */
    const rpcd_plugin_info *info; /* static storage inside the plugin */
    void *state;                  /* what init stored for shutdown */
    cfg_plugin *config;           /* borrowed from the config */
    registry *methods;            /* borrowed */
    bool initialising;            /* register_method and config_get are allowed */
    char *conflict;               /* the first duplicate name it tried, for the message */
    int opened_fd;                /* the file, opened and checked by the caller; -1: open path */
    iso_proxy *isolated;          /* the plugin runs in a host process of its own; NULL: here */
};

/* Fills the call_* members of the host table: rpcd's own, or a plugin host's (ld_set_call_api). */
static void (*fill_call_api)(rpcd_host_api *api) = call_fill_host_api;

struct loader {
    struct rpcd_plugin **plugins; /* load order */
    size_t count;
};

/* The members a 1.0 plugin description must have. */
#define INFO_V1_0_SIZE (offsetof(rpcd_plugin_info, shutdown) + sizeof(void (*)(void *)))

static int host_register_method(rpcd_plugin *plugin, const rpcd_method *method)
{
    if (!plugin || !plugin->initialising)
        return RPCD_ERR_UNSUPPORTED;
    const reg_method *existing = NULL;
    const char *reason = "unknown";
    const reg_owner owner = {plugin, plugin->info->name, plugin->info->abi_minor};
    int status = reg_add_owned(plugin->methods, method, &owner, &existing, &reason);
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
            status = asprintf(&plugin->conflict, "plugin '%s' registers method '%s' twice",
                              plugin->info->name, name);
        else
            status = asprintf(&plugin->conflict,
                              "method '%s' is registered by both plugin '%s' and plugin '%s'", name,
                              existing->owner_name, plugin->info->name);
        if (status < 0)
            plugin->conflict = NULL;
        return RPCD_ERR_EXISTS;
    case REG_ERR_NO_MEMORY: return RPCD_ERR_NO_MEMORY;
    default:
        log_message(LOG_WARNING, "%s: refused to register method '%s': %s", plugin->info->name,
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

static void host_log(rpcd_plugin *plugin, int level, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    log_message_prefixed(level, plugin && plugin->info ? plugin->info->name : "plugin", format,
                         args);
    va_end(args);
}

static void host_log_v(rpcd_plugin *plugin, int level, const char *format, va_list args)
{
    log_message_prefixed(level, plugin && plugin->info ? plugin->info->name : "plugin", format,
                         args);
}

static void host_log_text(rpcd_plugin *plugin, int level, const char *text)
{
    log_text_prefixed(level, plugin && plugin->info ? plugin->info->name : "plugin", text);
}

static const rpcd_host_api *host_api(void)
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
        filled = true;
    }
    return &api;
}

/* Shutdown (when init succeeded), user data, methods, then the code they pointed into. */
static void unload_one(struct rpcd_plugin *plugin, registry *methods, bool initialised)
{
    if (plugin->isolated)
        iso_proxy_stop(plugin->isolated);
    if (initialised && plugin->info && plugin->info->shutdown)
        plugin->info->shutdown(plugin->state);
    reg_remove_owner(methods, plugin);
    if (plugin->handle)
        dlclose(plugin->handle);
    free(plugin->conflict);
    free(plugin);
}

/*
 * Opens the plugin's file, checks it and loads it by descriptor: nobody can put another file in
 * its place between the check and the load. Returns 0, or -1 with the reason in error.
 */
static int open_checked(struct rpcd_plugin *plugin, bool insecure, char *error, size_t error_size)
{
    const char *path = plugin->config->path;
    int fd = plugin->opened_fd;
    char refusal[512];
    if (fd < 0 && fsafe_open(path, !insecure, &fd, refusal, sizeof refusal) != 0) {
        snprintf(error, error_size, "plugin %s: %s", path, refusal);
        return -1;
    }
    plugin->handle = fsafe_dlopen(fd, RTLD_NOW | RTLD_LOCAL, refusal, sizeof refusal);
    if (fd != plugin->opened_fd)
        close(fd);
    if (!plugin->handle) {
        snprintf(error, error_size, "plugin %s: %s", path, refusal);
        return -1;
    }
    return 0;
}

/*
 * Finds the entry point and takes the description it returns, once it fits this rpcd's ABI and
 * holds what every version must. Returns 0, or -1 with the reason in error.
 */
static int read_description(struct rpcd_plugin *plugin, char *error, size_t error_size)
{
    const char *path = plugin->config->path;
    rpcd_plugin_entry_fn entry;
    /* POSIX's way to turn dlsym's object pointer into a function pointer without a warning. */
    *(void **)&entry = dlsym(plugin->handle, RPCD_PLUGIN_ENTRY_SYMBOL);
    if (!entry) {
        snprintf(error, error_size, "plugin %s: no entry point %s(): not an rpcd plugin", path,
                 RPCD_PLUGIN_ENTRY_SYMBOL);
        return -1;
    }
    const rpcd_plugin_info *plugin_info = entry();
    if (!plugin_info || plugin_info->size < offsetof(rpcd_plugin_info, name)) {
        snprintf(error, error_size, "plugin %s: %s() returned no plugin description", path,
                 RPCD_PLUGIN_ENTRY_SYMBOL);
        return -1;
    }
    if (plugin_info->abi_major != RPCD_ABI_MAJOR || plugin_info->abi_minor > RPCD_ABI_MINOR) {
        snprintf(error, error_size,
                 "plugin %s: built for plugin ABI %u.%u, but this rpcd "
                 "has ABI %d.%d (%s)",
                 path, plugin_info->abi_major, plugin_info->abi_minor, RPCD_ABI_MAJOR,
                 RPCD_ABI_MINOR,
                 plugin_info->abi_major != RPCD_ABI_MAJOR ? "the major versions differ"
                                                          : "the plugin needs a newer rpcd");
        return -1;
    }
    if (plugin_info->size < INFO_V1_0_SIZE || !plugin_info->name || !plugin_info->init) {
        snprintf(error, error_size,
                 "plugin %s: incomplete plugin description (size %zu, "
                 "name and init required)",
                 path, plugin_info->size);
        return -1;
    }
    plugin->info = plugin_info;
    return 0;
}

/*
 * Runs the plugin's init, which registers its methods, then looks at what it changed of rpcd's
 * signals. Returns 0, or -1 with the reason in error; *initialised says whether init succeeded
 * (then its shutdown is owed).
 */
static int init_plugin(struct rpcd_plugin *plugin, bool *initialised, char *error,
                       size_t error_size)
{
    const char *path = plugin->config->path;
    const rpcd_plugin_info *plugin_info = plugin->info;
    char reason[512] = "";
    plugin->initialising = true;
    int status = plugin_info->init(plugin, host_api(), &plugin->state, reason, sizeof reason);
    plugin->initialising = false;
    sig_check_after_init(plugin_info->name);
    if (status != RPCD_OK) {
        reason[sizeof reason - 1] = '\0';
        snprintf(error, error_size, "plugin %s (%s): init failed: %s", path, plugin_info->name,
                 reason[0] ? reason : "no reason given");
        return -1;
    }
    *initialised = true;
    if (plugin->conflict) {
        snprintf(error, error_size, "plugin %s: %s", path, plugin->conflict);
        return -1;
    }
    return 0;
}

/* A key in the plugin's section that its init never asked for is likely a typo: say so. */
static void warn_unused_keys(const struct rpcd_plugin *plugin)
{
    const cfg_plugin *config = plugin->config;
    for (size_t i = 0; i < config->pair_count; i++)
        if (!config->pairs[i].used)
            log_message(LOG_WARNING, "plugin %s (%s) did not use its key '%s'", config->path,
                        plugin->info->name, config->pairs[i].key);
}

/*
 * An isolated plugin: its file opened and checked here, and loaded by a host process from that
 * descriptor, which the proxy keeps for restarts. Returns 0, or -1 with the reason in error.
 */
static int start_isolated(struct rpcd_plugin *plugin, const rpcd_config *daemon, char *error,
                          size_t error_size)
{
    const char *path = plugin->config->path;
    int fd;
    char refusal[512];
    if (fsafe_open(path, !daemon->insecure, &fd, refusal, sizeof refusal) != 0) {
        snprintf(error, error_size, "plugin %s: %s", path, refusal);
        return -1;
    }
    iso_settings settings = {
        .workers = daemon->workers,
        .max_depth = daemon->max_depth,
        .log_level = log_get_level(),
        .insecure = daemon->insecure,
        .grace_ms = daemon->shutdown_grace_ms,
        .daemon = daemon,
    };
    return iso_proxy_start(plugin->config, fd, &settings, plugin->methods, plugin,
                           &plugin->isolated, error, error_size);
}

/* Loads one plugin (from opened_fd when it is not -1). Returns 0, or -1 with the reason in error.
 */
static int load_one(cfg_plugin *config, const rpcd_config *daemon, int opened_fd, registry *methods,
                    struct rpcd_plugin **out, char *error, size_t error_size)
{
    struct rpcd_plugin *plugin = calloc(1, sizeof *plugin);
    if (!plugin) {
        snprintf(error, error_size, "plugin %s: out of memory", config->path);
        return -1;
    }
    plugin->config = config;
    plugin->methods = methods;
    plugin->opened_fd = opened_fd;
    bool insecure = daemon ? daemon->insecure : true;
    if (daemon && config->isolation == CFG_ISOLATION_PROCESS) {
        if (start_isolated(plugin, daemon, error, error_size) != 0) {
            unload_one(plugin, methods, false);
            return -1;
        }
        *out = plugin;
        return 0;
    }
    /* Only a process of its own can stop a handler that does not return. */
    if (daemon && (config->timeout_ms || config->timeout_count))
        log_message(LOG_WARNING,
                    "plugin %s: timeout_ms applies to plugins with isolation = process only; "
                    "ignored",
                    config->path);
    bool initialised = false;
    if (open_checked(plugin, insecure, error, error_size) != 0 ||
        read_description(plugin, error, error_size) != 0 ||
        init_plugin(plugin, &initialised, error, error_size) != 0) {
        unload_one(plugin, methods, initialised);
        return -1;
    }
    warn_unused_keys(plugin);
    log_message(LOG_DEBUG, "loaded plugin %s (%s %s)", config->path, plugin->info->name,
                plugin->info->version ? plugin->info->version : "");
    *out = plugin;
    return 0;
}

int ld_load_all(rpcd_config *config, registry *methods, loader **out, char *error,
                size_t error_size)
{
    loader *plugins = calloc(1, sizeof *plugins);
    if (!plugins || (config->plugin_count > 0 &&
                     !(plugins->plugins = calloc(config->plugin_count, sizeof(void *))))) {
        free(plugins);
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    fsafe_session_begin(); /* the plugins mostly share a directory */
    for (size_t i = 0; i < config->plugin_count; i++) {
        cfg_plugin *plugin_config = &config->plugins[i];
        struct rpcd_plugin *plugin;
        if (load_one(plugin_config, config, -1, methods, &plugin, error, error_size) == 0) {
            plugins->plugins[plugins->count++] = plugin;
            continue;
        }
        if (!plugin_config->required) {
            log_message(LOG_WARNING, "%s (not required: skipped)", error);
            error[0] = '\0';
            continue;
        }
        fsafe_session_end();
        ld_unload_all(plugins, methods);
        return -1;
    }
    fsafe_session_end();
    *out = plugins;
    return 0;
}

int ld_load_fd(cfg_plugin *config, int fd, registry *methods, loader **out, const char **name,
               char *error, size_t error_size)
{
    loader *plugins = calloc(1, sizeof *plugins);
    if (!plugins || !(plugins->plugins = calloc(1, sizeof(void *)))) {
        free(plugins);
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    /* The caller checked the file when it opened it: insecure only skips a second look. */
    if (load_one(config, NULL, fd, methods, &plugins->plugins[0], error, error_size) != 0) {
        free(plugins->plugins);
        free(plugins);
        return -1;
    }
    plugins->count = 1;
    *name = plugins->plugins[0]->info->name;
    *out = plugins;
    return 0;
}

void ld_set_call_api(void (*fill)(rpcd_host_api *api))
{
    fill_call_api = fill;
}

void ld_unload_all(loader *plugins, registry *methods)
{
    if (!plugins)
        return;
    for (size_t i = plugins->count; i-- > 0;)
        unload_one(plugins->plugins[i], methods, true);
    free(plugins->plugins);
    free(plugins);
}

size_t ld_count(const loader *plugins)
{
    return plugins->count;
}

void ld_about_at(const loader *plugins, size_t index, ld_about *out)
{
    const struct rpcd_plugin *plugin = plugins->plugins[index];
    *out = (ld_about){plugin->config->path, plugin->info->name, plugin->info->version,
                      plugin->info->abi_major, plugin->info->abi_minor};
}
