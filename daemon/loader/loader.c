/* SPDX-License-Identifier: MIT */
/*
 * dlopen-based plugin loader. A loaded plugin is shared by every generation that keeps it (a
 * reference each): the last one shuts it down. The host table it hands plugins is loader_host.c.
 */
#include "loader/loader.h"
#include "loader/loader_internal.h"

#include "base/buffer.h"
#include "calls/call.h"
#include "config/config_keys.h"
#include "base/file_safety.h"
#include "base/lock.h"
#include "base/log.h"
#include "base/log_capture.h"
#include "loader/plugin_abi.h"
#include "loader/plugin_copy.h"
#include "loader/plugin_identity.h"
#include "base/signals.h"

#include <rpcd/plugin.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Taken around a plugin's last code (shutdown to dlclose) and around each dlopen: code loaded on
 * a reload may land where a plugin shut down on another thread was, and its statics with it. The
 * dynamic loader's own lock orders the two, but a race detector cannot see it; this one it sees.
 */
static pthread_mutex_t code_lock = PTHREAD_MUTEX_INITIALIZER;

struct loader {
    struct rpcd_plugin **plugins; /* load order, a reference each */
    size_t count;
};

/*
 * Drops a reference; the last one stops an isolated plugin's host, or shuts the plugin down
 * (when init succeeded), frees its methods' user data (newest first), then unloads the code they
 * pointed into.
 */
static void release(struct rpcd_plugin *plugin)
{
    if (atomic_fetch_sub_explicit(&plugin->references, 1, memory_order_acq_rel) != 1)
        return;
    /* Outside the lock: a host may take the grace period to end, and no code of it is here. */
    if (plugin->isolated)
        plugin->kind->stop(plugin->isolated);
    lock_take(&code_lock);
    if (plugin->initialised && plugin->info->shutdown)
        plugin->info->shutdown(plugin->state);
    for (size_t i = plugin->data_count; i-- > 0;)
        plugin->data[i].free_data(plugin->data[i].data);
    if (plugin->handle)
        dlclose(plugin->handle);
    lock_release(&code_lock);
    free(plugin->data);
    pident_free(&plugin->identity);
    free(plugin->conflict);
    free(plugin);
}

/* A plugin that failed while loading: its methods leave the table it was loading into. */
static void unload_failed(struct rpcd_plugin *plugin, registry *methods)
{
    reg_remove_owner(methods, plugin);
    release(plugin);
}

/*
 * Opens the plugin's file, checks it and copies it to a sealed memfd (*copy, new), the one copy
 * both ways of running a plugin load from: nobody can put another file in its place between the
 * check and the load, nor change the code once it runs. Fills the plugin's identity from what
 * was checked. Returns 0, or -1 with the reason in error.
 */
static int sealed_copy(struct rpcd_plugin *plugin, const rpcd_config *daemon, int *copy,
                       char *error, size_t error_size)
{
    const char *path = plugin->config->path;
    int fd;
    char refusal[512];
    if (fsafe_open(path, !daemon->insecure, &fd, refusal, sizeof refusal) != 0) {
        snprintf(error, error_size, "plugin %s: %s", path, refusal);
        return -1;
    }
    struct stat file;
    uint64_t hash;
    int status =
        pcopy_sealed(fd, plugin->config->name, copy, &hash, &file, refusal, sizeof refusal);
    close(fd);
    if (status != 0) {
        snprintf(error, error_size, "plugin %s: %s", path, refusal);
        return -1;
    }
    if (pident_fill(&plugin->identity, daemon, plugin->config, &file, hash) != 0) {
        snprintf(error, error_size, "plugin %s: out of memory", path);
        close(*copy);
        return -1;
    }
    return 0;
}

/* Loads the plugin's code: a plugin host's from the descriptor rpcd checked, rpcd's own from a
 * sealed copy of its file (sealed_copy). Returns 0, or -1 with the reason in error. */
static int open_checked(struct rpcd_plugin *plugin, const rpcd_config *daemon, bool serving,
                        char *error, size_t error_size)
{
    const char *path = plugin->config->path;
    int copy;
    char refusal[512];
    if (plugin->opened_fd >= 0) {
        /* A plugin host's: the parent checked the file and copied it to a sealed memfd, which
         * it keeps for restarts. */
        plugin->handle =
            fsafe_dlopen(plugin->opened_fd, RTLD_NOW | RTLD_LOCAL, refusal, sizeof refusal);
        if (!plugin->handle)
            snprintf(error, error_size, "plugin %s: %s", path, refusal);
        return plugin->handle ? 0 : -1;
    }
    if (sealed_copy(plugin, daemon, &copy, error, error_size) != 0)
        return -1;
    /* Only while serving: at start-up no plugin is shut down meanwhile, and a runtime that
     * starts threads of its own in dlopen (Go's) confuses the race detector about the lock. */
    if (serving)
        lock_take(&code_lock);
    plugin->handle = fsafe_dlopen(copy, RTLD_NOW | RTLD_LOCAL, refusal, sizeof refusal);
    if (serving)
        lock_release(&code_lock);
    close(copy);
    if (!plugin->handle) {
        snprintf(error, error_size, "plugin %s: %s", path, refusal);
        return -1;
    }
    return 0;
}

