/* SPDX-License-Identifier: MIT */
/*
 * What the loader and the host functions that are not about a call (loader_host.c) share: a
 * loaded plugin as both see it. Nothing else includes it.
 */
#ifndef RPCD_LOADER_INTERNAL_H
#define RPCD_LOADER_INTERNAL_H

#include "config/config.h"
#include "loader/plugin_identity.h"
#include "methods/registry.h"

#include <rpcd/plugin.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

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
    plugin_identity identity;     /* of the file it was loaded from, and its section */
    owned_data *data;             /* the user data of its methods */
    size_t data_count;
    int opened_fd; /* the file, opened and checked by the caller; -1: open path */
    /* The plugin runs in a host process of its own (kind->start's result); NULL: here. */
    const struct ld_plugin_kind *kind; /* static; set with isolated */
    void *isolated;
};

/*
 * The NAME of the plugin's [plugin NAME] section, which every log line about it and every
 * message naming it gives: one file may be loaded by several sections. The plugin's own name
 * (its info) only when no section is known.
 */
const char *ld_section_of(const struct rpcd_plugin *plugin);

/* The host table every plugin's init gets (filled once; its call_* members as ld_set_call_api
 * chose). */
const rpcd_host_api *ld_host_api(void);

#endif
