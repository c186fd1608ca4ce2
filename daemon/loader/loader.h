/* SPDX-License-Identifier: MIT */
/*
 * Plugin loading: dlopen, ABI version checks, init with the plugin's config section, and the
 * reverse-order unload at exit. Every refusal is one message naming the plugin's path.
 */
#ifndef RPCD_LOADER_H
#define RPCD_LOADER_H

#include "config/config.h"
#include "methods/registry.h"

#include <rpcd/plugin.h>

#include <stdbool.h>
#include <stddef.h>

typedef struct loader loader;

/*
 * Loads every plugin of config, in file order, registering their methods in methods.
 * A plugin that fails and is required stops the start-up: returns -1 with a one-line message
 * in error, everything loaded so far unloaded again. A plugin that is not required is skipped
 * with a warning. Returns 0 and *out (new). Each plugin is loaded from a sealed private copy of
 * its file (plugin_copy.h); one with isolation = process runs in a host process of its own,
 * started on its checked file (isolated_plugin.h). config is only read while loading.
 */
int ld_load_all(rpcd_config *config, registry *methods, loader **out, char *error,
                size_t error_size);

/* What a new set of plugins may keep of the running one: its plugins and their method table. */
typedef struct ld_previous {
    const loader *plugins;   /* borrowed */
    const registry *methods; /* borrowed: the table the plugins registered in */
    /* Borrowed, may be NULL: the running config, whose [rpcd] settings a plugin host started
     * now is given (they keep their running values until the next start) */
    const rpcd_config *daemon;
} ld_previous;

/*
 * ld_load_all for a reload: a plugin of previous whose section (name, path, keys) and file
 * (device, inode, size, modification time, content hash) are those config names now is kept,
 * not loaded again: the new loader takes a reference to the same loaded plugin, whose methods
 * are entered into methods without its init running again. Every other plugin is loaded anew,
 * beside the running ones. Not thread-safe against another load (one loading thread at a time);
 * the running plugins serve calls meanwhile.
 */
int ld_load(rpcd_config *config, const ld_previous *previous, registry *methods, loader **out,
            char *error, size_t error_size);

/*
 * Drops the loader's reference to each of its plugins, in reverse load order, and frees it. A
 * plugin no loader holds any more is shut down: shutdown, then its methods' user data, then
 * dlclose; an isolated one's host is stopped. Only once no call of this loader's generation is
 * running. methods is unused (each generation frees its own table).
 */
void ld_unload_all(loader *plugins, registry *methods);

/*
 * Loads the one plugin of config from fd (borrowed, opened and checked by the caller), for a
 * plugin host process. Returns 0, *out (new) and *name (the plugin's own, borrowed from it), or
 * -1 with the reason in error.
 */
int ld_load_fd(cfg_plugin *config, int fd, registry *methods, loader **out, const char **name,
               char *error, size_t error_size);

/*
 * Replaces the call_* members of the host table handed to plugins loaded from now on (default
 * call_fill_host_api): a plugin host forwards them over its channel. Before the first load.
 */
void ld_set_call_api(void (*fill)(rpcd_host_api *api));

/*
 * A way to run a plugin other than in rpcd's own process, given by the layer that implements it
 * (isolation/isolated_plugin.h: a host process of its own) so that the loader, below that layer,
 * needs nothing of it. start runs the plugin of config (a section of daemon, both only read) from
 * fd (stolen: the sealed copy of its file, opened and checked by the loader), registers its
 * methods in methods, owned by owner, and returns 0 and *out (what stop is given, once, when the
 * last generation that holds the plugin is freed), or -1 with a one-line reason in error.
 */
typedef struct ld_status ld_status;
typedef struct ld_plugin_kind {
    int (*start)(const rpcd_config *daemon, const cfg_plugin *config, int fd, registry *methods,
                 const void *owner, void **out, char *error, size_t error_size);
    void (*stop)(void *running);
    /* What the plugin start made is doing now (any thread): fills the host members of out. */
    void (*describe)(void *running, ld_status *out);
} ld_plugin_kind;

/*
 * Sets the kind that runs the plugins with isolation = process (static storage; NULL, the
 * default: such a plugin fails to load, with a message). Before the first load; not thread-safe
 * with a load.
 */
void ld_set_isolated_kind(const ld_plugin_kind *kind);

/* How many plugins are loaded. */
size_t ld_count(const loader *plugins);

/* What a loaded plugin says of itself (borrowed: alive while it is loaded). */
typedef struct ld_about {
    const char *path;
    const char *name;
    const char *version; /* may be NULL */
    unsigned abi_major;
    unsigned abi_minor;
} ld_about;

/* The index-th plugin in load order (index < ld_count). */
void ld_about_at(const loader *plugins, size_t index, ld_about *out);

/* What a loaded plugin is doing now, for the control socket's status. */
struct ld_status {
    bool isolated;                /* isolation = process */
    int host_pid;                 /* its host's, 0 when none runs (or in process) */
    unsigned long restarts;       /* of its host since it was loaded */
    unsigned long deadline_kills; /* hosts killed for holding a call past its deadline */
    char last_crash[128];         /* how its host last died, "" when it never did */
};

/* The status of the index-th plugin in load order (index < ld_count). Any thread, while
 * plugins is held (a generation's reference). */
void ld_status_at(const loader *plugins, size_t index, ld_status *out);

/* The section name (NAME of [plugin NAME]) of the plugin at index, in load order (borrowed). */
const char *ld_name_at(const loader *plugins, size_t index);

/*
 * The loaded plugin of section name in plugins (NULL: none, or plugins is NULL), as an identity
 * to compare: two loaders share a plugin when this is the same pointer.
 */
const void *ld_instance(const loader *plugins, const char *name);

#endif