/* The description the plugin's entry point returns, checked (plugin_abi.h). */
static int read_description(struct rpcd_plugin *plugin, char *error, size_t error_size)
{
    return plugin_abi_description(plugin->handle, plugin->config->path, &plugin->info, error,
                                  error_size);
}

/*
 * Runs the plugin's init, which registers its methods, then looks at what it changed of rpcd's
 * signals. Returns 0, or -1 with the reason in error; plugin->initialised says whether init
 * succeeded (then its shutdown is owed).
 */
static int init_plugin(struct rpcd_plugin *plugin, char *error, size_t error_size)
{
    const char *path = plugin->config->path;
    const rpcd_plugin_info *plugin_info = plugin->info;
    char reason[512] = "";
    plugin->initialising = true;
    int status = plugin_info->init(plugin, ld_host_api(), &plugin->state, reason, sizeof reason);
    plugin->initialising = false;
    sig_check_after_init(ld_section_of(plugin));
    if (status != RPCD_OK && plugin->conflict) {
        /* An init that gives up on the refused name has that for its reason, whatever it says
         * (its own words rarely name the other section). */
        reason[sizeof reason - 1] = '\0';
        snprintf(error, error_size, "plugin %s: init failed: %s%s%s", path, plugin->conflict,
                 reason[0] ? "; the plugin says: " : "", reason);
        return -1;
    }
    if (status != RPCD_OK) {
        reason[sizeof reason - 1] = '\0';
        snprintf(error, error_size, "plugin %s (%s): init failed: %s", path, ld_section_of(plugin),
                 reason[0] ? reason : "no reason given");
        return -1;
    }
    plugin->initialised = true;
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
                        ld_section_of(plugin), config->pairs[i].key);
}

/*
 * The deadlines of the methods the plugin registered: the call layer answers at a deadline, and
 * the handler, which only a process of its own could stop, keeps its worker until it returns.
 */
static void set_timeouts(const struct rpcd_plugin *plugin)
{
    const cfg_plugin *config = plugin->config;
    if (config->timeout_ms == 0 && config->timeout_count == 0)
        return;
    for (size_t i = 0; i < reg_count(plugin->methods); i++) {
        const reg_method *method = reg_at(plugin->methods, i);
        if (method->owner == plugin)
            reg_set_timeout(plugin->methods, method->name,
                            cfg_method_timeout(config, method->name));
    }
    for (size_t i = 0; i < config->timeout_count; i++) {
        const char *name = config->timeouts[i].key;
        const reg_method *method = reg_find(plugin->methods, name, strlen(name));
        if (!method || method->owner != plugin)
            log_message(LOG_WARNING, "plugin %s (%s): timeout_ms.%s names none of its methods",
                        config->path, ld_section_of(plugin), name);
    }
}

/* What runs the plugins with isolation = process (ld_set_isolated_kind). */
static const ld_plugin_kind *isolated_kind;

/*
 * An isolated plugin: its file opened and checked here, copied to a sealed memfd as in process,
 * and its host loads that copy by descriptor, which the proxy keeps for restarts: a file written
 * over or removed changes nothing for the running host nor for the next, until a reload.
 * Returns 0, or -1 with the reason in error.
 */
static int start_isolated(struct rpcd_plugin *plugin, const rpcd_config *daemon, char *error,
                          size_t error_size)
{
    const char *path = plugin->config->path;
    int copy;
    if (sealed_copy(plugin, daemon, &copy, error, error_size) != 0)
        return -1;
    const ld_plugin_kind *kind = isolated_kind;
    if (!kind) {
        snprintf(error, error_size, "plugin %s: isolation = process is not available here", path);
        close(copy);
        return -1;
    }
    plugin->kind = kind;
    return kind->start(daemon, plugin->config, copy, plugin->methods, plugin, &plugin->isolated,
                       error, error_size);
}

void ld_set_isolated_kind(const ld_plugin_kind *kind)
{
    isolated_kind = kind;
}

