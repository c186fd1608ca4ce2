/* SPDX-License-Identifier: MIT */
/*
 * dlopen-based plugin loader and the non-call half of the host function table. A loaded plugin
 * is shared by every generation that keeps it (a reference each): the last one shuts it down.
 */
#include "loader.h"

#include "buffer.h"
#include "call.h"
#include "file_safety.h"
#include "lock.h"
#include "log.h"
#include "plugin_copy.h"
#include "signals.h"

#include <rpcd/plugin.h>

#include <dlfcn.h>
#include <pthread.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What makes a loaded plugin the same as the one a config section names now. */
typedef struct ld_identity {
    char *name;     /* owned: NAME of [plugin NAME] */
    char *path;     /* owned: the file, as the config resolved it */
    char *settings; /* owned: its section's other keys, "key=value\n" each, in order */
    dev_t device;   /* the file loaded: device, inode, size, modification time */
    ino_t inode;
    off_t size;
    struct timespec modified;
    uint64_t hash; /* of its content (plugin_copy.h) */
} ld_identity;

/*
 * Taken around a plugin's last code (shutdown to dlclose) and around each dlopen: code loaded on
 * a reload may land where a plugin shut down on another thread was, and its statics with it. The
 * dynamic loader's own lock orders the two, but a race detector cannot see it; this one it sees.
 */
static pthread_mutex_t code_lock = PTHREAD_MUTEX_INITIALIZER;

/* User data the daemon frees once the plugin is shut down. */
typedef struct owned_data {
    void (*free_data)(void *data);
    void *data;
} owned_data;

struct rpcd_plugin {
    atomic_size_t references;     /* one per loader (generation) that holds it */
    void *handle;                 /* from dlopen */
    const rpcd_plugin_info *info; /* static storage inside the plugin */
    void *state;                  /* what init stored for shutdown */
    bool initialised;             /* init succeeded: shutdown is owed */
    cfg_plugin *config;           /* borrowed from the config, while loading only */
    registry *methods;            /* borrowed, while loading only */
    bool initialising;            /* register_method and config_get are allowed */
    char *conflict;               /* the first duplicate name it tried, for the message */
    ld_identity identity;         /* of the file it was loaded from, and its section */
    owned_data *data;             /* the user data of its methods */
    size_t data_count;
};

struct loader {
    struct rpcd_plugin **plugins; /* load order, a reference each */
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
    int status = reg_add_owned(plugin->methods, method ? &copy : NULL, &owner, &existing, &reason);
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
        call_fill_host_api(&api);
        api.log_text = host_log_text;
        filled = true;
    }
    return &api;
}

/*
 * Drops a reference; the last one shuts the plugin down (when init succeeded), frees its
 * methods' user data (newest first), then unloads the code they pointed into.
 */
static void release(struct rpcd_plugin *plugin)
{
    if (atomic_fetch_sub_explicit(&plugin->references, 1, memory_order_acq_rel) != 1)
        return;
    lock_take(&code_lock);
    if (plugin->initialised && plugin->info->shutdown)
        plugin->info->shutdown(plugin->state);
    for (size_t i = plugin->data_count; i-- > 0;)
        plugin->data[i].free_data(plugin->data[i].data);
    if (plugin->handle)
        dlclose(plugin->handle);
    lock_release(&code_lock);
    free(plugin->data);
    free(plugin->identity.settings);
    free(plugin->identity.path);
    free(plugin->identity.name);
    free(plugin->conflict);
    free(plugin);
}

/* A plugin that failed while loading: its methods leave the table it was loading into. */
static void unload_failed(struct rpcd_plugin *plugin, registry *methods)
{
    reg_remove_owner(methods, plugin);
    release(plugin);
}

/* The section's keys but path and required, as one text to compare. NULL: out of memory. */
static char *settings_of(const cfg_plugin *config)
{
    buffer text = BUFFER_INIT;
    int failed = buf_append_string(&text, "");
    for (size_t i = 0; i < config->pair_count; i++) {
        failed |= buf_append_string(&text, config->pairs[i].key);
        failed |= buf_append_string(&text, "=");
        failed |= buf_append_string(&text, config->pairs[i].value);
        failed |= buf_append_string(&text, "\n");
    }
    if (failed || buf_append(&text, "", 1) != 0) {
        buf_free(&text);
        return NULL;
    }
    return text.data;
}

