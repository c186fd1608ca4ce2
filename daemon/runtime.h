/* SPDX-License-Identifier: MIT */
/*
 * Start-up and tear-down shared by the daemon, the in-memory demo and the tests: config file
 * to loaded plugins and a method table, and back.
 */
#ifndef RPCD_RUNTIME_H
#define RPCD_RUNTIME_H

#include "config.h"
#include "loader.h"
#include "registry.h"
#include "server.h"

#include <stddef.h>

typedef struct rpcd_runtime {
    rpcd_config *config; /* owned */
    registry *methods;   /* owned */
    loader *plugins;     /* owned */
} rpcd_runtime;

/*
 * Reads the config at path and loads its plugins. log_level_override, when >= 0, replaces the
 * config's log_level. Returns 0 and fills runtime, or -1 with a one-line message in error.
 */
int rt_start(const char *config_path, int log_level_override, rpcd_runtime *runtime, char *error,
             size_t error_size);

/* The serve options the config asks for. */
srv_options rt_serve_options(const rpcd_runtime *runtime);

/* Unloads the plugins (reverse order) and frees everything. */
void rt_stop(rpcd_runtime *runtime);

#endif
