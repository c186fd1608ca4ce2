/* SPDX-License-Identifier: MIT */
/*
 * Plugin loading: dlopen, ABI version checks, init with the plugin's config section, and the
 * reverse-order unload at exit. Every refusal is one message naming the plugin's path.
 */
#ifndef RPCD_LOADER_H
#define RPCD_LOADER_H

#include "config.h"
#include "registry.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct loader loader;

/*
 * Loads every plugin of config, in file order, registering their methods in methods.
 * A plugin that fails and is required stops the start-up: returns -1 with a one-line message
 * in error, everything loaded so far unloaded again. A plugin that is not required is skipped
 * with a warning. Returns 0 and *out (new). Each plugin is loaded from a sealed private copy of
 * its file (plugin_copy.h). config is only read while loading.
 */
int ld_load_all(rpcd_config *config, registry *methods, loader **out, char *error,
                size_t error_size);

/* What a new set of plugins may keep of the running one: its plugins and their method table. */
typedef struct ld_previous {
    const loader *plugins;   /* borrowed */
    const registry *methods; /* borrowed: the table the plugins registered in */
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
 * dlclose. Only once no call of this loader's generation is running. methods is unused (each
 * generation frees its own table).
 */
void ld_unload_all(loader *plugins, registry *methods);

/* How many plugins are loaded. */
size_t ld_count(const loader *plugins);

/* The section name (NAME of [plugin NAME]) of the plugin at index, in load order (borrowed). */
const char *ld_name_at(const loader *plugins, size_t index);

/*
 * The loaded plugin of section name in plugins (NULL: none, or plugins is NULL), as an identity
 * to compare: two loaders share a plugin when this is the same pointer.
 */
const void *ld_instance(const loader *plugins, const char *name);

#endif