/* What a reload compares: the section, and the file as it was when loaded. */
static int fill_identity(ld_identity *identity, const cfg_plugin *config, const struct stat *file,
                         uint64_t hash)
{
    identity->name = strdup(config->name);
    identity->path = strdup(config->path);
    identity->settings = settings_of(config);
    identity->device = file->st_dev;
    identity->inode = file->st_ino;
    identity->size = file->st_size;
    identity->modified = file->st_mtim;
    identity->hash = hash;
    return identity->name && identity->path && identity->settings ? 0 : -1;
}

/*
 * Opens the plugin's file, checks it, copies it to a sealed memfd and loads that copy by
 * descriptor: nobody can put another file in its place between the check and the load, nor
 * change the code once it runs. Returns 0, or -1 with the reason in error.
 */
static int open_checked(struct rpcd_plugin *plugin, bool insecure, bool serving, char *error,
                        size_t error_size)
{
    const char *path = plugin->config->path;
    int fd, copy;
    char refusal[512];
    if (fsafe_open(path, !insecure, &fd, refusal, sizeof refusal) != 0) {
        snprintf(error, error_size, "plugin %s: %s", path, refusal);
        return -1;
    }
    struct stat file;
    uint64_t hash;
    int status =
        pcopy_sealed(fd, plugin->config->name, &copy, &hash, &file, refusal, sizeof refusal);
    close(fd);
    if (status != 0) {
        snprintf(error, error_size, "plugin %s: %s", path, refusal);
        return -1;
    }
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
    if (fill_identity(&plugin->identity, plugin->config, &file, hash) != 0) {
        snprintf(error, error_size, "plugin %s: out of memory", path);
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
 * signals. Returns 0, or -1 with the reason in error; plugin->initialised says whether init
 * succeeded (then its shutdown is owed).
 */
static int init_plugin(struct rpcd_plugin *plugin, char *error, size_t error_size)
{
    const char *path = plugin->config->path;
    const rpcd_plugin_info *plugin_info = plugin->info;
    char reason[512] = "";
    plugin->initialising = true;
    int status = plugin_info->init(plugin, host_api(), &plugin->state, reason, sizeof reason);
    plugin->initialising = false;
    sig_check_after_init(plugin_info->name);
    if (status != RPCD_OK && plugin->conflict && !reason[0]) {
        /* An init that gives up on the refused name has that for its reason. */
        snprintf(error, error_size, "plugin %s: init failed: %s", path, plugin->conflict);
        return -1;
    }
    if (status != RPCD_OK) {
        reason[sizeof reason - 1] = '\0';
        snprintf(error, error_size, "plugin %s (%s): init failed: %s", path, plugin_info->name,
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
                        plugin->info->name, config->pairs[i].key);
}

/* Loads one plugin (one reference, for the caller). Returns 0, or -1 with the reason in error. */
static int load_one(cfg_plugin *config, bool insecure, bool serving, registry *methods,
                    struct rpcd_plugin **out, char *error, size_t error_size)
{
    struct rpcd_plugin *plugin = calloc(1, sizeof *plugin);
    if (!plugin) {
        snprintf(error, error_size, "plugin %s: out of memory", config->path);
        return -1;
    }
    atomic_init(&plugin->references, 1);
    plugin->config = config;
    plugin->methods = methods;
    if (open_checked(plugin, insecure, serving, error, error_size) != 0 ||
        read_description(plugin, error, error_size) != 0 ||
        init_plugin(plugin, error, error_size) != 0) {
        unload_failed(plugin, methods);
        return -1;
    }
    warn_unused_keys(plugin);
    /* Neither outlives the load: a later generation has a config and a table of its own. */
    plugin->config = NULL;
    plugin->methods = NULL;
    log_message(LOG_DEBUG, "loaded plugin %s (%s %s)", config->path, plugin->info->name,
                plugin->info->version ? plugin->info->version : "");
    *out = plugin;
    return 0;
}

/*
 * Whether running, loaded before, is what config names now: the same section, and the same
 * file, by identity and by content. fd is the file config names, opened the checked way.
 */
static bool unchanged(const struct rpcd_plugin *running, const cfg_plugin *config, int fd)
{
    const ld_identity *was = &running->identity;
    struct stat file;
    uint64_t hash;
    if (strcmp(was->name, config->name) != 0 || strcmp(was->path, config->path) != 0)
        return false;
    char *settings = settings_of(config);
    bool same = settings && strcmp(settings, was->settings) == 0;
    free(settings);
    if (!same || fstat(fd, &file) != 0 || file.st_dev != was->device || file.st_ino != was->inode ||
        file.st_size != was->size || file.st_mtim.tv_sec != was->modified.tv_sec ||
        file.st_mtim.tv_nsec != was->modified.tv_nsec)
        return false;
    return pcopy_hash(fd, &hash) == 0 && hash == was->hash;
}

/*
 * Enters the methods running registered in its generation into methods, for a new generation
 * that keeps it. Returns 0, or -1 with the reason in error (a name another plugin took).
 */
static int register_again(struct rpcd_plugin *running, const registry *before, registry *methods,
                          char *error, size_t error_size)
{
    const reg_owner owner = {running, running->info->name, running->info->abi_minor};
    for (size_t i = 0; i < reg_count(before); i++) {
        const reg_method *method = reg_at(before, i);
        if (method->owner != running)
            continue;
        rpcd_method descriptor = {
            .size = sizeof descriptor,
            .name = method->name,
            .handler = method->handler,
            .user_data = method->user_data,
            .flags = method->flags,
            .description = method->description,
            .params_schema = method->params_schema,
        };
        const reg_method *existing = NULL;
        int status = reg_add_owned(methods, &descriptor, &owner, &existing, NULL);
        if (status == REG_ERR_EXISTS)
            snprintf(error, error_size,
                     "method '%s' is registered by both plugin '%s' and plugin '%s'", method->name,
                     existing->owner_name, running->info->name);
        else if (status != 0)
            snprintf(error, error_size, "plugin %s: out of memory", running->identity.path);
        if (status != 0) {
            reg_remove_owner(methods, running);
            return -1;
        }
    }
    return 0;
}

/* The running plugin config names unchanged, or NULL. */
static struct rpcd_plugin *find_unchanged(const loader *running, const cfg_plugin *config,
                                          bool insecure)
{
    if (!running)
        return NULL;
    for (size_t i = 0; i < running->count; i++) {
        struct rpcd_plugin *plugin = running->plugins[i];
        if (strcmp(plugin->identity.name, config->name) != 0)
            continue;
        int fd;
        char reason[512];
        if (fsafe_open(config->path, !insecure, &fd, reason, sizeof reason) != 0)
            return NULL; /* loading it says why */
        bool same = unchanged(plugin, config, fd);
        close(fd);
        return same ? plugin : NULL;
    }
    return NULL;
}

/* Keeps an unchanged plugin (a reference) or loads the one config names. */
static int take_one(const ld_previous *previous, cfg_plugin *config, bool insecure,
                    registry *methods, struct rpcd_plugin **out, char *error, size_t error_size)
{
    struct rpcd_plugin *plugin =
        previous ? find_unchanged(previous->plugins, config, insecure) : NULL;
    if (!plugin)
        return load_one(config, insecure, previous != NULL, methods, out, error, error_size);
    if (register_again(plugin, previous->methods, methods, error, error_size) != 0)
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
    fsafe_session_begin(); /* the plugins mostly share a directory */
    for (size_t i = 0; i < config->plugin_count; i++) {
        cfg_plugin *plugin_config = &config->plugins[i];
        struct rpcd_plugin *plugin;
        if (take_one(previous, plugin_config, config->insecure, methods, &plugin, error,
                     error_size) == 0) {
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
