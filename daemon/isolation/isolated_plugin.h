/* SPDX-License-Identifier: MIT */
/*
 * A plugin with isolation = process, as the loader holds it: its proxy (isolation/proxy.h) and
 * a copy of the config it was started from, which its host's restarts read: a reload frees the
 * config it read while the plugin may run on in the generations that keep it.
 */
#ifndef RPCD_ISOLATED_PLUGIN_H
#define RPCD_ISOLATED_PLUGIN_H

#include "config/config.h"
#include "loader/loader.h"
#include "methods/registry.h"

#include <stddef.h>

typedef struct isolated_plugin isolated_plugin;

/*
 * Starts the host of the plugin of config (a section of daemon, both only read here) on fd
 * (stolen: the sealed copy of its file, opened and checked) and registers its methods in methods,
 * owned by owner. Returns 0 and *out (new), or -1 with a one-line reason in error.
 */
int isolated_start(const rpcd_config *daemon, const cfg_plugin *config, int fd, registry *methods,
                   const void *owner, isolated_plugin **out, char *error, size_t error_size);

/* Ends the host (iso_proxy_stop) and frees the rest. Once no call of it runs. NULL is ignored. */
void isolated_stop(isolated_plugin *plugin);

/* isolated_start and isolated_stop as the loader's kind for isolation = process
 * (ld_set_isolated_kind). Static storage. */
const ld_plugin_kind *isolated_plugin_kind(void);

#endif