/*
 * Loads one plugin (one reference, for the caller): of daemon's config, or for a plugin host
 * (daemon NULL) from opened_fd. Returns 0, or -1 with the reason in error.
 */
static int load_one(cfg_plugin *config, const rpcd_config *daemon, int opened_fd, bool serving,
                    registry *methods, struct rpcd_plugin **out, char *error, size_t error_size)
{
    struct rpcd_plugin *plugin = calloc(1, sizeof *plugin);
    if (!plugin) {
        snprintf(error, error_size, "plugin %s: out of memory", config->path);
        return -1;
    }
    atomic_init(&plugin->references, 1);
    plugin->config = config;
    /* A plugin host's: the section it was started for names it in its log lines too. */
    if (opened_fd >= 0 && !(plugin->identity.name = strdup(config->name))) {
        snprintf(error, error_size, "plugin %s: out of memory", config->path);
        free(plugin);
        return -1;
    }
    plugin->methods = methods;
    plugin->opened_fd = opened_fd;
    if (daemon && config->isolation == CFG_ISOLATION_PROCESS) {
        if (start_isolated(plugin, daemon, error, error_size) != 0) {
            unload_failed(plugin, methods);
            return -1;
        }
    } else {
        /* What the plugin prints from its constructors (dlopen), its entry point and its init
         * is logged under its name, as a plugin host's is. */
        lcap_redirect redirect;
        lcap_plugin_begin(config->name, &redirect);
        bool failed = open_checked(plugin, daemon, serving, error, error_size) != 0 ||
                      read_description(plugin, error, error_size) != 0 ||
                      init_plugin(plugin, error, error_size) != 0;
        lcap_plugin_end(&redirect);
        if (failed) {
            unload_failed(plugin, methods);
            return -1;
        }
        warn_unused_keys(plugin);
        set_timeouts(plugin);
        log_message(LOG_DEBUG, "loaded plugin %s from %s (%s %s)", config->name, config->path,
                    plugin->info->name, plugin->info->version ? plugin->info->version : "");
    }
    /* Neither outlives the load: a later generation has a config and a table of its own. */
    plugin->config = NULL;
    plugin->methods = NULL;
    *out = plugin;
    return 0;
}

/*
 * Enters the methods running registered in its generation into methods, for a new generation
 * that keeps it: every member, an isolated plugin's cancel hook, and the deadlines config gives
 * it. Returns 0, or -1 with the reason in error (a name another plugin took).
 */
static int register_again(struct rpcd_plugin *running, const cfg_plugin *config,
                          const registry *before, registry *methods, char *error, size_t error_size)
{
    for (size_t i = 0; i < reg_count(before); i++) {
        const reg_method *method = reg_at(before, i);
        if (method->owner != running)
            continue;
        /* Its schemas compiled again, with the section as it is now. */
        const reg_owner owner = {running, method->owner_name, method->abi_minor,
                                 config->validate_arguments, config->assert_format};
        rpcd_method descriptor = {
            .size = sizeof descriptor,
            .name = method->name,
            .handler = method->handler,
            .user_data = method->user_data,
            .flags = method->flags,
            .description = method->description,
            .params_schema = method->params_schema,
            .title = method->title,
            .annotations = method->annotations,
            .output_schema = method->output_schema,
            .icons = method->icons,
            .mcp_role = method->mcp_role,
            .mcp_descriptor = method->mcp_descriptor,
        };
        const reg_method *existing = NULL;
        char reason[256] = "";
        int status = reg_add_owned(methods, &descriptor, &owner, &existing, reason, sizeof reason);
        if (status == REG_ERR_EXISTS)
            snprintf(error, error_size,
                     "method '%s' is registered by both [plugin %s] and [plugin %s]", method->name,
                     existing->owner_name, method->owner_name);
        else if (status == REG_ERR_INVALID)
            snprintf(error, error_size, "plugin %s: refused to register method '%s': %s",
                     method->owner_name, method->name, reason);
        else if (status != 0)
            snprintf(error, error_size, "plugin %s: out of memory", running->identity.path);
        if (status != 0) {
            reg_remove_owner(methods, running);
            return -1;
        }
        if (method->cancel_hook)
            reg_set_cancel_hook(methods, method->name, method->cancel_hook);
        /* Its deadlines are the new config's: in process, they are no part of what makes it
         * the same. */
        reg_set_timeout(methods, method->name, cfg_method_timeout(config, method->name));
    }
    return 0;
}

