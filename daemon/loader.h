/* SPDX-License-Identifier: MIT */
/*
 * Plugin loading: dlopen, ABI version checks, init with the plugin's config section, and the
 * reverse-order unload at exit. Every refusal is one message naming the plugin's path.
 */
#ifndef RPCD_LOADER_H
#define RPCD_LOADER_H

#include "config.h"
#include "registry.h"

#include <rpcd/plugin.h>

#include <stddef.h>

typedef struct loader loader;

/*
 * Loads every plugin of config, in file order, registering their methods in methods.
 * A plugin that fails and is required stops the start-up: returns -1 with a one-line message
 * in error, everything loaded so far unloaded again. A plugin that is not required is skipped
 * with a warning. Returns 0 and *out (new). config must outlive the loader.
 */
int ld_load_all(rpcd_config *config, registry *methods, loader **out, char *error,
                size_t error_size);

/*
 * Shuts plugins down in reverse load order: shutdown, then their methods' user data, then
 * dlclose. Only once no call is running. Frees the loader.
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

#endif
