/* SPDX-License-Identifier: MIT */
/*
 * An isolated plugin's proxy and the copy of the config it keeps: the daemon's settings and its
 * own section, nothing of the other plugins or of [mcp].
 */
#include "isolation/isolated_plugin.h"

#include "isolation/proxy.h"
#include "base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct isolated_plugin {
    iso_proxy *proxy;
    rpcd_config *config; /* owned: the daemon's settings and plugins[0], this plugin's section */
};

static char *copy_text(const char *text, bool *failed)
{
    char *copy = text ? strdup(text) : NULL;
    *failed |= text && !copy;
    return copy;
}

static cfg_pair *copy_pairs(const cfg_pair *pairs, size_t count, bool *failed)
{
    cfg_pair *copy = count ? calloc(count, sizeof *copy) : NULL;
    *failed |= count && !copy;
    for (size_t i = 0; copy && i < count; i++) {
        copy[i].key = copy_text(pairs[i].key, failed);
        copy[i].value = copy_text(pairs[i].value, failed);
    }
    return copy;
}

/* daemon's scalars, its strings the host reads, and config as its one plugin. NULL: memory. */
static rpcd_config *copy_config(const rpcd_config *daemon, const cfg_plugin *config)
{
    rpcd_config *copy = malloc(sizeof *copy);
    cfg_plugin *plugin = calloc(1, sizeof *plugin);
    if (!copy || !plugin) {
        free(copy);
        free(plugin);
        return NULL;
    }
    *copy = (rpcd_config){
        .log_level = daemon->log_level,
        .limits = daemon->limits,
        .shutdown_grace_ms = daemon->shutdown_grace_ms,
        .insecure = daemon->insecure,
        .no_new_privs = daemon->no_new_privs,
        .isolation = daemon->isolation,
        .plugins = plugin,
        .plugin_count = 1,
    };
    bool failed = false;
    copy->path = copy_text(daemon->path, &failed);
    copy->plugin_dir = copy_text(daemon->plugin_dir, &failed);
    copy->user = copy_text(daemon->user, &failed);
    copy->group = copy_text(daemon->group, &failed);
    *plugin = *config;
    plugin->file = NULL;              /* borrowed from a config that may go */
    plugin->policy = (cfg_policy){0}; /* the tool policy is rpcd's door, never the host's */
    plugin->name = copy_text(config->name, &failed);
    plugin->path = copy_text(config->path, &failed);
    plugin->pairs = copy_pairs(config->pairs, config->pair_count, &failed);
    plugin->timeouts = copy_pairs(config->timeouts, config->timeout_count, &failed);
    cfg_confinement *keys = &plugin->confinement;
    keys->user = copy_text(config->confinement.user, &failed);
    keys->group = copy_text(config->confinement.group, &failed);
    keys->read_paths = copy_text(config->confinement.read_paths, &failed);
    keys->write_paths = copy_text(config->confinement.write_paths, &failed);
    if (failed) {
        cfg_free(copy);
        return NULL;
    }
    return copy;
}

int isolated_start(const rpcd_config *daemon, const cfg_plugin *config, int fd, registry *methods,
                   const void *owner, isolated_plugin **out, char *error, size_t error_size)
{
    isolated_plugin *plugin = calloc(1, sizeof *plugin);
    if (plugin)
        plugin->config = copy_config(daemon, config);
    if (!plugin || !plugin->config) {
        free(plugin);
        close(fd);
        snprintf(error, error_size, "plugin %s: out of memory", config->path);
        return -1;
    }
    iso_settings settings = {
        .limits = daemon->limits,
        .log_level = log_get_level(),
        .insecure = daemon->insecure,
        .grace_ms = daemon->shutdown_grace_ms,
        .daemon = plugin->config,
    };
    if (iso_proxy_start(&plugin->config->plugins[0], fd, &settings, methods, owner, &plugin->proxy,
                        error, error_size) != 0) {
        isolated_stop(plugin);
        return -1;
    }
    *out = plugin;
    return 0;
}

void isolated_stop(isolated_plugin *plugin)
{
    if (!plugin)
        return;
    iso_proxy_stop(plugin->proxy);
    cfg_free(plugin->config);
    free(plugin);
}

static int kind_start(const rpcd_config *daemon, const cfg_plugin *config, int fd,
                      registry *methods, const void *owner, void **out, char *error,
                      size_t error_size)
{
    isolated_plugin *plugin;
    int status = isolated_start(daemon, config, fd, methods, owner, &plugin, error, error_size);
    if (status == 0)
        *out = plugin;
    return status;
}

static void kind_stop(void *running)
{
    isolated_stop(running);
}

static void kind_describe(void *running, ld_status *out)
{
    isolated_plugin *plugin = running;
    iso_proxy_status status;
    iso_proxy_describe(plugin->proxy, &status);
    out->host_pid = status.pid;
    out->restarts = status.restarts;
    out->deadline_kills = status.deadline_kills;
    snprintf(out->last_crash, sizeof out->last_crash, "%s", status.last_crash);
}

const ld_plugin_kind *isolated_plugin_kind(void)
{
    static const ld_plugin_kind kind = {kind_start, kind_stop, kind_describe};
    return &kind;
}