/* The running plugin config (a section of daemon) names unchanged, or NULL. */
static struct rpcd_plugin *find_unchanged(const loader *running, const rpcd_config *daemon,
                                          const cfg_plugin *config)
{
    if (!running)
        return NULL;
    for (size_t i = 0; i < running->count; i++) {
        struct rpcd_plugin *plugin = running->plugins[i];
        if (strcmp(plugin->identity.name, config->name) != 0)
            continue;
        int fd;
        char reason[512];
        if (fsafe_open(config->path, !daemon->insecure, &fd, reason, sizeof reason) != 0)
            return NULL; /* loading it says why */
        bool same = pident_same(&plugin->identity, daemon, config, fd);
        close(fd);
        return same ? plugin : NULL;
    }
    return NULL;
}

/* Keeps an unchanged plugin (a reference) or loads the one config names. */
static int take_one(const ld_previous *previous, const rpcd_config *daemon, cfg_plugin *config,
                    registry *methods, struct rpcd_plugin **out, char *error, size_t error_size)
{
    struct rpcd_plugin *plugin =
        previous ? find_unchanged(previous->plugins, daemon, config) : NULL;
    if (!plugin)
        return load_one(config, daemon, -1, previous != NULL, methods, out, error, error_size);
    if (register_again(plugin, config, previous->methods, methods, error, error_size) != 0)
        return -1;
    atomic_fetch_add_explicit(&plugin->references, 1, memory_order_relaxed);
    *out = plugin;
    return 0;
}

int ld_load(rpcd_config *config, const ld_previous *previous, registry *methods, loader **out,
            char *error, size_t error_size)
{
    loader *plugins = calloc(1, sizeof *plugins);
    if (!plugins || (config->plugin_count > 0 &&
                     !(plugins->plugins = calloc(config->plugin_count, sizeof(void *))))) {
        free(plugins);
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    const rpcd_config *daemon = previous && previous->daemon ? previous->daemon : config;
    fsafe_session_begin(); /* the plugins mostly share a directory */
    for (size_t i = 0; i < config->plugin_count; i++) {
        cfg_plugin *plugin_config = &config->plugins[i];
        struct rpcd_plugin *plugin;
        if (take_one(previous, daemon, plugin_config, methods, &plugin, error, error_size) == 0) {
            plugins->plugins[plugins->count++] = plugin;
            continue;
        }
        if (!plugin_config->required) {
            log_message(LOG_WARNING, "%s (not required: skipped)", error);
            error[0] = '\0';
            continue;
        }
        fsafe_session_end();
        /* The table holds nothing of a load that failed. */
        for (size_t j = 0; j < plugins->count; j++)
            reg_remove_owner(methods, plugins->plugins[j]);
        ld_unload_all(plugins, methods);
        return -1;
    }
    fsafe_session_end();
    *out = plugins;
    return 0;
}

int ld_load_all(rpcd_config *config, registry *methods, loader **out, char *error,
                size_t error_size)
{
    return ld_load(config, NULL, methods, out, error, error_size);
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
    /* The caller checked the file when it opened it. */
    if (load_one(config, NULL, fd, false, methods, &plugins->plugins[0], error, error_size) != 0) {
        free(plugins->plugins);
        free(plugins);
        return -1;
    }
    plugins->count = 1;
    *name = plugins->plugins[0]->info->name;
    *out = plugins;
    return 0;
}

void ld_unload_all(loader *plugins, registry *methods)
{
    (void)methods; /* the generation frees its table itself, after */
    if (!plugins)
        return;
    for (size_t i = plugins->count; i-- > 0;)
        release(plugins->plugins[i]);
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
    /* The config is borrowed while loading only: the path is the identity's. An isolated
     * plugin's description is its host's, not here. */
    const rpcd_plugin_info *info = plugin->info;
    *out = (ld_about){plugin->identity.path, info ? info->name : plugin->identity.name,
                      info ? info->version : NULL, info ? info->abi_major : 0,
                      info ? info->abi_minor : 0};
}

void ld_status_at(const loader *plugins, size_t index, ld_status *out)
{
    const struct rpcd_plugin *plugin = plugins->plugins[index];
    memset(out, 0, sizeof *out);
    out->isolated = plugin->isolated != NULL;
    if (plugin->isolated && plugin->kind->describe)
        plugin->kind->describe(plugin->isolated, out);
}

const char *ld_name_at(const loader *plugins, size_t index)
{
    return plugins->plugins[index]->identity.name;
}

const void *ld_instance(const loader *plugins, const char *name)
{
    for (size_t i = 0; plugins && i < plugins->count; i++)
        if (strcmp(plugins->plugins[i]->identity.name, name) == 0)
            return plugins->plugins[i];
    return NULL;
}
